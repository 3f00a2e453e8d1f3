//! Index mapping between a packed row-major tensor and a broadcast (or reduced) shape.

use kiln_plugin_sdk::{PluginError, PluginResult};

/// For every element of `out_dims` in row-major order, the row-major offset of the element of a
/// packed tensor of `in_dims` that maps to it, where each dim of `in_dims` equals that of
/// `out_dims` or is 1 (a size-1 dim repeats along the output).
///
/// The same map serves reductions read the other way round: with `in_dims` the reduced shape and
/// `out_dims` the input's, it gives the reduced element each input element accumulates into.
///
/// Refuses different ranks and a dim that is neither equal nor 1.
pub(super) fn broadcast_offsets(in_dims: &[i64], out_dims: &[i64]) -> PluginResult<Vec<usize>> {
    if in_dims.len() != out_dims.len() {
        return Err(PluginError::internal(format!(
            "reference: cannot broadcast dims {in_dims:?} to {out_dims:?}: ranks differ"
        )));
    }
    if let Some(i) = (0..in_dims.len()).find(|&i| in_dims[i] != out_dims[i] && in_dims[i] != 1) {
        return Err(PluginError::internal(format!(
            "reference: cannot broadcast dims {in_dims:?} to {out_dims:?}: dim {i} differs"
        )));
    }
    if out_dims.iter().any(|&d| d < 1) {
        return Ok(Vec::new());
    }
    let rank = out_dims.len();
    // Packed strides of the input, 0 along broadcast dims.
    let mut strides = vec![0usize; rank];
    let mut acc = 1usize;
    for i in (0..rank).rev() {
        let d = in_dims[i] as usize;
        strides[i] = if d == 1 { 0 } else { acc };
        acc = acc.saturating_mul(d);
    }
    let total: usize = out_dims.iter().map(|&d| d as usize).product();
    let mut offsets = Vec::with_capacity(total);
    let mut idx = vec![0usize; rank];
    let mut offset = 0usize;
    for _ in 0..total {
        offsets.push(offset);
        // Advance the row-major odometer, keeping `offset` in step.
        for axis in (0..rank).rev() {
            idx[axis] += 1;
            offset += strides[axis];
            if idx[axis] < out_dims[axis] as usize {
                break;
            }
            offset -= strides[axis] * idx[axis];
            idx[axis] = 0;
        }
    }
    Ok(offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_repeat_along_size_one_dims() {
        assert_eq!(
            broadcast_offsets(&[2, 1], &[2, 3]).unwrap(),
            vec![0, 0, 0, 1, 1, 1]
        );
        assert_eq!(
            broadcast_offsets(&[1, 3], &[2, 3]).unwrap(),
            vec![0, 1, 2, 0, 1, 2]
        );
        assert_eq!(
            broadcast_offsets(&[2, 1, 2], &[2, 2, 2]).unwrap(),
            vec![0, 1, 0, 1, 2, 3, 2, 3]
        );
        assert_eq!(broadcast_offsets(&[4], &[4]).unwrap(), vec![0, 1, 2, 3]);
        assert!(broadcast_offsets(&[2, 2], &[2, 3]).is_err());
        assert!(broadcast_offsets(&[2], &[1, 2]).is_err());
    }
}
