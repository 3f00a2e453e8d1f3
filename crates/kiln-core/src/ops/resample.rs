//! Resampling by pooling (cuDNN frontend's `resample`, its downsampling modes) and its backward,
//! stored as [`GenericOp`]s.
//!
//! `resample`: inputs `x` [N, C, spatial...] (1 to 3 spatial dims); outputs `y` [N, C, out...]
//! and, for max pooling, an optional `index` (the dims of `y`). Attributes: `mode`
//! (`"maxpool"`, `"avgpool_include_padding"`, `"avgpool_exclude_padding"`), `window` (one size
//! per spatial dim), `stride`, `pre_padding`, `post_padding` (one per spatial dim; default 1,
//! 0, 0). `out = floor((in + pre + post - window) / stride) + 1` per spatial dim.
//!
//! - Padding is never a candidate of max pooling (cuDNN's negative-infinity padding) and counts
//!   as zeros for average pooling; each padding must be smaller than its window, so that every
//!   window holds an element of `x` (and the excluding average never divides by zero).
//! - NaN propagates: a window holding one has the maximum NaN.
//! - `index` holds, as cuDNN documents, the zero-based row-major position of the maximum inside
//!   its window (padded positions counted), the first one in scan order on ties (NaN being the
//!   largest value). Its type is `i8`, `i32` or a float type whose integers reach the window's
//!   last position.
//!
//! `resample_backward`: inputs `dy` (the dims of `y`), and for max pooling exactly one of
//! `index` (as `resample` wrote it) or `x` (the forward input, whose maximum positions are found
//! again); outputs `dx` (the dims of `x`). The same attributes. Every `dy` element is routed to
//! `dx`: max pooling adds it to the maximum's element; average pooling spreads it evenly over the
//! window's elements of `x`, dividing by the whole window (including padding) or by the elements
//! of `x` it holds. An index outside the window or on a padded position routes nothing.

use super::{AttrValue, GenericOp, OpSpec, Port};
use crate::{DataType, Error, OpGraph, Result};

/// The pooling of a resample node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResampleMode {
    /// The maximum of the window.
    MaxPool,
    /// The sum of the window divided by its size, padding counted as zeros.
    AvgPoolIncludePadding,
    /// The mean of the window's elements of `x`.
    AvgPoolExcludePadding,
}

impl ResampleMode {
    /// Every mode.
    pub const ALL: [ResampleMode; 3] = [
        ResampleMode::MaxPool,
        ResampleMode::AvgPoolIncludePadding,
        ResampleMode::AvgPoolExcludePadding,
    ];

    /// The attribute value (cuDNN frontend's `ResampleMode_t` names, lower case).
    pub fn name(self) -> &'static str {
        match self {
            ResampleMode::MaxPool => "maxpool",
            ResampleMode::AvgPoolIncludePadding => "avgpool_include_padding",
            ResampleMode::AvgPoolExcludePadding => "avgpool_exclude_padding",
        }
    }

    /// The mode called `name`, or `None`.
    pub fn from_name(name: &str) -> Option<ResampleMode> {
        ResampleMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// The window geometry of a resample node, one entry per spatial dim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResampleGeometry {
    pub window: Vec<i64>,
    pub stride: Vec<i64>,
    pub pre_padding: Vec<i64>,
    pub post_padding: Vec<i64>,
}

impl ResampleGeometry {
    /// The spatial output size of input size `input` along spatial dim `d`, or `None` when the
    /// window does not fit.
    pub fn out_size(&self, d: usize, input: i64) -> Option<i64> {
        let span = input + self.pre_padding[d] + self.post_padding[d] - self.window[d];
        (span >= 0).then(|| span / self.stride[d] + 1)
    }

    /// The dims of `y` for `x`'s dims; errors name `what`.
    pub fn output_dims(&self, x: &[i64], what: &str) -> Result<Vec<i64>> {
        let mut out = x[..2].to_vec();
        for (d, &input) in x[2..].iter().enumerate() {
            out.push(self.out_size(d, input).ok_or_else(|| {
                Error::BadParam(format!(
                    "{what}: spatial dim {d} of x is {input}, smaller than its window {} less \
                     its padding {} + {}",
                    self.window[d], self.pre_padding[d], self.post_padding[d]
                ))
            })?);
        }
        Ok(out)
    }

    /// The smallest input dims whose output has `y`'s dims (how `dx`'s dims are inferred when
    /// no `x` is given).
    pub fn smallest_input_dims(&self, y: &[i64]) -> Vec<i64> {
        let mut out = y[..2.min(y.len())].to_vec();
        for (d, &o) in y.iter().skip(2).enumerate() {
            let at = |v: &[i64]| v.get(d).copied().unwrap_or(0);
            out.push(
                ((o - 1) * at(&self.stride) + at(&self.window)
                    - at(&self.pre_padding)
                    - at(&self.post_padding))
                .max(1),
            );
        }
        out
    }

    /// Elements of one window.
    pub fn window_elements(&self) -> i64 {
        self.window.iter().product()
    }
}

/// A typed view of a resample or resample_backward node.
#[derive(Debug, Clone, PartialEq)]
pub struct ResampleOp {
    pub mode: ResampleMode,
    pub geometry: ResampleGeometry,
    /// Forward: `x`, the input. Backward: `x`, the forward input, if given.
    pub x: Option<i64>,
    /// Forward: `y`. Backward: `dy`.
    pub y: i64,
    /// Forward: the index output, if bound. Backward: the index input, if given.
    pub index: Option<i64>,
    /// Backward only: `dx`.
    pub dx: Option<i64>,
}

fn ints(op: &GenericOp, name: &str, spatial: usize, default: i64, what: &str) -> Result<Vec<i64>> {
    match op.attributes.get(name) {
        None => Ok(vec![default; spatial]),
        Some(AttrValue::Ints(v)) if v.len() == spatial => Ok(v.clone()),
        Some(AttrValue::Ints(v)) => Err(Error::BadParam(format!(
            "{what}: attribute '{name}' has {} entries; it needs one per spatial dim ({spatial})",
            v.len()
        ))),
        Some(v) => Err(Error::BadParam(format!(
            "{what}: attribute '{name}' is a {}; it must be ints",
            v.type_name()
        ))),
    }
}

impl ResampleOp {
    /// The typed view of `op` (a resample or resample_backward node that passed
    /// [`super::check_generic`]) for `spatial` spatial dims. Refuses a missing port, an
    /// unknown mode, geometry lists of the wrong length or out-of-range values; errors name
    /// `what`.
    pub fn from_generic(op: &GenericOp, spatial: usize, what: &str) -> Result<ResampleOp> {
        let (mode, geometry) = Self::mode_and_geometry(op, spatial, what)?;
        let backward = op.op == ResampleBackward.name();
        let get =
            |side: &std::collections::BTreeMap<String, i64>, name: &str| side.get(name).copied();
        let need = |side, name: &str| {
            get(side, name).ok_or_else(|| {
                Error::BadParam(format!("{what}: required port '{name}' is missing"))
            })
        };
        Ok(if backward {
            ResampleOp {
                mode,
                geometry,
                x: get(&op.inputs, "x"),
                y: need(&op.inputs, "dy")?,
                index: get(&op.inputs, "index"),
                dx: Some(need(&op.outputs, "dx")?),
            }
        } else {
            ResampleOp {
                mode,
                geometry,
                x: Some(need(&op.inputs, "x")?),
                y: need(&op.outputs, "y")?,
                index: get(&op.outputs, "index"),
                dx: None,
            }
        })
    }

    /// The mode and window geometry of `op`'s attributes for `spatial` spatial dims, checked
    /// (the ports are not looked at); errors name `what`.
    pub fn mode_and_geometry(
        op: &GenericOp,
        spatial: usize,
        what: &str,
    ) -> Result<(ResampleMode, ResampleGeometry)> {
        let mode = match op.attributes.get("mode") {
            Some(AttrValue::Str(s)) => ResampleMode::from_name(s).ok_or_else(|| {
                Error::BadParam(format!(
                    "{what}: mode '{s}' is not one of maxpool, avgpool_include_padding, \
                     avgpool_exclude_padding"
                ))
            })?,
            _ => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'mode' (maxpool, avgpool_include_padding, \
                     avgpool_exclude_padding) is required"
                )))
            }
        };
        let window = match op.attributes.get("window") {
            None => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'window' (one size per spatial dim) is required"
                )))
            }
            Some(_) => ints(op, "window", spatial, 1, what)?,
        };
        let geometry = ResampleGeometry {
            stride: ints(op, "stride", spatial, 1, what)?,
            pre_padding: ints(op, "pre_padding", spatial, 0, what)?,
            post_padding: ints(op, "post_padding", spatial, 0, what)?,
            window,
        };
        for d in 0..spatial {
            let g = &geometry;
            if g.window[d] < 1 || g.stride[d] < 1 {
                return Err(Error::BadParam(format!(
                    "{what}: spatial dim {d}: window {} and stride {} must be at least 1",
                    g.window[d], g.stride[d]
                )));
            }
            for (name, pad) in [
                ("pre_padding", g.pre_padding[d]),
                ("post_padding", g.post_padding[d]),
            ] {
                if pad < 0 || pad >= g.window[d] {
                    return Err(Error::BadParam(format!(
                        "{what}: spatial dim {d}: {name} {pad} must be at least 0 and smaller \
                         than the window {}",
                        g.window[d]
                    )));
                }
            }
        }
        Ok((mode, geometry))
    }

    /// The generic node of this view: `resample` when `dx` is `None`, else `resample_backward`.
    pub fn to_generic(&self) -> GenericOp {
        let g = &self.geometry;
        let mut op = if let Some(dx) = self.dx {
            let mut op = GenericOp::new(ResampleBackward.name())
                .input("dy", self.y)
                .output("dx", dx);
            if let Some(x) = self.x {
                op = op.input("x", x);
            }
            if let Some(i) = self.index {
                op = op.input("index", i);
            }
            op
        } else {
            let mut op = GenericOp::new(Resample.name()).output("y", self.y);
            if let Some(x) = self.x {
                op = op.input("x", x);
            }
            if let Some(i) = self.index {
                op = op.output("index", i);
            }
            op
        };
        op = op
            .attribute("mode", AttrValue::Str(self.mode.name().into()))
            .attribute("window", AttrValue::Ints(g.window.clone()))
            .attribute("stride", AttrValue::Ints(g.stride.clone()))
            .attribute("pre_padding", AttrValue::Ints(g.pre_padding.clone()))
            .attribute("post_padding", AttrValue::Ints(g.post_padding.clone()));
        op
    }
}

/// Checks that an index tensor's type holds every window position; errors name `what`.
fn check_index_type(t: &crate::TensorDesc, last: i64, what: &str) -> Result<()> {
    let reach: i64 = match t.data_type {
        DataType::I8 => 127,
        DataType::I32 => i32::MAX as i64,
        DataType::F32 => 1 << 24,
        DataType::F64 => 1 << 53,
        DataType::F16 => 2048,
        DataType::Bf16 => 256,
        DataType::Boolean | DataType::Fp8E4m3 | DataType::Fp8E5m2 => 0,
    };
    if reach == 0 || last > reach {
        return Err(Error::BadParam(format!(
            "{what}: index {} is {}, which cannot hold window position {last}; use i32 (or i8 for \
             windows of at most 128 elements)",
            t.label(),
            t.data_type
        )));
    }
    Ok(())
}

/// The spatial rank of a resample node, from the tensor bound to `port`; errors name `what`.
fn spatial_rank(graph: &OpGraph, node: &str, uid: i64, port: &str, what: &str) -> Result<usize> {
    let t = graph.tensor_for(uid, node)?;
    if t.scalar.is_some() || !(3..=5).contains(&t.dims.len()) {
        return Err(Error::BadParam(format!(
            "{what}: {port} {} must be a tensor [N, C, spatial...] with 1 to 3 spatial dims; \
             it has dims {:?}",
            t.label(),
            t.dims
        )));
    }
    if t.data_type.is_integral() {
        return Err(Error::BadParam(format!(
            "{what}: {port} {} is {}; resampling computes on floating-point tensors",
            t.label(),
            t.data_type
        )));
    }
    Ok(t.dims.len() - 2)
}

/// The [`OpSpec`] of resample (pooling).
pub struct Resample;

static INPUTS: [Port; 1] = [Port::required("x")];
static OUTPUTS: [Port; 2] = [Port::required("y"), Port::optional("index")];
static ATTRIBUTES: [(&str, &str); 5] = [
    ("mode", "str"),
    ("post_padding", "ints"),
    ("pre_padding", "ints"),
    ("stride", "ints"),
    ("window", "ints"),
];

impl OpSpec for Resample {
    fn name(&self) -> &'static str {
        "resample"
    }

    fn inputs(&self) -> &'static [Port] {
        &INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &ATTRIBUTES
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let x_uid = op.inputs.get("x").copied().unwrap_or_default();
        let spatial = spatial_rank(graph, node, x_uid, "x", what)?;
        let r = ResampleOp::from_generic(op, spatial, what)?;
        let x = graph.tensor_for(x_uid, node)?;
        let y_dims = r.geometry.output_dims(&x.dims, what)?;
        let y = graph.tensor_for(r.y, node)?;
        if y.data_type.is_integral() {
            return Err(Error::BadParam(format!(
                "{what}: y {} is {}; resampling writes floating-point tensors",
                y.label(),
                y.data_type
            )));
        }
        super::expect_dims(what, y, &y_dims)?;
        if let Some(i) = r.index {
            if r.mode != ResampleMode::MaxPool {
                return Err(Error::BadParam(format!(
                    "{what}: output port 'index' is bound but mode is {}; only maxpool writes \
                     an index",
                    r.mode.name()
                )));
            }
            let t = graph.tensor_for(i, node)?;
            super::expect_dims(what, t, &y_dims)?;
            check_index_type(t, r.geometry.window_elements() - 1, what)?;
        }
        Ok(())
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        let x = input("x").ok_or_else(|| {
            Error::BadParam(format!("{what}: required input port 'x' is missing"))
        })?;
        if !(3..=5).contains(&x.len()) {
            return Err(Error::BadParam(format!(
                "{what}: x has dims {x:?}; it needs [N, C] and 1 to 3 spatial dims"
            )));
        }
        let (_, geometry) = ResampleOp::mode_and_geometry(op, x.len() - 2, what)?;
        let y = geometry.output_dims(&x, what)?;
        let mut out = vec![("y", y.clone())];
        if op.outputs.contains_key("index") {
            out.push(("index", y));
        }
        Ok(out)
    }
}

/// The [`OpSpec`] of resample_backward.
pub struct ResampleBackward;

static BWD_INPUTS: [Port; 3] = [
    Port::required("dy"),
    Port::optional("index"),
    Port::optional("x"),
];
static BWD_OUTPUTS: [Port; 1] = [Port::required("dx")];

impl OpSpec for ResampleBackward {
    fn name(&self) -> &'static str {
        "resample_backward"
    }

    fn inputs(&self) -> &'static [Port] {
        &BWD_INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &BWD_OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &ATTRIBUTES
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let dy_uid = op.inputs.get("dy").copied().unwrap_or_default();
        let spatial = spatial_rank(graph, node, dy_uid, "dy", what)?;
        let r = ResampleOp::from_generic(op, spatial, what)?;
        let dx_uid = r.dx.unwrap_or_default();
        if spatial_rank(graph, node, dx_uid, "dx", what)? != spatial {
            return Err(Error::BadParam(format!(
                "{what}: dx and dy must have the same rank"
            )));
        }
        let dx = graph.tensor_for(dx_uid, node)?;
        let dy = graph.tensor_for(r.y, node)?;
        let want = r.geometry.output_dims(&dx.dims, what)?;
        if dy.dims != want {
            return Err(Error::BadParam(format!(
                "{what}: dy {} has dims {:?}, but pooling dx {:?} gives {want:?}",
                dy.label(),
                dy.dims,
                dx.dims
            )));
        }
        match (r.mode, r.index, r.x) {
            (ResampleMode::MaxPool, Some(_), Some(_)) | (ResampleMode::MaxPool, None, None) => {
                return Err(Error::BadParam(format!(
                    "{what}: maxpool backward takes exactly one of the inputs 'index' (the \
                     forward's index output) and 'x' (the forward input)"
                )))
            }
            (ResampleMode::MaxPool, _, _) => {}
            (_, None, None) => {}
            _ => {
                return Err(Error::BadParam(format!(
                    "{what}: {} backward takes neither 'index' nor 'x'; only maxpool does",
                    r.mode.name()
                )))
            }
        }
        if let Some(i) = r.index {
            let t = graph.tensor_for(i, node)?;
            super::expect_dims(what, t, &dy.dims)?;
            check_index_type(t, r.geometry.window_elements() - 1, what)?;
        }
        if let Some(x) = r.x {
            let t = graph.tensor_for(x, node)?;
            if t.data_type.is_integral() {
                return Err(Error::BadParam(format!(
                    "{what}: x {} is {}; it must be a floating-point tensor",
                    t.label(),
                    t.data_type
                )));
            }
            super::expect_dims(what, t, &dx.dims)?;
        }
        Ok(())
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        if let Some(x) = input("x") {
            return Ok(vec![("dx", x)]);
        }
        let dy = input("dy").ok_or_else(|| {
            Error::BadParam(format!("{what}: required input port 'dy' is missing"))
        })?;
        if !(3..=5).contains(&dy.len()) {
            return Err(Error::BadParam(format!(
                "{what}: dy has dims {dy:?}; it needs [N, C] and 1 to 3 spatial dims"
            )));
        }
        let (_, geometry) = ResampleOp::mode_and_geometry(op, dy.len() - 2, what)?;
        Ok(vec![("dx", geometry.smallest_input_dims(&dy))])
    }
}
