//! Builder methods of the operations stored as generic nodes (`kiln_core::ops::SPECS`), with
//! their attributes: one section per operation. Each method is a thin typed layer over
//! [`Graph::generic_op`]; the operation's rules live in its `kiln_core::ops` module.

use crate::graph::Graph;
use crate::tensor::Tensor;
use kiln_core::ops::batchnorm::Batchnorm;
use kiln_core::ops::batchnorm_backward::BATCHNORM_BACKWARD;
use kiln_core::ops::batchnorm_inference::BatchnormInference;
use kiln_core::ops::layernorm::Layernorm;
use kiln_core::ops::layernorm_backward::LAYERNORM_BACKWARD;
use kiln_core::ops::rmsnorm::Rmsnorm;
use kiln_core::ops::rmsnorm_backward::RMSNORM_BACKWARD;
use kiln_core::ops::sdpa::{Sdpa, SdpaBackward};
use kiln_core::{AttrValue, OpSpec, Result};
use std::collections::BTreeMap;

pub use kiln_core::ops::rmsnorm::NormPhase;
pub use kiln_core::ops::sdpa::DiagonalAlignment;

/// Attributes of an rmsnorm node (cuDNN frontend's `Rmsnorm_attributes`).
#[derive(Debug, Clone)]
pub struct RmsnormAttributes {
    name: String,
    phase: NormPhase,
    epsilon: Option<RmsnormEpsilon>,
    bias: Option<Tensor>,
}

#[derive(Debug, Clone)]
enum RmsnormEpsilon {
    Value(f64),
    Tensor(Tensor),
}

impl Default for RmsnormAttributes {
    fn default() -> Self {
        RmsnormAttributes::new()
    }
}

impl RmsnormAttributes {
    /// Inference phase (only `y`), no bias; epsilon must be set.
    pub fn new() -> Self {
        RmsnormAttributes {
            name: String::new(),
            phase: NormPhase::Inference,
            epsilon: None,
            bias: None,
        }
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Training also writes `inv_rms`; inference writes `y` only.
    pub fn forward_phase(mut self, phase: NormPhase) -> Self {
        self.phase = phase;
        self
    }
    /// Epsilon as a value (stored as the node's `epsilon` attribute).
    pub fn epsilon(mut self, v: f64) -> Self {
        self.epsilon = Some(RmsnormEpsilon::Value(v));
        self
    }
    /// Epsilon as a by-value scalar tensor ([`Graph::scalar`]), as cuDNN frontend takes it.
    pub fn epsilon_tensor(mut self, t: &Tensor) -> Self {
        self.epsilon = Some(RmsnormEpsilon::Tensor(t.clone()));
        self
    }
    /// Adds `bias` (dims of `scale`) after scaling.
    pub fn bias(mut self, t: &Tensor) -> Self {
        self.bias = Some(t.clone());
        self
    }
}

/// The outputs of [`Graph::rmsnorm`].
#[derive(Debug, Clone)]
pub struct RmsnormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// `1 / sqrt(mean(x^2) + epsilon)` per sample, dims `[N, 1, ...]`; training only.
    pub inv_rms: Option<Tensor>,
}

impl Graph {
    /// Adds an RMS normalization of `x` [N, ...] over every dim but the first, scaled by `scale`
    /// [1, ...] (plus the optional bias). Returns `y` and, in the training phase, `inv_rms`
    /// (both virtual until `set_output(true)`).
    ///
    /// Refuses an attribute set without epsilon; the rest (dims, epsilon's value) is checked by
    /// [`Graph::validate`].
    pub fn rmsnorm(
        &mut self,
        x: &Tensor,
        scale: &Tensor,
        attrs: RmsnormAttributes,
    ) -> Result<RmsnormOutputs> {
        let mut inputs = vec![("x", x), ("scale", scale)];
        if let Some(b) = &attrs.bias {
            inputs.push(("bias", b));
        }
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "forward_phase".to_string(),
            AttrValue::Str(attrs.phase.name().into()),
        );
        match &attrs.epsilon {
            Some(RmsnormEpsilon::Value(v)) => {
                attributes.insert("epsilon".to_string(), AttrValue::Float(*v));
            }
            Some(RmsnormEpsilon::Tensor(t)) => inputs.push(("epsilon", t)),
            None => {
                return Err(kiln_core::Error::BadParam(
                    "rmsnorm: set epsilon (RmsnormAttributes::epsilon or epsilon_tensor)".into(),
                ))
            }
        }
        let outputs: &[&str] = match attrs.phase {
            NormPhase::Training => &["y", "inv_rms"],
            NormPhase::Inference => &["y"],
        };
        let mut made = self
            .generic_op(Rmsnorm.name(), &attrs.name, &inputs, outputs, attributes)?
            .into_iter();
        let y = made
            .next()
            .ok_or_else(|| kiln_core::Error::Internal("rmsnorm: no y".into()))?;
        Ok(RmsnormOutputs {
            y,
            inv_rms: made.next(),
        })
    }
}

/// A scalar operand of a norm (epsilon, momentum): a value or a by-value scalar tensor.
#[derive(Debug, Clone)]
enum ScalarArg {
    Value(f64),
    Tensor(Tensor),
}

impl ScalarArg {
    /// Binds the scalar as the attribute or the input port `port`.
    fn bind<'t>(
        &'t self,
        port: &'static str,
        inputs: &mut Vec<(&'static str, &'t Tensor)>,
        attributes: &mut BTreeMap<String, AttrValue>,
    ) {
        match self {
            ScalarArg::Value(v) => {
                attributes.insert(port.to_string(), AttrValue::Float(*v));
            }
            ScalarArg::Tensor(t) => inputs.push((port, t)),
        }
    }
}

/// Binds epsilon, refusing an attribute set without one (`op` and `setter` name the fix).
fn bind_epsilon<'t>(
    epsilon: &'t Option<ScalarArg>,
    op: &str,
    setter: &str,
    inputs: &mut Vec<(&'static str, &'t Tensor)>,
    attributes: &mut BTreeMap<String, AttrValue>,
) -> Result<()> {
    match epsilon {
        Some(e) => {
            e.bind("epsilon", inputs, attributes);
            Ok(())
        }
        None => Err(kiln_core::Error::BadParam(format!(
            "{op}: set epsilon ({setter}::epsilon or epsilon_tensor)"
        ))),
    }
}

/// The next output of a node, or an internal error naming it.
fn next_output(made: &mut std::vec::IntoIter<Tensor>, op: &str, port: &str) -> Result<Tensor> {
    made.next()
        .ok_or_else(|| kiln_core::Error::Internal(format!("{op}: no {port}")))
}

/// Attributes of a layernorm node (cuDNN frontend's `Layernorm_attributes`).
#[derive(Debug, Clone)]
pub struct LayernormAttributes {
    name: String,
    phase: NormPhase,
    epsilon: Option<ScalarArg>,
}

impl Default for LayernormAttributes {
    fn default() -> Self {
        LayernormAttributes::new()
    }
}

impl LayernormAttributes {
    /// Inference phase (only `y`); epsilon must be set.
    pub fn new() -> Self {
        LayernormAttributes {
            name: String::new(),
            phase: NormPhase::Inference,
            epsilon: None,
        }
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Training also writes `mean` and `inv_variance`; inference writes `y` only.
    pub fn forward_phase(mut self, phase: NormPhase) -> Self {
        self.phase = phase;
        self
    }
    /// Epsilon as a value (stored as the node's `epsilon` attribute).
    pub fn epsilon(mut self, v: f64) -> Self {
        self.epsilon = Some(ScalarArg::Value(v));
        self
    }
    /// Epsilon as a by-value scalar tensor ([`Graph::scalar`]), as cuDNN frontend takes it.
    pub fn epsilon_tensor(mut self, t: &Tensor) -> Self {
        self.epsilon = Some(ScalarArg::Tensor(t.clone()));
        self
    }
}

/// The outputs of [`Graph::layernorm`].
#[derive(Debug, Clone)]
pub struct LayernormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// The mean of each sample, dims `[N, 1, ...]`; training only.
    pub mean: Option<Tensor>,
    /// `1 / sqrt(variance + epsilon)` of each sample, dims `[N, 1, ...]`; training only.
    pub inv_variance: Option<Tensor>,
}

/// Attributes of a batchnorm (training forward) node (cuDNN frontend's `Batchnorm_attributes`).
#[derive(Debug, Clone, Default)]
pub struct BatchnormAttributes {
    name: String,
    epsilon: Option<ScalarArg>,
    running: Option<(Tensor, Tensor, ScalarArg)>,
}

impl BatchnormAttributes {
    /// No running statistics; epsilon must be set.
    pub fn new() -> Self {
        BatchnormAttributes::default()
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Epsilon as a value (stored as the node's `epsilon` attribute).
    pub fn epsilon(mut self, v: f64) -> Self {
        self.epsilon = Some(ScalarArg::Value(v));
        self
    }
    /// Epsilon as a by-value scalar tensor ([`Graph::scalar`]), as cuDNN frontend takes it.
    pub fn epsilon_tensor(mut self, t: &Tensor) -> Self {
        self.epsilon = Some(ScalarArg::Tensor(t.clone()));
        self
    }
    /// The previous running mean and variance (`[1, C, 1, ...]`) and the momentum (a value in
    /// [0, 1]): the node then also writes `next_running_mean` and `next_running_var`.
    pub fn previous_running_stats(mut self, mean: &Tensor, var: &Tensor, momentum: f64) -> Self {
        self.running = Some((mean.clone(), var.clone(), ScalarArg::Value(momentum)));
        self
    }
    /// [`BatchnormAttributes::previous_running_stats`] with the momentum as a by-value scalar
    /// tensor, as cuDNN frontend's `set_previous_running_stats` takes it.
    pub fn previous_running_stats_tensor(
        mut self,
        mean: &Tensor,
        var: &Tensor,
        momentum: &Tensor,
    ) -> Self {
        self.running = Some((
            mean.clone(),
            var.clone(),
            ScalarArg::Tensor(momentum.clone()),
        ));
        self
    }
}

/// The outputs of [`Graph::batchnorm`].
#[derive(Debug, Clone)]
pub struct BatchnormOutputs {
    /// The normalized tensor, dims of `x`.
    pub y: Tensor,
    /// The mean of each channel, dims `[1, C, 1, ...]`.
    pub mean: Tensor,
    /// `1 / sqrt(variance + epsilon)` of each channel (biased variance), dims `[1, C, 1, ...]`.
    pub inv_variance: Tensor,
    /// The updated running mean; with previous running statistics only.
    pub next_running_mean: Option<Tensor>,
    /// The updated running variance (unbiased); with previous running statistics only.
    pub next_running_var: Option<Tensor>,
}

/// Attributes of a batchnorm_inference node (cuDNN frontend's
/// `Batchnorm_inference_attributes`).
#[derive(Debug, Clone, Default)]
pub struct BatchnormInferenceAttributes {
    name: String,
}

impl BatchnormInferenceAttributes {
    /// No name.
    pub fn new() -> Self {
        BatchnormInferenceAttributes::default()
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

/// Attributes of a batchnorm_backward or layernorm_backward node (cuDNN frontend's
/// `Batchnorm_backward_attributes` / `Layernorm_backward_attributes`).
#[derive(Debug, Clone, Default)]
pub struct NormBackwardAttributes {
    name: String,
    saved: Option<(Tensor, Tensor)>,
}

impl NormBackwardAttributes {
    /// The saved statistics must be set.
    pub fn new() -> Self {
        NormBackwardAttributes::default()
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// The forward's `mean` and `inv_variance` outputs.
    pub fn saved_mean_and_inv_variance(mut self, mean: &Tensor, inv_variance: &Tensor) -> Self {
        self.saved = Some((mean.clone(), inv_variance.clone()));
        self
    }
}

/// Attributes of a batchnorm_backward node.
pub type BatchnormBackwardAttributes = NormBackwardAttributes;
/// Attributes of a layernorm_backward node.
pub type LayernormBackwardAttributes = NormBackwardAttributes;

/// Attributes of an rmsnorm_backward node (cuDNN frontend's `Rmsnorm_backward_attributes`).
#[derive(Debug, Clone, Default)]
pub struct RmsnormBackwardAttributes {
    name: String,
    has_dbias: bool,
}

impl RmsnormBackwardAttributes {
    /// No `dbias` output.
    pub fn new() -> Self {
        RmsnormBackwardAttributes::default()
    }
    /// Names the node.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Also writes `dbias` (the forward had a bias).
    pub fn has_dbias(mut self, yes: bool) -> Self {
        self.has_dbias = yes;
        self
    }
}

/// The outputs of the norm backward methods.
#[derive(Debug, Clone)]
pub struct NormBackwardOutputs {
    /// The gradient of `x`, dims of `x`.
    pub dx: Tensor,
    /// The gradient of `scale`, dims of `scale`.
    pub dscale: Tensor,
    /// The gradient of the bias, dims of `scale`; always for batchnorm and layernorm, with
    /// `has_dbias` for rmsnorm.
    pub dbias: Option<Tensor>,
}

impl Graph {
    /// Adds a layer normalization of `x` [N, ...] over every dim but the first, scaled by
    /// `scale` and shifted by `bias` (both [1, ...]). Returns `y` and, in the training phase,
    /// `mean` and `inv_variance` (virtual until `set_output(true)`).
    ///
    /// Refuses an attribute set without epsilon; the rest is checked by [`Graph::validate`].
    pub fn layernorm(
        &mut self,
        x: &Tensor,
        scale: &Tensor,
        bias: &Tensor,
        attrs: LayernormAttributes,
    ) -> Result<LayernormOutputs> {
        let mut inputs = vec![("x", x), ("scale", scale), ("bias", bias)];
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "forward_phase".to_string(),
            AttrValue::Str(attrs.phase.name().into()),
        );
        bind_epsilon(
            &attrs.epsilon,
            "layernorm",
            "LayernormAttributes",
            &mut inputs,
            &mut attributes,
        )?;
        let outputs: &[&str] = match attrs.phase {
            NormPhase::Training => &["y", "mean", "inv_variance"],
            NormPhase::Inference => &["y"],
        };
        let mut made = self
            .generic_op(Layernorm.name(), &attrs.name, &inputs, outputs, attributes)?
            .into_iter();
        Ok(LayernormOutputs {
            y: next_output(&mut made, "layernorm", "y")?,
            mean: made.next(),
            inv_variance: made.next(),
        })
    }

    /// Adds a batch normalization in training of `x` [N, C, ...] per channel (dim 1) over every
    /// other dim, scaled by `scale` and shifted by `bias` ([1, C, 1, ...]). Returns `y`, the
    /// batch `mean` and `inv_variance` and, with previous running statistics, the next ones.
    ///
    /// Refuses an attribute set without epsilon; the rest is checked by [`Graph::validate`].
    pub fn batchnorm(
        &mut self,
        x: &Tensor,
        scale: &Tensor,
        bias: &Tensor,
        attrs: BatchnormAttributes,
    ) -> Result<BatchnormOutputs> {
        let mut inputs = vec![("x", x), ("scale", scale), ("bias", bias)];
        let mut attributes = BTreeMap::new();
        bind_epsilon(
            &attrs.epsilon,
            "batchnorm",
            "BatchnormAttributes",
            &mut inputs,
            &mut attributes,
        )?;
        let mut outputs = vec!["y", "mean", "inv_variance"];
        if let Some((mean, var, momentum)) = &attrs.running {
            inputs.push(("prev_running_mean", mean));
            inputs.push(("prev_running_var", var));
            momentum.bind("momentum", &mut inputs, &mut attributes);
            outputs.extend(["next_running_mean", "next_running_var"]);
        }
        let mut made = self
            .generic_op(Batchnorm.name(), &attrs.name, &inputs, &outputs, attributes)?
            .into_iter();
        Ok(BatchnormOutputs {
            y: next_output(&mut made, "batchnorm", "y")?,
            mean: next_output(&mut made, "batchnorm", "mean")?,
            inv_variance: next_output(&mut made, "batchnorm", "inv_variance")?,
            next_running_mean: made.next(),
            next_running_var: made.next(),
        })
    }

    /// Adds a batch normalization of `x` [N, C, ...] with given per-channel statistics and
    /// parameters ([1, C, 1, ...]): `y = (x - mean) * inv_variance * scale + bias`.
    pub fn batchnorm_inference(
        &mut self,
        x: &Tensor,
        mean: &Tensor,
        inv_variance: &Tensor,
        scale: &Tensor,
        bias: &Tensor,
        attrs: BatchnormInferenceAttributes,
    ) -> Result<Tensor> {
        let inputs = [
            ("x", x),
            ("mean", mean),
            ("inv_variance", inv_variance),
            ("scale", scale),
            ("bias", bias),
        ];
        let mut made = self
            .generic_op(
                BatchnormInference.name(),
                &attrs.name,
                &inputs,
                &["y"],
                BTreeMap::new(),
            )?
            .into_iter();
        next_output(&mut made, "batchnorm_inference", "y")
    }

    /// Adds the backward of a batchnorm: from `dy` and the forward's `x`, `scale` and saved
    /// statistics (required in `attrs`), `dx`, `dscale` and `dbias`.
    pub fn batchnorm_backward(
        &mut self,
        dy: &Tensor,
        x: &Tensor,
        scale: &Tensor,
        attrs: BatchnormBackwardAttributes,
    ) -> Result<NormBackwardOutputs> {
        self.stats_backward(BATCHNORM_BACKWARD.name(), dy, x, scale, attrs)
    }

    /// Adds the backward of a layernorm: from `dy` and the forward's `x`, `scale` and saved
    /// statistics (required in `attrs`), `dx`, `dscale` and `dbias`.
    pub fn layernorm_backward(
        &mut self,
        dy: &Tensor,
        x: &Tensor,
        scale: &Tensor,
        attrs: LayernormBackwardAttributes,
    ) -> Result<NormBackwardOutputs> {
        self.stats_backward(LAYERNORM_BACKWARD.name(), dy, x, scale, attrs)
    }

    fn stats_backward(
        &mut self,
        op: &str,
        dy: &Tensor,
        x: &Tensor,
        scale: &Tensor,
        attrs: NormBackwardAttributes,
    ) -> Result<NormBackwardOutputs> {
        let Some((mean, inv)) = &attrs.saved else {
            return Err(kiln_core::Error::BadParam(format!(
                "{op}: set the forward's statistics \
                 (NormBackwardAttributes::saved_mean_and_inv_variance)"
            )));
        };
        let inputs = [
            ("dy", dy),
            ("x", x),
            ("scale", scale),
            ("mean", mean),
            ("inv_variance", inv),
        ];
        let mut made = self
            .generic_op(
                op,
                &attrs.name,
                &inputs,
                &["dx", "dscale", "dbias"],
                BTreeMap::new(),
            )?
            .into_iter();
        Ok(NormBackwardOutputs {
            dx: next_output(&mut made, op, "dx")?,
            dscale: next_output(&mut made, op, "dscale")?,
            dbias: made.next(),
        })
    }

    /// Adds the backward of an rmsnorm: from `dy` and the forward's `x`, `scale` and `inv_rms`,
    /// `dx`, `dscale` and, with `has_dbias`, `dbias`.
    pub fn rmsnorm_backward(
        &mut self,
        dy: &Tensor,
        x: &Tensor,
        scale: &Tensor,
        inv_rms: &Tensor,
        attrs: RmsnormBackwardAttributes,
    ) -> Result<NormBackwardOutputs> {
        let inputs = [("dy", dy), ("x", x), ("scale", scale), ("inv_rms", inv_rms)];
        let outputs: &[&str] = if attrs.has_dbias {
            &["dx", "dscale", "dbias"]
        } else {
            &["dx", "dscale"]
        };
        let op = RMSNORM_BACKWARD.name();
        let mut made = self
            .generic_op(op, &attrs.name, &inputs, outputs, BTreeMap::new())?
            .into_iter();
        Ok(NormBackwardOutputs {
            dx: next_output(&mut made, op, "dx")?,
            dscale: next_output(&mut made, op, "dscale")?,
            dbias: made.next(),
        })
    }
}

/// What the attributes of `sdpa` and `sdpa_backward` share: name, scale, bias, padding and the
/// diagonal band.
#[derive(Debug, Clone, Default)]
struct AttentionCommon {
    name: String,
    scale: Option<AttentionScale>,
    bias: Option<Tensor>,
    seq_len_q: Option<Tensor>,
    seq_len_kv: Option<Tensor>,
    alignment: Option<DiagonalAlignment>,
    left_bound: Option<i64>,
    right_bound: Option<i64>,
}

#[derive(Debug, Clone)]
enum AttentionScale {
    Value(f64),
    Tensor(Tensor),
}

impl AttentionCommon {
    fn causal(&mut self, alignment: DiagonalAlignment) {
        self.alignment = Some(alignment);
        self.right_bound = Some(0);
    }

    /// The node's extra input ports and its attributes.
    fn lower(&self) -> (Vec<(&'static str, Tensor)>, BTreeMap<String, AttrValue>) {
        let mut inputs = Vec::new();
        let mut attributes = BTreeMap::new();
        match &self.scale {
            Some(AttentionScale::Value(v)) => {
                attributes.insert("attn_scale".to_string(), AttrValue::Float(*v));
            }
            Some(AttentionScale::Tensor(t)) => inputs.push(("attn_scale", t.clone())),
            None => {}
        }
        for (port, t) in [
            ("bias", &self.bias),
            ("seq_len_q", &self.seq_len_q),
            ("seq_len_kv", &self.seq_len_kv),
        ] {
            if let Some(t) = t {
                inputs.push((port, t.clone()));
            }
        }
        if let Some(a) = self.alignment {
            attributes.insert(
                "diagonal_alignment".to_string(),
                AttrValue::Str(a.name().into()),
            );
        }
        if let Some(l) = self.left_bound {
            attributes.insert("diagonal_band_left_bound".to_string(), AttrValue::Int(l));
        }
        if let Some(r) = self.right_bound {
            attributes.insert("diagonal_band_right_bound".to_string(), AttrValue::Int(r));
        }
        (inputs, attributes)
    }
}

/// Builder methods shared by [`SdpaAttributes`] and [`SdpaBackwardAttributes`] (cuDNN
/// frontend's `SDPA_attributes` setters, without the `set_` prefix).
macro_rules! attention_setters {
    () => {
        /// Names the node.
        pub fn name(mut self, name: impl Into<String>) -> Self {
            self.common.name = name.into();
            self
        }
        /// The scale of `q k^T` as a value (default 1, as in cuDNN; `1 / sqrt(head dim)` is the
        /// usual choice).
        pub fn attn_scale(mut self, v: f64) -> Self {
            self.common.scale = Some(AttentionScale::Value(v));
            self
        }
        /// The scale as a tensor: a by-value scalar ([`Graph::scalar`]) or an f32 tensor of
        /// dims [1, 1, 1, 1] whose value is read at execute.
        pub fn attn_scale_tensor(mut self, t: &Tensor) -> Self {
            self.common.scale = Some(AttentionScale::Tensor(t.clone()));
            self
        }
        /// An additive bias of the scores, dims [B or 1, H_q or 1, S_q or 1, S_kv].
        pub fn bias(mut self, t: &Tensor) -> Self {
            self.common.bias = Some(t.clone());
            self
        }
        /// Per-batch query lengths (f32 tensor [B, 1, 1, 1] of whole numbers): rows at or past
        /// a batch's length are fully masked.
        pub fn seq_len_q(mut self, t: &Tensor) -> Self {
            self.common.seq_len_q = Some(t.clone());
            self
        }
        /// Per-batch key/value lengths (f32 tensor [B, 1, 1, 1] of whole numbers): keys at or
        /// past a batch's length are masked.
        pub fn seq_len_kv(mut self, t: &Tensor) -> Self {
            self.common.seq_len_kv = Some(t.clone());
            self
        }
        /// The causal mask with its diagonal at the top left (query `i` sees keys `0..=i`).
        pub fn causal_mask(mut self, on: bool) -> Self {
            if on {
                self.common.causal(DiagonalAlignment::TopLeft);
            }
            self
        }
        /// The causal mask with its diagonal at the bottom right (the last query sees every
        /// key; per batch when padding lengths are given).
        pub fn causal_mask_bottom_right(mut self, on: bool) -> Self {
            if on {
                self.common.causal(DiagonalAlignment::BottomRight);
            }
            self
        }
        /// A sliding window of `w` keys ending at the diagonal (the diagonal band's left
        /// bound); combine with a causal mask for the usual local attention.
        pub fn sliding_window_length(mut self, w: i64) -> Self {
            self.common.left_bound = Some(w);
            self
        }
        /// Where the diagonal sits for the band bounds.
        pub fn diagonal_alignment(mut self, a: DiagonalAlignment) -> Self {
            self.common.alignment = Some(a);
            self
        }
        /// Keys more than `l - 1` before the diagonal are masked (`l` ≥ 1).
        pub fn diagonal_band_left_bound(mut self, l: i64) -> Self {
            self.common.left_bound = Some(l);
            self
        }
        /// Keys more than `r` after the diagonal are masked (`r` ≥ 0; 0 is causal).
        pub fn diagonal_band_right_bound(mut self, r: i64) -> Self {
            self.common.right_bound = Some(r);
            self
        }
    };
}

/// Attributes of an `sdpa` node (cuDNN frontend's `SDPA_attributes`).
#[derive(Debug, Clone, Default)]
pub struct SdpaAttributes {
    common: AttentionCommon,
    generate_stats: bool,
}

impl SdpaAttributes {
    /// Scale 1, no mask, no bias, no stats.
    pub fn new() -> Self {
        SdpaAttributes::default()
    }
    attention_setters!();
    /// Also writes `stats`, the log-sum-exp of each row (f32), which `sdpa_backward` needs.
    pub fn generate_stats(mut self, on: bool) -> Self {
        self.generate_stats = on;
        self
    }
}

/// The outputs of [`Graph::sdpa`].
#[derive(Debug, Clone)]
pub struct SdpaOutputs {
    /// The attention output [B, H_q, S_q, D_v], in q's layout and data type unless set.
    pub o: Tensor,
    /// The log-sum-exp of each row [B, H_q, S_q, 1], f32; with `generate_stats` only.
    pub stats: Option<Tensor>,
}

/// Attributes of an `sdpa_backward` node (cuDNN frontend's `SDPA_backward_attributes`): the
/// forward's scale, bias and masks.
#[derive(Debug, Clone, Default)]
pub struct SdpaBackwardAttributes {
    common: AttentionCommon,
}

impl SdpaBackwardAttributes {
    /// Scale 1, no mask, no bias.
    pub fn new() -> Self {
        SdpaBackwardAttributes::default()
    }
    attention_setters!();
}

/// The outputs of [`Graph::sdpa_backward`], each in the dims of its operand.
#[derive(Debug, Clone)]
pub struct SdpaBackwardOutputs {
    pub dq: Tensor,
    pub dk: Tensor,
    pub dv: Tensor,
}

impl Graph {
    /// Adds scaled dot-product attention of `q` [B, H_q, S_q, D], `k` [B, H_kv, S_kv, D] and
    /// `v` [B, H_kv, S_kv, D_v] (any layout by strides; H_q a multiple of H_kv). Returns `o`
    /// and, with `generate_stats`, `stats` (f32), virtual until `set_output(true)`.
    ///
    /// Dims, types and attribute values are checked by [`Graph::validate`]
    /// (`kiln_core::ops::sdpa` holds the rules).
    pub fn sdpa(
        &mut self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        attrs: SdpaAttributes,
    ) -> Result<SdpaOutputs> {
        let (extra, mut attributes) = attrs.common.lower();
        let mut inputs = vec![("q", q), ("k", k), ("v", v)];
        inputs.extend(extra.iter().map(|(p, t)| (*p, t)));
        attributes.insert(
            "generate_stats".to_string(),
            AttrValue::Bool(attrs.generate_stats),
        );
        let outputs: &[&str] = if attrs.generate_stats {
            &["o", "stats"]
        } else {
            &["o"]
        };
        let mut made = self
            .generic_op(
                Sdpa.name(),
                &attrs.common.name,
                &inputs,
                outputs,
                attributes,
            )?
            .into_iter();
        let o = made
            .next()
            .ok_or_else(|| kiln_core::Error::Internal("sdpa: no o".into()))?;
        let stats = made.next();
        if let Some(s) = &stats {
            s.set_data_type(kiln_core::DataType::F32);
        }
        Ok(SdpaOutputs { o, stats })
    }

    /// Adds the gradients of [`Graph::sdpa`]: from the forward's `q`, `k`, `v`, `o`, its
    /// `stats` and the output gradient `d_o`, with the forward's scale, bias and masks.
    /// Returns `dq`, `dk` and `dv` (`dk`/`dv` summed over the query heads of a GQA group).
    #[allow(clippy::too_many_arguments)]
    pub fn sdpa_backward(
        &mut self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        o: &Tensor,
        d_o: &Tensor,
        stats: &Tensor,
        attrs: SdpaBackwardAttributes,
    ) -> Result<SdpaBackwardOutputs> {
        let (extra, attributes) = attrs.common.lower();
        let mut inputs = vec![
            ("q", q),
            ("k", k),
            ("v", v),
            ("o", o),
            ("do", d_o),
            ("stats", stats),
        ];
        inputs.extend(extra.iter().map(|(p, t)| (*p, t)));
        let made = self.generic_op(
            SdpaBackward.name(),
            &attrs.common.name,
            &inputs,
            &["dq", "dk", "dv"],
            attributes,
        )?;
        let [dq, dk, dv]: [Tensor; 3] = made
            .try_into()
            .map_err(|_| kiln_core::Error::Internal("sdpa_backward: not three outputs".into()))?;
        Ok(SdpaBackwardOutputs { dq, dk, dv })
    }
}
