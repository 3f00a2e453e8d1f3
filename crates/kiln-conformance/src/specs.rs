//! Plain descriptions of cases (shapes, layouts, types, modes) and the builders that turn them
//! into frontend graphs. Test strategies generate specs; [`crate::check`] runs the cases.

use crate::modes::{self, gives_positive, input_domains, needs_positive_input};
use crate::{Case, Domain, Layout, CONV_DGRAD, CONV_FPROP, CONV_WGRAD, MATMUL, POINTWISE};
use kiln::{
    ConvAttributes, DataType, Graph, MatmulAttributes, PointwiseMode, ReductionAttributes,
    ReductionMode, Tensor, TensorAttributes,
};
use kiln_core::{shape, ConvDirection, ConvParams, PointwiseParams};

/// True for the data types the optimized CPU engines read and write.
pub fn optimized_type(dt: DataType) -> bool {
    matches!(dt, DataType::F32 | DataType::F16 | DataType::Bf16)
}

/// True for the data types the fused CPU pointwise engine reads and writes: every one but f64.
pub fn pointwise_engine_type(dt: DataType) -> bool {
    dt != DataType::F64
}

/// A tensor: dims, layout and data type.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSpec {
    /// Dims in logical order.
    pub dims: Vec<i64>,
    /// Memory layout.
    pub layout: Layout,
    /// Element type.
    pub data_type: DataType,
}

impl TensorSpec {
    /// A tensor of `dims` in `layout` and type `dt`.
    pub fn new(dims: &[i64], layout: Layout, dt: DataType) -> TensorSpec {
        TensorSpec {
            dims: dims.to_vec(),
            layout,
            data_type: dt,
        }
    }

    /// Adds the tensor to `graph` as an input named `name`.
    pub fn add_to(&self, graph: &mut Graph, name: &str) -> Tensor {
        graph.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(&self.dims)
                .stride(&self.layout.strides(&self.dims))
                .data_type(self.data_type),
        )
    }

    fn describe(&self) -> String {
        format!("{}{:?}{}", self.data_type, self.dims, self.layout)
    }
}

/// Sets an output's layout and type.
fn shape_output(t: &Tensor, dims: &[i64], layout: &Layout, dt: DataType) {
    t.set_dim(dims);
    t.set_stride(&layout.strides(dims));
    t.set_data_type(dt);
}

/// An operand of a pointwise node.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A bound input tensor.
    Tensor(TensorSpec),
    /// A by-value scalar at position `u` in [-1, 1) of the operand's domain (see
    /// [`modes::input_domains`]).
    Scalar(f64),
}

/// One pointwise node `out = mode(a[, b[, c]])`.
#[derive(Debug, Clone, PartialEq)]
pub struct PointwiseSpec {
    /// The pointwise mode.
    pub mode: PointwiseMode,
    /// Its parameters (`None` fields take the defaults).
    pub params: PointwiseParams,
    /// First operand.
    pub a: Operand,
    /// `None` for unary modes.
    pub b: Option<Operand>,
    /// The mask of `binary_select`; `None` for every other mode.
    pub c: Option<Operand>,
    /// The output's layout and type.
    pub out_layout: Layout,
    /// Type of the direction's output.
    pub out_type: DataType,
}

impl PointwiseSpec {
    /// The output dims: the broadcast of the tensor operands.
    pub fn out_dims(&self) -> Option<Vec<i64>> {
        let dims = |o: &Operand| match o {
            Operand::Tensor(t) => Some(t.dims.clone()),
            Operand::Scalar(_) => None,
        };
        let tensors: Vec<Vec<i64>> = std::iter::once(&self.a)
            .chain(&self.b)
            .chain(&self.c)
            .filter_map(dims)
            .collect();
        let (first, rest) = tensors.split_first()?;
        rest.iter().try_fold(first.clone(), |acc, d| {
            shape::broadcast(&acc, d, "spec").ok()
        })
    }

    /// The case: every tensor operand an input in its mode's domain, the result the output;
    /// the pointwise engine is expected to claim it when every tensor has an optimized type.
    pub fn case(&self) -> Case {
        let mut g = Graph::new();
        let (da, db) = input_domains(self.mode);
        let mut inputs = Vec::new();
        let mut add = |g: &mut Graph, o: &Operand, name: &str, d: Domain| match o {
            Operand::Tensor(t) => {
                let tensor = t.add_to(g, name);
                inputs.push((tensor.clone(), d));
                tensor
            }
            Operand::Scalar(u) => g.scalar(d.map(*u)),
        };
        let a = add(&mut g, &self.a, "a", da);
        let b = self.b.as_ref().map(|b| add(&mut g, b, "b", db));
        let c = self.c.as_ref().map(|c| add(&mut g, c, "c", Domain::COARSE));
        let attrs = modes::attributes(self.mode, &self.params).name("pw");
        let out = match (&b, &c) {
            (Some(b), Some(c)) => g.pointwise_ternary(&a, b, c, attrs),
            _ => g.pointwise(&a, b.as_ref(), attrs),
        };
        out.set_name("out");
        if let Some(dims) = self.out_dims() {
            shape_output(&out, &dims, &self.out_layout, self.out_type);
        }
        let operands = |o: &Operand| match o {
            Operand::Tensor(t) => t.describe(),
            Operand::Scalar(u) => format!("scalar@{u:.3}"),
        };
        let name = format!(
            "pointwise {} a={} b={}{} out={}{}",
            modes::describe(self.mode, &self.params),
            operands(&self.a),
            self.b.as_ref().map(operands).unwrap_or_else(|| "-".into()),
            self.c
                .as_ref()
                .map(|c| format!(" c={}", operands(c)))
                .unwrap_or_default(),
            self.out_type,
            self.out_layout
        );
        let mut case = Case::new(name, g);
        for (t, d) in inputs {
            case = case.input(&t, d);
        }
        let factor = if self.mode == PointwiseMode::Pow {
            4.0
        } else {
            1.0
        };
        case = case.output(&out).tolerance_factor(factor);
        let mut types = vec![self.out_type];
        for o in std::iter::once(&self.a).chain(&self.b).chain(&self.c) {
            if let Operand::Tensor(t) = o {
                types.push(t.data_type);
            }
        }
        if types.into_iter().all(pointwise_engine_type) {
            case = case.expect_engine(POINTWISE);
        }
        case
    }
}

/// A convolution in one direction. Dims: x [n, c, spatial...], w [k, c/groups, filter...],
/// y [n, k, out...].
#[derive(Debug, Clone, PartialEq)]
pub struct ConvSpec {
    /// Forward, data gradient or weight gradient.
    pub direction: ConvDirection,
    /// Batch size (matmul: columns of b and c).
    pub n: i64,
    /// Number of groups.
    pub groups: i64,
    /// Channels per group of x and of y.
    pub c_per_group: i64,
    /// Output channels per group.
    pub k_per_group: i64,
    /// x's spatial dims (1 to 3 of them).
    pub spatial: Vec<i64>,
    /// w's spatial dims.
    pub filter: Vec<i64>,
    /// Padding before each spatial dim.
    pub pre_padding: Vec<i64>,
    /// Padding after each spatial dim.
    pub post_padding: Vec<i64>,
    /// Stride per spatial dim.
    pub stride: Vec<i64>,
    /// Dilation per spatial dim.
    pub dilation: Vec<i64>,
    /// x's layout (dx's for dgrad).
    pub x_layout: Layout,
    /// w's layout (dw's for wgrad).
    pub w_layout: Layout,
    /// y's layout.
    pub y_layout: Layout,
    /// Type of the two inputs of the direction, and of its output.
    pub in_type: DataType,
    /// Type of the direction's output.
    pub out_type: DataType,
}

impl ConvSpec {
    fn params(&self) -> ConvParams {
        ConvParams {
            pre_padding: self.pre_padding.clone(),
            post_padding: self.post_padding.clone(),
            stride: self.stride.clone(),
            dilation: self.dilation.clone(),
        }
    }

    /// x's dims.
    pub fn x_dims(&self) -> Vec<i64> {
        let mut d = vec![self.n, self.c_per_group * self.groups];
        d.extend(&self.spatial);
        d
    }

    /// w's dims.
    pub fn w_dims(&self) -> Vec<i64> {
        let mut d = vec![self.k_per_group * self.groups, self.c_per_group];
        d.extend(&self.filter);
        d
    }

    /// y's dims, or `None` when the geometry is invalid (an empty output, say).
    pub fn y_dims(&self) -> Option<Vec<i64>> {
        shape::conv_output_dims(&self.x_dims(), &self.w_dims(), &self.params(), "spec").ok()
    }

    /// The number of terms of each output element's sum (an upper bound for dgrad).
    pub fn terms(&self) -> usize {
        let taps: i64 = self.filter.iter().product();
        let out: i64 = self.y_dims().map(|d| d[2..].iter().product()).unwrap_or(1);
        (match self.direction {
            ConvDirection::Fprop => self.c_per_group * taps,
            ConvDirection::Dgrad => self.k_per_group * taps,
            ConvDirection::Wgrad => self.n * out,
        })
        .max(1) as usize
    }

    fn attributes(&self) -> ConvAttributes {
        ConvAttributes::new()
            .name("conv")
            .pre_padding(&self.pre_padding)
            .post_padding(&self.post_padding)
            .stride(&self.stride)
            .dilation(&self.dilation)
    }

    /// A description for case names.
    pub fn describe(&self) -> String {
        format!(
            "conv_{:?} {}->{} x{:?}{} w{:?}{} y{} groups={} pad={:?}/{:?} stride={:?} dil={:?}",
            self.direction,
            self.in_type,
            self.out_type,
            self.x_dims(),
            self.x_layout,
            self.w_dims(),
            self.w_layout,
            self.y_layout,
            self.groups,
            self.pre_padding,
            self.post_padding,
            self.stride,
            self.dilation
        )
        .to_lowercase()
    }

    /// Builds the direction's node into `g` from fresh inputs (in `domains` for the first and
    /// second input); returns (inputs with domains, output).
    fn build(&self, g: &mut Graph, domains: [Domain; 2]) -> (Vec<(Tensor, Domain)>, Tensor) {
        let y_dims = self.y_dims().unwrap_or_default();
        let x = TensorSpec::new(&self.x_dims(), self.x_layout.clone(), self.in_type);
        let w = TensorSpec::new(&self.w_dims(), self.w_layout.clone(), self.in_type);
        let y = TensorSpec::new(&y_dims, self.y_layout.clone(), self.in_type);
        match self.direction {
            ConvDirection::Fprop => {
                let (xt, wt) = (x.add_to(g, "x"), w.add_to(g, "w"));
                let out = g.conv_fprop(&xt, &wt, self.attributes());
                out.set_name("y");
                shape_output(&out, &y_dims, &self.y_layout, self.out_type);
                (vec![(xt, domains[0]), (wt, domains[1])], out)
            }
            ConvDirection::Dgrad => {
                let (dy, wt) = (y.add_to(g, "dy"), w.add_to(g, "w"));
                let out = g.conv_dgrad(&dy, &wt, self.attributes());
                out.set_name("dx");
                shape_output(&out, &self.x_dims(), &self.x_layout, self.out_type);
                (vec![(dy, domains[0]), (wt, domains[1])], out)
            }
            ConvDirection::Wgrad => {
                let (dy, xt) = (y.add_to(g, "dy"), x.add_to(g, "x"));
                let out = g.conv_wgrad(&dy, &xt, self.attributes());
                out.set_name("dw");
                shape_output(&out, &self.w_dims(), &self.w_layout, self.out_type);
                (vec![(dy, domains[0]), (xt, domains[1])], out)
            }
        }
    }

    /// The case: both inputs in [-1, 1); the direction's optimized engine is expected to claim
    /// it when both types are optimized ones.
    pub fn case(&self) -> Case {
        let mut g = Graph::new();
        let (inputs, out) = self.build(&mut g, [Domain::SYMMETRIC; 2]);
        let mut case = Case::new(self.describe(), g);
        for (t, d) in &inputs {
            case = case.input(t, *d);
        }
        case = case.output(&out).terms(self.terms());
        if optimized_type(self.in_type) && optimized_type(self.out_type) {
            case = case.expect_engine(match self.direction {
                ConvDirection::Fprop => CONV_FPROP,
                ConvDirection::Dgrad => CONV_DGRAD,
                ConvDirection::Wgrad => CONV_WGRAD,
            });
        }
        case
    }
}

/// A batched matmul `c[batch.., m, n] = a[batch_a.., m, k] * b[batch_b.., k, n]`; batch dims
/// broadcast through 1.
#[derive(Debug, Clone, PartialEq)]
pub struct MatmulSpec {
    /// a's batch dims.
    pub batch_a: Vec<i64>,
    /// b's batch dims (same rank as a's).
    pub batch_b: Vec<i64>,
    /// Rows of a and c.
    pub m: i64,
    /// Inner dim: columns of a, rows of b.
    pub k: i64,
    /// Batch size (matmul: columns of b and c).
    pub n: i64,
    /// a's layout.
    pub a_layout: Layout,
    /// b's layout.
    pub b_layout: Layout,
    /// c's layout.
    pub c_layout: Layout,
    /// a's type.
    pub a_type: DataType,
    /// b's type.
    pub b_type: DataType,
    /// c's type.
    pub c_type: DataType,
}

impl MatmulSpec {
    /// a's dims.
    pub fn a_dims(&self) -> Vec<i64> {
        let mut d = self.batch_a.clone();
        d.extend([self.m, self.k]);
        d
    }

    /// b's dims.
    pub fn b_dims(&self) -> Vec<i64> {
        let mut d = self.batch_b.clone();
        d.extend([self.k, self.n]);
        d
    }

    /// c's dims, or `None` when the batch dims do not broadcast.
    pub fn c_dims(&self) -> Option<Vec<i64>> {
        shape::matmul_output_dims(&self.a_dims(), &self.b_dims(), "spec").ok()
    }

    /// A description for case names.
    pub fn describe(&self) -> String {
        format!(
            "matmul a={}{:?}{} b={}{:?}{} c={}{}",
            self.a_type,
            self.a_dims(),
            self.a_layout,
            self.b_type,
            self.b_dims(),
            self.b_layout,
            self.c_type,
            self.c_layout
        )
    }

    fn build(&self, g: &mut Graph, domains: [Domain; 2]) -> (Vec<(Tensor, Domain)>, Tensor) {
        let a = TensorSpec::new(&self.a_dims(), self.a_layout.clone(), self.a_type).add_to(g, "a");
        let b = TensorSpec::new(&self.b_dims(), self.b_layout.clone(), self.b_type).add_to(g, "b");
        let c = g.matmul(&a, &b, MatmulAttributes::new().name("matmul"));
        c.set_name("c");
        if let Some(dims) = self.c_dims() {
            shape_output(&c, &dims, &self.c_layout, self.c_type);
        }
        (vec![(a, domains[0]), (b, domains[1])], c)
    }

    /// The case: both inputs in [-1, 1); the matmul engine is expected to claim it when every
    /// type is an optimized one.
    pub fn case(&self) -> Case {
        let mut g = Graph::new();
        let (inputs, out) = self.build(&mut g, [Domain::SYMMETRIC; 2]);
        let mut case = Case::new(self.describe(), g);
        for (t, d) in &inputs {
            case = case.input(t, *d);
        }
        case = case.output(&out).terms(self.k as usize);
        if [self.a_type, self.b_type, self.c_type]
            .into_iter()
            .all(optimized_type)
        {
            case = case.expect_engine(MATMUL);
        }
        case
    }
}

/// A reduction of `x` over the dims where `reduce` is true.
#[derive(Debug, Clone, PartialEq)]
pub struct ReductionSpec {
    /// The pointwise mode.
    pub mode: ReductionMode,
    /// The input.
    pub x: TensorSpec,
    /// Per dim of x: reduced (true) or kept.
    pub reduce: Vec<bool>,
    /// y's layout.
    pub y_layout: Layout,
    /// y's type.
    pub y_type: DataType,
}

impl ReductionSpec {
    /// y's dims: x's with 1 in the reduced dims.
    pub fn y_dims(&self) -> Vec<i64> {
        self.x
            .dims
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if self.reduce.get(i).copied().unwrap_or(false) {
                    1
                } else {
                    d
                }
            })
            .collect()
    }

    /// The number of elements each output element reduces.
    pub fn terms(&self) -> usize {
        self.x
            .dims
            .iter()
            .zip(&self.reduce)
            .filter(|(_, &r)| r)
            .map(|(&d, _)| d as usize)
            .product::<usize>()
            .max(1)
    }

    /// The case: x in [-1, 1).
    pub fn case(&self) -> Case {
        let mut g = Graph::new();
        let x = self.x.add_to(&mut g, "x");
        let y = g.reduction(&x, ReductionAttributes::new(self.mode).name("reduce"));
        y.set_name("y");
        shape_output(&y, &self.y_dims(), &self.y_layout, self.y_type);
        let name = format!(
            "reduction {} x={} reduce={:?} y={}{}",
            self.mode.name(),
            self.x.describe(),
            self.reduce,
            self.y_type,
            self.y_layout
        );
        Case::new(name, g)
            .input(&x, Domain::SYMMETRIC)
            .output(&y)
            .terms(self.terms())
    }
}

/// What a fused chain starts from.
#[derive(Debug, Clone, PartialEq)]
pub enum Anchor {
    /// An input tensor: a graph of pointwise nodes only.
    Input(TensorSpec),
    /// A forward convolution (its direction field is ignored).
    Conv(ConvSpec),
    /// A matmul.
    Matmul(MatmulSpec),
}

/// The second operand of a binary step of a chain.
#[derive(Debug, Clone, PartialEq)]
pub enum Other {
    /// A fresh input of the anchor's output dims with 1 where `broadcast` is true (a bias
    /// [1, K, 1, 1] for a convolution), in `layout` and type `data_type`.
    Tensor {
        /// Per dim of the anchor output: 1 in this operand (true) or full size.
        broadcast: Vec<bool>,
        /// Memory layout.
        layout: Layout,
        /// Element type.
        data_type: DataType,
    },
    /// A by-value scalar at position `u` in [-1, 1) of the operand's domain.
    Scalar(f64),
    /// The result of an earlier step (0 = the anchor's result, i = step i's), so the graph is a
    /// DAG rather than a chain. Only a pointwise anchor keeps it; after a convolution or matmul
    /// it becomes the current result itself (`x * x`), which an epilogue accepts.
    Earlier(usize),
}

/// One pointwise step of a chain: `mode(acc, other)` or `mode(other, acc)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainStep {
    /// The pointwise mode.
    pub mode: PointwiseMode,
    /// Its parameters (`None` fields take the defaults).
    pub params: PointwiseParams,
    /// `None` for unary modes (ignored by them when given).
    pub other: Option<Other>,
    /// Whether the running result is the left operand.
    pub acc_left: bool,
}

/// A fused graph: an anchor followed by pointwise steps, the last result the only output.
///
/// Steps are made well defined before building ([`ChainSpec::sanitized`]): a mode that needs a
/// positive input (log, sqrt, rsqrt, reciprocal, a divisor, a pow base) only gets the running
/// result when that is known to be positive (after exp, sigmoid, softplus and the like), and
/// exp is applied at most once, so values stay where f32 and f16 keep them finite.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainSpec {
    /// What the chain starts from.
    pub anchor: Anchor,
    /// The pointwise steps, in order.
    pub steps: Vec<ChainStep>,
    /// The output's layout.
    pub out_layout: Layout,
    /// Type of the direction's output.
    pub out_type: DataType,
}

impl ChainSpec {
    /// The anchor's output dims.
    pub fn anchor_dims(&self) -> Option<Vec<i64>> {
        match &self.anchor {
            Anchor::Input(t) => Some(t.dims.clone()),
            Anchor::Conv(c) => c.y_dims(),
            Anchor::Matmul(m) => m.c_dims(),
        }
    }

    /// The chain with every step made well defined (see the type's documentation): a mode
    /// needing a positive running result that is not known positive becomes sigmoid (unary) or
    /// add (binary), or swaps operands (a divisor or pow base becomes the other operand); a
    /// second exp becomes tanh; a comparison with a computed operand becomes max (its result could
    /// flip between f32 and f64); the result of an earlier step is only kept for a pointwise
    /// anchor.
    pub fn sanitized(&self) -> ChainSpec {
        use PointwiseMode as M;
        let mut out = self.clone();
        if out.steps.is_empty() {
            out.steps.push(ChainStep {
                mode: M::Identity,
                params: PointwiseParams::default(),
                other: None,
                acc_left: true,
            });
        }
        let pointwise_anchor = matches!(self.anchor, Anchor::Input(_));
        // Known positive and away from zero, per result (0 = the anchor's).
        let mut positive = vec![false];
        let mut used_exp = false;
        for (i, step) in out.steps.iter_mut().enumerate() {
            let acc_pos = positive[i];
            if !step.mode.is_binary() {
                step.other = None;
                if needs_positive_input(step.mode) && !acc_pos {
                    step.mode = M::Sigmoid;
                }
                if step.mode == M::Exp {
                    if used_exp {
                        step.mode = M::Tanh;
                    } else {
                        used_exp = true;
                    }
                }
                let keeps = acc_pos && needs_positive_input(step.mode) && step.mode != M::Log;
                positive.push(gives_positive(step.mode, &step.params) || keeps);
                continue;
            }
            let mut other = step.other.clone().unwrap_or(Other::Scalar(0.5));
            if let Other::Earlier(j) = other {
                if !pointwise_anchor || j > i {
                    other = Other::Earlier(i);
                }
            }
            let computed_other = matches!(other, Other::Earlier(_));
            // Exact operands: fresh inputs, scalars and a pointwise anchor's own input. Any
            // other operand was rounded differently in f32 and f64, so a comparison of it could
            // flip (a computed cos equal to a scalar in f32 but not in f64, say).
            let exact = |j: usize| pointwise_anchor && j == 0;
            let exact_other = match other {
                Other::Earlier(j) => exact(j),
                Other::Scalar(_) | Other::Tensor { .. } => true,
            };
            if modes::is_comparison(step.mode) && !(exact(i) && exact_other) {
                step.mode = M::Max;
            }
            // Which side must be positive: Div's divisor (b), Pow's base (a).
            let positive_left = match step.mode {
                M::Div => Some(false),
                M::Pow => Some(true),
                _ => None,
            };
            if let Some(left) = positive_left {
                if computed_other {
                    // Both operands come from the chain: keep it simple and well conditioned.
                    step.mode = M::Add;
                } else if step.acc_left == left && !acc_pos {
                    // The running result would be the divisor or base: make it the other side.
                    step.acc_left = !step.acc_left;
                }
                if step.mode == M::Pow && step.acc_left != left {
                    // A pow exponent computed by the chain could be large.
                    step.mode = M::Mul;
                }
            }
            let other_pos = match &other {
                Other::Earlier(j) => positive[*j],
                Other::Scalar(u) => {
                    let (da, db) = input_domains(step.mode);
                    (if step.acc_left { db } else { da }).map(*u) > 0.25
                }
                Other::Tensor { .. } => {
                    let (da, db) = input_domains(step.mode);
                    (if step.acc_left { db } else { da }).lo > 0.0
                }
            };
            let pos = match step.mode {
                M::Max => acc_pos || other_pos,
                M::Add | M::Mul | M::Div | M::Min => acc_pos && other_pos,
                M::Pow => true,
                _ => false,
            };
            step.other = Some(other);
            positive.push(pos);
        }
        out
    }

    /// The case (after [`ChainSpec::sanitized`]): fresh inputs in their mode's domains (a
    /// convolution's or matmul's second input scaled so that its result is about 1 in size),
    /// the last result the only output; the anchor's optimized engine is expected to claim it
    /// when every type is an optimized one.
    pub fn case(&self) -> Case {
        let spec = self.sanitized();
        let mut g = Graph::new();
        let anchor_dims = spec.anchor_dims().unwrap_or_default();
        let mut inputs: Vec<(Tensor, Domain)> = Vec::new();
        let mut types = vec![spec.out_type];
        let (acc, terms, expected, anchor_name) = match &spec.anchor {
            Anchor::Input(t) => {
                let x = t.add_to(&mut g, "x");
                inputs.push((x.clone(), Domain::SYMMETRIC));
                types.push(t.data_type);
                (x, 1, POINTWISE, format!("x={}", t.describe()))
            }
            Anchor::Conv(c) => {
                let c = ConvSpec {
                    direction: ConvDirection::Fprop,
                    ..c.clone()
                };
                let scale = 1.0 / (c.terms() as f64).sqrt();
                let (ins, y) =
                    c.build(&mut g, [Domain::SYMMETRIC, Domain::SYMMETRIC.scaled(scale)]);
                inputs.extend(ins);
                types.extend([c.in_type, c.out_type]);
                y.set_output(false);
                (y, c.terms(), CONV_FPROP, c.describe())
            }
            Anchor::Matmul(m) => {
                let scale = 1.0 / (m.k as f64).sqrt();
                let (ins, y) =
                    m.build(&mut g, [Domain::SYMMETRIC, Domain::SYMMETRIC.scaled(scale)]);
                inputs.extend(ins);
                types.extend([m.a_type, m.b_type, m.c_type]);
                y.set_output(false);
                (y, m.k as usize, MATMUL, m.describe())
            }
        };
        let mut results = vec![acc.clone()];
        let mut cur = acc;
        let mut names = Vec::new();
        for (i, step) in spec.steps.iter().enumerate() {
            let (da, db) = input_domains(step.mode);
            let other_domain = if step.acc_left { db } else { da };
            let other = match (&step.other, step.mode.is_binary()) {
                (_, false) | (None, _) => None,
                (Some(Other::Earlier(j)), true) => results.get(*j).cloned(),
                (Some(Other::Scalar(u)), true) => Some(g.scalar(other_domain.map(*u))),
                (
                    Some(Other::Tensor {
                        broadcast,
                        layout,
                        data_type,
                    }),
                    true,
                ) => {
                    let dims: Vec<i64> = anchor_dims
                        .iter()
                        .enumerate()
                        .map(|(k, &d)| {
                            if broadcast.get(k).copied().unwrap_or(false) {
                                1
                            } else {
                                d
                            }
                        })
                        .collect();
                    let t = TensorSpec::new(&dims, layout.clone(), *data_type)
                        .add_to(&mut g, &format!("in{i}"));
                    inputs.push((t.clone(), other_domain));
                    types.push(*data_type);
                    Some(t)
                }
            };
            let attrs = modes::attributes(step.mode, &step.params).name(format!("step{i}"));
            let next = match (&other, step.acc_left) {
                (Some(o), true) => g.pointwise(&cur, Some(o), attrs),
                (Some(o), false) => g.pointwise(o, Some(&cur), attrs),
                (None, _) => g.pointwise(&cur, None, attrs),
            };
            next.set_name(format!("r{i}"));
            let other_name = match &step.other {
                Some(Other::Earlier(0)) if step.mode.is_binary() => "anchor".to_string(),
                Some(Other::Earlier(j)) if step.mode.is_binary() => format!("r{}", j - 1),
                Some(Other::Scalar(u)) if step.mode.is_binary() => format!("{u:.2}"),
                Some(Other::Tensor {
                    broadcast,
                    layout,
                    data_type,
                }) if step.mode.is_binary() => {
                    format!("{data_type}{broadcast:?}{layout}")
                }
                _ => String::new(),
            };
            names.push(format!(
                "{}{}{}",
                modes::describe(step.mode, &step.params),
                if other_name.is_empty() {
                    ""
                } else if step.acc_left {
                    "(acc,"
                } else {
                    "(other,"
                },
                if other_name.is_empty() {
                    String::new()
                } else {
                    format!("{other_name})")
                }
            ));
            results.push(next.clone());
            cur = next;
        }
        shape_output(&cur, &anchor_dims, &spec.out_layout, spec.out_type);
        let name = format!(
            "chain {anchor_name} -> [{}] out={}{}",
            names.join(" -> "),
            spec.out_type,
            spec.out_layout
        );
        let mut case = Case::new(name, g);
        for (t, d) in &inputs {
            case = case.input(t, *d);
        }
        case = case.output(&cur).terms(terms).depth(spec.steps.len() + 1);
        if types.into_iter().all(optimized_type) {
            case = case.expect_engine(expected);
        }
        case
    }
}
