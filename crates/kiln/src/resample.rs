//! Builder methods of pooling (cuDNN frontend's `resample` in its downsampling modes) and its
//! backward, with their attributes. The rules live in `kiln_core::ops::resample`.

use crate::graph::Graph;
use crate::tensor::Tensor;
use kiln_core::ops::resample::{Resample, ResampleBackward};
use kiln_core::{AttrValue, DataType, OpSpec, Result};
use std::collections::BTreeMap;

pub use kiln_core::ops::resample::ResampleMode;

/// Attributes of a resample node (cuDNN frontend's `Resample_attributes`): the mode, the window
/// and, per spatial dim, the stride (default 1) and the paddings (default 0). The same
/// attributes describe the matching [`Graph::resample_backward`].
#[derive(Debug, Clone)]
pub struct ResampleAttributes {
    name: String,
    mode: ResampleMode,
    window: Vec<i64>,
    stride: Option<Vec<i64>>,
    pre_padding: Option<Vec<i64>>,
    post_padding: Option<Vec<i64>>,
    generate_index: bool,
}

impl ResampleAttributes {
    /// Pooling of `mode` over `window` (one size per spatial dim).
    pub fn new(mode: ResampleMode, window: &[i64]) -> Self {
        ResampleAttributes {
            name: String::new(),
            mode,
            window: window.to_vec(),
            stride: None,
            pre_padding: None,
            post_padding: None,
            generate_index: false,
        }
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// The stride per spatial dim (default 1).
    pub fn stride(mut self, stride: &[i64]) -> Self {
        self.stride = Some(stride.to_vec());
        self
    }
    /// Padding before each spatial dim (default 0; smaller than the window).
    pub fn pre_padding(mut self, padding: &[i64]) -> Self {
        self.pre_padding = Some(padding.to_vec());
        self
    }
    /// Padding after each spatial dim (default 0; smaller than the window).
    pub fn post_padding(mut self, padding: &[i64]) -> Self {
        self.post_padding = Some(padding.to_vec());
        self
    }
    /// Max pooling also writes the index of each maximum in its window (an i32 tensor unless
    /// its type is set; cuDNN frontend's `set_generate_index`).
    pub fn generate_index(mut self, yes: bool) -> Self {
        self.generate_index = yes;
        self
    }

    fn attributes(&self) -> BTreeMap<String, AttrValue> {
        let mut a = BTreeMap::new();
        a.insert("mode".into(), AttrValue::Str(self.mode.name().into()));
        a.insert("window".into(), AttrValue::Ints(self.window.clone()));
        for (key, v) in [
            ("stride", &self.stride),
            ("pre_padding", &self.pre_padding),
            ("post_padding", &self.post_padding),
        ] {
            if let Some(v) = v {
                a.insert(key.into(), AttrValue::Ints(v.clone()));
            }
        }
        a
    }
}

/// The outputs of [`Graph::resample`].
#[derive(Debug, Clone)]
pub struct ResampleOutputs {
    /// The pooled tensor [N, C, out...].
    pub y: Tensor,
    /// The window position of each maximum (max pooling with `generate_index`), dims of `y`.
    pub index: Option<Tensor>,
}

impl Graph {
    /// Adds a pooling of `x` [N, C, spatial...] (1 to 3 spatial dims). Returns `y` and, for max
    /// pooling with [`ResampleAttributes::generate_index`], `index` (virtual until
    /// `set_output(true)`). Dims and attribute values are checked by [`Graph::validate`].
    pub fn resample(&mut self, x: &Tensor, attrs: ResampleAttributes) -> Result<ResampleOutputs> {
        let outputs: &[&str] = if attrs.generate_index {
            &["y", "index"]
        } else {
            &["y"]
        };
        let mut made = self
            .generic_op(
                Resample.name(),
                &attrs.name,
                &[("x", x)],
                outputs,
                attrs.attributes(),
            )?
            .into_iter();
        let y = made
            .next()
            .ok_or_else(|| kiln_core::Error::Internal("resample: no y".into()))?;
        let index = made.next();
        if let Some(i) = &index {
            i.set_data_type(DataType::I32);
        }
        Ok(ResampleOutputs { y, index })
    }

    /// Adds the backward of a pooling: `dx` from `dy` (the dims of the forward's `y`). Max
    /// pooling needs exactly one of `index` (the forward's index output) and `x` (the forward
    /// input); average pooling takes neither. `dx` has the dims of `x` when it is given, else
    /// the smallest dims whose pooling has `dy`'s dims (set them to choose others).
    pub fn resample_backward(
        &mut self,
        dy: &Tensor,
        index: Option<&Tensor>,
        x: Option<&Tensor>,
        attrs: ResampleAttributes,
    ) -> Result<Tensor> {
        let mut inputs = vec![("dy", dy)];
        if let Some(i) = index {
            inputs.push(("index", i));
        }
        if let Some(x) = x {
            inputs.push(("x", x));
        }
        self.generic_op(
            ResampleBackward.name(),
            &attrs.name,
            &inputs,
            &["dx"],
            attrs.attributes(),
        )?
        .into_iter()
        .next()
        .ok_or_else(|| kiln_core::Error::Internal("resample_backward: no dx".into()))
    }
}
