//! Fused pointwise epilogues: a chain of pointwise nodes applied to the result of a convolution
//! or matmul ("the anchor") while a tile of it is still in cache, then the store of the tile into
//! the final output tensor.
//!
//! The chain's shape: each node takes the previous result as one operand (either side) and, for
//! binary modes, a graph input as the other: a tensor broadcast against the anchor's output
//! (e.g. a bias [1, K, 1, 1]), a by-value scalar, or the previous result itself. Every result but
//! the last is virtual; the last is the graph's only output.

use super::element_io::{gather, load, load_one, scatter, store, SharedPtr};
use super::isa::Isa;
use super::pointwise_math::{Operand, Pointwise};
use crate::tensor_map::TensorMap;
use kiln_core::{DataType, Op, OpGraph, PointwiseMode};
use kiln_plugin_sdk::PluginResult;

/// The other operand of one epilogue step.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Other {
    /// A by-value scalar.
    Splat(f32),
    /// Graph input number `i` of [`Epilogue::operand_uids`].
    Tensor(usize),
    /// The previous result itself (`x * x`).
    Acc,
}

#[derive(Debug, Clone, PartialEq)]
struct Step {
    op: Pointwise,
    other: Option<Other>,
    acc_is_left: bool,
}

/// A parsed epilogue chain, independent of how the anchor is tiled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Epilogue {
    steps: Vec<Step>,
    operand_uids: Vec<i64>,
    /// The tensor the tile is finally stored into: the last node's output, or the anchor's
    /// output when there is no epilogue.
    pub out_uid: i64,
}

/// Data types the optimized engines read and write.
pub(crate) fn check_data_type(graph: &OpGraph, uid: i64) -> Result<DataType, String> {
    let t = graph
        .tensor(uid)
        .ok_or_else(|| format!("tensor uid {uid} is not in the graph"))?;
    match t.data_type {
        DataType::F32 | DataType::F16 | DataType::Bf16 => Ok(t.data_type),
        other => Err(format!(
            "{} is {other}; this engine handles f32, f16 and bf16 (the reference engine runs f64)",
            t.label()
        )),
    }
}

impl Epilogue {
    /// Parses the nodes other than `anchor` (a node index of the validated `graph`) as an
    /// epilogue of the anchor's output; `Err` says why they are not one.
    pub fn parse(graph: &OpGraph, anchor: usize) -> Result<Epilogue, String> {
        let anchor_node = &graph.nodes[anchor];
        let [anchor_out] = anchor_node.op.outputs()[..] else {
            return Err(format!(
                "node '{}' ({}) writes several tensors; this engine fuses after single-output \
                 operations only",
                anchor_node.name,
                anchor_node.op.describe()
            ));
        };
        Epilogue::parse_after(graph, anchor, anchor_out)
    }

    /// Parses the nodes other than `anchor` as an epilogue of its output `anchor_out`, for an
    /// anchor that writes several tensors (a norm's `y` and its statistics): the other outputs
    /// must be read by no node.
    pub fn parse_after(
        graph: &OpGraph,
        anchor: usize,
        anchor_out: i64,
    ) -> Result<Epilogue, String> {
        let anchor_node = &graph.nodes[anchor];
        let anchor_t = graph
            .tensor(anchor_out)
            .ok_or_else(|| format!("tensor uid {anchor_out} is not in the graph"))?;
        check_data_type(graph, anchor_out)?;
        let mut steps = Vec::new();
        let mut operand_uids = Vec::new();
        let mut cur = anchor_t;
        let mut in_chain = 1usize;
        while cur.is_virtual {
            if in_chain > graph.nodes.len() {
                return Err(format!("the chain after '{}' loops", anchor_node.name));
            }
            let consumers = graph.consumers(cur.uid);
            let [next] = consumers[..] else {
                return Err(format!(
                    "{} is read by {} nodes; an epilogue is a chain where each result feeds \
                     exactly one pointwise node",
                    cur.label(),
                    consumers.len()
                ));
            };
            let node = &graph.nodes[next];
            let Op::Pointwise(p) = &node.op else {
                return Err(format!(
                    "node '{}' ({}) follows '{}'; only pointwise nodes can be fused after it",
                    node.name,
                    node.op.describe(),
                    anchor_node.name
                ));
            };
            if matches!(
                p.mode,
                PointwiseMode::GenIndex | PointwiseMode::BinarySelect
            ) {
                return Err(format!(
                    "node '{}' is pointwise {}; an epilogue fuses modes of one or two operands \
                     that depend on values only",
                    node.name,
                    p.mode.name()
                ));
            }
            let out = graph
                .tensor(p.out)
                .ok_or_else(|| format!("tensor uid {} is not in the graph", p.out))?;
            if out.dims != anchor_t.dims {
                return Err(format!(
                    "node '{}': output {} has dims {:?}, not the {:?} of {}'s result; an \
                     epilogue keeps the anchor's shape",
                    node.name,
                    out.label(),
                    out.dims,
                    anchor_t.dims,
                    anchor_node.name
                ));
            }
            check_data_type(graph, p.out)?;
            let acc_is_left = p.a == cur.uid;
            let other_uid = match p.b {
                None => None,
                Some(b) if acc_is_left => Some(b),
                Some(_) => Some(p.a),
            };
            let other = match other_uid {
                None => None,
                Some(u) if u == cur.uid => Some(Other::Acc),
                Some(u) => {
                    let t = graph
                        .tensor(u)
                        .ok_or_else(|| format!("tensor uid {u} is not in the graph"))?;
                    if let Some(v) = t.scalar {
                        Some(Other::Splat(v as f32))
                    } else if t.is_virtual || graph.producer(u).is_some() {
                        return Err(format!(
                            "node '{}': operand {} is computed by another node; epilogue \
                             operands must be graph inputs or by-value scalars",
                            node.name,
                            t.label()
                        ));
                    } else {
                        check_data_type(graph, u)?;
                        operand_uids.push(u);
                        Some(Other::Tensor(operand_uids.len() - 1))
                    }
                }
            };
            steps.push(Step {
                op: Pointwise::new(p.mode, &p.params),
                other,
                acc_is_left,
            });
            in_chain += 1;
            cur = out;
        }
        if !graph.consumers(cur.uid).is_empty() {
            return Err(format!(
                "{} is an output and is also read by another node; only the chain's last \
                 result can be an output",
                cur.label()
            ));
        }
        if in_chain != graph.nodes.len() {
            return Err(format!(
                "the graph has {} nodes but only {in_chain} form '{}' and its pointwise \
                 epilogue chain",
                graph.nodes.len(),
                anchor_node.name
            ));
        }
        Ok(Epilogue {
            steps,
            operand_uids,
            out_uid: cur.uid,
        })
    }

    /// Number of fused pointwise nodes.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Binds the chain to a tiling of the anchor's output (see [`Geometry`]).
    pub fn bind(&self, graph: &OpGraph, geometry: &Geometry) -> PluginResult<BoundEpilogue> {
        let addr = |uid: i64| -> PluginResult<Addr> {
            let t = graph.tensor(uid).ok_or_else(|| {
                kiln_plugin_sdk::PluginError::internal(format!(
                    "tensor uid {uid} is not in the graph"
                ))
            })?;
            Ok(Addr::new(uid, t.data_type, &t.dims, &t.strides, geometry))
        };
        Ok(BoundEpilogue {
            steps: self.steps.clone(),
            operands: self
                .operand_uids
                .iter()
                .map(|&u| addr(u))
                .collect::<PluginResult<_>>()?,
            out: addr(self.out_uid)?,
            isa: super::isa::best_available(),
        })
    }
}

/// How the anchor's output (dims `dims`) is cut into tiles: every axis is either fixed per tile
/// (`fixed`), runs down the tile's rows (`rows`) or along its columns (`cols`); each group is
/// flattened in row-major order of its axes.
#[derive(Debug, Clone)]
pub(crate) struct Geometry {
    pub dims: Vec<i64>,
    pub fixed: Vec<usize>,
    pub rows: Vec<usize>,
    pub cols: Vec<usize>,
}

/// Offsets of a tensor along one flattened axis group.
#[derive(Debug, Clone, PartialEq)]
enum AxisMap {
    /// `index * stride`.
    Linear(isize),
    /// Looked up per index.
    Table(Vec<isize>),
}

impl AxisMap {
    fn build(dims: &[i64], axes: &[usize], strides: &[isize]) -> AxisMap {
        let count: usize = axes.iter().map(|&a| dims[a] as usize).product();
        let mut table = Vec::with_capacity(count);
        let mut idx = vec![0i64; axes.len()];
        for _ in 0..count {
            table.push(
                axes.iter()
                    .zip(&idx)
                    .map(|(&a, &i)| i as isize * strides[a])
                    .sum(),
            );
            for k in (0..axes.len()).rev() {
                idx[k] += 1;
                if idx[k] < dims[axes[k]] {
                    break;
                }
                idx[k] = 0;
            }
        }
        let step = if count > 1 { table[1] - table[0] } else { 0 };
        if table
            .iter()
            .enumerate()
            .all(|(i, &o)| o == i as isize * step)
        {
            AxisMap::Linear(step)
        } else {
            AxisMap::Table(table)
        }
    }

    #[inline]
    fn at(&self, i: usize) -> isize {
        match self {
            AxisMap::Linear(s) => i as isize * s,
            AxisMap::Table(t) => t.get(i).copied().unwrap_or(0),
        }
    }
}

/// Where the elements of one tensor are, over a tiling of the anchor's output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Addr {
    uid: i64,
    data_type: DataType,
    fixed: AxisMap,
    rows: AxisMap,
    cols: AxisMap,
}

impl Addr {
    pub(crate) fn new(
        uid: i64,
        data_type: DataType,
        dims: &[i64],
        strides: &[i64],
        g: &Geometry,
    ) -> Addr {
        // Broadcast dims (size 1 in the tensor, larger in the anchor) read element 0.
        let eff: Vec<isize> = g
            .dims
            .iter()
            .enumerate()
            .map(|(i, &d)| match (dims.get(i), strides.get(i)) {
                (Some(&td), Some(&s)) if td == d => s as isize,
                _ => 0,
            })
            .collect();
        Addr {
            uid,
            data_type,
            fixed: AxisMap::build(&g.dims, &g.fixed, &eff),
            rows: AxisMap::build(&g.dims, &g.rows, &eff),
            cols: AxisMap::build(&g.dims, &g.cols, &eff),
        }
    }

    /// Element offset of (fixed index `f`, row `r`, column 0).
    #[inline]
    pub(crate) fn row_base(&self, f: usize, r: usize) -> isize {
        self.fixed.at(f) + self.rows.at(r)
    }

    /// # Safety
    /// `ptr` is this tensor's bound pointer and the run lies inside the anchor's output dims.
    #[inline]
    pub(crate) unsafe fn load_run(
        &self,
        ptr: SharedPtr,
        base: isize,
        col0: usize,
        out: &mut [f32],
    ) {
        // SAFETY (all arms): offsets come from the tensor's own strides over in-range indices.
        unsafe {
            match &self.cols {
                AxisMap::Linear(s) => load(
                    ptr.get(),
                    self.data_type,
                    base + *s * col0 as isize,
                    *s,
                    out,
                ),
                AxisMap::Table(t) => gather(
                    ptr.get(),
                    self.data_type,
                    base,
                    &t[col0..col0 + out.len()],
                    out,
                ),
            }
        }
    }

    /// # Safety
    /// As for [`Addr::load_run`], and no other thread writes these elements.
    #[inline]
    pub(crate) unsafe fn store_run(&self, ptr: SharedPtr, base: isize, col0: usize, src: &[f32]) {
        // SAFETY (all arms): as above.
        unsafe {
            match &self.cols {
                AxisMap::Linear(s) => store(
                    ptr.get(),
                    self.data_type,
                    base + *s * col0 as isize,
                    *s,
                    src,
                ),
                AxisMap::Table(t) => scatter(
                    ptr.get(),
                    self.data_type,
                    base,
                    &t[col0..col0 + src.len()],
                    src,
                ),
            }
        }
    }
}

/// An epilogue bound to a tiling: applies the chain to tiles and stores them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundEpilogue {
    steps: Vec<Step>,
    operands: Vec<Addr>,
    out: Addr,
    /// The instruction set the chain's loops are compiled for (see [`BoundEpilogue::apply`]).
    isa: Isa,
}

/// The bound pointers an epilogue reads and writes during one execute call.
#[derive(Debug, Clone)]
pub(crate) struct EpiloguePtrs {
    operands: Vec<SharedPtr>,
    out: SharedPtr,
}

/// One tile of the anchor's output: fixed index, first row and column, and its values.
pub(crate) struct Tile<'a> {
    pub fixed: usize,
    pub row0: usize,
    pub col0: usize,
    pub rows: usize,
    pub cols: usize,
    /// Row-major values with `ld` elements between rows.
    pub values: &'a mut [f32],
    pub ld: usize,
}

/// An epilogue a GEMM kernel applies in registers (see [`BoundEpilogue::row_bias_relu`]): at
/// most a value added per row (a bias broadcast along the columns) and then a plain relu, stored
/// as f32 into rows whose columns are consecutive and whose rows are evenly spaced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RowBiasRelu {
    /// The bias's operand number, when there is one.
    bias: Option<usize>,
    /// Whether a plain relu follows.
    pub relu: bool,
    /// Elements between the output's rows.
    pub row_stride: isize,
}

/// An epilogue a kernel with the tile's columns in its vector lanes applies in registers (see
/// [`BoundEpilogue::col_bias_relu`]): at most a value added per column (a bias broadcast along
/// the rows) and then a plain relu, stored as f32 into rows whose columns are consecutive and
/// whose rows are evenly spaced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ColBiasRelu {
    /// The bias's operand number, when there is one.
    bias: Option<usize>,
    /// Whether a plain relu follows.
    pub relu: bool,
}

impl RowBiasRelu {
    /// Whether a bias is added (adding a 0 instead would turn -0 into +0).
    pub(crate) fn has_bias(&self) -> bool {
        self.bias.is_some()
    }
}

impl BoundEpilogue {
    /// The chain as a [`RowBiasRelu`], when it is one: no steps, `add` of a tensor constant
    /// along the tile's columns, a plain relu, or that add then that relu; and the output is
    /// f32 with consecutive columns and evenly spaced rows. Adding in either order gives the same bits, so the kernel
    /// computes what [`BoundEpilogue::apply`] would.
    pub(crate) fn row_bias_relu(&self) -> Option<RowBiasRelu> {
        let AxisMap::Linear(row_stride) = self.out.rows else {
            return None;
        };
        let (bias, relu) = self.bias_relu(|a| a.cols == AxisMap::Linear(0))?;
        Some(RowBiasRelu {
            bias,
            relu,
            row_stride,
        })
    }

    /// The chain as a [`ColBiasRelu`], when it is one: no steps, `add` of a tensor constant
    /// along the tile's rows, a plain relu, or that add then that relu; and the output is f32
    /// with consecutive columns and evenly spaced rows ([`Self::out_matrix`] gives them).
    pub(crate) fn col_bias_relu(&self) -> Option<ColBiasRelu> {
        let AxisMap::Linear(_) = self.out.rows else {
            return None;
        };
        let (bias, relu) = self.bias_relu(|a| a.rows == AxisMap::Linear(0))?;
        Some(ColBiasRelu { bias, relu })
    }

    /// The chain as an optional `add` of a tensor operand that `constant` accepts, then an
    /// optional plain relu (nothing else), into an f32 output with consecutive columns: the
    /// operand's number and whether the relu is there.
    fn bias_relu(&self, constant: impl Fn(&Addr) -> bool) -> Option<(Option<usize>, bool)> {
        if self.out.data_type != DataType::F32 || self.out.cols != AxisMap::Linear(1) {
            return None;
        }
        let (mut bias, mut relu) = (None, false);
        let mut steps = self.steps.iter().peekable();
        if let Some(step) = steps.peek() {
            if let (PointwiseMode::Add, Some(Other::Tensor(i))) = (step.op.mode, step.other) {
                if !constant(&self.operands[i]) {
                    return None;
                }
                bias = Some(i);
                steps.next();
            }
        }
        if let Some(step) = steps.next() {
            if step.other.is_some() || !step.op.is_plain_relu() {
                return None;
            }
            relu = true;
        }
        steps.next().is_none().then_some((bias, relu))
    }

    /// The biases of columns `col0..col0 + out.len()` of tile `fixed` under `fused` into
    /// `out`; false, having written nothing, without a bias.
    ///
    /// # Safety
    /// `ptrs` come from [`BoundEpilogue::pointers`] for a live execute call; the columns lie
    /// inside the anchor's output dims.
    pub(crate) unsafe fn col_biases(
        &self,
        ptrs: &EpiloguePtrs,
        fused: ColBiasRelu,
        fixed: usize,
        col0: usize,
        out: &mut [f32],
    ) -> bool {
        let Some(i) = fused.bias else {
            return false;
        };
        let addr = &self.operands[i];
        // SAFETY: the run's columns lie inside the anchor's dims (the contract); the operand
        // is the same along the rows.
        unsafe { addr.load_run(ptrs.operands[i], addr.row_base(fixed, 0), col0, out) };
        true
    }

    /// The bias of row `row` of tile `fixed` under `fused` (0 without a bias, see
    /// [`RowBiasRelu::has_bias`]).
    ///
    /// # Safety
    /// `ptrs` come from [`BoundEpilogue::pointers`] for a live execute call; the row lies inside
    /// the anchor's output dims.
    #[inline]
    pub(crate) unsafe fn row_bias(
        &self,
        ptrs: &EpiloguePtrs,
        fused: RowBiasRelu,
        fixed: usize,
        row: usize,
    ) -> f32 {
        match fused.bias {
            Some(i) => {
                let addr = &self.operands[i];
                // SAFETY: element (fixed, row, 0) of the operand, in range by the contract.
                unsafe {
                    load_one(
                        ptrs.operands[i].get(),
                        addr.data_type,
                        addr.row_base(fixed, row),
                    )
                }
            }
            None => 0.0,
        }
    }

    /// Where element (`row`, `col0`) of tile `fixed` is stored, for a [`RowBiasRelu`] epilogue
    /// (f32 output, consecutive columns; later rows follow at its `row_stride`).
    #[inline]
    pub(crate) fn out_f32(
        &self,
        ptrs: &EpiloguePtrs,
        fixed: usize,
        row: usize,
        col0: usize,
    ) -> *mut f32 {
        let at = self.out.row_base(fixed, row) + col0 as isize;
        (ptrs.out.get() as *mut f32).wrapping_offset(at)
    }

    /// Where a kernel can write the anchor's result into the output itself: for an f32 output
    /// whose rows and columns are each evenly spaced, the address of element (`row0`, `col0`) of
    /// tile `fixed` and the strides between rows and between columns; `None` otherwise. Any
    /// steps of the chain then run on the output ([`Self::apply_in_output`], see
    /// [`Self::has_steps`]).
    pub(crate) fn out_matrix(
        &self,
        ptrs: &EpiloguePtrs,
        fixed: usize,
        row0: usize,
        col0: usize,
    ) -> Option<(*mut f32, isize, isize)> {
        let (AxisMap::Linear(rs), AxisMap::Linear(cs)) = (&self.out.rows, &self.out.cols) else {
            return None;
        };
        if self.out.data_type != DataType::F32 {
            return None;
        }
        let at = self.out.row_base(fixed, row0) + cs * col0 as isize;
        Some(((ptrs.out.get() as *mut f32).wrapping_offset(at), *rs, *cs))
    }

    /// Whether the chain has any step (without one, storing the anchor's result is all it does).
    pub(crate) fn has_steps(&self) -> bool {
        !self.steps.is_empty()
    }

    /// This epilogue with its loops compiled for `isa` (its engine's `isa` knob); binding
    /// picks the processor's best level.
    pub(crate) fn with_isa(mut self, isa: Isa) -> Self {
        self.isa = isa;
        self
    }

    /// Looks up the pointers of the operands and the output.
    pub fn pointers(&self, tensors: &TensorMap<'_>) -> PluginResult<EpiloguePtrs> {
        Ok(EpiloguePtrs {
            operands: self
                .operands
                .iter()
                .map(|a| tensors.ptr(a.uid).map(SharedPtr))
                .collect::<PluginResult<_>>()?,
            out: SharedPtr(tensors.ptr(self.out.uid)?),
        })
    }

    /// Applies the chain in place to `cols` elements of row `row` (from column `col0`) of the
    /// output tensor itself, which already holds the anchor's result. `buf` and `scratch` hold
    /// at least `cols` values each.
    ///
    /// # Safety
    /// As for [`BoundEpilogue::apply`]; the output holds f32-representable anchor values.
    pub unsafe fn apply_in_output(
        &self,
        ptrs: &EpiloguePtrs,
        fixed: usize,
        row: usize,
        col0: usize,
        buf: &mut [f32],
        scratch: &mut [f32],
    ) {
        let cols = buf.len();
        let base = self.out.row_base(fixed, row);
        // SAFETY: the run lies inside the output; the caller owns it for this call.
        unsafe { self.out.load_run(ptrs.out, base, col0, buf) };
        let tile = Tile {
            fixed,
            row0: row,
            col0,
            rows: 1,
            cols,
            values: buf,
            ld: cols,
        };
        // SAFETY: forwarded contract.
        unsafe { self.apply(ptrs, tile, scratch) };
    }

    /// Applies the chain to `tile` in place and stores it into the output. `scratch` holds at
    /// least `tile.cols` values.
    ///
    /// # Safety
    /// `ptrs` come from [`BoundEpilogue::pointers`] for a live execute call, the tile lies inside
    /// the anchor's output dims, and no other thread writes the tile's output elements.
    pub unsafe fn apply(&self, ptrs: &EpiloguePtrs, tile: Tile<'_>, scratch: &mut [f32]) {
        // The chain's loops are plain Rust over rows: compiled for the plan's instruction set
        // they run 8 or 16 lanes wide instead of the x86-64 baseline's 4, with the same
        // operations, so every result is the same bit for bit.
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if Isa::Avx512.is_available() => {
                // SAFETY: the processor has AVX-512 F (checked); the rest is forwarded.
                return unsafe { self.apply_avx512(ptrs, tile, scratch) };
            }
            Isa::Avx2 | Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if Isa::Avx2.is_available() => {
                // SAFETY: the processor has AVX2 and FMA (checked); the rest is forwarded.
                return unsafe { self.apply_avx2(ptrs, tile, scratch) };
            }
            _ => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.apply_body(ptrs, tile, scratch) }
    }

    /// [`Self::apply_body`] compiled for AVX-512 F.
    ///
    /// # Safety
    /// The processor must have AVX-512 F; otherwise as for [`BoundEpilogue::apply`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn apply_avx512(&self, ptrs: &EpiloguePtrs, tile: Tile<'_>, scratch: &mut [f32]) {
        // SAFETY: forwarded contract.
        unsafe { self.apply_body(ptrs, tile, scratch) }
    }

    /// [`Self::apply_body`] compiled for AVX2 and FMA.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA; otherwise as for [`BoundEpilogue::apply`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn apply_avx2(&self, ptrs: &EpiloguePtrs, tile: Tile<'_>, scratch: &mut [f32]) {
        // SAFETY: forwarded contract.
        unsafe { self.apply_body(ptrs, tile, scratch) }
    }

    /// The tensor operand that [`Self::apply_body`] loads once per tile: the only operand read
    /// as a run (not a single value) by the chain, the same for every row (its row axes have
    /// stride 0), with no step reading the running result as an operand (which needs the
    /// scratch run too).
    fn row_invariant_run(&self) -> Option<usize> {
        let mut found = None;
        for step in &self.steps {
            match step.other {
                Some(Other::Acc) => return None,
                Some(Other::Tensor(i)) if self.operands[i].cols != AxisMap::Linear(0) => {
                    let invariant = self.operands[i].rows == AxisMap::Linear(0);
                    if !invariant || found.is_some_and(|f| f != i) {
                        return None;
                    }
                    found = Some(i);
                }
                _ => {}
            }
        }
        found
    }

    /// The work of [`BoundEpilogue::apply`], inlined into each instruction set's copy.
    ///
    /// # Safety
    /// As for [`BoundEpilogue::apply`].
    #[inline(always)]
    unsafe fn apply_body(&self, ptrs: &EpiloguePtrs, tile: Tile<'_>, scratch: &mut [f32]) {
        let cols = tile.cols;
        let scratch = &mut scratch[..cols];
        // A tensor operand whose run is the same for every row of the tile (the bias of a tile
        // whose rows are positions) is loaded once per tile, when nothing else of the chain
        // needs the scratch run.
        let hoisted = self.row_invariant_run().filter(|_| tile.rows > 1);
        if let Some(i) = hoisted {
            let (addr, ptr) = (&self.operands[i], ptrs.operands[i]);
            // SAFETY: the run's columns lie inside the anchor's dims (the same run every row
            // of the loop below would load).
            unsafe {
                addr.load_run(
                    ptr,
                    addr.row_base(tile.fixed, tile.row0),
                    tile.col0,
                    scratch,
                )
            };
        }
        for r in 0..tile.rows {
            let row = tile.row0 + r;
            let acc = &mut tile.values[r * tile.ld..r * tile.ld + cols];
            for step in &self.steps {
                match step.other {
                    None => step.op.unary_in_place(acc),
                    Some(Other::Splat(v)) => {
                        step.op
                            .binary_in_place(acc, Operand::Splat(v), step.acc_is_left)
                    }
                    Some(Other::Acc) => {
                        scratch.copy_from_slice(acc);
                        step.op
                            .binary_in_place(acc, Operand::Run(scratch), step.acc_is_left)
                    }
                    Some(Other::Tensor(i)) if hoisted == Some(i) => {
                        step.op
                            .binary_in_place(acc, Operand::Run(scratch), step.acc_is_left)
                    }
                    Some(Other::Tensor(i)) => {
                        let (addr, ptr) = (&self.operands[i], ptrs.operands[i]);
                        let base = addr.row_base(tile.fixed, row);
                        let other = if addr.cols == AxisMap::Linear(0) {
                            // SAFETY: element (fixed, row, 0) of the operand.
                            Operand::Splat(unsafe { load_one(ptr.get(), addr.data_type, base) })
                        } else {
                            // SAFETY: the run's columns lie inside the anchor's dims.
                            unsafe { addr.load_run(ptr, base, tile.col0, scratch) };
                            Operand::Run(scratch)
                        };
                        step.op.binary_in_place(acc, other, step.acc_is_left)
                    }
                }
            }
            let base = self.out.row_base(tile.fixed, row);
            // SAFETY: the caller owns these output elements for this call.
            unsafe { self.out.store_run(ptrs.out, base, tile.col0, acc) };
        }
    }
}
