//! Element-wise comparison of an engine's output with the reference's, and the checks on the
//! memory around it.

use crate::Tolerance;
use kiln::HostTensor;
use kiln_core::TensorDesc;

/// The logical index (one entry per dim) of row-major flat index `flat` in `dims`.
pub fn unravel(mut flat: usize, dims: &[i64]) -> Vec<usize> {
    let mut idx = vec![0usize; dims.len()];
    for axis in (0..dims.len()).rev() {
        let d = dims[axis].max(1) as usize;
        idx[axis] = flat % d;
        flat /= d;
    }
    idx
}

/// Compares `got` with `want` (logical row-major values of tensor `desc`) under `tol`.
///
/// NaN must meet NaN and an infinity the same infinity; finite values must be within
/// `tol.allowed(want)`. The error names `who` (engine and case), the tensor, how many elements
/// fail, and the worst one (largest difference relative to its allowance) with its index.
pub fn compare_values(
    who: &str,
    desc: &TensorDesc,
    got: &[f64],
    want: &[f64],
    tol: Tolerance,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{who}: output {} has {} values but the reference has {}",
            desc.label(),
            got.len(),
            want.len()
        ));
    }
    let mut failures = 0usize;
    let mut worst: Option<(usize, f64)> = None;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let score = if w.is_nan() || g.is_nan() {
            if w.is_nan() && g.is_nan() {
                0.0
            } else {
                f64::INFINITY
            }
        } else if w.is_infinite() || g.is_infinite() {
            if g == w {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            let diff = (g - w).abs();
            let allowed = tol.allowed(w);
            if diff <= allowed {
                0.0
            } else if allowed > 0.0 {
                diff / allowed
            } else {
                f64::INFINITY
            }
        };
        if score > 0.0 {
            failures += 1;
            if worst.is_none_or(|(_, s)| score > s) {
                worst = Some((i, score));
            }
        }
    }
    match worst {
        None => Ok(()),
        Some((i, _)) => {
            let (g, w) = (got[i], want[i]);
            Err(format!(
                "{who}: output {} ({} {:?}, strides {:?}): {failures} of {} elements outside \
                 tolerance (atol {:.3e}, rtol {:.3e}); worst at index {:?} (flat {i}): got {g:e}, \
                 want {w:e}, |diff| {:.3e} > allowed {:.3e}",
                desc.label(),
                desc.data_type,
                desc.dims,
                desc.strides,
                want.len(),
                tol.atol,
                tol.rtol,
                unravel(i, &desc.dims),
                (g - w).abs(),
                tol.allowed(w),
            ))
        }
    }
}

/// Checks that every element of `got` was written: an output poisoned with NaN before the
/// engine ran must hold no NaN where the reference (`want`) holds a number. The error names
/// `who`, the tensor, how many elements kept the poison and the first one.
pub fn check_written(
    who: &str,
    desc: &TensorDesc,
    got: &[f64],
    want: &[f64],
) -> Result<(), String> {
    let unwritten: Vec<usize> = got
        .iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| g.is_nan() && !w.is_nan())
        .map(|(i, _)| i)
        .collect();
    match unwritten.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{who}: output {} ({} {:?}, strides {:?}): {} of {} elements still hold the NaN the \
             output was poisoned with (not written, or computed as NaN); first at index {:?} \
             (flat {i}), where the reference has {:e}",
            desc.label(),
            desc.data_type,
            desc.dims,
            desc.strides,
            unwritten.len(),
            got.len(),
            unravel(i, &desc.dims),
            want[i]
        )),
    }
}

/// For each byte of `desc`'s storage, whether it belongs to a logical element.
pub fn element_bytes(desc: &TensorDesc) -> Vec<bool> {
    let size = desc.data_type.size();
    let total = desc.storage_bytes().unwrap_or(0);
    let mut mask = vec![false; total];
    let n = desc.element_count().unwrap_or(0);
    let mut idx = vec![0i64; desc.dims.len()];
    for _ in 0..n {
        let off: i64 = idx.iter().zip(&desc.strides).map(|(i, s)| i * s).sum();
        let at = off as usize * size;
        if let Some(bytes) = mask.get_mut(at..at + size) {
            bytes.fill(true);
        }
        for axis in (0..idx.len()).rev() {
            idx[axis] += 1;
            if idx[axis] < desc.dims[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
    mask
}

/// Checks that no byte of `t` outside its logical elements changed from zero: an engine must
/// not write into the padding of a strided output.
pub fn check_padding_untouched(who: &str, t: &HostTensor) -> Result<(), String> {
    let mask = element_bytes(t.desc());
    match t.bytes().iter().zip(&mask).position(|(&b, &inside)| !inside && b != 0) {
        None => Ok(()),
        Some(at) => Err(format!(
            "{who}: wrote byte offset {at} of output {}, which lies outside its elements (dims {:?}, \
             strides {:?}, {}): the padding of a strided output must stay untouched",
            t.desc().label(),
            t.desc().dims,
            t.desc().strides,
            t.desc().data_type
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln::DataType;

    fn desc(dims: &[i64], strides: &[i64]) -> TensorDesc {
        TensorDesc {
            uid: 1,
            name: "t".into(),
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            data_type: DataType::F32,
            is_virtual: false,
            alignment: 0,
            scalar: None,
        }
    }

    #[test]
    fn reports_the_worst_element() {
        let d = desc(&[2, 2], &[2, 1]);
        let tol = Tolerance {
            atol: 1e-3,
            rtol: 0.0,
        };
        assert!(compare_values(
            "e",
            &d,
            &[1.0, 2.0, 3.0, 4.0],
            &[1.0, 2.0005, 3.0, 4.0],
            tol
        )
        .is_ok());
        let err =
            compare_values("e", &d, &[1.0, 2.1, 3.0, 4.5], &[1.0, 2.0, 3.0, 4.0], tol).unwrap_err();
        assert!(
            err.contains("2 of 4") && err.contains("[1, 1]") && err.contains("got 4.5"),
            "{err}"
        );
        let err = compare_values(
            "e",
            &d,
            &[f64::NAN, 2.0, 3.0, 4.0],
            &[1.0, 2.0, 3.0, 4.0],
            tol,
        )
        .unwrap_err();
        assert!(err.contains("[0, 0]"), "{err}");
        assert!(compare_values(
            "e",
            &d,
            &[f64::NAN, 2.0, 3.0, 4.0],
            &[f64::NAN, 2.0, 3.0, 4.0],
            tol
        )
        .is_ok());
    }

    #[test]
    fn finds_elements_left_poisoned() {
        let d = desc(&[2, 2], &[2, 1]);
        let want = [1.0, f64::NAN, 3.0, 4.0];
        assert!(check_written("e", &d, &[1.0, f64::NAN, 3.0, 4.0], &want).is_ok());
        let err = check_written("e", &d, &[1.0, f64::NAN, f64::NAN, 4.0], &want).unwrap_err();
        assert!(
            err.contains("1 of 4") && err.contains("[1, 0]") && err.contains("NaN"),
            "{err}"
        );
    }

    #[test]
    fn masks_padding_bytes() {
        let mask = element_bytes(&desc(&[2, 2], &[3, 1]));
        let inside: Vec<bool> = mask.chunks(4).map(|c| c[0]).collect();
        assert_eq!(inside, vec![true, true, false, true, true]);
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
    }
}
