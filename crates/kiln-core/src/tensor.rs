//! Tensor descriptions as the graph IR holds them.

use crate::{DataType, Error, Result};
use serde::{Deserialize, Serialize};

/// One tensor of an operation graph.
///
/// `dims` are in logical order (for convolutions N, C, spatial...; for matmul batch..., rows,
/// columns); the memory layout is given by `strides`, in elements. A virtual tensor lives only
/// inside an engine; a by-value scalar (`scalar` set) has all dims 1 and is never bound at execute.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorDesc {
    pub uid: i64,
    #[serde(default)]
    pub name: String,
    pub dims: Vec<i64>,
    pub strides: Vec<i64>,
    pub data_type: DataType,
    #[serde(default)]
    pub is_virtual: bool,
    /// Required byte alignment of the device pointer, 0 = none beyond the element size.
    #[serde(default)]
    pub alignment: u32,
    /// The value of a by-value scalar operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar: Option<f64>,
}

/// Elements of storage a layout spans: 1 + sum((dim - 1) * stride), 0 when a dim is 0; `None`
/// on overflow or a negative dim or stride.
pub fn storage_elements(dims: &[i64], strides: &[i64]) -> Option<usize> {
    let mut last = 0usize;
    for (&d, &s) in dims.iter().zip(strides) {
        if d == 0 {
            return Some(0);
        }
        let span = usize::try_from(d.checked_sub(1)?)
            .ok()?
            .checked_mul(usize::try_from(s).ok()?)?;
        last = last.checked_add(span)?;
    }
    last.checked_add(1)
}

/// Maximum tensor rank kiln accepts.
pub const MAX_RANK: usize = 8;

impl TensorDesc {
    /// A human label for messages: `tensor 'name' (uid 3)` or `tensor uid 3`.
    pub fn label(&self) -> String {
        crate::error::tensor_label(self.uid, &self.name)
    }

    /// A bad-parameter error about this tensor (its UID and name as data).
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::tensor(self.uid, self.name.clone(), message)
    }

    /// Number of logical elements (product of dims); `None` on overflow.
    pub fn element_count(&self) -> Option<usize> {
        self.dims
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
    }

    /// Elements of storage the layout spans: 1 + sum((dim - 1) * stride); `None` on overflow
    /// or a negative extent.
    pub fn storage_elements(&self) -> Option<usize> {
        storage_elements(&self.dims, &self.strides)
    }

    /// Bytes of storage the layout spans.
    pub fn storage_bytes(&self) -> Option<usize> {
        self.storage_elements()?.checked_mul(self.data_type.size())
    }

    /// True when the strides describe a dense packed layout in the given dims order.
    pub fn is_packed_row_major(&self) -> bool {
        self.strides == packed_strides(&self.dims)
    }

    /// Checks rank, dims, strides and scalar rules; errors name this tensor.
    pub fn validate(&self) -> Result<()> {
        if self.dims.is_empty() || self.dims.len() > MAX_RANK {
            return Err(self.error(format!(
                "rank {} is outside 1..={MAX_RANK}",
                self.dims.len()
            )));
        }
        if self.strides.len() != self.dims.len() {
            return Err(self.error(format!(
                "has {} dims but {} strides",
                self.dims.len(),
                self.strides.len()
            )));
        }
        if let Some((i, d)) = self.dims.iter().enumerate().find(|(_, &d)| d < 1) {
            return Err(self.error(format!("dim {i} is {d}, must be at least 1")));
        }
        if let Some((i, s)) = self.strides.iter().enumerate().find(|(_, &s)| s < 1) {
            return Err(self.error(format!("stride {i} is {s}, must be at least 1")));
        }
        if self.storage_bytes().is_none() || self.element_count().is_none() {
            return Err(self.error("size overflows"));
        }
        if self.storage_elements().unwrap_or(0) > isize::MAX as usize / 8 {
            return Err(self.error("too large"));
        }
        if !self.strides_do_not_overlap() {
            return Err(self.error(format!(
                "strides {:?} make distinct elements of dims {:?} share memory",
                self.strides, self.dims
            )));
        }
        if self.alignment != 0 && !self.alignment.is_power_of_two() {
            return Err(self.error(format!(
                "alignment {} is not a power of two",
                self.alignment
            )));
        }
        if self.scalar.is_some() {
            if self.is_virtual {
                return Err(self.error("a by-value scalar cannot be virtual"));
            }
            if self.dims.iter().any(|&d| d != 1) {
                return Err(self.error(format!(
                    "a by-value scalar must have all dims 1, has {:?}",
                    self.dims
                )));
            }
        }
        Ok(())
    }

    /// True when no two distinct logical indices map to the same offset (dims of size 1 ignored).
    fn strides_do_not_overlap(&self) -> bool {
        let mut pairs: Vec<(i64, i64)> = self
            .dims
            .iter()
            .zip(&self.strides)
            .filter(|(&d, _)| d > 1)
            .map(|(&d, &s)| (s, d))
            .collect();
        pairs.sort();
        let mut span = 1i64;
        for (s, d) in pairs {
            if s < span {
                return false;
            }
            span = match s.checked_mul(d) {
                Some(v) => v,
                None => return false,
            };
        }
        true
    }
}

/// Row-major packed strides for `dims` (last dim contiguous).
pub fn packed_strides(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1].max(1));
    }
    strides
}

/// Packed strides for `dims` stored in the memory order `order` (outermost first); e.g. NHWC of
/// 4-d NCHW dims is order `[0, 2, 3, 1]`.
pub fn packed_strides_in_order(dims: &[i64], order: &[usize]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    let mut acc = 1i64;
    for &axis in order.iter().rev() {
        if axis < dims.len() {
            strides[axis] = acc;
            acc = acc.saturating_mul(dims[axis].max(1));
        }
    }
    strides
}

/// Channels-last packed strides for logical N, C, spatial... dims (NWC, NHWC, NDHWC).
pub fn channels_last_strides(dims: &[i64]) -> Vec<i64> {
    let mut order = vec![0usize];
    order.extend(2..dims.len());
    if dims.len() > 1 {
        order.push(1);
    }
    packed_strides_in_order(dims, &order)
}

/// The memory order of `strides` (outermost first, ties broken by axis), used to give an output
/// the layout of an input.
pub fn stride_order(strides: &[i64]) -> Vec<usize> {
    let mut axes: Vec<usize> = (0..strides.len()).collect();
    axes.sort_by(|&a, &b| strides[b].cmp(&strides[a]).then(a.cmp(&b)));
    axes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[i64], strides: &[i64]) -> TensorDesc {
        TensorDesc {
            uid: 1,
            name: "x".into(),
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            data_type: DataType::F32,
            is_virtual: false,
            alignment: 0,
            scalar: None,
        }
    }

    #[test]
    fn packed_and_channels_last_strides() {
        assert_eq!(packed_strides(&[2, 3, 4, 5]), vec![60, 20, 5, 1]);
        assert_eq!(channels_last_strides(&[2, 3, 4, 5]), vec![60, 1, 15, 3]);
        assert_eq!(stride_order(&[60, 1, 15, 3]), vec![0, 2, 3, 1]);
    }

    #[test]
    fn overlapping_strides_are_refused_and_named() {
        let err = t(&[2, 3], &[1, 1]).validate().unwrap_err();
        assert!(err.to_string().contains("'x'"), "{err}");
        assert!(err.to_string().contains("share memory"), "{err}");
        t(&[2, 3], &[3, 1]).validate().unwrap();
        t(&[2, 3], &[1, 2]).validate().unwrap();
    }

    #[test]
    fn dims_strides_rank_rules() {
        assert!(t(&[2, 0], &[1, 1]).validate().is_err());
        assert!(t(&[2, 3], &[1]).validate().is_err());
        assert!(t(&[2, 3], &[0, 1]).validate().is_err());
        assert!(t(&[], &[]).validate().is_err());
        assert_eq!(t(&[2, 3], &[3, 1]).storage_bytes(), Some(24));
    }
}
