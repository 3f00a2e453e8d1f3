//! `KILN_CPU_POINTWISE_V1`: a graph made only of pointwise nodes (any DAG), fused.
//!
//! The whole graph is evaluated per block of elements of its iteration space (the broadcast of
//! all its tensors' dims) in f32 buffers that stay in L1/L2: inputs are loaded once per block,
//! every node runs over the block, outputs are stored. Blocks run in parallel on the engine's
//! thread pool. Dims that every tensor walks contiguously are merged first, so packed tensors
//! move as whole rows.

use super::element_io::{load, store, SharedPtr};
use super::pointwise_math::{Operand, Pointwise};
use super::pool;
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::{DataType, Op, OpGraph, PointwiseMode};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{PluginError, PluginResult};
use std::collections::HashMap;

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_POINTWISE_V1";

/// Elements per block: a few 16 KiB f32 buffers per node stay in cache.
const BLOCK: usize = 4096;

/// Fused pointwise graphs.
pub struct PointwiseEngine;

impl CpuEngine for PointwiseEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    /// Accepts graphs whose nodes are all pointwise, over tensors of any type but f64.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        if let Some(n) = graph
            .nodes
            .iter()
            .find(|n| !matches!(n.op, Op::Pointwise(_)))
        {
            return Err(format!(
                "node '{}' is {}; this engine runs graphs of pointwise nodes only",
                n.name,
                n.op.describe()
            ));
        }
        if let Some(t) = graph
            .tensors
            .iter()
            .find(|t| t.scalar.is_none() && t.data_type == DataType::F64)
        {
            return Err(format!(
                "{} is f64; this engine computes in f32 (the reference engine runs f64)",
                t.label()
            ));
        }
        Ok(())
    }

    fn prepare(&self, graph: &OpGraph, _knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        self.supports(graph)
            .map_err(|why| PluginError::not_supported(format!("{NAME}: {why}")))?;
        Ok(Box::new(FusedPlan::new(graph)?))
    }
}

/// Where a node operand comes from.
#[derive(Debug, Clone, Copy)]
enum Src {
    Slot(usize),
    Splat(f32),
}

#[derive(Debug, Clone)]
struct Instr {
    op: Pointwise,
    a: Src,
    b: Option<Src>,
    /// binary_select's mask.
    c: Option<Src>,
    out: usize,
}

/// A bound tensor read into or written from a slot, with strides over the merged space
/// (0 where it broadcasts).
#[derive(Debug, Clone)]
struct Io {
    uid: i64,
    data_type: kiln_core::DataType,
    strides: Vec<isize>,
    slot: usize,
}

struct FusedPlan {
    space: Vec<usize>,
    inputs: Vec<Io>,
    outputs: Vec<Io>,
    /// gen_index results: slots filled with each element's coordinate along one dim (their
    /// `strides` are 1 on that dim, 0 elsewhere; `uid` and `data_type` are the output's).
    iotas: Vec<Io>,
    instrs: Vec<Instr>,
    slots: usize,
}

impl FusedPlan {
    fn new(graph: &OpGraph) -> PluginResult<FusedPlan> {
        let missing =
            |uid: i64| PluginError::internal(format!("tensor uid {uid} is not in the graph"));
        let rank = graph
            .tensors
            .iter()
            .filter(|t| t.scalar.is_none())
            .map(|t| t.dims.len())
            .max()
            .unwrap_or(1);
        let mut space = vec![1i64; rank];
        for t in graph.tensors.iter().filter(|t| t.scalar.is_none()) {
            for (s, &d) in space.iter_mut().zip(&t.dims) {
                *s = (*s).max(d);
            }
        }
        let mut slot_of: HashMap<i64, usize> = HashMap::new();
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        let mut iotas = Vec::new();
        let mut instrs = Vec::new();
        let eff = |t: &kiln_core::TensorDesc| -> Vec<isize> {
            space
                .iter()
                .enumerate()
                .map(|(i, &d)| match t.dims.get(i) {
                    Some(&td) if td == d && d > 1 => {
                        t.strides.get(i).copied().unwrap_or(0) as isize
                    }
                    _ => 0,
                })
                .collect()
        };
        let src = |uid: i64, slot_of: &mut HashMap<i64, usize>, inputs: &mut Vec<Io>| {
            let t = graph.tensor(uid).ok_or_else(|| missing(uid))?;
            if let Some(v) = t.scalar {
                return Ok::<Src, PluginError>(Src::Splat(v as f32));
            }
            if let Some(&s) = slot_of.get(&uid) {
                return Ok(Src::Slot(s));
            }
            let slot = slot_of.len();
            slot_of.insert(uid, slot);
            inputs.push(Io {
                uid,
                data_type: t.data_type,
                strides: eff(t),
                slot,
            });
            Ok(Src::Slot(slot))
        };
        for node in &graph.nodes {
            let Op::Pointwise(p) = &node.op else {
                return Err(PluginError::not_supported(format!(
                    "{NAME}: node '{}' is not pointwise",
                    node.name
                )));
            };
            let t = graph.tensor(p.out).ok_or_else(|| missing(p.out))?;
            if p.mode == PointwiseMode::GenIndex {
                let out = slot_of.len();
                slot_of.insert(p.out, out);
                let axis = usize::try_from(p.params.axis()).unwrap_or(usize::MAX);
                let strides = eff(t)
                    .iter()
                    .enumerate()
                    .map(|(i, &st)| isize::from(i == axis && st != 0))
                    .collect();
                iotas.push(Io {
                    uid: p.out,
                    data_type: t.data_type,
                    strides,
                    slot: out,
                });
                if !t.is_virtual {
                    outputs.push(Io {
                        uid: p.out,
                        data_type: t.data_type,
                        strides: eff(t),
                        slot: out,
                    });
                }
                continue;
            }
            let a = src(p.a, &mut slot_of, &mut inputs)?;
            let b = match p.b {
                Some(b) => Some(src(b, &mut slot_of, &mut inputs)?),
                None => None,
            };
            let c = match p.c {
                Some(c) => Some(src(c, &mut slot_of, &mut inputs)?),
                None => None,
            };
            let out = slot_of.len();
            slot_of.insert(p.out, out);
            if !t.is_virtual {
                outputs.push(Io {
                    uid: p.out,
                    data_type: t.data_type,
                    strides: eff(t),
                    slot: out,
                });
            }
            instrs.push(Instr {
                op: Pointwise::new(p.mode, &p.params),
                a,
                b,
                c,
                out,
            });
        }
        let mut plan = FusedPlan {
            space: space.iter().map(|&d| d as usize).collect(),
            inputs,
            outputs,
            iotas,
            instrs,
            slots: slot_of.len(),
        };
        plan.merge_dims();
        Ok(plan)
    }

    /// Drops size-1 dims and merges neighbours that every tensor walks as one.
    fn merge_dims(&mut self) {
        let mut space: Vec<usize> = Vec::new();
        let count = self.inputs.len() + self.outputs.len() + self.iotas.len();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); count];
        let ios: Vec<&Io> = self
            .inputs
            .iter()
            .chain(&self.outputs)
            .chain(&self.iotas)
            .collect();
        for (d, &size) in self.space.iter().enumerate() {
            if size == 1 {
                continue;
            }
            let mergeable = !space.is_empty()
                && ios
                    .iter()
                    .zip(&strides)
                    .all(|(io, st)| st.last().copied() == Some(io.strides[d] * size as isize));
            if mergeable {
                if let Some(last) = space.last_mut() {
                    *last *= size;
                }
                for (io, st) in ios.iter().zip(strides.iter_mut()) {
                    if let Some(l) = st.last_mut() {
                        *l = io.strides[d];
                    }
                }
            } else {
                space.push(size);
                for (io, st) in ios.iter().zip(strides.iter_mut()) {
                    st.push(io.strides[d]);
                }
            }
        }
        if space.is_empty() {
            space.push(1);
            strides.iter_mut().for_each(|s| s.push(0));
        }
        let (ins, rest) = strides.split_at(self.inputs.len());
        let (outs, iotas) = rest.split_at(self.outputs.len());
        for (io, s) in self.inputs.iter_mut().zip(ins) {
            io.strides = s.clone();
        }
        for (io, s) in self.outputs.iter_mut().zip(outs) {
            io.strides = s.clone();
        }
        for (io, s) in self.iotas.iter_mut().zip(iotas) {
            io.strides = s.clone();
        }
        self.space = space;
    }

    /// Calls `f(position in block, length, first inner index, outer coordinates)` for each row
    /// segment of the flat range `start..end`.
    fn segments(&self, start: usize, end: usize, mut f: impl FnMut(usize, usize, usize, &[usize])) {
        let rank = self.space.len();
        let inner = self.space[rank - 1];
        let mut row = start / inner;
        let mut coords = vec![0usize; rank - 1];
        let mut rest = row;
        for d in (0..rank - 1).rev() {
            coords[d] = rest % self.space[d];
            rest /= self.space[d];
        }
        let mut idx = start;
        while idx < end {
            let j0 = idx - row * inner;
            let len = (inner - j0).min(end - idx);
            f(idx - start, len, j0, &coords);
            idx += len;
            row += 1;
            for d in (0..rank - 1).rev() {
                coords[d] += 1;
                if coords[d] < self.space[d] {
                    break;
                }
                coords[d] = 0;
            }
        }
    }

    /// # Safety
    /// `ptrs` are the bound pointers of `inputs` then `outputs` for a live execute call, and no
    /// other thread writes the block's output elements.
    unsafe fn run_block(
        &self,
        ptrs: &[SharedPtr],
        start: usize,
        end: usize,
        slots: &mut [Vec<f32>],
    ) {
        let n = end - start;
        let rank = self.space.len();
        let base = |io: &Io, coords: &[usize]| -> isize {
            coords
                .iter()
                .zip(&io.strides)
                .map(|(&c, &s)| c as isize * s)
                .sum()
        };
        for (io, ptr) in self.inputs.iter().zip(ptrs) {
            let buf = &mut slots[io.slot];
            let inner = io.strides[rank - 1];
            self.segments(start, end, |pos, len, j0, coords| {
                let off = base(io, coords) + j0 as isize * inner;
                // SAFETY: the coordinates lie inside the space, which the tensor spans
                // (broadcast dims have stride 0).
                unsafe {
                    load(
                        ptr.get(),
                        io.data_type,
                        off,
                        inner,
                        &mut buf[pos..pos + len],
                    )
                };
            });
        }
        for io in &self.iotas {
            let buf = &mut slots[io.slot];
            let inner = io.strides[rank - 1];
            self.segments(start, end, |pos, len, j0, coords| {
                let first = base(io, coords) + j0 as isize * inner;
                for (k, v) in buf[pos..pos + len].iter_mut().enumerate() {
                    *v = (first + k as isize * inner) as f32;
                }
            });
        }
        for ins in &self.instrs {
            let mut out = std::mem::take(&mut slots[ins.out]);
            let operand = |s: Src| match s {
                Src::Slot(i) => Operand::Run(&slots[i][..n]),
                Src::Splat(v) => Operand::Splat(v),
            };
            match (ins.a, ins.b) {
                (a, Some(b)) if ins.c.is_some() => {
                    let c = ins.c.map(operand).unwrap_or(Operand::Splat(0.0));
                    Pointwise::select(operand(a), operand(b), c, &mut out[..n])
                }
                (a, Some(b)) => ins.op.binary(operand(a), operand(b), &mut out[..n]),
                (Src::Slot(a), None) => ins.op.unary(&slots[a][..n], &mut out[..n]),
                (Src::Splat(v), None) => out[..n].fill(ins.op.eval(v, 0.0)),
            }
            slots[ins.out] = out;
        }
        for (io, ptr) in self.outputs.iter().zip(&ptrs[self.inputs.len()..]) {
            let buf = &slots[io.slot];
            let inner = io.strides[rank - 1];
            self.segments(start, end, |pos, len, j0, coords| {
                // A tensor smaller than the space is written once: where its broadcast
                // coordinates are 0.
                let repeated = coords
                    .iter()
                    .zip(&io.strides)
                    .zip(&self.space)
                    .any(|((&c, &s), &d)| s == 0 && d > 1 && c > 0);
                if repeated {
                    return;
                }
                let len = if inner == 0 && self.space[rank - 1] > 1 {
                    usize::from(j0 == 0)
                } else {
                    len
                };
                let off = base(io, coords) + j0 as isize * inner;
                // SAFETY: as for loads; this block owns these output elements.
                unsafe { store(ptr.get(), io.data_type, off, inner, &buf[pos..pos + len]) };
            });
        }
    }
}

impl Prepared for FusedPlan {
    fn workspace_size(&self) -> usize {
        0
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, _workspace: *mut u8) -> PluginResult<()> {
        let ptrs: Vec<SharedPtr> = self
            .inputs
            .iter()
            .chain(&self.outputs)
            .map(|io| tensors.ptr(io.uid).map(SharedPtr))
            .collect::<PluginResult<_>>()?;
        let total: usize = self.space.iter().product();
        let blocks = total.div_ceil(BLOCK);
        let new_slots = || vec![vec![0f32; BLOCK.min(total)]; self.slots];
        let run = |slots: &mut Vec<Vec<f32>>, b: usize| {
            let start = b * BLOCK;
            // SAFETY: execute's contract; blocks cover disjoint ranges of the space.
            unsafe { self.run_block(&ptrs, start, (start + BLOCK).min(total), slots) }
        };
        if blocks <= 1 {
            run(&mut new_slots(), 0);
        } else {
            pool::for_each_init(blocks, 1, new_slots, run);
        }
        Ok(())
    }
}
