//! The generic node: an operation named by a string, with named input and output ports and typed
//! attributes. Every operation added after the first four is stored this way, so that a new
//! operation needs no change to the IR enum, the JSON form or the graph FlatBuffer schema.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A typed attribute value of a generic node. JSON writes it externally tagged
/// (`{"float": 1e-5}`), so that a float that happens to be whole stays a float.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttrValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    Str(String),
}

impl AttrValue {
    /// The type's name, for messages (`bool`, `int`, `float`, `ints`, `floats`, `str`).
    pub fn type_name(&self) -> &'static str {
        match self {
            AttrValue::Bool(_) => "bool",
            AttrValue::Int(_) => "int",
            AttrValue::Float(_) => "float",
            AttrValue::Ints(_) => "ints",
            AttrValue::Floats(_) => "floats",
            AttrValue::Str(_) => "str",
        }
    }
}

/// A node of an operation registered in [`crate::ops::SPECS`]: its name (`op`), the tensor UID
/// bound to each port it uses (optional ports left out when absent) and its attributes.
///
/// Maps are ordered by name, so that encoding is deterministic. [`crate::OpGraph::validate`]
/// refuses an unknown `op`, an unknown port or attribute, and a missing required port.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(try_from = "RawGenericOp")]
pub struct GenericOp {
    /// The operation's registered name, e.g. `rmsnorm`.
    pub op: String,
    /// Input port name → tensor UID.
    #[serde(default)]
    pub inputs: BTreeMap<String, i64>,
    /// Output port name → tensor UID.
    #[serde(default)]
    pub outputs: BTreeMap<String, i64>,
    /// Attribute name → value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, AttrValue>,
}

impl GenericOp {
    /// A node of operation `op` with no ports or attributes yet.
    pub fn new(op: impl Into<String>) -> GenericOp {
        GenericOp {
            op: op.into(),
            ..GenericOp::default()
        }
    }

    /// Binds input port `port` to `uid`.
    pub fn input(mut self, port: &str, uid: i64) -> Self {
        self.inputs.insert(port.into(), uid);
        self
    }

    /// Binds output port `port` to `uid`.
    pub fn output(mut self, port: &str, uid: i64) -> Self {
        self.outputs.insert(port.into(), uid);
        self
    }

    /// Sets attribute `name`.
    pub fn attribute(mut self, name: &str, value: AttrValue) -> Self {
        self.attributes.insert(name.into(), value);
        self
    }
}

/// The JSON form of a [`GenericOp`], before the check that its name is not a typed operation's.
#[derive(Deserialize)]
struct RawGenericOp {
    op: String,
    #[serde(default)]
    inputs: BTreeMap<String, i64>,
    #[serde(default)]
    outputs: BTreeMap<String, i64>,
    #[serde(default)]
    attributes: BTreeMap<String, AttrValue>,
}

/// The `op` names of [`crate::Op`]'s typed variants.
const TYPED_OPS: [&str; 4] = ["pointwise", "conv", "matmul", "reduction"];

impl TryFrom<RawGenericOp> for GenericOp {
    type Error = String;

    /// JSON reaches here for every `op` name the typed variants did not accept; a typed name
    /// means that node's fields were wrong, which must not pass as an unknown generic node.
    fn try_from(raw: RawGenericOp) -> std::result::Result<GenericOp, String> {
        if TYPED_OPS.contains(&raw.op.as_str()) {
            return Err(format!(
                "a '{}' node whose fields do not match that operation's (see docs/cli.md)",
                raw.op
            ));
        }
        Ok(GenericOp {
            op: raw.op,
            inputs: raw.inputs,
            outputs: raw.outputs,
            attributes: raw.attributes,
        })
    }
}
