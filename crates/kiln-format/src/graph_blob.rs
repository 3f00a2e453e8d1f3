//! Graph blobs (kind 1): the preamble, then a `kiln.fb.graph.Graph` FlatBuffer.

use crate::flatbuffer_errors::invalid_body;
use crate::generated::fb_graph as fb;
use crate::preamble::{check_blob, wrap, BlobKind, CheckedBlob};
use kiln_core::{
    AttrValue, ConvDirection, ConvOp, ConvParams, DataType, Error, GenericOp, MatmulOp, Node, Op,
    OpGraph, PointwiseMode, PointwiseOp, PointwiseParams, ReductionMode, ReductionOp, Result,
    TensorDesc,
};
use std::collections::BTreeMap;

/// The newest graph body minor version this reader reads (`Graph.minor_version`; docs/format.md
/// §2). The writer writes the lowest minor a graph needs: 0 (the field absent) for typed nodes of
/// the first release, byte for byte as before minors existed; 1 when some node is a
/// [`GenericOp`]; 2 when the graph uses a data type, pointwise mode or pointwise field that
/// minor 2 added ([`needs_minor_2`]).
pub const GRAPH_MINOR_VERSION: u32 = 2;

/// The data types, by code, of graph minor 0 and 1: f32, f16, bf16, f64.
const MINOR_0_DATA_TYPES: u8 = 4;
/// The pointwise modes, by code, of graph minor 0 and 1: add to reciprocal.
const MINOR_0_POINTWISE_MODES: u8 = 29;

/// True when `graph` uses something graph minor 2 added: a data type of code 4 or more (bool,
/// i8, i32, fp8), a pointwise mode of code 29 or more, a pointwise third operand `c` or the
/// pointwise `axis` parameter. A reader of minor 1 refuses such a body with NOT_SUPPORTED.
pub fn needs_minor_2(graph: &OpGraph) -> bool {
    graph
        .tensors
        .iter()
        .any(|t| t.data_type.code() >= MINOR_0_DATA_TYPES)
        || graph.nodes.iter().any(|n| {
            n.compute_type.code() >= MINOR_0_DATA_TYPES
                || matches!(&n.op, Op::Pointwise(p) if p.mode.code() >= MINOR_0_POINTWISE_MODES
                    || p.c.is_some()
                    || p.params.axis.is_some())
        })
}
use planus::{Builder, ReadAsRoot};
use std::borrow::Cow;

/// Maps between a kiln-core enum and its schema mirror, whose variants carry the same names.
/// Both matches are exhaustive, so a variant added on one side only fails to compile.
macro_rules! mirror_enum {
    ($to_fb:ident, $from_fb:ident, $core:ident, $fb:path, [$($v:ident),+ $(,)?]) => {
        fn $to_fb(x: $core) -> $fb {
            use $fb as F;
            match x { $($core::$v => F::$v,)+ }
        }
        fn $from_fb(x: $fb) -> $core {
            use $fb as F;
            match x { $(F::$v => $core::$v,)+ }
        }
    };
}

mirror_enum!(
    dtype_to_fb,
    dtype_from_fb,
    DataType,
    fb::DataType,
    [F32, F16, Bf16, F64, Boolean, I8, I32, Fp8E4m3, Fp8E5m2]
);
mirror_enum!(
    direction_to_fb,
    direction_from_fb,
    ConvDirection,
    fb::ConvDirection,
    [Fprop, Dgrad, Wgrad]
);
mirror_enum!(
    reduction_to_fb,
    reduction_from_fb,
    ReductionMode,
    fb::ReductionMode,
    [Sum, Mean, Max, Min, Amax, Norm1, Norm2]
);
mirror_enum!(
    pointwise_to_fb,
    pointwise_from_fb,
    PointwiseMode,
    fb::PointwiseMode,
    [
        Add,
        Sub,
        Mul,
        Div,
        Max,
        Min,
        Pow,
        CmpEq,
        CmpNe,
        CmpLt,
        CmpLe,
        CmpGt,
        CmpGe,
        Identity,
        Relu,
        Sigmoid,
        Tanh,
        Gelu,
        GeluApproxTanh,
        Swish,
        Elu,
        Softplus,
        Exp,
        Log,
        Abs,
        Neg,
        Sqrt,
        Rsqrt,
        Reciprocal,
        AddSquare,
        Mod,
        Atan2,
        Ceil,
        Floor,
        Sin,
        Cos,
        Tan,
        Erf,
        ReluBwd,
        TanhBwd,
        SigmoidBwd,
        EluBwd,
        GeluBwd,
        GeluApproxTanhBwd,
        SoftplusBwd,
        SwishBwd,
        LogicalAnd,
        LogicalOr,
        LogicalNot,
        GenIndex,
        BinarySelect,
    ]
);

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

fn params_to_fb(p: &PointwiseParams) -> Option<Box<fb::PointwiseParams>> {
    if *p == PointwiseParams::default() {
        return None;
    }
    Some(Box::new(fb::PointwiseParams {
        relu_lower_clip: p.relu_lower_clip,
        relu_upper_clip: p.relu_upper_clip,
        relu_lower_clip_slope: p.relu_lower_clip_slope,
        elu_alpha: p.elu_alpha,
        softplus_beta: p.softplus_beta,
        swish_beta: p.swish_beta,
        axis: p.axis,
    }))
}

fn params_from_fb(p: Option<Box<fb::PointwiseParams>>) -> PointwiseParams {
    match p {
        None => PointwiseParams::default(),
        Some(p) => PointwiseParams {
            relu_lower_clip: p.relu_lower_clip,
            relu_upper_clip: p.relu_upper_clip,
            relu_lower_clip_slope: p.relu_lower_clip_slope,
            elu_alpha: p.elu_alpha,
            softplus_beta: p.softplus_beta,
            swish_beta: p.swish_beta,
            axis: p.axis,
        },
    }
}

fn op_to_fb(op: &Op) -> fb::Op {
    match op {
        Op::Pointwise(p) => fb::Op::PointwiseOp(Box::new(fb::PointwiseOp {
            mode: pointwise_to_fb(p.mode),
            a: p.a,
            b: p.b,
            out: p.out,
            params: params_to_fb(&p.params),
            c: p.c,
        })),
        Op::Conv(c) => fb::Op::ConvOp(Box::new(fb::ConvOp {
            direction: direction_to_fb(c.direction),
            x: c.x,
            w: c.w,
            y: c.y,
            pre_padding: Some(c.params.pre_padding.clone()),
            post_padding: Some(c.params.post_padding.clone()),
            stride: Some(c.params.stride.clone()),
            dilation: Some(c.params.dilation.clone()),
        })),
        Op::Matmul(m) => fb::Op::MatmulOp(Box::new(fb::MatmulOp {
            a: m.a,
            b: m.b,
            c: m.c,
        })),
        Op::Reduction(r) => fb::Op::ReductionOp(Box::new(fb::ReductionOp {
            mode: reduction_to_fb(r.mode),
            x: r.x,
            y: r.y,
        })),
        Op::Generic(g) => fb::Op::GenericOp(Box::new(generic_to_fb(g))),
    }
}

fn ports_to_fb(ports: &BTreeMap<String, i64>) -> Option<Vec<fb::Port>> {
    (!ports.is_empty()).then(|| {
        ports
            .iter()
            .map(|(name, &uid)| fb::Port {
                name: name.clone(),
                uid,
            })
            .collect()
    })
}

fn generic_to_fb(g: &GenericOp) -> fb::GenericOp {
    let attributes = g
        .attributes
        .iter()
        .map(|(name, value)| {
            let mut a = fb::Attribute {
                name: name.clone(),
                type_: fb::AttributeType::Bool,
                bool_value: false,
                int_value: 0,
                float_value: 0.0,
                ints_value: None,
                floats_value: None,
                str_value: None,
            };
            match value {
                AttrValue::Bool(v) => a.bool_value = *v,
                AttrValue::Int(v) => (a.type_, a.int_value) = (fb::AttributeType::Int, *v),
                AttrValue::Float(v) => (a.type_, a.float_value) = (fb::AttributeType::Float, *v),
                AttrValue::Ints(v) => {
                    (a.type_, a.ints_value) = (fb::AttributeType::Ints, Some(v.clone()))
                }
                AttrValue::Floats(v) => {
                    (a.type_, a.floats_value) = (fb::AttributeType::Floats, Some(v.clone()))
                }
                AttrValue::Str(v) => {
                    (a.type_, a.str_value) = (fb::AttributeType::Str, Some(v.clone()))
                }
            }
            a
        })
        .collect::<Vec<_>>();
    fb::GenericOp {
        op: g.op.clone(),
        inputs: ports_to_fb(&g.inputs),
        outputs: ports_to_fb(&g.outputs),
        attributes: (!attributes.is_empty()).then_some(attributes),
    }
}

/// A port or attribute name listed twice is refused: a map would silently keep one of them.
fn insert_once<V>(map: &mut BTreeMap<String, V>, name: String, v: V, what: &str) -> Result<()> {
    if map.contains_key(&name) {
        return Err(Error::BadParam(format!("{what} '{name}' is listed twice")));
    }
    map.insert(name, v);
    Ok(())
}

fn generic_from_fb(g: fb::GenericOp, node: &str) -> Result<GenericOp> {
    let mut op = GenericOp::new(g.op);
    for (side, ports, map) in [
        ("input port", g.inputs, &mut op.inputs),
        ("output port", g.outputs, &mut op.outputs),
    ] {
        for p in ports.unwrap_or_default() {
            insert_once(map, p.name, p.uid, &format!("node '{node}': {side}"))?;
        }
    }
    for a in g.attributes.unwrap_or_default() {
        let value = match a.type_ {
            fb::AttributeType::Bool => AttrValue::Bool(a.bool_value),
            fb::AttributeType::Int => AttrValue::Int(a.int_value),
            fb::AttributeType::Float => AttrValue::Float(a.float_value),
            fb::AttributeType::Ints => AttrValue::Ints(a.ints_value.unwrap_or_default()),
            fb::AttributeType::Floats => AttrValue::Floats(a.floats_value.unwrap_or_default()),
            fb::AttributeType::Str => AttrValue::Str(a.str_value.unwrap_or_default()),
        };
        insert_once(
            &mut op.attributes,
            a.name,
            value,
            &format!("node '{node}': attribute"),
        )?;
    }
    Ok(op)
}

fn op_from_fb(op: fb::Op, node: &str) -> Result<Op> {
    Ok(match op {
        fb::Op::PointwiseOp(p) => Op::Pointwise(PointwiseOp {
            mode: pointwise_from_fb(p.mode),
            a: p.a,
            b: p.b,
            c: p.c,
            out: p.out,
            params: params_from_fb(p.params),
        }),
        fb::Op::ConvOp(c) => Op::Conv(ConvOp {
            direction: direction_from_fb(c.direction),
            x: c.x,
            w: c.w,
            y: c.y,
            params: ConvParams {
                pre_padding: c.pre_padding.unwrap_or_default(),
                post_padding: c.post_padding.unwrap_or_default(),
                stride: c.stride.unwrap_or_default(),
                dilation: c.dilation.unwrap_or_default(),
            },
        }),
        fb::Op::MatmulOp(m) => Op::Matmul(MatmulOp {
            a: m.a,
            b: m.b,
            c: m.c,
        }),
        fb::Op::ReductionOp(r) => Op::Reduction(ReductionOp {
            mode: reduction_from_fb(r.mode),
            x: r.x,
            y: r.y,
        }),
        fb::Op::GenericOp(g) => Op::Generic(generic_from_fb(*g, node)?),
    })
}

fn graph_to_fb(g: &OpGraph) -> fb::Graph {
    fb::Graph {
        name: non_empty(&g.name),
        tensors: g
            .tensors
            .iter()
            .map(|t| fb::Tensor {
                uid: t.uid,
                name: non_empty(&t.name),
                dims: Some(t.dims.clone()),
                strides: Some(t.strides.clone()),
                data_type: dtype_to_fb(t.data_type),
                is_virtual: t.is_virtual,
                alignment: t.alignment,
                scalar: t.scalar,
            })
            .collect(),
        nodes: g
            .nodes
            .iter()
            .map(|n| fb::Node {
                name: non_empty(&n.name),
                compute_type: dtype_to_fb(n.compute_type),
                op: op_to_fb(&n.op),
            })
            .collect(),
        minor_version: if needs_minor_2(g) {
            2
        } else if g.nodes.iter().any(|n| matches!(n.op, Op::Generic(_))) {
            1
        } else {
            0
        },
    }
}

fn graph_from_fb(g: fb::Graph, what: &str) -> Result<OpGraph> {
    if g.minor_version > GRAPH_MINOR_VERSION {
        return Err(Error::NotSupported(format!(
            "{what}: graph body minor version {} is newer than this reader's {GRAPH_MINOR_VERSION}; \
             load it with a newer kiln",
            g.minor_version
        )));
    }
    let mut nodes = Vec::with_capacity(g.nodes.len());
    for n in g.nodes {
        let name = n.name.unwrap_or_default();
        nodes.push(Node {
            op: op_from_fb(n.op, &name)?,
            compute_type: dtype_from_fb(n.compute_type),
            name,
        });
    }
    Ok(OpGraph {
        name: g.name.unwrap_or_default(),
        tensors: g
            .tensors
            .into_iter()
            .map(|t| TensorDesc {
                uid: t.uid,
                name: t.name.unwrap_or_default(),
                dims: t.dims.unwrap_or_default(),
                strides: t.strides.unwrap_or_default(),
                data_type: dtype_from_fb(t.data_type),
                is_virtual: t.is_virtual,
                alignment: t.alignment,
                scalar: t.scalar,
            })
            .collect(),
        nodes,
    })
}

/// `graph` with its nodes in topological order: the order [`OpGraph::validate`] gives. A graph
/// that does not validate is returned as it is.
pub(crate) fn topologically_sorted(graph: &OpGraph) -> Cow<'_, OpGraph> {
    let mut sorted = graph.clone();
    match sorted.validate() {
        Ok(()) if sorted.nodes != graph.nodes => Cow::Owned(sorted),
        _ => Cow::Borrowed(graph),
    }
}

/// Encodes `graph` to a graph blob: the 32-byte preamble (kind 1), then a `kiln.fb.graph.Graph`
/// FlatBuffer with every tensor and node attribute.
///
/// Nodes are written in topological order (the order [`OpGraph::validate`] puts them in). The
/// encoding is deterministic: the same graph always gives the same bytes. Refuses nothing: a
/// graph that does not validate is written as it is, and [`decode_graph`] will refuse it.
pub fn encode_graph(graph: &OpGraph) -> Vec<u8> {
    let graph = topologically_sorted(graph);
    let table = graph_to_fb(&graph);
    let mut builder = Builder::new();
    let body = builder.finish(&table, None);
    wrap(BlobKind::Graph, body)
}

/// Reads the raw graph table of a checked graph blob's body (no semantic checks).
pub(crate) fn read_graph_table(body: &[u8], what: &str) -> Result<fb::Graph> {
    let root = fb::GraphRef::read_as_root(body).map_err(|e| invalid_body(what, e))?;
    fb::Graph::try_from(root).map_err(|e| invalid_body(what, e))
}

/// Decodes the body of a checked graph blob and validates the graph.
pub(crate) fn decode_graph_body(body: &[u8], what: &str) -> Result<OpGraph> {
    let mut graph = graph_from_fb(read_graph_table(body, what)?, what)?;
    graph
        .validate()
        .map_err(|e| Error::from_status(e.status(), format!("{what}: {}", e.message())))?;
    Ok(graph)
}

/// Decodes a graph blob, or the graph part of a graph-and-plan container, and returns the
/// validated graph (nodes in topological order).
///
/// Checks, in order: the preamble (magic, format version, kind, header size), the body length,
/// the body's CRC-32, the FlatBuffer (planus verifies every offset it follows), then the graph's
/// semantics with [`OpGraph::validate`].
///
/// Refuses with `BadParam`: damaged, truncated or foreign bytes (the message names the field or
/// offset), a bare plan blob (use the plan loader: `deserialize_compiled_plan` /
/// [`crate::decode_plan`]), and a graph that does not validate. A newer preamble format version
/// is `NotSupported`.
pub fn decode_graph(bytes: &[u8]) -> Result<OpGraph> {
    let blob = check_blob(bytes, "graph loader")?;
    match blob.kind {
        BlobKind::Graph => decode_graph_body(blob.body, "graph blob"),
        BlobKind::Plan => Err(Error::BadParam(
            "graph loader: these bytes are a plan blob (a compiled plan without its graph); \
             load them with the plan loader (deserialize_compiled_plan, kiln_format::decode_plan)"
                .into(),
        )),
        BlobKind::GraphAndPlan => {
            let container = crate::container::decode_checked_container(blob)?;
            decode_graph_body(container.graph.body, "container's graph blob")
        }
    }
}

/// Checks that a nested blob has the kind its container slot requires.
pub(crate) fn expect_kind(blob: &CheckedBlob<'_>, want: BlobKind, what: &str) -> Result<()> {
    if blob.kind != want {
        return Err(Error::BadParam(format!(
            "{what}: is a {} blob, expected a {} blob",
            blob.kind, want
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic_with_every_attribute_type() -> GenericOp {
        GenericOp::new("some_future_op")
            .input("x", 1)
            .input("a_second", 2)
            .output("y", 3)
            .output("stats", 4)
            .attribute("b", AttrValue::Bool(true))
            .attribute("b0", AttrValue::Bool(false))
            .attribute("i", AttrValue::Int(-7))
            .attribute("i0", AttrValue::Int(0))
            .attribute("f", AttrValue::Float(0.125))
            .attribute("nan", AttrValue::Float(f64::NAN))
            .attribute("is", AttrValue::Ints(vec![1, -2, 3]))
            .attribute("fs", AttrValue::Floats(vec![0.5, -1.5]))
            .attribute("empty", AttrValue::Floats(vec![]))
            .attribute("s", AttrValue::Str("causal".into()))
    }

    #[test]
    fn generic_nodes_keep_every_port_and_attribute_type() {
        let op = generic_with_every_attribute_type();
        let back = generic_from_fb(generic_to_fb(&op), "n").unwrap();
        // NaN != NaN: compare its bits, then the rest.
        let bits = |g: &GenericOp| match g.attributes.get("nan") {
            Some(AttrValue::Float(v)) => v.to_bits(),
            other => panic!("nan attribute lost: {other:?}"),
        };
        assert_eq!(bits(&back), bits(&op));
        let strip = |mut g: GenericOp| {
            g.attributes.remove("nan");
            g
        };
        assert_eq!(strip(back), strip(op));
    }

    #[test]
    fn a_port_or_attribute_listed_twice_is_refused_naming_the_node() {
        let mut fb_op = generic_to_fb(&generic_with_every_attribute_type());
        let first = fb_op.inputs.as_ref().unwrap()[0].clone();
        fb_op.inputs.as_mut().unwrap().push(first);
        let e = generic_from_fb(fb_op, "norm").unwrap_err();
        assert_eq!(e.status(), kiln_core::Status::BadParam);
        assert!(
            e.to_string()
                .contains("node 'norm': input port 'a_second' is listed twice"),
            "{e}"
        );
        let mut fb_op = generic_to_fb(&generic_with_every_attribute_type());
        let first = fb_op.attributes.as_ref().unwrap()[0].clone();
        fb_op.attributes.as_mut().unwrap().push(first);
        let e = generic_from_fb(fb_op, "norm").unwrap_err();
        assert!(
            e.to_string().contains("attribute 'b' is listed twice"),
            "{e}"
        );
    }

    #[test]
    fn a_newer_graph_minor_version_is_not_supported() {
        let mut table = graph_to_fb(&OpGraph::default());
        table.minor_version = GRAPH_MINOR_VERSION + 1;
        let mut builder = Builder::new();
        let blob = wrap(BlobKind::Graph, builder.finish(&table, None));
        let e = decode_graph(&blob).unwrap_err();
        assert_eq!(e.status(), kiln_core::Status::NotSupported, "{e}");
        assert!(e.to_string().contains("minor version 3 is newer"), "{e}");
    }

    #[test]
    fn an_unknown_generic_operation_is_refused_naming_the_node() {
        let g = OpGraph {
            name: String::new(),
            tensors: [1, 2, 3, 4]
                .map(|uid| TensorDesc {
                    uid,
                    name: format!("t{uid}"),
                    dims: vec![2],
                    strides: vec![1],
                    data_type: DataType::F32,
                    is_virtual: false,
                    alignment: 0,
                    scalar: None,
                })
                .to_vec(),
            nodes: vec![Node {
                name: "future".into(),
                compute_type: DataType::F32,
                op: Op::Generic(generic_with_every_attribute_type()),
            }],
        };
        let e = decode_graph(&encode_graph(&g)).unwrap_err();
        assert_eq!(e.status(), kiln_core::Status::BadParam);
        assert!(e.to_string().contains("node 'future'"), "{e}");
        assert!(
            e.to_string().contains("unknown operation 'some_future_op'"),
            "{e}"
        );
    }

    #[test]
    fn schema_enum_values_equal_kiln_core_codes_and_names() {
        for m in PointwiseMode::ALL {
            let f = pointwise_to_fb(m);
            assert_eq!(f as u8, m.code(), "{m:?}");
            assert_eq!(format!("{f:?}"), format!("{m:?}"));
            assert_eq!(pointwise_from_fb(f), m);
        }
        for m in ReductionMode::ALL {
            let f = reduction_to_fb(m);
            assert_eq!(f as u8, m.code(), "{m:?}");
            assert_eq!(format!("{f:?}"), format!("{m:?}"));
        }
        for d in DataType::ALL {
            let f = dtype_to_fb(d);
            assert_eq!(f as u8, d.code(), "{d:?}");
            assert_eq!(format!("{f:?}"), format!("{d:?}"));
        }
        for (i, d) in [
            ConvDirection::Fprop,
            ConvDirection::Dgrad,
            ConvDirection::Wgrad,
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(direction_to_fb(d) as usize, i);
            assert_eq!(direction_from_fb(direction_to_fb(d)), d);
        }
    }
}
