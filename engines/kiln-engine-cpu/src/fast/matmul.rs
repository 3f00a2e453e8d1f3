//! `KILN_CPU_MATMUL_GEMM_V1`: batched matmul through kiln's own GEMM ([`super::sgemm`], the
//! instruction set recorded in the `isa` knob), with a fused pointwise epilogue.
//!
//! f32 operands are read in place with their own row and column strides (batch dims broadcast
//! through stride 0); f16/bf16 operands are widened to f32 in the workspace first, except at the
//! `amx` level, where two bf16 operands are packed for AMX tiles as they are and two f16 ones as
//! their exact bf16 parts ([`super::amx::split_f16`]). Without an epilogue an f32 output is
//! written by GEMM directly (parallel inside each GEMM, or across batches when there are
//! enough); otherwise the output is cut into tiles of rows that a worker multiplies into its
//! workspace, runs the epilogue over while they are in cache, and stores.

use super::element_io::{load, SharedPtr};
use super::epilogue::{check_data_type, BoundEpilogue, Epilogue, Geometry, Tile};
use super::isa::{isa_knob, isa_to_run, recorded_isa, resolve_isa_knob, Isa};
use super::pool;
use super::sgemm::{sgemm, MatMut, MatRef};
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::{for_each_offset, TensorMap};
use kiln_core::{DataType, Op, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{KnobDescriptor, PluginError, PluginResult};
use std::sync::atomic::{AtomicBool, Ordering};

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_MATMUL_GEMM_V1";

/// Knob: how work is split across threads: 0 = choose, 1 = inside each GEMM, 2 = across tiles
/// of output rows.
pub const KNOB_SPLIT: i64 = 1;
/// Knob: scratch regions in the workspace, one per concurrently running tile task; 0 = choose
/// at build time (see [`super::WORKSPACE_SLOTS_KNOB`]).
pub const KNOB_WORKSPACE_SLOTS: i64 = 2;
/// Knob: the instruction set of the GEMM kernels (see [`super::isa`]); 0 = the best at build.
pub const KNOB_ISA: i64 = 3;

/// Output floats one tile aims for (1 MiB of f32).
const TARGET_TILE_FLOATS: usize = 256 * 1024;
const ALIGN: usize = 64;

/// Batched matmul with a fused pointwise epilogue.
pub struct MatmulEngine;

/// The operand type of the graph's matmul when the AMX path can run it: two bf16 operands
/// (multiplied as they are) or two f16 operands (each split into two bf16 parts, see
/// [`super::amx::split_f16`]).
fn amx_operands(graph: &OpGraph) -> Option<DataType> {
    let i = find_matmul(graph).ok()?;
    let Op::Matmul(m) = &graph.nodes[i].op else {
        return None;
    };
    let (a, b) = (graph.tensor(m.a)?.data_type, graph.tensor(m.b)?.data_type);
    (a == b && matches!(a, DataType::Bf16 | DataType::F16)).then_some(a)
}

fn find_matmul(graph: &OpGraph) -> Result<usize, String> {
    let found: Vec<usize> = (0..graph.nodes.len())
        .filter(|&i| matches!(graph.nodes[i].op, Op::Matmul(_)))
        .collect();
    match found[..] {
        [i] => Ok(i),
        [] => Err("the graph has no matmul".into()),
        _ => Err(format!(
            "the graph has {} matmuls; this engine runs one",
            found.len()
        )),
    }
}

impl CpuEngine for MatmulEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    fn knobs(&self) -> Vec<KnobDescriptor> {
        vec![
            KnobDescriptor {
                id: KNOB_SPLIT,
                name: "parallel_split",
                min: 0,
                max: 2,
                stride: 1,
                default: 0,
            },
            super::workspace_slots_knob(KNOB_WORKSPACE_SLOTS),
            isa_knob(KNOB_ISA),
        ]
    }

    fn resolve_auto_knobs(&self, graph: &OpGraph, knobs: &mut [i64]) {
        super::resolve_workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        // bf16 operands gain from AMX and from AVX-512 BF16; f16 ones only from AMX (the
        // `avx512bf16` kernel would multiply their four bf16 parts at half the f32 rate).
        let useful = match amx_operands(graph) {
            Some(DataType::Bf16) => Isa::Amx,
            Some(_) if super::isa::best_available() >= Isa::Amx => Isa::Amx,
            _ => Isa::Avx512,
        };
        resolve_isa_knob(knobs, KNOB_ISA, useful);
    }

    /// Accepts one matmul node over f32/f16/bf16 tensors, alone or followed by a pointwise
    /// epilogue chain (see the `epilogue` module).
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        let i = find_matmul(graph)?;
        if let Op::Matmul(m) = &graph.nodes[i].op {
            check_data_type(graph, m.a)?;
            check_data_type(graph, m.b)?;
        }
        Epilogue::parse(graph, i).map(|_| ())
    }

    fn prepare(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        let fail = |why: String| PluginError::not_supported(format!("{NAME}: {why}"));
        let i = find_matmul(graph).map_err(fail)?;
        self.supports(graph).map_err(fail)?;
        let epilogue = Epilogue::parse(graph, i).map_err(fail)?;
        let Op::Matmul(m) = &graph.nodes[i].op else {
            return Err(PluginError::internal(format!(
                "{NAME}: node {i} is not a matmul"
            )));
        };
        let tensor = |uid: i64| {
            graph.tensor(uid).ok_or_else(|| {
                PluginError::internal(format!("tensor uid {uid} is not in the graph"))
            })
        };
        let (a, b, c) = (tensor(m.a)?, tensor(m.b)?, tensor(m.c)?);
        let r = c.dims.len();
        let (rows, cols, inner) = (
            c.dims[r - 2] as usize,
            c.dims[r - 1] as usize,
            a.dims[r - 1] as usize,
        );
        let batch_dims = &c.dims[..r - 2];
        let batches: usize = batch_dims.iter().map(|&d| d as usize).product();
        // Tall, narrow tiles: GEMM repacks the left operand once per column of tiles and the
        // right one once per row of tiles; keep at least two tiles per worker.
        let slots = super::workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        let tile_cols = cols.min(256);
        let col_tiles = cols.div_ceil(tile_cols);
        let want_row_tiles = (2 * slots).div_ceil(batches * col_tiles).max(1);
        let tile_rows = (TARGET_TILE_FLOATS / tile_cols)
            .min(rows.div_ceil(want_row_tiles))
            .clamp(1, rows);
        // The packed bf16 layout works on blocks of 32 rows: tiles start on block boundaries.
        // It is chosen from the recorded level, not the one that runs, so that the workspace is
        // the same wherever the plan is loaded: `amx` packs bf16 and f16 operands,
        // `avx512bf16` bf16 ones.
        let recorded = recorded_isa(knobs, KNOB_ISA);
        let amx_source = amx_operands(graph).filter(|&t| {
            recorded == Some(Isa::Amx) || (recorded == Some(Isa::Avx512Bf16) && t == DataType::Bf16)
        });
        let amx_layout = amx_source.is_some();
        let tile_rows = if amx_layout {
            tile_rows.next_multiple_of(32).min(rows)
        } else {
            tile_rows
        };
        let run_isa = isa_to_run(NAME, knobs, KNOB_ISA);
        let geometry = Geometry {
            dims: c.dims.clone(),
            fixed: (0..r - 2).collect(),
            rows: vec![r - 2],
            cols: vec![r - 1],
        };
        let bound = epilogue.bind(graph, &geometry)?.with_isa(run_isa);
        let out = tensor(epilogue.out_uid)?;
        // GEMM straight into an f32 output, then the epilogue (if any) in place over it.
        let direct_out = out.data_type == DataType::F32 && knobs.first().copied().unwrap_or(0) != 2;
        let has_epilogue = epilogue.len() > 0;
        // Scratch regions execute hands out: one per task of the epilogue pass over output rows
        // (direct path), or one per task over tiles; never more than the knob's slots.
        let regions = if direct_out {
            if has_epilogue {
                slots.min(batches * rows).max(1)
            } else {
                0
            }
        } else {
            slots
                .min(batches * rows.div_ceil(tile_rows) * col_tiles)
                .max(1)
        };
        Ok(Box::new(MatmulPlan {
            a: Operand::new(a, batch_dims),
            b: Operand::new(b, batch_dims),
            c_uid: out.uid,
            c_strides: (out.strides[r - 2] as isize, out.strides[r - 1] as isize),
            c_batch: batch_offsets(batch_dims, &c.dims[..r - 2], &out.strides[..r - 2]),
            has_epilogue,
            rows,
            cols,
            inner,
            batches,
            tile_rows,
            tile_cols,
            direct_out,
            split: knobs.first().copied().unwrap_or(0),
            isa: run_isa,
            amx: amx_source.map(|source| {
                let split = source == DataType::F16;
                let k = if split {
                    super::amx::F16_PARTS * inner.next_multiple_of(32)
                } else {
                    inner
                };
                AmxPacking {
                    a_len: batches * super::amx_packed_len(rows, k),
                    b_len: batches * super::amx_packed_len(k, cols),
                    k,
                    split,
                    run: super::multiplies_bf16(run_isa) && (!split || run_isa == Isa::Amx),
                }
            }),
            regions,
            epilogue: bound,
        }))
    }
}

/// Element offsets of each batch (flat, row-major over `out_batch`) into a tensor with batch
/// dims `dims` and strides `strides` (broadcast dims read element 0).
fn batch_offsets(out_batch: &[i64], dims: &[i64], strides: &[i64]) -> Vec<isize> {
    let eff: Vec<i64> = out_batch
        .iter()
        .zip(dims.iter().zip(strides))
        .map(|(&o, (&d, &s))| if d == o { s } else { 0 })
        .collect();
    let mut offs = Vec::new();
    if out_batch.is_empty() {
        return vec![0];
    }
    for_each_offset(out_batch, &eff, |o| offs.push(o as isize));
    offs
}

/// One matmul input: how each batch's matrix is found, directly or after widening to f32.
struct Operand {
    uid: i64,
    data_type: DataType,
    dims: Vec<i64>,
    strides: Vec<i64>,
    /// Batch offsets into the tensor itself, and into its packed f32 copy.
    batch: Vec<isize>,
    packed_batch: Vec<isize>,
    rs: isize,
    cs: isize,
    packed_rs: isize,
}

impl Operand {
    fn new(t: &TensorDesc, out_batch: &[i64]) -> Operand {
        let r = t.dims.len();
        let packed = kiln_core::tensor::packed_strides(&t.dims);
        Operand {
            uid: t.uid,
            data_type: t.data_type,
            dims: t.dims.clone(),
            strides: t.strides.clone(),
            batch: batch_offsets(out_batch, &t.dims[..r - 2], &t.strides[..r - 2]),
            packed_batch: batch_offsets(out_batch, &t.dims[..r - 2], &packed[..r - 2]),
            rs: t.strides[r - 2] as isize,
            cs: t.strides[r - 1] as isize,
            packed_rs: packed[r - 2] as isize,
        }
    }

    /// f32 floats the widened copy needs (0 when the tensor is read in place).
    fn widened_floats(&self) -> usize {
        if self.data_type == DataType::F32 {
            0
        } else {
            self.dims
                .iter()
                .map(|&d| d as usize)
                .product::<usize>()
                .next_multiple_of(ALIGN / 4)
        }
    }

    /// The matrix of batch `f`: pointer, row stride, column stride.
    fn matrix(&self, base: *const f32, widened: bool, f: usize) -> (*const f32, isize, isize) {
        let (offs, rs, cs) = if widened {
            (&self.packed_batch, self.packed_rs, 1)
        } else {
            (&self.batch, self.rs, self.cs)
        };
        (
            base.wrapping_offset(offs.get(f).copied().unwrap_or(0)),
            rs,
            cs,
        )
    }

    /// Reads the tensor into `out` as packed row-major f32 (rows in parallel).
    ///
    /// # Safety
    /// `ptr` is this tensor's bound pointer for a live execute call.
    unsafe fn widen(&self, ptr: SharedPtr, out: &mut [f32]) {
        let r = self.dims.len();
        let cols = self.dims[r - 1] as usize;
        let mut row_offsets = Vec::new();
        let (outer_dims, outer_strides) = (&self.dims[..r - 1], &self.strides[..r - 1]);
        for_each_offset(outer_dims, outer_strides, |o| row_offsets.push(o as isize));
        let cs = self.strides[r - 1] as isize;
        let rows = (row_offsets.len() * cols).min(out.len());
        pool::for_each_chunk_mut(&mut out[..rows], cols, |r, row| {
            // SAFETY: a row of the tensor's own layout.
            unsafe { load(ptr.get(), self.data_type, row_offsets[r], cs, row) }
        });
    }
}

struct MatmulPlan {
    a: Operand,
    b: Operand,
    /// The tensor GEMM writes on the direct path: the epilogue's output (the matmul's own when
    /// there is no epilogue).
    c_uid: i64,
    has_epilogue: bool,
    c_strides: (isize, isize),
    c_batch: Vec<isize>,
    rows: usize,
    cols: usize,
    inner: usize,
    batches: usize,
    tile_rows: usize,
    tile_cols: usize,
    direct_out: bool,
    split: i64,
    /// The instruction set the GEMMs run with.
    isa: Isa,
    /// Set for a plan recorded at the `amx` level with bf16 or f16 operands, or at the
    /// `avx512bf16` level with bf16 ones: the workspace holds the packed operands, and the GEMMs
    /// run on AMX tiles or with `vdpbf16ps`, as the level that runs here has them.
    amx: Option<AmxPacking>,
    /// Per-task scratch regions in the workspace, fixed when the plan is prepared (at most the
    /// `workspace_slots` knob); parallel loops that use scratch run at most this many tasks.
    regions: usize,
    epilogue: BoundEpilogue,
}

/// The AMX path's packed operands, for every batch (see [`super::amx`]).
struct AmxPacking {
    /// bf16 elements of the packed A and B of all batches.
    a_len: usize,
    b_len: usize,
    /// The K the packed operands are multiplied over: the matmul's, or for f16 operands
    /// `amx::f16_split_k` of it.
    k: usize,
    /// Whether the operands are f16, packed as their high and low bf16 parts.
    split: bool,
    /// Whether the level that runs here multiplies these packed operands (otherwise the plan
    /// runs the f32 path): `amx` any, `avx512bf16` bf16 ones.
    run: bool,
}

impl AmxPacking {
    /// f32 floats of workspace the packed operands take.
    fn floats(&self) -> usize {
        (self.a_len.div_ceil(2) + self.b_len.div_ceil(2)).next_multiple_of(ALIGN / 4)
    }
}

impl MatmulPlan {
    /// Rows `rows.0..rows.0 + rows.1` and columns `cols.0..cols.0 + cols.1` of batch `f`'s
    /// product into `dst` (at that block's first element), on up to `threads` workers: on AMX
    /// tiles from the packed operands when `packed` is set (`rows.0` a multiple of 32), else
    /// through [`sgemm`] on `lhs` and `rhs` (batch f's whole matrices).
    ///
    /// # Safety
    /// The matrices are live for this execute; `dst` addresses the block; `packed` is what
    /// [`Self::pack_for_amx`] returned for this call.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        &self,
        packed: Option<(SharedPtr, SharedPtr)>,
        f: usize,
        rows: (usize, usize),
        cols: (usize, usize),
        dst: MatMut,
        lhs: MatRef,
        rhs: MatRef,
        threads: usize,
    ) {
        #[cfg(target_arch = "x86_64")]
        if let (Some((pa, pb)), Some(pk), Some(kernel)) =
            (packed, &self.amx, super::amx::Kernel::for_isa(self.isa))
        {
            use half::bf16;
            let (a_at, b_at) = (f * (pk.a_len / self.batches), f * (pk.b_len / self.batches));
            let blocks = rows.1.div_ceil(32);
            let parts = threads.clamp(1, blocks.max(1));
            let all = SharedPtr(dst.0 as *mut u8);
            let run = |part: usize| {
                let (b0, b1) = (part * blocks / parts, (part + 1) * blocks / parts);
                let (i0, i1) = ((b0 * 32).min(rows.1), (b1 * 32).min(rows.1));
                if i0 < i1 {
                    let a = (pa.get() as *const bf16).wrapping_add(a_at);
                    let b = (pb.get() as *const bf16).wrapping_add(b_at);
                    let d = (all.get() as *mut f32).wrapping_offset(i0 as isize * dst.1);
                    // SAFETY: rows i0..i1 of the block, inside the packed operands (padded to
                    // whole blocks); parts write disjoint rows; the plan's level runs here
                    // (isa_to_run), so its kernel is available.
                    unsafe {
                        super::amx::gemm(
                            kernel,
                            super::amx::Left::Packed(a),
                            b,
                            pk.k,
                            rows.0 + i0,
                            i1 - i0,
                            cols.0,
                            cols.1,
                            (d, dst.1, dst.2),
                        )
                    }
                }
            };
            if parts == 1 {
                run(0);
            } else {
                pool::for_each(parts, run);
            }
            return;
        }
        let _ = packed;
        let (ap, ars, acs) = lhs;
        let (bp, brs, bcs) = rhs;
        // SAFETY: forwarded contract; rows.0.. of a and columns cols.0.. of b; the plan's
        // level is available here (isa_to_run).
        unsafe {
            sgemm(
                self.isa,
                rows.1,
                cols.1,
                self.inner,
                dst,
                (ap.wrapping_offset(rows.0 as isize * ars), ars, acs),
                (bp.wrapping_offset(cols.0 as isize * bcs), brs, bcs),
                false,
                threads,
            )
        }
    }

    /// Packs every batch's bf16 operands (or f16 operands as their bf16 parts) for the AMX path
    /// into `region` (the plan's packing workspace), in parallel over blocks of 32 rows of A and
    /// 32 columns of B; returns where the packed A and B start, or `None` where an f16 operand
    /// holds an infinite or NaN value (the call then runs the widened path).
    ///
    /// # Safety
    /// The operands are bound in `tensors` for this execute.
    unsafe fn pack_for_amx(
        &self,
        tensors: &TensorMap<'_>,
        region: &mut [f32],
    ) -> PluginResult<Option<(SharedPtr, SharedPtr)>> {
        let pk = self
            .amx
            .as_ref()
            .ok_or_else(|| PluginError::internal(format!("{NAME}: the plan has no AMX packing")))?;
        let (ra, rb) = region.split_at_mut(pk.a_len.div_ceil(2));
        let (pa, pb) = (ra.as_mut_ptr() as *mut u8, rb.as_mut_ptr() as *mut u8);
        #[cfg(target_arch = "x86_64")]
        {
            use super::amx;
            use half::{bf16, f16};
            let (m, n, k) = (self.rows, self.cols, self.inner);
            let block = amx::block_len(pk.k);
            let (a_ptr, b_ptr) = (
                SharedPtr(tensors.ptr(self.a.uid)?),
                SharedPtr(tensors.ptr(self.b.uid)?),
            );
            for (p, uid) in [(a_ptr, self.a.uid), (b_ptr, self.b.uid)] {
                if !p.get().cast::<bf16>().is_aligned() {
                    let t = tensors.desc(uid)?;
                    return Err(PluginError::bad_param(format!(
                        "{NAME}: {} is {} but its pointer {:?} is not 2-byte aligned",
                        t.label(),
                        t.data_type.name(),
                        p.get()
                    )));
                }
            }
            // SAFETY: the packed A and B of all batches fit their halves of the region
            // (a_len and b_len bf16 values; AmxPacking::floats), which are disjoint.
            let (out_a, out_b) = unsafe {
                (
                    std::slice::from_raw_parts_mut(pa as *mut bf16, pk.a_len),
                    std::slice::from_raw_parts_mut(pb as *mut bf16, pk.b_len),
                )
            };
            // An infinite or NaN f16 value has no exact bf16 parts: such a call multiplies the
            // widened values instead (the packing is then wasted, which finite data never pays).
            let not_finite = AtomicBool::new(false);
            let a_blocks = amx::padded(m) / 32;
            pool::for_each_chunk_mut(out_a, block, |c, out| {
                let (f, i) = (c / a_blocks, c % a_blocks);
                let (rs, cs) = (self.a.rs, self.a.cs);
                let first = (a_ptr.get() as *const bf16).wrapping_offset(
                    self.a.batch.get(f).copied().unwrap_or(0) + (32 * i) as isize * rs,
                );
                let rows = m.saturating_sub(32 * i);
                // SAFETY: rows 32·i.. of batch f's A (fewer than 32 at the end are padded),
                // f16 when the packing splits, else bf16.
                unsafe {
                    if pk.split {
                        let bad = amx::pack_a_f16_split(first.cast::<f16>(), rows, k, rs, cs, out);
                        not_finite.fetch_or(bad, Ordering::Relaxed);
                    } else {
                        amx::pack_a(first, rows, k, rs, cs, out)
                    }
                };
            });
            let b_blocks = amx::padded(n) / 32;
            pool::for_each_chunk_mut(out_b, block, |c, out| {
                let (f, j) = (c / b_blocks, c % b_blocks);
                let (rs, cs) = (self.b.rs, self.b.cs);
                let first = (b_ptr.get() as *const bf16).wrapping_offset(
                    self.b.batch.get(f).copied().unwrap_or(0) + (32 * j) as isize * cs,
                );
                let cols = n.saturating_sub(32 * j);
                // SAFETY: columns 32·j.. of batch f's B (fewer at the end are padded), f16
                // when the packing splits, else bf16.
                unsafe {
                    if pk.split {
                        let bad = amx::pack_b_f16_split(first.cast::<f16>(), k, cols, rs, cs, out);
                        not_finite.fetch_or(bad, Ordering::Relaxed);
                    } else {
                        amx::pack_b(first, k, cols, rs, cs, out)
                    }
                };
            });
            if not_finite.load(Ordering::Relaxed) {
                return Ok(None);
            }
        }
        let _ = tensors;
        Ok(Some((SharedPtr(pa), SharedPtr(pb))))
    }

    fn tile_floats(&self) -> usize {
        if self.direct_out {
            (2 * self.cols).next_multiple_of(ALIGN / 4)
        } else {
            (self.tile_rows * self.tile_cols + self.tile_cols).next_multiple_of(ALIGN / 4)
        }
    }
}

fn check_aligned(p: *const u8, what: &TensorDesc) -> PluginResult<()> {
    if !p.cast::<f32>().is_aligned() {
        return Err(PluginError::bad_param(format!(
            "{NAME}: {} is f32 but its pointer {p:?} is not 4-byte aligned",
            what.label()
        )));
    }
    Ok(())
}

impl Prepared for MatmulPlan {
    fn workspace_size(&self) -> usize {
        ALIGN
            + 4 * (self.a.widened_floats()
                + self.b.widened_floats()
                + self.regions * self.tile_floats()
                + self.amx.as_ref().map_or(0, AmxPacking::floats))
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, workspace: *mut u8) -> PluginResult<()> {
        if workspace.is_null() {
            return Err(PluginError::bad_param(format!(
                "{NAME}: the workspace is null but {} bytes are needed",
                self.workspace_size()
            )));
        }
        let skip = workspace.align_offset(ALIGN);
        let floats = (self.workspace_size() - ALIGN) / 4;
        // SAFETY: the caller provides workspace_size() bytes; after aligning we use at most
        // workspace_size() - ALIGN of them, as f32.
        let ws = unsafe { std::slice::from_raw_parts_mut(workspace.add(skip) as *mut f32, floats) };
        let (wa, rest) = ws.split_at_mut(self.a.widened_floats());
        let (wb, tiles) = rest.split_at_mut(self.b.widened_floats());
        let amx_floats = self.amx.as_ref().map_or(0, AmxPacking::floats);
        let (tiles, amx_ws) = tiles.split_at_mut(tiles.len() - amx_floats);
        let amx_run = self.amx.as_ref().is_some_and(|pk| pk.run);
        // SAFETY: the operands are bound for this call; amx_ws is this plan's packing region.
        let packed = if amx_run {
            unsafe { self.pack_for_amx(tensors, amx_ws)? }
        } else {
            None
        };
        let amx_run = packed.is_some();
        let mut bases = [std::ptr::null::<f32>(); 2];
        for ((op, wide), base) in [(&self.a, wa), (&self.b, wb)].into_iter().zip(&mut bases) {
            let p = tensors.ptr(op.uid)?;
            if amx_run {
                // The AMX path reads the packed copies only.
                *base = p as *const f32;
            } else if op.data_type == DataType::F32 {
                check_aligned(p, tensors.desc(op.uid)?)?;
                *base = p as *const f32;
            } else {
                // SAFETY: p is bound for this call.
                unsafe { op.widen(SharedPtr(p), wide) };
                *base = wide.as_ptr();
            }
        }
        let a_wide = self.a.data_type != DataType::F32;
        let b_wide = self.b.data_type != DataType::F32;
        let (a_base, b_base) = (
            SharedPtr(bases[0] as *mut u8),
            SharedPtr(bases[1] as *mut u8),
        );
        let lhs = |f: usize| self.a.matrix(a_base.get() as *const f32, a_wide, f);
        let rhs = |f: usize| self.b.matrix(b_base.get() as *const f32, b_wide, f);
        let (m, n) = (self.rows, self.cols);

        if self.direct_out {
            let c = tensors.ptr(self.c_uid)?;
            check_aligned(c, tensors.desc(self.c_uid)?)?;
            let c = SharedPtr(c);
            let dst = |f: usize| {
                (
                    (c.get() as *mut f32).wrapping_offset(self.c_batch[f]),
                    self.c_strides.0,
                    self.c_strides.1,
                )
            };
            // No scratch here, so the GEMMs use whatever threads this machine has.
            let threads = pool::threads();
            let across_batches = self.split == 0 && self.batches >= threads && threads > 1;
            if across_batches {
                pool::for_each(self.batches, |f| {
                    // SAFETY: batch f's matrices; outputs of distinct batches are disjoint.
                    unsafe { self.gemm(packed, f, (0, m), (0, n), dst(f), lhs(f), rhs(f), 1) }
                });
            } else {
                for f in 0..self.batches {
                    // SAFETY: batch f's matrices.
                    unsafe { self.gemm(packed, f, (0, m), (0, n), dst(f), lhs(f), rhs(f), threads) }
                }
            }
            if self.has_epilogue {
                let ptrs = self.epilogue.pointers(tensors)?;
                let rows = self.batches * m;
                let slots = self.regions.min(rows).max(1);
                let per_slot = self.tile_floats();
                let bufs = &mut tiles[..slots * per_slot];
                pool::for_each_chunk_mut(bufs, per_slot, |slot, buf| {
                    let (row_buf, scratch) = buf.split_at_mut(n);
                    for r in (slot * rows / slots)..((slot + 1) * rows / slots) {
                        // SAFETY: pointers from this call; each worker owns its rows.
                        unsafe {
                            self.epilogue
                                .apply_in_output(&ptrs, r / m, r % m, 0, row_buf, scratch)
                        };
                    }
                });
            }
            return Ok(());
        }

        let ptrs = self.epilogue.pointers(tensors)?;
        let (row_tiles, col_tiles) = (m.div_ceil(self.tile_rows), n.div_ceil(self.tile_cols));
        let items = self.batches * row_tiles * col_tiles;
        let slots = self.regions.min(items).max(1);
        let per_slot = self.tile_floats();
        let run_slot = |(slot, buf): (usize, &mut [f32])| {
            let (tile, scratch) = buf.split_at_mut(self.tile_rows * self.tile_cols);
            for item in (slot * items / slots)..((slot + 1) * items / slots) {
                let f = item / (row_tiles * col_tiles);
                let (rt, ct) = ((item / col_tiles) % row_tiles, item % col_tiles);
                let (r0, c0) = (rt * self.tile_rows, ct * self.tile_cols);
                let (rows, cols) = (self.tile_rows.min(m - r0), self.tile_cols.min(n - c0));
                // SAFETY: rows r0.. and columns c0.. of batch f, into the [rows, cols] tile
                // with row stride cols.
                unsafe {
                    self.gemm(
                        packed,
                        f,
                        (r0, rows),
                        (c0, cols),
                        (tile.as_mut_ptr(), cols as isize, 1),
                        lhs(f),
                        rhs(f),
                        1,
                    )
                };
                let t = Tile {
                    fixed: f,
                    row0: r0,
                    col0: c0,
                    rows,
                    cols,
                    values: &mut tile[..rows * cols],
                    ld: cols,
                };
                // SAFETY: pointers from this call; each item owns its tile of the output.
                unsafe { self.epilogue.apply(&ptrs, t, scratch) };
            }
        };
        let bufs = &mut tiles[..slots * per_slot];
        if slots == 1 {
            run_slot((0, bufs));
        } else {
            pool::for_each_chunk_mut(bufs, per_slot, |slot, buf| run_slot((slot, buf)));
        }
        Ok(())
    }
}
