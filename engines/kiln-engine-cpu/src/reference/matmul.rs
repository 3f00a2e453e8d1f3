//! Batched matmul `c[..., M, N] = a[..., M, K] * b[..., K, N]` with batch dims broadcast
//! through size 1.

use super::broadcast::broadcast_offsets;
use kiln_plugin_sdk::{PluginError, PluginResult};

/// Multiplies packed row-major `a` (dims `a_dims`) by `b` (dims `b_dims`), accumulating each dot
/// product in f64 in order of the inner index, and returns packed row-major `c` (dims `c_dims`).
///
/// Refuses dims that shape inference refuses, `c_dims` other than the inferred dims, and buffer
/// lengths that do not match their dims; `what` names the node.
pub(super) fn matmul(
    a: &[f64],
    a_dims: &[i64],
    b: &[f64],
    b_dims: &[i64],
    c_dims: &[i64],
    what: &str,
) -> PluginResult<Vec<f64>> {
    let want = kiln_core::shape::matmul_output_dims(a_dims, b_dims, what)?;
    if want != c_dims {
        return Err(PluginError::bad_param(format!(
            "{what}: c has dims {c_dims:?} but a {a_dims:?} and b {b_dims:?} give {want:?}"
        )));
    }
    let count = |dims: &[i64]| dims.iter().map(|&d| d as usize).product::<usize>();
    if a.len() != count(a_dims) || b.len() != count(b_dims) {
        return Err(PluginError::internal(format!(
            "{what}: a holds {} values for dims {a_dims:?} and b {} for dims {b_dims:?}",
            a.len(),
            b.len()
        )));
    }
    let r = c_dims.len();
    let (m, k, n) = (
        a_dims[r - 2] as usize,
        a_dims[r - 1] as usize,
        b_dims[r - 1] as usize,
    );
    let batch = &c_dims[..r - 2];
    let a_batches = broadcast_offsets(&a_dims[..r - 2], batch)?;
    let b_batches = broadcast_offsets(&b_dims[..r - 2], batch)?;
    let mut c = Vec::with_capacity(count(c_dims));
    for (&ab, &bb) in a_batches.iter().zip(&b_batches) {
        let a_mat = &a[ab * m * k..(ab + 1) * m * k];
        let b_mat = &b[bb * k * n..(bb + 1) * k * n];
        for i in 0..m {
            for j in 0..n {
                let mut sum = 0.0f64;
                for p in 0..k {
                    sum += a_mat[i * k + p] * b_mat[p * n + j];
                }
                c.push(sum);
            }
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_by_three_times_three_by_two() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        let c = matmul(&a, &[2, 3], &b, &[3, 2], &[2, 2], "m").unwrap();
        assert_eq!(c, vec![58.0, 64.0, 139.0, 154.0]);
    }

    #[test]
    fn refuses_bad_dims_and_lengths() {
        let a = [0.0; 6];
        assert!(matmul(&a, &[2, 3], &a, &[2, 3], &[2, 3], "m").is_err());
        assert!(matmul(&a, &[2, 3], &a, &[3, 2], &[2, 3], "m").is_err());
        assert!(matmul(&a[..5], &[2, 3], &a, &[3, 2], &[2, 2], "m").is_err());
    }
}
