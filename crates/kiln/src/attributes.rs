//! Operation attributes, set with builder methods (cuDNN frontend's `*_attributes`).

use kiln_core::{PointwiseMode, PointwiseParams, ReductionMode};

/// Attributes of a pointwise node.
#[derive(Debug, Clone, PartialEq)]
pub struct PointwiseAttributes {
    pub(crate) name: String,
    pub(crate) mode: PointwiseMode,
    pub(crate) params: PointwiseParams,
}

impl PointwiseAttributes {
    /// A pointwise node of `mode`.
    pub fn new(mode: PointwiseMode) -> Self {
        PointwiseAttributes {
            name: String::new(),
            mode,
            params: PointwiseParams::default(),
        }
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Relu: values below this are clipped (default 0).
    pub fn relu_lower_clip(mut self, v: f64) -> Self {
        self.params.relu_lower_clip = Some(v);
        self
    }
    /// Relu: values above this are clipped (default none).
    pub fn relu_upper_clip(mut self, v: f64) -> Self {
        self.params.relu_upper_clip = Some(v);
        self
    }
    /// Relu: slope below the lower clip (default 0; 0.01 gives leaky relu).
    pub fn relu_lower_clip_slope(mut self, v: f64) -> Self {
        self.params.relu_lower_clip_slope = Some(v);
        self
    }
    /// Elu alpha (default 1).
    pub fn elu_alpha(mut self, v: f64) -> Self {
        self.params.elu_alpha = Some(v);
        self
    }
    /// Softplus beta (default 1).
    pub fn softplus_beta(mut self, v: f64) -> Self {
        self.params.softplus_beta = Some(v);
        self
    }
    /// Swish beta (default 1).
    pub fn swish_beta(mut self, v: f64) -> Self {
        self.params.swish_beta = Some(v);
        self
    }
    /// gen_index: the dim whose index each element gets (default 0; cuDNN's `set_axis`).
    pub fn axis(mut self, axis: i64) -> Self {
        self.params.axis = Some(axis);
        self
    }
}

/// Attributes of a convolution node (forward, data gradient or weight gradient). Unset lists
/// default to padding 0, stride 1, dilation 1 for every spatial dim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvAttributes {
    pub(crate) name: String,
    pub(crate) pre_padding: Vec<i64>,
    pub(crate) post_padding: Vec<i64>,
    pub(crate) stride: Vec<i64>,
    pub(crate) dilation: Vec<i64>,
}

/// cuDNN frontend's name for forward convolution attributes.
pub type ConvFpropAttributes = ConvAttributes;
/// cuDNN frontend's name for data-gradient convolution attributes.
pub type ConvDgradAttributes = ConvAttributes;
/// cuDNN frontend's name for weight-gradient convolution attributes.
pub type ConvWgradAttributes = ConvAttributes;

impl ConvAttributes {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Same padding before and after.
    pub fn padding(mut self, p: &[i64]) -> Self {
        self.pre_padding = p.to_vec();
        self.post_padding = p.to_vec();
        self
    }
    pub fn pre_padding(mut self, p: &[i64]) -> Self {
        self.pre_padding = p.to_vec();
        self
    }
    pub fn post_padding(mut self, p: &[i64]) -> Self {
        self.post_padding = p.to_vec();
        self
    }
    pub fn stride(mut self, s: &[i64]) -> Self {
        self.stride = s.to_vec();
        self
    }
    pub fn dilation(mut self, d: &[i64]) -> Self {
        self.dilation = d.to_vec();
        self
    }
}

/// Attributes of a matmul node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatmulAttributes {
    pub(crate) name: String,
}

impl MatmulAttributes {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

/// Attributes of a reduction node. The output's dims say which dims are reduced (those of size 1
/// where the input's are larger); set them on the returned tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReductionAttributes {
    pub(crate) name: String,
    pub(crate) mode: ReductionMode,
}

impl ReductionAttributes {
    pub fn new(mode: ReductionMode) -> Self {
        ReductionAttributes {
            name: String::new(),
            mode,
        }
    }
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}
