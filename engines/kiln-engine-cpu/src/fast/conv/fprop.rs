//! `KILN_CPU_CONV_FPROP_GEMM_V1`: forward convolution as tiled im2col + GEMM, with a fused
//! pointwise epilogue.
//!
//! The output is cut into tiles of (image, group, run of output positions). Each worker unrolls
//! the input patches of its tile into its own slice of the caller's workspace (im2col), multiplies
//! them with the group's weights through the `gemm` crate into a tile buffer, applies the
//! epilogue to the tile while it is in cache and stores it into the output. The unrolled
//! patches follow the input's layout: channels-first rows for NCHW-like inputs (runs along the
//! output width), channels-last rows for NHWC-like inputs (runs along the channels); any other
//! strides go through the same strided loads. A 1x1, stride-1, unpadded convolution of an f32
//! input multiplies the input in place, with no im2col. A 3x3, stride-1 2-D convolution can run
//! as Winograd F(2x2, 3x3) instead (see the `conv_winograd` module): always with `conv_algo = 2`,
//! and by default when it has enough channels to be faster. Strided convolutions, 5x5 and
//! larger filters and narrow rows run with the filters in the vector lanes instead (the
//! `broadcast` module; `conv_algo = 3` wherever it applies).

use super::band::Band;
use super::broadcast::{self, BroadcastPlan};
use super::direct::{self, DirectTile};
use super::geometry::{im2col, pack_weight_row, pack_weights, Shape};
use super::winograd::{self, WinogradPlan};
use crate::engine::{CpuEngine, Prepared};
use crate::fast::claims::{run_slots, Claims};
use crate::fast::element_io::SharedPtr;
use crate::fast::epilogue::{
    check_data_type, BoundEpilogue, Epilogue, EpiloguePtrs, Geometry, Tile,
};
use crate::fast::isa::{isa_knob, isa_to_run, recorded_isa, resolve_isa_knob, Isa};
use crate::fast::pool;
use crate::fast::sgemm::{sgemm, Packed};
use crate::tensor_map::TensorMap;
use kiln_core::{ConvDirection, DataType, Op, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{KnobDescriptor, PluginError, PluginResult};

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_CONV_FPROP_GEMM_V1";

/// Knob: 0 = choose (direct GEMM on the input for eligible 1x1 convolutions, Winograd for 3x3
/// stride-1 convolutions with enough channels, the filters in the lanes for strided ones, 5x5
/// and larger filters and narrow rows, im2col otherwise), 1 = always im2col, 2 = Winograd F(2x2, 3x3) wherever it applies (3x3,
/// stride 1, dilation 1, one group, 2-D), otherwise as 0, 3 = the filters in the lanes
/// (`super::broadcast`) wherever it applies (2-D, f32 input with consecutive rows,
/// channels-first input and output), otherwise im2col.
pub const KNOB_ALGO: i64 = 1;
/// Knob: output positions per tile (per block of tiles for Winograd); 0 = choose from the
/// patch size.
pub const KNOB_TILE_POSITIONS: i64 = 2;
/// Knob: per-worker scratch regions in the workspace (at most this many tiles or Winograd blocks
/// run at once); 0 = choose at build time (see [`crate::fast::WORKSPACE_SLOTS_KNOB`]).
pub const KNOB_WORKSPACE_SLOTS: i64 = 3;
/// Knob: the instruction set of the GEMM kernels (see [`crate::fast::isa`]); 0 = the best at
/// build time.
pub const KNOB_ISA: i64 = 4;

/// The tallest and widest packed kernel of any level ([`Packed::dims_of`]): the packed direct
/// path's buffers are sized for them.
const PACKED_MR_MAX: usize = 8;
const PACKED_NR_MAX: usize = 32;
/// Steps of the packed direct path's slivers per kernel call (a 24-wide right sliver of 256
/// steps is 24 KiB, in L1).
const PACKED_KC: usize = 256;

/// Patch floats one tile aims for (512 KiB of f32: the unrolled tile stays in L2).
const TARGET_COL_FLOATS: usize = 128 * 1024;
/// The shortest tile of positions the packed direct kernels take ([`ConvPlan`]'s
/// `packed_direct`); shorter ones run as GEMMs.
const DIRECT_LEAST_TILE: usize = 128;
/// The narrowest output the banded path takes ([`Banded`]): its blocks of positions lie in one
/// row of the output, and narrower rows would leave most of the kernels' lanes empty.
const BANDED_LEAST_WIDTH: usize = 14;
/// Output positions a tile of the banded path takes (whole rows of the output, at least one),
/// and the fewest it takes unless the tile is a whole image (each row of a tile copies the
/// filter's height in input rows into its band).
const BANDED_TILE: usize = 512;
const BANDED_LEAST_TILE: usize = 64;
/// Workspace alignment the engine keeps for its f32 buffers.
const ALIGN: usize = 64;
/// The most output positions a depthwise convolution's tile takes as one whole plane.
const DEPTHWISE_PLANE_MAX: usize = 1 << 16;
/// About how many values (positions × channels) a channels-last depthwise tile holds.
const DEPTHWISE_CL_TILE_FLOATS: usize = 1 << 14;

/// Forward convolution with a fused pointwise epilogue.
pub struct ConvFpropEngine;

fn find_conv(graph: &OpGraph) -> Result<usize, String> {
    let convs: Vec<usize> = (0..graph.nodes.len())
        .filter(|&i| matches!(graph.nodes[i].op, Op::Conv(_)))
        .collect();
    match convs[..] {
        [i] => match &graph.nodes[i].op {
            Op::Conv(c) if c.direction == ConvDirection::Fprop => Ok(i),
            _ => Err(format!(
                "node '{}' is {}; this engine runs conv_fprop only",
                graph.nodes[i].name,
                graph.nodes[i].op.describe()
            )),
        },
        [] => Err("the graph has no convolution".into()),
        _ => Err(format!(
            "the graph has {} convolutions; this engine runs one",
            convs.len()
        )),
    }
}

impl CpuEngine for ConvFpropEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    fn knobs(&self) -> Vec<KnobDescriptor> {
        vec![
            KnobDescriptor {
                id: KNOB_ALGO,
                name: "conv_algo",
                min: 0,
                max: 3,
                stride: 1,
                default: 0,
            },
            KnobDescriptor {
                id: KNOB_TILE_POSITIONS,
                name: "tile_positions",
                min: 0,
                max: 8192,
                stride: 16,
                default: 0,
            },
            crate::fast::workspace_slots_knob(KNOB_WORKSPACE_SLOTS),
            isa_knob(KNOB_ISA),
        ]
    }

    fn resolve_auto_knobs(&self, graph: &OpGraph, knobs: &mut [i64]) {
        crate::fast::resolve_workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        // Auto picks AMX for a bf16 convolution whose patches the AMX path gathers from the
        // input or its channels-last copy (ConvAmx::gather): on an Emerald Rapids guest the
        // standard NHWC cases ran 2.7 and 3.5 times as fast as Winograd in f32, and the same
        // cases NCHW (copied channels-last first) 1.0-1.2 and 1.8-2.2 times as fast, on a day
        // its AMX ran at a third of the speed. Elsewhere the AMX path's im2col tiles
        // (widened, gathered, repacked) lost to Winograd (134 and 178 against 172 and 253
        // GFLOP/s on the development machine's Xeon), so auto stops at AVX-512 there. Where the
        // processor has AVX-512 BF16 and no AMX (a Zen 4 guest), the same gathered path with
        // `vdpbf16ps` ran the NCHW cases 1.0 (C64 H56), 1.15 (C256 H14) and 1.8 (1x1 C128 H28)
        // times as fast as Winograd in f32, the NHWC ones 1.1 and 1.25 times: auto takes it
        // (the level below `amx` when `amx` is missing).
        let useful = if amx_gathers(graph) {
            Isa::Amx
        } else {
            Isa::Avx512
        };
        resolve_isa_knob(knobs, KNOB_ISA, useful);
    }

    /// Accepts one conv_fprop node over f32/f16/bf16 tensors, alone or followed by a pointwise
    /// epilogue chain (see the `epilogue` module).
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        let i = find_conv(graph)?;
        if let Op::Conv(c) = &graph.nodes[i].op {
            check_data_type(graph, c.x)?;
            check_data_type(graph, c.w)?;
        }
        Epilogue::parse(graph, i).map(|_| ())
    }

    fn prepare(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        Ok(Box::new(self.plan(graph, knobs)?))
    }
}

impl ConvFpropEngine {
    /// The plan [`CpuEngine::prepare`] returns.
    fn plan(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<ConvPlan> {
        let fail = |why: String| PluginError::not_supported(format!("{NAME}: {why}"));
        let i = find_conv(graph).map_err(fail)?;
        self.supports(graph).map_err(fail)?;
        let epilogue = Epilogue::parse(graph, i).map_err(fail)?;
        let Op::Conv(conv) = &graph.nodes[i].op else {
            return Err(PluginError::internal(format!(
                "{NAME}: node {i} is not a convolution"
            )));
        };
        let knob = |id: i64| knobs.get((id - 1) as usize).copied().unwrap_or(0);
        let run = isa_to_run(NAME, knobs, KNOB_ISA);
        let recorded = recorded_isa(knobs, KNOB_ISA);
        ConvPlan::new(
            graph,
            conv,
            &epilogue,
            knob(KNOB_ALGO),
            knob(KNOB_TILE_POSITIONS) as usize,
            crate::fast::workspace_slots(knobs, KNOB_WORKSPACE_SLOTS),
            (run, recorded.unwrap_or(run)),
            recorded.is_some_and(crate::fast::multiplies_bf16) && bf16_operands(graph),
        )
    }
}

/// Whether the plan of `graph` with `knobs` runs the banded path ([`Banded`]; where the
/// level at execute has the direct kernels and x is aligned).
#[cfg(test)]
pub(crate) fn plans_banded(graph: &OpGraph, knobs: &[i64]) -> bool {
    ConvFpropEngine
        .plan(graph, knobs)
        .is_ok_and(|p| p.banded.is_some() && p.packed_direct)
}

/// Whether the plan of `graph` with `knobs` runs a depthwise convolution with the channels in
/// the lanes ([`super::depthwise_lanes`]).
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn plans_depthwise_lanes(graph: &OpGraph, knobs: &[i64]) -> bool {
    ConvFpropEngine
        .plan(graph, knobs)
        .is_ok_and(|p| p.depthwise_lanes.is_some())
}

/// Whether the plan of `graph` with `knobs` runs with the filters in the lanes
/// ([`BroadcastPlan`]).
#[cfg(test)]
pub(crate) fn plans_broadcast(graph: &OpGraph, knobs: &[i64]) -> bool {
    ConvFpropEngine
        .plan(graph, knobs)
        .is_ok_and(|p| p.broadcast.is_some())
}

/// Whether the graph's convolution reads a bf16 input and bf16 filters (what the AMX path
/// multiplies).
fn bf16_operands(graph: &OpGraph) -> bool {
    let Ok(i) = find_conv(graph) else {
        return false;
    };
    let Op::Conv(c) = &graph.nodes[i].op else {
        return false;
    };
    crate::fast::both_bf16(graph, c.x, c.w)
}

/// Whether the input's patches can be gathered 32 channels at a time into AMX's packed layout
/// ([`ConvAmx::gather`]): bf16 operands, each group's channel count a multiple of 32. The
/// patches are gathered from x itself when it is channels-last with dense channels
/// ([`reads_x_in_place`]), else from a channels-last copy of it made at execute.
fn gathers(s: &Shape) -> bool {
    s.x_type == DataType::Bf16 && s.w_type == DataType::Bf16 && s.cg.is_multiple_of(32)
}

/// Whether the gathering AMX path reads x in place: channels-last with dense channels.
fn reads_x_in_place(s: &Shape, channels_last: bool) -> bool {
    channels_last && s.xs.1 == 1
}

/// Whether the graph's convolution is one whose AMX path gathers its patches ([`gathers`]).
fn amx_gathers(graph: &OpGraph) -> bool {
    let Ok(i) = find_conv(graph) else {
        return false;
    };
    let Op::Conv(c) = &graph.nodes[i].op else {
        return false;
    };
    Shape::new(graph, c).is_ok_and(|s| gathers(&s))
}

/// Whether the input's patches are laid out channels-last, and whether the output tile's rows
/// are positions (a channels-last output).
fn layouts(s: &Shape, x: &TensorDesc, out: &TensorDesc) -> (bool, bool) {
    let min_spatial = x.strides[2..].iter().copied().min().unwrap_or(1);
    let channels_last = s.cg > 1 && x.strides[1] < min_spatial;
    let rows_are_positions = out.strides[2..].iter().all(|&st| out.strides[1] < st);
    (channels_last, rows_are_positions)
}

/// The packed bf16 path of a plan recorded at the `amx` or `avx512bf16` level with bf16
/// operands: the filters of each group packed once per execute, each im2col tile packed per
/// worker (see [`crate::fast::amx`]), multiplied on AMX tiles or with `vdpbf16ps`.
struct ConvAmx {
    /// The patches are AMX's left operand and the filters its right one, so that the tiles hold
    /// [positions, kg] (stored as rows of a channels-last output's tile, or transposed into a
    /// channels-first one's): always when the patches are gathered, and for a channels-last
    /// output. Otherwise the filters are the left operand and the tile [kg, positions].
    positions_as_rows: bool,
    /// bf16 elements of one group's packed filters, and of one worker's packed tile.
    group_len: usize,
    tile_len: usize,
    /// The tile's patches are gathered from a channels-last bf16 input (x itself, or its copy:
    /// [`Self::x_copy`]) straight into the packed layout, 32 channels at a time (no im2col in
    /// f32, no repacking): positions are the rows and each group's channel count is a multiple
    /// of 32.
    gather: bool,
    /// Set when the patches are gathered from a copy of x that the execute writes into the
    /// workspace channels-last and dense ([N][spatial][C] bf16), x not being so itself (an
    /// NCHW input, say): the number of bf16 values of that copy.
    x_copy: Option<usize>,
    /// The filters are bf16 and stored channels-last and dense, and the patches are laid out
    /// channels-last (tap-major, as such filters are stored: each filter's patch is one run in
    /// the patches' order): they are packed for the tiles straight from the weights, not from
    /// their f32 copy.
    filters_direct: bool,
    /// Whether the level that runs here multiplies bf16 (`amx` or `avx512bf16`; otherwise the
    /// plan runs the f32 path).
    run: bool,
}

struct ConvPlan {
    s: Shape,
    x_uid: i64,
    w_uid: i64,
    /// Patches laid out channels-last (rows of channels) instead of channels-first.
    channels_last: bool,
    /// 1x1 stride-1 unpadded convolution whose output positions walk the input linearly:
    /// GEMM straight on the input (when it is f32 and aligned at execute).
    direct_step: Option<isize>,
    /// Tile rows are output positions (channels-last output) instead of output channels.
    rows_are_positions: bool,
    /// A direct convolution with a channels-first output, for which the workspace also holds
    /// the packed path's buffers (see [`ConvPlan::packed_direct_tile`]); it runs that path at
    /// the levels whose GEMMs are kiln's kernels.
    packed_direct: bool,
    tile_positions: usize,
    chunks: usize,
    /// Per-worker scratch regions in the workspace, fixed when the plan is prepared (at most the
    /// `workspace_slots` knob); the im2col loop runs at most this many tasks.
    regions: usize,
    epilogue: BoundEpilogue,
    /// Set when the convolution runs as Winograd F(2x2, 3x3) instead of im2col.
    winograd: Option<WinogradPlan>,
    /// Set when the convolution runs with the filters in the lanes
    /// ([`super::broadcast`]) instead of im2col.
    broadcast: Option<BroadcastPlan>,
    /// The instruction set the GEMMs run with.
    isa: Isa,
    amx: Option<ConvAmx>,
    /// A depthwise convolution computed directly ([`super::depthwise`]) instead of by im2col.
    depthwise: bool,
    /// ... and channels-last: tiles of positions × every channel
    /// ([`super::depthwise::channels_last_tile`]) instead of planes.
    depthwise_cl: bool,
    /// A grouped convolution of 2, 4 or 8 channels a group whose plan has a cut in
    /// `depthwise_lanes` (its blocks of channels in the vector lanes).
    grouped: bool,
    /// ... and with an f32 input, at the AVX2 and AVX-512 levels, channels-first writing a
    /// bias + relu chain (or none) itself or channels-last: blocks of channels in the vector
    /// lanes ([`super::depthwise_lanes`]) instead of planes or tiles of positions.
    #[cfg(target_arch = "x86_64")]
    depthwise_lanes: Option<super::depthwise_lanes::Lanes>,
    /// Set when a convolution that would run as im2col tiles runs on the direct kernels from
    /// padded bands of its input rows instead.
    banded: Option<Banded>,
}

/// A 2-D stride-1 convolution (any filter and padding, no dilation, channels-first input and
/// output, f32) on the direct kernels of the AVX2 and AVX-512 levels (`super::direct`), which
/// read the rows of the right operand through [`DirectTile::rows`]. A tile is whole rows of
/// the output; its worker first copies the band of input rows they read, for the group's
/// channels, into its slot, padded with zeros: for one row of outputs each patch row (channel,
/// filter row, filter column) is then a run of consecutive values of the band (in L2), copied
/// for a block of positions into L1 as the 1x1 path copies its input. No im2col and no packing
/// of the patches; the filters are packed once per execute. (ONNX Runtime runs these as NCHWc
/// convolutions.) At stride 2 the same with each row split into its even and odd columns
/// measured no faster than im2col tiles (docs/engines/cpu.md), so those stay im2col.
struct Banded {
    /// Padded input rows of a tile's band (band row h holds input row h - pad of a tile whose
    /// first output row is 0, one row further per output row).
    band_rows: usize,
    /// Values of a padded row: the runs the kernels read and the input row after its
    /// padding, in whole vectors ([`Band::copy`]).
    row_len: usize,
    /// Each patch row's offset from a band at an output row's first padded input row
    /// (channel, filter row, filter column in the patch's order).
    offsets: Vec<isize>,
}

impl Banded {
    /// The banded path's plan for `s` with tiles of `tile_rows` output rows, where it applies.
    fn new(s: &Shape, tile_rows: usize) -> Option<Banded> {
        let [_, oh, ow] = s.output;
        let [_, r, c] = s.filter;
        let eligible = s.input[0] == 1
            && s.filter[0] == 1
            && s.output[0] == 1
            && s.dilation.iter().all(|&d| d >= 1)
            && s.stride.iter().all(|&d| d == 1)
            && s.x_type == DataType::F32
            && s.xs.2[2] == 1
            && ow >= BANDED_LEAST_WIDTH
            && oh >= 1
            && r * c > 1
            && s.pad[1] >= 0
            && s.pad[2] >= 0;
        if !eligible {
            return None;
        }
        let (pw, iw) = (s.pad[2] as usize, s.input[2]);
        let (d1, d2) = (s.dilation[1] as usize, s.dilation[2] as usize);
        let band_rows = tile_rows.min(oh) - 1 + (r - 1) * d1 + 1;
        let row_len = (ow + (c - 1) * d2).max(pw + iw).next_multiple_of(16);
        let chan = (band_rows * row_len) as isize;
        let mut offsets = Vec::with_capacity(s.cg * r * c);
        for ch in 0..s.cg {
            for fr in 0..r {
                for fc in 0..c {
                    offsets.push(ch as isize * chan + (fr * d1 * row_len + fc * d2) as isize);
                }
            }
        }
        Some(Banded {
            band_rows,
            row_len,
            offsets,
        })
    }

    /// f32 values of a band (every channel of a group).
    fn band_floats(&self, s: &Shape) -> usize {
        s.cg * self.band_rows * self.row_len
    }
}

impl ConvPlan {
    #[allow(clippy::too_many_arguments)]
    fn new(
        graph: &OpGraph,
        conv: &kiln_core::ConvOp,
        epilogue: &Epilogue,
        algo: i64,
        tile_knob: usize,
        slots: usize,
        (isa, recorded): (Isa, Isa),
        amx_layout: bool,
    ) -> PluginResult<ConvPlan> {
        let tensor = |uid: i64| {
            graph.tensor(uid).ok_or_else(|| {
                PluginError::internal(format!("tensor uid {uid} is not in the graph"))
            })
        };
        let (x, y) = (tensor(conv.x)?, tensor(conv.y)?);
        let out = tensor(epilogue.out_uid)?;
        let s = Shape::new(graph, conv)?;
        let (x_channels_last, rows_are_positions) = layouts(&s, x, out);
        let gather = amx_layout && gathers(&s);
        // Gathered patches are in the channels-last order (tap-major), which the filters'
        // packing and the f32 path's im2col then follow too (im2col reads x through its strides
        // in either order).
        let channels_last = x_channels_last || gather;
        let force_im2col = algo == 1;
        let direct_step = if force_im2col || s.x_type != DataType::F32 {
            None
        } else {
            direct_step(&s)
        };
        let positions = s.positions();
        let tile_positions = if tile_knob > 0 {
            tile_knob.min(positions)
        } else {
            // GEMM runs better on wide tiles: at least 128 positions, and a whole small image
            // per tile when there are enough images to keep every worker busy.
            let want = (TARGET_COL_FLOATS / s.patch().max(1)).clamp(128, 1024);
            let images = s.n * s.groups;
            let chunks = if positions <= 2 * want && images >= 2 * slots {
                1
            } else {
                positions.div_ceil(want)
            };
            positions
                .div_ceil(chunks)
                .next_multiple_of(8)
                .min(positions)
        };
        let geometry = Geometry {
            dims: y.dims.clone(),
            fixed: vec![0],
            rows: if rows_are_positions {
                (2..y.dims.len()).collect()
            } else {
                vec![1]
            },
            cols: if rows_are_positions {
                vec![1]
            } else {
                (2..y.dims.len()).collect()
            },
        };
        let epilogue = epilogue.bind(graph, &geometry)?.with_isa(isa);
        // Grouped convolutions of 2, 4 or 8 channels a group (input and output), channels-first
        // with a bias + relu chain along the rows or none, or channels-last in and out with one
        // along the columns, run with their blocks of channels in the vector lanes as
        // depthwise ones do (`super::depthwise_lanes::Lanes`' `group`), unless the knobs ask
        // for another path.
        #[cfg(target_arch = "x86_64")]
        let grouped_lanes = (algo == 0
            && tile_knob == 0
            && !amx_layout
            && direct_step.is_none()
            && s.groups > 1
            && s.cg > 1)
            .then(|| match (x_channels_last, rows_are_positions) {
                (false, false) if epilogue.row_bias_relu().is_some() => {
                    super::depthwise_lanes::Lanes::new(&s, isa, false)
                }
                (true, true) if epilogue.col_bias_relu().is_some() => {
                    super::depthwise_lanes::Lanes::new(&s, isa, true)
                }
                _ => None,
            })
            .flatten();
        #[cfg(target_arch = "x86_64")]
        let grouped = grouped_lanes.is_some();
        #[cfg(not(target_arch = "x86_64"))]
        let grouped = false;
        // Depthwise convolutions run directly unless the knob asks for im2col or Winograd.
        let depthwise =
            algo == 0 && !amx_layout && direct_step.is_none() && super::depthwise::eligible(&s);
        let depthwise_cl =
            depthwise && super::depthwise::runs_channels_last(&s, rows_are_positions);
        // A depthwise tile is a whole image plane where it is not too large, so that the plane
        // kernel sees the plane at once (super::depthwise::plane); a channels-last one about
        // DEPTHWISE_CL_TILE_FLOATS values of positions × channels.
        let tile_positions = if depthwise_cl && tile_knob == 0 {
            (DEPTHWISE_CL_TILE_FLOATS / s.groups).clamp(1, positions)
        } else if depthwise && tile_knob == 0 && positions <= DEPTHWISE_PLANE_MAX {
            positions
        } else {
            tile_positions
        };
        // AMX tiles multiply bf16 about 16 times as fast as f32 FMAs: far more than Winograd's
        // 2.25 fewer multiplications. `vdpbf16ps` does twice the FMA's work, about as much as
        // Winograd saves, and measured as fast or faster (resolve_auto_knobs).
        let use_winograd = match algo {
            _ if amx_layout || depthwise || grouped => false,
            1 | 3 => false,
            2 => winograd::eligible(&s),
            _ => winograd::preferred(&s),
        };
        let winograd =
            use_winograd.then(|| WinogradPlan::new(&s, rows_are_positions, tile_knob, slots, isa));
        // Convolutions with the filters in the lanes (super::broadcast): by default those
        // broadcast::preferred names (strided ones, 5x5 and larger filters, narrow rows, 1x1
        // filters over few positions at the AVX-512 levels, grouped ones), channels-first or
        // channels-last, any eligible one with the knob's value 3. The level it asks about is the
        // plan's recorded one, not the one that runs, so that a plan takes the same path (and
        // asks for the same workspace) on every processor.
        let use_broadcast = !amx_layout
            && !depthwise
            && !grouped
            && !use_winograd
            && match algo {
                3 => broadcast::eligible(&s),
                0 => tile_knob == 0 && broadcast::preferred(&s, recorded),
                _ => false,
            };
        let broadcast =
            use_broadcast.then(|| BroadcastPlan::new(&s, slots, isa, rows_are_positions));
        // Stride-1 convolutions that would run as im2col tiles at the levels with direct
        // kernels run them from padded bands of x's rows ([`Banded`]; the knob's "im2col"
        // value keeps im2col, as does a tile size set by the knob), in tiles of whole rows of
        // the output (its blocks of positions never cross a row).
        let banded_shape = algo == 0
            && !amx_layout
            && !depthwise
            && !grouped
            && !use_winograd
            && !use_broadcast
            && direct_step.is_none()
            && !channels_last
            && !rows_are_positions
            && tile_knob == 0
            && matches!(isa, Isa::Avx2 | Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx);
        // About BANDED_TILE positions a tile, in whole rows of the output, fewer where there
        // would be fewer than two tiles a worker.
        let ow = s.output[2].max(1);
        let mut tile_rows = (BANDED_TILE / ow).clamp(1, s.output[1].max(1));
        while tile_rows > 1 && s.n * s.groups * s.output[1].div_ceil(tile_rows) < 2 * slots {
            tile_rows -= 1;
        }
        // (With fewer tiles than workers, or tiles of a few short rows, the GEMM: see
        // few_tiles below.)
        let banded_tile = tile_rows * ow;
        let banded = banded_shape
            .then(|| Banded::new(&s, tile_rows))
            .flatten()
            .filter(|_| {
                (banded_tile >= BANDED_LEAST_TILE || tile_rows == s.output[1])
                    && s.n * s.groups * positions.div_ceil(banded_tile) >= slots.max(1)
            });
        let tile_positions = if banded.is_some() {
            banded_tile
        } else {
            tile_positions
        };
        let chunks = positions.div_ceil(tile_positions);
        // The packed direct kernels take a whole tile's filters at once, a worker a tile: with
        // short tiles or fewer tiles than workers (one 14x14 or 7x7 image) the GEMM, split
        // among the threads, reads x and the filters in place instead (1×2048×7²→512 went
        // from 1.57 to 0.46 ms, 1×256×14²→1024 from 0.77 to 0.45). A tile size set by the knob
        // keeps the direct kernels.
        // (The banded path made its own test above.)
        let few_tiles = tile_knob == 0
            && banded.is_none()
            && (tile_positions < DIRECT_LEAST_TILE || s.n * s.groups * chunks < slots.max(1));
        #[cfg(target_arch = "x86_64")]
        let depthwise_lanes = if grouped_lanes.is_some() {
            grouped_lanes
        } else if !depthwise || tile_knob != 0 {
            None
        } else if depthwise_cl {
            epilogue
                .col_bias_relu()
                .and_then(|_| super::depthwise_lanes::Lanes::new(&s, isa, true))
        } else if !rows_are_positions && epilogue.row_bias_relu().is_some() {
            super::depthwise_lanes::Lanes::new(&s, isa, false)
        } else {
            None
        };
        Ok(ConvPlan {
            x_uid: conv.x,
            w_uid: conv.w,
            channels_last,
            direct_step,
            rows_are_positions,
            packed_direct: (direct_step.is_some() || banded.is_some())
                && !rows_are_positions
                && !amx_layout
                && !few_tiles,
            depthwise,
            depthwise_cl,
            grouped,
            #[cfg(target_arch = "x86_64")]
            depthwise_lanes,
            tile_positions,
            chunks,
            regions: slots.min(s.n * s.groups * chunks).max(1),
            epilogue,
            winograd,
            broadcast,
            isa,
            banded,
            amx: amx_layout.then(|| {
                let positions_as_rows = rows_are_positions || gather;
                ConvAmx {
                    positions_as_rows,
                    group_len: if positions_as_rows {
                        crate::fast::amx_packed_len(s.patch(), s.kg)
                    } else {
                        crate::fast::amx_packed_len(s.kg, s.patch())
                    },
                    tile_len: if positions_as_rows {
                        crate::fast::amx_packed_len(tile_positions, s.patch())
                    } else {
                        crate::fast::amx_packed_len(s.patch(), tile_positions)
                    },
                    gather,
                    x_copy: (gather && !reads_x_in_place(&s, x_channels_last))
                        .then(|| s.n * s.groups * s.cg * s.input.iter().product::<usize>()),
                    filters_direct: positions_as_rows
                        && channels_last
                        && s.w_type == DataType::Bf16
                        && {
                            let fits = |size: usize, stride: isize, want: usize| {
                                size == 1 || stride == want as isize
                            };
                            fits(s.cg, s.ws.1, 1)
                                && fits(s.filter[2], s.ws.2[2], s.cg)
                                && fits(s.filter[1], s.ws.2[1], s.cg * s.filter[2])
                                && fits(s.filter[0], s.ws.2[0], s.cg * s.filter[1] * s.filter[2])
                        },
                    run: crate::fast::multiplies_bf16(isa),
                }
            }),
            s,
        })
    }

    fn weight_floats(&self) -> usize {
        self.s.weight_floats()
    }

    /// The filter stride where the GEMM can read the bound weights `w` as its [K, patch] left
    /// operand itself: f32, 4-byte aligned, each filter one dense run in the patch order of a
    /// channels-first im2col.
    fn weights_in_place(&self, w: SharedPtr) -> Option<isize> {
        let s = &self.s;
        (s.w_type == DataType::F32
            && !self.channels_last
            && s.filters_dense()
            && w.get().cast::<f32>().is_aligned())
        .then_some(s.ws.0)
    }

    /// The output tile of item (n, g) at positions `p0..p0 + len`, its values at `values` with
    /// leading dimension `ld`: rows are positions (a channels-last output) or the group's
    /// filters.
    #[allow(clippy::too_many_arguments)]
    fn output_tile<'t>(
        &self,
        n: usize,
        g: usize,
        p0: usize,
        len: usize,
        values: &'t mut [f32],
        ld: usize,
    ) -> Tile<'t> {
        let kg = self.s.kg;
        let (row0, col0, rows, cols) = if self.rows_are_positions {
            (p0, g * kg, len, kg)
        } else {
            (g * kg, p0, kg, len)
        };
        Tile {
            fixed: n,
            row0,
            col0,
            rows,
            cols,
            values: &mut values[..rows * ld],
            ld,
        }
    }

    /// Runs the epilogue's steps (if it has any) on the part of the output that `t` stands
    /// for, where the GEMM wrote its results ([`BoundEpilogue::out_matrix`]); `t`'s values and
    /// `scratch` serve as buffers (a row each). Split by rows among `threads` workers when the
    /// item's GEMM was.
    ///
    /// # Safety
    /// As for [`BoundEpilogue::apply_in_output`] for each of the tile's rows.
    unsafe fn steps_in_output(
        &self,
        ptrs: &EpiloguePtrs,
        t: Tile<'_>,
        scratch: &mut [f32],
        threads: usize,
    ) {
        if !self.epilogue.has_steps() {
            return;
        }
        let (rows, cols) = (t.rows, t.cols);
        let rows_of = |first: usize, last: usize, buf: &mut [f32], scratch: &mut [f32]| {
            for r in first..last {
                // SAFETY: forwarded contract; row r of the tile.
                unsafe {
                    self.epilogue.apply_in_output(
                        ptrs,
                        t.fixed,
                        t.row0 + r,
                        t.col0,
                        &mut buf[..cols],
                        &mut scratch[..cols],
                    )
                };
            }
        };
        let parts = threads.min(rows);
        if parts <= 1 {
            return rows_of(0, rows, t.values, scratch);
        }
        pool::for_each(parts, |part| {
            let mut run = vec![0.0f32; 2 * cols];
            let (buf, scratch) = run.split_at_mut(cols);
            rows_of(part * rows / parts, (part + 1) * rows / parts, buf, scratch);
        });
    }

    /// f32 values of the packed direct path's left slivers (all groups), sized for any
    /// kernel's rows so that the workspace does not depend on the level; 0
    /// without the path.
    fn packed_filter_floats(&self) -> usize {
        if !self.packed_direct {
            return 0;
        }
        (self.s.groups * (self.s.kg + PACKED_MR_MAX) * self.s.patch()).next_multiple_of(ALIGN / 4)
    }

    /// Writes each group's filters (`wpack`, [kg, patch] per group) as left slivers of `mr`
    /// rows: `[group][kg / mr][patch][mr]`, filters past kg as zeros.
    fn pack_filter_slivers(&self, mr: usize, wpack: &[f32], u: &mut [f32]) {
        let (kg, patch) = (self.s.kg, self.s.patch());
        let per_group = kg.div_ceil(mr);
        pool::for_each_chunk_mut(
            &mut u[..self.s.groups * per_group * patch * mr],
            patch * mr,
            |i, sliver| {
                let (g, rows) = self.sliver_rows(mr, i);
                let wg = &wpack[g * kg * patch..];
                write_sliver(mr, patch, &wg[rows.start * patch..rows.end * patch], sliver);
            },
        );
    }

    /// Packs left sliver `i` of the direct kernels' layout straight from the weights: its
    /// filters into their rows of the packed weights `wpack` ([K, patch]), then into the sliver
    /// of `u`. The layout is [`Self::pack_filter_slivers`]' but for which filters a group's last
    /// two slivers hold ([`direct::sliver_span`]).
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call; `wpack` and `u` point to this
    /// call's regions of the workspace for them, which nothing else reads or writes at these
    /// places meanwhile.
    unsafe fn pack_sliver_from_weights(
        &self,
        mr: usize,
        w: SharedPtr,
        wpack: SharedPtr,
        u: SharedPtr,
        i: usize,
    ) {
        let (kg, patch) = (self.s.kg, self.s.patch());
        // The direct kernels' slivers (their last two share the rest: direct::sliver_span).
        let per_group = kg.div_ceil(mr);
        let (g, (row0, len)) = (i / per_group, direct::sliver_span(kg, mr, i % per_group));
        let rows = row0..row0 + len;
        let first = g * kg + rows.start;
        // SAFETY: rows first.. of the [K, patch] region, this sliver's own.
        let packed = unsafe {
            std::slice::from_raw_parts_mut(
                wpack.get().cast::<f32>().add(first * patch),
                rows.len() * patch,
            )
        };
        for (r, row) in packed.chunks_exact_mut(patch).enumerate() {
            // SAFETY: forwarded contract; first + r < K.
            unsafe { pack_weight_row(&self.s, self.channels_last, w, first + r, row) };
        }
        // SAFETY: sliver i of u's layout, this sliver's own.
        let sliver = unsafe {
            std::slice::from_raw_parts_mut(u.get().cast::<f32>().add(i * patch * mr), patch * mr)
        };
        write_sliver(mr, patch, packed, sliver);
    }

    /// The group of left sliver `i` of [`Self::pack_filter_slivers`]' layout, and its filters
    /// within the group (fewer than `mr` in a group's last sliver).
    fn sliver_rows(&self, mr: usize, i: usize) -> (usize, std::ops::Range<usize>) {
        let per_group = self.s.kg.div_ceil(mr);
        let (g, sv) = (i / per_group, i % per_group);
        (g, sv * mr..((sv + 1) * mr).min(self.s.kg))
    }

    /// One tile of a direct convolution on kiln's packed kernel: the tile's `len` input
    /// positions (from `x`, channel stride `cs`, position step `step`) are copied into right
    /// slivers in `bbuf`, and every (filter sliver, position sliver) pair is multiplied into
    /// `tile`, [kg rounded to mr][len rounded to nr] at row stride `ld` (returned). The filters'
    /// slivers `u` are this group's part of [`ConvPlan::pack_filter_slivers`]' output.
    ///
    /// # Safety
    /// `x` addresses the group's channels at the tile's first position, with `len` positions
    /// in range for each; the processor runs `kern`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn packed_direct_tile(
        &self,
        kern: Packed,
        u: &[f32],
        x: *const f32,
        cs: isize,
        step: isize,
        len: usize,
        bbuf: &mut [f32],
        tile: &mut [f32],
    ) -> usize {
        let (kg, patch, mr, nr) = (self.s.kg, self.s.patch(), kern.mr, kern.nr);
        debug_assert!(mr <= PACKED_MR_MAX && nr <= PACKED_NR_MAX);
        let ld = len.next_multiple_of(nr);
        let slivers = ld / nr;
        let b = &mut bbuf[..patch * ld];
        // Channel by channel, so that the input is read in order; each channel's positions go
        // to the same step of every sliver.
        for c in 0..patch {
            let src = x.wrapping_offset(c as isize * cs);
            for sv in 0..slivers {
                let (j0, cols) = (sv * nr, nr.min(len - sv * nr));
                let row = &mut b[sv * patch * nr + c * nr..][..nr];
                let at = src.wrapping_offset(j0 as isize * step);
                if step == 1 && cols == nr {
                    // SAFETY: positions j0..j0 + nr <= len of channel c.
                    unsafe { copy_sliver_row(at, row) };
                } else {
                    for (j, v) in row[..cols].iter_mut().enumerate() {
                        // SAFETY: channel c, position j0 + j < len of the tile.
                        *v = unsafe { *at.offset(j as isize * step) };
                    }
                    row[cols..].fill(0.0);
                }
            }
        }
        let kslivers = kg.div_ceil(mr);
        let tile = &mut tile[..kslivers * mr * ld];
        for p0 in (0..patch).step_by(PACKED_KC) {
            let kc = PACKED_KC.min(patch - p0);
            for sv in 0..slivers {
                let bp = b[sv * patch * nr + p0 * nr..].as_ptr();
                for ks in 0..kslivers {
                    let ap = u[ks * patch * mr + p0 * mr..].as_ptr();
                    let cp = tile[ks * mr * ld + sv * nr..].as_mut_ptr();
                    // SAFETY: kc steps of both slivers; the mr × nr tile lies inside `tile`
                    // (mr rows of ld floats from row ks·mr, columns sv·nr..+nr <= ld).
                    unsafe { kern.tile(kc, ap, bp, cp, ld, p0 == 0) };
                }
            }
        }
        ld
    }

    /// Packs each group's [kg, patch] filters into the AMX layout in `region`, in parallel over
    /// blocks of 32 filters: from the bf16 weights `w` themselves when `direct` (set only where
    /// [`ConvAmx::filters_direct`] and `w` is 2-byte aligned), else from their f32 copy in
    /// `wpack` (exactly bf16 values).
    ///
    /// # Safety
    /// `region` holds `groups × group_len` bf16 values; `w` is the bound weight pointer; `wpack`
    /// holds the f32 copy unless `direct`.
    #[allow(unused_variables)]
    unsafe fn pack_filters_for_amx(
        &self,
        a: &ConvAmx,
        direct: bool,
        w: SharedPtr,
        wpack: &[f32],
        region: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::fast::amx;
            let (kg, patch) = (self.s.kg, self.s.patch());
            // SAFETY: the caller's contract.
            let out = unsafe {
                std::slice::from_raw_parts_mut(
                    region.as_mut_ptr() as *mut half::bf16,
                    self.s.groups * a.group_len,
                )
            };
            // One packed block: 32 filters (columns of B, or rows of A) over the whole patch.
            let blocks = kg.div_ceil(32);
            let len = amx::block_len(patch);
            let packed = (self.s.groups * blocks * len).min(out.len());
            pool::for_each_chunk_mut(&mut out[..packed], len, |c, dst| {
                let (g, j) = (c / blocks, c % blocks);
                let first = g * kg + 32 * j;
                let count = kg - 32 * j;
                // SAFETY: filters first.. of group g (fewer than 32 at the end are padded):
                // in w, filter f's patch is the run at f·ws.0 (filters_direct); in wpack the
                // [kg, patch] rows of all groups, row-major.
                unsafe {
                    if direct {
                        let src = (w.get() as *const half::bf16)
                            .wrapping_offset(first as isize * self.s.ws.0);
                        amx::pack_b(src, patch, count, 1, self.s.ws.0, dst)
                    } else if a.positions_as_rows {
                        let src = wpack[first * patch..].as_ptr();
                        amx::pack_b(src, patch, count, 1, patch as isize, dst)
                    } else {
                        let src = wpack[first * patch..].as_ptr();
                        amx::pack_a(src, count, patch, patch as isize, 1, dst)
                    }
                };
            });
        }
    }

    /// One im2col tile of the packed bf16 path: packs the tile's patches (`rhs`, [patch, len])
    /// into worker `slot`'s region and multiplies group `g`'s packed filters by them into `dst`
    /// ([kg, len]) with the plan's level's kernel (AMX tiles or `vdpbf16ps`). Returns false
    /// (doing nothing) where kiln has no such kernel (not x86-64, or a level below
    /// `avx512bf16`).
    ///
    /// # Safety
    /// The regions are the ones [`Self::pack_filters_for_amx`] filled and this plan's per-worker
    /// packed tiles; `rhs` and `dst` address the tile's matrices; the plan's level runs here.
    #[allow(unused_variables, clippy::too_many_arguments)]
    unsafe fn amx_tile(
        &self,
        a: &ConvAmx,
        g: usize,
        slot: usize,
        filters: SharedPtr,
        tiles: SharedPtr,
        rhs: (*const f32, isize, isize),
        len: usize,
        dst: (*mut f32, isize, isize),
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use half::bf16;
            let Some(kernel) = crate::fast::amx::Kernel::for_isa(self.isa) else {
                return false;
            };
            let (_, tile_floats) = self.amx_floats();
            let packed = (tiles.get() as *mut bf16).wrapping_add(slot * 2 * tile_floats);
            let filters = (filters.get() as *const bf16).wrapping_add(g * a.group_len);
            let patch = self.s.patch();
            // SAFETY: the caller's contract; the region holds tile_len bf16 values.
            unsafe {
                let packed = std::slice::from_raw_parts_mut(packed, a.tile_len);
                if a.positions_as_rows {
                    // tileᵀ [len, kg] = patchesᵀ [len, patch] · filtersᵀ [patch, kg].
                    crate::fast::amx::pack_a(rhs.0, len, patch, rhs.2, rhs.1, packed);
                    let dst_t = (dst.0, dst.2, dst.1);
                    crate::fast::amx::gemm(
                        kernel,
                        crate::fast::amx::Left::Packed(packed.as_ptr()),
                        filters,
                        patch,
                        0,
                        len,
                        0,
                        self.s.kg,
                        dst_t,
                    );
                } else {
                    crate::fast::amx::pack_b(rhs.0, patch, len, rhs.1, rhs.2, packed);
                    crate::fast::amx::gemm(
                        kernel,
                        crate::fast::amx::Left::Packed(filters),
                        packed.as_ptr(),
                        patch,
                        0,
                        self.s.kg,
                        0,
                        len,
                        dst,
                    );
                }
            }
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// One tile on AMX whose patches are gathered from the bf16 input `x` (image `n`, positions
    /// `p0..p0 + len`; its pointer and its N, C and spatial strides, dense channels) straight
    /// into worker `slot`'s packed region ([`ConvAmx::gather`]), then multiplied by group `g`'s
    /// packed filters into `dst` ([kg, len]). Returns false (doing nothing) where kiln has no
    /// packed bf16 kernel (as [`Self::amx_tile`]).
    ///
    /// # Safety
    /// As [`Self::amx_tile`]; `x` is the bound bf16 input or its channels-last copy, with the
    /// shape's dims, and `a.gather` is set.
    #[allow(unused_variables, clippy::too_many_arguments)]
    unsafe fn amx_tile_gathered(
        &self,
        a: &ConvAmx,
        g: usize,
        slot: usize,
        filters: SharedPtr,
        tiles: SharedPtr,
        x: (SharedPtr, Strides),
        n: usize,
        p0: usize,
        len: usize,
        dst: (*mut f32, isize, isize),
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use half::bf16;
            let Some(kernel) = crate::fast::amx::Kernel::for_isa(self.isa) else {
                return false;
            };
            let s = &self.s;
            let (_, tile_floats) = self.amx_floats();
            let packed = (tiles.get() as *mut bf16).wrapping_add(slot * 2 * tile_floats);
            let filters = (filters.get() as *const bf16).wrapping_add(g * a.group_len);
            let patch = s.patch();
            let (o1, o2) = (s.output[1], s.output[2]);
            let (f1, f2) = (s.filter[1], s.filter[2]);
            let (x, xs) = x;
            let image = (x.get() as *const bf16)
                .wrapping_offset(n as isize * xs.0 + (g * s.cg) as isize * xs.1);
            let coord = |o: usize, f: usize, d: usize| -> isize {
                o as isize * s.stride[d] - s.pad[d] + f as isize * s.dilation[d]
            };
            let inside = |i: isize, d: usize| i >= 0 && i < s.input[d] as isize;
            // Patch value k of a position is channel k % cg of tap k / cg (the channels-last
            // im2col's order, which the filters were packed in): each tap gives cg / 32 runs.
            let per_tap = s.cg / 32;
            let row_runs = |row: usize, runs: &mut [Option<*const bf16>]| {
                let p = p0 + row;
                let (od, oh, ow) = (p / (o1 * o2), (p / o2) % o1, p % o2);
                let mut tap = 0;
                for t0 in 0..s.filter[0] {
                    let i0 = coord(od, t0, 0);
                    for t1 in 0..f1 {
                        let i1 = coord(oh, t1, 1);
                        for t2 in 0..f2 {
                            let i2 = coord(ow, t2, 2);
                            let at = (inside(i0, 0) && inside(i1, 1) && inside(i2, 2)).then(|| {
                                image.wrapping_offset(i0 * xs.2[0] + i1 * xs.2[1] + i2 * xs.2[2])
                            });
                            for (c, run) in runs[tap * per_tap..(tap + 1) * per_tap]
                                .iter_mut()
                                .enumerate()
                            {
                                *run = at.map(|x| x.wrapping_add(32 * c));
                            }
                            tap += 1;
                        }
                    }
                }
            };
            // SAFETY: the caller's contract; the region holds tile_len bf16 values; every run
            // is 32 dense channels of an in-range input position (patch is a multiple of 32).
            unsafe {
                use crate::fast::amx::{self, Kernel, Left};
                let packed = std::slice::from_raw_parts_mut(packed, a.tile_len);
                let left = if kernel == Kernel::Dot && s.patch() > s.cg {
                    // `vdpbf16ps` broadcasts each row's pairs where they lie: the region holds
                    // the table of runs (padded(len) × patch / 32 pointers: an eighth of its
                    // bytes) instead of the packed patches. Where the filter has more than one
                    // tap, packing would write each input value once per tap: on a Zen 4 guest
                    // the N8 3x3 + bias + relu cases ran 3-9% faster this way (C64 H56 NHWC
                    // 5.04-5.12 ms against 5.42-5.59, NCHW 5.53-5.70 against 5.87-6.31; C256
                    // H14 3%; minima, four alternating rounds). A 1x1 convolution's patches are
                    // x itself: there the table measured no faster, and up to 1.4 times as
                    // slow in three rounds of four.
                    let table = packed.as_mut_ptr().cast::<*const bf16>();
                    amx::table_of_runs(len, patch, table, row_runs);
                    Left::Runs(table)
                } else {
                    amx::pack_a_runs(len, patch, packed, row_runs);
                    Left::Packed(packed.as_ptr())
                };
                // tileᵀ [len, kg] = patchesᵀ [len, patch] · filtersᵀ [patch, kg].
                crate::fast::amx::gemm(
                    kernel,
                    left,
                    filters,
                    patch,
                    0,
                    len,
                    0,
                    s.kg,
                    (dst.0, dst.2, dst.1),
                );
            }
            true
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// f32 floats of workspace the AMX path's packed filters (all groups) followed by the
    /// channels-last copy of x ([`ConvAmx::x_copy`]), and its per-worker packed tiles take; 0
    /// without it.
    fn amx_floats(&self) -> (usize, usize) {
        match &self.amx {
            Some(a) => (
                Self::bf16_floats(self.s.groups * a.group_len) + self.x_copy_floats(),
                Self::bf16_floats(a.tile_len),
            ),
            None => (0, 0),
        }
    }

    /// f32 floats of workspace the channels-last copy of x takes (0 without one).
    fn x_copy_floats(&self) -> usize {
        let copy = self.amx.as_ref().and_then(|a| a.x_copy);
        copy.map_or(0, Self::bf16_floats)
    }

    /// f32 floats that hold `bf16s` bf16 values, rounded up to the alignment.
    fn bf16_floats(bf16s: usize) -> usize {
        bf16s.div_ceil(2).next_multiple_of(ALIGN / 4)
    }

    /// f32 per worker: patches, tile, epilogue scratch (each rounded to the alignment). The
    /// packed direct path's slivers and tile, padded to the widest and tallest kernel, take
    /// the first two.
    fn slot_floats(&self) -> [usize; 3] {
        let round = |v: usize| v.next_multiple_of(ALIGN / 4);
        if self.packed_direct {
            // Rounding up to any kernel's rows or columns adds less than the most of them;
            // the AVX-512 direct path needs its own tile and 64 floats of scratch.
            let (rows, cols) = (
                self.s.kg + PACKED_MR_MAX,
                self.tile_positions + PACKED_NR_MAX,
            );
            let band = self.banded.as_ref().map_or(0, |p| p.band_floats(&self.s));
            return [
                round((self.s.patch() * cols).max(direct::block_floats(self.s.patch()) + band)),
                round((rows * cols).max(direct::tile_floats(self.s.kg))),
                round(self.tile_positions.max(self.s.kg).max(direct::NR)),
            ];
        }
        // A channels-last depthwise tile holds every channel of its positions.
        let rows = if self.depthwise_cl {
            self.s.groups
        } else {
            self.s.kg
        };
        #[cfg(target_arch = "x86_64")]
        let staged = self
            .depthwise_lanes
            .as_ref()
            .map_or(0, |l| l.scratch_floats(&self.s));
        #[cfg(not(target_arch = "x86_64"))]
        let staged = 0;
        [
            round((self.s.patch() * self.tile_positions).max(staged)),
            round(rows * self.tile_positions),
            round(self.tile_positions.max(rows)),
        ]
    }
}

/// Copies `dst.len()` (a packed kernel's width: 16, 24 or 32) consecutive floats from `src`,
/// inline (a call to memmove per row cost more than the copy).
///
/// # Safety
/// `src` addresses `dst.len()` floats.
#[inline(always)]
unsafe fn copy_sliver_row(src: *const f32, dst: &mut [f32]) {
    fn fixed<const N: usize>(src: *const f32, dst: &mut [f32]) {
        // SAFETY: the caller's contract; dst holds N floats.
        let v = unsafe { src.cast::<[f32; N]>().read_unaligned() };
        dst[..N].copy_from_slice(&v);
    }
    match dst.len() {
        16 => fixed::<16>(src, dst),
        24 => fixed::<24>(src, dst),
        32 => fixed::<32>(src, dst),
        n => {
            // SAFETY: the caller's contract.
            dst.copy_from_slice(unsafe { std::slice::from_raw_parts(src, n) })
        }
    }
}

/// The input step between consecutive output positions of a 1x1, stride-1, unpadded
/// convolution whose spatial dims the input walks as one; `None` when im2col is needed.
fn direct_step(s: &Shape) -> Option<isize> {
    let pointwise =
        s.filter == [1, 1, 1] && s.stride == [1, 1, 1] && s.pad == [0, 0, 0] && s.output == s.input;
    if !pointwise {
        return None;
    }
    // The innermost spatial dim of size > 1 sets the step; outer ones must continue it.
    let mut step: Option<isize> = None;
    let mut span = 1isize;
    for d in (0..3).rev() {
        if s.input[d] == 1 {
            continue;
        }
        match step {
            None => {
                step = Some(s.xs.2[d]);
                span = s.xs.2[d] * s.input[d] as isize;
            }
            Some(_) if s.xs.2[d] == span => span *= s.input[d] as isize,
            Some(_) => return None,
        }
    }
    Some(step.unwrap_or(1))
}

impl Prepared for ConvPlan {
    fn workspace_size(&self) -> usize {
        if let Some(wino) = &self.winograd {
            return ALIGN + 4 * wino.workspace_floats();
        }
        if let Some(b) = &self.broadcast {
            return ALIGN + 4 * b.workspace_floats();
        }
        let [a, b, c] = self.slot_floats();
        let (amx_w, amx_t) = self.amx_floats();
        ALIGN
            + 4 * (self.weight_floats().next_multiple_of(ALIGN / 4)
                + self.packed_filter_floats()
                + self.regions * (a + b + c)
                + amx_w
                + self.regions * amx_t)
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, workspace: *mut u8) -> PluginResult<()> {
        let s = &self.s;
        if workspace.is_null() {
            return Err(PluginError::bad_param(format!(
                "{NAME}: the workspace is null but {} bytes are needed",
                self.workspace_size()
            )));
        }
        let x = SharedPtr(tensors.ptr(self.x_uid)?);
        let w = SharedPtr(tensors.ptr(self.w_uid)?);
        let ptrs = self.epilogue.pointers(tensors)?;
        let skip = workspace.align_offset(ALIGN);
        let floats = (self.workspace_size() - ALIGN) / 4;
        // SAFETY: the caller provides workspace_size() bytes; after aligning we use at most
        // workspace_size() - ALIGN of them, as f32 (any bit pattern is valid).
        let ws = unsafe { std::slice::from_raw_parts_mut(workspace.add(skip) as *mut f32, floats) };
        if let Some(wino) = &self.winograd {
            // SAFETY: x and w are bound for this call, ptrs come from this call's tensors, the
            // epilogue is bound to the output geometry the plan was made with, and ws holds
            // workspace_floats() values.
            unsafe { wino.execute(x, w, &self.epilogue, &ptrs, ws) };
            return Ok(());
        }
        if let Some(b) = &self.broadcast {
            // SAFETY: as above; ws holds workspace_floats() values; the plan's level runs here
            // (isa_to_run).
            unsafe { b.execute(x, w, &self.epilogue, &ptrs, ws) };
            return Ok(());
        }
        let (amx_w, amx_t) = self.amx_floats();
        let amx_all = amx_w + self.regions * amx_t;
        let (ws, amx_ws) = ws.split_at_mut(ws.len() - amx_all);
        let (wpack, rest) = ws.split_at_mut(self.weight_floats().next_multiple_of(ALIGN / 4));
        let (u, rest) = rest.split_at_mut(self.packed_filter_floats());
        let direct = self
            .direct_step
            .filter(|_| x.get().cast::<f32>().is_aligned());
        // The banded path (an f32 x that is not 4-byte aligned runs as im2col tiles instead).
        let banded = self
            .banded
            .as_ref()
            .filter(|_| x.get().cast::<f32>().is_aligned());
        // At the AVX2 and AVX-512 levels, a direct convolution whose positions are
        // consecutive runs kiln's strided-input kernel with the epilogue in registers (see the
        // direct module). Its workers pack the filters themselves, a sliver each in turn,
        // before they claim tiles: one fork-join per call instead of three.
        let wide = cfg!(target_arch = "x86_64")
            && self.packed_direct
            && (direct == Some(1) || banded.is_some())
            && matches!(
                self.isa,
                Isa::Avx2 | Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx
            );
        let banded = banded.filter(|_| wide);
        let wide_avx512 = matches!(self.isa, Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx);
        let direct_mr = direct::mr(wide_avx512);
        let wide_slivers = wide.then(|| Claims::new(s.groups * s.kg.div_ceil(direct_mr)));
        let amx_run = self.amx.as_ref().filter(|a| a.run && !wide);
        // Every tile runs packed when the path runs (amx_tile never declines where `run` is set:
        // the level has a kernel), so with the filters packed from the weights themselves no
        // f32 copy is needed. (Weights that are not 2-byte aligned are read through the copy.)
        let filters_direct =
            amx_run.is_some_and(|a| a.filters_direct) && w.get().cast::<half::bf16>().is_aligned();
        let packed_runs = self.packed_direct
            && !wide
            && direct.is_some()
            && matches!(self.isa, Isa::Portable | Isa::Avx2);
        // f32 filters stored densely in the patch order the GEMM reads (channels-first) are its
        // left operand where they lie when nothing else reads the packed copy: copying them
        // took a fifth of a 1×512×7×7 3x3 convolution, whose 9 MiB of filters dwarf its input.
        let weights_in_place = (!wide && amx_run.is_none() && !packed_runs)
            .then(|| self.weights_in_place(w))
            .flatten();
        // The depthwise kernels read an f32 input in place (aligned), a 16-bit one widened, and
        // their filters from w itself (planes) or packed as [tap][C] (channels-last).
        let depthwise =
            self.depthwise && (s.x_type != DataType::F32 || x.get().cast::<f32>().is_aligned());
        let depthwise_cl = depthwise && self.depthwise_cl;
        // (The plan made the lanes' cut only where its epilogue is one the kernel applies: a
        // bias + relu along the rows channels-first, along the columns channels-last.)
        let grouped = self.grouped
            && x.get().cast::<f32>().is_aligned()
            && if self.rows_are_positions {
                self.epilogue.col_bias_relu().is_some()
            } else {
                self.epilogue.row_bias_relu().is_some()
            };
        #[cfg(target_arch = "x86_64")]
        let lanes = self.depthwise_lanes.as_ref().filter(|_| {
            grouped
                || depthwise
                    && if depthwise_cl {
                        self.epilogue.col_bias_relu().is_some()
                    } else {
                        self.epilogue.row_bias_relu().is_some()
                    }
        });
        #[cfg(target_arch = "x86_64")]
        let lanes_cl = depthwise_cl && lanes.is_some();
        #[cfg(not(target_arch = "x86_64"))]
        let lanes_cl = false;
        if depthwise_cl && !lanes_cl {
            // SAFETY: w is bound for this call; wpack holds C · taps values (weight_floats).
            unsafe { super::depthwise::pack_taps(&self.s, w, wpack) };
        } else if !wide && !filters_direct && weights_in_place.is_none() && !depthwise && !grouped {
            // SAFETY: w is bound for this call.
            unsafe { pack_weights(&self.s, self.channels_last, w, wpack) };
        }
        let (amx_wpack, amx_tiles) = amx_ws.split_at_mut(amx_w);
        let (amx_wpack, x_copy) = amx_wpack.split_at_mut(amx_w - self.x_copy_floats());
        // Where the gathered patches come from: x, or its channels-last copy.
        let mut gather_from = (x, s.xs);
        if let Some(a) = amx_run {
            // SAFETY: the region holds groups × group_len bf16 values (amx_floats).
            unsafe { self.pack_filters_for_amx(a, filters_direct, w, wpack, amx_wpack) };
            if a.gather && a.x_copy.is_some() {
                // SAFETY: x is the bound bf16 input; the region holds its copy (x_copy).
                gather_from = unsafe { copy_channels_last(s, x, x_copy) };
            }
        }
        let amx_wpack = SharedPtr(amx_wpack.as_mut_ptr() as *mut u8);
        let amx_tiles = SharedPtr(amx_tiles.as_mut_ptr() as *mut u8);
        // At the levels whose GEMMs are kiln's own kernels, a direct convolution with a
        // channels-first output multiplies filters packed once per execute (the GEMM driver
        // would pack them again for every tile); where its positions are consecutive the AVX2
        // level runs `wide` above instead, as the AVX-512 levels always do.
        let packed = packed_runs.then(|| {
            // SAFETY: the plan's level runs on this processor (isa_to_run).
            let kern = unsafe { Packed::for_isa(self.isa) };
            self.pack_filter_slivers(kern.mr, wpack, u);
            kern
        });
        let wpack_at = SharedPtr(wpack.as_mut_ptr().cast());
        let u_at = SharedPtr(u.as_mut_ptr().cast());
        let wide_u_floats = s.groups * s.kg.next_multiple_of(direct_mr) * s.patch();
        // Under `wide` the workers write both through the pointers above, so no reference to
        // them is held.
        let (wpack, u): (&[f32], &[f32]) = if wide { (&[], &[]) } else { (wpack, u) };
        let fused = self.epilogue.row_bias_relu();
        let [col_f, tile_f, scratch_f] = self.slot_floats();
        // A channels-last depthwise item is a tile of positions with every channel.
        #[cfg(target_arch = "x86_64")]
        let lanes_items = lanes.map(|l| l.items(s));
        #[cfg(not(target_arch = "x86_64"))]
        let lanes_items = None;
        let items = if let Some(items) = lanes_items {
            items
        } else if depthwise_cl {
            s.n * self.chunks
        } else {
            s.n * s.groups * self.chunks
        };
        let slots = self.regions.min(items).max(1);
        let patch = s.patch();
        // Fewer tiles than threads (one small image, say): each tile's GEMM gets the others.
        let gemm_threads = (pool::threads() / items).max(1);
        // Workers claim items in turn rather than taking a fixed share each: a worker that
        // wakes late (tens of microseconds on a busy machine) then costs only the items it
        // does not get to, instead of its whole share running after the others'.
        // Depthwise planes are claimed in batches of about 4096 positions: one claim a small
        // plane cost as much as the plane (two workers contending for the counter).
        #[cfg(target_arch = "x86_64")]
        let lanes_batch = lanes.map(|l| l.batch(s));
        #[cfg(not(target_arch = "x86_64"))]
        let lanes_batch = None;
        let dw_batch = if let Some(b) = lanes_batch {
            b
        } else if depthwise && !depthwise_cl {
            (4096 / s.positions().max(1)).clamp(1, 64)
        } else {
            1
        };
        let tiles = Claims::new(items.div_ceil(dw_batch));
        // Item (n, g, chunk) as its image, group, first position and number of positions.
        let locate = |item: usize| {
            let (n, g, chunk) = (
                item / (s.groups * self.chunks),
                (item / self.chunks) % s.groups,
                item % self.chunks,
            );
            let p0 = chunk * self.tile_positions;
            (n, g, p0, self.tile_positions.min(s.positions() - p0))
        };
        // A depthwise plane, or a grouped convolution's block, writes the output itself under a
        // bias + relu chain (or none).
        let straight = if depthwise || grouped {
            self.epilogue.row_bias_relu()
        } else {
            None
        };
        let run_slot = |(slot, buf): (usize, &mut [f32])| {
            let (col, rest) = buf.split_at_mut(col_f);
            let (tile, scratch) = rest.split_at_mut(tile_f);
            let scratch = &mut scratch[..scratch_f];
            let mut filter = vec![0.0f32; if depthwise { s.taps() } else { 0 }];
            let u = match &wide_slivers {
                Some(jobs) => {
                    jobs.run_all_then_wait(|i| {
                        // SAFETY: w is bound for this call; each sliver is claimed by one
                        // worker, and nothing reads wpack or u until every sliver is done.
                        unsafe { self.pack_sliver_from_weights(direct_mr, w, wpack_at, u_at, i) }
                    });
                    // SAFETY: every sliver is written (run_all_then_wait) and none is written
                    // again; the region holds wide_u_floats values (packed_filter_floats).
                    unsafe { std::slice::from_raw_parts(u_at.get().cast::<f32>(), wide_u_floats) }
                }
                None => u,
            };
            while let Some(claimed) = tiles.claim() {
                #[cfg(target_arch = "x86_64")]
                #[cfg(target_arch = "x86_64")]
                if let Some(l) = lanes {
                    use super::depthwise_lanes::Out;
                    // A claim is a batch of items (see dw_batch).
                    for i in claimed * dw_batch..items.min((claimed + 1) * dw_batch) {
                        let it = l.item(s, i);
                        let out = if depthwise_cl || grouped && self.rows_are_positions {
                            // Both are there (`lanes` above): a bias + relu chain or none into
                            // an f32 output of evenly spaced positions.
                            let (Some(f), Some((first, position_stride, _))) = (
                                self.epilogue.col_bias_relu(),
                                self.epilogue.out_matrix(&ptrs, it.n, 0, it.c0),
                            ) else {
                                continue;
                            };
                            let mut bias = [0.0; 16];
                            // SAFETY: pointers from this call; channels c0.. of image n.
                            let biased = unsafe {
                                self.epilogue.col_biases(
                                    &ptrs,
                                    f,
                                    it.n,
                                    it.c0,
                                    &mut bias[..it.channels],
                                )
                            };
                            Out::Positions {
                                first,
                                position_stride,
                                bias: biased.then_some(bias),
                                relu: f.relu,
                            }
                        } else {
                            // There (`lanes` above): a bias + relu chain or none.
                            let Some(f) = straight else {
                                continue;
                            };
                            let mut planes = [std::ptr::null_mut(); 16];
                            let mut bias = f.has_bias().then_some([0.0; 16]);
                            for (lane, c) in (it.c0..it.c0 + it.channels).enumerate() {
                                planes[lane] = self.epilogue.out_f32(&ptrs, it.n, c, 0);
                                if let Some(b) = &mut bias {
                                    // SAFETY: pointers from this call; row c of image n is
                                    // inside the output.
                                    b[lane] = unsafe { self.epilogue.row_bias(&ptrs, f, it.n, c) };
                                }
                            }
                            Out::Planes {
                                planes,
                                bias,
                                relu: f.relu,
                            }
                        };
                        // SAFETY: x is the bound f32 input, aligned (depthwise), w its weights;
                        // col holds the item's scratch (slot_floats); the item owns its
                        // channels' output rows; the plan's level runs here.
                        unsafe { l.run(s, x, w, it, col, &out) };
                    }
                    continue;
                }
                if depthwise_cl {
                    let (n, chunk) = (claimed / self.chunks, claimed % self.chunks);
                    let p0 = chunk * self.tile_positions;
                    let len = self.tile_positions.min(s.positions() - p0);
                    let c = s.groups;
                    // SAFETY: x is bound (an f32 x aligned, channels adjacent: depthwise_cl);
                    // the taps were packed above into wpack; the tile holds len · C values
                    // (slot_floats); the plan's level runs here (isa_to_run).
                    unsafe {
                        super::depthwise::channels_last_tile(
                            self.isa,
                            s,
                            x,
                            &wpack[..c * s.taps()],
                            n,
                            p0,
                            len,
                            tile,
                        )
                    };
                    let t = Tile {
                        fixed: n,
                        row0: p0,
                        col0: 0,
                        rows: len,
                        cols: c,
                        values: &mut tile[..len * c],
                        ld: c,
                    };
                    // SAFETY: pointers from this call; each item owns its tile of the output.
                    unsafe { self.epilogue.apply(&ptrs, t, scratch) };
                    continue;
                }
                if depthwise {
                    // A claim is a batch of planes (see dw_batch).
                    for item in claimed * dw_batch..items.min((claimed + 1) * dw_batch) {
                        let (n, g, p0, len) = locate(item);
                        // SAFETY: w and x are bound for this call (an f32 x aligned, checked
                        // above); g < groups; the plan's level runs here (isa_to_run).
                        unsafe {
                            // One filter a group (kg = 1): filter g.
                            pack_weight_row(s, false, w, g, &mut filter);
                            let whole = len == s.positions();
                            // A whole plane of a channels-first output with a bias + relu
                            // chain (or none) goes straight into the output.
                            if whole && !self.rows_are_positions {
                                if let Some(f) = straight {
                                    // (row_bias reads the bias of channel g: the pointers are
                                    // this call's, g < C.)
                                    let to = super::depthwise::PlaneOut::Output {
                                        out: self.epilogue.out_f32(&ptrs, n, g, 0),
                                        bias: f
                                            .has_bias()
                                            .then(|| self.epilogue.row_bias(&ptrs, f, n, g)),
                                        relu: f.relu,
                                    };
                                    if super::depthwise::plane(
                                        self.isa, s, x, &filter, n, g, col, to,
                                    ) {
                                        continue;
                                    }
                                }
                            }
                            let to = super::depthwise::PlaneOut::Tile(&mut tile[..len]);
                            if !(whole
                                && super::depthwise::plane(self.isa, s, x, &filter, n, g, col, to))
                            {
                                super::depthwise::tile(
                                    self.isa,
                                    s,
                                    x,
                                    &filter,
                                    n,
                                    g,
                                    p0,
                                    &mut tile[..len],
                                );
                            }
                        }
                        // One filter a group: the tile is the same run of positions whichever way
                        // the output is laid out.
                        let ld = if self.rows_are_positions { 1 } else { len };
                        let t = self.output_tile(n, g, p0, len, tile, ld);
                        // SAFETY: pointers from this call; each item owns its tile of the output.
                        unsafe { self.epilogue.apply(&ptrs, t, scratch) };
                    }
                    continue;
                }
                let (n, g, p0, len) = locate(claimed);
                #[cfg(target_arch = "x86_64")]
                if let (true, Some(ph)) = (wide, banded) {
                    let per_group = s.kg.next_multiple_of(direct_mr) * patch;
                    let ow = s.output[2];
                    // The tile is whole rows of the output, from row oh0.
                    let oh0 = p0 / ow;
                    let (block, band) = col.split_at_mut(direct::block_floats(patch));
                    // SAFETY: x is the bound f32 input, aligned (checked above); the band
                    // holds band_floats values (slot_floats); the plan's level runs here.
                    unsafe {
                        Band::new(
                            s,
                            x,
                            (n, g),
                            oh0 as isize - s.pad[1],
                            ph.band_rows,
                            ph.row_len,
                        )
                        .copy(self.isa, 0..s.cg, band)
                    };
                    // The tile's rows of the output one at a time (a tile is whole rows).
                    debug_assert!(p0 % ow == 0 && len % ow == 0);
                    for row in 0..len / ow {
                        let t = DirectTile {
                            u: &u[g * per_group..(g + 1) * per_group],
                            kg: s.kg,
                            patch,
                            // In the band: the group's first channel at the output row's first
                            // padded input row.
                            x: band.as_ptr().wrapping_add(row * ph.row_len),
                            cs: 0,
                            rows: Some(&ph.offsets),
                            len: ow,
                            fixed: n,
                            row0: g * s.kg,
                            col0: p0 + row * ow,
                        };
                        // SAFETY: the plan's level runs here (isa_to_run); the band holds
                        // every patch row of these positions (Banded::new: each offset plus
                        // the row's positions stays inside it, every value written); tile
                        // and scratch are this worker's; each item owns its tile of the
                        // output.
                        unsafe {
                            direct::run(
                                wide_avx512,
                                &t,
                                tile,
                                block,
                                scratch,
                                &self.epilogue,
                                &ptrs,
                                fused,
                            )
                        };
                    }
                    continue;
                }
                #[cfg(target_arch = "x86_64")]
                if wide {
                    let per_group = s.kg.next_multiple_of(direct_mr) * patch;
                    let t = DirectTile {
                        u: &u[g * per_group..(g + 1) * per_group],
                        kg: s.kg,
                        patch,
                        // SAFETY (offset): the group's first channel at the tile's first
                        // position, an element of x.
                        x: unsafe {
                            (x.get() as *const f32).offset(
                                n as isize * s.xs.0 + (g * s.cg) as isize * s.xs.1 + p0 as isize,
                            )
                        },
                        cs: s.xs.1,
                        rows: None,
                        len,
                        fixed: n,
                        row0: g * s.kg,
                        col0: p0,
                    };
                    // SAFETY: the plan's level runs here (isa_to_run): AVX-512 F at the
                    // AVX-512 levels, AVX2 and FMA at the AVX2 level; the tile's positions are
                    // consecutive (step 1) and in range for each of the group's channels; tile
                    // and scratch are this worker's; each item owns its tile of the output.
                    unsafe {
                        direct::run(
                            wide_avx512,
                            &t,
                            tile,
                            col,
                            scratch,
                            &self.epilogue,
                            &ptrs,
                            fused,
                        )
                    };
                    continue;
                }
                let gathered = amx_run.filter(|a| a.gather);
                let (rhs, rhs_rs, rhs_cs) = match direct {
                    // The AMX path gathers the tile's patches from x itself.
                    _ if gathered.is_some() => (std::ptr::null(), 0, 0),
                    Some(step) => {
                        let off =
                            n as isize * s.xs.0 + (g * s.cg) as isize * s.xs.1 + p0 as isize * step;
                        // SAFETY: offset of an in-range element of x.
                        (unsafe { (x.get() as *const f32).offset(off) }, s.xs.1, step)
                    }
                    None => {
                        // SAFETY: x is bound for this call.
                        unsafe { im2col(&self.s, self.channels_last, x, n, g, p0, len, col) };
                        if self.channels_last {
                            (col.as_ptr(), 1, patch as isize)
                        } else {
                            (col.as_ptr(), len as isize, 1)
                        }
                    }
                };
                // Tile element (k, p) lives at k * ld + p, or p * ld + k.
                let (dst_rs, dst_cs, ld) = if self.rows_are_positions {
                    (1, s.kg as isize, s.kg)
                } else {
                    (len as isize, 1, len)
                };
                // SAFETY: this worker's packed-tile region; the tile's patches [patch, len] in
                // rhs with those strides; dst the [kg, len] tile.
                let on_amx = match gathered {
                    // SAFETY: as above; x is the bound bf16 input (ConvAmx::gather).
                    Some(a) => unsafe {
                        self.amx_tile_gathered(
                            a,
                            g,
                            slot,
                            amx_wpack,
                            amx_tiles,
                            gather_from,
                            n,
                            p0,
                            len,
                            (tile.as_mut_ptr(), dst_rs, dst_cs),
                        )
                    },
                    None => amx_run.is_some_and(|a| unsafe {
                        self.amx_tile(
                            a,
                            g,
                            slot,
                            amx_wpack,
                            amx_tiles,
                            (rhs, rhs_rs, rhs_cs),
                            len,
                            (tile.as_mut_ptr(), dst_rs, dst_cs),
                        )
                    }),
                };
                let packed_ld = packed.map(|kern| {
                    let per_group = s.kg.next_multiple_of(kern.mr) * patch;
                    // SAFETY: rhs is the direct input at the tile's first position (its
                    // channel stride and position step), len positions in range.
                    unsafe {
                        self.packed_direct_tile(
                            kern,
                            &u[g * per_group..(g + 1) * per_group],
                            rhs,
                            rhs_rs,
                            rhs_cs,
                            len,
                            col,
                            tile,
                        )
                    }
                });
                if !on_amx && packed_ld.is_none() {
                    // The group's [kg, patch] filters: in w itself, or in the packed weights.
                    let lhs = match weights_in_place {
                        Some(ks) => (
                            (w.get() as *const f32).wrapping_offset((g * s.kg) as isize * ks),
                            ks,
                            1,
                        ),
                        None => (
                            wpack.as_ptr().wrapping_add(g * s.kg * patch),
                            patch as isize,
                            1,
                        ),
                    };
                    // An f32 output whose rows and columns are evenly spaced takes the GEMM's
                    // result itself: copying it out of the tile was a pass over the tile on one
                    // worker, a quarter of a one-image 1x1 convolution whose GEMM all the
                    // workers share (1×128×28²→512).
                    let (row0, col0) = if self.rows_are_positions {
                        (p0, g * s.kg)
                    } else {
                        (g * s.kg, p0)
                    };
                    // (Only an output aligned for f32: the kernels' scalar edge stores need it;
                    // its element strides keep every element so.)
                    let in_output = self
                        .epilogue
                        .out_matrix(&ptrs, n, row0, col0)
                        .filter(|(at, _, _)| at.is_aligned())
                        .map(|(at, rs, cs)| {
                            if self.rows_are_positions {
                                (at, cs, rs)
                            } else {
                                (at, rs, cs)
                            }
                        });
                    // SAFETY: lhs is the group's [kg, patch] filters (in w where weights_in_place
                    // says they are its rows, else in the packed weights), rhs a [patch, len]
                    // matrix (the tile's patches or the input itself), dst the [kg, len] tile
                    // or this item's part of the output (out_matrix); all strides match those
                    // buffers.
                    unsafe {
                        sgemm(
                            self.isa,
                            s.kg,
                            len,
                            patch,
                            in_output.unwrap_or((tile.as_mut_ptr(), dst_rs, dst_cs)),
                            lhs,
                            (rhs, rhs_rs, rhs_cs),
                            false,
                            gemm_threads,
                        )
                    };
                    if in_output.is_some() {
                        let t = self.output_tile(n, g, p0, len, tile, ld);
                        // SAFETY: pointers from this call; the item's part of the output holds
                        // its f32 results, and each item owns its part.
                        unsafe { self.steps_in_output(&ptrs, t, scratch, gemm_threads) };
                        continue;
                    }
                }
                let t = self.output_tile(n, g, p0, len, tile, packed_ld.unwrap_or(ld));
                // SAFETY: pointers from this call; each item owns its tile of the output.
                unsafe { self.epilogue.apply(&ptrs, t, scratch) };
            }
        };
        let per_slot = col_f + tile_f + scratch_f;
        if gemm_threads > 1 {
            // Fewer items than threads: one after another on this thread, each GEMM on all
            // of them (a parallel region opened inside another runs on its thread alone).
            run_slot((0, &mut rest[..per_slot]));
        } else {
            run_slots(&mut rest[..slots * per_slot], per_slot, |i, buf| {
                run_slot((i, buf))
            });
        }
        Ok(())
    }
}

/// A tensor's N, C and spatial strides, in elements (as [`Shape::xs`]).
type Strides = (isize, isize, [isize; 3]);

/// Copies the bf16 input `x` (the shape's dims and strides) into `out` channels-last and dense,
/// `[N][D][H][W][C]`, in parallel over its rows of positions; returns where the copy starts
/// and its strides.
///
/// # Safety
/// `x` addresses the bound bf16 input; `out` holds at least N·C·D·H·W bf16 values.
unsafe fn copy_channels_last(s: &Shape, x: SharedPtr, out: &mut [f32]) -> (SharedPtr, Strides) {
    use half::bf16;
    let c = s.groups * s.cg;
    let [d0, d1, d2] = s.input;
    let row = d2 * c;
    let rows = s.n * d0 * d1;
    // SAFETY: the caller's contract: out holds rows × row bf16 values.
    let copy =
        unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<bf16>(), rows * row) };
    // Channels in blocks of 16 and positions in blocks of 32: the reads run along each
    // channel's positions and the writes along each position's channels.
    const CB: usize = 16;
    const PB: usize = 32;
    #[cfg(target_arch = "x86_64")]
    let fast = s.xs.2[2] == 1 && std::arch::is_x86_feature_detected!("avx2");
    pool::for_each_chunk_mut(copy, row, |r, dst| {
        let (n, i0, i1) = (r / (d0 * d1), (r / d1) % d0, r % d1);
        let base = (x.get() as *const bf16).wrapping_offset(
            n as isize * s.xs.0 + i0 as isize * s.xs.2[0] + i1 as isize * s.xs.2[1],
        );
        // Blocks of 16 channels × 16 consecutive positions through a register transpose (c is
        // a multiple of 32); the rest, and any other layout, element by element.
        #[cfg(target_arch = "x86_64")]
        let whole = if fast { d2 - d2 % 16 } else { 0 };
        #[cfg(not(target_arch = "x86_64"))]
        let whole = 0;
        #[cfg(target_arch = "x86_64")]
        {
            for w0 in (0..whole).step_by(16) {
                for c0 in (0..c).step_by(16) {
                    let src = base.wrapping_offset(c0 as isize * s.xs.1 + w0 as isize);
                    // SAFETY: positions w0..w0 + 16 of channels c0..c0 + 16 are inside x
                    // (unit position stride); the block's 16 rows of 16 are inside dst; AVX2.
                    unsafe {
                        crate::fast::transpose::transpose16_u16_block(
                            src.cast(),
                            s.xs.1,
                            dst[w0 * c + c0..].as_mut_ptr().cast(),
                            c,
                        )
                    };
                }
            }
        }
        for w0 in (whole..d2).step_by(PB) {
            let ws = PB.min(d2 - w0);
            for c0 in (0..c).step_by(CB) {
                let cs = CB.min(c - c0);
                for ch in c0..c0 + cs {
                    let at = base.wrapping_offset(ch as isize * s.xs.1);
                    for w in w0..w0 + ws {
                        // SAFETY: element (n, ch, i0, i1, w) of x, inside it.
                        dst[w * c + ch] = unsafe { *at.offset(w as isize * s.xs.2[2]) };
                    }
                }
            }
        }
    });
    let dense = (
        (d0 * d1 * d2 * c) as isize,
        1,
        [(d1 * d2 * c) as isize, (d2 * c) as isize, c as isize],
    );
    (SharedPtr(copy.as_mut_ptr().cast()), dense)
}

/// Writes the filters `rows` ([filters, patch], at most `mr` of them) as one left sliver of
/// `mr` rows, `[patch][mr]`, the rows past them as zeros.
fn write_sliver(mr: usize, patch: usize, rows: &[f32], sliver: &mut [f32]) {
    let filters = rows.len() / patch;
    // Filter by filter, so that the weights are read in order.
    for r in 0..mr {
        if r < filters {
            let src = &rows[r * patch..(r + 1) * patch];
            for (step, &w) in sliver.chunks_exact_mut(mr).zip(src) {
                step[r] = w;
            }
        } else {
            sliver.chunks_exact_mut(mr).for_each(|step| step[r] = 0.0);
        }
    }
}
