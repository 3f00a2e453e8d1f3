//! `KILN_CUDA_POINTWISE_V1`: every node of the graph is pointwise; the whole chain runs in one
//! kernel over the broadcast shape of the node outputs. When every bound tensor is dense with
//! that shape, a wide path reads and writes 16 bytes (or 32 for f32 among 2-byte types) per
//! access, taken at run time when all pointers are aligned for it.

use super::{check_pointwise_types, emit_pointwise_body, fill, symbol, Kernel, Params};
use kiln_core::tensor::packed_strides;
use kiln_core::{Op, OpGraph, PointwiseMode, PointwiseOp};
use std::collections::HashMap;
use std::fmt::Write;

const TEMPLATE: &str = include_str!("../kernels/pointwise.cu");
const VECTOR_TEMPLATE: &str = include_str!("../kernels/pointwise_vector.cu");
const BLOCK: u32 = 256;

/// The pointwise nodes of `graph` in order, or why the engine cannot run it.
fn nodes(graph: &OpGraph) -> Result<Vec<&PointwiseOp>, String> {
    if graph.nodes.is_empty() {
        return Err("the graph has no nodes".into());
    }
    graph
        .nodes
        .iter()
        .map(|n| match &n.op {
            Op::Pointwise(p) => Ok(p),
            other => Err(format!(
                "node '{}' is {}, not pointwise",
                n.name,
                other.describe()
            )),
        })
        .collect()
}

/// The iteration shape: the node outputs' dims broadcast together.
fn iteration_dims(graph: &OpGraph, nodes: &[&PointwiseOp]) -> Result<Vec<i64>, String> {
    let mut dims: Option<Vec<i64>> = None;
    for n in nodes {
        let t = graph
            .tensor(n.out)
            .ok_or_else(|| format!("no tensor uid {}", n.out))?;
        dims = Some(match dims {
            None => t.dims.clone(),
            Some(d) => kiln_core::shape::broadcast(&d, &t.dims, "pointwise chain")
                .map_err(|e| e.to_string())?,
        });
    }
    dims.ok_or_else(|| "the graph has no nodes".into())
}

/// `Ok` when the engine can run `graph`.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    check_pointwise_types(graph)?;
    let nodes = nodes(graph)?;
    let dims = iteration_dims(graph, &nodes)?;
    for t in graph.bound_tensors() {
        if t.dims.len() != dims.len() {
            return Err(format!(
                "{} has rank {}, the chain {}",
                t.label(),
                t.dims.len(),
                dims.len()
            ));
        }
        for (i, (&d, &full)) in t.dims.iter().zip(&dims).enumerate() {
            if d != full && d != 1 {
                return Err(format!(
                    "{}: dim {i} is {d}, neither 1 nor the chain's {full}",
                    t.label()
                ));
            }
        }
        let produced = graph.producer(t.uid).is_some();
        if produced && t.dims != dims {
            return Err(format!(
                "output {} has dims {:?}, smaller than the chain's {dims:?}; write it from its own graph",
                t.label(),
                t.dims
            ));
        }
    }
    let count: i128 = dims.iter().map(|&d| d as i128).product();
    if count <= 0 || count >= (1i128 << 62) {
        return Err(format!("{count} elements is outside 1..2^62"));
    }
    Ok(())
}

/// Generates the kernel for `graph` (which `supports` accepted). `sm_count` sizes the grid.
pub fn generate(graph: &OpGraph) -> Result<Kernel, String> {
    supports(graph)?;
    let nodes = nodes(graph)?;
    let dims = iteration_dims(graph, &nodes)?;
    let count: i64 = dims.iter().product();
    // Parameters: graph inputs (bound, not produced) then outputs, each in UID order.
    let mut inputs: Vec<i64> = graph
        .bound_tensors()
        .filter(|t| graph.producer(t.uid).is_none())
        .map(|t| t.uid)
        .collect();
    let mut outputs: Vec<i64> = graph
        .bound_tensors()
        .filter(|t| graph.producer(t.uid).is_some())
        .map(|t| t.uid)
        .collect();
    inputs.sort_unstable();
    outputs.sort_unstable();
    let params = Params {
        list: inputs
            .iter()
            .map(|&u| (u, false))
            .chain(outputs.iter().map(|&u| (u, true)))
            .collect(),
    };
    let rank = dims.len();
    let coords: Vec<String> = (0..rank).map(|d| format!("c{d}")).collect();
    let mut coord_code = String::from("        kiln_i64 r = i;\n");
    for d in (0..rank).rev() {
        if d == 0 {
            let _ = writeln!(coord_code, "        const kiln_i64 c0 = r;");
        } else {
            let _ = writeln!(
                coord_code,
                "        const kiln_i64 c{d} = r % {}LL; r /= {}LL;",
                dims[d], dims[d]
            );
        }
    }
    let body = emit_pointwise_body(
        graph,
        &nodes,
        &params,
        &coords,
        &mut HashMap::new(),
        "        ",
    )?;

    // The wide path: every bound tensor dense with the iteration shape.
    let dense = packed_strides(&dims);
    let all_dense = graph
        .bound_tensors()
        .all(|t| t.dims == dims && t.strides == dense);
    let vector = if all_dense {
        let min_size = graph
            .bound_tensors()
            .map(|t| t.data_type.size())
            .min()
            .unwrap_or(4);
        let vec = 16 / min_size;
        let mut aligned = Vec::new();
        let mut loads = String::new();
        let mut stores = String::new();
        let mut values = HashMap::new();
        let mut pre = String::new();
        for (i, &(uid, written)) in params.list.iter().enumerate() {
            let t = graph.tensor(uid).ok_or("lost tensor")?;
            let ty = super::c_type(t.data_type).ok_or("bad type")?;
            aligned.push(format!(
                "((unsigned long long)p{i} % {}ULL) == 0",
                t.data_type.size() * vec
            ));
            if written {
                let _ = writeln!(loads, "            kiln_vec<{ty}, {vec}> w{i};");
                let _ = writeln!(stores, "            *reinterpret_cast<kiln_vec<{ty}, {vec}>*>(p{i} + j * {vec}) = w{i};");
            } else {
                let _ = writeln!(
                    loads,
                    "            const kiln_vec<{ty}, {vec}> r{i} = *reinterpret_cast<const kiln_vec<{ty}, {vec}>*>(p{i} + j * {vec});"
                );
                let _ = writeln!(
                    pre,
                    "                const float in_{i} = kiln_ld(r{i}.v[e]);"
                );
                values.insert(uid, format!("in_{i}"));
            }
        }
        // In the wide loop, outputs go to the w<i> registers instead of memory.
        let mut vbody = pre;
        let mut vals = values;
        for (k, op) in nodes.iter().enumerate() {
            let get = |u: i64, vals: &HashMap<i64, String>| -> Result<String, String> {
                if let Some(v) = vals.get(&u) {
                    return Ok(v.clone());
                }
                let t = graph.tensor(u).ok_or("lost tensor")?;
                t.scalar
                    .map(super::float_lit)
                    .ok_or_else(|| format!("{} has no value", t.label()))
            };
            let a = if op.mode == PointwiseMode::GenIndex {
                "0.0f".into()
            } else {
                get(op.a, &vals)?
            };
            let b = match op.b {
                Some(b) => get(b, &vals)?,
                None => "0.0f".into(),
            };
            let c = match op.c {
                Some(c) => get(c, &vals)?,
                None => "0.0f".into(),
            };
            // Dense: the coordinate along the axis follows from the flat index.
            let axis = usize::try_from(op.params.axis()).unwrap_or(0).min(rank - 1);
            let inner: i64 = dims[axis + 1..].iter().product();
            let index = format!("((j * {vec} + e) / {inner}LL) % {}LL", dims[axis]);
            let name = format!("v{k}");
            let _ = writeln!(
                vbody,
                "                const float {name} = {};",
                super::mode_expr(op, &a, &b, &c, &index)
            );
            vals.insert(op.out, name.clone());
            let t = graph.tensor(op.out).ok_or("lost tensor")?;
            if !t.is_virtual {
                let i = params
                    .list
                    .iter()
                    .position(|&(u, _)| u == op.out)
                    .ok_or("lost output")?;
                let ty = super::c_type(t.data_type).ok_or("bad type")?;
                let _ = writeln!(vbody, "                w{i}.v[e] = kiln_st<{ty}>({name});");
            }
        }
        fill(
            VECTOR_TEMPLATE,
            &[
                ("VEC", vec.to_string()),
                ("ALIGNED", aligned.join(" && ")),
                ("VEC_LOADS", loads.trim_end().to_string()),
                ("VEC_BODY", vbody.trim_end().to_string()),
                ("VEC_STORES", stores.trim_end().to_string()),
            ],
        )?
    } else {
        String::new()
    };
    let kernel = fill(
        TEMPLATE,
        &[
            ("SYMBOL", "KILN_SYMBOL".into()),
            ("PARAMS", params.declare(graph)?),
            ("COUNT", count.to_string()),
            ("VECTOR_PATH", vector.trim_end().to_string()),
            ("COORDS", coord_code.trim_end().to_string()),
            ("BODY", body.trim_end().to_string()),
        ],
    )?;
    let sym = symbol("pointwise", &kernel);
    let source = kernel.replace("KILN_SYMBOL", &sym);
    let per_thread = if all_dense {
        16 / graph
            .bound_tensors()
            .map(|t| t.data_type.size())
            .min()
            .unwrap_or(4)
    } else {
        1
    };
    let threads = (count as u64).div_ceil(per_thread as u64);
    let blocks = threads.div_ceil(BLOCK as u64).clamp(1, i32::MAX as u64) as u32;
    Ok(Kernel {
        symbol: sym,
        source,
        args: params.list.iter().map(|&(u, _)| u).collect(),
        grid: [blocks, 1, 1],
        block: [BLOCK, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        cooperative: false,
        arch_specific: false,
    })
}
