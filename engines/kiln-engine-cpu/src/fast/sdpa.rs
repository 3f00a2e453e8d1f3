//! `KILN_CPU_SDPA_FLASH_V1`: scaled dot-product attention, forward and backward, in
//! FlashAttention's tiled form on the engine's thread pool ([`super::pool`]).
//!
//! Forward: one task per (batch, query head, block of query rows). The task keeps its query
//! block, an f32 output accumulator and each row's running max and sum, and walks the key/value
//! blocks that any of its rows may see (masked blocks are never visited): scores by GEMM, mask
//! and bias, the online softmax update (rescale the accumulator by `exp(m_old - m_new)`), then
//! `acc += P v` by GEMM. Nothing of size S_q x S_kv is ever held.
//!
//! Backward: `D = rowsum(do * o)` first, then two race-free passes that recompute `P` from
//! `stats`: one task per (batch, key/value head, key block) accumulates `dk` and `dv` over every
//! query head of its GQA group and every query block that sees its keys; one task per (batch,
//! query head, query block) accumulates `dq`. FlashAttention-2 accumulates `dq` with atomics in
//! one pass; two passes cost one more score GEMM per tile but are deterministic and need no
//! workspace.
//!
//! f16/bf16 operands are widened to f32 per tile; all arithmetic is f32. No workspace.

use super::element_io::{load, store, SharedPtr};
use super::pool;
use crate::engine::{CpuEngine, Prepared};
use crate::reference::sdpa::clamp_len;
use crate::tensor_map::TensorMap;
use kiln_core::ops::sdpa::{AttnScale, SdpaBackwardOp, SdpaMask, SdpaOp, SdpaShape};
use kiln_core::{DataType, Op, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{KnobDescriptor, PluginError, PluginResult};
use std::ops::Range;

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_SDPA_FLASH_V1";

/// Knob: query rows per tile.
pub const KNOB_BLOCK_Q: i64 = 1;
/// Knob: key/value rows per tile.
pub const KNOB_BLOCK_KV: i64 = 2;
const DEFAULT_BLOCK: i64 = 64;

/// Tiled attention with an online softmax.
pub struct SdpaEngine;

/// The node of a graph this engine runs: its one `sdpa` or `sdpa_backward` node.
enum Node {
    Forward(SdpaOp),
    Backward(SdpaBackwardOp),
}

fn find_node(graph: &OpGraph) -> Result<Node, String> {
    let [node] = &graph.nodes[..] else {
        return Err(format!(
            "the graph has {} nodes; this engine runs one sdpa or sdpa_backward node",
            graph.nodes.len()
        ));
    };
    let what = format!("node '{}'", node.name);
    match &node.op {
        Op::Generic(g) if g.op == "sdpa" => SdpaOp::from_generic(g, &what)
            .map(Node::Forward)
            .map_err(|e| e.to_string()),
        Op::Generic(g) if g.op == "sdpa_backward" => SdpaBackwardOp::from_generic(g, &what)
            .map(Node::Backward)
            .map_err(|e| e.to_string()),
        other => Err(format!(
            "{what} is {}; this engine runs sdpa and sdpa_backward",
            other.describe()
        )),
    }
}

fn check_type(t: &TensorDesc) -> Result<(), String> {
    match t.data_type {
        DataType::F32 | DataType::F16 | DataType::Bf16 => Ok(()),
        other => Err(format!(
            "{} is {other}; this engine handles f32, f16 and bf16 (the reference engine runs f64)",
            t.label()
        )),
    }
}

fn block_knob(id: i64, name: &'static str) -> KnobDescriptor {
    KnobDescriptor {
        id,
        name,
        min: 8,
        max: 256,
        stride: 8,
        default: DEFAULT_BLOCK,
    }
}

impl CpuEngine for SdpaEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    fn knobs(&self) -> Vec<KnobDescriptor> {
        vec![
            block_knob(KNOB_BLOCK_Q, "block_q"),
            block_knob(KNOB_BLOCK_KV, "block_kv"),
        ]
    }

    /// Accepts a graph of one `sdpa` or `sdpa_backward` node whose bound tensors are f32, f16
    /// or bf16.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        find_node(graph)?;
        graph.bound_tensors().try_for_each(check_type)
    }

    fn prepare(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        let fail = |why: String| PluginError::not_supported(format!("{NAME}: {why}"));
        self.supports(graph).map_err(fail)?;
        let node = find_node(graph).map_err(fail)?;
        let name = &graph.nodes[0].name;
        let what = format!("node '{name}'");
        let inputs = match &node {
            Node::Forward(f) => &f.inputs,
            Node::Backward(b) => &b.inputs,
        };
        let shape = inputs.shape(graph, name, &what)?;
        let operand =
            |uid: i64| -> PluginResult<Operand> { Operand::new(graph.tensor_for(uid, name)?) };
        let scale = match inputs.static_scale(graph, name)? {
            Some(v) => Scale::Value(v as f32),
            None => match inputs.attn_scale {
                AttnScale::Tensor(uid) => Scale::Tensor(uid),
                AttnScale::Value(v) => Scale::Value(v as f32),
            },
        };
        let block =
            |i: usize| knobs.get(i).copied().unwrap_or(DEFAULT_BLOCK).clamp(8, 256) as usize;
        let kind = match &node {
            Node::Forward(f) => Kind::Forward {
                o: operand(f.o)?,
                stats: f.stats.map(operand).transpose()?,
            },
            Node::Backward(b) => Kind::Backward {
                o: operand(b.o)?,
                d_o: operand(b.d_o)?,
                stats: b.stats,
                dq: operand(b.dq)?,
                dk: operand(b.dk)?,
                dv: operand(b.dv)?,
            },
        };
        Ok(Box::new(SdpaPlan {
            shape,
            mask: inputs.mask,
            q: operand(inputs.q)?,
            k: operand(inputs.k)?,
            v: operand(inputs.v)?,
            bias: inputs.bias.map(operand).transpose()?,
            scale,
            seq_len_q: inputs.seq_len_q,
            seq_len_kv: inputs.seq_len_kv,
            block_q: block(0),
            block_kv: block(1),
            kind,
        }))
    }
}

/// Where the scale comes from at execute.
#[derive(Debug, Clone, Copy)]
enum Scale {
    Value(f32),
    /// An f32 tensor of one element.
    Tensor(i64),
}

/// A bound rank-4 tensor: how to find row (b, h, s) and step along its last dim. Dims of size
/// 1 broadcast (stride 0).
#[derive(Debug, Clone)]
struct Operand {
    uid: i64,
    data_type: DataType,
    strides: [isize; 4],
    inner: usize,
}

impl Operand {
    fn new(t: &TensorDesc) -> PluginResult<Operand> {
        if t.dims.len() != 4 || t.strides.len() != 4 {
            return Err(PluginError::internal(format!(
                "{NAME}: {} is not of rank 4",
                t.label()
            )));
        }
        let mut strides = [0isize; 4];
        for (i, s) in strides.iter_mut().enumerate() {
            *s = if t.dims[i] == 1 {
                0
            } else {
                t.strides[i] as isize
            };
        }
        // The last dim keeps its stride even when it is 1 (a run of one element).
        strides[3] = t.strides[3] as isize;
        Ok(Operand {
            uid: t.uid,
            data_type: t.data_type,
            strides,
            inner: t.dims[3] as usize,
        })
    }

    fn row(&self, b: usize, h: usize, s: usize) -> isize {
        b as isize * self.strides[0] + h as isize * self.strides[1] + s as isize * self.strides[2]
    }
}

/// A bound operand's pointer with its layout, for the workers.
#[derive(Clone, Copy)]
struct Bound<'a> {
    ptr: SharedPtr,
    op: &'a Operand,
}

impl<'a> Bound<'a> {
    fn new(tensors: &TensorMap<'_>, op: &'a Operand) -> PluginResult<Bound<'a>> {
        Ok(Bound {
            ptr: SharedPtr(tensors.ptr(op.uid)?),
            op,
        })
    }

    /// Reads `rows` consecutive rows from (b, h, s0), the first `cols` elements of each (an
    /// offset of `col0` along the last dim), into `out` (row-major, `cols` per row).
    fn load_rows(&self, b: usize, h: usize, s0: usize, col0: usize, cols: usize, out: &mut [f32]) {
        for (r, chunk) in out.chunks_exact_mut(cols).enumerate() {
            let off = self.op.row(b, h, s0 + r) + col0 as isize * self.op.strides[3];
            // SAFETY: execute's contract: the pointer addresses the tensor's layout, and
            // (b, h, s0 + r, col0..col0 + cols) lies inside its dims (callers stay in range).
            unsafe {
                load(
                    self.ptr.get(),
                    self.op.data_type,
                    off,
                    self.op.strides[3],
                    chunk,
                )
            };
        }
    }

    /// Writes rows of `self.op.inner` elements from `src` at (b, h, s0..).
    fn store_rows(&self, b: usize, h: usize, s0: usize, src: &[f32]) {
        for (r, chunk) in src.chunks_exact(self.op.inner).enumerate() {
            // SAFETY: execute's contract; each task writes rows no other task writes.
            unsafe {
                store(
                    self.ptr.get(),
                    self.op.data_type,
                    self.op.row(b, h, s0 + r),
                    self.op.strides[3],
                    chunk,
                )
            };
        }
    }
}

enum Kind {
    Forward {
        o: Operand,
        stats: Option<Operand>,
    },
    Backward {
        o: Operand,
        d_o: Operand,
        stats: i64,
        dq: Operand,
        dk: Operand,
        dv: Operand,
    },
}

struct SdpaPlan {
    shape: SdpaShape,
    mask: SdpaMask,
    q: Operand,
    k: Operand,
    v: Operand,
    bias: Option<Operand>,
    scale: Scale,
    seq_len_q: Option<i64>,
    seq_len_kv: Option<i64>,
    block_q: usize,
    block_kv: usize,
    kind: Kind,
}

/// What every task of one execute call reads.
struct Run<'a> {
    plan: &'a SdpaPlan,
    q: Bound<'a>,
    k: Bound<'a>,
    v: Bound<'a>,
    bias: Option<Bound<'a>>,
    scale: f32,
    len_q: Vec<usize>,
    len_kv: Vec<usize>,
}

/// `dst (+)= beta * lhs * rhs` on row-major f32 slices with the given (row, column) strides.
#[allow(clippy::too_many_arguments)]
fn mm(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    dst_rs: usize,
    accumulate: bool,
    lhs: (&[f32], usize, usize),
    rhs: (&[f32], usize, usize),
    beta: f32,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for r in 0..m {
                dst[r * dst_rs..r * dst_rs + n].fill(0.0);
            }
        }
        return;
    }
    let last = |rs: usize, cs: usize, rows: usize, cols: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(
        last(dst_rs, 1, m, n) < dst.len()
            && last(lhs.1, lhs.2, m, k) < lhs.0.len()
            && last(rhs.1, rhs.2, k, n) < rhs.0.len(),
        "{NAME}: a tile product outside its buffers"
    );
    // SAFETY: the assertion above keeps every addressed element inside its slice; dst is
    // borrowed mutably, so it aliases neither operand.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            accumulate,
            lhs.0.as_ptr(),
            lhs.2 as isize,
            lhs.1 as isize,
            rhs.0.as_ptr(),
            rhs.2 as isize,
            rhs.1 as isize,
            1.0f32,
            beta,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

impl Run<'_> {
    fn group(&self) -> usize {
        self.plan.shape.group()
    }

    /// The keys row `i` of batch `b` sees.
    fn keys(&self, b: usize, i: usize) -> Range<usize> {
        self.plan
            .mask
            .allowed_keys(i, self.len_q[b], self.len_kv[b])
    }

    /// The union of the keys rows `rows` see (empty when none sees any).
    fn union(ranges: &[Range<usize>]) -> Range<usize> {
        let lo = ranges
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| r.start)
            .min();
        let hi = ranges.iter().map(|r| r.end).max();
        match (lo, hi) {
            (Some(lo), Some(hi)) => lo..hi,
            _ => 0..0,
        }
    }

    /// Scores of query rows `rows` (of head `h`) against keys `keys`, into `s` (rows x n):
    /// `scale * q k^T + bias`, `-inf` outside each row's range.
    #[allow(clippy::too_many_arguments)]
    fn scores(
        &self,
        b: usize,
        h: usize,
        i0: usize,
        ranges: &[Range<usize>],
        keys: Range<usize>,
        q: &[f32],
        k: &[f32],
        s: &mut [f32],
        bias_row: &mut [f32],
    ) {
        let (rows, n, d) = (ranges.len(), keys.len(), self.plan.shape.dim_qk);
        mm(rows, n, d, s, n, false, (q, d, 1), (k, 1, d), self.scale);
        for (r, range) in ranges.iter().enumerate() {
            let row = &mut s[r * n..(r + 1) * n];
            if let Some(bias) = &self.bias {
                bias.load_rows(b, h, i0 + r, keys.start, n, &mut bias_row[..n]);
                for (x, y) in row.iter_mut().zip(&bias_row[..n]) {
                    *x += y;
                }
            }
            for (jj, x) in row.iter_mut().enumerate() {
                if !range.contains(&(keys.start + jj)) {
                    *x = f32::NEG_INFINITY;
                }
            }
        }
    }

    /// One forward task: query rows `i0..i1` of (b, h).
    fn forward_block(
        &self,
        b: usize,
        h: usize,
        i0: usize,
        i1: usize,
        o: Bound<'_>,
        stats: Option<Bound<'_>>,
    ) {
        let sh = &self.plan.shape;
        let (rows, d, dv, bk) = (i1 - i0, sh.dim_qk, sh.dim_v, self.plan.block_kv);
        let hk = h / self.group();
        let ranges: Vec<Range<usize>> = (i0..i1).map(|i| self.keys(b, i)).collect();
        let span = Self::union(&ranges);
        let mut m = vec![f32::NEG_INFINITY; rows];
        let mut l = vec![0f32; rows];
        let mut acc = vec![0f32; rows * dv];
        if !span.is_empty() {
            let mut q = vec![0f32; rows * d];
            self.q.load_rows(b, h, i0, 0, d, &mut q);
            let (mut k, mut v) = (vec![0f32; bk * d], vec![0f32; bk * dv]);
            let (mut s, mut bias_row) = (vec![0f32; rows * bk], vec![0f32; bk]);
            let mut j0 = span.start;
            while j0 < span.end {
                let j1 = (j0 + bk).min(span.end);
                let n = j1 - j0;
                self.k.load_rows(b, hk, j0, 0, d, &mut k[..n * d]);
                self.v.load_rows(b, hk, j0, 0, dv, &mut v[..n * dv]);
                self.scores(b, h, i0, &ranges, j0..j1, &q, &k, &mut s, &mut bias_row);
                for r in 0..rows {
                    let row = &mut s[r * n..(r + 1) * n];
                    let block_max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let m_new = m[r].max(block_max);
                    if m_new == f32::NEG_INFINITY {
                        row.fill(0.0);
                        continue;
                    }
                    let correction = (m[r] - m_new).exp();
                    let mut sum = 0f32;
                    for x in row.iter_mut() {
                        *x = (*x - m_new).exp();
                        sum += *x;
                    }
                    l[r] = l[r] * correction + sum;
                    for a in &mut acc[r * dv..(r + 1) * dv] {
                        *a *= correction;
                    }
                    m[r] = m_new;
                }
                mm(
                    rows,
                    dv,
                    n,
                    &mut acc,
                    dv,
                    true,
                    (&s, n, 1),
                    (&v, dv, 1),
                    1.0,
                );
                j0 = j1;
            }
        }
        let mut lse = vec![f32::NEG_INFINITY; rows];
        for r in 0..rows {
            let row = &mut acc[r * dv..(r + 1) * dv];
            if l[r] > 0.0 {
                let inv = 1.0 / l[r];
                row.iter_mut().for_each(|a| *a *= inv);
                lse[r] = m[r] + l[r].ln();
            } else {
                row.fill(0.0);
            }
        }
        o.store_rows(b, h, i0, &acc);
        if let Some(st) = stats {
            st.store_rows(b, h, i0, &lse);
        }
    }
}

/// What the backward tasks read besides [`Run`].
struct Grad<'a> {
    d_o: Bound<'a>,
    /// Row log-sum-exps, packed [B, H_q, S_q].
    lse: Vec<f32>,
    /// `rowsum(do * o)`, packed [B, H_q, S_q].
    delta: Vec<f32>,
}

/// The tiles one backward tile step works on.
struct Tiles {
    q: Vec<f32>,
    d_o: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    p: Vec<f32>,
    ds: Vec<f32>,
    bias_row: Vec<f32>,
}

impl Tiles {
    fn new(bq: usize, bk: usize, d: usize, dv: usize) -> Tiles {
        Tiles {
            q: vec![0.0; bq * d],
            d_o: vec![0.0; bq * dv],
            k: vec![0.0; bk * d],
            v: vec![0.0; bk * dv],
            p: vec![0.0; bq * bk],
            ds: vec![0.0; bq * bk],
            bias_row: vec![0.0; bk],
        }
    }
}

impl Run<'_> {
    /// P and dS of query rows `i0..` (their `ranges`, q and do loaded) against keys `keys`
    /// (k and v loaded), into `t.p` and `t.ds`.
    #[allow(clippy::too_many_arguments)]
    fn probabilities(
        &self,
        g: &Grad<'_>,
        b: usize,
        h: usize,
        i0: usize,
        ranges: &[Range<usize>],
        keys: Range<usize>,
        t: &mut Tiles,
    ) {
        let sh = &self.plan.shape;
        let (rows, n, dv) = (ranges.len(), keys.len(), sh.dim_v);
        self.scores(
            b,
            h,
            i0,
            ranges,
            keys.clone(),
            &t.q,
            &t.k,
            &mut t.p,
            &mut t.bias_row,
        );
        mm(
            rows,
            n,
            dv,
            &mut t.ds,
            n,
            false,
            (&t.d_o, dv, 1),
            (&t.v, 1, dv),
            1.0,
        );
        for r in 0..rows {
            let at = (b * sh.heads_q + h) * sh.seq_q + i0 + r;
            let (lse, delta) = (g.lse[at], g.delta[at]);
            for jj in 0..n {
                let x = r * n + jj;
                let p = if lse == f32::NEG_INFINITY || t.p[x] == f32::NEG_INFINITY {
                    0.0
                } else {
                    (t.p[x] - lse).exp()
                };
                t.p[x] = p;
                t.ds[x] = p * (t.ds[x] - delta);
            }
        }
    }

    /// dk and dv of keys `j0..j1` of (b, hk), over every query head of the group.
    fn key_block(
        &self,
        g: &Grad<'_>,
        b: usize,
        hk: usize,
        j0: usize,
        j1: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        let sh = &self.plan.shape;
        let (n, d, dv, bq) = (j1 - j0, sh.dim_qk, sh.dim_v, self.plan.block_q);
        let mut dk = vec![0f32; n * d];
        let mut dvv = vec![0f32; n * dv];
        let mut t = Tiles::new(bq, n, d, dv);
        self.k.load_rows(b, hk, j0, 0, d, &mut t.k[..n * d]);
        self.v.load_rows(b, hk, j0, 0, dv, &mut t.v[..n * dv]);
        for h in hk * self.group()..(hk + 1) * self.group() {
            let mut i0 = 0;
            while i0 < sh.seq_q {
                let i1 = (i0 + bq).min(sh.seq_q);
                let rows = i1 - i0;
                let ranges: Vec<Range<usize>> = (i0..i1)
                    .map(|i| {
                        let r = self.keys(b, i);
                        r.start.max(j0)..r.end.min(j1)
                    })
                    .collect();
                if ranges.iter().all(|r| r.is_empty()) {
                    i0 = i1;
                    continue;
                }
                self.q.load_rows(b, h, i0, 0, d, &mut t.q[..rows * d]);
                g.d_o.load_rows(b, h, i0, 0, dv, &mut t.d_o[..rows * dv]);
                self.probabilities(g, b, h, i0, &ranges, j0..j1, &mut t);
                // dv += P^T do; dk += scale * dS^T q.
                mm(
                    n,
                    dv,
                    rows,
                    &mut dvv,
                    dv,
                    true,
                    (&t.p, 1, n),
                    (&t.d_o, dv, 1),
                    1.0,
                );
                mm(
                    n,
                    d,
                    rows,
                    &mut dk,
                    d,
                    true,
                    (&t.ds, 1, n),
                    (&t.q, d, 1),
                    self.scale,
                );
                i0 = i1;
            }
        }
        (dk, dvv)
    }

    /// dq of query rows `i0..i1` of (b, h).
    fn query_block(&self, g: &Grad<'_>, b: usize, h: usize, i0: usize, i1: usize) -> Vec<f32> {
        let sh = &self.plan.shape;
        let (rows, d, dv, bk) = (i1 - i0, sh.dim_qk, sh.dim_v, self.plan.block_kv);
        let hk = h / self.group();
        let mut dq = vec![0f32; rows * d];
        let ranges: Vec<Range<usize>> = (i0..i1).map(|i| self.keys(b, i)).collect();
        let span = Self::union(&ranges);
        if span.is_empty() {
            return dq;
        }
        let mut t = Tiles::new(rows, bk, d, dv);
        self.q.load_rows(b, h, i0, 0, d, &mut t.q);
        g.d_o.load_rows(b, h, i0, 0, dv, &mut t.d_o);
        let mut j0 = span.start;
        while j0 < span.end {
            let j1 = (j0 + bk).min(span.end);
            let n = j1 - j0;
            self.k.load_rows(b, hk, j0, 0, d, &mut t.k[..n * d]);
            self.v.load_rows(b, hk, j0, 0, dv, &mut t.v[..n * dv]);
            self.probabilities(g, b, h, i0, &ranges, j0..j1, &mut t);
            // dq += scale * dS k.
            mm(
                rows,
                d,
                n,
                &mut dq,
                d,
                true,
                (&t.ds, n, 1),
                (&t.k, d, 1),
                self.scale,
            );
            j0 = j1;
        }
        dq
    }
}

impl Prepared for SdpaPlan {
    fn workspace_size(&self) -> usize {
        0
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, _workspace: *mut u8) -> PluginResult<()> {
        let sh = self.shape;
        let scale = match self.scale {
            Scale::Value(v) => v,
            Scale::Tensor(uid) => *tensors.gather_f32(uid)?.first().ok_or_else(|| {
                PluginError::bad_param(format!("{NAME}: attn_scale tensor uid {uid} is empty"))
            })?,
        };
        let lengths = |uid: Option<i64>, max: usize| -> PluginResult<Vec<usize>> {
            match uid {
                None => Ok(vec![max; sh.batch]),
                Some(uid) => Ok(tensors
                    .gather_f32(uid)?
                    .iter()
                    .map(|&v| clamp_len(v as f64, max))
                    .collect()),
            }
        };
        let run = Run {
            plan: self,
            q: Bound::new(tensors, &self.q)?,
            k: Bound::new(tensors, &self.k)?,
            v: Bound::new(tensors, &self.v)?,
            bias: self
                .bias
                .as_ref()
                .map(|b| Bound::new(tensors, b))
                .transpose()?,
            scale,
            len_q: lengths(self.seq_len_q, sh.seq_q)?,
            len_kv: lengths(self.seq_len_kv, sh.seq_kv)?,
        };
        if run.len_q.len() != sh.batch || run.len_kv.len() != sh.batch {
            return Err(PluginError::bad_param(format!(
                "{NAME}: the seq_len tensors must hold {} lengths",
                sh.batch
            )));
        }
        let bq = self.block_q;
        let q_blocks = sh.seq_q.div_ceil(bq);
        match &self.kind {
            Kind::Forward { o, stats } => {
                let o = Bound::new(tensors, o)?;
                let stats = stats.as_ref().map(|s| Bound::new(tensors, s)).transpose()?;
                pool::for_each(sh.batch * sh.heads_q * q_blocks, |t| {
                    let (bh, qb) = (t / q_blocks, t % q_blocks);
                    let i0 = qb * bq;
                    let i1 = (i0 + bq).min(sh.seq_q);
                    run.forward_block(bh / sh.heads_q, bh % sh.heads_q, i0, i1, o, stats);
                });
            }
            Kind::Backward {
                o,
                d_o,
                stats,
                dq,
                dk,
                dv,
            } => {
                let o = Bound::new(tensors, o)?;
                let d_o = Bound::new(tensors, d_o)?;
                let lse = tensors.gather_f32(*stats)?;
                let rows = sh.batch * sh.heads_q * sh.seq_q;
                if lse.len() != rows {
                    return Err(PluginError::internal(format!(
                        "{NAME}: stats holds {} values for {rows} rows",
                        lse.len()
                    )));
                }
                let delta: Vec<f32> = pool::map_init(
                    rows,
                    1,
                    || (vec![0f32; sh.dim_v], vec![0f32; sh.dim_v]),
                    |(a, c), row| {
                        let (bh, i) = (row / sh.seq_q, row % sh.seq_q);
                        let (b, h) = (bh / sh.heads_q, bh % sh.heads_q);
                        o.load_rows(b, h, i, 0, sh.dim_v, a);
                        d_o.load_rows(b, h, i, 0, sh.dim_v, c);
                        a.iter().zip(c.iter()).map(|(x, y)| x * y).sum()
                    },
                );
                let g = Grad { d_o, lse, delta };
                let (dq, dk, dv) = (
                    Bound::new(tensors, dq)?,
                    Bound::new(tensors, dk)?,
                    Bound::new(tensors, dv)?,
                );
                let bk = self.block_kv;
                let kv_blocks = sh.seq_kv.div_ceil(bk);
                pool::for_each(sh.batch * sh.heads_kv * kv_blocks, |t| {
                    let (bh, kb) = (t / kv_blocks, t % kv_blocks);
                    let (b, hk) = (bh / sh.heads_kv, bh % sh.heads_kv);
                    let j0 = kb * bk;
                    let j1 = (j0 + bk).min(sh.seq_kv);
                    let (gk, gv) = run.key_block(&g, b, hk, j0, j1);
                    dk.store_rows(b, hk, j0, &gk);
                    dv.store_rows(b, hk, j0, &gv);
                });
                pool::for_each(sh.batch * sh.heads_q * q_blocks, |t| {
                    let (bh, qb) = (t / q_blocks, t % q_blocks);
                    let (b, h) = (bh / sh.heads_q, bh % sh.heads_q);
                    let i0 = qb * bq;
                    let i1 = (i0 + bq).min(sh.seq_q);
                    let gq = run.query_block(&g, b, h, i0, i1);
                    dq.store_rows(b, h, i0, &gq);
                });
            }
        }
        Ok(())
    }
}
