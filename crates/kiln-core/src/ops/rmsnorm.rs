//! RMS normalization (cuDNN frontend's `rmsnorm`), stored as a [`GenericOp`].
//!
//! `y = x * inv_rms * scale (+ bias)` with `inv_rms[n] = 1 / sqrt(mean(x[n, ...]^2) + epsilon)`:
//! each sample (index of the first dim) is normalized over all its other dims.
//!
//! Ports: inputs `x` [N, d1, ...], `scale` [1, d1, ...], optional `bias` [1, d1, ...], optional
//! `epsilon` (a by-value scalar); outputs `y` (the dims of `x`) and, in training, `inv_rms`
//! [N, 1, ...]. Attributes: `forward_phase` (`"training"` or `"inference"`, default inference)
//! and `epsilon` (float). Epsilon comes from exactly one of the `epsilon` port and attribute.

use super::{AttrValue, GenericOp, OpSpec, Port};
use crate::{Error, OpGraph, Result};

pub use super::norm::{Epsilon, NormPhase};

/// A typed view of an rmsnorm node.
#[derive(Debug, Clone, PartialEq)]
pub struct RmsnormOp {
    pub x: i64,
    pub scale: i64,
    pub bias: Option<i64>,
    pub epsilon: Epsilon,
    pub phase: NormPhase,
    pub y: i64,
    pub inv_rms: Option<i64>,
}

impl RmsnormOp {
    /// The typed view of `op`, an rmsnorm node that passed [`super::check_generic`]. Refuses a
    /// missing port, a bad phase or epsilon given twice or not at all; errors name `what`.
    pub fn from_generic(op: &GenericOp, what: &str) -> Result<RmsnormOp> {
        let port =
            |side: &std::collections::BTreeMap<String, i64>, name: &str| side.get(name).copied();
        let need = |side, name: &str| {
            port(side, name).ok_or_else(|| {
                Error::BadParam(format!(
                    "{what}: required port '{name}' of rmsnorm is missing"
                ))
            })
        };
        let phase = match op.attributes.get("forward_phase") {
            None => NormPhase::Inference,
            Some(AttrValue::Str(s)) if s == "training" => NormPhase::Training,
            Some(AttrValue::Str(s)) if s == "inference" => NormPhase::Inference,
            Some(v) => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'forward_phase' is {v:?}; it must be \"training\" or \
                     \"inference\""
                )))
            }
        };
        let epsilon = match (op.inputs.get("epsilon"), op.attributes.get("epsilon")) {
            (Some(&uid), None) => Epsilon::Tensor(uid),
            (None, Some(AttrValue::Float(v))) => Epsilon::Value(*v),
            (None, Some(v)) => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'epsilon' is a {}; it must be a float",
                    v.type_name()
                )))
            }
            (Some(_), Some(_)) => {
                return Err(Error::BadParam(format!(
                    "{what}: epsilon is given both as the 'epsilon' input and as an attribute; \
                     give one"
                )))
            }
            (None, None) => {
                return Err(Error::BadParam(format!(
                    "{what}: rmsnorm needs epsilon: an 'epsilon' input (a by-value scalar) or \
                     an 'epsilon' attribute"
                )))
            }
        };
        Ok(RmsnormOp {
            x: need(&op.inputs, "x")?,
            scale: need(&op.inputs, "scale")?,
            bias: port(&op.inputs, "bias"),
            epsilon,
            phase,
            y: need(&op.outputs, "y")?,
            inv_rms: port(&op.outputs, "inv_rms"),
        })
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        let mut op = GenericOp::new(Rmsnorm.name())
            .input("x", self.x)
            .input("scale", self.scale)
            .output("y", self.y)
            .attribute("forward_phase", AttrValue::Str(self.phase.name().into()));
        if let Some(b) = self.bias {
            op = op.input("bias", b);
        }
        match self.epsilon {
            Epsilon::Tensor(uid) => op = op.input("epsilon", uid),
            Epsilon::Value(v) => op = op.attribute("epsilon", AttrValue::Float(v)),
        }
        if let Some(r) = self.inv_rms {
            op = op.output("inv_rms", r);
        }
        op
    }

    /// The value of epsilon: the attribute, or the value of the by-value scalar `epsilon`.
    pub fn epsilon_value(&self, graph: &OpGraph, node: &str) -> Result<f64> {
        self.epsilon.value(graph, node, "epsilon")
    }
}

/// The dims of `inv_rms` for `x`: the batch dim kept, every other dim 1.
pub fn inv_rms_dims(x: &[i64]) -> Vec<i64> {
    super::norm::per_sample_stat_dims(x)
}

/// The [`OpSpec`] of rmsnorm.
pub struct Rmsnorm;

static INPUTS: [Port; 4] = [
    Port::required("x"),
    Port::required("scale"),
    Port::optional("bias"),
    Port::optional("epsilon"),
];
static OUTPUTS: [Port; 2] = [Port::required("y"), Port::optional("inv_rms")];

impl OpSpec for Rmsnorm {
    fn name(&self) -> &'static str {
        "rmsnorm"
    }

    fn inputs(&self) -> &'static [Port] {
        &INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &[("epsilon", "float"), ("forward_phase", "str")]
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let r = RmsnormOp::from_generic(op, what)?;
        let t = |uid: i64| graph.tensor_for(uid, node);
        let x = t(r.x)?;
        if x.scalar.is_some() || x.dims.len() < 2 {
            return Err(Error::BadParam(format!(
                "{what}: x {} must be a tensor of rank 2 or more (batch, then the normalized dims)",
                x.label()
            )));
        }
        let mut param_dims = x.dims.clone();
        param_dims[0] = 1;
        for (port, uid) in [("scale", Some(r.scale)), ("bias", r.bias)] {
            let Some(uid) = uid else { continue };
            let p = t(uid)?;
            if p.scalar.is_some() || p.dims != param_dims {
                return Err(Error::BadParam(format!(
                    "{what}: {port} {} has dims {:?}; for x {:?} it must be a tensor of dims {:?}",
                    p.label(),
                    p.dims,
                    x.dims,
                    param_dims
                )));
            }
        }
        let eps = r.epsilon_value(graph, node)?;
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(Error::BadParam(format!(
                "{what}: epsilon is {eps}; it must be finite and at least 0"
            )));
        }
        match (r.phase, r.inv_rms) {
            (NormPhase::Training, None) => {
                return Err(Error::BadParam(format!(
                    "{what}: forward_phase is training but output port 'inv_rms' is not bound"
                )))
            }
            (NormPhase::Inference, Some(_)) => {
                return Err(Error::BadParam(format!(
                    "{what}: output port 'inv_rms' is bound but forward_phase is inference; \
                     set it to training"
                )))
            }
            _ => {}
        }
        super::expect_dims(what, t(r.y)?, &x.dims)?;
        if let Some(uid) = r.inv_rms {
            super::expect_dims(what, t(uid)?, &inv_rms_dims(&x.dims))?;
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
            Error::BadParam(format!(
                "{what}: required input port 'x' of rmsnorm is missing"
            ))
        })?;
        let mut out = vec![("y", x.clone())];
        if op.outputs.contains_key("inv_rms") {
            out.push(("inv_rms", inv_rms_dims(&x)));
        }
        Ok(out)
    }
}
