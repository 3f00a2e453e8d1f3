//! CUDA C generation. Kernel code lives in real CUDA files in `src/kernels/`: headers
//! ([`HEADERS`], handed to NVRTC by name) and templates filled here. A generated source is a
//! short translation unit specialised to the graph's shapes, strides and data types that
//! includes the headers it needs.
//!
//! - [`pointwise`]: `KILN_CUDA_POINTWISE_V1`, a chain of pointwise nodes in one kernel.
//! - [`gemm`]: `KILN_CUDA_MATMUL_V1` and `KILN_CUDA_CONV_FPROP_V1`, one tiled GEMM kernel in
//!   headers, specialised by a generated prologue (operand geometry, fused pointwise epilogue).
//! - [`conv_grad`]: `KILN_CUDA_CONV_DGRAD_V1` and `KILN_CUDA_CONV_WGRAD_V1`, the convolution
//!   gradients on the same GEMM kernel with their own operand loads.
//! - [`sdpa`]: `KILN_CUDA_SDPA_FA2_V1`, attention forward and backward on tensor cores.
//! - [`sdpa_fa3`]: `KILN_CUDA_SDPA_FA3_V1`, the attention forward on Hopper (TMA, wgmma,
//!   ping-pong warpgroups), on the FA2 engine's prologue.
//! - [`sdpa_fa3_bwd`]: `KILN_CUDA_SDPA_FA3_BACKWARD_V1`, the attention backward on Hopper
//!   (TMA, wgmma, dK/dV in registers, dQ reduced into the workspace).
//! - [`resample`]: `KILN_CUDA_RESAMPLE_V1`, pooling.
//! - [`norm`]: `KILN_CUDA_NORM_V1`, the normalizations with a fused chain after `y`.
//!
//! Every generated kernel computes in f32 and takes one pointer per bound tensor, in the order
//! of [`Kernel::args`].

pub mod conv_grad;
pub mod gemm;
pub mod hopper;
pub mod hopper_grad;
pub mod norm;
pub mod pointwise;
pub mod resample;
pub mod sdpa;
pub mod sdpa_fa3;
pub mod sdpa_fa3_bwd;

use kiln_core::{DataType, OpGraph, PointwiseMode, PointwiseOp, TensorDesc};
use std::collections::HashMap;
use std::fmt::Write;

/// The kernel headers, as (include name, contents): every compilation hands all of them to
/// NVRTC, and the kernel cache key covers their contents, so editing a header invalidates every
/// cached cubin built with it.
pub const HEADERS: [(&str, &str); 21] = [
    // The element loads, stores and math helpers every kernel includes.
    ("common.cuh", include_str!("../kernels/common.cuh")),
    // Included by common.cuh: storage types beyond f32/f16/bf16, the newer pointwise modes.
    (
        "pointwise_math.cuh",
        include_str!("../kernels/pointwise_math.cuh"),
    ),
    (
        "gemm_mainloop.cuh",
        include_str!("../kernels/gemm_mainloop.cuh"),
    ),
    (
        "gemm_epilogue.cuh",
        include_str!("../kernels/gemm_epilogue.cuh"),
    ),
    (
        "matmul_operands.cuh",
        include_str!("../kernels/matmul_operands.cuh"),
    ),
    (
        "conv_fprop_operands.cuh",
        include_str!("../kernels/conv_fprop_operands.cuh"),
    ),
    // The convolution gradients' operand loads, and the sum of a split reduction.
    (
        "conv_dgrad_operands.cuh",
        include_str!("../kernels/conv_dgrad_operands.cuh"),
    ),
    (
        "conv_wgrad_operands.cuh",
        include_str!("../kernels/conv_wgrad_operands.cuh"),
    ),
    (
        "gemm_split_reduce.cuh",
        include_str!("../kernels/gemm_split_reduce.cuh"),
    ),
    // The Hopper GEMM (sm_90a): PTX wrappers, the kernel, the convolution's gathered operand.
    ("hopper_ptx.cuh", include_str!("../kernels/hopper_ptx.cuh")),
    (
        "hopper_gemm.cuh",
        include_str!("../kernels/hopper_gemm.cuh"),
    ),
    (
        "hopper_conv_gather.cuh",
        include_str!("../kernels/hopper_conv_gather.cuh"),
    ),
    (
        "hopper_conv_grad.cuh",
        include_str!("../kernels/hopper_conv_grad.cuh"),
    ),
    (
        "sdpa_common.cuh",
        include_str!("../kernels/sdpa_common.cuh"),
    ),
    (
        "sdpa_forward.cuh",
        include_str!("../kernels/sdpa_forward.cuh"),
    ),
    (
        "sdpa_fa3_forward.cuh",
        include_str!("../kernels/sdpa_fa3_forward.cuh"),
    ),
    (
        "sdpa_fa3_backward.cuh",
        include_str!("../kernels/sdpa_fa3_backward.cuh"),
    ),
    (
        "sdpa_backward_dq.cuh",
        include_str!("../kernels/sdpa_backward_dq.cuh"),
    ),
    (
        "sdpa_backward_dkdv.cuh",
        include_str!("../kernels/sdpa_backward_dkdv.cuh"),
    ),
    // Block-wide sums of the normalization kernels.
    (
        "norm_reduce.cuh",
        include_str!("../kernels/norm_reduce.cuh"),
    ),
    // 8-value accesses and group sums of the wide normalization kernels.
    ("norm_wide.cuh", include_str!("../kernels/norm_wide.cuh")),
];

/// The entry of [`Kernel::args`] that stands for the plan's workspace pointer (the kernel's
/// parameter is a pointer to the workspace's first byte); never a tensor UID.
pub const WORKSPACE_ARG: i64 = i64::MIN;

/// Entries of [`Kernel::args`] from [`WORKSPACE_ARG`] up to this many past it stand for the
/// workspace pointer plus that many bytes ([`workspace_at`]); tensor UIDs in that range are
/// refused by every engine ([`crate::supports`]).
pub const WORKSPACE_RESERVED: i64 = 1 << 40;

/// The [`Kernel::args`] entry for the workspace pointer plus `offset` bytes (below
/// [`WORKSPACE_RESERVED`]).
pub fn workspace_at(offset: u64) -> Result<i64, String> {
    i64::try_from(offset)
        .ok()
        .filter(|&o| o < WORKSPACE_RESERVED)
        .map(|o| WORKSPACE_ARG + o)
        .ok_or_else(|| format!("a workspace offset of {offset} bytes is past 2^40"))
}

/// The workspace offset an entry of [`Kernel::args`] stands for, or `None` for a tensor UID.
pub fn workspace_offset(arg: i64) -> Option<u64> {
    (WORKSPACE_ARG..WORKSPACE_ARG + WORKSPACE_RESERVED)
        .contains(&arg)
        .then(|| arg.abs_diff(WORKSPACE_ARG))
}

/// One generated kernel and how to launch it.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// The `extern "C"` symbol.
    pub symbol: String,
    /// The generated CUDA C translation unit; it includes [`HEADERS`] by name.
    pub source: String,
    /// Tensor UIDs in kernel parameter order.
    pub args: Vec<i64>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// Tensor maps the kernel takes by value before its tensor pointers, in parameter order.
    pub maps: Vec<TensorMapRecipe>,
    /// The grid's x extent is an upper bound: the load device caps it at its SM count (the
    /// kernel strides over its tiles by `gridDim.x`).
    pub persistent: bool,
    /// Launched cooperatively (every block resident at once, so that the kernel may synchronise
    /// its whole grid): the load device caps the grid's x extent at the blocks it can hold at
    /// once (the kernel strides over its work by `gridDim.x`).
    pub cooperative: bool,
    /// Compiled for the architecture-specific target (`sm_90a`), which runs on that exact
    /// compute capability only.
    pub arch_specific: bool,
}

/// How to encode one tensor map (a `CUtensorMap` for tiled loads with 128-byte swizzle and zero
/// fill out of bounds) over a bound tensor; its address comes from the binding at execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorMapRecipe {
    /// The tensor whose bound pointer is the map's global address.
    pub uid: i64,
    pub data_type: DataType,
    /// Extents, innermost first (rank 2 to 5); the innermost is contiguous.
    pub dims: Vec<u64>,
    /// Byte strides of dims 1.. (one fewer than `dims`).
    pub strides: Vec<u64>,
    /// The box loaded per copy, innermost first.
    pub box_dims: Vec<u32>,
}

/// Fills `{{KEY}}` placeholders of `template`. Refuses a placeholder without a value and a value
/// whose placeholder is absent, so a template and its generator cannot drift apart silently.
pub fn fill(template: &str, values: &[(&str, String)]) -> Result<String, String> {
    let mut out = template.to_string();
    for (key, value) in values {
        let pat = format!("{{{{{key}}}}}");
        if !out.contains(&pat) {
            return Err(format!("template has no placeholder {pat}"));
        }
        out = out.replace(&pat, value);
    }
    if let Some(at) = out.find("{{") {
        let rest: String = out[at..].chars().take(32).collect();
        return Err(format!("template placeholder left unfilled: {rest}"));
    }
    Ok(out)
}

/// The CUDA C type of a tensor element; `None` for f64 (not a CUDA engine type).
pub fn c_type(dt: DataType) -> Option<&'static str> {
    match dt {
        DataType::F32 => Some("float"),
        DataType::F16 => Some("__half"),
        DataType::Bf16 => Some("__nv_bfloat16"),
        DataType::F64 => None,
        DataType::Boolean => Some("kiln_bool"),
        DataType::I8 => Some("signed char"),
        DataType::I32 => Some("int"),
        DataType::Fp8E4m3 => Some("__nv_fp8_e4m3"),
        DataType::Fp8E5m2 => Some("__nv_fp8_e5m2"),
    }
}

/// An f32 literal of `v` for CUDA C (infinities and NaN spelled out).
pub fn float_lit(v: f64) -> String {
    let f = v as f32;
    if f.is_nan() {
        "__int_as_float(0x7fc00000)".into()
    } else if f == f32::INFINITY {
        "__int_as_float(0x7f800000)".into()
    } else if f == f32::NEG_INFINITY {
        "__int_as_float(0xff800000)".into()
    } else {
        format!("{f:e}f")
    }
}

/// The f32 expression of one pointwise node over operand expressions `a`, `b` and `c` (the
/// mask of `binary_select`); `index` is the element's coordinate along `gen_index`'s axis.
pub fn mode_expr(op: &PointwiseOp, a: &str, b: &str, c: &str, index: &str) -> String {
    let p = &op.params;
    let flag = |c: &str| format!("(({a}) {c} ({b}) ? 1.0f : 0.0f)");
    let relu_params = || {
        format!(
            "{}, {}, {}",
            float_lit(p.relu_lower_clip()),
            float_lit(p.relu_upper_clip()),
            float_lit(p.relu_lower_clip_slope())
        )
    };
    match op.mode {
        PointwiseMode::Add => format!("({a}) + ({b})"),
        PointwiseMode::Sub => format!("({a}) - ({b})"),
        PointwiseMode::Mul => format!("({a}) * ({b})"),
        PointwiseMode::Div => format!("({a}) / ({b})"),
        PointwiseMode::Max => format!("kiln_max({a}, {b})"),
        PointwiseMode::Min => format!("kiln_min({a}, {b})"),
        PointwiseMode::Pow => format!("powf({a}, {b})"),
        PointwiseMode::CmpEq => flag("=="),
        PointwiseMode::CmpNe => flag("!="),
        PointwiseMode::CmpLt => flag("<"),
        PointwiseMode::CmpLe => flag("<="),
        PointwiseMode::CmpGt => flag(">"),
        PointwiseMode::CmpGe => flag(">="),
        PointwiseMode::Identity => a.to_string(),
        PointwiseMode::Relu => format!("kiln_relu({a}, {})", relu_params()),
        PointwiseMode::Sigmoid => format!("kiln_sigmoid({a})"),
        PointwiseMode::Tanh => format!("tanhf({a})"),
        PointwiseMode::Gelu => format!("0.5f * ({a}) * erfcf(-({a}) * 0.70710678118654752f)"),
        PointwiseMode::GeluApproxTanh => format!("kiln_gelu_tanh({a})"),
        PointwiseMode::Swish => {
            format!(
                "({a}) * kiln_sigmoid({} * ({a}))",
                float_lit(p.swish_beta())
            )
        }
        PointwiseMode::Elu => {
            format!(
                "(({a}) > 0.0f ? ({a}) : {} * expm1f({a}))",
                float_lit(p.elu_alpha())
            )
        }
        PointwiseMode::Softplus => format!("kiln_softplus({a}, {})", float_lit(p.softplus_beta())),
        PointwiseMode::Exp => format!("expf({a})"),
        PointwiseMode::Log => format!("logf({a})"),
        PointwiseMode::Abs => format!("fabsf({a})"),
        PointwiseMode::Neg => format!("-({a})"),
        PointwiseMode::Sqrt => format!("sqrtf({a})"),
        PointwiseMode::Rsqrt => format!("(1.0f / sqrtf({a}))"),
        PointwiseMode::Reciprocal => format!("(1.0f / ({a}))"),
        PointwiseMode::AddSquare => format!("(({a}) + ({b}) * ({b}))"),
        PointwiseMode::Mod => format!("fmodf({a}, {b})"),
        PointwiseMode::Atan2 => format!("atan2f({a}, {b})"),
        PointwiseMode::Ceil => format!("ceilf({a})"),
        PointwiseMode::Floor => format!("floorf({a})"),
        PointwiseMode::Sin => format!("sinf({a})"),
        PointwiseMode::Cos => format!("cosf({a})"),
        PointwiseMode::Tan => format!("tanf({a})"),
        PointwiseMode::Erf => format!("erff({a})"),
        PointwiseMode::ReluBwd => format!("(({a}) * kiln_relu_slope({b}, {}))", relu_params()),
        PointwiseMode::TanhBwd => format!("kiln_tanh_bwd({a}, {b})"),
        PointwiseMode::SigmoidBwd => format!("kiln_sigmoid_bwd({a}, {b})"),
        PointwiseMode::EluBwd => format!("kiln_elu_bwd({a}, {b}, {})", float_lit(p.elu_alpha())),
        PointwiseMode::GeluBwd => format!("kiln_gelu_bwd({a}, {b})"),
        PointwiseMode::GeluApproxTanhBwd => format!("kiln_gelu_tanh_bwd({a}, {b})"),
        PointwiseMode::SoftplusBwd => format!(
            "(({a}) * kiln_sigmoid({} * ({b})))",
            float_lit(p.softplus_beta())
        ),
        PointwiseMode::SwishBwd => {
            format!("kiln_swish_bwd({a}, {b}, {})", float_lit(p.swish_beta()))
        }
        PointwiseMode::LogicalAnd => format!("((({a}) != 0.0f && ({b}) != 0.0f) ? 1.0f : 0.0f)"),
        PointwiseMode::LogicalOr => format!("((({a}) != 0.0f || ({b}) != 0.0f) ? 1.0f : 0.0f)"),
        PointwiseMode::LogicalNot => format!("(({a}) == 0.0f ? 1.0f : 0.0f)"),
        PointwiseMode::GenIndex => format!("((float)({index}))"),
        PointwiseMode::BinarySelect => format!("(({c}) != 0.0f ? ({a}) : ({b}))"),
    }
}

/// The coordinate along `gen_index`'s axis for `op` (a gen_index node) at `coords` of the
/// iteration space: 0 where its output has size 1 on that axis (it broadcasts there).
pub fn gen_index_coord(graph: &OpGraph, op: &PointwiseOp, coords: &[String]) -> String {
    let axis = usize::try_from(op.params.axis()).unwrap_or(usize::MAX);
    let sized = graph
        .tensor(op.out)
        .and_then(|t| t.dims.get(axis).copied())
        .is_some_and(|d| d != 1);
    match coords.get(axis) {
        Some(c) if sized => c.clone(),
        _ => "0".into(),
    }
}

/// The element offset of tensor `t` at coordinates `coords` (one C expression per dim of the
/// iteration space, same rank as `t`): size-1 dims broadcast (contribute nothing).
pub fn offset_expr(t: &TensorDesc, coords: &[String]) -> String {
    let terms: Vec<String> = t
        .dims
        .iter()
        .zip(&t.strides)
        .zip(coords)
        .filter(|((&d, &s), _)| d != 1 && s != 0)
        .map(|((_, &s), c)| {
            if s == 1 {
                format!("({c})")
            } else {
                format!("({c}) * {s}LL")
            }
        })
        .collect();
    if terms.is_empty() {
        "0".into()
    } else {
        terms.join(" + ")
    }
}

/// Kernel parameters: one pointer per bound tensor, inputs `const`.
pub struct Params {
    /// (uid, is written) in parameter order.
    pub list: Vec<(i64, bool)>,
}

impl Params {
    /// The parameter name of tensor `uid`.
    pub fn name(&self, uid: i64) -> Option<String> {
        self.list
            .iter()
            .position(|&(u, _)| u == uid)
            .map(|i| format!("p{i}"))
    }

    /// The C parameter list.
    pub fn declare(&self, graph: &OpGraph) -> Result<String, String> {
        let mut parts = Vec::new();
        for (i, &(uid, written)) in self.list.iter().enumerate() {
            let t = graph
                .tensor(uid)
                .ok_or_else(|| format!("no tensor uid {uid}"))?;
            let ty = c_type(t.data_type).ok_or_else(|| {
                format!("{}: {} is not a CUDA engine type", t.label(), t.data_type)
            })?;
            let c = if written { "" } else { "const " };
            parts.push(format!("{c}{ty}* __restrict__ p{i}"));
        }
        Ok(parts.join(", "))
    }
}

/// Emits the statements of a pointwise DAG evaluated at one point of the iteration space.
///
/// `values` maps UIDs already computed (e.g. a GEMM accumulator) to their f32 expression;
/// inputs are loaded with `offset_expr(coords)`; each node's result becomes `float v<i>`; node
/// outputs that are not virtual are stored through their parameter.
pub fn emit_pointwise_body(
    graph: &OpGraph,
    nodes: &[&PointwiseOp],
    params: &Params,
    coords: &[String],
    values: &mut HashMap<i64, String>,
    indent: &str,
) -> Result<String, String> {
    let mut out = String::new();
    let mut next = 0usize;
    let mut operand =
        |uid: i64, values: &mut HashMap<i64, String>, out: &mut String| -> Result<String, String> {
            if let Some(v) = values.get(&uid) {
                return Ok(v.clone());
            }
            let t = graph
                .tensor(uid)
                .ok_or_else(|| format!("no tensor uid {uid}"))?;
            if let Some(s) = t.scalar {
                return Ok(float_lit(s));
            }
            let p = params
                .name(uid)
                .ok_or_else(|| format!("{} is not a kernel parameter", t.label()))?;
            let name = format!("in{next}");
            next += 1;
            let _ = writeln!(
                out,
                "{indent}const float {name} = kiln_ld({p}[{}]);",
                offset_expr(t, coords)
            );
            values.insert(uid, name.clone());
            Ok(name)
        };
    for (i, op) in nodes.iter().enumerate() {
        // gen_index reads no value of its operand.
        let a = if op.mode == PointwiseMode::GenIndex {
            "0.0f".into()
        } else {
            operand(op.a, values, &mut out)?
        };
        let b = match op.b {
            Some(b) => operand(b, values, &mut out)?,
            None => "0.0f".into(),
        };
        let c = match op.c {
            Some(c) => operand(c, values, &mut out)?,
            None => "0.0f".into(),
        };
        let index = gen_index_coord(graph, op, coords);
        let name = format!("v{i}");
        let _ = writeln!(
            out,
            "{indent}const float {name} = {};",
            mode_expr(op, &a, &b, &c, &index)
        );
        values.insert(op.out, name.clone());
        let t = graph
            .tensor(op.out)
            .ok_or_else(|| format!("no tensor uid {}", op.out))?;
        if !t.is_virtual {
            out.push_str(&store_stmt(graph, params, t, coords, &name, indent)?);
        }
    }
    Ok(out)
}

/// `p[offset] = kiln_st<T>(value);` for tensor `t`.
pub fn store_stmt(
    _graph: &OpGraph,
    params: &Params,
    t: &TensorDesc,
    coords: &[String],
    value: &str,
    indent: &str,
) -> Result<String, String> {
    let p = params
        .name(t.uid)
        .ok_or_else(|| format!("{} is not a kernel parameter", t.label()))?;
    let ty = c_type(t.data_type).ok_or_else(|| format!("{}: not a CUDA engine type", t.label()))?;
    Ok(format!(
        "{indent}{p}[{}] = kiln_st<{ty}>({value});\n",
        offset_expr(t, coords)
    ))
}

/// Checks that every tensor is of a type the pointwise kernels load and store: any but f64.
pub fn check_pointwise_types(graph: &OpGraph) -> Result<(), String> {
    for t in &graph.tensors {
        if c_type(t.data_type).is_none() {
            return Err(format!(
                "{} is {}; the CUDA pointwise engine takes every type but f64",
                t.label(),
                t.data_type
            ));
        }
    }
    Ok(())
}

/// Checks that every tensor is f32, f16 or bf16 (the GEMM engines' types).
pub fn check_types(graph: &OpGraph) -> Result<(), String> {
    for t in &graph.tensors {
        if !matches!(t.data_type, DataType::F32 | DataType::F16 | DataType::Bf16) {
            return Err(format!(
                "{} is {}; CUDA engines take f32, f16 and bf16",
                t.label(),
                t.data_type
            ));
        }
    }
    Ok(())
}

/// A kernel symbol derived from the engine and a digest of the source's specialisation, so two
/// kernels of different graphs never share a symbol in a cache.
pub fn symbol(prefix: &str, spec: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(spec.as_bytes());
    let mut s = format!("kiln_{prefix}_");
    for b in &d[..8] {
        let _ = write!(s, "{b:02x}");
    }
    s
}
