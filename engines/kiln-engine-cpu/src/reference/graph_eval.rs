//! Evaluation of a whole graph on packed row-major f64 buffers.

use super::conv::ConvGeometry;
use super::pointwise::{self, Operand};
use super::{matmul, reduction};
use kiln_core::{Node, Op, OpGraph, TensorDesc};
use kiln_plugin_sdk::{PluginError, PluginResult};
use std::collections::HashMap;

/// Evaluates a validated graph on packed row-major f64 inputs and returns every non-virtual
/// output tensor's values (packed row-major f64, unrounded).
///
/// `inputs` holds one buffer per bound input UID (a non-virtual tensor that no node writes and
/// that is not a by-value scalar), in logical row-major order; by-value scalars take their value
/// from the graph and need no entry. Nodes run in the order of `graph.nodes` (topological after
/// `OpGraph::validate`); every intermediate stays in f64, and a non-virtual output that a later
/// node reads is read as its unrounded f64 value.
///
/// Refuses (with `BAD_PARAM`, naming the tensor or node): a missing input, an input whose length
/// is not its element count, an entry for a UID the graph lacks, for a virtual tensor, a by-value
/// scalar or a tensor some node writes; and nodes out of topological order or with inconsistent
/// operand dims. Never panics on a graph that was not validated.
pub fn evaluate(
    graph: &OpGraph,
    inputs: &HashMap<i64, Vec<f64>>,
) -> PluginResult<HashMap<i64, Vec<f64>>> {
    for t in &graph.tensors {
        t.validate()?;
    }
    let mut producer: HashMap<i64, &Node> = HashMap::new();
    for node in &graph.nodes {
        for out in node.op.outputs() {
            if let Some(first) = producer.insert(out, node) {
                return Err(PluginError::bad_param(format!(
                    "tensor uid {out} is written by both node '{}' and node '{}'",
                    first.name, node.name
                )));
            }
        }
    }
    check_inputs(graph, inputs, &producer)?;

    let mut values: HashMap<i64, Vec<f64>> = HashMap::new();
    for node in &graph.nodes {
        let env = Env {
            graph,
            inputs,
            values: &values,
            producer: &producer,
            node,
        };
        for (uid, out) in env.eval()? {
            values.insert(uid, out);
        }
    }
    let mut outputs = HashMap::new();
    for t in graph.tensors.iter().filter(|t| !t.is_virtual) {
        if let Some(v) = values.remove(&t.uid) {
            outputs.insert(t.uid, v);
        }
    }
    Ok(outputs)
}

fn check_inputs(
    graph: &OpGraph,
    inputs: &HashMap<i64, Vec<f64>>,
    producer: &HashMap<i64, &Node>,
) -> PluginResult<()> {
    for (&uid, data) in inputs {
        let t = graph.tensor(uid).ok_or_else(|| {
            PluginError::bad_param(format!(
                "input values for uid {uid}: the graph has no such tensor"
            ))
        })?;
        if t.is_virtual {
            return Err(PluginError::bad_param(format!(
                "input values for {}: a virtual tensor takes no input values",
                t.label()
            )));
        }
        if t.scalar.is_some() {
            return Err(PluginError::bad_param(format!(
                "input values for {}: a by-value scalar takes its value from the graph",
                t.label()
            )));
        }
        if let Some(node) = producer.get(&uid) {
            return Err(PluginError::bad_param(format!(
                "input values for {}: node '{}' writes it, so it takes no input values",
                t.label(),
                node.name
            )));
        }
        if t.element_count() != Some(data.len()) {
            return Err(PluginError::bad_param(format!(
                "input values for {}: {} values, but dims {:?} have {} elements",
                t.label(),
                data.len(),
                t.dims,
                t.element_count().unwrap_or(0)
            )));
        }
    }
    Ok(())
}

/// A tensor's value as a node reads it.
#[derive(Clone, Copy)]
enum Value<'a> {
    Data(&'a [f64]),
    Scalar(f64),
}

/// What evaluating one node needs.
struct Env<'a> {
    graph: &'a OpGraph,
    inputs: &'a HashMap<i64, Vec<f64>>,
    values: &'a HashMap<i64, Vec<f64>>,
    producer: &'a HashMap<i64, &'a Node>,
    node: &'a Node,
}

impl<'a> Env<'a> {
    fn what(&self) -> String {
        format!("node '{}' ({})", self.node.name, self.node.op.describe())
    }

    fn desc(&self, uid: i64) -> PluginResult<&'a TensorDesc> {
        Ok(self.graph.tensor_for(uid, &self.node.name)?)
    }

    /// The description and value of operand `uid`.
    fn read(&self, uid: i64) -> PluginResult<(&'a TensorDesc, Value<'a>)> {
        let t = self.desc(uid)?;
        if let Some(v) = t.scalar {
            return Ok((t, Value::Scalar(v)));
        }
        if let Some(v) = self.values.get(&uid) {
            return Ok((t, Value::Data(v)));
        }
        if let Some(writer) = self.producer.get(&uid) {
            return Err(PluginError::bad_param(format!(
                "{}: reads {} before node '{}' writes it; the nodes are not in topological \
                 order (validate the graph first)",
                self.what(),
                t.label(),
                writer.name
            )));
        }
        match self.inputs.get(&uid) {
            Some(v) => Ok((t, Value::Data(v))),
            None => Err(PluginError::bad_param(format!(
                "{}: reads {}, which has no input values",
                self.what(),
                t.label()
            ))),
        }
    }

    /// Operand `uid` as a buffer; by-value scalars are refused (only pointwise takes them).
    fn read_tensor(&self, uid: i64) -> PluginResult<(&'a TensorDesc, &'a [f64])> {
        match self.read(uid)? {
            (t, Value::Data(d)) => Ok((t, d)),
            (t, Value::Scalar(_)) => Err(PluginError::bad_param(format!(
                "{}: {} is a by-value scalar; only pointwise operands may be",
                self.what(),
                t.label()
            ))),
        }
    }

    /// The `(uid, values)` of each tensor the node writes.
    fn eval(&self) -> PluginResult<Vec<(i64, Vec<f64>)>> {
        let what = self.what();
        for uid in self.node.op.outputs() {
            let out = self.desc(uid)?;
            if out.scalar.is_some() {
                return Err(PluginError::bad_param(format!(
                    "{what}: writes {}, a by-value scalar",
                    out.label()
                )));
            }
        }
        if let Op::Generic(g) = &self.node.op {
            let kernel = super::generic_kernel(&g.op).ok_or_else(|| {
                PluginError::bad_param(format!("{what}: the reference engine has no kernel for it"))
            })?;
            let read = |uid| self.read_tensor(uid);
            let io = super::GenericInputs {
                graph: self.graph,
                node: &self.node.name,
                what: &what,
                read: &read,
            };
            return kernel(g, &io);
        }
        let [uid] = self.node.op.outputs()[..] else {
            return Err(PluginError::internal(format!(
                "{what}: a typed operation writes exactly one tensor"
            )));
        };
        let out = self.desc(uid)?;
        let values = match &self.node.op {
            Op::Pointwise(p) => {
                if p.mode.operand_count() != p.operand_count() {
                    return Err(PluginError::bad_param(format!(
                        "{what}: mode {} takes {} operand(s)",
                        p.mode.name(),
                        p.mode.operand_count()
                    )));
                }
                let read = p
                    .inputs()
                    .into_iter()
                    .map(|uid| self.read(uid))
                    .collect::<PluginResult<Vec<_>>>()?;
                let tensors: Vec<&TensorDesc> = read
                    .iter()
                    .filter(|(_, v)| matches!(v, Value::Data(_)))
                    .map(|(t, _)| *t)
                    .collect();
                let dims = match tensors.split_first() {
                    None => {
                        return Err(PluginError::bad_param(format!(
                            "{what}: every operand is a by-value scalar"
                        )))
                    }
                    Some((first, rest)) => rest.iter().try_fold(first.dims.clone(), |acc, t| {
                        kiln_core::shape::broadcast(&acc, &t.dims, &what)
                    })?,
                };
                if dims != out.dims {
                    return Err(PluginError::bad_param(format!(
                        "{what}: output {} has dims {:?} but the operation produces {dims:?}",
                        out.label(),
                        out.dims
                    )));
                }
                let operands: Vec<Operand<'_>> = read
                    .iter()
                    .map(|&(t, v)| match v {
                        Value::Data(data) => Operand::Tensor {
                            data,
                            dims: &t.dims,
                        },
                        Value::Scalar(s) => Operand::Scalar(s),
                    })
                    .collect();
                pointwise::apply(p.mode, &p.params, &operands, &out.dims)
            }
            Op::Conv(c) => {
                let [first, second] = c.inputs();
                let (_, first) = self.read_tensor(first)?;
                let (_, second) = self.read_tensor(second)?;
                let (x, w, y) = (self.desc(c.x)?, self.desc(c.w)?, self.desc(c.y)?);
                let geometry = ConvGeometry::new(&x.dims, &w.dims, &y.dims, &c.params, &what)?;
                geometry.run(c.direction, first, second, &what)
            }
            Op::Matmul(m) => {
                let (ta, a) = self.read_tensor(m.a)?;
                let (tb, b) = self.read_tensor(m.b)?;
                matmul::matmul(a, &ta.dims, b, &tb.dims, &out.dims, &what)
            }
            Op::Reduction(r) => {
                let (tx, x) = self.read_tensor(r.x)?;
                reduction::reduce(r.mode, x, &tx.dims, &out.dims, &what)
            }
            Op::Generic(_) => Err(PluginError::internal(format!(
                "{what}: generic nodes are evaluated above"
            ))),
        }?;
        Ok(vec![(uid, values)])
    }
}
