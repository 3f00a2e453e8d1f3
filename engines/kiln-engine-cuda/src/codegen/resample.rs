//! `KILN_CUDA_RESAMPLE_V1`: a graph of one `resample` node (pooling forward) in one kernel
//! (`kernels/resample.cu`), specialised to its shapes, strides, window and types.
//! `KILN_CUDA_RESAMPLE_BACKWARD_V1`: a graph of one `resample_backward` node in one kernel
//! (`kernels/resample_backward.cu`) that gathers each dx element from the windows covering it
//! (no atomics; deterministic).

use super::{c_type, fill, symbol, Kernel, Params};
use kiln_core::ops::resample::{ResampleMode, ResampleOp};
use kiln_core::tensor::stride_order;
use kiln_core::{DataType, GenericOp, OpGraph};
use std::fmt::Write;

const TEMPLATE: &str = include_str!("../kernels/resample.cu");
const BACKWARD_TEMPLATE: &str = include_str!("../kernels/resample_backward.cu");
const BLOCK: u32 = 256;

/// The resample node of `graph`, or why the engine cannot run the graph.
fn node(graph: &OpGraph) -> Result<(&GenericOp, &str), String> {
    graph.single_generic("resample", "resample (pooling)")
}

/// `Ok` when every tensor of `op` has a type the kernels take: an i8, i32 or f32 index, f32,
/// f16, bf16 or fp8 elsewhere (`others` names those ports in the refusal).
fn check_types(graph: &OpGraph, op: &GenericOp, others: &str) -> Result<(), String> {
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
                "{} ({port}) is {}; this engine takes f32, f16, bf16 or fp8 {others} and an i8, \
                 i32 or f32 index",
                t.label(),
                t.data_type
            ));
        }
    }
    Ok(())
}

/// `Ok` when the engine can run `graph`: one resample node, x and y of f32/f16/bf16 (or fp8),
/// an i8, i32 or f32 index, fewer than 2^62 output elements.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    let (op, name) = node(graph)?;
    check_types(graph, op, "x and y")?;
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

/// The statements that split the flat index `i` into the logical coordinates `d<k>` of `t`,
/// innermost memory dim first.
fn coordinates(t: &kiln_core::TensorDesc) -> String {
    let mut coords = String::from("        kiln_i64 r = i;\n");
    let order = stride_order(&t.strides);
    for (j, &d) in order.iter().rev().enumerate() {
        if j + 1 == order.len() {
            let _ = writeln!(coords, "        const kiln_i64 d{d} = r;");
        } else {
            let _ = writeln!(
                coords,
                "        const kiln_i64 d{d} = r % {}LL; r /= {}LL;",
                t.dims[d], t.dims[d]
            );
        }
    }
    coords
}

/// The element offset `d0 * s0 + d1 * s1 + <spatial k> * s(k+2)...` for `strides`.
fn offset_terms(strides: &[i64], spatial: usize, spatial_name: &dyn Fn(usize) -> String) -> String {
    let mut terms = vec![
        format!("d0 * {}LL", strides[0]),
        format!("d1 * {}LL", strides[1]),
    ];
    for k in 0..spatial {
        terms.push(format!("{} * {}LL", spatial_name(k), strides[k + 2]));
    }
    terms.join(" + ")
}

/// Windows of at most this many elements are unrolled fully (their taps' coordinates become
/// constants); larger ones by four.
const FULL_UNROLL_WINDOW: i64 = 32;

/// The `#pragma unroll` argument for a loop over a window of `elements`.
fn unroll(elements: i64) -> &'static str {
    if elements <= FULL_UNROLL_WINDOW {
        ""
    } else {
        " 4"
    }
}

/// Whether a pooling kernel can do its index arithmetic in 32 bits: fewer than 2^30 elements
/// (so the grid-stride loop's next index cannot overflow), every offset into `tensors` below
/// 2^31, and every window coordinate (at most a dim's extent times the stride, plus the window
/// and the padding) below 2^30. 64-bit arithmetic costs several instructions per multiply and
/// per compare, and the kernels are bound by it, not by memory.
fn fits_i32(count: i64, tensors: &[&kiln_core::TensorDesc], reach: i64) -> bool {
    let offsets = tensors.iter().all(|t| {
        kiln_core::tensor::storage_elements(&t.dims, &t.strides).is_some_and(|n| n <= 1 << 31)
    });
    count < 1 << 30 && reach < 1 << 30 && offsets
}

/// `source` with its index arithmetic in 32 bits: the generated code names its 64-bit type
/// `kiln_i64` and writes its literals with `LL` / `ULL` suffixes, and nothing else in it has
/// those (the unit test `narrowed_sources_keep_no_64_bit_arithmetic` checks both kernels).
fn narrowed(source: &str) -> String {
    source
        .replace("(unsigned long long)", "(unsigned)")
        .replace("ULL", "u")
        .replace("LL", "")
        .replace("kiln_i64", "int")
}

/// The largest window coordinate of a geometry over spatial extents `extents`: extent x stride
/// plus the window and the padding.
fn reach(g: &kiln_core::ops::resample::ResampleGeometry, extents: &[i64]) -> i64 {
    extents
        .iter()
        .enumerate()
        .map(|(k, &e)| {
            e.saturating_mul(g.stride[k].abs())
                .saturating_add(g.window[k].abs())
                .saturating_add(g.pre_padding[k].abs())
                .saturating_add(g.post_padding[k].abs())
        })
        .max()
        .unwrap_or(0)
}

/// The channels a thread of the forward takes at once: 16 bytes of x's type, when every
/// tensor has contiguous channels (stride 1, the innermost dim), the channel count and every
/// other stride are multiples of it, and it is more than one; else `None`.
fn channel_lanes(x: &kiln_core::TensorDesc, tensors: &[&kiln_core::TensorDesc]) -> Option<usize> {
    let lanes = 16 / x.data_type.size().max(1);
    let c = x.dims.get(1).copied()?;
    let fits = |t: &kiln_core::TensorDesc| {
        t.strides.get(1) == Some(&1)
            && t.strides
                .iter()
                .zip(&t.dims)
                .enumerate()
                .all(|(d, (&st, &n))| d == 1 || n == 1 || st % lanes as i64 == 0)
    };
    (lanes > 1 && c % lanes as i64 == 0 && tensors.iter().all(|t| fits(t))).then_some(lanes)
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
    let mut coords = coordinates(y);
    let offset = |strides: &[i64], spatial_name: &dyn Fn(usize) -> String| {
        offset_terms(strides, spatial, spatial_name)
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
    let mut tensors = vec![x, y];
    tensors.extend(index);
    let lanes = channel_lanes(x, &tensors);
    // 16-bit max pooling takes the packed two-pass path: 0.0379 -> 0.0209 ms on the H200 case
    // (bf16 NHWC x [32, 64, 112, 112], 3x3 s2); two outputs a thread, along W or along H
    // (sharing a column or a row of taps), measured 0.0217 and 0.0212 (docs/benchmarks/
    // pooling-notes.md, session 9).
    let packed_run = lanes
        .map(|lanes| VectorRun::along_w(y, lanes, 1))
        .filter(|&run| r.mode == ResampleMode::MaxPool && packed_max_fits(g, x, y, run));
    // Otherwise one output per thread too: runs of two or four along W measured slower
    // (docs/benchmarks/pooling-notes.md, 2026-12-02).
    let run = packed_run.or_else(|| lanes.map(|lanes| VectorRun::along_w(y, lanes, 1)));
    let vector = match run {
        Some(run) => {
            let v = VectorForward {
                x,
                y,
                index,
                run,
                spatial,
                window: g.window_elements(),
                init: &init,
                combine: &combine,
                finish: &finish_value,
            };
            if packed_run.is_some() {
                packed_max_forward(&v, g)?
            } else {
                vector_forward(&v, &tap)?
            }
        }
        None => String::new(),
    };
    let kernel = fill(
        TEMPLATE,
        &[
            ("SYMBOL", "KILN_SYMBOL".into()),
            ("PARAMS", params.declare(graph)?),
            ("VECTOR", vector),
            ("COUNT", count.to_string()),
            ("COORDS", coords),
            ("INIT", init),
            ("WINDOW", g.window_elements().to_string()),
            ("TAP", tap),
            ("COMBINE", combine),
            ("FINISH", finish),
            ("TAP_FACTOR", unroll(g.window_elements()).into()),
        ],
    )?;
    let extents = padded_extents(x, y, run);
    let narrow = fits_i32(count, &tensors, reach(g, &extents));
    let items = run.map_or(count, |r| r.items(y));
    Ok(pooling_kernel("resample", &kernel, narrow, items, &params))
}

/// The spatial extents of `a` and `b` (the larger of each), each plus the positions past the
/// first that a thread of the channel-vector path `run` takes: its last ones may lie past the
/// end.
fn padded_extents(
    a: &kiln_core::TensorDesc,
    b: &kiln_core::TensorDesc,
    run: Option<VectorRun>,
) -> Vec<i64> {
    let extra = run.map_or(0, |r| r.outputs as i64 - 1);
    (2..a.dims.len())
        .map(|d| a.dims[d].max(b.dims[d]) + extra)
        .collect()
}

/// The launch of a filled pooling template `text` (symbol prefix `name`), its index arithmetic
/// narrowed to 32 bits when `narrow`, over `items` work items (one per thread).
fn pooling_kernel(name: &str, text: &str, narrow: bool, items: i64, params: &Params) -> Kernel {
    let text = if narrow {
        narrowed(text)
    } else {
        text.to_string()
    };
    let sym = symbol(name, &text);
    Kernel {
        source: text.replace("KILN_SYMBOL", &sym),
        symbol: sym,
        args: params.list.iter().map(|&(u, _)| u).collect(),
        grid: [grid_blocks(items), 1, 1],
        block: [BLOCK, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        cooperative: false,
        arch_specific: false,
    }
}

/// Blocks of a pooling launch: one thread per work item of the path the kernel takes where
/// its pointers allow (a run of channel groups, or one element); the grid-stride loops give an
/// unaligned launch of a vector-capable kernel several elements per thread. Sized for
/// elements instead, seven in eight blocks of a bf16 channel-vector launch would start only to
/// find no work.
fn grid_blocks(items: i64) -> u32 {
    (items.max(1) as u64)
        .div_ceil(BLOCK as u64)
        .clamp(1, i32::MAX as u64) as u32
}

/// Adjacent dx positions along W that a thread of the backward's channel-vector path takes:
/// each covering window's dy (and index) is loaded once for all of them, and the coordinate
/// and window arithmetic serves them all. At 3x3 stride 2 a run of four is covered by three
/// windows per row where one position at a time loads 1.5 on average, with the even and odd
/// positions of a warp diverging in trip count. Measured on an H200
/// (docs/benchmarks/pooling-notes.md, 2026-12-02): 2 took the index gather from 0.053 to 0.035
/// ms, 4 to 0.031. At most 32 accumulators a thread (fp8's 16 lanes take two positions).
const DX_ALONG_W: usize = 4;

/// The work item of a channel-vector path: `lanes` channels (16 bytes) at `outputs` adjacent
/// positions of logical dim `dim`, the spatial dim innermost in memory (W of NHWC).
#[derive(Clone, Copy)]
struct VectorRun {
    lanes: usize,
    dim: usize,
    outputs: usize,
}

impl VectorRun {
    /// The run of up to `outputs` positions over `t` (the tensor whose positions the threads
    /// take): W is the spatial dim of the smallest stride (dims of extent 1 last); at most
    /// 32 / `lanes` positions, one where W has one.
    fn along_w(t: &kiln_core::TensorDesc, lanes: usize, outputs: usize) -> VectorRun {
        let dim = (2..t.dims.len())
            .min_by_key(|&d| (t.dims[d] == 1, t.strides[d], std::cmp::Reverse(d)))
            .unwrap_or(2);
        let outputs = if t.dims.get(dim).copied().unwrap_or(1) > 1 {
            outputs.min(32 / lanes).max(1)
        } else {
            1
        };
        VectorRun {
            lanes,
            dim,
            outputs,
        }
    }

    /// `t` with its channel dim counting groups of `lanes` and its W counting runs of
    /// `outputs` (the last run may reach past the end).
    fn grouped(&self, t: &kiln_core::TensorDesc) -> kiln_core::TensorDesc {
        let mut g = t.clone();
        g.dims[1] /= self.lanes as i64;
        let n = self.outputs as i64;
        g.dims[self.dim] = (g.dims[self.dim] + n - 1) / n;
        g
    }

    /// Work items (threads' worth) over `t`.
    fn items(&self, t: &kiln_core::TensorDesc) -> i64 {
        self.grouped(t).dims.iter().product()
    }
}

/// What the forward's channel-vector path needs of [`generate`]'s pieces.
struct VectorForward<'a> {
    x: &'a kiln_core::TensorDesc,
    y: &'a kiln_core::TensorDesc,
    index: Option<&'a kiln_core::TensorDesc>,
    run: VectorRun,
    spatial: usize,
    window: i64,
    init: &'a str,
    combine: &'a str,
    finish: &'a str,
}

/// `code` with the scalar path's accumulators `acc` and `arg` (whole identifiers) made lane
/// `j`'s: `acc[j]`, `arg[j]`.
fn per_lane(code: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match word.as_str() {
            "acc" | "arg" => {
                out.push_str(word);
                out.push_str("[j]");
            }
            _ => out.push_str(word),
        }
        word.clear();
    };
    for ch in code.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The forward's channel-vector path: where x, y (and the index) are aligned for `lanes`
/// elements at once, it walks y's channel groups (d1 is a group of `lanes` channels, `cg` its
/// first channel) and returns; the scalar loop after it runs otherwise. `tap` is the scalar
/// path's window tap (its offsets name channel d1, replaced by cg here).
fn vector_forward(v: &VectorForward<'_>, tap: &str) -> Result<String, String> {
    let lanes = v.run.lanes;
    let with_cg = |s: &str| s.replace("d1 * ", "cg * ");
    let x_ty = c_type(v.x.data_type).ok_or("bad x type")?;
    let y_ty = c_type(v.y.data_type).ok_or("bad y type")?;
    let mut aligned = vec![
        format!(
            "(reinterpret_cast<size_t>(p0) & {})",
            v.x.data_type.size() * lanes - 1
        ),
        format!(
            "(reinterpret_cast<size_t>(p1) & {})",
            v.y.data_type.size() * lanes - 1
        ),
    ];
    let y_off = with_cg(&offset_terms(&v.y.strides, v.spatial, &|k| {
        format!("d{}", k + 2)
    }));
    let mut body = vector_loop_head(&aligned_placeholder(), &v.run.grouped(v.y), v.run);
    let _ = writeln!(body, "            const kiln_i64 y_off = {y_off};");
    let _ = writeln!(body, "            float acc[{lanes}];");
    let _ = writeln!(body, "            int arg[{lanes}];");
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(
        body,
        "            for (int j = 0; j < {lanes}; ++j) {{ acc[j] = {}; arg[j] = -1; }}",
        v.init
    );
    let _ = writeln!(body, "            int inside = 0;");
    let _ = writeln!(body, "#pragma unroll{}", unroll(v.window));
    let _ = writeln!(
        body,
        "            for (int w = 0; w < {}; ++w) {{",
        v.window
    );
    for line in with_cg(tap).lines() {
        let _ = writeln!(body, "    {line}");
    }
    let _ = writeln!(
        body,
        "                const kiln_vec<{x_ty}, {lanes}> xv = *reinterpret_cast<const kiln_vec<{x_ty}, {lanes}>*>(p0 + x_off);"
    );
    let _ = writeln!(body, "                ++inside;");
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(body, "                for (int j = 0; j < {lanes}; ++j) {{");
    let _ = writeln!(
        body,
        "                    const float v = kiln_ld(xv.v[j]);"
    );
    let _ = writeln!(body, "        {}", per_lane(v.combine));
    let _ = writeln!(body, "                }}");
    let _ = writeln!(body, "            }}");
    let _ = writeln!(body, "            kiln_vec<{y_ty}, {lanes}> yv;");
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(
        body,
        "            for (int j = 0; j < {lanes}; ++j) yv.v[j] = kiln_st<{y_ty}>({});",
        per_lane(v.finish)
    );
    let _ = writeln!(
        body,
        "            *reinterpret_cast<kiln_vec<{y_ty}, {lanes}>*>(p1 + y_off) = yv;"
    );
    if let Some(t) = v.index {
        let ty = c_type(t.data_type).ok_or("bad index type")?;
        aligned.push(format!(
            "(reinterpret_cast<size_t>(p2) & {})",
            t.data_type.size() * lanes - 1
        ));
        let i_off = with_cg(&offset_terms(&t.strides, v.spatial, &|k| {
            format!("d{}", k + 2)
        }));
        index_vector_store(
            &mut body,
            "            ",
            ty,
            lanes,
            "(float)arg[j]",
            &format!("p2 + ({i_off})"),
        );
    }
    let _ = writeln!(body, "        }}");
    let _ = writeln!(body, "        return;");
    let _ = write!(body, "    }}");
    Ok(body.replace(&aligned_placeholder(), &aligned.join(" | ")))
}

/// Appends, at indent `ind`, the store of `lanes` indices `value` (an f32 expression of the lane
/// `j`) as one vector of index type `ty` at `at`.
fn index_vector_store(body: &mut String, ind: &str, ty: &str, lanes: usize, value: &str, at: &str) {
    let _ = writeln!(body, "{ind}kiln_vec<{ty}, {lanes}> iv;");
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(
        body,
        "{ind}for (int j = 0; j < {lanes}; ++j) iv.v[j] = kiln_st<{ty}>({value});"
    );
    let _ = writeln!(
        body,
        "{ind}*reinterpret_cast<kiln_vec<{ty}, {lanes}>*>({at}) = iv;"
    );
}

/// Most x positions a thread of the packed max forward ([`packed_max_forward`]) holds in
/// registers (four 32-bit words each): its windows' taps, shared between its outputs.
const PACKED_TAPS: i64 = 16;

/// The pair type of 16-bit x for the packed max forward (`None` for other types).
fn pair_type(dt: DataType) -> Option<&'static str> {
    match dt {
        DataType::Bf16 => Some("__nv_bfloat162"),
        DataType::F16 => Some("__half2"),
        _ => None,
    }
}

/// The x positions of a run's windows along each spatial dim (the window, and along the run's
/// dim the `outputs - 1` strides past it), and how many they are in all.
fn run_taps(g: &kiln_core::ops::resample::ResampleGeometry, run: VectorRun) -> (Vec<i64>, i64) {
    let extents: Vec<i64> = (0..g.window.len())
        .map(|k| {
            let more = if k + 2 == run.dim {
                (run.outputs as i64 - 1) * g.stride[k]
            } else {
                0
            };
            g.window[k] + more
        })
        .collect();
    let n = extents.iter().product();
    (extents, n)
}

/// Whether the packed max forward can take pooling `g` of `x` into `y` with `run`: 16-bit x
/// and y of one type, eight channels a thread, at most [`PACKED_TAPS`] taps a thread.
fn packed_max_fits(
    g: &kiln_core::ops::resample::ResampleGeometry,
    x: &kiln_core::TensorDesc,
    y: &kiln_core::TensorDesc,
    run: VectorRun,
) -> bool {
    pair_type(x.data_type).is_some()
        && y.data_type == x.data_type
        && run.lanes == 8
        && run_taps(g, run).1 <= PACKED_TAPS
}

/// The max forward's channel-vector path for 16-bit x and y of one type ([`packed_max_fits`]),
/// in two passes over registers: every tap of the run's windows is loaded first (an address
/// outside x is replaced by x's first, and the tap is skipped), then per output the maximum of
/// each channel pair (`__hmax2_nan`: NaN propagates), then the taps from last to first keep the
/// position and bits of each channel's tap equal to it (NaN equals only NaN, which a second
/// version of the pass, taken when some channel's maximum is NaN, tests for), so the first
/// maximum wins. The scalar path's per-channel compare and its branches (docs/benchmarks/
/// pooling-notes.md, session 7) are gone from the inner loop.
fn packed_max_forward(
    v: &VectorForward<'_>,
    g: &kiln_core::ops::resample::ResampleGeometry,
) -> Result<String, String> {
    let run = v.run;
    let pair = pair_type(v.x.data_type).ok_or("bad x type")?;
    let spatial = v.spatial;
    let rk = run.dim - 2;
    let mut aligned = vec![
        "(reinterpret_cast<size_t>(p0) & 15)".to_string(),
        "(reinterpret_cast<size_t>(p1) & 15)".to_string(),
    ];
    if let Some(t) = v.index {
        aligned.push(format!(
            "(reinterpret_cast<size_t>(p2) & {})",
            t.data_type.size() * run.lanes - 1
        ));
    }
    // -inf in both halves.
    let neg = match v.x.data_type {
        DataType::Bf16 => "0xff80ff80u",
        _ => "0xfc00fc00u",
    };
    let with_cg = |s: String| s.replace("d1 * ", "cg * ");
    let mut body = vector_loop_head(&aligned.join(" | "), &run.grouped(v.y), run);
    let ind = "            ";
    let y_off = with_cg(offset_terms(&v.y.strides, spatial, &|k| {
        format!("d{}", k + 2)
    }));
    let _ = writeln!(body, "{ind}const kiln_i64 y_off = {y_off};");
    // The windows' first x coordinate per dim, and per coordinate of the run whether it is in x.
    let (extents, _) = run_taps(g, run);
    for (k, &extent) in extents.iter().enumerate() {
        let _ = writeln!(
            body,
            "{ind}const kiln_i64 b{k} = d{} * {}LL - {}LL;",
            k + 2,
            g.stride[k],
            g.pre_padding[k]
        );
        for t in 0..extent {
            let _ = writeln!(
                body,
                "{ind}const bool i{k}_{t} = (unsigned long long)(b{k} + {t}LL) < {}ULL;",
                v.x.dims[k + 2]
            );
        }
    }
    let xb = with_cg(offset_terms(&v.x.strides, spatial, &|k| format!("b{k}")));
    let _ = writeln!(body, "{ind}const kiln_i64 xb = {xb};");
    // Every tap of the run's windows, row-major over `extents`, loaded first.
    let taps: i64 = extents.iter().product();
    let coords = |u: i64| {
        let mut c = vec![0i64; spatial];
        let mut r = u;
        for k in (0..spatial).rev() {
            c[k] = r % extents[k];
            r /= extents[k];
        }
        c
    };
    for u in 0..taps {
        let c = coords(u);
        let inside: Vec<String> = (0..spatial).map(|k| format!("i{k}_{}", c[k])).collect();
        let off: i64 = (0..spatial).map(|k| c[k] * v.x.strides[k + 2]).sum();
        let _ = writeln!(body, "{ind}const bool n{u} = {};", inside.join(" && "));
        let _ = writeln!(
            body,
            "{ind}const kiln_vec<unsigned, 4> x{u} = *reinterpret_cast<const kiln_vec<unsigned, 4>*>(p0 + (n{u} ? xb + {off}LL : 0LL));"
        );
    }
    let y_step = v.y.strides[run.dim];
    for p in 0..run.outputs as i64 {
        // Output p's taps: (window position, union tap), in window order.
        let mut window = Vec::new();
        for w in 0..v.window {
            let mut r = w;
            let mut t = vec![0i64; spatial];
            for k in (0..spatial).rev() {
                t[k] = r % g.window[k];
                r /= g.window[k];
            }
            if rk < spatial {
                t[rk] += p * g.stride[rk];
            }
            let u = t
                .iter()
                .zip(&extents)
                .fold(0i64, |acc, (&tk, &e)| acc * e + tk);
            window.push((w, u));
        }
        let _ = writeln!(body, "{ind}{{");
        let i2 = format!("{ind}    ");
        let _ = writeln!(body, "{i2}unsigned m[4], a[4], yv[4];");
        let _ = writeln!(body, "#pragma unroll");
        let _ = writeln!(
            body,
            "{i2}for (int j = 0; j < 4; ++j) {{ m[j] = {neg}; a[j] = 0xffffffffu; }}"
        );
        for &(_, u) in &window {
            let _ = writeln!(body, "#pragma unroll");
            let _ = writeln!(
                body,
                "{i2}for (int j = 0; j < 4; ++j) {{ if (n{u}) {{ m[j] = kiln_pair_max<{pair}>(m[j], x{u}.v[j]); }} }}"
            );
        }
        let _ = writeln!(body, "{i2}unsigned nan = 0u;");
        let _ = writeln!(body, "#pragma unroll");
        let _ = writeln!(
            body,
            "{i2}for (int j = 0; j < 4; ++j) {{ nan |= kiln_pair_nan<{pair}>(m[j]); yv[j] = m[j]; }}"
        );
        for (branch, eq) in [
            (
                "if (nan == 0u)",
                format!("kiln_pair_eq<{pair}>(x{{u}}.v[j], m[j])"),
            ),
            (
                "else",
                format!(
                    "kiln_pair_eq<{pair}>(x{{u}}.v[j], m[j]) | kiln_pair_nan<{pair}>(x{{u}}.v[j])"
                ),
            ),
        ] {
            let _ = writeln!(body, "{i2}{branch} {{");
            for &(w, u) in window.iter().rev() {
                let e = eq.replace("{u}", &u.to_string());
                let _ = writeln!(body, "#pragma unroll");
                let _ = writeln!(
                    body,
                    "{i2}    for (int j = 0; j < 4; ++j) {{ if (n{u}) {{ const unsigned e = {e}; a[j] = (a[j] & ~e) | ({}u & e); yv[j] = (yv[j] & ~e) | (x{u}.v[j] & e); }} }}",
                    w * 0x10001
                );
            }
            let _ = writeln!(body, "{i2}}}");
        }
        let _ = writeln!(
            body,
            "{i2}if (d{} + {p}LL < {}LL) {{",
            run.dim, v.y.dims[run.dim]
        );
        let _ = writeln!(
            body,
            "{i2}    kiln_vec<unsigned, 4> yo;\n#pragma unroll\n{i2}    for (int j = 0; j < 4; ++j) yo.v[j] = yv[j];\n{i2}    *reinterpret_cast<kiln_vec<unsigned, 4>*>(p1 + y_off + {}LL) = yo;",
            p * y_step
        );
        if let Some(t) = v.index {
            let i_off = with_cg(offset_terms(&t.strides, spatial, &|k| {
                format!("d{}", k + 2)
            }));
            let at = format!("p2 + ({i_off}) + {}LL", p * t.strides[run.dim]);
            if t.data_type == DataType::I8 {
                // The low byte of each half: -1 stays -1, positions are below 128.
                let _ = writeln!(
                    body,
                    "{i2}    kiln_vec<unsigned, 2> io;\n{i2}    io.v[0] = __byte_perm(a[0], a[1], 0x6420);\n{i2}    io.v[1] = __byte_perm(a[2], a[3], 0x6420);\n{i2}    *reinterpret_cast<kiln_vec<unsigned, 2>*>({at}) = io;"
                );
            } else {
                let ty = c_type(t.data_type).ok_or("bad index type")?;
                index_vector_store(
                    &mut body,
                    &format!("{i2}    "),
                    ty,
                    8,
                    "(float)(short)(a[j >> 1] >> (16 * (j & 1)))",
                    &at,
                );
            }
        }
        let _ = writeln!(body, "{i2}}}");
        let _ = writeln!(body, "{ind}}}");
    }
    let _ = writeln!(body, "        }}");
    let _ = writeln!(body, "        return;");
    let _ = write!(body, "    }}");
    Ok(body)
}

/// The opening of a channel-vector path: where `aligned` (an expression of the pointers' low
/// bits) is 0, a grid-stride loop over the work items of `run` over `grouped` (the tensor of
/// [`VectorRun::grouped`]), with their coordinates d<k> (d1 the channel group, d<W> the run's
/// first position) and `cg`, the group's first channel. The caller closes the loop, returns and
/// closes the branch.
fn vector_loop_head(aligned: &str, grouped: &kiln_core::TensorDesc, run: VectorRun) -> String {
    let mut head = String::new();
    let _ = writeln!(head, "    if (({aligned}) == 0) {{");
    let _ = writeln!(
        head,
        "        const kiln_i64 groups = {}LL;",
        grouped.dims.iter().product::<i64>()
    );
    let _ = writeln!(
        head,
        "        const kiln_i64 step = (kiln_i64)gridDim.x * blockDim.x;"
    );
    let _ = writeln!(
        head,
        "        for (kiln_i64 i = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x; i < groups; i += step) {{"
    );
    let run_start = format!("const kiln_i64 d{} = ", run.dim);
    for line in coordinates(grouped).lines() {
        // The coordinate of W counts runs: its positions start `outputs` apart.
        let line = if run.outputs > 1 {
            line.replacen(&run_start, &format!("const kiln_i64 u{} = ", run.dim), 1)
        } else {
            line.to_string()
        };
        let _ = writeln!(head, "    {line}");
    }
    if run.outputs > 1 {
        let _ = writeln!(
            head,
            "            const kiln_i64 d{} = u{} * {}LL;",
            run.dim, run.dim, run.outputs
        );
    }
    let _ = writeln!(
        head,
        "            const kiln_i64 cg = d1 * {}LL;",
        run.lanes
    );
    head
}

/// Stands for the alignment test in [`vector_forward`]'s text until every pointer is known.
fn aligned_placeholder() -> String {
    "KILN_ALIGNED_POINTERS".to_string()
}

/// Most window elements of the backward: every window position is exact in an f32 index.
const MAX_BACKWARD_WINDOW: i64 = 1 << 24;

/// The resample_backward node of `graph`, or why the engine cannot run the graph.
fn backward_node(graph: &OpGraph) -> Result<(&GenericOp, &str), String> {
    graph.single_generic("resample_backward", "resample_backward (pooling backward)")
}

/// `Ok` when the backward engine can run `graph`: one resample_backward node, dy, dx and x of
/// f32/f16/bf16 (or fp8), an i8, i32 or f32 index, windows of at most 2^24 elements, fewer
/// than 2^62 dx elements.
pub fn supports_backward(graph: &OpGraph) -> Result<(), String> {
    let (op, name) = backward_node(graph)?;
    check_types(graph, op, "dy, dx and x")?;
    let dy = graph
        .tensor(op.inputs.get("dy").copied().unwrap_or_default())
        .ok_or("no dy")?;
    let r = ResampleOp::from_generic(
        op,
        dy.dims.len().saturating_sub(2),
        &format!("node '{name}'"),
    )
    .map_err(|e| e.to_string())?;
    if r.geometry.window_elements() > MAX_BACKWARD_WINDOW {
        return Err(format!(
            "the window holds {} elements; this engine takes at most 2^24",
            r.geometry.window_elements()
        ));
    }
    if r.mode == ResampleMode::MaxPool && r.index.is_none() && r.x.is_none() {
        return Err("maxpool backward needs the input 'index' or 'x'".into());
    }
    Ok(())
}

/// The pieces of the resample_backward node of `graph`: its typed view, dy and dx.
fn backward_parts(
    graph: &OpGraph,
) -> Result<(ResampleOp, &kiln_core::TensorDesc, &kiln_core::TensorDesc), String> {
    let (op, name) = backward_node(graph)?;
    let what = format!("node '{name}' (resample_backward)");
    let dy = graph
        .tensor(op.inputs.get("dy").copied().unwrap_or_default())
        .ok_or("no dy")?;
    let rank = dy.dims.len();
    let spatial = rank.checked_sub(2).ok_or("dy has fewer than 3 dims")?;
    let r = ResampleOp::from_generic(op, spatial, &what).map_err(|e| e.to_string())?;
    let dx = graph.tensor(r.dx.ok_or("no dx")?).ok_or("no dx")?;
    if dx.dims.len() != rank {
        return Err(format!("{what}: dx and dy must have the same rank"));
    }
    let want = r
        .geometry
        .output_dims(&dx.dims, &what)
        .map_err(|e| e.to_string())?;
    if dy.dims != want {
        return Err(format!(
            "{what}: dy has dims {:?}, pooling dx {:?} gives {want:?}",
            dy.dims, dx.dims
        ));
    }
    Ok((r, dy, dx))
}

/// The workspace of max pooling's backward through x: each window's first maximum as its
/// window position (`index`, dy's dims in dy's memory order, i8 for windows of up to 127
/// elements, else i32) at offset 0, and the forward's y (`y`, x's type, the same order) at
/// `y_offset`, both under uids no tensor of the graph has.
struct ArgmaxWorkspace {
    index: kiln_core::TensorDesc,
    y: kiln_core::TensorDesc,
    y_offset: u64,
    bytes: u64,
}

/// [`ArgmaxWorkspace`] for `graph`, or `None` unless it is a max backward through x.
fn argmax_workspace(graph: &OpGraph) -> Result<Option<ArgmaxWorkspace>, String> {
    let (r, dy, _) = backward_parts(graph)?;
    let x = match (r.mode, r.index, r.x) {
        (ResampleMode::MaxPool, None, Some(x)) => graph.tensor(x).ok_or("no x")?,
        _ => return Ok(None),
    };
    // Dense strides in dy's memory order (innermost dim first in the product).
    let mut strides = vec![0i64; dy.dims.len()];
    let mut step = 1i64;
    for &d in stride_order(&dy.strides).iter().rev() {
        strides[d] = step;
        step = step
            .checked_mul(dy.dims[d].max(1))
            .ok_or("dy has too many elements")?;
    }
    let top = graph.tensors.iter().map(|t| t.uid).max().unwrap_or(0);
    let fresh = |n: i64| {
        top.checked_add(n)
            .ok_or("no free tensor uid for the workspace")
    };
    let desc = |uid: i64, name: &str, data_type: DataType| kiln_core::TensorDesc {
        uid,
        name: name.into(),
        dims: dy.dims.clone(),
        strides: strides.clone(),
        data_type,
        is_virtual: false,
        alignment: 0,
        scalar: None,
    };
    let index_type = if r.geometry.window_elements() <= 127 {
        DataType::I8
    } else {
        DataType::I32
    };
    let index = desc(fresh(1)?, "workspace argmax", index_type);
    let y = desc(fresh(2)?, "workspace y", x.data_type);
    let elems = step as u64;
    let index_bytes = elems
        .checked_mul(index_type.size() as u64)
        .ok_or("dy has too many elements")?;
    // 256-byte aligned, as the allocation itself, so both take 16-byte accesses.
    let y_offset = index_bytes.div_ceil(256) * 256;
    let bytes = elems
        .checked_mul(x.data_type.size() as u64)
        .and_then(|b| b.checked_add(y_offset))
        .ok_or("dy has too many elements")?;
    Ok(Some(ArgmaxWorkspace {
        index,
        y,
        y_offset,
        bytes,
    }))
}

/// Workspace bytes of the backward engine's plan for `graph`: max pooling through x keeps each
/// window's maximum there ([`generate_backward`]); the other modes need none.
pub fn backward_workspace_bytes(graph: &OpGraph) -> Result<u64, String> {
    supports_backward(graph)?;
    Ok(argmax_workspace(graph)?.map_or(0, |w| w.bytes))
}

/// Replaces tensor uid `uid` in `args` with `with`.
fn remap(args: &mut [i64], uid: i64, with: i64) {
    for a in args.iter_mut().filter(|a| **a == uid) {
        *a = with;
    }
}

/// Generates the pooling backward kernels for `graph` (which [`supports_backward`] accepted):
/// one gather kernel, or for max pooling through x two: the forward's kernel writing each
/// window's first maximum (and y) into the workspace, then the gather through that index. One
/// kernel finding every covering window's maximum again per dx element measured 0.354 ms at
/// bf16 NHWC x [32, 64, 112, 112], 3x3 stride 2 on an H200, where the index gather alone took
/// 0.053 (docs/benchmarks/pooling-notes.md).
///
/// With `phase`, a 2-D channel-vector backward whose tiles fit ([`PhaseTiles`]) takes the
/// phase path: a thread per stride_h x stride_w tile of dx, its windows known when the
/// kernel is compiled.
pub fn generate_backward(graph: &OpGraph, phase: bool) -> Result<Vec<Kernel>, String> {
    supports_backward(graph)?;
    let (r, dy, dx) = backward_parts(graph)?;
    let Some(ws) = argmax_workspace(graph)? else {
        return Ok(vec![backward_kernel(graph, &r, dy, dx, None, phase)?]);
    };
    let (node_name, x) = (
        &graph.nodes[0].name,
        graph.tensor(r.x.ok_or("no x")?).ok_or("no x")?,
    );
    let forward = ResampleOp {
        mode: ResampleMode::MaxPool,
        geometry: r.geometry.clone(),
        x: Some(x.uid),
        y: ws.y.uid,
        index: Some(ws.index.uid),
        dx: None,
    };
    let forward_graph = OpGraph {
        name: graph.name.clone(),
        tensors: vec![x.clone(), ws.y.clone(), ws.index.clone()],
        nodes: vec![kiln_core::Node {
            name: format!("{node_name} (argmax)"),
            compute_type: DataType::F32,
            op: kiln_core::Op::Generic(forward.to_generic()),
        }],
    };
    let mut argmax = generate(&forward_graph)?;
    remap(&mut argmax.args, ws.index.uid, super::workspace_at(0)?);
    remap(
        &mut argmax.args,
        ws.y.uid,
        super::workspace_at(ws.y_offset)?,
    );
    let mut with_index = graph.clone();
    with_index.tensors.push(ws.index.clone());
    let dy = with_index.tensor(dy.uid).ok_or("no dy")?;
    let dx = with_index.tensor(dx.uid).ok_or("no dx")?;
    let index = with_index.tensor(ws.index.uid).ok_or("no index")?;
    let mut gather = backward_kernel(&with_index, &r, dy, dx, Some(index), phase)?;
    remap(&mut gather.args, ws.index.uid, super::workspace_at(0)?);
    Ok(vec![argmax, gather])
}

/// The gather kernel of the backward: max pooling through `index` when given, else through
/// the node's index or x.
fn backward_kernel(
    graph: &OpGraph,
    r: &ResampleOp,
    dy: &kiln_core::TensorDesc,
    dx: &kiln_core::TensorDesc,
    index: Option<&kiln_core::TensorDesc>,
    phase: bool,
) -> Result<Kernel, String> {
    let rank = dy.dims.len();
    let spatial = rank - 2;
    let g = &r.geometry;
    let count: i64 = dx.dims.iter().product();
    if count <= 0 || count >= (1i64 << 62) {
        return Err(format!("{count} dx elements is outside 1..2^62"));
    }
    // Max pooling reads its index as the second parameter: the node's, or the workspace's.
    let source = match (r.mode, index, r.index) {
        (ResampleMode::MaxPool, Some(t), _) => Some(t),
        (ResampleMode::MaxPool, None, Some(i)) => Some(graph.tensor(i).ok_or("no index")?),
        (ResampleMode::MaxPool, None, None) => {
            return Err("max pooling through x gathers through the workspace's index".into())
        }
        _ => None,
    };
    let mut list = vec![(dy.uid, false)];
    if let Some(t) = source {
        list.push((t.uid, false));
    }
    list.push((dx.uid, true));
    let params = Params { list };
    let dx_param = params.name(dx.uid).ok_or("no dx parameter")?;

    // dx coordinates d<k> (logical dims), innermost memory dim of dx first.
    let mut coords = coordinates(dx);
    let offset = |strides: &[i64], spatial_name: &dyn Fn(usize) -> String| {
        offset_terms(strides, spatial, spatial_name)
    };
    let _ = write!(
        coords,
        "        const kiln_i64 dx_off = {};",
        offset(&dx.strides, &|k| format!("d{}", k + 2))
    );

    let spec = Gather {
        g,
        mode: r.mode,
        dy,
        dx,
        source,
        spatial,
    };
    let gather = backward_gather(&spec, None)?;
    let dx_ty = c_type(dx.data_type).ok_or("bad dx type")?;
    let store = format!("        {dx_param}[dx_off] = kiln_st<{dx_ty}>(acc);");
    let mut tensors = vec![dy, dx];
    tensors.extend(source);
    let lanes = channel_lanes(dx, &tensors);
    let tiles = lanes
        .filter(|_| phase)
        .and_then(|l| PhaseTiles::of(&spec, l));
    let run = lanes.map(|lanes| VectorRun::along_w(dx, lanes, DX_ALONG_W));
    let (vector, items) = match (&tiles, run) {
        (Some(t), _) => (phase_backward(&spec, t, &dx_param)?, t.items(dx)),
        (None, Some(run)) => (vector_backward(&spec, run, &dx_param)?, run.items(dx)),
        (None, None) => (String::new(), count),
    };
    let kernel = fill(
        BACKWARD_TEMPLATE,
        &[
            ("SYMBOL", "KILN_SYMBOL".into()),
            ("PARAMS", params.declare(graph)?),
            ("VECTOR", vector),
            ("COUNT", count.to_string()),
            ("COORDS", coords),
            ("GATHER", gather.trim_end().to_string()),
            ("STORE", store),
        ],
    )?;
    let extents = padded_extents(dx, dy, run);
    let narrow = fits_i32(count, &tensors, reach(g, &extents));
    Ok(pooling_kernel(
        "resample_backward",
        &kernel,
        narrow,
        items,
        &params,
    ))
}

/// What the backward's gather needs: the geometry, dy and dx, and for max pooling the index
/// that names each window's maximum.
struct Gather<'a> {
    g: &'a kiln_core::ops::resample::ResampleGeometry,
    mode: ResampleMode,
    dy: &'a kiln_core::TensorDesc,
    dx: &'a kiln_core::TensorDesc,
    source: Option<&'a kiln_core::TensorDesc>,
    spatial: usize,
}

/// The backward's gather over the windows that cover dx element (d0, d1, d2..): per spatial
/// dim k the outputs o<k> whose windows cover d<k+2> and the tap t<k> of d<k+2> in window
/// o<k>; w is the row-major window position. Scalar (`run` None): it adds to `acc`. With a
/// channel-vector `run`, channel `cg` and the `lanes` after it at `outputs` adjacent dx
/// positions along W (the first at d<W>) at once: the windows covering any of them, each with
/// one 16-byte load of dy (and of the index), adding to `acc[p][j]` for position p where its
/// tap t<W> + p lies in the window.
fn backward_gather(s: &Gather<'_>, run: Option<VectorRun>) -> Result<String, String> {
    let (g, dy, dx, spatial) = (s.g, s.dy, s.dx, s.spatial);
    // Offsets name the channel d1; the vector path's is its group's first channel, cg.
    let offset = |strides: &[i64], spatial_name: &dyn Fn(usize) -> String| {
        let o = offset_terms(strides, spatial, spatial_name);
        match run {
            Some(_) => o.replace("d1 * ", "cg * "),
            None => o,
        }
    };
    let dy_ty = c_type(dy.data_type).ok_or("bad dy type")?;
    let mut gather = String::new();
    let mut indent = String::from("        ");
    if run.is_some() {
        indent.push_str("    ");
    }
    // The W dim of the run and the positions past the first that it covers.
    let (wk, more) = run.map_or((usize::MAX, 0), |r| (r.dim - 2, r.outputs as i64 - 1));
    for k in 0..spatial {
        let (st, pre, win, out) = (g.stride[k], g.pre_padding[k], g.window[k], dy.dims[k + 2]);
        let last = if k == wk && more > 0 {
            format!("(top{k} + {more}LL)")
        } else {
            format!("top{k}")
        };
        let _ = writeln!(
            gather,
            "{indent}const kiln_i64 top{k} = d{} + {pre}LL;\n\
             {indent}const kiln_i64 first{k} = top{k} - {}LL;\n\
             {indent}const kiln_i64 lo{k} = first{k} <= 0 ? 0 : (first{k} + {}LL) / {st}LL;\n\
             {indent}const kiln_i64 hi{k} = {last} / {st}LL < {}LL ? {last} / {st}LL : {}LL;\n\
             {indent}for (kiln_i64 o{k} = lo{k}; o{k} <= hi{k}; ++o{k}) {{\n\
             {indent}    const kiln_i64 t{k} = top{k} - o{k} * {st}LL;",
            k + 2,
            win - 1,
            st - 1,
            out - 1,
            out - 1
        );
        indent.push_str("    ");
    }
    let window_position = |tw: &str| {
        let t = |k: usize| {
            if k == wk {
                tw.to_string()
            } else {
                format!("t{k}")
            }
        };
        let mut w = t(0);
        for k in 1..spatial {
            w = format!("({w}) * {}LL + {}", g.window[k], t(k));
        }
        w
    };
    let _ = writeln!(
        gather,
        "{indent}const kiln_i64 dy_off = {};",
        offset(&dy.strides, &|k| format!("o{k}"))
    );
    // The window's elements inside x (average excluding padding): the product of the per-dim
    // counts.
    let mut inside = Vec::new();
    if !matches!(
        s.mode,
        ResampleMode::MaxPool | ResampleMode::AvgPoolIncludePadding
    ) {
        for k in 0..spatial {
            gather.push_str(&inside_count(g, dx, k, &indent));
            inside.push(format!("n{k}"));
        }
    }
    let inside = format!("(float)({})", inside.join(" * "));
    match run {
        None => {
            let _ = writeln!(
                gather,
                "{indent}const int w = (int)({});",
                window_position("")
            );
            scalar_add(&mut gather, s, &indent, &offset, &inside)?;
        }
        Some(run) => vector_add(
            &mut gather,
            s,
            run,
            &indent,
            dy_ty,
            &offset,
            &inside,
            &window_position,
        )?,
    }
    for _ in 0..spatial {
        indent.truncate(indent.len() - 4);
        let _ = writeln!(gather, "{indent}}}");
    }
    Ok(gather.trim_end().to_string())
}

/// The statements defining n<k>, the elements of window o<k> along spatial dim k inside dx
/// (the average excluding padding divides by their product), and its first position s<k>.
fn inside_count(
    g: &kiln_core::ops::resample::ResampleGeometry,
    dx: &kiln_core::TensorDesc,
    k: usize,
    indent: &str,
) -> String {
    let (st, pre, win, input) = (g.stride[k], g.pre_padding[k], g.window[k], dx.dims[k + 2]);
    format!(
        "{indent}const kiln_i64 s{k} = o{k} * {st}LL - {pre}LL;\n\
         {indent}const kiln_i64 n{k} = (s{k} + {win}LL < {input}LL ? s{k} + {win}LL : {input}LL) - (s{k} > 0 ? s{k} : 0);\n"
    )
}

/// The gather's offset of a tensor with the given strides at the spatial coordinates named by
/// the closure (channel d1, or the vector path's cg).
type Offsets<'a> = &'a dyn Fn(&[i64], &dyn Fn(usize) -> String) -> String;

/// The scalar gather's addition of window (o0, o1..)'s dy to `acc` (`inside`: the window's
/// element count inside x, for averages excluding padding).
fn scalar_add(
    gather: &mut String,
    s: &Gather<'_>,
    indent: &str,
    offset: Offsets<'_>,
    inside: &str,
) -> Result<(), String> {
    match (s.mode, s.source) {
        (ResampleMode::MaxPool, Some(t)) => {
            let i_off = offset(&t.strides, &|k| format!("o{k}"));
            let cond = if t.data_type == DataType::F32 {
                format!("p1[{i_off}] == (float)w")
            } else {
                format!("(int)p1[{i_off}] == w")
            };
            let _ = writeln!(
                gather,
                "{indent}if ({cond}) {{ acc += kiln_ld(p0[dy_off]); }}"
            );
        }
        (ResampleMode::MaxPool, None) => {
            return Err("max pooling's gather reads an index".into());
        }
        (ResampleMode::AvgPoolIncludePadding, _) => {
            let size = super::float_lit(s.g.window_elements() as f64);
            let _ = writeln!(gather, "{indent}acc += kiln_ld(p0[dy_off]) / {size};");
        }
        (ResampleMode::AvgPoolExcludePadding, _) => {
            let _ = writeln!(gather, "{indent}acc += kiln_ld(p0[dy_off]) / {inside};");
        }
    }
    Ok(())
}

/// The channel-vector gather's addition of window (o0, o1..): one 16-byte load of dy (and of
/// the index), then for each position p of `run` whose W tap t<W> + p lies in the window, lane
/// j's term added to `acc[p][j]` (`window_position` of the W tap: the position in the window).
#[allow(clippy::too_many_arguments)]
fn vector_add(
    gather: &mut String,
    s: &Gather<'_>,
    run: VectorRun,
    indent: &str,
    dy_ty: &str,
    offset: Offsets<'_>,
    inside: &str,
    window_position: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    let VectorRun {
        lanes: l,
        dim,
        outputs,
    } = run;
    let wk = dim - 2;
    let vec_load = |ty: &str, ptr: &str, off: &str| {
        format!("*reinterpret_cast<const kiln_vec<{ty}, {l}>*>({ptr} + ({off}))")
    };
    let _ = writeln!(
        gather,
        "{indent}const kiln_vec<{dy_ty}, {l}> dyv = {};",
        vec_load(dy_ty, "p0", "dy_off")
    );
    // The per-lane condition (may name lane j and the window position w) and term.
    let (cond, term) = match (s.mode, s.source) {
        (ResampleMode::MaxPool, Some(t)) => {
            let i_ty = c_type(t.data_type).ok_or("bad index type")?;
            let _ = writeln!(
                gather,
                "{indent}const kiln_vec<{i_ty}, {l}> iv = {};",
                vec_load(i_ty, "p1", &offset(&t.strides, &|k| format!("o{k}")))
            );
            let cond = if t.data_type == DataType::F32 {
                "iv.v[j] == (float)w"
            } else {
                "(int)iv.v[j] == w"
            };
            (cond.to_string(), "kiln_ld(dyv.v[j])".to_string())
        }
        (ResampleMode::MaxPool, None) => {
            return Err("max pooling's gather reads an index".into());
        }
        (ResampleMode::AvgPoolIncludePadding, _) => {
            // One reciprocal for the lanes: a product differs from the quotient by at most an
            // ulp of f32.
            let rcp = super::float_lit(1.0 / s.g.window_elements() as f64);
            (String::new(), format!("kiln_ld(dyv.v[j]) * {rcp}"))
        }
        (ResampleMode::AvgPoolExcludePadding, _) => {
            let _ = writeln!(gather, "{indent}const float per = 1.0f / {inside};");
            (String::new(), "kiln_ld(dyv.v[j]) * per".to_string())
        }
    };
    let add = if cond.is_empty() {
        format!("acc[p][j] += {term};")
    } else {
        format!("if ({cond}) {{ acc[p][j] += {term}; }}")
    };
    let _ = writeln!(gather, "#pragma unroll");
    let _ = writeln!(gather, "{indent}for (int p = 0; p < {outputs}; ++p) {{");
    let _ = writeln!(gather, "{indent}    const kiln_i64 tp = t{wk} + p;");
    let _ = writeln!(
        gather,
        "{indent}    if ((unsigned long long)tp >= {}ULL) {{ continue; }}",
        s.g.window[wk]
    );
    if !cond.is_empty() {
        let _ = writeln!(
            gather,
            "{indent}    const int w = (int)({});",
            window_position("tp")
        );
    }
    let _ = writeln!(gather, "#pragma unroll");
    let _ = writeln!(
        gather,
        "{indent}    for (int j = 0; j < {l}; ++j) {{ {add} }}"
    );
    let _ = writeln!(gather, "{indent}}}");
    Ok(())
}

/// The low bits of the backward's pointers that must be 0 for `lanes`-element accesses of dy,
/// dx and the index (`p0`, `dx_param`, `p1`).
fn backward_aligned(s: &Gather<'_>, lanes: usize, dx_param: &str) -> String {
    let mut aligned = vec![
        format!(
            "(reinterpret_cast<size_t>(p0) & {})",
            s.dy.data_type.size() * lanes - 1
        ),
        format!(
            "(reinterpret_cast<size_t>({dx_param}) & {})",
            s.dx.data_type.size() * lanes - 1
        ),
    ];
    if let Some(t) = s.source {
        aligned.push(format!(
            "(reinterpret_cast<size_t>(p1) & {})",
            t.data_type.size() * lanes - 1
        ));
    }
    aligned.join(" | ")
}

/// Most accumulators (dx positions of a tile times lanes) a thread of the phase path holds.
const PHASE_ACCUMULATORS: i64 = 32;

/// Most windows whose dy (and index) a thread of the phase path reads.
const PHASE_WINDOWS: i64 = 9;

/// The phase path of a 2-D pooling backward: dx in tiles of stride_h x stride_w positions,
/// tile (t0, t1) starting at (t0 * stride_h, t1 * stride_w). Position r of a tile along dim k
/// lies in window t_k + a exactly for the offsets a of `cover[k][r]` (the same for every
/// tile), and its tap in that window is r - a * stride + pre_padding: the windows, taps and
/// index values a thread compares are constants of the kernel.
struct PhaseTiles {
    lanes: usize,
    /// Per spatial dim, per phase r: the window offsets (lo, hi) covering it (lo > hi: none).
    cover: [Vec<(i64, i64)>; 2],
}

impl PhaseTiles {
    /// The tiles of `s` with `lanes` channels a thread, where the geometry is 2-D with
    /// positive strides and a thread's accumulators and windows stay within bounds.
    fn of(s: &Gather<'_>, lanes: usize) -> Option<PhaseTiles> {
        if s.spatial != 2 || s.g.stride.iter().any(|&st| st <= 0) {
            return None;
        }
        // The tile's size first: the strides are the graph's, so nothing is sized by them
        // before they are known to be small.
        let outputs = s.g.stride[0].checked_mul(s.g.stride[1])?;
        if outputs.checked_mul(lanes as i64)? > PHASE_ACCUMULATORS {
            return None;
        }
        let cover = |k: usize| -> Option<Vec<(i64, i64)>> {
            let (st, pre, win) = (s.g.stride[k], s.g.pre_padding[k], s.g.window[k]);
            (0..st)
                .map(|r| {
                    let first = r.checked_add(pre)?.checked_sub(win)?.checked_add(1)?;
                    let lo = -(first.checked_neg()?.div_euclid(st));
                    Some((lo, r.checked_add(pre)?.div_euclid(st)))
                })
                .collect()
        };
        let t = PhaseTiles {
            lanes,
            cover: [cover(0)?, cover(1)?],
        };
        let windows: i64 = (0..2)
            .map(|k| t.span(k).map_or(0, |(a, b)| b - a + 1))
            .product();
        (1..=PHASE_WINDOWS).contains(&windows).then_some(t)
    }

    /// The window offsets any phase of dim `k` reads: (first, last), or `None` when no
    /// position of the dim lies in a window.
    fn span(&self, k: usize) -> Option<(i64, i64)> {
        let live = self.cover[k].iter().filter(|(lo, hi)| lo <= hi);
        let first = live.clone().map(|c| c.0).min()?;
        Some((first, live.map(|c| c.1).max()?))
    }

    /// dx with its channels counted in groups of `lanes` and its spatial dims in tiles.
    fn grouped(&self, dx: &kiln_core::TensorDesc) -> kiln_core::TensorDesc {
        let mut g = dx.clone();
        g.dims[1] /= self.lanes as i64;
        for k in 0..2 {
            let st = self.cover[k].len() as i64;
            g.dims[k + 2] = (g.dims[k + 2] + st - 1) / st;
        }
        g
    }

    /// Work items (threads' worth) over dx.
    fn items(&self, dx: &kiln_core::TensorDesc) -> i64 {
        self.grouped(dx).dims.iter().product()
    }
}

/// The backward's phase path (see [`PhaseTiles`]): where dy, dx (and the index) are aligned
/// for `lanes` elements at once, a thread takes a group of channels at every position of one
/// tile of dx. Each window that covers some of them is read once (16 bytes of dy, and of the
/// index), its terms added to those positions' sums in window order (as the gather adds
/// them, so the sums round alike), and the tile's positions inside dx are stored.
fn phase_backward(s: &Gather<'_>, t: &PhaseTiles, dx_param: &str) -> Result<String, String> {
    let l = t.lanes;
    let (dy_ty, dx_ty) = (
        c_type(s.dy.data_type).ok_or("bad dy type")?,
        c_type(s.dx.data_type).ok_or("bad dx type")?,
    );
    let (st, pre, win) = (&s.g.stride, &s.g.pre_padding, &s.g.window);
    let (rows, cols) = (st[0] as usize, st[1] as usize);
    let head_run = VectorRun {
        lanes: l,
        dim: 3,
        outputs: 1,
    };
    let mut body = vector_loop_head(
        &backward_aligned(s, l, dx_param),
        &t.grouped(s.dx),
        head_run,
    );
    let ind = "            ";
    let _ = writeln!(
        body,
        "{ind}// The phase path: a {rows}x{cols} tile of dx a thread."
    );
    let dx_off = offset_terms(&s.dx.strides, 2, &|k| format!("(d{} * {}LL)", k + 2, st[k]))
        .replace("d1 * ", "cg * ");
    let _ = writeln!(body, "{ind}const kiln_i64 dx_off = {dx_off};");
    let _ = writeln!(body, "{ind}float acc[{}][{l}];", rows * cols);
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(
        body,
        "{ind}for (int p = 0; p < {}; ++p) for (int j = 0; j < {l}; ++j) acc[p][j] = 0.0f;",
        rows * cols
    );
    let (Some((a0, a1)), Some((b0, b1))) = (t.span(0), t.span(1)) else {
        return Err("no dx position lies in a window".into());
    };
    let vec_load = |ty: &str, ptr: &str, off: &str| {
        format!("*reinterpret_cast<const kiln_vec<{ty}, {l}>*>({ptr} + ({off}))")
    };
    let at_window =
        |strides: &[i64]| offset_terms(strides, 2, &|k| format!("o{k}")).replace("d1 * ", "cg * ");
    for a in a0..=a1 {
        for b in b0..=b1 {
            // The tile's positions (r, q) that window (t0 + a, t1 + b) covers.
            let covered: Vec<(usize, usize)> = (0..rows)
                .flat_map(|r| (0..cols).map(move |q| (r, q)))
                .filter(|&(r, q)| {
                    let (c0, c1) = (t.cover[0][r], t.cover[1][q]);
                    c0.0 <= a && a <= c0.1 && c1.0 <= b && b <= c1.1
                })
                .collect();
            if covered.is_empty() {
                continue;
            }
            let _ = writeln!(body, "{ind}{{");
            let _ = writeln!(body, "{ind}    const kiln_i64 o0 = d2 + ({a}LL);");
            let _ = writeln!(body, "{ind}    const kiln_i64 o1 = d3 + ({b}LL);");
            let _ = writeln!(
                body,
                "{ind}    if ((unsigned long long)o0 < {}ULL && (unsigned long long)o1 < {}ULL) {{",
                s.dy.dims[2], s.dy.dims[3]
            );
            let inner = format!("{ind}        ");
            let _ = writeln!(
                body,
                "{inner}const kiln_vec<{dy_ty}, {l}> dyv = {};",
                vec_load(dy_ty, "p0", &at_window(&s.dy.strides))
            );
            let mut index_f32 = false;
            match (s.mode, s.source) {
                (ResampleMode::MaxPool, Some(ix)) => {
                    let i_ty = c_type(ix.data_type).ok_or("bad index type")?;
                    index_f32 = ix.data_type == DataType::F32;
                    let _ = writeln!(
                        body,
                        "{inner}const kiln_vec<{i_ty}, {l}> iv = {};",
                        vec_load(i_ty, "p1", &at_window(&ix.strides))
                    );
                }
                (ResampleMode::MaxPool, None) => {
                    return Err("max pooling's gather reads an index".into());
                }
                (ResampleMode::AvgPoolIncludePadding, _) => {
                    let rcp = super::float_lit(1.0 / s.g.window_elements() as f64);
                    let _ = writeln!(body, "{inner}const float per = {rcp};");
                }
                (ResampleMode::AvgPoolExcludePadding, _) => {
                    for k in 0..2 {
                        body.push_str(&inside_count(s.g, s.dx, k, &inner));
                    }
                    let _ = writeln!(body, "{inner}const float per = 1.0f / (float)(n0 * n1);");
                }
            }
            for (r, q) in covered {
                let p = r * cols + q;
                let add = if s.mode == ResampleMode::MaxPool {
                    // The position's tap in this window, as the index names it.
                    let tap =
                        (r as i64 - a * st[0] + pre[0]) * win[1] + (q as i64 - b * st[1] + pre[1]);
                    let cond = if index_f32 {
                        format!("iv.v[j] == {tap}.0f")
                    } else {
                        format!("(int)iv.v[j] == {tap}")
                    };
                    format!("if ({cond}) {{ acc[{p}][j] += kiln_ld(dyv.v[j]); }}")
                } else {
                    format!("acc[{p}][j] += kiln_ld(dyv.v[j]) * per;")
                };
                let _ = writeln!(body, "#pragma unroll");
                let _ = writeln!(body, "{inner}for (int j = 0; j < {l}; ++j) {{ {add} }}");
            }
            let _ = writeln!(body, "{ind}    }}");
            let _ = writeln!(body, "{ind}}}");
        }
    }
    // The tile's positions inside dx.
    for r in 0..rows {
        for q in 0..cols {
            let p = r * cols + q;
            let _ = writeln!(
                body,
                "{ind}if (d2 * {}LL + {r}LL < {}LL && d3 * {}LL + {q}LL < {}LL) {{",
                st[0], s.dx.dims[2], st[1], s.dx.dims[3]
            );
            let _ = writeln!(body, "{ind}    kiln_vec<{dx_ty}, {l}> out;");
            let _ = writeln!(body, "#pragma unroll");
            let _ = writeln!(
                body,
                "{ind}    for (int j = 0; j < {l}; ++j) out.v[j] = kiln_st<{dx_ty}>(acc[{p}][j]);"
            );
            let _ = writeln!(
                body,
                "{ind}    *reinterpret_cast<kiln_vec<{dx_ty}, {l}>*>({dx_param} + dx_off + {}LL) = out;",
                r as i64 * s.dx.strides[2] + q as i64 * s.dx.strides[3]
            );
            let _ = writeln!(body, "{ind}}}");
        }
    }
    let _ = writeln!(body, "        }}");
    let _ = writeln!(body, "        return;");
    let _ = write!(body, "    }}");
    Ok(body)
}

/// The backward's channel-vector path: where dy, dx (and the index or x) are aligned for
/// `lanes` elements at once, a thread takes a group of `lanes` channels (d1 the group, cg its
/// first channel) at the `outputs` adjacent dx positions along W of `run`, so the coordinate
/// and window arithmetic and each covering window's loads serve them all, and returns; the
/// scalar loop after it runs otherwise.
fn vector_backward(s: &Gather<'_>, run: VectorRun, dx_param: &str) -> Result<String, String> {
    let VectorRun {
        lanes,
        dim,
        outputs,
    } = run;
    let dx_ty = c_type(s.dx.data_type).ok_or("bad dx type")?;
    let dx_off = offset_terms(&s.dx.strides, s.spatial, &|k| format!("d{}", k + 2))
        .replace("d1 * ", "cg * ");
    let mut body = vector_loop_head(
        &backward_aligned(s, lanes, dx_param),
        &run.grouped(s.dx),
        run,
    );
    let _ = writeln!(body, "            const kiln_i64 dx_off = {dx_off};");
    let _ = writeln!(body, "            float acc[{outputs}][{lanes}];");
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(
        body,
        "            for (int p = 0; p < {outputs}; ++p) for (int j = 0; j < {lanes}; ++j) acc[p][j] = 0.0f;"
    );
    let _ = writeln!(body, "{}", backward_gather(s, Some(run))?);
    // Positions past the end of W gather windows too (clamped to dy) but are not stored.
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(body, "            for (int p = 0; p < {outputs}; ++p) {{");
    let _ = writeln!(
        body,
        "                if (d{dim} + p >= {}LL) {{ break; }}",
        s.dx.dims[dim]
    );
    let _ = writeln!(body, "                kiln_vec<{dx_ty}, {lanes}> out;");
    let _ = writeln!(body, "#pragma unroll");
    let _ = writeln!(
        body,
        "                for (int j = 0; j < {lanes}; ++j) out.v[j] = kiln_st<{dx_ty}>(acc[p][j]);"
    );
    let _ = writeln!(
        body,
        "                *reinterpret_cast<kiln_vec<{dx_ty}, {lanes}>*>({dx_param} + dx_off + p * {}LL) = out;",
        s.dx.strides[dim]
    );
    let _ = writeln!(body, "            }}");
    let _ = writeln!(body, "        }}");
    let _ = writeln!(body, "        return;");
    let _ = write!(body, "    }}");
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowed_sources_keep_no_64_bit_arithmetic() {
        let wide = "const kiln_i64 q0 = d2 * 2LL - 1LL + (kiln_i64)(w % 3);\n\
                    if ((unsigned long long)q0 >= 9ULL) { continue; }";
        assert_eq!(
            narrowed(wide),
            "const int q0 = d2 * 2 - 1 + (int)(w % 3);\n\
             if ((unsigned)q0 >= 9u) { continue; }"
        );
        // Both templates: only the placeholders' code and these lines carry the 64-bit forms.
        for template in [TEMPLATE, BACKWARD_TEMPLATE] {
            let n = narrowed(template);
            assert!(!n.contains("kiln_i64") && !n.contains("LL"), "{n}");
            assert_eq!(
                template.matches("LL").count(),
                1,
                "a template's only LL is its count's suffix"
            );
        }
    }

    #[test]
    fn offsets_past_2_31_keep_64_bit_arithmetic() {
        let t = |dims: &[i64]| kiln_core::TensorDesc {
            uid: 1,
            name: "x".into(),
            dims: dims.to_vec(),
            strides: kiln_core::tensor::packed_strides(dims),
            data_type: DataType::Bf16,
            is_virtual: false,
            alignment: 0,
            scalar: None,
        };
        let small = t(&[32, 64, 112, 112]);
        assert!(fits_i32(1 << 20, &[&small], 1000));
        // 2^31 + 2^16 elements: the last offset is past i32.
        let big = t(&[1, 1, 32769, 65536]);
        assert!(!fits_i32(1 << 20, &[&small, &big], 1000));
        // Too many elements for the grid-stride loop's next index, or too far a window reach.
        assert!(!fits_i32(1 << 30, &[&small], 1000));
        assert!(!fits_i32(1 << 20, &[&small], 1 << 30));
    }
}
