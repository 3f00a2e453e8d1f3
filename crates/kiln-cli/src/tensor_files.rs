//! Tensor data files of `kiln run --inputs DIR` and `--outputs DIR`.
//!
//! One file per tensor, named `<tensor name>.bin` (or `<uid>.bin` for a tensor without a name;
//! on reading, `<uid>.bin` is also tried), holding exactly the tensor's element count of values
//! in its data type, in logical row-major order (the order of `dims`, whatever the strides),
//! native byte order (little-endian on x86-64 and aarch64), no header.

use crate::failure::{Failure, EXIT_ERROR};
use kiln::{HostTensor, TensorDesc};
use std::path::{Path, PathBuf};

fn file_name(desc: &TensorDesc) -> String {
    if desc.name.is_empty() || desc.name.contains(['/', '\\']) || desc.name.starts_with('.') {
        format!("{}.bin", desc.uid)
    } else {
        format!("{}.bin", desc.name)
    }
}

/// Reads the data file of `desc` from `dir` into a new host tensor. Refuses (exit code 1, naming
/// the file and the tensor) a missing file or one of the wrong size.
pub fn read_input(dir: &Path, desc: &TensorDesc) -> Result<HostTensor, Failure> {
    let candidates: Vec<PathBuf> = [file_name(desc), format!("{}.bin", desc.uid)]
        .into_iter()
        .map(|n| dir.join(n))
        .collect();
    let n = desc.element_count().unwrap_or(0);
    let size = desc.data_type.size();
    let Some(path) = candidates.iter().find(|p| p.is_file()) else {
        return Err(Failure::error(format!(
            "{}: missing: {} needs {n} {} values ({} bytes)",
            candidates[0].display(),
            desc.label(),
            desc.data_type,
            n * size
        )));
    };
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::error(format!("{}: cannot read the file: {e}", path.display())))?;
    if bytes.len() != n * size {
        return Err(Failure::error(format!(
            "{}: has {} bytes but {} needs {n} {} values ({} bytes)",
            path.display(),
            bytes.len(),
            desc.label(),
            desc.data_type,
            n * size
        )));
    }
    let values: Vec<f64> = bytes
        .chunks_exact(size)
        .map(|c| desc.data_type.read_f64(c).unwrap_or(f64::NAN))
        .collect();
    let mut host = HostTensor::zeros(desc).map_err(|e| Failure::kiln(path.display(), e))?;
    host.fill_from_f64(&values)
        .map_err(|e| Failure::kiln(path.display(), e))?;
    Ok(host)
}

/// Writes `host` (the memory of `desc`) to its data file in `dir`; returns the file's path.
pub fn write_output(dir: &Path, desc: &TensorDesc, host: &HostTensor) -> Result<PathBuf, Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::new(
            EXIT_ERROR,
            format!("{}: cannot create the folder: {e}", dir.display()),
        )
    })?;
    let path = dir.join(file_name(desc));
    let size = desc.data_type.size();
    let values = host.to_f64_vec();
    let mut bytes = vec![0u8; values.len() * size];
    for (chunk, v) in bytes.chunks_exact_mut(size).zip(values) {
        desc.data_type.write_f64(v, chunk);
    }
    crate::files::write(&path, &bytes)?;
    Ok(path)
}
