//! Scaled dot-product attention (cuDNN frontend's `sdpa` and `sdpa_backward`), stored as
//! [`GenericOp`]s.
//!
//! Forward, per batch `b` and query head `h` (key/value head `h / (H_q / H_kv)`, so that GQA and
//! MQA are the same operation):
//! `S = attn_scale * q k^T + bias`, masked entries `-inf`, `P = softmax(S)` row by row (in f32 or
//! better), `o = P v`, and, with `generate_stats`, `stats = max_j S + ln(sum_j exp(S - max))`, the
//! natural log-sum-exp of each row (cuDNN's convention). A row whose every key is masked writes
//! zeros to `o` and `-inf` to `stats`, never NaN.
//!
//! Backward, from `stats` (as the forward wrote it) and `o`: `P = exp(S - stats)` (0 where masked
//! or where `stats` is `-inf`), `dv = P^T do`, `dP = do v^T`, `D = rowsum(do * o)`,
//! `dS = P * (dP - D)`, `dq = attn_scale * dS k`, `dk = attn_scale * dS^T q`; `dk` and `dv` sum
//! over the query heads that share a key/value head.
//!
//! Ports (dims are logical `[batch, heads, sequence, head dim]`; any layout by strides, so
//! B,S,H,D storage is a stride permutation):
//! - `sdpa`: `q` [B, H_q, S_q, D], `k` [B, H_kv, S_kv, D], `v` [B, H_kv, S_kv, D_v], optional
//!   `attn_scale` (a by-value scalar or an f32 tensor of one element read at execute), `bias`
//!   [B or 1, H_q or 1, S_q or 1, S_kv], `seq_len_q` and `seq_len_kv` (f32 tensors [B, 1, 1, 1]
//!   holding whole numbers) → `o` [B, H_q, S_q, D_v] and, with `generate_stats`, `stats`
//!   [B, H_q, S_q, 1] (f32).
//! - `sdpa_backward`: the same inputs plus `o`, `do` (dims of `o`) and `stats` → `dq`, `dk`,
//!   `dv` (dims of `q`, `k`, `v`).
//!
//! Attributes: `attn_scale` (float; default 1, as in cuDNN; exclusive with the port),
//! `generate_stats` (bool, forward only), `diagonal_alignment` (`"top_left"`, the default, or
//! `"bottom_right"`), `diagonal_band_left_bound` (int ≥ 1) and `diagonal_band_right_bound`
//! (int ≥ 0). See [`SdpaMask`] for what the bounds keep.

use super::{AttrValue, GenericOp, OpSpec, Port};
use crate::{DataType, Error, OpGraph, Result, TensorDesc};
use std::collections::BTreeMap;
use std::ops::Range;

/// Where the diagonal of the causal and sliding-window masks sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagonalAlignment {
    /// Query row `i` sits on key column `i`.
    TopLeft,
    /// Query row `i` sits on key column `i + len_kv - len_q`: the last query sees the last key
    /// (lengths are the per-batch ones when `seq_len_q`/`seq_len_kv` are given).
    BottomRight,
}

impl DiagonalAlignment {
    /// The attribute value: `top_left` or `bottom_right`.
    pub fn name(self) -> &'static str {
        match self {
            DiagonalAlignment::TopLeft => "top_left",
            DiagonalAlignment::BottomRight => "bottom_right",
        }
    }
}

/// The diagonal band of keys each query row may attend to. With the diagonal of row `i` at key
/// column `c = i + shift` (`shift` from [`DiagonalAlignment`]), key `j` is kept when
/// `c - left < j <= c + right`; an absent bound is unbounded. A causal mask is
/// `right = Some(0)`; a sliding window of `w` keys (the diagonal included) adds `left = Some(w)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdpaMask {
    pub alignment: DiagonalAlignment,
    /// `diagonal_band_left_bound`: at least 1.
    pub left: Option<i64>,
    /// `diagonal_band_right_bound`: at least 0.
    pub right: Option<i64>,
}

impl SdpaMask {
    /// No mask but padding.
    pub const NONE: SdpaMask = SdpaMask {
        alignment: DiagonalAlignment::TopLeft,
        left: None,
        right: None,
    };

    /// The keys query row `row` attends to, for actual lengths `len_q` and `len_kv`: empty for a
    /// row at or past `len_q` or when the band misses every key.
    pub fn allowed_keys(&self, row: usize, len_q: usize, len_kv: usize) -> Range<usize> {
        if row >= len_q {
            return 0..0;
        }
        let shift = match self.alignment {
            DiagonalAlignment::TopLeft => 0,
            DiagonalAlignment::BottomRight => len_kv as i64 - len_q as i64,
        };
        let c = row as i64 + shift;
        let lo = self
            .left
            .map_or(0, |l| c.saturating_sub(l).saturating_add(1));
        let hi = self
            .right
            .map_or(len_kv as i64, |r| c.saturating_add(r).saturating_add(1));
        let lo = lo.clamp(0, len_kv as i64) as usize;
        let hi = hi.clamp(0, len_kv as i64) as usize;
        if lo >= hi {
            0..0
        } else {
            lo..hi
        }
    }

    fn from_attributes(attributes: &BTreeMap<String, AttrValue>, what: &str) -> Result<SdpaMask> {
        let alignment = match attributes.get("diagonal_alignment") {
            None => DiagonalAlignment::TopLeft,
            Some(AttrValue::Str(s)) if s == "top_left" => DiagonalAlignment::TopLeft,
            Some(AttrValue::Str(s)) if s == "bottom_right" => DiagonalAlignment::BottomRight,
            Some(v) => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'diagonal_alignment' is {v:?}; it must be \"top_left\" \
                     or \"bottom_right\""
                )))
            }
        };
        let bound = |name: &str, min: i64| -> Result<Option<i64>> {
            match attributes.get(name) {
                None => Ok(None),
                Some(AttrValue::Int(v)) if *v >= min => Ok(Some(*v)),
                Some(v) => Err(Error::BadParam(format!(
                    "{what}: attribute '{name}' is {v:?}; it must be an int of at least {min}"
                ))),
            }
        };
        Ok(SdpaMask {
            alignment,
            left: bound("diagonal_band_left_bound", 1)?,
            right: bound("diagonal_band_right_bound", 0)?,
        })
    }

    fn write(&self, mut op: GenericOp) -> GenericOp {
        if self.alignment != DiagonalAlignment::TopLeft {
            op = op.attribute(
                "diagonal_alignment",
                AttrValue::Str(self.alignment.name().into()),
            );
        }
        if let Some(l) = self.left {
            op = op.attribute("diagonal_band_left_bound", AttrValue::Int(l));
        }
        if let Some(r) = self.right {
            op = op.attribute("diagonal_band_right_bound", AttrValue::Int(r));
        }
        op
    }
}

/// Where a node's attention scale comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttnScale {
    /// The `attn_scale` attribute (1 when absent).
    Value(f64),
    /// The `attn_scale` input port: a by-value scalar, or an f32 tensor of one element whose
    /// value is read at execute.
    Tensor(i64),
}

/// What `sdpa` and `sdpa_backward` share: the operands, the scale and the masks.
#[derive(Debug, Clone, PartialEq)]
pub struct SdpaInputs {
    pub q: i64,
    pub k: i64,
    pub v: i64,
    pub attn_scale: AttnScale,
    pub bias: Option<i64>,
    pub seq_len_q: Option<i64>,
    pub seq_len_kv: Option<i64>,
    pub mask: SdpaMask,
}

/// The sizes of an attention node, from its operands' dims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdpaShape {
    pub batch: usize,
    pub heads_q: usize,
    pub heads_kv: usize,
    pub seq_q: usize,
    pub seq_kv: usize,
    /// Head dim of q and k.
    pub dim_qk: usize,
    /// Head dim of v and o.
    pub dim_v: usize,
}

impl SdpaShape {
    /// Query heads per key/value head.
    pub fn group(&self) -> usize {
        self.heads_q / self.heads_kv.max(1)
    }
    /// Dims of `o`.
    pub fn o_dims(&self) -> Vec<i64> {
        [self.batch, self.heads_q, self.seq_q, self.dim_v]
            .map(|d| d as i64)
            .to_vec()
    }
    /// Dims of `stats`.
    pub fn stats_dims(&self) -> Vec<i64> {
        [self.batch, self.heads_q, self.seq_q, 1]
            .map(|d| d as i64)
            .to_vec()
    }
}

fn port(side: &BTreeMap<String, i64>, name: &str) -> Option<i64> {
    side.get(name).copied()
}

fn need(side: &BTreeMap<String, i64>, name: &str, op: &str, what: &str) -> Result<i64> {
    port(side, name).ok_or_else(|| {
        Error::BadParam(format!("{what}: required port '{name}' of {op} is missing"))
    })
}

impl SdpaInputs {
    fn from_generic(op: &GenericOp, what: &str) -> Result<SdpaInputs> {
        let attn_scale = match (op.inputs.get("attn_scale"), op.attributes.get("attn_scale")) {
            (Some(&uid), None) => AttnScale::Tensor(uid),
            (None, Some(AttrValue::Float(v))) => AttnScale::Value(*v),
            (None, None) => AttnScale::Value(1.0),
            (None, Some(v)) => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'attn_scale' is a {}; it must be a float",
                    v.type_name()
                )))
            }
            (Some(_), Some(_)) => {
                return Err(Error::BadParam(format!(
                    "{what}: attn_scale is given both as the 'attn_scale' input and as an \
                     attribute; give one"
                )))
            }
        };
        Ok(SdpaInputs {
            q: need(&op.inputs, "q", &op.op, what)?,
            k: need(&op.inputs, "k", &op.op, what)?,
            v: need(&op.inputs, "v", &op.op, what)?,
            attn_scale,
            bias: port(&op.inputs, "bias"),
            seq_len_q: port(&op.inputs, "seq_len_q"),
            seq_len_kv: port(&op.inputs, "seq_len_kv"),
            mask: SdpaMask::from_attributes(&op.attributes, what)?,
        })
    }

    fn write(&self, mut op: GenericOp) -> GenericOp {
        op = op.input("q", self.q).input("k", self.k).input("v", self.v);
        match self.attn_scale {
            AttnScale::Tensor(uid) => op = op.input("attn_scale", uid),
            AttnScale::Value(v) => op = op.attribute("attn_scale", AttrValue::Float(v)),
        }
        for (name, uid) in [
            ("bias", self.bias),
            ("seq_len_q", self.seq_len_q),
            ("seq_len_kv", self.seq_len_kv),
        ] {
            if let Some(uid) = uid {
                op = op.input(name, uid);
            }
        }
        self.mask.write(op)
    }

    /// The scale when it is known before execute (the attribute or a by-value scalar); `None`
    /// for a tensor read at execute.
    pub fn static_scale(&self, graph: &OpGraph, node: &str) -> Result<Option<f64>> {
        match self.attn_scale {
            AttnScale::Value(v) => Ok(Some(v)),
            AttnScale::Tensor(uid) => Ok(graph.tensor_for(uid, node)?.scalar),
        }
    }

    /// The sizes, from the dims of q, k and v (checked by [`OpSpec::validate`]).
    pub fn shape(&self, graph: &OpGraph, node: &str, what: &str) -> Result<SdpaShape> {
        let t = |uid| graph.tensor_for(uid, node);
        let (q, k, v) = (t(self.q)?, t(self.k)?, t(self.v)?);
        for (name, x) in [("q", q), ("k", k), ("v", v)] {
            if x.scalar.is_some() || x.dims.len() != 4 || x.dims.iter().any(|&d| d < 1) {
                return Err(Error::BadParam(format!(
                    "{what}: {name} {} has dims {:?}; it must be a tensor of dims [batch, heads, \
                     sequence, head dim], each at least 1",
                    x.label(),
                    x.dims
                )));
            }
        }
        let s = SdpaShape {
            batch: q.dims[0] as usize,
            heads_q: q.dims[1] as usize,
            heads_kv: k.dims[1] as usize,
            seq_q: q.dims[2] as usize,
            seq_kv: k.dims[2] as usize,
            dim_qk: q.dims[3] as usize,
            dim_v: v.dims[3] as usize,
        };
        if k.dims[0] != q.dims[0] || k.dims[3] != q.dims[3] {
            return Err(Error::BadParam(format!(
                "{what}: k {} has dims {:?}; for q {:?} it must be [{}, heads, sequence, {}]",
                k.label(),
                k.dims,
                q.dims,
                q.dims[0],
                q.dims[3]
            )));
        }
        if v.dims[..3] != k.dims[..3] {
            return Err(Error::BadParam(format!(
                "{what}: v {} has dims {:?}; its batch, heads and sequence must be k's {:?}",
                v.label(),
                v.dims,
                &k.dims[..3]
            )));
        }
        if !s.heads_q.is_multiple_of(s.heads_kv) {
            return Err(Error::BadParam(format!(
                "{what}: q has {} heads and k/v {}; the query heads must be a multiple of the \
                 key/value heads (GQA/MQA)",
                s.heads_q, s.heads_kv
            )));
        }
        Ok(s)
    }

    /// Checks the optional operands and the data types against `shape`; errors name `what`.
    fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<SdpaShape> {
        let shape = self.shape(graph, node, what)?;
        let t = |uid| graph.tensor_for(uid, node);
        let q = t(self.q)?;
        for (name, uid) in [("k", self.k), ("v", self.v)] {
            let x = t(uid)?;
            if x.data_type != q.data_type {
                return Err(Error::BadParam(format!(
                    "{what}: {name} {} is {} but q is {}; q, k and v must share a data type",
                    x.label(),
                    x.data_type,
                    q.data_type
                )));
            }
        }
        if let AttnScale::Tensor(uid) = self.attn_scale {
            let s = t(uid)?;
            if s.scalar.is_none() && (s.element_count() != Some(1) || s.data_type != DataType::F32)
            {
                return Err(Error::BadParam(format!(
                    "{what}: attn_scale {} must be a by-value scalar or an f32 tensor of one \
                     element (dims [1, 1, 1, 1])",
                    s.label()
                )));
            }
            if let Some(v) = s.scalar {
                check_scale(v, what)?;
            }
        }
        if let AttnScale::Value(v) = self.attn_scale {
            check_scale(v, what)?;
        }
        if let Some(uid) = self.bias {
            let b = t(uid)?;
            let ok = b.scalar.is_none()
                && b.dims.len() == 4
                && (b.dims[0] == 1 || b.dims[0] == shape.batch as i64)
                && (b.dims[1] == 1 || b.dims[1] == shape.heads_q as i64)
                && (b.dims[2] == 1 || b.dims[2] == shape.seq_q as i64)
                && b.dims[3] == shape.seq_kv as i64;
            if !ok {
                return Err(Error::BadParam(format!(
                    "{what}: bias {} has dims {:?}; it must be a tensor of dims [{} or 1, {} or \
                     1, {} or 1, {}]",
                    b.label(),
                    b.dims,
                    shape.batch,
                    shape.heads_q,
                    shape.seq_q,
                    shape.seq_kv
                )));
            }
        }
        for (name, uid) in [
            ("seq_len_q", self.seq_len_q),
            ("seq_len_kv", self.seq_len_kv),
        ] {
            let Some(uid) = uid else { continue };
            let s = t(uid)?;
            let want = [shape.batch as i64, 1, 1, 1];
            if s.scalar.is_some() || s.dims != want || s.data_type != DataType::F32 {
                return Err(Error::BadParam(format!(
                    "{what}: {name} {} must be an f32 tensor of dims {want:?} (one length per \
                     batch)",
                    s.label()
                )));
            }
        }
        Ok(shape)
    }
}

fn check_scale(v: f64, what: &str) -> Result<()> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(Error::BadParam(format!(
            "{what}: attn_scale is {v}; it must be finite"
        )))
    }
}

fn expect_tensor(what: &str, port: &str, t: &TensorDesc, dims: &[i64]) -> Result<()> {
    if t.scalar.is_some() {
        return Err(Error::BadParam(format!(
            "{what}: {port} {} is a by-value scalar; it must be a tensor",
            t.label()
        )));
    }
    super::expect_dims(what, t, dims)
}

/// A typed view of an `sdpa` node.
#[derive(Debug, Clone, PartialEq)]
pub struct SdpaOp {
    pub inputs: SdpaInputs,
    pub o: i64,
    /// Bound exactly when `generate_stats` is true.
    pub stats: Option<i64>,
}

impl SdpaOp {
    /// The typed view of `op`, an `sdpa` node that passed [`super::check_generic`]. Refuses a
    /// missing port, bad mask attributes, the scale given twice and stats bound without
    /// `generate_stats` (or the reverse); errors name `what`.
    pub fn from_generic(op: &GenericOp, what: &str) -> Result<SdpaOp> {
        let generate_stats = match op.attributes.get("generate_stats") {
            None => false,
            Some(AttrValue::Bool(b)) => *b,
            Some(v) => {
                return Err(Error::BadParam(format!(
                    "{what}: attribute 'generate_stats' is {v:?}; it must be a bool"
                )))
            }
        };
        let stats = port(&op.outputs, "stats");
        match (generate_stats, stats) {
            (true, None) => {
                return Err(Error::BadParam(format!(
                    "{what}: generate_stats is true but output port 'stats' is not bound"
                )))
            }
            (false, Some(_)) => {
                return Err(Error::BadParam(format!(
                    "{what}: output port 'stats' is bound but generate_stats is false; set it"
                )))
            }
            _ => {}
        }
        Ok(SdpaOp {
            inputs: SdpaInputs::from_generic(op, what)?,
            o: need(&op.outputs, "o", "sdpa", what)?,
            stats,
        })
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        let mut op = self
            .inputs
            .write(GenericOp::new(Sdpa.name()))
            .output("o", self.o);
        op = op.attribute("generate_stats", AttrValue::Bool(self.stats.is_some()));
        if let Some(s) = self.stats {
            op = op.output("stats", s);
        }
        op
    }
}

/// A typed view of an `sdpa_backward` node.
#[derive(Debug, Clone, PartialEq)]
pub struct SdpaBackwardOp {
    pub inputs: SdpaInputs,
    pub o: i64,
    pub d_o: i64,
    pub stats: i64,
    pub dq: i64,
    pub dk: i64,
    pub dv: i64,
}

impl SdpaBackwardOp {
    /// The typed view of `op`, an `sdpa_backward` node that passed [`super::check_generic`];
    /// errors name `what`.
    pub fn from_generic(op: &GenericOp, what: &str) -> Result<SdpaBackwardOp> {
        let n = "sdpa_backward";
        Ok(SdpaBackwardOp {
            inputs: SdpaInputs::from_generic(op, what)?,
            o: need(&op.inputs, "o", n, what)?,
            d_o: need(&op.inputs, "do", n, what)?,
            stats: need(&op.inputs, "stats", n, what)?,
            dq: need(&op.outputs, "dq", n, what)?,
            dk: need(&op.outputs, "dk", n, what)?,
            dv: need(&op.outputs, "dv", n, what)?,
        })
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        self.inputs
            .write(GenericOp::new(SdpaBackward.name()))
            .input("o", self.o)
            .input("do", self.d_o)
            .input("stats", self.stats)
            .output("dq", self.dq)
            .output("dk", self.dk)
            .output("dv", self.dv)
    }
}

/// The [`OpSpec`] of `sdpa`.
pub struct Sdpa;

static FWD_INPUTS: [Port; 7] = [
    Port::required("q"),
    Port::required("k"),
    Port::required("v"),
    Port::optional("attn_scale"),
    Port::optional("bias"),
    Port::optional("seq_len_q"),
    Port::optional("seq_len_kv"),
];
static FWD_OUTPUTS: [Port; 2] = [Port::required("o"), Port::optional("stats")];

static MASK_ATTRIBUTES: [(&str, &str); 4] = [
    ("attn_scale", "float"),
    ("diagonal_alignment", "str"),
    ("diagonal_band_left_bound", "int"),
    ("diagonal_band_right_bound", "int"),
];
static FWD_ATTRIBUTES: [(&str, &str); 5] = [
    MASK_ATTRIBUTES[0],
    MASK_ATTRIBUTES[1],
    MASK_ATTRIBUTES[2],
    MASK_ATTRIBUTES[3],
    ("generate_stats", "bool"),
];

fn required_input(
    input: &dyn Fn(&str) -> Option<Vec<i64>>,
    name: &str,
    op: &str,
    what: &str,
) -> Result<Vec<i64>> {
    let d = input(name).ok_or_else(|| {
        Error::BadParam(format!(
            "{what}: required input port '{name}' of {op} is missing"
        ))
    })?;
    if d.len() != 4 {
        return Err(Error::BadParam(format!(
            "{what}: {name} has dims {d:?}; it must have 4 (batch, heads, sequence, head dim)"
        )));
    }
    Ok(d)
}

impl OpSpec for Sdpa {
    fn name(&self) -> &'static str {
        "sdpa"
    }

    fn inputs(&self) -> &'static [Port] {
        &FWD_INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &FWD_OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &FWD_ATTRIBUTES
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let s = SdpaOp::from_generic(op, what)?;
        let shape = s.inputs.validate(graph, node, what)?;
        expect_tensor(what, "o", graph.tensor_for(s.o, node)?, &shape.o_dims())?;
        if let Some(uid) = s.stats {
            let st = graph.tensor_for(uid, node)?;
            expect_tensor(what, "stats", st, &shape.stats_dims())?;
            if st.data_type != DataType::F32 {
                return Err(Error::BadParam(format!(
                    "{what}: stats {} is {}; it must be f32",
                    st.label(),
                    st.data_type
                )));
            }
        }
        Ok(())
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        let q = required_input(input, "q", "sdpa", what)?;
        let v = required_input(input, "v", "sdpa", what)?;
        let mut out = vec![("o", vec![q[0], q[1], q[2], v[3]])];
        if op.outputs.contains_key("stats") {
            out.push(("stats", vec![q[0], q[1], q[2], 1]));
        }
        Ok(out)
    }
}

/// The [`OpSpec`] of `sdpa_backward`.
pub struct SdpaBackward;

static BWD_INPUTS: [Port; 10] = [
    Port::required("q"),
    Port::required("k"),
    Port::required("v"),
    Port::required("o"),
    Port::required("do"),
    Port::required("stats"),
    Port::optional("attn_scale"),
    Port::optional("bias"),
    Port::optional("seq_len_q"),
    Port::optional("seq_len_kv"),
];
static BWD_OUTPUTS: [Port; 3] = [
    Port::required("dq"),
    Port::required("dk"),
    Port::required("dv"),
];

impl OpSpec for SdpaBackward {
    fn name(&self) -> &'static str {
        "sdpa_backward"
    }

    fn inputs(&self) -> &'static [Port] {
        &BWD_INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &BWD_OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &MASK_ATTRIBUTES
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let s = SdpaBackwardOp::from_generic(op, what)?;
        let shape = s.inputs.validate(graph, node, what)?;
        let t = |uid| graph.tensor_for(uid, node);
        expect_tensor(what, "o", t(s.o)?, &shape.o_dims())?;
        expect_tensor(what, "do", t(s.d_o)?, &shape.o_dims())?;
        let st = t(s.stats)?;
        expect_tensor(what, "stats", st, &shape.stats_dims())?;
        if st.data_type != DataType::F32 {
            return Err(Error::BadParam(format!(
                "{what}: stats {} is {}; it must be f32",
                st.label(),
                st.data_type
            )));
        }
        for (port, grad, of) in [
            ("dq", s.dq, s.inputs.q),
            ("dk", s.dk, s.inputs.k),
            ("dv", s.dv, s.inputs.v),
        ] {
            expect_tensor(what, port, t(grad)?, &t(of)?.dims)?;
        }
        Ok(())
    }

    fn infer_output_dims(
        &self,
        _op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        let n = "sdpa_backward";
        Ok(vec![
            ("dq", required_input(input, "q", n, what)?),
            ("dk", required_input(input, "k", n, what)?),
            ("dv", required_input(input, "v", n, what)?),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band(alignment: DiagonalAlignment, left: Option<i64>, right: Option<i64>) -> SdpaMask {
        SdpaMask {
            alignment,
            left,
            right,
        }
    }

    #[test]
    fn masks_keep_the_documented_keys() {
        use DiagonalAlignment::*;
        assert_eq!(SdpaMask::NONE.allowed_keys(2, 4, 6), 0..6);
        assert_eq!(SdpaMask::NONE.allowed_keys(4, 4, 6), 0..0);
        let causal = band(TopLeft, None, Some(0));
        assert_eq!(causal.allowed_keys(0, 4, 6), 0..1);
        assert_eq!(causal.allowed_keys(3, 4, 6), 0..4);
        let causal_br = band(BottomRight, None, Some(0));
        assert_eq!(causal_br.allowed_keys(0, 4, 6), 0..3);
        assert_eq!(causal_br.allowed_keys(3, 4, 6), 0..6);
        // More queries than keys: the first rows of a bottom-right causal mask see nothing.
        assert_eq!(causal_br.allowed_keys(0, 6, 4), 0..0);
        assert_eq!(causal_br.allowed_keys(2, 6, 4), 0..1);
        let window = band(TopLeft, Some(2), Some(0));
        assert_eq!(window.allowed_keys(3, 4, 6), 2..4);
        let right = band(TopLeft, Some(1), Some(2));
        assert_eq!(right.allowed_keys(5, 6, 6), 5..6);
    }
}
