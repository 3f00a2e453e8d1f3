//! `KILN_CUDA_RESAMPLE_V1`: a graph of one `resample` node (pooling forward) in one kernel
//! (`kernels/resample.cu`), specialised to its shapes, strides, window and types.

use super::{c_type, fill, symbol, Kernel, Params};
use kiln_core::ops::resample::{ResampleMode, ResampleOp};
use kiln_core::tensor::stride_order;
use kiln_core::{DataType, GenericOp, Op, OpGraph};
use std::fmt::Write;

const TEMPLATE: &str = include_str!("../kernels/resample.cu");
const BLOCK: u32 = 256;

/// The resample node of `graph`, or why the engine cannot run the graph.
fn node(graph: &OpGraph) -> Result<(&GenericOp, &str), String> {
    let [n] = &graph.nodes[..] else {
        return Err(format!(
            "the graph has {} nodes; this engine runs one resample node",
            graph.nodes.len()
        ));
    };
    match &n.op {
        Op::Generic(g) if g.op == "resample" => Ok((g, &n.name)),
        other => Err(format!(
            "node '{}' is {}; this engine runs resample (pooling) only",
            n.name,
            other.describe()
        )),
    }
}

/// `Ok` when the engine can run `graph`: one resample node, x and y of f32/f16/bf16 (or fp8),
/// an i8, i32 or f32 index, fewer than 2^62 output elements.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    let (op, name) = node(graph)?;
    for (port, uid) in op.inputs.iter().chain(&op.outputs) {
        let t = graph
            .tensor(*uid)
            .ok_or_else(|| format!("no tensor uid {uid}"))?;
        let ok = match port.as_str() {
            "index" => matches!(t.data_type, DataType::I8 | DataType::I32 | DataType::F32),
            _ => !t.data_type.is_integral() && t.data_type != DataType::F64,
        };
        if !ok {
            return Err(format!(
                "{} ({port}) is {}; this engine takes f32, f16, bf16 or fp8 x and y and an i8, \
                 i32 or f32 index",
                t.label(),
                t.data_type
            ));
        }
    }
    let x = graph
        .tensor(op.inputs.get("x").copied().unwrap_or_default())
        .ok_or("no x")?;
    ResampleOp::from_generic(
        op,
        x.dims.len().saturating_sub(2),
        &format!("node '{name}'"),
    )
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// Generates the pooling kernel for `graph` (which [`supports`] accepted).
pub fn generate(graph: &OpGraph) -> Result<Kernel, String> {
    supports(graph)?;
    let (op, name) = node(graph)?;
    let what = format!("node '{name}' (resample)");
    let x = graph
        .tensor(op.inputs.get("x").copied().unwrap_or_default())
        .ok_or("no x")?;
    let rank = x.dims.len();
    let spatial = rank - 2;
    let r = ResampleOp::from_generic(op, spatial, &what).map_err(|e| e.to_string())?;
    let y = graph.tensor(r.y).ok_or("no y")?;
    let index = match r.index {
        Some(i) => Some(graph.tensor(i).ok_or("no index")?),
        None => None,
    };
    let g = &r.geometry;
    let count: i64 = y.dims.iter().product();
    if count <= 0 || count >= (1i64 << 62) {
        return Err(format!("{count} output elements is outside 1..2^62"));
    }
    let mut list = vec![(x.uid, false), (y.uid, true)];
    if let Some(t) = index {
        list.push((t.uid, true));
    }
    let params = Params { list };

    // Output coordinates d<k> (logical dims), innermost memory dim of y first.
    let mut coords = String::from("        kiln_i64 r = i;\n");
    let order = stride_order(&y.strides);
    for (j, &d) in order.iter().rev().enumerate() {
        if j + 1 == order.len() {
            let _ = writeln!(coords, "        const kiln_i64 d{d} = r;");
        } else {
            let _ = writeln!(
                coords,
                "        const kiln_i64 d{d} = r % {}LL; r /= {}LL;",
                y.dims[d], y.dims[d]
            );
        }
    }
    let offset = |strides: &[i64], spatial_name: &dyn Fn(usize) -> String| {
        let mut terms = vec![
            format!("d0 * {}LL", strides[0]),
            format!("d1 * {}LL", strides[1]),
        ];
        for k in 0..spatial {
            terms.push(format!("{} * {}LL", spatial_name(k), strides[k + 2]));
        }
        terms.join(" + ")
    };
    let y_off = offset(&y.strides, &|k| format!("d{}", k + 2));
    let _ = write!(coords, "        const kiln_i64 y_off = {y_off};");

    // The window tap w: its coordinates, the input position, skipped when outside x.
    let mut tap = String::new();
    let mut inner = 1i64;
    let mut tap_lines = Vec::new();
    for k in (0..spatial).rev() {
        tap_lines.push(format!(
            "            const kiln_i64 q{k} = d{} * {}LL - {}LL + (kiln_i64)((w / {inner}) % {});",
            k + 2,
            g.stride[k],
            g.pre_padding[k],
            g.window[k]
        ));
        inner *= g.window[k];
    }
    tap_lines.reverse();
    for l in tap_lines {
        let _ = writeln!(tap, "{l}");
    }
    let outside: Vec<String> = (0..spatial)
        .map(|k| format!("(unsigned long long)q{k} >= {}ULL", x.dims[k + 2]))
        .collect();
    let _ = writeln!(
        tap,
        "            if ({}) {{ continue; }}",
        outside.join(" || ")
    );
    let _ = write!(
        tap,
        "            const kiln_i64 x_off = {};",
        offset(&x.strides, &|k| format!("q{k}"))
    );

    let y_ty = c_type(y.data_type).ok_or("bad y type")?;
    let (init, combine, finish_value) = match r.mode {
        ResampleMode::MaxPool => (
            super::float_lit(f64::NEG_INFINITY),
            "            if (arg < 0 || (isnan(v) && !isnan(acc)) || v > acc) { acc = v; arg = w; }"
                .to_string(),
            "acc".to_string(),
        ),
        ResampleMode::AvgPoolIncludePadding => (
            "0.0f".into(),
            "            acc += v;".into(),
            format!("acc / {}", super::float_lit(g.window_elements() as f64)),
        ),
        ResampleMode::AvgPoolExcludePadding => (
            "0.0f".into(),
            "            acc += v;".into(),
            "acc / (float)(inside > 0 ? inside : 1)".into(),
        ),
    };
    let mut finish = format!("        p1[y_off] = kiln_st<{y_ty}>({finish_value});");
    if let Some(t) = index {
        let ty = c_type(t.data_type).ok_or("bad index type")?;
        let i_off = offset(&t.strides, &|k| format!("d{}", k + 2));
        let _ = write!(finish, "\n        p2[{i_off}] = kiln_st<{ty}>((float)arg);");
    }
    let kernel = fill(
        TEMPLATE,
        &[
            ("SYMBOL", "KILN_SYMBOL".into()),
            ("PARAMS", params.declare(graph)?),
            ("COUNT", count.to_string()),
            ("COORDS", coords),
            ("INIT", init),
            ("WINDOW", g.window_elements().to_string()),
            ("TAP", tap),
            ("COMBINE", combine),
            ("FINISH", finish),
        ],
    )?;
    let sym = symbol("resample", &kernel);
    let source = kernel.replace("KILN_SYMBOL", &sym);
    let blocks = (count as u64)
        .div_ceil(BLOCK as u64)
        .clamp(1, i32::MAX as u64) as u32;
    Ok(Kernel {
        symbol: sym,
        source,
        args: params.list.iter().map(|&(u, _)| u).collect(),
        grid: [blocks, 1, 1],
        block: [BLOCK, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        arch_specific: false,
    })
}
