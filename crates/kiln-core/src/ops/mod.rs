//! One module per operation: its attributes, validation and shape inference live together.
//!
//! The first four operations (pointwise, conv, matmul, reduction) have typed variants of
//! [`crate::Op`] and dedicated FlatBuffer tables that predate the generic encoding. Every later
//! operation is a [`GenericOp`] node described by an [`OpSpec`] registered in [`SPECS`]: adding
//! one is a new module here plus one line in [`SPECS`] (see `docs/adding-an-op.md`).

pub mod batchnorm;
pub mod batchnorm_backward;
pub mod batchnorm_inference;
pub mod conv;
pub mod generic;
pub mod layernorm;
pub mod layernorm_backward;
pub mod matmul;
pub mod norm;
pub mod norm_backward;
pub mod pointwise;
pub mod reduction;
pub mod resample;
pub mod rmsnorm;
pub mod rmsnorm_backward;
pub mod sdpa;

pub use generic::{AttrValue, GenericOp};

use crate::{Error, OpGraph, Result, TensorDesc};

/// Every operation stored as a [`GenericOp`], looked up by [`OpSpec::name`].
pub static SPECS: &[&dyn OpSpec] = &[
    &rmsnorm::Rmsnorm,
    &sdpa::Sdpa,
    &sdpa::SdpaBackward,
    &resample::Resample,
    &resample::ResampleBackward,
    &rmsnorm_backward::RMSNORM_BACKWARD,
    &layernorm::Layernorm,
    &layernorm_backward::LAYERNORM_BACKWARD,
    &batchnorm::Batchnorm,
    &batchnorm_inference::BatchnormInference,
    &batchnorm_backward::BATCHNORM_BACKWARD,
];

/// The spec of the generic operation called `name`, or `None`.
pub fn spec(name: &str) -> Option<&'static dyn OpSpec> {
    SPECS.iter().copied().find(|s| s.name() == name)
}

/// One input or output port of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port {
    /// The port's name, the key in [`GenericOp::inputs`] / [`GenericOp::outputs`].
    pub name: &'static str,
    /// False for a port that may be left out.
    pub required: bool,
}

impl Port {
    /// A port that must be bound.
    pub const fn required(name: &'static str) -> Port {
        Port {
            name,
            required: true,
        }
    }

    /// A port that may be left out.
    pub const fn optional(name: &'static str) -> Port {
        Port {
            name,
            required: false,
        }
    }
}

/// What kiln needs to know about an operation stored as a [`GenericOp`]: its name, its ports and
/// attributes, its validation and its shape inference. The JSON and FlatBuffer mappings are the
/// generic ones, so an implementation of this trait is the whole of an operation's description.
pub trait OpSpec: Sync {
    /// The name in JSON, the graph blob and messages (`rmsnorm`).
    fn name(&self) -> &'static str;

    /// Input ports, in operand order.
    fn inputs(&self) -> &'static [Port];

    /// Output ports, in order (the order the frontend returns them).
    fn outputs(&self) -> &'static [Port];

    /// Attribute names and their types ([`AttrValue::type_name`]); any other name is refused.
    fn attributes(&self) -> &'static [(&'static str, &'static str)];

    /// Checks the attributes' values, which optional ports go together, and the operands'
    /// dims and types. The generic checks (known ports and attributes, required ports present,
    /// attribute types) have passed; every referenced UID exists. `node` is the node's name (for
    /// [`OpGraph::tensor_for`]); errors name `what`.
    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()>;

    /// The dims of each output port present in `op`, given the tensors bound to its inputs
    /// (`input(port)`; `None` for an absent port). Errors name `what`.
    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>>;
}

/// The checks every generic node gets before its spec's own: a registered operation, only known
/// ports and attributes, every required port bound, attributes of the declared type.
pub fn check_generic(op: &GenericOp, what: &str) -> Result<&'static dyn OpSpec> {
    let spec = spec(&op.op).ok_or_else(|| {
        Error::BadParam(format!(
            "{what}: unknown operation '{}'; this kiln knows {}",
            op.op,
            known_ops()
        ))
    })?;
    for (side, ports, given) in [
        ("input", spec.inputs(), &op.inputs),
        ("output", spec.outputs(), &op.outputs),
    ] {
        if let Some(name) = given.keys().find(|k| !ports.iter().any(|p| p.name == *k)) {
            return Err(Error::BadParam(format!(
                "{what}: {} has no {side} port '{name}' (its {side}s: {})",
                spec.name(),
                port_list(ports)
            )));
        }
        if let Some(p) = ports
            .iter()
            .find(|p| p.required && !given.contains_key(p.name))
        {
            return Err(Error::BadParam(format!(
                "{what}: required {side} port '{}' of {} is missing",
                p.name,
                spec.name()
            )));
        }
    }
    for (name, value) in &op.attributes {
        match spec.attributes().iter().find(|(n, _)| n == name) {
            None => {
                return Err(Error::BadParam(format!(
                    "{what}: {} has no attribute '{name}' (its attributes: {})",
                    spec.name(),
                    spec.attributes()
                        .iter()
                        .map(|(n, t)| format!("{n}: {t}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            Some((_, ty)) if *ty != value.type_name() => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute '{name}' is a {}, but {} takes a {ty}",
                    value.type_name(),
                    spec.name()
                )))
            }
            Some(_) => {}
        }
    }
    Ok(spec)
}

fn known_ops() -> String {
    ["pointwise", "conv", "matmul", "reduction"]
        .into_iter()
        .chain(SPECS.iter().map(|s| s.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn port_list(ports: &[Port]) -> String {
    ports
        .iter()
        .map(|p| {
            if p.required {
                p.name.to_string()
            } else {
                format!("{} (optional)", p.name)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Refuses a `bool`, `i8` or `i32` tensor among `uids`: only some pointwise modes and index
/// outputs take them. `what` names the node.
pub fn refuse_integral(graph: &OpGraph, node: &str, uids: &[i64], what: &str) -> Result<()> {
    for &uid in uids {
        let t = graph.tensor_for(uid, node)?;
        if t.data_type.is_integral() {
            return Err(Error::BadParam(format!(
                "{what}: {} is {}; this operation computes on floating-point tensors only",
                t.label(),
                t.data_type
            )));
        }
    }
    Ok(())
}

/// Refuses `out` unless its dims are `want`; `what` names the node.
pub(crate) fn expect_dims(what: &str, out: &TensorDesc, want: &[i64]) -> Result<()> {
    if out.dims != want {
        return Err(Error::BadParam(format!(
            "{what}: output {} has dims {:?} but the operation produces {:?}",
            out.label(),
            out.dims,
            want
        )));
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use crate::ops::conv::conv_output_dims;
    use crate::ops::matmul::matmul_output_dims;
    use crate::ops::pointwise::broadcast;
    use crate::ops::reduction::check_reduction_dims;
    use crate::ConvParams;

    fn p2(pad: i64, stride: i64, dil: i64) -> ConvParams {
        ConvParams {
            pre_padding: vec![pad; 2],
            post_padding: vec![pad; 2],
            stride: vec![stride; 2],
            dilation: vec![dil; 2],
        }
    }

    #[test]
    fn conv_shapes() {
        let y = conv_output_dims(&[8, 64, 56, 56], &[64, 64, 3, 3], &p2(1, 1, 1), "c").unwrap();
        assert_eq!(y, vec![8, 64, 56, 56]);
        let y = conv_output_dims(&[1, 4, 9, 9], &[6, 2, 3, 3], &p2(0, 2, 2), "c").unwrap();
        assert_eq!(y, vec![1, 6, 3, 3]);
        assert!(conv_output_dims(&[1, 3, 9, 9], &[6, 2, 3, 3], &p2(0, 1, 1), "c").is_err());
        assert!(conv_output_dims(&[1, 2, 2, 2], &[6, 2, 3, 3], &p2(0, 1, 1), "c").is_err());
    }

    #[test]
    fn matmul_and_broadcast() {
        assert_eq!(
            matmul_output_dims(&[3, 1, 4, 5], &[1, 2, 5, 6], "m").unwrap(),
            vec![3, 2, 4, 6]
        );
        assert!(matmul_output_dims(&[4, 5], &[4, 6], "m").is_err());
        assert!(broadcast(&[2, 3], &[3, 3], "p").is_err());
        check_reduction_dims(&[2, 3, 4], &[1, 3, 1], "r").unwrap();
        assert!(check_reduction_dims(&[2, 3, 4], &[2, 2, 4], "r").is_err());
    }
}
