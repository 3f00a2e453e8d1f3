//! The frontend graph and its lifecycle.

use crate::attributes::{
    ConvAttributes, MatmulAttributes, PointwiseAttributes, ReductionAttributes,
};
use crate::host::{VariantPack, Workspace};
use crate::tensor::{Tensor, TensorAttributes};
use kiln_backend::{heuristics, BehaviorNote, EngineConfig, ExecutionPlan, Handle, HeurMode};
use kiln_core::tensor::{packed_strides, packed_strides_in_order, stride_order};
use kiln_core::{
    ops, shape, AttrValue, ConvDirection, ConvOp, ConvParams, DataType, Error, GenericOp, MatmulOp,
    Node, Op, OpGraph, PointwiseMode, PointwiseOp, PointwiseParams, ReductionMode, ReductionOp,
    Result,
};
use std::collections::BTreeMap;

/// How many plans `build_plans` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BuildPlanPolicy {
    /// Build candidates in heuristic order and keep the first that builds.
    #[default]
    HeuristicsChoice,
    /// Build every candidate that can be built; the first one is selected.
    All,
}

#[derive(Debug, Clone)]
enum NodeSpec {
    Pointwise {
        a: Tensor,
        b: Option<Tensor>,
        c: Option<Tensor>,
        out: Tensor,
        mode: PointwiseMode,
        params: PointwiseParams,
    },
    Conv {
        direction: ConvDirection,
        x: Tensor,
        w: Tensor,
        y: Tensor,
        attrs: ConvAttributes,
    },
    Matmul {
        a: Tensor,
        b: Tensor,
        c: Tensor,
    },
    Reduction {
        x: Tensor,
        y: Tensor,
        mode: ReductionMode,
    },
    /// An operation of `kiln_core::ops::SPECS`; ports in the spec's order.
    Generic {
        op: &'static str,
        inputs: Vec<(&'static str, Tensor)>,
        outputs: Vec<(&'static str, Tensor)>,
        attributes: BTreeMap<String, AttrValue>,
    },
}

impl NodeSpec {
    /// Every tensor the node writes.
    fn outputs(&self) -> Vec<&Tensor> {
        match self {
            NodeSpec::Generic { outputs, .. } => outputs.iter().map(|(_, t)| t).collect(),
            NodeSpec::Pointwise { out, .. } => vec![out],
            NodeSpec::Conv {
                direction: ConvDirection::Fprop,
                y,
                ..
            } => vec![y],
            NodeSpec::Conv {
                direction: ConvDirection::Dgrad,
                x,
                ..
            } => vec![x],
            NodeSpec::Conv {
                direction: ConvDirection::Wgrad,
                w,
                ..
            } => vec![w],
            NodeSpec::Matmul { c, .. } => vec![c],
            NodeSpec::Reduction { y, .. } => vec![y],
        }
    }

    /// The input whose layout and type an output inherits by default (a generic node's first
    /// bound input port; `None` for one that has none).
    fn layout_source(&self) -> Option<&Tensor> {
        Some(match self {
            NodeSpec::Pointwise { a, b: Some(b), .. } if a.scalar().is_some() => b,
            NodeSpec::Pointwise { a, .. } => a,
            NodeSpec::Conv {
                direction: ConvDirection::Dgrad,
                y,
                ..
            } => y,
            NodeSpec::Conv { x, .. } => x,
            NodeSpec::Matmul { a, .. } => a,
            NodeSpec::Reduction { x, .. } => x,
            NodeSpec::Generic { inputs, .. } => return inputs.first().map(|(_, t)| t),
        })
    }
}

/// A graph of tensor operations, with its plans once built.
///
/// Lifecycle (cuDNN frontend's): [`Graph::validate`], [`Graph::build_operation_graph`],
/// [`Graph::create_execution_plans`], [`Graph::check_support`], [`Graph::build_plans`],
/// [`Graph::get_workspace_size`], [`Graph::execute`]; [`Graph::build`] chains them.
#[derive(Default)]
pub struct Graph {
    name: String,
    tensors: Vec<Tensor>,
    nodes: Vec<(String, NodeSpec)>,
    io_data_type: Option<DataType>,
    intermediate_data_type: Option<DataType>,
    op_graph: Option<OpGraph>,
    blob: Option<Vec<u8>>,
    handle: Option<Handle>,
    configs: Vec<EngineConfig>,
    notes: Vec<BehaviorNote>,
    deselected: Vec<String>,
    pub(crate) plans: Vec<ExecutionPlan>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    /// Names the graph (kept in saved graphs).
    pub fn set_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.name = name.into();
        self
    }

    /// Default data type of non-virtual tensors whose type is unset.
    pub fn set_io_data_type(&mut self, dt: DataType) -> &mut Self {
        self.io_data_type = Some(dt);
        self
    }

    /// Default data type of virtual tensors whose type is unset.
    pub fn set_intermediate_data_type(&mut self, dt: DataType) -> &mut Self {
        self.intermediate_data_type = Some(dt);
        self
    }

    fn changed(&mut self) {
        self.op_graph = None;
        self.blob = None;
        self.configs.clear();
        self.plans.clear();
    }

    /// Adds an input (or output) tensor described by `attrs`.
    pub fn tensor(&mut self, attrs: TensorAttributes) -> Tensor {
        self.changed();
        let t = Tensor::new(attrs);
        self.tensors.push(t.clone());
        t
    }

    /// Adds a by-value scalar operand (not bound at execute), of type f32.
    pub fn scalar(&mut self, value: f64) -> Tensor {
        self.tensor(TensorAttributes {
            dims: vec![1],
            strides: vec![1],
            data_type: Some(DataType::F32),
            scalar: Some(value),
            ..TensorAttributes::default()
        })
    }

    pub(crate) fn output(&mut self) -> Tensor {
        self.tensor(TensorAttributes {
            is_virtual: true,
            ..TensorAttributes::default()
        })
    }

    fn node_name(&self, given: &str, kind: &str) -> String {
        if given.is_empty() {
            format!("{kind}_{}", self.nodes.len())
        } else {
            given.to_string()
        }
    }

    /// Adds a pointwise node: `mode(a)` for unary modes, `mode(a, b)` for binary ones. Returns the
    /// new output tensor (virtual until `set_output(true)`).
    pub fn pointwise(
        &mut self,
        a: &Tensor,
        b: Option<&Tensor>,
        attrs: PointwiseAttributes,
    ) -> Tensor {
        let name = self.node_name(&attrs.name, attrs.mode.name());
        let out = self.output();
        self.nodes.push((
            name,
            NodeSpec::Pointwise {
                a: a.clone(),
                b: b.cloned(),
                c: None,
                out: out.clone(),
                mode: attrs.mode,
                params: attrs.params,
            },
        ));
        out
    }

    /// Adds a pointwise node of a three-operand mode (cuDNN frontend's three-input `pointwise`):
    /// `binary_select` writes `c != 0 ? a : b`. Returns the new output tensor.
    pub fn pointwise_ternary(
        &mut self,
        a: &Tensor,
        b: &Tensor,
        c: &Tensor,
        attrs: PointwiseAttributes,
    ) -> Tensor {
        let name = self.node_name(&attrs.name, attrs.mode.name());
        let out = self.output();
        self.nodes.push((
            name,
            NodeSpec::Pointwise {
                a: a.clone(),
                b: Some(b.clone()),
                c: Some(c.clone()),
                out: out.clone(),
                mode: attrs.mode,
                params: attrs.params,
            },
        ));
        out
    }

    /// Adds a forward convolution of `x` [N, C, spatial...] with `w` [K, C/groups, filter...];
    /// returns `y` [N, K, out...].
    pub fn conv_fprop(&mut self, x: &Tensor, w: &Tensor, attrs: ConvAttributes) -> Tensor {
        let name = self.node_name(&attrs.name, "conv_fprop");
        let y = self.output();
        self.nodes.push((
            name,
            NodeSpec::Conv {
                direction: ConvDirection::Fprop,
                x: x.clone(),
                w: w.clone(),
                y: y.clone(),
                attrs,
            },
        ));
        y
    }

    /// Adds a data-gradient convolution: from `dy` and `w`, returns `dx`, whose dims must be set
    /// with `set_dim` (they cannot be inferred).
    pub fn conv_dgrad(&mut self, dy: &Tensor, w: &Tensor, attrs: ConvAttributes) -> Tensor {
        let name = self.node_name(&attrs.name, "conv_dgrad");
        let dx = self.output();
        self.nodes.push((
            name,
            NodeSpec::Conv {
                direction: ConvDirection::Dgrad,
                x: dx.clone(),
                w: w.clone(),
                y: dy.clone(),
                attrs,
            },
        ));
        dx
    }

    /// Adds a weight-gradient convolution: from `dy` and `x`, returns `dw`, whose dims must be
    /// set with `set_dim`.
    pub fn conv_wgrad(&mut self, dy: &Tensor, x: &Tensor, attrs: ConvAttributes) -> Tensor {
        let name = self.node_name(&attrs.name, "conv_wgrad");
        let dw = self.output();
        self.nodes.push((
            name,
            NodeSpec::Conv {
                direction: ConvDirection::Wgrad,
                x: x.clone(),
                w: dw.clone(),
                y: dy.clone(),
                attrs,
            },
        ));
        dw
    }

    /// Adds a batched matmul `a[..., M, K] * b[..., K, N]`; returns `c[..., M, N]`.
    pub fn matmul(&mut self, a: &Tensor, b: &Tensor, attrs: MatmulAttributes) -> Tensor {
        let name = self.node_name(&attrs.name, "matmul");
        let c = self.output();
        self.nodes.push((
            name,
            NodeSpec::Matmul {
                a: a.clone(),
                b: b.clone(),
                c: c.clone(),
            },
        ));
        c
    }

    /// Adds a reduction of `x`; returns `y`, whose dims must be set (1 in the reduced dims).
    pub fn reduction(&mut self, x: &Tensor, attrs: ReductionAttributes) -> Tensor {
        let name = self.node_name(&attrs.name, attrs.mode.name());
        let y = self.output();
        self.nodes.push((
            name,
            NodeSpec::Reduction {
                x: x.clone(),
                y: y.clone(),
                mode: attrs.mode,
            },
        ));
        y
    }

    /// Adds a node of operation `op`, one of `kiln_core::ops::SPECS` (the typed methods such as
    /// [`Graph::rmsnorm`] call this), binding `inputs` to its input ports and creating a fresh
    /// virtual tensor for each output port in `outputs`. Returns those tensors, in the order of
    /// `outputs`.
    ///
    /// Refuses (`BadParam`) an unknown operation, unknown or repeated ports, a missing required
    /// port and attributes of the wrong type; the operation's own rules are checked by
    /// [`Graph::validate`].
    pub fn generic_op(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[(&str, &Tensor)],
        outputs: &[&str],
        attributes: BTreeMap<String, AttrValue>,
    ) -> Result<Vec<Tensor>> {
        let spec = ops::spec(op).ok_or_else(|| {
            Error::BadParam(format!(
                "unknown operation '{op}' (see kiln_core::ops::SPECS)"
            ))
        })?;
        let name = self.node_name(name, spec.name());
        let what = format!("node '{name}' ({op})");
        let mut check = GenericOp::new(op);
        for &(port, _) in inputs {
            if check.inputs.insert(port.into(), 0).is_some() {
                return Err(Error::BadParam(format!(
                    "{what}: input port '{port}' given twice"
                )));
            }
        }
        for &port in outputs {
            if check.outputs.insert(port.into(), 0).is_some() {
                return Err(Error::BadParam(format!(
                    "{what}: output port '{port}' given twice"
                )));
            }
        }
        check.attributes = attributes.clone();
        ops::check_generic(&check, &what)?;
        let in_ports = spec
            .inputs()
            .iter()
            .filter_map(|p| {
                let t = inputs.iter().find(|(n, _)| *n == p.name)?.1;
                Some((p.name, t.clone()))
            })
            .collect();
        let mut made = Vec::new();
        let mut out_ports = Vec::new();
        for p in spec.outputs() {
            if outputs.contains(&p.name) {
                let t = self.output();
                out_ports.push((p.name, t.clone()));
                made.push((p.name, t));
            }
        }
        self.nodes.push((
            name,
            NodeSpec::Generic {
                op: spec.name(),
                inputs: in_ports,
                outputs: out_ports,
                attributes,
            },
        ));
        Ok(outputs
            .iter()
            .filter_map(|o| made.iter().find(|(n, _)| n == o).map(|(_, t)| t.clone()))
            .collect())
    }

    /// The tensors of the graph, in creation order.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// Infers what is unset, assigns uids, and validates the graph.
    ///
    /// Output dims are inferred for pointwise, conv_fprop and matmul; strides default to the
    /// layout of the operation's first input (packed row-major for inputs); data types default
    /// to the graph's io/intermediate types, else to the first input's. Every rule of
    /// [`OpGraph::validate`] is then checked, with errors naming the tensor or node at fault.
    pub fn validate(&mut self) -> Result<()> {
        self.changed();
        // Uids: keep the user's, assign fresh ones after the largest.
        let mut next = self
            .tensors
            .iter()
            .filter_map(|t| t.uid())
            .max()
            .unwrap_or(0)
            .max(0);
        for t in &self.tensors {
            if t.uid().is_none() {
                next = next.checked_add(1).ok_or_else(|| {
                    Error::BadParam(format!(
                        "tensor '{}' has no uid and none is left to assign after the largest, {next}",
                        t.name()
                    ))
                })?;
                t.set_uid(next);
            }
        }
        for t in &self.tensors {
            let mut a = t.lock();
            if a.strides.is_empty() && !a.dims.is_empty() && !self.is_output(t) {
                a.strides = packed_strides(&a.dims);
            }
            if a.data_type.is_none() && !self.is_output(t) {
                a.data_type = if a.is_virtual {
                    self.intermediate_data_type
                } else {
                    self.io_data_type
                };
            }
        }
        for (name, node) in &self.nodes {
            self.infer(name, node)?;
        }
        let mut tensors = Vec::with_capacity(self.tensors.len());
        for t in &self.tensors {
            let desc = t.desc()?;
            tensors.push(desc);
        }
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (name, node) in &self.nodes {
            nodes.push(Node {
                name: name.clone(),
                compute_type: DataType::F32,
                op: self.lower(node)?,
            });
        }
        let mut g = OpGraph {
            name: self.name.clone(),
            tensors,
            nodes,
        };
        g.validate()?;
        self.op_graph = Some(g);
        Ok(())
    }

    fn is_output(&self, t: &Tensor) -> bool {
        self.nodes
            .iter()
            .any(|(_, n)| n.outputs().iter().any(|o| o.same(t)))
    }

    fn infer(&self, name: &str, node: &NodeSpec) -> Result<()> {
        let what = format!("node '{name}'");
        let NodeSpec::Generic {
            op,
            inputs,
            outputs,
            attributes,
        } = node
        else {
            for out in node.outputs() {
                self.infer_output(&what, node, out, None)?;
            }
            return Ok(());
        };
        let spec = ops::spec(op)
            .ok_or_else(|| Error::Internal(format!("{what}: operation '{op}' vanished")))?;
        let mut generic = GenericOp::new(*op);
        generic.attributes = attributes.clone();
        for (port, _) in outputs {
            generic.outputs.insert((*port).into(), 0);
        }
        let input = |port: &str| {
            inputs
                .iter()
                .find(|(p, _)| *p == port)
                .map(|(_, t)| t.dims())
        };
        let dims = spec.infer_output_dims(&generic, &input, &what)?;
        for (port, out) in outputs {
            let want = dims.iter().find(|(p, _)| p == port).map(|(_, d)| d.clone());
            self.infer_output(&what, node, out, want)?;
        }
        Ok(())
    }

    /// Fills in what is unset of `out`: its dims (`dims` for a generic node, else inferred from
    /// the typed operation), strides and data type.
    fn infer_output(
        &self,
        what: &str,
        node: &NodeSpec,
        out: &Tensor,
        dims: Option<Vec<i64>>,
    ) -> Result<()> {
        let src = node.layout_source().ok_or_else(|| {
            Error::BadParam(format!(
                "{what}: has no input tensor to take its outputs' layout from"
            ))
        })?;
        let (src_dims, src_strides, src_type) = (src.dims(), src.strides(), src.data_type());
        if src_dims.is_empty() {
            return Err(Error::BadParam(format!(
                "{what}: input tensor '{}' has no dims",
                src.name()
            )));
        }
        if out.dims().is_empty() {
            let what = what.to_string();
            let dims = match (node, dims) {
                (_, Some(dims)) => dims,
                (NodeSpec::Pointwise { a, b, c, .. }, None) => {
                    let tensors: Vec<Vec<i64>> = std::iter::once(a)
                        .chain(b)
                        .chain(c)
                        .filter(|t| t.scalar().is_none())
                        .map(|t| t.dims())
                        .collect();
                    match tensors.split_first() {
                        None => a.dims(),
                        Some((first, rest)) => rest
                            .iter()
                            .try_fold(first.clone(), |acc, d| shape::broadcast(&acc, d, &what))?,
                    }
                }
                (
                    NodeSpec::Conv {
                        direction: ConvDirection::Fprop,
                        x,
                        w,
                        attrs,
                        ..
                    },
                    None,
                ) => {
                    let params = conv_params(attrs, x.dims().len().saturating_sub(2));
                    shape::conv_output_dims(&x.dims(), &w.dims(), &params, &what)?
                }
                (NodeSpec::Matmul { a, b, .. }, None) => {
                    shape::matmul_output_dims(&a.dims(), &b.dims(), &what)?
                }
                (_, None) => {
                    return Err(Error::BadParam(format!(
                        "{what}: set the dims of its output tensor{}; they cannot be inferred",
                        if out.name().is_empty() {
                            String::new()
                        } else {
                            format!(" '{}'", out.name())
                        }
                    )))
                }
            };
            out.set_dim(&dims);
        }
        let dims = out.dims();
        if out.strides().is_empty() {
            let strides =
                if matches!(node, NodeSpec::Matmul { .. }) || src_strides.len() != dims.len() {
                    packed_strides(&dims)
                } else {
                    packed_strides_in_order(&dims, &stride_order(&src_strides))
                };
            out.set_stride(&strides);
        }
        if out.data_type().is_none() {
            let default = if out.is_virtual() {
                self.intermediate_data_type
            } else {
                self.io_data_type
            };
            out.set_data_type(default.or(src_type).unwrap_or(DataType::F32));
        }
        Ok(())
    }

    fn lower(&self, node: &NodeSpec) -> Result<Op> {
        let uid = |t: &Tensor| {
            t.uid()
                .ok_or_else(|| Error::Internal("uid unassigned after validate".into()))
        };
        Ok(match node {
            NodeSpec::Pointwise {
                a,
                b,
                c,
                out,
                mode,
                params,
            } => Op::Pointwise(PointwiseOp {
                mode: *mode,
                a: uid(a)?,
                b: b.as_ref().map(uid).transpose()?,
                c: c.as_ref().map(uid).transpose()?,
                out: uid(out)?,
                params: *params,
            }),
            NodeSpec::Conv {
                direction,
                x,
                w,
                y,
                attrs,
            } => Op::Conv(ConvOp {
                direction: *direction,
                x: uid(x)?,
                w: uid(w)?,
                y: uid(y)?,
                params: conv_params(attrs, x.dims().len().saturating_sub(2)),
            }),
            NodeSpec::Matmul { a, b, c } => Op::Matmul(MatmulOp {
                a: uid(a)?,
                b: uid(b)?,
                c: uid(c)?,
            }),
            NodeSpec::Reduction { x, y, mode } => Op::Reduction(ReductionOp {
                mode: *mode,
                x: uid(x)?,
                y: uid(y)?,
            }),
            NodeSpec::Generic {
                op,
                inputs,
                outputs,
                attributes,
            } => {
                let mut g = GenericOp::new(*op);
                for (port, t) in inputs {
                    g.inputs.insert((*port).into(), uid(t)?);
                }
                for (port, t) in outputs {
                    g.outputs.insert((*port).into(), uid(t)?);
                }
                g.attributes = attributes.clone();
                Op::Generic(g)
            }
        })
    }

    /// The validated IR, once [`Graph::validate`] succeeded.
    pub fn op_graph(&self) -> Option<&OpGraph> {
        self.op_graph.as_ref()
    }

    /// Validates (if needed) and lowers the graph for `handle`'s plugins.
    pub fn build_operation_graph(&mut self, handle: &Handle) -> Result<()> {
        if self.op_graph.is_none() {
            self.validate()?;
        }
        let g = self
            .op_graph
            .as_ref()
            .ok_or_else(|| Error::Internal("no graph after validate".into()))?;
        self.blob = Some(kiln_format::encode_graph(g));
        self.handle = Some(handle.clone());
        self.configs.clear();
        self.plans.clear();
        Ok(())
    }

    /// The handle of `build_operation_graph`, if called.
    pub(crate) fn handle_ref(&self) -> Option<&Handle> {
        self.handle.as_ref()
    }

    /// The validated graph and its lowered blob.
    pub(crate) fn lowered(&self) -> Result<(&OpGraph, &[u8])> {
        match (&self.op_graph, &self.blob) {
            (Some(g), Some(b)) => Ok((g, b)),
            _ => Err(Error::NotInitialized(
                "call build_operation_graph first".into(),
            )),
        }
    }

    fn require_handle(&self) -> Result<&Handle> {
        self.handle.as_ref().ok_or_else(|| {
            Error::NotInitialized("call build_operation_graph(&handle) first".into())
        })
    }

    /// Asks the heuristics for engine configurations, in order, for each of `modes`.
    pub fn create_execution_plans(&mut self, modes: &[HeurMode]) -> Result<()> {
        let handle = self.require_handle()?.clone();
        let blob = self
            .blob
            .as_ref()
            .ok_or_else(|| Error::NotInitialized("call build_operation_graph first".into()))?;
        self.configs = heuristics::engine_configs(&handle, blob, modes)?;
        self.plans.clear();
        Ok(())
    }

    /// Keeps only engines that declare every note in `notes` (e.g. plans that can be saved).
    pub fn select_behavior_notes(&mut self, notes: &[BehaviorNote]) -> &mut Self {
        self.notes = notes.to_vec();
        self
    }

    /// Leaves out the engines named in `names`.
    pub fn deselect_engines(&mut self, names: &[&str]) -> &mut Self {
        self.deselected = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Sets knob `knob_id` to `value` in every engine configuration of engine `engine` that the
    /// heuristics returned (call after `create_execution_plans`); the engine checks the value
    /// when the plan is built. Returns how many configurations changed.
    pub fn set_knob(&mut self, engine: &str, knob_id: i64, value: i64) -> usize {
        let mut n = 0;
        for c in self.configs.iter_mut().filter(|c| c.engine_name == engine) {
            match c.knobs.iter_mut().find(|(id, _)| *id == knob_id) {
                Some(k) => k.1 = value,
                None => c.knobs.push((knob_id, value)),
            }
            n += 1;
        }
        n
    }

    /// The engine configurations that pass the filters, in heuristic order.
    pub fn candidate_configs(&self) -> Vec<&EngineConfig> {
        self.configs
            .iter()
            .filter(|c| self.notes.iter().all(|n| c.has_note(*n)))
            .filter(|c| !self.deselected.iter().any(|d| d == &c.engine_name))
            .collect()
    }

    /// Refuses (`NotSupported`) when no engine configuration is left for the graph.
    pub fn check_support(&self) -> Result<()> {
        self.require_handle()?;
        if self.candidate_configs().is_empty() {
            let device = self
                .handle
                .as_ref()
                .map(|h| h.device().to_string())
                .unwrap_or_default();
            // Each engine that declined the graph, in its plugin's words.
            let (declined, engines): (Vec<String>, usize) = match (&self.handle, &self.blob) {
                (Some(h), Some(b)) => (
                    heuristics::declined_engines(h, b)
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    h.plugins().map(|p| p.engines().len()).sum(),
                ),
                _ => (Vec::new(), 0),
            };
            return Err(Error::NotSupported(
                // Some engine applies: the heuristics were not asked.
                if self.configs.is_empty() && declined.len() < engines.max(1) {
                    format!("no engine on {device} supports this graph (did you call create_execution_plans?)")
                } else if self.configs.is_empty() {
                    format!(
                        "no engine on {device} supports this graph: {}",
                        declined.join("; ")
                    )
                } else {
                    format!(
                    "no engine passes the filters (behaviour notes {:?}, deselected {:?}); the candidates were: {}{}",
                    self.notes,
                    self.deselected,
                    self.configs.iter().map(|c| c.engine_name.as_str()).collect::<Vec<_>>().join(", "),
                    if declined.is_empty() {
                        String::new()
                    } else {
                        format!("; the other engines declined the graph: {}", declined.join("; "))
                    }
                )
                },
            ));
        }
        Ok(())
    }

    /// Builds plans per `policy`. The first plan built is the one `execute` runs.
    pub fn build_plans(&mut self, policy: BuildPlanPolicy) -> Result<()> {
        self.check_support()?;
        let handle = self.require_handle()?.clone();
        let (g, blob) = match (&self.op_graph, &self.blob) {
            (Some(g), Some(b)) => (g, b),
            _ => {
                return Err(Error::NotInitialized(
                    "call build_operation_graph first".into(),
                ))
            }
        };
        let mut plans = Vec::new();
        let mut failures = Vec::new();
        for cfg in self.candidate_configs() {
            match ExecutionPlan::build(&handle, cfg, g, blob) {
                Ok(p) => {
                    plans.push(p);
                    if policy == BuildPlanPolicy::HeuristicsChoice {
                        break;
                    }
                }
                Err(e) => {
                    tracing::debug!("engine {} did not build: {e}", cfg.engine_name);
                    failures.push(format!("{}: {e}", cfg.engine_name));
                }
            }
        }
        if plans.is_empty() {
            return Err(Error::NotSupported(format!(
                "no plan could be built: {}",
                failures.join("; ")
            )));
        }
        self.plans = plans;
        Ok(())
    }

    /// Validates, lowers, asks the heuristics and builds the first plan that builds.
    pub fn build(&mut self, handle: &Handle, modes: &[HeurMode]) -> Result<()> {
        self.validate()?;
        self.build_operation_graph(handle)?;
        self.create_execution_plans(modes)?;
        self.check_support()?;
        self.build_plans(BuildPlanPolicy::HeuristicsChoice)
    }

    /// The selected plan, once built or loaded.
    pub fn plan(&self) -> Option<&ExecutionPlan> {
        self.plans.first()
    }

    /// Every plan built, selected first.
    pub fn plans(&self) -> &[ExecutionPlan] {
        &self.plans
    }

    /// Makes the plan of engine `name` the selected one.
    pub fn select_plan_by_engine(&mut self, name: &str) -> Result<()> {
        let i = self
            .plans
            .iter()
            .position(|p| p.engine_name() == name)
            .ok_or_else(|| Error::BadParam(format!("no built plan uses engine '{name}'")))?;
        self.plans.swap(0, i);
        Ok(())
    }

    fn selected(&self) -> Result<&ExecutionPlan> {
        self.plans.first().ok_or_else(|| {
            Error::NotInitialized("no plan: call build_plans (or build) first".into())
        })
    }

    /// Workspace bytes the selected plan needs.
    pub fn get_workspace_size(&self) -> Result<usize> {
        Ok(self.selected()?.workspace_size())
    }

    /// Runs the selected plan on the tensors of `pack`.
    ///
    /// Each bound tensor is checked against the graph: present, right data type and large
    /// enough for the tensor's layout; the plan then checks binding set, alignment and workspace.
    /// On a CUDA handle a plan's workspace must be device memory, which [`Workspace`] is not:
    /// there a plan that needs one runs with device memory of its workspace size allocated for
    /// this call (zeroed, freed after the device has finished), and `workspace` is not used. To
    /// keep one device workspace across executes, run the plan with [`ExecutionPlan::execute`].
    pub fn execute(
        &self,
        handle: &Handle,
        pack: &mut VariantPack<'_>,
        workspace: &mut Workspace,
    ) -> Result<()> {
        let plan = self.selected()?;
        let g = self
            .op_graph
            .as_ref()
            .ok_or_else(|| Error::NotInitialized("the graph is not validated".into()))?;
        pack.check_device(handle.device())?;
        if plan.tensor_layouts().is_none() {
            return Err(Error::NotSupported(format!(
                "the plan of engine {} was loaded from a file that does not record its tensor \
                 layouts (a version-1 plan), so Graph::execute cannot check that it fits this \
                 graph; run it with ExecutionPlan::execute (unsafe) or build the plan again from \
                 the graph",
                plan.engine_name()
            )));
        }
        crate::serialize::check_plan_fits(g, plan)?;
        let bindings = pack.bindings(|uid| g.tensor(uid).cloned())?;
        #[cfg(feature = "cuda")]
        if let kiln_backend::Device::Cuda(ordinal) = handle.device() {
            if plan.workspace_size() > 0 {
                return execute_with_device_workspace(plan, handle, &bindings, ordinal);
            }
        }
        // SAFETY: VariantPack::bindings checked each host buffer against its tensor's data type
        // and layout size; the pack holds the buffers mutably borrowed for this call.
        unsafe { plan.execute(handle, &bindings, workspace.as_mut_ptr(), workspace.len()) }
    }

    /// A graph holding the IR `g` (read from JSON, say), with tensors and nodes as handles, as if
    /// built through the API; no handle or plan is attached. `g` is validated first (its nodes are
    /// put in topological order); a graph that does not validate is refused with the error of
    /// [`OpGraph::validate`], naming the tensor or node at fault.
    pub fn from_op_graph(mut g: OpGraph) -> Result<Graph> {
        g.validate()?;
        Graph::from_loaded(g, None, None)
    }

    /// A graph holding `g` (validated), with tensors and nodes as handles, as if built through
    /// the API; `handle` and `plan` are attached when given.
    pub(crate) fn from_loaded(
        g: OpGraph,
        handle: Option<&Handle>,
        plan: Option<ExecutionPlan>,
    ) -> Result<Graph> {
        let mut graph = Graph::new();
        graph.name = g.name.clone();
        for d in &g.tensors {
            graph.tensors.push(Tensor::new(TensorAttributes {
                uid: Some(d.uid),
                name: d.name.clone(),
                dims: d.dims.clone(),
                strides: d.strides.clone(),
                data_type: Some(d.data_type),
                is_virtual: d.is_virtual,
                alignment: d.alignment,
                scalar: d.scalar,
            }));
        }
        let find = |uid: i64| -> Result<Tensor> {
            graph
                .tensors
                .iter()
                .find(|t| t.uid() == Some(uid))
                .cloned()
                .ok_or_else(|| {
                    Error::BadParam(format!(
                        "the saved graph refers to missing tensor uid {uid}"
                    ))
                })
        };
        let mut nodes = Vec::with_capacity(g.nodes.len());
        for n in &g.nodes {
            let spec = match &n.op {
                Op::Pointwise(p) => NodeSpec::Pointwise {
                    a: find(p.a)?,
                    b: p.b.map(&find).transpose()?,
                    c: p.c.map(&find).transpose()?,
                    out: find(p.out)?,
                    mode: p.mode,
                    params: p.params,
                },
                Op::Conv(c) => NodeSpec::Conv {
                    direction: c.direction,
                    x: find(c.x)?,
                    w: find(c.w)?,
                    y: find(c.y)?,
                    attrs: ConvAttributes {
                        name: n.name.clone(),
                        pre_padding: c.params.pre_padding.clone(),
                        post_padding: c.params.post_padding.clone(),
                        stride: c.params.stride.clone(),
                        dilation: c.params.dilation.clone(),
                    },
                },
                Op::Matmul(m) => NodeSpec::Matmul {
                    a: find(m.a)?,
                    b: find(m.b)?,
                    c: find(m.c)?,
                },
                Op::Reduction(r) => NodeSpec::Reduction {
                    x: find(r.x)?,
                    y: find(r.y)?,
                    mode: r.mode,
                },
                Op::Generic(g) => {
                    let spec = ops::check_generic(g, &format!("node '{}' ({})", n.name, g.op))?;
                    let bind = |ports: &'static [ops::Port], given: &BTreeMap<String, i64>| {
                        ports
                            .iter()
                            .filter_map(|p| given.get(p.name).map(|&u| (p.name, u)))
                            .map(|(p, u)| Ok((p, find(u)?)))
                            .collect::<Result<Vec<_>>>()
                    };
                    NodeSpec::Generic {
                        op: spec.name(),
                        inputs: bind(spec.inputs(), &g.inputs)?,
                        outputs: bind(spec.outputs(), &g.outputs)?,
                        attributes: g.attributes.clone(),
                    }
                }
            };
            nodes.push((n.name.clone(), spec));
        }
        graph.nodes = nodes;
        graph.blob = Some(kiln_format::encode_graph(&g));
        graph.op_graph = Some(g);
        graph.handle = handle.cloned();
        graph.plans = plan.into_iter().collect();
        Ok(graph)
    }

    /// The tensor named `name`, if any.
    pub fn tensor_by_name(&self, name: &str) -> Option<Tensor> {
        self.tensors.iter().find(|t| t.name() == name).cloned()
    }

    /// The tensor with `uid`, if any.
    pub fn tensor_by_uid(&self, uid: i64) -> Option<Tensor> {
        self.tensors.iter().find(|t| t.uid() == Some(uid)).cloned()
    }

    pub(crate) fn graph_blob(&self) -> Option<&[u8]> {
        self.blob.as_deref()
    }

    pub(crate) fn attach_plan(&mut self, handle: &Handle, plan: ExecutionPlan) {
        self.handle = Some(handle.clone());
        self.plans = vec![plan];
    }
}

fn conv_params(attrs: &ConvAttributes, spatial: usize) -> ConvParams {
    let or = |v: &Vec<i64>, d: i64| {
        if v.is_empty() {
            vec![d; spatial]
        } else {
            v.clone()
        }
    };
    ConvParams {
        pre_padding: or(&attrs.pre_padding, 0),
        post_padding: or(&attrs.post_padding, 0),
        stride: or(&attrs.stride, 1),
        dilation: or(&attrs.dilation, 1),
    }
}

/// Runs `plan` on `bindings` with a device workspace of the plan's size on `cuda:ordinal`,
/// allocated for this call, and waits for the device before freeing it.
#[cfg(feature = "cuda")]
fn execute_with_device_workspace(
    plan: &ExecutionPlan,
    handle: &Handle,
    bindings: &[(i64, *mut std::ffi::c_void)],
    ordinal: u32,
) -> Result<()> {
    let size = plan.workspace_size();
    let ordinal = i32::try_from(ordinal)
        .map_err(|_| Error::BadParam(format!("cuda:{ordinal} is not a device")))?;
    let memory =
        kiln_cuda_driver::DeviceMemory::zeroed(ordinal, size).map_err(Error::AllocFailed)?;
    // SAFETY: the caller checked each binding against its tensor; `memory` holds `size` bytes
    // of device memory on the handle's device for the whole call.
    let run = unsafe {
        plan.execute(
            handle,
            bindings,
            memory.as_ptr() as *mut std::ffi::c_void,
            size,
        )
    };
    // The kernels may still be running on the handle's stream: the memory outlives them.
    let synced = kiln_cuda_driver::DeviceContext::new(ordinal)
        .and_then(|d| d.synchronize())
        .map_err(Error::ExecutionFailed);
    run?;
    synced
}
