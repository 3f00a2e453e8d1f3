//! Convolutions with the filters in the vector lanes: each input value is broadcast and
//! multiplied with vectors of 16 to 64 filters at once (the scheme of ONNX Runtime's NCHWc
//! kernels), so any stride and dilation reads the input where it lies and a tile's positions
//! need not be consecutive. It takes 2-D f32 convolutions with a channels-first or a
//! channels-last input and output (each either): by default strided ones, 5x5 and larger
//! filters, grouped ones, and rows narrower than the positions-in-the-lanes kernels of
//! [`super::direct`] fill ([`preferred`], `docs/engines/cpu.md`). A channels-last input's band
//! holds positions of the group's channels; a channels-last output takes the position-major
//! sums as they are.
//!
//! A tile is whole rows of one image's output. Its worker copies the band of input rows they
//! read into its slot, padded with zeros ([`super::band::Band`]), so that every tap of
//! every position is one load; where no tap reads padding, the kernel reads x in place. For each block of 64 filters the kernel holds `P` positions ×
//! `F` vectors of filters in registers (6 × 4 zmm at the AVX-512 levels, 6 × 2 ymm at AVX2;
//! more positions for fewer filters) and, per input channel and tap, loads `F` filter vectors
//! and broadcasts `P` input values. The channels go in blocks whose packed filters (about
//! 64 KiB) stay in L2 while the kernel passes over every position of the tile; the partial
//! sums wait in the slot, position-major. After the last block they are transposed into rows
//! of filters and stored: a bias + relu (or no) epilogue into an f32 output in registers, any
//! other through the epilogue's tile.
//!
//! The filters are packed as `[group][block of 64][channel][tap][64]` (zeros past the group's
//! filters): by the workers before they take tiles, or, where each group has one or two tiles
//! and the weights are f32 and dense, a block of channels at a time by each item just before
//! it reads them. Every level reads that layout, so the workspace is the same at every level.

use super::band::Band;
use super::geometry::{pack_weight_row, Shape};
use crate::fast::claims::{run_slots, Claims};
use crate::fast::element_io::SharedPtr;
use crate::fast::epilogue::{BoundEpilogue, EpiloguePtrs, Tile};
use crate::fast::isa::Isa;
use kiln_core::DataType;

/// Filters in a packed block, the row length of the partial sums.
const KB: usize = 64;
/// Output positions a tile aims for (its partial sums, 256 bytes a position, stay in L2).
const TILE_POSITIONS: usize = 1024;
/// Bytes of packed filters a block of channels aims for. The block stays in L2 while the
/// kernel passes over the tile's positions; each kernel call loads and stores its positions'
/// partial sums once per block, so a larger block spends fewer of its cycles on them. On a
/// Zen 4 at one thread, 64 KiB instead of 16 (up to 256 channel-taps a call instead of 64)
/// made 8×64×56²→64 5x5 1.09 times as fast, the 1×3×224² 7x7 stride-2 stem 1.07 (1.19 at
/// AVX2, where a 16 KiB block held one of its three channels), 8×48×27²→80 3x3 stride 2
/// 1.06 and 8×512×14²→512 3x3 stride 2 1.05; 16 KiB blocks that stay in L1 were no faster
/// and 4-8 KiB slower.
const FILTER_BLOCK_BYTES: usize = 64 * 1024;
/// The fewest filters a group and output positions in all the default choice takes, the
/// fewest taps of a stride-1 filter on wide rows, and the narrowest rows that are wide
/// ([`preferred`]).
const LEAST_FILTERS: usize = 16;
const LEAST_POSITIONS: usize = 256;
const LEAST_TAPS: usize = 25;
const NARROW: usize = 14;
/// The most output positions (images × positions) at which a 1x1 filter takes this path by
/// default. On a Zen 4 guest at AVX-512, one image's 1x1 convolutions of 7², 14² and 28²
/// positions (ResNet-50's, 128-2048 channels) ran 0-20% faster here than on the GEMM or the
/// direct kernels, those of 56² and eight images' of 14² and 28² the same or slower.
const FEW_POSITIONS: usize = 1024;
/// The most tiles of a group at which the filters are packed by each item as it goes
/// ([`BroadcastPlan`]'s `inline`).
const INLINE_TILES: usize = 2;
/// Output bytes from which the fused store writes around the caches (`x86::Store::stream`):
/// more than a core's L2. On the 8×3×224² 7x7 stride-2 stem (a 25.7 MB output) the store
/// took 40% of the time with ordinary stores (each line read for ownership first); streamed,
/// the convolution went from 12.2-12.4 to 8.1-8.2 ms, and the 1×3×224² one (3.2 MB) from
/// 1.14-1.17 to 1.01 ms.
const STREAM_BYTES: usize = 2 << 20;
/// The most positions of any kernel.
const MOST_POSITIONS: usize = 12;
/// Workspace alignment of the slot's buffers, in floats.
const ALIGN_FLOATS: usize = 16;

/// A convolution that runs with the filters in the lanes (see the module).
#[derive(Debug, Clone)]
pub(super) struct BroadcastPlan {
    s: Shape,
    /// Output rows a tile takes (the last tile of an image may take fewer).
    tile_rows: usize,
    /// Tiles of an image, and the parts the filter blocks of a tile are split into (items are
    /// image × group × tile × part).
    tiles: usize,
    parts: usize,
    /// Padded input rows of a tile's band, and values of each (see `copy_band`).
    band_rows: usize,
    row_len: usize,
    /// Input channels a kernel call takes (a block of channels).
    channels: usize,
    /// Each item packs the filters of each block of channels just before it reads them
    /// (when the weights are f32, dense and aligned at execute), instead of the workers
    /// packing all of them first: where each packed filter would serve one or two tiles,
    /// reading the weights once beats writing and reading a packed copy.
    inline: bool,
    /// Workers the workspace has slots for.
    slots: usize,
    isa: Isa,
    /// The input's channels are adjacent and its columns not (channels-last): its band holds
    /// positions of the group's channels ([`Band::copy_positions`]).
    positions_band: bool,
    /// The output is channels-last: the epilogue's tile rows are positions, and the partial
    /// sums (position-major) go to it as they are, with no transpose.
    rows_are_positions: bool,
}

/// Whether `s` is a convolution this path can run: 2-D (or 3-D with one input and output slice
/// of depth, read with no depth padding), f32 input with consecutive columns or adjacent
/// channels, no negative padding.
pub(super) fn eligible(s: &Shape) -> bool {
    s.input[0] == 1
        && s.filter[0] == 1
        && s.output[0] == 1
        && s.pad[0] == 0
        && s.x_type == DataType::F32
        && (s.xs.2[2] == 1 || s.xs.1 == 1)
        && s.pad[1] >= 0
        && s.pad[2] >= 0
        && s.stride[1] >= 1
        && s.stride[2] >= 1
        && s.dilation[1] >= 1
        && s.dilation[2] >= 1
        && s.positions() >= 1
        && s.kg >= 1
        && s.cg >= 1
}

/// Whether the default choice takes this path for an [`eligible`] `s` (whose input and output
/// are channels-first, and which Winograd does not take) at level `isa`, with at least
/// [`LEAST_FILTERS`] filters a group:
/// - a filter larger than 1x1, [`LEAST_POSITIONS`] output positions in all (or f32 dense
///   weights), and either a stride above 1, a filter of [`LEAST_TAPS`] taps or more, rows
///   narrower than [`NARROW`], more than one group, or (at the AVX-512 levels) a dilation
///   above 1;
/// - a 1x1 filter that reads no padding, at the AVX-512 levels, with at most
///   [`FEW_POSITIONS`] output positions in all (the deep layers of one image, where the
///   filters outweigh the positions).
///
/// Elsewhere other paths measured faster (docs/engines/cpu.md): with fewer filters most lanes
/// would be empty; fewer positions do not pay for packing the filters at every execute;
/// stride-1 3x3 convolutions of wider rows run faster with the positions in the lanes; 1x1
/// convolutions of more positions run as fast or faster on the direct kernels or the GEMM;
/// and at AVX2 this path's 6 × 2 ymm kernel lost to them on 1x1 filters.
pub(super) fn preferred(s: &Shape, isa: Isa) -> bool {
    let taps = s.filter[1] * s.filter[2];
    let wide = matches!(isa, Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx);
    let large = taps > 1
        && (s.n * s.positions() >= LEAST_POSITIONS
            || (s.w_type == DataType::F32 && s.filters_dense()))
        && (s.stride[1] > 1
            || s.stride[2] > 1
            || taps >= LEAST_TAPS
            || s.output[2] < NARROW
            || s.groups > 1
            || (wide && (s.dilation[1] > 1 || s.dilation[2] > 1)));
    let pointwise =
        taps == 1 && wide && reads_no_padding(s) && s.n * s.positions() <= FEW_POSITIONS;
    eligible(s) && s.kg >= LEAST_FILTERS && (large || pointwise)
}

/// Whether every value the filter reads lies in the input: no padding before its rows and
/// columns, and the last position's last tap in the input's last row and column or before.
fn reads_no_padding(s: &Shape) -> bool {
    let inside = |d: usize| {
        let last =
            (s.output[d] - 1) * s.stride[d] as usize + (s.filter[d] - 1) * s.dilation[d] as usize;
        s.pad[d] == 0 && last < s.input[d]
    };
    inside(1) && inside(2)
}

impl BroadcastPlan {
    /// Plans `s` (which must be [`eligible`]) for `slots` workers running `isa`.
    pub fn new(s: &Shape, slots: usize, isa: Isa, rows_are_positions: bool) -> Self {
        let slots = slots.max(1);
        let [_, oh, ow] = s.output;
        let [_, kh, kw] = s.filter;
        let (sh, sw) = (s.stride[1] as usize, s.stride[2] as usize);
        let (dh, dw) = (s.dilation[1] as usize, s.dilation[2] as usize);
        let images = s.n * s.groups;
        // About TILE_POSITIONS positions a tile, its rows shared out evenly (28 rows in tiles
        // of 9 would leave the last one row).
        let even = |tiles: usize| oh.div_ceil(oh.div_ceil(tiles.clamp(1, oh)));
        let tiles = even((oh * ow).div_ceil(TILE_POSITIONS));
        // At least two items a worker: the filter blocks split into parts (a divisor of their
        // count, so that the parts are equal), then shorter tiles.
        let blocks = s.kg.div_ceil(KB);
        let want = 2 * slots;
        let parts = (1..=blocks)
            .find(|&d| blocks.is_multiple_of(d) && images * tiles * d >= want)
            .unwrap_or(blocks);
        let mut tile_rows = oh.div_ceil(tiles);
        while images * oh.div_ceil(tile_rows) * parts < want && tile_rows > 1 {
            tile_rows -= 1;
        }
        let tiles = oh.div_ceil(tile_rows);
        let mut tile_rows = oh.div_ceil(tiles);
        // With few items a worker, up to half as many tiles again so that the workers share
        // the items evenly, where some count does: the 1×3×224² stem's 13 tiles of 9 rows
        // (the last of 4) left one of two workers idle for the last tile; 14 of 8 do not.
        if images * tiles * parts < 8 * slots {
            let even = (tiles..=(tiles + tiles / 2).min(oh)).find(|&t| {
                let rows = oh.div_ceil(t);
                (images * oh.div_ceil(rows) * parts).is_multiple_of(slots)
            });
            if let Some(t) = even {
                tile_rows = oh.div_ceil(t);
            }
        }
        let tiles = oh.div_ceil(tile_rows);
        let band_rows = (tile_rows - 1) * sh + (kh - 1) * dh + 1;
        // A padded row holds every column a position reads and the input row after its
        // padding, in whole vectors (Band::copy).
        let (pw, iw) = (s.pad[2] as usize, s.input[2]);
        let row_len = ((ow - 1) * sw + (kw - 1) * dw + 1)
            .max(pw + iw)
            .next_multiple_of(16);
        // The channels in equal blocks of at most that many (32 channels of a 3x3 filter as
        // 16 + 16, not 28 + 4, whose short block's calls would load and store their partial
        // sums for 36 steps).
        let most = (FILTER_BLOCK_BYTES / (kh * kw * KB * 4)).clamp(1, s.cg);
        let channels = s.cg.div_ceil(s.cg.div_ceil(most));
        BroadcastPlan {
            s: s.clone(),
            tile_rows,
            tiles,
            parts,
            band_rows,
            row_len,
            channels,
            inline: s.n * tiles <= INLINE_TILES && s.w_type == DataType::F32 && s.filters_dense(),
            slots,
            isa,
            positions_band: s.xs.2[2] != 1,
            rows_are_positions,
        }
    }

    /// Values from one column of the band to the next in a channels-last band (the group's
    /// channels, one cache line more where their bytes are a multiple of 512, so that a
    /// block's positions do not all fall in the same few sets of the L1 cache: at AVX2,
    /// whose kernel passes over the positions once for each 16 filters, 8×512×14²→512
    /// stride 2 channels-last ran at a third of its channels-first speed with 512 values
    /// from column to column), or the channel count of a channels-first one.
    fn band_column(&self) -> usize {
        let cg = self.s.cg;
        if self.positions_band && cg.is_multiple_of(128) {
            cg + 16
        } else {
            cg
        }
    }

    /// Packed filter blocks of a group.
    fn blocks(&self) -> usize {
        self.s.kg.div_ceil(KB)
    }

    /// Floats of the packed filters.
    fn filter_floats(&self) -> usize {
        (self.s.groups * self.blocks() * self.s.patch() * KB).next_multiple_of(ALIGN_FLOATS)
    }

    /// Positions of the largest tile, rounded up to the transposes' blocks of 16.
    fn tile_cols(&self) -> usize {
        (self.tile_rows * self.s.output[2]).next_multiple_of(16)
    }

    /// Floats of a slot's buffers: the band, the partial sums (position-major), the output
    /// tile (filter-major), the epilogue's scratch, 16 filters' patches for packing, and one
    /// block of channels' packed filters (for `inline`).
    fn slot_parts(&self) -> [usize; 6] {
        let round = |v: usize| v.next_multiple_of(ALIGN_FLOATS);
        let cols = self.tile_cols();
        [
            round(self.band_column() * self.band_rows * self.row_len),
            round(cols * KB),
            round(KB * cols),
            round(cols.max(KB)),
            round(16 * self.s.patch()),
            round(self.channels * self.s.taps() * KB),
        ]
    }

    fn items(&self) -> usize {
        self.s.n * self.s.groups * self.tiles * self.parts
    }

    /// f32 values of workspace `execute` needs (from a 64-byte aligned start), the same at
    /// every level.
    pub fn workspace_floats(&self) -> usize {
        let slot: usize = self.slot_parts().iter().sum();
        self.filter_floats() + self.slots.min(self.items()) * slot
    }

    /// Runs the convolution and the epilogue; `ws` holds [`Self::workspace_floats`] values.
    ///
    /// # Safety
    /// `x` and `w` are the bound input and weight pointers of a live execute call (any
    /// alignment); `ptrs` come from `epilogue.pointers` for the same call; `epilogue` is bound
    /// to the output geometry with rows = channels (rows = positions where the plan's output
    /// is channels-last); the processor runs the plan's level.
    pub unsafe fn execute(
        &self,
        x: SharedPtr,
        w: SharedPtr,
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        ws: &mut [f32],
    ) {
        let s = &self.s;
        let (u, rest) = ws.split_at_mut(self.filter_floats());
        let block_floats = s.patch() * KB;
        let u_at = SharedPtr(u.as_mut_ptr().cast());
        let items = Claims::new(self.items());
        let parts = self.slot_parts();
        let per_slot: usize = parts.iter().sum();
        let slots = self.slots.min(self.items()).max(1);
        // SAFETY: w is bound for this call.
        let weights = self
            .inline
            .then(|| unsafe { self.dense_weights(w) })
            .flatten();
        // Without them the workers first pack every block of filters.
        let packing = Claims::new(if weights.is_some() {
            0
        } else {
            s.groups * self.blocks()
        });
        run_slots(&mut rest[..slots * per_slot], per_slot, |_, buf| {
            let (band, buf) = buf.split_at_mut(parts[0]);
            let (part, buf) = buf.split_at_mut(parts[1]);
            let (tile, buf) = buf.split_at_mut(parts[2]);
            let (scratch, buf) = buf.split_at_mut(parts[3]);
            let (rows, block) = buf.split_at_mut(parts[4]);
            packing.run_all_then_wait(|b| {
                // SAFETY: block b's floats lie in u (filter_floats); each block is claimed by
                // one worker, and nothing reads u until every block is done.
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(
                        u_at.get().cast::<f32>().add(b * block_floats),
                        block_floats,
                    )
                };
                // SAFETY: w is bound for this call.
                unsafe { self.pack_block(w, b, rows, dst) };
            });
            // SAFETY: every block is written (run_all_then_wait) and none is written again.
            let u: &[f32] = unsafe {
                std::slice::from_raw_parts(
                    u_at.get().cast::<f32>(),
                    s.groups * self.blocks() * block_floats,
                )
            };
            let mut slot = Slot {
                band,
                part,
                tile,
                scratch,
                block,
                band_of: None,
            };
            while let Some(item) = items.claim() {
                // SAFETY: forwarded contract; items cover disjoint output elements.
                unsafe { self.run_item(item, x, u, weights, epilogue, ptrs, &mut slot) };
            }
        });
    }

    /// Whether items read the input from x itself instead of a band: a filter whose
    /// positions' taps all lie in the input (no padding read), x aligned for f32 (its rows
    /// consecutive values, as [`eligible`] requires).
    fn reads_x_in_place(&self, x: SharedPtr) -> bool {
        reads_no_padding(&self.s) && x.get().cast::<f32>().is_aligned()
    }

    /// The weights as f32 values, where they are f32, each filter one dense run in the patch
    /// order after the one before and 4-byte aligned: filter `k`'s patch from `k · ws.0`.
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call.
    unsafe fn dense_weights<'w>(&self, w: SharedPtr) -> Option<&'w [f32]> {
        let s = &self.s;
        let at = w.get().cast::<f32>();
        let dense = s.w_type == DataType::F32
            && s.filters_dense()
            && s.ws.0 >= s.patch() as isize
            && at.is_aligned();
        let filters = s.groups * s.kg;
        let len = (filters - 1) * s.ws.0 as usize + s.patch();
        // SAFETY: the bound weights span every filter's patch (the caller's contract).
        dense.then(|| unsafe { std::slice::from_raw_parts(at as *const f32, len) })
    }

    /// Packs block `b` (group `b / blocks`, its filters from `64 · (b % blocks)`) into `dst`
    /// as `[channel][tap][64]`, 16 filters at a time through `rows` (16 patches).
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call.
    unsafe fn pack_block(&self, w: SharedPtr, b: usize, rows: &mut [f32], dst: &mut [f32]) {
        let s = &self.s;
        let patch = s.patch();
        let (g, k0) = (b / self.blocks(), (b % self.blocks()) * KB);
        // SAFETY: forwarded contract.
        if let Some(weights) = unsafe { self.dense_weights(w) } {
            let kb = KB.min(s.kg - k0);
            let ld = s.ws.0 as usize;
            transpose_into(
                self.isa,
                &weights[(g * s.kg + k0) * ld..],
                ld,
                (kb, patch),
                dst,
                KB,
            );
            if kb < KB {
                for step in dst.chunks_exact_mut(KB) {
                    step[kb..].fill(0.0);
                }
            }
            return;
        }
        for f0 in (0..KB).step_by(16) {
            let rows = &mut rows[..16 * patch];
            for (i, row) in rows.chunks_exact_mut(patch).enumerate() {
                let k = k0 + f0 + i;
                if k < s.kg {
                    // SAFETY: forwarded contract; filter g·kg + k exists.
                    unsafe { pack_weight_row(s, false, w, g * s.kg + k, row) };
                } else {
                    row.fill(0.0);
                }
            }
            transpose_into(self.isa, rows, patch, (16, patch), &mut dst[f0..], KB);
        }
    }

    /// Computes item `item` (image, group, tile of rows, part of the filter blocks) and stores
    /// it through the epilogue.
    ///
    /// # Safety
    /// As for [`Self::execute`]; `u` holds every packed block.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_item(
        &self,
        item: usize,
        x: SharedPtr,
        u: &[f32],
        weights: Option<&[f32]>,
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        let s = &self.s;
        let (part, rest) = (item % self.parts, item / self.parts);
        let (tile, rest) = (rest % self.tiles, rest / self.tiles);
        let (g, n) = (rest % s.groups, rest / s.groups);
        let [_, oh, ow] = s.output;
        let oh0 = tile * self.tile_rows;
        let rows = self.tile_rows.min(oh - oh0);
        let len = rows * ow;
        let first = (oh0 * s.stride[1] as usize) as isize - s.pad[1];
        let band = Band::new(s, x, (n, g), first, self.band_rows, self.row_len);
        // Where the kernel reads the tile's input: x itself where every value it reads lies
        // in x (no padding read), else the band; its row and channel strides.
        let in_x = self.reads_x_in_place(x);
        // (A channels-last band holds positions of the group's channels: a column is cg
        // values, a row row_len columns.)
        let (input, row_stride, col_stride, chan) = if in_x {
            let at = n as isize * s.xs.0 + (g * s.cg) as isize * s.xs.1 + first * s.xs.2[1];
            let base = (x.get() as *const f32).wrapping_offset(at);
            (base, s.xs.2[1], s.xs.2[2], s.xs.1)
        } else if self.positions_band {
            let column = self.band_column() as isize;
            (
                slot.band.as_ptr(),
                self.row_len as isize * column,
                column,
                1,
            )
        } else {
            let rows = self.row_len as isize;
            (slot.band.as_ptr(), rows, 1, self.band_rows as isize * rows)
        };
        // Each position's offset from the input's start (its first channel, tap (0, 0)).
        let (sh, sw) = (s.stride[1], s.stride[2]);
        let offset =
            |p: usize| (p / ow) as isize * sh * row_stride + (p % ow) as isize * sw * col_stride;
        let walk = Walk {
            channels: 0,
            kh: s.filter[1],
            kw: s.filter[2],
            chan,
            row: s.dilation[1] * row_stride,
            col: s.dilation[2] * col_stride,
        };
        // A bias + relu epilogue (or none) into an f32 channels-first output is applied in
        // registers as the sums are transposed into the output, at the vector levels.
        let fused = epilogue
            .row_bias_relu()
            .filter(|_| !matches!(self.isa, Isa::Portable) && !self.rows_are_positions);
        let blocks = self.blocks();
        let block_floats = s.patch() * KB;
        let (b0, b1) = (part * blocks / self.parts, (part + 1) * blocks / self.parts);
        let cols = len.next_multiple_of(16);
        let taps = s.taps();
        if !in_x && slot.band_of != Some((n, g, tile)) {
            slot.band_of = Some((n, g, tile));
            // SAFETY: x is the bound f32 input (the caller's contract); the band holds cg ×
            // band_rows × row_len values (slot_parts), row_len a multiple of 16 and at least
            // pw + iw; the plan's level runs here.
            unsafe {
                if self.positions_band {
                    band.copy_positions(self.band_column(), slot.band)
                } else {
                    band.copy(self.isa, 0..s.cg, slot.band)
                }
            };
        }
        for b in b0..b1 {
            let k0 = b * KB;
            let kb = KB.min(s.kg - k0);
            let ub = &u[(g * blocks + b) * block_floats..][..block_floats];
            for c0 in (0..s.cg).step_by(self.channels) {
                let c1 = s.cg.min(c0 + self.channels);
                let walk = Walk {
                    channels: c1 - c0,
                    ..walk
                };
                let x0 = input.wrapping_offset(c0 as isize * chan);
                let u0 = match weights {
                    Some(w) => {
                        // This block of filters and channels, packed from the weights.
                        let at = (g * s.kg + k0) * s.ws.0 as usize + c0 * taps;
                        let block = &mut slot.block[..(c1 - c0) * taps * KB];
                        transpose_into(
                            self.isa,
                            &w[at..],
                            s.ws.0 as usize,
                            (kb, (c1 - c0) * taps),
                            block,
                            KB,
                        );
                        // The next block's rows into L2 while the kernel runs on this one:
                        // 64 rows a patch apart, a few lines each, are more streams than the
                        // hardware prefetcher follows, and their loads otherwise wait on L3
                        // (1×512×7²→512 3x3: 40% of the time in this transpose, on a Zen 4).
                        let next = if c1 < s.cg {
                            Some((
                                at + (c1 - c0) * taps,
                                kb,
                                (s.cg.min(c1 + self.channels) - c1) * taps,
                            ))
                        } else if b + 1 < b1 {
                            let kn = KB.min(s.kg - k0 - KB);
                            Some((
                                (g * s.kg + k0 + KB) * s.ws.0 as usize,
                                kn,
                                self.channels.min(s.cg) * taps,
                            ))
                        } else {
                            None
                        };
                        if let Some((at, rows, cols)) = next {
                            prefetch_rows(w.as_ptr().wrapping_add(at), s.ws.0 as usize, rows, cols);
                        }
                        block.as_ptr()
                    }
                    None => ub[c0 * taps * KB..].as_ptr(),
                };
                // SAFETY: every position's taps lie in the band (BroadcastPlan::new sizes its
                // rows and row length for them); u0 holds the channels' packed steps; part
                // holds cols rows of KB; the plan's level runs here.
                unsafe {
                    kernels(
                        self.isa,
                        walk,
                        x0,
                        u0,
                        kb,
                        len,
                        &offset,
                        slot.part.as_mut_ptr(),
                        c0 > 0,
                    )
                };
            }
            #[cfg(target_arch = "x86_64")]
            if let Some(f) = fused {
                let mut bias = [0.0f32; KB];
                for (r, v) in bias[..kb].iter_mut().enumerate() {
                    // SAFETY: row g·kg + k0 + r is one of the item's filters.
                    *v = unsafe { epilogue.row_bias(ptrs, f, n, g * s.kg + k0 + r) };
                }
                let store = x86::Store {
                    out: epilogue.out_f32(ptrs, n, g * s.kg + k0, oh0 * ow),
                    row_stride: f.row_stride,
                    bias: f.has_bias().then_some(&bias[..kb]),
                    relu: f.relu,
                    filters: kb,
                    positions: len,
                    stream: s.n * s.groups * s.kg * s.positions() * 4 >= STREAM_BYTES,
                };
                // SAFETY: part holds cols rows of KB sums; the output rows are the item's own
                // (len positions from col0 of each); the plan's level runs here.
                unsafe { store.run(self.isa, slot.part) };
                continue;
            }
            if self.rows_are_positions {
                // A channels-last output's tile is positions × filters: the partial sums as
                // they are, with a bias + relu chain (or none) into an f32 output of evenly
                // spaced positions stored here, any other through the epilogue.
                let c0 = g * s.kg + k0;
                let col_fused = epilogue.col_bias_relu();
                if let (Some(f), Some((first, position_stride, _))) =
                    (col_fused, epilogue.out_matrix(ptrs, n, oh0 * ow, c0))
                {
                    let mut bias = [0.0f32; KB];
                    // SAFETY: pointers from this call; channels c0..c0 + kb of image n.
                    let biased = unsafe { epilogue.col_biases(ptrs, f, n, c0, &mut bias[..kb]) };
                    for (q, sums) in slot.part.chunks_exact(KB).take(len).enumerate() {
                        let at = first.wrapping_offset(q as isize * position_stride);
                        // SAFETY: the kb adjacent channels (col_bias_relu: consecutive
                        // columns) of output position oh0 · ow + q from channel c0, which
                        // this item owns.
                        let out = unsafe { std::slice::from_raw_parts_mut(at, kb) };
                        bias_relu_run(out, &sums[..kb], biased.then_some(&bias[..kb]), f.relu);
                    }
                    continue;
                }
                let t = Tile {
                    fixed: n,
                    row0: oh0 * ow,
                    col0: g * s.kg + k0,
                    rows: len,
                    cols: kb,
                    values: &mut slot.part[..len * KB],
                    ld: KB,
                };
                // SAFETY: forwarded contract; the item owns these output elements.
                unsafe { epilogue.apply(ptrs, t, slot.scratch) };
                continue;
            }
            // Position-major partial sums to filter-major rows of the tile.
            let tile_values = &mut slot.tile[..kb.next_multiple_of(16) * cols];
            transpose_into(
                self.isa,
                slot.part,
                KB,
                (cols, kb.next_multiple_of(16)),
                tile_values,
                cols,
            );
            let t = Tile {
                fixed: n,
                row0: g * s.kg + k0,
                col0: oh0 * ow,
                rows: kb,
                cols: len,
                values: &mut tile_values[..kb * cols],
                ld: cols,
            };
            // SAFETY: forwarded contract; the item owns these output elements.
            unsafe { epilogue.apply(ptrs, t, slot.scratch) };
        }
    }
}

/// `out[i] = sums[i] + bias[i]` (no add without a bias, so that -0 stays), then `x < 0 ? 0 :
/// x` where `relu` (NaN and -0 pass, as in the epilogue).
fn bias_relu_run(out: &mut [f32], sums: &[f32], bias: Option<&[f32]>, relu: bool) {
    let finish = |v: f32| if relu && v < 0.0 { 0.0 } else { v };
    match bias {
        Some(bias) => {
            for ((o, &v), &b) in out.iter_mut().zip(sums).zip(bias) {
                *o = finish(v + b);
            }
        }
        None => {
            for (o, &v) in out.iter_mut().zip(sums) {
                *o = finish(v);
            }
        }
    }
}

/// A worker's buffers ([`BroadcastPlan::slot_parts`]).
struct Slot<'a> {
    band: &'a mut [f32],
    part: &'a mut [f32],
    tile: &'a mut [f32],
    scratch: &'a mut [f32],
    block: &'a mut [f32],
    /// The image, group and tile whose band `band` holds: the items of one tile, which differ
    /// in their filters, read the same band, and a worker that takes two of them copies it
    /// once.
    band_of: Option<(usize, usize, usize)>,
}

/// How a kernel call walks the band from a position's first value: `channels` channels
/// `chan` apart, `kh` filter rows `row` apart, `kw` filter columns `col` apart.
#[derive(Clone, Copy)]
struct Walk {
    channels: usize,
    kh: usize,
    kw: usize,
    chan: isize,
    row: isize,
    col: isize,
}

/// Asks for the lines of the `rows` × `cols` matrix at `base` (rows `ld` apart) to be brought
/// into L2, where the processor takes the hint (x86); a hint only, it reads nothing, so any
/// address will do.
fn prefetch_rows(base: *const f32, ld: usize, rows: usize, cols: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        for r in 0..rows {
            let row = base.wrapping_add(r * ld);
            // The first value's line, then one line every 16 values, and the last value's.
            for at in (0..cols).step_by(16).chain([cols.saturating_sub(1)]) {
                // SAFETY: a prefetch does not access memory and cannot fault.
                unsafe { _mm_prefetch::<_MM_HINT_T1>(row.wrapping_add(at).cast()) };
            }
        }
    }
    let _ = (base, ld, rows, cols);
}

/// Writes the transpose of the `rows` × `cols` matrix at `src` (rows `ld_src` apart) into
/// `dst` (rows `ld_dst` apart): `dst[j · ld_dst + i] = src[i · ld_src + j]`, in blocks of
/// 16 × 16 through registers at the vector levels (the edges' blocks loaded and stored with
/// masks), one value at a time at the portable level.
fn transpose_into(
    isa: Isa,
    src: &[f32],
    ld_src: usize,
    (rows, cols): (usize, usize),
    dst: &mut [f32],
    ld_dst: usize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    assert!(src.len() >= (rows - 1) * ld_src + cols && dst.len() >= (cols - 1) * ld_dst + rows);
    #[cfg(target_arch = "x86_64")]
    match isa {
        Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
            // SAFETY: the lengths checked above; AVX-512 F (the plan's level runs here).
            return unsafe { x86::transpose_avx512(src, ld_src, (rows, cols), dst, ld_dst) };
        }
        Isa::Avx2 => {
            // SAFETY: as above; the level's processor has AVX2.
            return unsafe { x86::transpose_avx2(src, ld_src, (rows, cols), dst, ld_dst) };
        }
        Isa::Portable => {}
    }
    let _ = isa;
    for i in 0..rows {
        for j in 0..cols {
            dst[j * ld_dst + i] = src[i * ld_src + j];
        }
    }
}

/// Runs the kernel over `len` positions (offsets from `offset`) for `kb` filters (1 to 64) of
/// a packed block: the partial sums of position `p` and filter `f` at `part[p · KB + f]`,
/// added to those there when `add` is set.
///
/// # Safety
/// Every position's walk stays inside the band at `x`; `u` holds `walk.channels · kh · kw`
/// steps of KB floats; `part` holds `len` rows of KB; the processor runs `isa`.
#[allow(clippy::too_many_arguments)]
unsafe fn kernels(
    isa: Isa,
    walk: Walk,
    x: *const f32,
    u: *const f32,
    kb: usize,
    len: usize,
    offset: &dyn Fn(usize) -> isize,
    part: *mut f32,
    add: bool,
) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
            // SAFETY: forwarded contract.
            return unsafe { sweep::<x86::Zmm>(walk, x, u, kb, len, offset, part, add) };
        }
        Isa::Avx2 => {
            // SAFETY: forwarded contract.
            return unsafe { sweep::<x86::Ymm>(walk, x, u, kb, len, offset, part, add) };
        }
        Isa::Portable => {}
    }
    let _ = isa;
    // SAFETY: forwarded contract.
    unsafe { sweep::<Plain>(walk, x, u, kb, len, offset, part, add) }
}

/// The sweep of one level: sub-blocks of `V::F` vectors of filters, each over every group of
/// `V::P` positions.
///
/// # Safety
/// As for [`kernels`], the processor running `V`'s level.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn sweep<V: Vector>(
    walk: Walk,
    x: *const f32,
    u: *const f32,
    kb: usize,
    len: usize,
    offset: &dyn Fn(usize) -> isize,
    part: *mut f32,
    add: bool,
) {
    let sub = V::F * V::N;
    for f0 in (0..kb).step_by(sub) {
        let f = (kb - f0).div_ceil(V::N).min(V::F);
        // The positions shared evenly among the fewest calls: 49 positions in calls of at
        // most 12 as 10, 10, 10, 10 and 9 rather than 12, 12, 12, 12 and 1, whose lone
        // position's sums form too few chains to hide the FMA's latency.
        let calls = len.div_ceil(V::P[f - 1]);
        let mut p0 = 0;
        for i in 0..calls {
            let p = len / calls + usize::from(i < len % calls);
            let mut offs = [0isize; MOST_POSITIONS];
            for (j, o) in offs.iter_mut().enumerate().take(p) {
                *o = offset(p0 + j);
            }
            let call = Call {
                walk,
                x,
                u: u.wrapping_add(f0),
                offs,
                part: part.wrapping_add(p0 * KB + f0),
                add,
            };
            // SAFETY: forwarded contract: positions p0..p0 + p, filters f0..f0 + f · N.
            unsafe { V::tile(f, p, &call) };
            p0 += p;
        }
    }
}

/// One kernel call: `P` positions (offsets `offs` from `x`) × `F` vectors of filters.
struct Call {
    walk: Walk,
    x: *const f32,
    u: *const f32,
    offs: [isize; MOST_POSITIONS],
    part: *mut f32,
    add: bool,
}

/// One level's vectors and its kernel's shape.
trait Vector {
    type V: Copy;
    /// Lanes of a vector.
    const N: usize;
    /// The most vectors of filters a kernel call takes, and the most positions for each count
    /// of them (`P[f - 1]`).
    const F: usize;
    const P: [usize; 4];
    /// # Safety
    /// The processor runs the level (for this and every function below).
    unsafe fn zero() -> Self::V;
    /// # Safety
    /// `p` addresses `N` values.
    unsafe fn load(p: *const f32) -> Self::V;
    unsafe fn splat(v: f32) -> Self::V;
    /// `a · b + c`.
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// # Safety
    /// `p` addresses `N` writable values.
    unsafe fn store(p: *mut f32, v: Self::V);
    /// Runs [`tile`] with `f` (1 to `F`) and `p` (1 to `P`) as its constants.
    ///
    /// # Safety
    /// As for [`tile`].
    unsafe fn tile(f: usize, p: usize, call: &Call);
}

/// The kernel: `P` positions × `F` vectors of filters in registers, over the walk's channels
/// and taps, then added to (`add`) or stored in the partial sums.
///
/// # Safety
/// Every position's walk stays inside its buffer; `u` holds the walk's steps of KB floats;
/// `part` holds `P` rows of KB from the call's first filter; the processor runs `V`'s level.
#[inline(always)]
unsafe fn tile<V: Vector, const F: usize, const P: usize>(c: &Call) {
    let w = c.walk;
    // SAFETY (every access): the caller's contract.
    unsafe {
        let mut acc = [[V::zero(); F]; P];
        if c.add {
            for (j, row) in acc.iter_mut().enumerate() {
                for (h, a) in row.iter_mut().enumerate() {
                    *a = V::load(c.part.add(j * KB + h * V::N));
                }
            }
        }
        let offs: [isize; P] = std::array::from_fn(|j| c.offs[j]);
        let mut u = c.u;
        // A 1x1 filter's steps are its channels: one loop, without the taps' two loops of
        // one turn each around every step.
        if w.kh == 1 && w.kw == 1 {
            let mut xc = c.x;
            for _ in 0..w.channels {
                step::<V, F, P>(&mut acc, u, xc, &offs);
                u = u.add(KB);
                xc = xc.offset(w.chan);
            }
        } else {
            for ch in 0..w.channels {
                let xc = c.x.offset(ch as isize * w.chan);
                for r in 0..w.kh {
                    let xr = xc.offset(r as isize * w.row);
                    for t in 0..w.kw {
                        let xt = xr.offset(t as isize * w.col);
                        step::<V, F, P>(&mut acc, u, xt, &offs);
                        u = u.add(KB);
                    }
                }
            }
        }
        for (j, row) in acc.iter().enumerate() {
            for (h, &a) in row.iter().enumerate() {
                V::store(c.part.add(j * KB + h * V::N), a);
            }
        }
    }
}

/// One step of [`tile`]: `F` vectors of filters at `u` times each position's input value at
/// its offset from `x`, added to the accumulators.
///
/// # Safety
/// As for [`tile`]: `u` holds the step's `F` vectors, each position's value lies in its buffer.
#[inline(always)]
unsafe fn step<V: Vector, const F: usize, const P: usize>(
    acc: &mut [[V::V; F]; P],
    u: *const f32,
    x: *const f32,
    offs: &[isize; P],
) {
    // SAFETY: the caller's contract.
    unsafe {
        let wv: [V::V; F] = std::array::from_fn(|h| V::load(u.add(h * V::N)));
        for (row, &o) in acc.iter_mut().zip(offs) {
            let b = V::splat(*x.offset(o));
            for (a, &wh) in row.iter_mut().zip(&wv) {
                *a = V::fma(wh, b, *a);
            }
        }
    }
}

/// Calls `$kern::<F, P>(call)` for the `(F, P)` given by `$f` and `$p`, from the lists of
/// positions each count of filter vectors has a kernel for.
macro_rules! by_shape {
    ($f:expr, $p:expr, $kern:ident, $call:expr, {$($fv:literal => [$($pv:literal)*]),*}) => {
        match $f {
            $($fv => by_shape!(@p $p, $kern, $call, $fv, [$($pv)*]),)*
            _ => unreachable!("no kernel with {} vectors of filters", $f),
        }
    };
    (@p $p:expr, $kern:ident, $call:expr, $fv:literal, [$($pv:literal)*]) => {
        match $p {
            $($pv => $kern::<$fv, $pv>($call),)*
            _ => unreachable!("no kernel with {} vectors of filters and {} positions", $fv, $p),
        }
    };
}

/// The portable level: vectors of 8 plain floats (the compiler vectorises them for the
/// baseline), 2 × 3 of them.
struct Plain;

impl Vector for Plain {
    type V = [f32; 8];
    const N: usize = 8;
    const F: usize = 2;
    const P: [usize; 4] = [4, 3, 0, 0];
    #[inline(always)]
    unsafe fn zero() -> Self::V {
        [0.0; 8]
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self::V {
        // SAFETY: the caller's contract.
        unsafe { p.cast::<[f32; 8]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn splat(v: f32) -> Self::V {
        [v; 8]
    }
    #[inline(always)]
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        std::array::from_fn(|i| a[i] * b[i] + c[i])
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: Self::V) {
        // SAFETY: the caller's contract.
        unsafe { p.cast::<[f32; 8]>().write_unaligned(v) }
    }
    unsafe fn tile(f: usize, p: usize, call: &Call) {
        /// The portable kernel.
        ///
        /// # Safety
        /// As for [`tile`].
        unsafe fn kern<const F: usize, const P: usize>(call: &Call) {
            // SAFETY: forwarded contract.
            unsafe { tile::<Plain, F, P>(call) }
        }
        // SAFETY: forwarded contract.
        unsafe { by_shape!(f, p, kern, call, {1 => [1 2 3 4], 2 => [1 2 3]}) }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{tile, Call, Vector};
    use crate::fast::isa::masks::ymm_lanes;
    use std::arch::x86_64::*;

    /// Generates a level's [`Vector`] from its intrinsics, with its kernels compiled for its
    /// features.
    macro_rules! level {
        ($(#[$doc:meta])* $name:ident, $feat:literal, $vec:ty, $n:literal, $f:literal,
         $p:expr, $zero:ident, $load:ident, $set1:ident, $fmadd:ident, $store:ident,
         $shapes:tt) => {
            $(#[$doc])*
            pub struct $name;

            impl Vector for $name {
                type V = $vec;
                const N: usize = $n;
                const F: usize = $f;
                const P: [usize; 4] = $p;
                // SAFETY (every function): the caller's contract.
                #[inline(always)]
                unsafe fn zero() -> Self::V {
                    unsafe { $zero() }
                }
                #[inline(always)]
                unsafe fn load(p: *const f32) -> Self::V {
                    unsafe { $load(p) }
                }
                #[inline(always)]
                unsafe fn splat(v: f32) -> Self::V {
                    unsafe { $set1(v) }
                }
                #[inline(always)]
                unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V {
                    unsafe { $fmadd(a, b, c) }
                }
                #[inline(always)]
                unsafe fn store(p: *mut f32, v: Self::V) {
                    unsafe { $store(p, v) }
                }
                unsafe fn tile(f: usize, p: usize, call: &Call) {
                    /// The level's kernel, compiled for its features.
                    ///
                    /// # Safety
                    /// As for [`tile`].
                    #[target_feature(enable = $feat)]
                    unsafe fn kern<const F: usize, const P: usize>(call: &Call) {
                        // SAFETY: forwarded contract.
                        unsafe { tile::<$name, F, P>(call) }
                    }
                    // SAFETY: forwarded contract.
                    unsafe { by_shape!(f, p, kern, call, $shapes) }
                }
            }
        };
    }

    /// The store of a block's sums straight into an f32 output (see `run_item`): `filters`
    /// rows from `out`, `row_stride` apart, of `positions` consecutive values each, with each
    /// row's bias added (when given) and a relu (`x < 0 ? 0 : x`: NaN and -0 pass, as in the
    /// epilogue).
    pub struct Store<'a> {
        pub out: *mut f32,
        pub row_stride: isize,
        pub bias: Option<&'a [f32]>,
        pub relu: bool,
        pub filters: usize,
        pub positions: usize,
        /// Whole aligned lines are written around the caches (an output far larger than
        /// them: its lines would only be read for ownership, then evicted).
        pub stream: bool,
    }

    impl Store<'_> {
        /// Transposes `part` (rows of `KB` sums, one a position, whole blocks of 16) into the
        /// output.
        ///
        /// # Safety
        /// `part` holds `positions` rounded up to 16 rows of `KB`; the output rows are this
        /// caller's; the processor runs `isa` (a vector level).
        pub unsafe fn run(&self, isa: crate::fast::isa::Isa, part: &[f32]) {
            use crate::fast::isa::Isa;
            assert!(part.len() >= self.positions.next_multiple_of(16) * super::KB);
            assert!(self.filters <= super::KB);
            // SAFETY: forwarded contract.
            unsafe {
                match isa {
                    Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => self.run_avx512(part),
                    _ => self.run_avx2(part),
                }
                if self.stream {
                    // The streaming stores reach memory before any later store of this
                    // thread (and before the execute call returns).
                    _mm_sfence();
                }
            }
        }

        /// # Safety
        /// As for [`Self::run`], with AVX-512 F.
        #[target_feature(enable = "avx512f")]
        unsafe fn run_avx512(&self, part: &[f32]) {
            let zero = _mm512_setzero_ps();
            for q in (0..self.positions).step_by(16) {
                let lanes = (self.positions - q).min(16);
                let mask = ((1u32 << lanes) - 1) as __mmask16;
                for h in (0..self.filters).step_by(16) {
                    // SAFETY: rows q..q + 16 of part, columns h..h + 16 (asserted lengths).
                    let rows = std::array::from_fn(|i| unsafe {
                        _mm512_loadu_ps(part.as_ptr().add((q + i) * super::KB + h))
                    });
                    let cols = crate::fast::transpose::transpose16(rows);
                    for (j, &v) in cols.iter().enumerate().take(self.filters - h) {
                        let mut v = v;
                        if let Some(bias) = self.bias {
                            v = _mm512_add_ps(v, _mm512_set1_ps(bias[h + j]));
                        }
                        if self.relu {
                            v = _mm512_max_ps(zero, v);
                        }
                        let at = self
                            .out
                            .wrapping_offset((h + j) as isize * self.row_stride)
                            .wrapping_add(q);
                        // SAFETY: positions q..q + lanes of the filter's output row.
                        unsafe {
                            if self.stream && lanes == 16 && (at as usize).is_multiple_of(64) {
                                _mm512_stream_ps(at, v)
                            } else {
                                _mm512_mask_storeu_ps(at, mask, v)
                            }
                        };
                    }
                }
            }
        }

        /// # Safety
        /// As for [`Self::run`], with AVX2.
        #[target_feature(enable = "avx2")]
        unsafe fn run_avx2(&self, part: &[f32]) {
            let zero = _mm256_setzero_ps();
            // Sixteen positions at a time, two blocks of 8 transposed, so that a filter's
            // row gets a whole line at once (a streaming store of half a line would go to
            // memory as a partial write).
            for q in (0..self.positions).step_by(16) {
                let count = (self.positions - q).min(16);
                let masks = [ymm_lanes(count.min(8)), ymm_lanes(count.saturating_sub(8))];
                for h in (0..self.filters).step_by(8) {
                    let halves: [[__m256; 8]; 2] = std::array::from_fn(|half| {
                        // SAFETY: rows q + 8·half.. of part (whole blocks of 16 rows),
                        // columns h..h + 8 (asserted lengths).
                        let rows = std::array::from_fn(|i| unsafe {
                            _mm256_loadu_ps(part.as_ptr().add((q + 8 * half + i) * super::KB + h))
                        });
                        crate::fast::transpose::transpose8(rows)
                    });
                    for j in 0..8.min(self.filters - h) {
                        let at = self
                            .out
                            .wrapping_offset((h + j) as isize * self.row_stride)
                            .wrapping_add(q);
                        let whole = self.stream && count == 16 && (at as usize).is_multiple_of(64);
                        for (half, mask) in masks.iter().enumerate().take(count.div_ceil(8)) {
                            let mut v = halves[half][j];
                            if let Some(bias) = self.bias {
                                v = _mm256_add_ps(v, _mm256_set1_ps(bias[h + j]));
                            }
                            if self.relu {
                                v = _mm256_max_ps(zero, v);
                            }
                            let at = at.wrapping_add(8 * half);
                            // SAFETY: positions q + 8·half.. (the mask's lanes) of the filter's
                            // output row.
                            unsafe {
                                if whole {
                                    _mm256_stream_ps(at, v)
                                } else if count >= 8 * (half + 1) {
                                    _mm256_storeu_ps(at, v)
                                } else {
                                    // (Only where the mask is partial: vmaskmovps stores
                                    // cost about 12 cycles each on Zen 4.)
                                    _mm256_maskstore_ps(at, *mask, v)
                                }
                            };
                        }
                    }
                }
            }
        }
    }

    /// [`super::transpose_into`] at AVX-512: blocks of 16 × 16, each row of an edge block
    /// loaded with a mask of its columns (rows past the matrix as zeros), each of its columns
    /// stored with a mask of its rows.
    ///
    /// # Safety
    /// `src` holds `(rows - 1) · ld_src + cols` values, `dst` `(cols - 1) · ld_dst + rows`;
    /// the processor has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn transpose_avx512(
        src: &[f32],
        ld_src: usize,
        (rows, cols): (usize, usize),
        dst: &mut [f32],
        ld_dst: usize,
    ) {
        let mask = |n: usize| ((1u32 << n) - 1) as __mmask16;
        // Sixteen source rows at a time, each read to its end: packing filters reads sixteen
        // streams instead of a block's 64 (8×512×14²→512 stride 2 1.04 times as fast).
        for i0 in (0..rows).step_by(16) {
            let rh = (rows - i0).min(16);
            for j0 in (0..cols).step_by(16) {
                let cw = (cols - j0).min(16);
                let block = std::array::from_fn(|i| {
                    if i < rh {
                        // SAFETY: columns j0..j0 + cw of row i0 + i (the caller's contract).
                        unsafe {
                            _mm512_maskz_loadu_ps(
                                mask(cw),
                                src.as_ptr().add((i0 + i) * ld_src + j0),
                            )
                        }
                    } else {
                        _mm512_setzero_ps()
                    }
                });
                let out = crate::fast::transpose::transpose16(block);
                for (j, &v) in out.iter().enumerate().take(cw) {
                    // SAFETY: rows i0..i0 + rh of column j0 + j (the caller's contract).
                    unsafe {
                        _mm512_mask_storeu_ps(
                            dst.as_mut_ptr().add((j0 + j) * ld_dst + i0),
                            mask(rh),
                            v,
                        )
                    };
                }
            }
        }
    }

    /// [`super::transpose_into`] at AVX2, as [`transpose_avx512`] in blocks of 8 × 8.
    ///
    /// # Safety
    /// As for [`transpose_avx512`], the processor having AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn transpose_avx2(
        src: &[f32],
        ld_src: usize,
        (rows, cols): (usize, usize),
        dst: &mut [f32],
        ld_dst: usize,
    ) {
        // Eight source rows at a time, each read to its end (see transpose_avx512).
        for i0 in (0..rows).step_by(8) {
            let rh = (rows - i0).min(8);
            for j0 in (0..cols).step_by(8) {
                let cw = (cols - j0).min(8);
                let block = std::array::from_fn(|i| {
                    if i < rh {
                        // SAFETY: columns j0..j0 + cw of row i0 + i (the caller's contract;
                        // masked lanes are not read).
                        unsafe {
                            _mm256_maskload_ps(
                                src.as_ptr().add((i0 + i) * ld_src + j0),
                                ymm_lanes(cw),
                            )
                        }
                    } else {
                        _mm256_setzero_ps()
                    }
                });
                let out = crate::fast::transpose::transpose8(block);
                for (j, &v) in out.iter().enumerate().take(cw) {
                    // SAFETY: rows i0..i0 + rh of column j0 + j (the caller's contract).
                    unsafe {
                        let at = dst.as_mut_ptr().add((j0 + j) * ld_dst + i0);
                        if rh == 8 {
                            _mm256_storeu_ps(at, v)
                        } else {
                            _mm256_maskstore_ps(at, ymm_lanes(rh), v)
                        }
                    };
                }
            }
        }
    }

    level!(
        /// The AVX-512 levels: 6 positions × 4 zmm of filters, 8 × 3, 12 × 2 or 12 × 1.
        Zmm, "avx512f", __m512, 16, 4, [12, 12, 8, 6], _mm512_setzero_ps, _mm512_loadu_ps,
        _mm512_set1_ps, _mm512_fmadd_ps, _mm512_storeu_ps,
        {1 => [1 2 3 4 5 6 7 8 9 10 11 12], 2 => [1 2 3 4 5 6 7 8 9 10 11 12],
         3 => [1 2 3 4 5 6 7 8], 4 => [1 2 3 4 5 6]}
    );
    level!(
        /// The AVX2 level: 6 positions × 2 ymm of filters, or 12 × 1 (4 × 3 spilled and ran
        /// 10-20% slower).
        Ymm, "avx2,fma", __m256, 8, 2, [12, 6, 0, 0], _mm256_setzero_ps, _mm256_loadu_ps,
        _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps,
        {1 => [1 2 3 4 5 6 7 8 9 10 11 12], 2 => [1 2 3 4 5 6]}
    );
}

#[cfg(test)]
mod tests {
    use super::{BroadcastPlan, Shape, KB};
    use crate::fast::isa::Isa;

    /// A 3x3 stride-1 convolution of `n` images of `oh × ow`, 5 channels, `kg` filters.
    fn shape(n: usize, kg: usize, oh: usize, ow: usize) -> Shape {
        Shape::nchw_3x3(n, 5, kg, oh, ow)
    }

    /// Every plan's tiles cover the output's rows with none empty, and its parts split the
    /// filter blocks evenly, whatever the rows, images, filters and workers (a row count the
    /// tiles could not be spread over evenly once kept the planning loop from ending).
    #[test]
    fn tiles_cover_every_row_and_parts_divide_the_blocks() {
        for oh in 1..=40 {
            for ow in [1, 5, 14, 60] {
                for n in 1..=3 {
                    for slots in 1..=8 {
                        for kg in [1, 16, 64, 200] {
                            let p = BroadcastPlan::new(
                                &shape(n, kg, oh, ow),
                                slots,
                                Isa::Portable,
                                false,
                            );
                            let at = format!("oh {oh} ow {ow} n {n} slots {slots} kg {kg}");
                            assert!(p.tiles * p.tile_rows >= oh, "{at}");
                            assert!((p.tiles - 1) * p.tile_rows < oh, "{at}");
                            assert!(
                                p.parts >= 1 && kg.div_ceil(KB).is_multiple_of(p.parts),
                                "{at}"
                            );
                        }
                    }
                }
            }
        }
    }
}
