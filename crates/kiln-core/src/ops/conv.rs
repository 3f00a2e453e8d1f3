//! Convolution (fprop, dgrad, wgrad): its geometry, validation and shape inference.

use crate::{Error, OpGraph, Result};
use serde::{Deserialize, Serialize};

/// Convolution geometry, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvParams {
    pub pre_padding: Vec<i64>,
    pub post_padding: Vec<i64>,
    pub stride: Vec<i64>,
    pub dilation: Vec<i64>,
}

impl ConvParams {
    /// Number of spatial dimensions.
    pub fn spatial_rank(&self) -> usize {
        self.stride.len()
    }
}

/// Which convolution: forward, data gradient or weight gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvDirection {
    Fprop,
    Dgrad,
    Wgrad,
}

/// A cross-correlation node (cuDNN's convention). Tensors: `x` [N, C, D...], `w` [K, C/G, R...],
/// `y` [N, K, O...]. Groups G = C / w.dims[1]. Fprop reads x and w and writes y; dgrad reads y
/// (as dy) and w and writes x (as dx); wgrad reads x and y (as dy) and writes w (as dw).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvOp {
    pub direction: ConvDirection,
    pub x: i64,
    pub w: i64,
    pub y: i64,
    pub params: ConvParams,
}

impl ConvOp {
    /// UIDs of the two inputs, in (first, second) order for the direction.
    pub fn inputs(&self) -> [i64; 2] {
        match self.direction {
            ConvDirection::Fprop => [self.x, self.w],
            ConvDirection::Dgrad => [self.y, self.w],
            ConvDirection::Wgrad => [self.x, self.y],
        }
    }

    /// UID of the output.
    pub fn output(&self) -> i64 {
        match self.direction {
            ConvDirection::Fprop => self.y,
            ConvDirection::Dgrad => self.x,
            ConvDirection::Wgrad => self.w,
        }
    }
}

/// Checks a convolution's geometry against the spatial rank; errors name `what`.
pub fn check_conv_params(p: &ConvParams, what: &str) -> Result<()> {
    let n = p.stride.len();
    if !(1..=3).contains(&n) {
        return Err(Error::BadParam(format!(
            "{what}: {n} spatial dims; convolutions have 1 to 3"
        )));
    }
    for (field, v) in [
        ("pre_padding", &p.pre_padding),
        ("post_padding", &p.post_padding),
        ("dilation", &p.dilation),
    ] {
        if v.len() != n {
            return Err(Error::BadParam(format!(
                "{what}: {field} has {} entries but stride has {n}",
                v.len()
            )));
        }
    }
    let bad = |field: &str, v: &[i64], min: i64| -> Result<()> {
        match v.iter().position(|&x| x < min || x > 1 << 30) {
            Some(i) => Err(Error::BadParam(format!(
                "{what}: {field}[{i}] is {}, must be in {min}..=2^30",
                v[i]
            ))),
            None => Ok(()),
        }
    };
    bad("stride", &p.stride, 1)?;
    bad("dilation", &p.dilation, 1)?;
    bad("pre_padding", &p.pre_padding, 0)?;
    bad("post_padding", &p.post_padding, 0)
}

/// Output spatial size of a convolution along one dim.
/// Computed in 128 bits, so that no dims a tensor may have (each below 2^63) and no geometry
/// [`check_conv_params`] accepts can overflow; a result beyond `i64` saturates.
pub fn conv_out_size(input: i64, filter: i64, pre: i64, post: i64, stride: i64, dil: i64) -> i64 {
    let effective = dilated_filter(filter, dil);
    let span = input as i128 + pre as i128 + post as i128 - effective;
    if span < 0 || stride < 1 {
        0
    } else {
        i64::try_from(span / stride as i128 + 1).unwrap_or(i64::MAX)
    }
}

/// The extent of a filter of `filter` taps with dilation `dil`, in 128 bits.
fn dilated_filter(filter: i64, dil: i64) -> i128 {
    dil as i128 * (filter as i128 - 1) + 1
}

/// The dims of `y` for a convolution with input dims `x` and filter dims `w`.
///
/// Checks ranks, groups (C divisible by w's C, K divisible by the group count) and that the
/// output is not empty; errors name `what`.
pub fn conv_output_dims(x: &[i64], w: &[i64], p: &ConvParams, what: &str) -> Result<Vec<i64>> {
    check_conv_params(p, what)?;
    let n = p.spatial_rank();
    if x.len() != n + 2 || w.len() != n + 2 {
        return Err(Error::BadParam(format!(
            "{what}: x has rank {} and w rank {}; {n} spatial dims need rank {}",
            x.len(),
            w.len(),
            n + 2
        )));
    }
    let (c, wc, k) = (x[1], w[1], w[0]);
    if wc < 1 || c % wc != 0 {
        return Err(Error::BadParam(format!(
            "{what}: x has {c} channels, not a multiple of w's {wc} channels per group"
        )));
    }
    let groups = c / wc;
    if k % groups != 0 {
        return Err(Error::BadParam(format!(
            "{what}: {k} output channels are not divisible by {groups} groups"
        )));
    }
    let mut out = vec![x[0], k];
    for i in 0..n {
        let o = conv_out_size(
            x[i + 2],
            w[i + 2],
            p.pre_padding[i],
            p.post_padding[i],
            p.stride[i],
            p.dilation[i],
        );
        if o < 1 {
            return Err(Error::BadParam(format!(
                "{what}: spatial dim {i} has input {} and dilated filter {}: \
                 the output would be empty",
                x[i + 2],
                dilated_filter(w[i + 2], p.dilation[i])
            )));
        }
        out.push(o);
    }
    Ok(out)
}

impl ConvOp {
    /// Checks the geometry, that `y` (dy) has the dims `x` and `w` give, and that no operand
    /// is a by-value scalar. Errors name `what` (the node).
    pub fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let t = |uid: i64| graph.tensor_for(uid, node);
        let (x, w, y) = (t(self.x)?, t(self.w)?, t(self.y)?);
        let want = conv_output_dims(&x.dims, &w.dims, &self.params, what)?;
        match self.direction {
            ConvDirection::Fprop => super::expect_dims(what, y, &want),
            _ if y.dims != want => Err(Error::BadParam(format!(
                "{what}: dy {} has dims {:?} but x {:?} and w {:?} give {:?}",
                y.label(),
                y.dims,
                x.dims,
                w.dims,
                want
            ))),
            _ => Ok(()),
        }?;
        for tensor in [x, w, y] {
            if tensor.scalar.is_some() {
                return Err(Error::BadParam(format!(
                    "{what}: {} is a by-value scalar; convolution operands are tensors",
                    tensor.label()
                )));
            }
        }
        Ok(())
    }
}
