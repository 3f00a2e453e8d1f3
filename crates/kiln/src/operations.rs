//! Builder methods of the operations stored as generic nodes (`kiln_core::ops::SPECS`), with
//! their attributes: one section per operation. Each method is a thin typed layer over
//! [`Graph::generic_op`]; the operation's rules live in its `kiln_core::ops` module.

use crate::graph::Graph;
use crate::tensor::Tensor;
use kiln_core::ops::rmsnorm::Rmsnorm;
use kiln_core::{AttrValue, OpSpec, Result};
use std::collections::BTreeMap;

pub use kiln_core::ops::rmsnorm::NormPhase;

/// Attributes of an rmsnorm node (cuDNN frontend's `Rmsnorm_attributes`).
#[derive(Debug, Clone)]
pub struct RmsnormAttributes {
    name: String,
    phase: NormPhase,
    epsilon: Option<RmsnormEpsilon>,
    bias: Option<Tensor>,
}

#[derive(Debug, Clone)]
enum RmsnormEpsilon {
    Value(f64),
    Tensor(Tensor),
}

impl Default for RmsnormAttributes {
    fn default() -> Self {
        RmsnormAttributes::new()
    }
}

impl RmsnormAttributes {
    /// Inference phase (only `y`), no bias; epsilon must be set.
    pub fn new() -> Self {
        RmsnormAttributes {
            name: String::new(),
            phase: NormPhase::Inference,
            epsilon: None,
            bias: None,
        }
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Training also writes `inv_rms`; inference writes `y` only.
    pub fn forward_phase(mut self, phase: NormPhase) -> Self {
        self.phase = phase;
        self
    }
    /// Epsilon as a value (stored as the node's `epsilon` attribute).
    pub fn epsilon(mut self, v: f64) -> Self {
        self.epsilon = Some(RmsnormEpsilon::Value(v));
        self
    }
    /// Epsilon as a by-value scalar tensor ([`Graph::scalar`]), as cuDNN frontend takes it.
    pub fn epsilon_tensor(mut self, t: &Tensor) -> Self {
        self.epsilon = Some(RmsnormEpsilon::Tensor(t.clone()));
        self
    }
    /// Adds `bias` (dims of `scale`) after scaling.
    pub fn bias(mut self, t: &Tensor) -> Self {
        self.bias = Some(t.clone());
        self
    }
}

/// The outputs of [`Graph::rmsnorm`].
#[derive(Debug, Clone)]
pub struct RmsnormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// `1 / sqrt(mean(x^2) + epsilon)` per sample, dims `[N, 1, ...]`; training only.
    pub inv_rms: Option<Tensor>,
}

impl Graph {
    /// Adds an RMS normalization of `x` [N, ...] over every dim but the first, scaled by `scale`
    /// [1, ...] (plus the optional bias). Returns `y` and, in the training phase, `inv_rms`
    /// (both virtual until `set_output(true)`).
    ///
    /// Refuses an attribute set without epsilon; the rest (dims, epsilon's value) is checked by
    /// [`Graph::validate`].
    pub fn rmsnorm(
        &mut self,
        x: &Tensor,
        scale: &Tensor,
        attrs: RmsnormAttributes,
    ) -> Result<RmsnormOutputs> {
        let mut inputs = vec![("x", x), ("scale", scale)];
        if let Some(b) = &attrs.bias {
            inputs.push(("bias", b));
        }
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "forward_phase".to_string(),
            AttrValue::Str(attrs.phase.name().into()),
        );
        match &attrs.epsilon {
            Some(RmsnormEpsilon::Value(v)) => {
                attributes.insert("epsilon".to_string(), AttrValue::Float(*v));
            }
            Some(RmsnormEpsilon::Tensor(t)) => inputs.push(("epsilon", t)),
            None => {
                return Err(kiln_core::Error::BadParam(
                    "rmsnorm: set epsilon (RmsnormAttributes::epsilon or epsilon_tensor)".into(),
                ))
            }
        }
        let outputs: &[&str] = match attrs.phase {
            NormPhase::Training => &["y", "inv_rms"],
            NormPhase::Inference => &["y"],
        };
        let mut made = self
            .generic_op(Rmsnorm.name(), &attrs.name, &inputs, outputs, attributes)?
            .into_iter();
        let y = made
            .next()
            .ok_or_else(|| kiln_core::Error::Internal("rmsnorm: no y".into()))?;
        Ok(RmsnormOutputs {
            y,
            inv_rms: made.next(),
        })
    }
}
