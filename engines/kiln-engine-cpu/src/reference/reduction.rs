//! Reductions over any set of dims: `y` keeps the rank of `x`, each dim equal to x's (kept) or 1
//! (reduced).
//!
//! Sums accumulate in f64 in row-major order of `x`. `max`, `min` and `amax` propagate NaN;
//! `mean` divides the sum by the number of elements reduced into each output element.

use super::broadcast::broadcast_offsets;
use super::pointwise::{max_nan, min_nan};
use kiln_core::ReductionMode;
use kiln_plugin_sdk::{PluginError, PluginResult};

/// Reduces packed row-major `x` (dims `x_dims`) to `y_dims` with `mode`.
///
/// Refuses `y_dims` that neither keep nor reduce each dim of `x_dims` and a buffer whose length
/// does not match `x_dims`; `what` names the node.
pub(super) fn reduce(
    mode: ReductionMode,
    x: &[f64],
    x_dims: &[i64],
    y_dims: &[i64],
    what: &str,
) -> PluginResult<Vec<f64>> {
    kiln_core::shape::check_reduction_dims(x_dims, y_dims, what)?;
    let count = |dims: &[i64]| dims.iter().map(|&d| d as usize).product::<usize>();
    let (x_count, y_count) = (count(x_dims), count(y_dims));
    if x.len() != x_count {
        return Err(PluginError::internal(format!(
            "{what}: x holds {} values for dims {x_dims:?}",
            x.len()
        )));
    }
    // For each element of x, the element of y it reduces into.
    let targets = broadcast_offsets(y_dims, x_dims)?;
    let init = match mode {
        ReductionMode::Max => f64::NEG_INFINITY,
        ReductionMode::Min => f64::INFINITY,
        _ => 0.0,
    };
    let mut y = vec![init; y_count];
    for (&v, &t) in x.iter().zip(&targets) {
        let acc = &mut y[t];
        *acc = match mode {
            ReductionMode::Sum | ReductionMode::Mean => *acc + v,
            ReductionMode::Max => max_nan(*acc, v),
            ReductionMode::Min => min_nan(*acc, v),
            ReductionMode::Amax => max_nan(*acc, v.abs()),
            ReductionMode::Norm1 => *acc + v.abs(),
            ReductionMode::Norm2 => *acc + v * v,
        };
    }
    match mode {
        ReductionMode::Mean => {
            let per_output = (x_count / y_count.max(1)) as f64;
            y.iter_mut().for_each(|v| *v /= per_output);
        }
        ReductionMode::Norm2 => y.iter_mut().for_each(|v| *v = v.sqrt()),
        _ => {}
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: [f64; 6] = [1.0, -2.0, 3.0, -4.0, 5.0, -6.0];

    #[test]
    fn every_mode_over_the_last_dim() {
        let r = |m| reduce(m, &X, &[2, 3], &[2, 1], "r").unwrap();
        assert_eq!(r(ReductionMode::Sum), vec![2.0, -5.0]);
        assert_eq!(r(ReductionMode::Mean), vec![2.0 / 3.0, -5.0 / 3.0]);
        assert_eq!(r(ReductionMode::Max), vec![3.0, 5.0]);
        assert_eq!(r(ReductionMode::Min), vec![-2.0, -6.0]);
        assert_eq!(r(ReductionMode::Amax), vec![3.0, 6.0]);
        assert_eq!(r(ReductionMode::Norm1), vec![6.0, 15.0]);
        assert_eq!(r(ReductionMode::Norm2), vec![14f64.sqrt(), 77f64.sqrt()]);
    }

    #[test]
    fn first_dim_all_dims_and_no_dims() {
        assert_eq!(
            reduce(ReductionMode::Sum, &X, &[2, 3], &[1, 3], "r").unwrap(),
            vec![-3.0, 3.0, -3.0]
        );
        assert_eq!(
            reduce(ReductionMode::Mean, &X, &[2, 3], &[1, 1], "r").unwrap(),
            vec![-0.5]
        );
        assert_eq!(
            reduce(ReductionMode::Amax, &X, &[2, 3], &[2, 3], "r").unwrap(),
            X.iter().map(|v| v.abs()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn nan_propagates_through_max_and_min() {
        let x = [1.0, f64::NAN, 3.0];
        for m in [ReductionMode::Max, ReductionMode::Min, ReductionMode::Amax] {
            assert!(reduce(m, &x, &[3], &[1], "r").unwrap()[0].is_nan());
        }
    }

    #[test]
    fn refuses_bad_dims_and_lengths() {
        assert!(reduce(ReductionMode::Sum, &X, &[2, 3], &[2, 2], "r").is_err());
        assert!(reduce(ReductionMode::Sum, &X, &[2, 3], &[2], "r").is_err());
        assert!(reduce(ReductionMode::Sum, &X[..5], &[2, 3], &[2, 1], "r").is_err());
    }
}
