//! f32 GEMM at the instruction-set level a plan records ([`Isa`]), so that the level decides
//! every instruction its GEMMs execute: kiln's own micro-kernels for the portable and AVX2
//! levels, the `gemm` crate's AVX-512 kernels at the AVX-512 and AMX levels.
//!
//! kiln's kernels use the usual blocking of BLIS-style GEMMs: the right operand is packed in panels of
//! `KC` rows by `NC` columns (cut in slivers `NR` columns wide), the left in blocks of `MC` rows
//! by `KC` (cut in slivers `MR` rows tall); the micro-kernel multiplies one left sliver by one
//! right sliver into an `MR`×`NR` tile of the output held in registers. Over the inner loop the
//! right sliver stays in L1 and the left block in L2. Packing pads the edges with zeros, so the
//! kernel always runs full tiles; edge tiles go through a small buffer.
//!
//! Matrices are `(pointer, row stride, column stride)` in elements; any strides work (packing
//! reads them), the output's fast path is a column stride of 1.

use super::isa::Isa;
use std::cell::RefCell;

/// A read-only matrix: base pointer, row stride, column stride (elements).
pub type MatRef = (*const f32, isize, isize);
/// A writable matrix: base pointer, row stride, column stride (elements).
pub type MatMut = (*mut f32, isize, isize);

/// One micro-kernel and its blocking.
trait Kernel {
    const MR: usize;
    const NR: usize;
    const KC: usize;
    const MC: usize;
    const NC: usize;
    /// `c[MR][NR]` (row stride `ldc`, column stride 1) = (`first` ? 0 : c) + a·b over `kc`
    /// steps; `a` holds `MR` values per step, `b` holds `NR`.
    ///
    /// # Safety
    /// `a` and `b` address `kc` packed steps; `c` addresses the whole tile; the processor runs
    /// the kernel's instruction set.
    unsafe fn tile(kc: usize, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, first: bool);
}

/// C = A·B (or C += A·B when `accumulate`), C `m`×`n`, A `m`×`k`, B `k`×`n`, run with the
/// kernels of `isa` on up to `threads` threads of the engine's pool (1: on the calling thread).
///
/// # Safety
/// The three matrices address valid memory for their sizes and strides; `dst` does not overlap
/// the operands; `isa` is available on this processor ([`Isa::is_available`]).
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    dst: MatMut,
    lhs: MatRef,
    rhs: MatRef,
    accumulate: bool,
    threads: usize,
) {
    // SAFETY: forwarded contract.
    if unsafe { vector_product(isa, m, n, k, dst, lhs, rhs, accumulate, threads) } {
        return;
    }
    if dst.2 != 1 && dst.1 == 1 {
        // A column-major output: compute its transpose, Cᵀ = Bᵀ·Aᵀ, which is row-major.
        let t = |(p, rs, cs): MatRef| (p, cs, rs);
        // SAFETY: the same memory, read through transposed strides.
        return unsafe {
            sgemm(
                isa,
                n,
                m,
                k,
                (dst.0, dst.2, dst.1),
                t(rhs),
                t(lhs),
                accumulate,
                threads,
            )
        };
    }
    // SAFETY: forwarded contract; each arm runs only the kernels of `isa`.
    unsafe {
        match isa {
            Isa::Portable => parallel::<Portable>(m, n, k, dst, lhs, rhs, accumulate, threads),
            // Ours at this level on every processor: on a Zen 3 EPYC (AVX2, no AVX-512) they
            // ran 1024³ and 2048³ products faster than the gemm crate's AVX2 kernels, and on
            // AVX-512 machines they keep the level honest (the crate would pick AVX-512).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => parallel::<x86::Avx2>(m, n, k, dst, lhs, rhs, accumulate, threads),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx
                if OWN_ROWS.contains(&m) && n >= OWN_LEAST_COLUMNS =>
            {
                parallel::<x86::Avx512>(m, n, k, dst, lhs, rhs, accumulate, threads)
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => wide(
                Product {
                    m,
                    n,
                    k,
                    dst,
                    lhs,
                    rhs,
                    accumulate,
                },
                threads,
            ),
            #[cfg(not(target_arch = "x86_64"))]
            _ => parallel::<Portable>(m, n, k, dst, lhs, rhs, accumulate, threads),
        }
    }
}

/// The AVX-512 level: the `gemm` crate's kernels, which it picks at run time for this
/// processor (its AVX-512 ones where the processor has AVX-512, which this level requires).
/// Measured on an Emerald Rapids Xeon they were about 8% faster than a 12×32 kernel of our own
/// with the blocking of the lower levels.
///
/// The crate shares a square product among its threads well, an oblong one less so: on two
/// cores that run a 1024³ product at 370-390 GFLOP/s, a batch of 64 through a 4096-wide layer
/// (64×4096×4096) ran at 120, and a convolution's 256 filters × 104 positions × 2304 at 180.
/// So with a few threads ([`WIDE_SPLIT_THREADS`]) each thread gets its own part of the longer
/// side of the output and runs the crate on one thread: 240 and 320 GFLOP/s there, and the
/// square products as fast as before. With more threads only products of few rows are split
/// ([`WIDE_SPLIT_ROWS`]), the case the crate's own split handled worst.
unsafe fn wide(p: Product, threads: usize) {
    let work = p.m as u64 * p.n as u64 * p.k as u64;
    let split = threads >= 2
        && work >= WIDE_SPLIT_WORK
        && (threads <= WIDE_SPLIT_THREADS || p.m < WIDE_SPLIT_ROWS);
    if split && p.n < p.m && p.m >= 2 * WIDE_SPLIT_RUN {
        // By rows: the columns of the transposed product, Cᵀ = Bᵀ·Aᵀ (the same memory).
        // SAFETY: forwarded contract, through transposed strides.
        unsafe { split_columns(p.transposed(), threads) };
    } else if split && p.n >= 2 * WIDE_SPLIT_RUN {
        // SAFETY: forwarded contract.
        unsafe { split_columns(p, threads) };
    } else if work < WIDE_SPLIT_WORK {
        // SAFETY: forwarded contract.
        unsafe { crate_gemm(p, 1) };
    } else {
        // SAFETY: forwarded contract.
        unsafe { crate_gemm(p, threads) };
    }
}

/// One product C (+)= A·B as [`sgemm`] takes it, for the AVX-512 level's split.
#[derive(Clone, Copy)]
struct Product {
    m: usize,
    n: usize,
    k: usize,
    dst: MatMut,
    lhs: MatRef,
    rhs: MatRef,
    accumulate: bool,
}

// SAFETY: the pointers are only dereferenced under sgemm's contract, by tasks writing disjoint
// columns of the output.
unsafe impl Send for Product {}
// SAFETY: as above; shared reads of the operands.
unsafe impl Sync for Product {}

impl Product {
    /// The same product transposed, Cᵀ = Bᵀ·Aᵀ, over the same memory.
    fn transposed(self) -> Product {
        let t = |(p, rs, cs): MatRef| (p, cs, rs);
        Product {
            m: self.n,
            n: self.m,
            dst: (self.dst.0, self.dst.2, self.dst.1),
            lhs: t(self.rhs),
            rhs: t(self.lhs),
            ..self
        }
    }

    /// Columns `j0..j1` of the product (of the output and of B).
    fn columns(self, j0: usize, j1: usize) -> Product {
        let o = j0 as isize;
        let (d, b) = (self.dst, self.rhs);
        Product {
            n: j1 - j0,
            dst: (d.0.wrapping_offset(o * d.2), d.1, d.2),
            rhs: (b.0.wrapping_offset(o * b.2), b.1, b.2),
            ..self
        }
    }
}

/// [`wide`]'s split: the output's columns in up to `threads` parts of whole runs of
/// [`WIDE_SPLIT_RUN`] (the last part takes the rest), each run by the crate on one thread.
///
/// # Safety
/// As for [`sgemm`]; `p.n` is at least `2 · WIDE_SPLIT_RUN`.
unsafe fn split_columns(p: Product, threads: usize) {
    let units = p.n / WIDE_SPLIT_RUN;
    let parts = threads.min(units);
    super::pool::for_each(parts, |part| {
        let j0 = part * units / parts * WIDE_SPLIT_RUN;
        let j1 = if part + 1 == parts {
            p.n
        } else {
            (part + 1) * units / parts * WIDE_SPLIT_RUN
        };
        // SAFETY: columns j0..j1 of the output and of B; parts are disjoint.
        unsafe { crate_gemm(p.columns(j0, j1), 1) }
    });
}

/// At the AVX-512 levels, products with this many rows and at least [`OWN_LEAST_COLUMNS`]
/// columns run kiln's own driver and 8×32 kernel rather than the crate: a batch of 16-48
/// through a wide layer. On the 2-core Xeon of 2026-12-06 (`sgemm_speed`, best of 25):
/// 32×4096×4096 at 173-180 GFLOP/s against 104-108 for the crate split by columns, 48×4096×4096
/// 210-218 against 118-123, 32×1024×1024 203 against 136, 16×4096×4096 119-125 against
/// 102. With 8 rows or 56 and more the crate's split was as fast or faster, as it was with 512
/// columns (32×512×4096: 155 against 209).
const OWN_ROWS: std::ops::Range<usize> = 16..56;
/// See [`OWN_ROWS`].
const OWN_LEAST_COLUMNS: usize = 1024;

/// Up to this many threads, [`wide`] splits every large enough product itself (measured on two
/// cores, the Xeon of 2026-12-06: 1.0-1.8× the crate's own split; a one-dimensional split
/// repacks the shared operand once per thread, so many threads keep the crate's).
const WIDE_SPLIT_THREADS: usize = 4;
/// With more threads, products with fewer output rows than this are still split by columns
/// (on two cores: 32-127 rows × 1024-4096 columns ran 1.03-2.25× faster split).
const WIDE_SPLIT_ROWS: usize = 128;
/// A part's columns (or rows) come in runs of this many: whole cache lines of the output.
const WIDE_SPLIT_RUN: usize = 32;
/// Products of fewer multiply-adds than this run on the calling thread alone. Split on the
/// engine's pool (`fast::pool`), larger ones gained against the crate's own split on rayon:
/// 16×64×1024 1.34×, 128³ 1.6×, 96³ 2.3× (two cores, the Xeon of 2026-12-07).
const WIDE_SPLIT_WORK: u64 = 1 << 18;

/// The `gemm` crate on up to `threads` threads of its own choosing (1: the calling thread).
///
/// # Safety
/// As for [`sgemm`].
unsafe fn crate_gemm(p: Product, threads: usize) {
    let par = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    let alpha = if p.accumulate { 1.0f32 } else { 0.0 };
    let (dst, lhs, rhs) = (p.dst, p.lhs, p.rhs);
    // SAFETY: forwarded contract; the gemm crate takes (pointer, column stride, row stride)
    // and computes dst = alpha·dst + 1·lhs·rhs (dst read only when `accumulate`).
    unsafe {
        gemm::gemm(
            p.m,
            p.n,
            p.k,
            dst.0,
            dst.2,
            dst.1,
            p.accumulate,
            lhs.0,
            lhs.2,
            lhs.1,
            rhs.0,
            rhs.2,
            rhs.1,
            alpha,
            1.0f32,
            false,
            false,
            false,
            par,
        )
    }
}

/// Output values per task of a vector product, at most.
const VECTOR_COLUMNS: usize = 4096;
/// Rows of the matrix per task of a vector product whose matrix is laid out along the outputs:
/// a multiple of this, and about `VECTOR_TASK_FLOATS` values.
const VECTOR_ROWS: usize = 256;
const VECTOR_TASK_FLOATS: usize = 1 << 16;
/// The most runs of rows a vector product is cut into.
const VECTOR_CHUNKS: usize = 64;
/// The most partial-row values the calling thread keeps between vector products; a larger
/// product takes a buffer of its own.
const VECTOR_PARTIAL_KEPT: usize = 1 << 20;

/// A product with one row (`m` = 1) or one column (`n` = 1), computed by streaming the matrix
/// once, as a vector-matrix product: a GEMV is bound by reading the matrix, and packing it for
/// a GEMM's kernels would read it twice and write it once (a 1×4096×4096 product ran at half of
/// numpy's speed that way). The matrix must have a unit stride along one of its axes: along the
/// output (each step adds a scaled row of it to the outputs) or along K (each output is a dot
/// product). Returns false, having done nothing, where the product is not of this kind.
///
/// # Safety
/// As for [`sgemm`].
#[allow(clippy::too_many_arguments)]
unsafe fn vector_product(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    dst: MatMut,
    lhs: MatRef,
    rhs: MatRef,
    accumulate: bool,
    threads: usize,
) -> bool {
    // out[j] (+)= Σ_p x[p]·mat[p][j], j < len.
    let (len, out, x, mat) = if m == 1 {
        (n, (dst.0, dst.2), (lhs.0, lhs.2), rhs)
    } else if n == 1 {
        // The transpose: a row (B's column) times Aᵀ.
        (m, (dst.0, dst.1), (rhs.0, rhs.1), (lhs.0, lhs.2, lhs.1))
    } else {
        return false;
    };
    let along_out = mat.2 == 1;
    if k == 0 || !(along_out || mat.1 == 1) {
        return false;
    }
    // x's values in a row of their own where they are strided.
    let gathered: Vec<f32> = if x.1 == 1 {
        Vec::new()
    } else {
        // SAFETY: x addresses k values at its stride (the caller's contract).
        (0..k)
            .map(|p| unsafe { *x.0.offset(p as isize * x.1) })
            .collect()
    };
    let xs = if x.1 == 1 { x.0 } else { gathered.as_ptr() };
    // A matrix laid out along the outputs is cut into runs of whole rows (up to
    // VECTOR_COLUMNS wide), each summed into a partial row of its own, and the partial rows are
    // added in order at the end: each task reads long runs of consecutive memory (tasks that
    // read a narrower piece of every row ran slower), and the result does not depend on the
    // number of threads. Dot products are cut into ranges of outputs, a few a thread.
    let (width, rows_per_task) = if along_out {
        // At least VECTOR_ROWS rows, and about 256 KiB of the matrix, a task; at most
        // VECTOR_CHUNKS runs of rows, which bounds the partial rows.
        let rows = (VECTOR_TASK_FLOATS / len.min(VECTOR_COLUMNS))
            .max(VECTOR_ROWS)
            .max(k.div_ceil(VECTOR_CHUNKS));
        (VECTOR_COLUMNS, rows.next_multiple_of(VECTOR_ROWS))
    } else {
        let per_task = len.div_ceil(4 * threads.max(1));
        (per_task.next_multiple_of(4).min(VECTOR_COLUMNS), k)
    };
    let chunks = k.div_ceil(rows_per_task);
    // The partial rows, in a buffer the calling thread keeps between calls (fresh pages for
    // each call cost a tenth of a 1×4096×4096 product).
    PARTIAL.with(|cell| {
        let mut guard = cell.try_borrow_mut();
        let mut own = Vec::new();
        let partial: &mut Vec<f32> = match guard.as_deref_mut() {
            Ok(v) if chunks * len <= VECTOR_PARTIAL_KEPT => v,
            _ => &mut own,
        };
        if chunks > 1 && partial.len() < chunks * len {
            partial.resize(chunks * len, 0.0);
        }
        // SAFETY: forwarded contract; the buffer holds chunks × len values where chunks > 1.
        unsafe {
            vector_tasks(
                isa,
                len,
                k,
                out,
                xs,
                mat,
                along_out,
                accumulate,
                threads,
                width,
                rows_per_task,
                partial,
            )
        }
    });
    true
}

/// The tasks of [`vector_product`] and the sum of their partial rows.
///
/// # Safety
/// As for [`vector_product`]; `xs` addresses k values; `partial` holds `chunks × len` values
/// where there is more than one chunk of rows.
#[allow(clippy::too_many_arguments)]
unsafe fn vector_tasks(
    isa: Isa,
    len: usize,
    k: usize,
    out: (*mut f32, isize),
    xs: *const f32,
    mat: MatRef,
    along_out: bool,
    accumulate: bool,
    threads: usize,
    width: usize,
    rows_per_task: usize,
    partial: &mut [f32],
) {
    let chunks = k.div_ceil(rows_per_task);
    let ranges = len.div_ceil(width);
    let tasks = ranges * chunks;
    let target: MatMut = if chunks > 1 {
        (partial.as_mut_ptr(), len as isize, 1)
    } else {
        (out.0, 0, out.1)
    };
    let shared = Send3(target, mat, (xs, 0, 0));
    let run = move |task: usize| {
        let (target, mat, xs) = shared.get();
        let (c, r) = (task / ranges, task % ranges);
        let (j0, p0) = (r * width, c * rows_per_task);
        let (cols, rows) = (width.min(len - j0), rows_per_task.min(k - p0));
        let mut acc = [0.0f32; VECTOR_COLUMNS];
        let acc = &mut acc[..cols];
        // SAFETY: xs holds k values; rows p0.. and columns j0.. of the matrix are inside it
        // (the caller's contract); the level is available.
        unsafe {
            let xs = std::slice::from_raw_parts(xs.0.add(p0), rows);
            let at = mat.0.offset(p0 as isize * mat.1 + j0 as isize * mat.2);
            let mat = (at, mat.1, mat.2);
            match isa {
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if along_out => {
                    x86::rows_avx512(xs, mat, acc)
                }
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => x86::dots_avx512(xs, mat, acc),
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 if along_out => x86::rows_avx2(xs, mat, acc),
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => x86::dots_avx2(xs, mat, acc),
                _ => vector_columns(along_out, xs, mat, acc),
            }
        }
        for (j, &v) in acc.iter().enumerate() {
            // SAFETY: partial row c's value j0 + j, or output j0 + j < len at its stride (the
            // caller's contract); tasks write disjoint values.
            unsafe {
                let o = target
                    .0
                    .offset(c as isize * target.1 + (j0 + j) as isize * target.2);
                *o = if accumulate && chunks == 1 { *o + v } else { v };
            }
        }
    };
    if threads > 1 && tasks > 1 && len as u64 * k as u64 >= 1 << 16 {
        super::pool::for_each(tasks, run);
    } else {
        (0..tasks).for_each(run);
    }
    if chunks > 1 {
        for j in 0..len {
            let v = (0..chunks).fold(0.0f32, |sum, c| sum + partial[c * len + j]);
            // SAFETY: output j < len at its stride (the caller's contract).
            unsafe {
                let o = out.0.offset(j as isize * out.1);
                *o = if accumulate { *o + v } else { v };
            }
        }
    }
}

/// `acc[j] = Σ_p xs[p]·mat[p][j]` for the `acc.len()` columns at `mat` (pointer to column 0,
/// row stride, column stride): `along_out` (column stride 1) four rows of the matrix at a
/// time added to the sums in order; else (row stride 1) each column's dot product in 8
/// partial sums added up in a fixed order. The portable level's: the AVX2 and AVX-512 levels
/// have their own (`x86::rows_*`, `x86::dots_*`).
///
/// # Safety
/// The matrix has `xs.len()` rows and `acc.len()` columns at those strides.
#[inline(always)]
unsafe fn vector_columns(along_out: bool, xs: &[f32], mat: MatRef, acc: &mut [f32]) {
    let (k, cols) = (xs.len(), acc.len());
    // SAFETY (both arms): rows p < k and columns j < cols of the matrix (the contract).
    let run = |p: usize, j: usize, len: usize| unsafe {
        std::slice::from_raw_parts(mat.0.offset(p as isize * mat.1 + j as isize * mat.2), len)
    };
    if along_out {
        acc.fill(0.0);
        let mut p = 0;
        while p + 4 <= k {
            let (x0, x1, x2, x3) = (xs[p], xs[p + 1], xs[p + 2], xs[p + 3]);
            let rows = acc
                .iter_mut()
                .zip(run(p, 0, cols))
                .zip(run(p + 1, 0, cols))
                .zip(run(p + 2, 0, cols))
                .zip(run(p + 3, 0, cols));
            for ((((a, &b0), &b1), &b2), &b3) in rows {
                *a = *a + x0 * b0 + x1 * b1 + x2 * b2 + x3 * b3;
            }
            p += 4;
        }
        for (p, &x) in xs.iter().enumerate().skip(p) {
            for (a, &b) in acc.iter_mut().zip(run(p, 0, cols)) {
                *a += x * b;
            }
        }
        return;
    }
    for (j, a) in acc.iter_mut().enumerate() {
        let column = run(0, j, k);
        let mut partial = [0.0f32; 8];
        let (xc, cc) = (xs.chunks_exact(8), column.chunks_exact(8));
        let (xt, ct) = (xc.remainder(), cc.remainder());
        for (xv, cv) in xc.zip(cc) {
            for ((p, &x), &c) in partial.iter_mut().zip(xv).zip(cv) {
                *p += x * c;
            }
        }
        let tail = xt.iter().zip(ct).fold(0.0f32, |t, (&x, &c)| t + x * c);
        let [p0, p1, p2, p3, p4, p5, p6, p7] = partial;
        *a = (((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7))) + tail;
    }
}

/// A packed micro-kernel: `(kc, a, b, c, ldc, first)` (see [`Packed::tile`]).
type TileFn = unsafe fn(usize, *const f32, *const f32, *mut f32, usize, bool);
/// A packed micro-kernel that also fetches a region into L2 (see [`Packed::tile_fetching`]).
type FetchingTileFn = unsafe fn(usize, *const f32, *const f32, *mut f32, usize, bool, *const i8);

/// The micro-kernel of one instruction-set level, for callers that pack both operands
/// themselves (Winograd packs its transformed filters once per execute and writes its
/// transformed input straight into slivers): no packing, no edges, whole `mr`×`nr` tiles.
#[derive(Clone, Copy, Debug)]
pub struct Packed {
    /// Rows of a left sliver (output rows of one tile).
    pub mr: usize,
    /// Columns of a right sliver (output columns of one tile).
    pub nr: usize,
    tile: TileFn,
    /// The tile that also fetches a region into L2 as it runs, where the level has one.
    fetching: Option<FetchingTileFn>,
}

impl Packed {
    /// The kernel of `isa`: AVX-512 8×32, AVX2 4×24, portable 4×16 (the AMX level's f32
    /// kernel is the AVX-512 one).
    ///
    /// # Safety
    /// `isa` is available on this processor ([`Isa::is_available`]).
    pub unsafe fn for_isa(isa: Isa) -> Packed {
        let (mr, nr) = Self::dims_of(isa);
        let (tile, fetching) = match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => (
                (|kc, a, b, c, ldc, first| unsafe {
                    // SAFETY: forwarded contract (Packed::tile); no fetch.
                    x86::avx512_tile_8x32(kc, a, b, c, ldc, first, std::ptr::null())
                }) as TileFn,
                Some(x86::avx512_tile_8x32 as _),
            ),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => (x86::avx2_tile_4x24 as _, None),
            _ => (Portable::tile as _, None),
        };
        Packed {
            mr,
            nr,
            tile,
            fetching,
        }
    }

    /// A wider kernel of `isa` for callers that shape their columns to the kernel's, where the
    /// level has one: at the AVX-512 levels an 8×48 tile in 24 zmm accumulators. With its
    /// slivers in L1 it ran 205-208 GFLOP/s on one core where the 8×32 one ran 190-199 (Xeon
    /// of 2026-12-06), but it pads columns to 48.
    ///
    /// # Safety
    /// `isa` is available on this processor ([`Isa::is_available`]).
    pub unsafe fn wide_for_isa(isa: Isa) -> Option<Packed> {
        let (mr, nr) = Self::wide_dims_of(isa)?;
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => Some(Packed {
                mr,
                nr,
                tile: |kc, a, b, c, ldc, first| unsafe {
                    // SAFETY: forwarded contract (Packed::tile); no fetch.
                    x86::avx512_tile_8x48(kc, a, b, c, ldc, first, std::ptr::null())
                },
                fetching: Some(x86::avx512_tile_8x48 as _),
            }),
            _ => None,
        }
    }

    /// `(mr, nr)` of [`Self::wide_for_isa`]'s kernel, on any processor.
    pub fn wide_dims_of(isa: Isa) -> Option<(usize, usize)> {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => Some((8, 48)),
            _ => None,
        }
    }

    /// The portable kernel, which every processor runs.
    pub fn portable() -> Packed {
        // SAFETY: the portable level needs nothing of the processor.
        unsafe { Self::for_isa(Isa::Portable) }
    }

    /// `(mr, nr)` of the kernel of `isa`, on any processor.
    pub fn dims_of(isa: Isa) -> (usize, usize) {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => (8, 32),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => (4, 24),
            _ => (Portable::MR, Portable::NR),
        }
    }

    /// `(mr, nr)` of this kernel.
    pub fn dims(&self) -> (usize, usize) {
        (self.mr, self.nr)
    }

    /// `c[mr][nr]` (row stride `ldc`, column stride 1) = (`first` ? 0 : c) + a·b over `kc`
    /// steps of a left sliver (`mr` values per step) and a right one (`nr` per step).
    ///
    /// # Safety
    /// `a` and `b` address `kc` packed steps; `c` addresses the whole tile; the kernel came
    /// from [`Packed::for_isa`] on this processor.
    #[inline(always)]
    pub unsafe fn tile(
        &self,
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: forwarded contract.
        unsafe { (self.tile)(kc, a, b, c, ldc, first) }
    }

    /// [`Packed::tile`], fetching `kc` × `mr` floats from `fetch` into L2 as it runs (one
    /// cache line every few steps, so that the fetches do not stall the kernel) where the
    /// level's kernel can; a fetch is only a hint, whatever the address.
    ///
    /// # Safety
    /// As for [`Packed::tile`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tile_fetching(
        &self,
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
        fetch: *const f32,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            match self.fetching {
                Some(tile) => tile(kc, a, b, c, ldc, first, fetch.cast()),
                None => (self.tile)(kc, a, b, c, ldc, first),
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Send3(MatMut, MatRef, MatRef);
// SAFETY: the pointers are only dereferenced under sgemm's contract, by tasks writing disjoint
// parts of the output.
unsafe impl Send for Send3 {}
// SAFETY: as above; shared reads of the operands.
unsafe impl Sync for Send3 {}

impl Send3 {
    /// The matrices (a method, so that a closure captures the whole wrapper, not its fields).
    fn get(self) -> (MatMut, MatRef, MatRef) {
        (self.0, self.1, self.2)
    }
}

/// Splits the output among `threads` tasks (along rows when there are enough, else columns),
/// each running the serial driver on its part.
#[allow(clippy::too_many_arguments)]
unsafe fn parallel<K: Kernel>(
    m: usize,
    n: usize,
    k: usize,
    dst: MatMut,
    lhs: MatRef,
    rhs: MatRef,
    accumulate: bool,
    threads: usize,
) {
    let work = m as u64 * n as u64 * k as u64;
    let threads = if work < 1 << 18 { 1 } else { threads.max(1) };
    if threads == 1 {
        // SAFETY: forwarded contract.
        unsafe { serial::<K>(m, n, k, dst, lhs, rhs, accumulate) };
        return;
    }
    // Split along the side whose parts repack less: by rows each part packs all of B (and its
    // rows of A once per NC-wide panel of B), by columns each part packs all of A once per
    // panel of its columns (and its columns of B).
    let per = |len: usize| len.div_ceil(threads);
    let by_rows_packs = k * n + per(m) * k * n.div_ceil(K::NC);
    let by_cols_packs = m * k * per(n).div_ceil(K::NC) + k * per(n);
    let by_rows = (m >= threads * K::MR && by_rows_packs <= by_cols_packs) || n < threads * K::NR;
    let (len, unit) = if by_rows { (m, K::MR) } else { (n, K::NR) };
    let units = len.div_ceil(unit);
    let parts = threads.min(units);
    let all = Send3(dst, lhs, rhs);
    super::pool::for_each(parts, |p| {
        let (u0, u1) = (p * units / parts, (p + 1) * units / parts);
        let (i0, i1) = ((u0 * unit).min(len), (u1 * unit).min(len));
        if i0 == i1 {
            return;
        }
        let (d, a, b) = all.get();
        let o = i0 as isize;
        // SAFETY: rows (or columns) i0..i1 of the output and the matching rows of A
        // (columns of B); parts are disjoint.
        unsafe {
            if by_rows {
                serial::<K>(
                    i1 - i0,
                    n,
                    k,
                    (d.0.wrapping_offset(o * d.1), d.1, d.2),
                    (a.0.wrapping_offset(o * a.1), a.1, a.2),
                    b,
                    accumulate,
                )
            } else {
                serial::<K>(
                    m,
                    i1 - i0,
                    k,
                    (d.0.wrapping_offset(o * d.2), d.1, d.2),
                    a,
                    (b.0.wrapping_offset(o * b.2), b.1, b.2),
                    accumulate,
                )
            }
        }
    });
}

thread_local! {
    /// The partial rows of a vector product ([`vector_product`]), kept between calls.
    static PARTIAL: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// Each thread's packing buffers, kept between calls so that a GEMM does not pay for fresh
    /// pages (many are called thousands of times per execute).
    static PACK: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Floats of alignment slack in the packing buffer (64 bytes).
const SLACK: usize = 16;

unsafe fn serial<K: Kernel>(
    m: usize,
    n: usize,
    k: usize,
    dst: MatMut,
    lhs: MatRef,
    rhs: MatRef,
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                for j in 0..n {
                    // SAFETY: inside the output.
                    unsafe { *dst.0.offset(i as isize * dst.1 + j as isize * dst.2) = 0.0 };
                }
            }
        }
        return;
    }
    // Blocks of about even size (a 2048-step product in blocks of 344 and one of 328 rather
    // than five of 384 and one of 128), each at most the kernel's.
    let kc_max = even_block(k, K::KC, 8);
    let mc_max = even_block(m, K::MC, K::MR);
    let nc_max = even_block(n, K::NC, K::NR);
    let a_len = mc_max * kc_max;
    let b_len = nc_max * kc_max;
    PACK.with(|cell| {
        let mut guard = cell.try_borrow_mut();
        let mut own = Vec::new();
        let buf: &mut Vec<f32> = match guard.as_deref_mut() {
            Ok(v) => v,
            // A GEMM inside a GEMM's task on the same thread: use a buffer of its own.
            Err(_) => &mut own,
        };
        if buf.len() < a_len + b_len + 2 * SLACK {
            buf.resize(a_len + b_len + 2 * SLACK, 0.0);
        }
        let skip = buf.as_ptr().align_offset(64).min(SLACK);
        let (ap, rest) = buf[skip..].split_at_mut(a_len);
        let skip_b = rest.as_ptr().align_offset(64).min(SLACK);
        let bp = &mut rest[skip_b..skip_b + b_len];
        let mut edge = [0.0f32; 16 * 32];
        for j0 in (0..n).step_by(nc_max) {
            let nc = nc_max.min(n - j0);
            for p0 in (0..k).step_by(kc_max) {
                let kc = kc_max.min(k - p0);
                // SAFETY: columns j0.., rows p0.. of B are inside it.
                unsafe { pack_b::<K>(rhs, p0, kc, j0, nc, bp) };
                let first = p0 == 0 && !accumulate;
                for i0 in (0..m).step_by(mc_max) {
                    let mc = mc_max.min(m - i0);
                    // SAFETY: rows i0.., columns p0.. of A are inside it.
                    unsafe { pack_a::<K>(lhs, i0, mc, p0, kc, ap) };
                    for jr in 0..nc.div_ceil(K::NR) {
                        let b = bp[jr * kc * K::NR..].as_ptr();
                        let cols = K::NR.min(nc - jr * K::NR);
                        for ir in 0..mc.div_ceil(K::MR) {
                            let a = ap[ir * kc * K::MR..].as_ptr();
                            let rows = K::MR.min(mc - ir * K::MR);
                            let (r, c) = ((i0 + ir * K::MR) as isize, (j0 + jr * K::NR) as isize);
                            let cp = dst.0.wrapping_offset(r * dst.1 + c * dst.2);
                            if rows == K::MR && cols == K::NR && dst.2 == 1 && dst.1 >= 0 {
                                // SAFETY: a full tile inside the output, unit column stride.
                                unsafe { K::tile(kc, a, b, cp, dst.1 as usize, first) };
                            } else {
                                let e = edge.as_mut_ptr();
                                // SAFETY: the edge buffer holds MR×NR <= 16×32 floats; the
                                // copy touches only the tile's rows × cols inside the output.
                                unsafe {
                                    K::tile(kc, a, b, e, K::NR, true);
                                    for ii in 0..rows {
                                        for jj in 0..cols {
                                            let o = cp
                                                .offset(ii as isize * dst.1 + jj as isize * dst.2);
                                            let v = *e.add(ii * K::NR + jj);
                                            *o = if first { v } else { *o + v };
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    });
}

/// The block size that cuts `len` into as few blocks of at most `max` as it can, all of about
/// the same size: a multiple of `align` (which `max` is), at least 1.
fn even_block(len: usize, max: usize, align: usize) -> usize {
    let blocks = len.div_ceil(max).max(1);
    len.div_ceil(blocks).next_multiple_of(align).clamp(1, max)
}

/// Packs rows `i0..i0+mc`, columns `p0..p0+kc` of A into slivers of `MR` rows: for each step,
/// `MR` consecutive values, rows past the end as zeros.
unsafe fn pack_a<K: Kernel>(
    a: MatRef,
    i0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    out: &mut [f32],
) {
    let mut rows_at = [std::ptr::null::<f32>(); 16];
    for s in 0..mc.div_ceil(K::MR) {
        let sliver = &mut out[s * kc * K::MR..(s + 1) * kc * K::MR];
        let rows = K::MR.min(mc - s * K::MR);
        for (r, at) in rows_at.iter_mut().enumerate().take(rows) {
            *at =
                a.0.wrapping_offset((i0 + s * K::MR + r) as isize * a.1 + p0 as isize * a.2);
        }
        // Six whole rows of unit stride (the AVX2 kernel's slivers of a row-major A): eight
        // steps at a time through a register transpose.
        #[cfg(target_arch = "x86_64")]
        if K::MR == 6 && rows == 6 && a.2 == 1 && std::arch::is_x86_feature_detected!("avx2") {
            let rows6: [*const f32; 6] = std::array::from_fn(|r| rows_at[r]);
            // SAFETY: each row addresses kc consecutive floats of A; the sliver holds kc
            // steps of 6; the processor has AVX2.
            unsafe { x86::pack_a6(&rows6, kc, sliver) };
            continue;
        }
        // Step by step, so that the writes are sequential; each row is read in order, from
        // at most MR cache lines at a time.
        for (p, step) in sliver.chunks_exact_mut(K::MR).enumerate() {
            let off = p as isize * a.2;
            for (v, at) in step[..rows].iter_mut().zip(&rows_at) {
                // SAFETY: element (i0 + s·MR + r, p0 + p) of A.
                *v = unsafe { *at.offset(off) };
            }
            step[rows..].fill(0.0);
        }
    }
}

/// Packs rows `p0..p0+kc`, columns `j0..j0+nc` of B into slivers of `NR` columns: for each
/// step, `NR` consecutive values, columns past the end as zeros.
unsafe fn pack_b<K: Kernel>(
    b: MatRef,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    out: &mut [f32],
) {
    let whole = if b.2 == 1 { nc / K::NR } else { 0 };
    // Whole slivers of a B with unit column stride: eight rows at a time, each row read in
    // order across every sliver (a sliver at a time would read one line from each of kc rows
    // a row stride apart, which the hardware prefetchers do not follow).
    const ROWS: usize = 8;
    for q0 in (0..kc).step_by(ROWS) {
        let rows = ROWS.min(kc - q0);
        for s in 0..whole {
            let sliver = &mut out[(s * kc + q0) * K::NR..(s * kc + q0 + rows) * K::NR];
            for (q, dst) in sliver.chunks_exact_mut(K::NR).enumerate() {
                let row =
                    b.0.wrapping_offset((p0 + q0 + q) as isize * b.1 + (j0 + s * K::NR) as isize);
                for (j, d) in dst.iter_mut().enumerate() {
                    // SAFETY: `NR` consecutive elements of row p0 + q0 + q of B (unit column
                    // stride), inside it.
                    *d = unsafe { row.add(j).read() };
                }
            }
        }
    }
    for s in whole..nc.div_ceil(K::NR) {
        let sliver = &mut out[s * kc * K::NR..(s + 1) * kc * K::NR];
        let cols = K::NR.min(nc - s * K::NR);
        let base =
            b.0.wrapping_offset(p0 as isize * b.1 + (j0 + s * K::NR) as isize * b.2);
        for p in 0..kc {
            let dst = &mut sliver[p * K::NR..(p + 1) * K::NR];
            let row = base.wrapping_offset(p as isize * b.1);
            for (j, d) in dst[..cols].iter_mut().enumerate() {
                // SAFETY: element (p0 + p, j0 + s·NR + j) of B.
                *d = unsafe { *row.offset(j as isize * b.2) };
            }
            dst[cols..].fill(0.0);
        }
    }
}

/// The portable kernel: plain Rust over a 4×16 tile, vectorised by the compiler.
struct Portable;

impl Kernel for Portable {
    const MR: usize = 4;
    const NR: usize = 16;
    const KC: usize = 256;
    const MC: usize = 128;
    const NC: usize = 2048;

    unsafe fn tile(kc: usize, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, first: bool) {
        let mut acc = [[0.0f32; 16]; 4];
        // SAFETY: the packed slivers hold kc steps of 4 and 16 values.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(a, kc * 4),
                std::slice::from_raw_parts(b, kc * 16),
            )
        };
        for (av, bv) in a.chunks_exact(4).zip(b.chunks_exact(16)) {
            for (row, &x) in acc.iter_mut().zip(av) {
                for (o, &y) in row.iter_mut().zip(bv) {
                    *o += x * y;
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                // SAFETY: the tile is inside c.
                unsafe {
                    let o = c.add(i * ldc + j);
                    *o = if first { *v } else { *o + *v };
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Kernel;
    use crate::fast::isa::masks::{ymm_lanes, zmm_lanes};
    use std::arch::x86_64::*;

    /// `acc[j] = Σ_p xs[p]·mat[p][j]` for a matrix laid out along the outputs (column stride
    /// 1): eight rows of the matrix at a time, each vector of sums loaded once from `acc` (a
    /// row that stays in L1) for eight fused multiply-adds, then the rows left one at a time.
    /// Eight streams of the matrix a thread, as OpenBLAS's GEMV kernel reads. On the 2-core
    /// Xeon of 2026-12-06 (`kiln bench`, alternating binaries, min of three medians) a
    /// 1×11008×4096 product (176 MB of matrix) ran 1.14-1.15× faster at AVX-512 and 1.21× at
    /// AVX2 than four rows at a time with separate multiplies and adds (the portable loop),
    /// 1×4096×4096 (64 MB) 1.01-1.04×.
    macro_rules! rows_kernel {
        ($name:ident, $feat:literal, $lanes:literal, $set1:ident, $load:ident, $fmadd:ident,
         $store:ident, $load_n:ident, $store_n:ident) => {
            /// See [`rows_kernel`].
            ///
            /// # Safety
            /// Rows `0..xs.len()` and columns `0..acc.len()` at `mat` lie inside the matrix,
            /// whose column stride is 1; the processor has the function's features.
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name(xs: &[f32], mat: super::MatRef, acc: &mut [f32]) {
                const ROWS: usize = 8;
                let (k, cols) = (xs.len(), acc.len());
                let body = cols - cols % $lanes;
                let sums = acc.as_mut_ptr();
                let row = |p: usize| mat.0.wrapping_offset(p as isize * mat.1);
                acc.fill(0.0);
                let mut p = 0;
                while p + ROWS <= k {
                    let r: [*const f32; ROWS] = std::array::from_fn(|q| row(p + q));
                    let x: [_; ROWS] = std::array::from_fn(|q| $set1(xs[p + q]));
                    for j in (0..body).step_by($lanes) {
                        // SAFETY: columns j..j + lanes < cols of each row and of acc.
                        unsafe {
                            let mut v = $load(sums.add(j));
                            for q in 0..ROWS {
                                v = $fmadd(x[q], $load(r[q].add(j)), v);
                            }
                            $store(sums.add(j), v);
                        }
                    }
                    let rest = cols - body;
                    if rest > 0 {
                        // SAFETY: the rest columns body..cols of each row and of acc.
                        unsafe {
                            let mut v = $load_n(sums.add(body), rest);
                            for q in 0..ROWS {
                                v = $fmadd(x[q], $load_n(r[q].add(body), rest), v);
                            }
                            $store_n(sums.add(body), v, rest);
                        }
                    }
                    p += ROWS;
                }
                for (p, &x) in xs.iter().enumerate().skip(p) {
                    let (r, x) = (row(p), $set1(x));
                    for j in (0..body).step_by($lanes) {
                        // SAFETY: columns j..j + lanes < cols of row p and of acc.
                        unsafe {
                            $store(sums.add(j), $fmadd(x, $load(r.add(j)), $load(sums.add(j))))
                        };
                    }
                    let rest = cols - body;
                    if rest > 0 {
                        // SAFETY: the rest columns body..cols of row p and of acc.
                        unsafe {
                            let v = $fmadd(
                                x,
                                $load_n(r.add(body), rest),
                                $load_n(sums.add(body), rest),
                            );
                            $store_n(sums.add(body), v, rest);
                        }
                    }
                }
            }
        };
    }
    rows_kernel!(
        rows_avx512,
        "avx512f,avx2,fma",
        16,
        _mm512_set1_ps,
        _mm512_loadu_ps,
        _mm512_fmadd_ps,
        _mm512_storeu_ps,
        load_first_zmm,
        store_first_zmm
    );
    rows_kernel!(
        rows_avx2,
        "avx2,fma",
        8,
        _mm256_set1_ps,
        _mm256_loadu_ps,
        _mm256_fmadd_ps,
        _mm256_storeu_ps,
        load_first_ymm,
        store_first_ymm
    );

    /// The first `n` (< 16) floats at `p` in a vector, zeros after them.
    ///
    /// # Safety
    /// `p` addresses `n` floats; the processor has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    unsafe fn load_first_zmm(p: *const f32, n: usize) -> __m512 {
        // SAFETY: the masked lanes are not read.
        unsafe { _mm512_maskz_loadu_ps(zmm_lanes(n), p) }
    }

    /// Stores the first `n` (< 16) lanes of `v` at `p`.
    ///
    /// # Safety
    /// `p` addresses `n` floats; the processor has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    unsafe fn store_first_zmm(p: *mut f32, v: __m512, n: usize) {
        // SAFETY: the masked lanes are not written.
        unsafe { _mm512_mask_storeu_ps(p, zmm_lanes(n), v) }
    }

    /// The first `n` (< 8) floats at `p` in a vector, zeros after them.
    ///
    /// # Safety
    /// `p` addresses `n` floats; the processor has AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn load_first_ymm(p: *const f32, n: usize) -> __m256 {
        // SAFETY: the masked lanes are not read.
        unsafe { _mm256_maskload_ps(p, ymm_lanes(n)) }
    }

    /// Stores the first `n` (< 8) lanes of `v` at `p`.
    ///
    /// # Safety
    /// `p` addresses `n` floats; the processor has AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn store_first_ymm(p: *mut f32, v: __m256, n: usize) {
        // SAFETY: the masked lanes are not written.
        unsafe { _mm256_maskstore_ps(p, ymm_lanes(n), v) }
    }

    /// `acc[j]` = the dot product of `xs` with column `j` at `mat` (row stride 1, so each column
    /// is `xs.len()` consecutive floats): four columns at a time, one zmm of 16 partial sums
    /// each, so that each 16 values of `xs` are loaded once for four columns.
    ///
    /// # Safety
    /// The columns lie inside the matrix; the processor has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn dots_avx512(xs: &[f32], mat: super::MatRef, acc: &mut [f32]) {
        let k = xs.len();
        let (body, x) = (k - k % 16, xs.as_ptr());
        let column = |j: usize| mat.0.wrapping_offset(j as isize * mat.2);
        let tail = |c: *const f32| {
            // SAFETY: values body..k of x and of the column.
            (body..k).fold(0.0f32, |t, p| t + unsafe { *x.add(p) * *c.add(p) })
        };
        let mut j = 0;
        while j + 4 <= acc.len() {
            let c = [column(j), column(j + 1), column(j + 2), column(j + 3)];
            let mut s = [_mm512_setzero_ps(); 4];
            let mut p = 0;
            while p < body {
                // SAFETY: 16 values from p < body of x and of each column.
                unsafe {
                    let xv = _mm512_loadu_ps(x.add(p));
                    for q in 0..4 {
                        s[q] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(c[q].add(p)), s[q]);
                    }
                }
                p += 16;
            }
            for q in 0..4 {
                acc[j + q] = _mm512_reduce_add_ps(s[q]) + tail(c[q]);
            }
            j += 4;
        }
        for (j, a) in acc.iter_mut().enumerate().skip(j) {
            let c = column(j);
            let mut s = _mm512_setzero_ps();
            for p in (0..body).step_by(16) {
                // SAFETY: as above.
                s = unsafe {
                    _mm512_fmadd_ps(_mm512_loadu_ps(x.add(p)), _mm512_loadu_ps(c.add(p)), s)
                };
            }
            *a = _mm512_reduce_add_ps(s) + tail(c);
        }
    }

    /// [`dots_avx512`] with ymm registers of 8 partial sums, for AVX2 and FMA.
    ///
    /// # Safety
    /// The columns lie inside the matrix; the processor has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dots_avx2(xs: &[f32], mat: super::MatRef, acc: &mut [f32]) {
        let k = xs.len();
        let (body, x) = (k - k % 8, xs.as_ptr());
        let column = |j: usize| mat.0.wrapping_offset(j as isize * mat.2);
        let tail = |c: *const f32| {
            // SAFETY: values body..k of x and of the column.
            (body..k).fold(0.0f32, |t, p| t + unsafe { *x.add(p) * *c.add(p) })
        };
        let total = |v: __m256| {
            let h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
            let h = _mm_add_ps(h, _mm_movehl_ps(h, h));
            _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)))
        };
        let mut j = 0;
        while j + 4 <= acc.len() {
            let c = [column(j), column(j + 1), column(j + 2), column(j + 3)];
            let mut s = [_mm256_setzero_ps(); 4];
            let mut p = 0;
            while p < body {
                // SAFETY: 8 values from p < body of x and of each column.
                unsafe {
                    let xv = _mm256_loadu_ps(x.add(p));
                    for q in 0..4 {
                        s[q] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(c[q].add(p)), s[q]);
                    }
                }
                p += 8;
            }
            for q in 0..4 {
                acc[j + q] = total(s[q]) + tail(c[q]);
            }
            j += 4;
        }
        for (j, a) in acc.iter_mut().enumerate().skip(j) {
            let c = column(j);
            let mut s = _mm256_setzero_ps();
            for p in (0..body).step_by(8) {
                // SAFETY: as above.
                s = unsafe {
                    _mm256_fmadd_ps(_mm256_loadu_ps(x.add(p)), _mm256_loadu_ps(c.add(p)), s)
                };
            }
            *a = total(s) + tail(c);
        }
    }

    /// Packs six rows of `kc` consecutive floats into `out` as `kc` steps of six values (the
    /// AVX2 kernel's left sliver): eight steps at a time by an 8 × 8 register transpose (rows
    /// six and seven zero), the last `kc % 8` steps one value at a time.
    ///
    /// # Safety
    /// Each row addresses `kc` floats; `out` holds at least `6 kc`; the processor has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn pack_a6(rows: &[*const f32; 6], kc: usize, out: &mut [f32]) {
        let out = &mut out[..6 * kc];
        let zero = _mm256_setzero_ps();
        let mut p = 0;
        while p + 8 <= kc {
            // SAFETY: steps p..p + 8 <= kc of each row.
            let r = rows.map(|row| unsafe { _mm256_loadu_ps(row.add(p)) });
            // Pairs of rows interleaved, then quads, then the halves swapped: column j of the
            // eight rows lands in c[j].
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let q0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let q1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let q2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let q3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let q4 = _mm256_shuffle_ps::<0x44>(t4, zero);
            let q5 = _mm256_shuffle_ps::<0xEE>(t4, zero);
            let q6 = _mm256_shuffle_ps::<0x44>(t5, zero);
            let q7 = _mm256_shuffle_ps::<0xEE>(t5, zero);
            let c = [
                _mm256_permute2f128_ps::<0x20>(q0, q4),
                _mm256_permute2f128_ps::<0x20>(q1, q5),
                _mm256_permute2f128_ps::<0x20>(q2, q6),
                _mm256_permute2f128_ps::<0x20>(q3, q7),
                _mm256_permute2f128_ps::<0x31>(q0, q4),
                _mm256_permute2f128_ps::<0x31>(q1, q5),
                _mm256_permute2f128_ps::<0x31>(q2, q6),
                _mm256_permute2f128_ps::<0x31>(q3, q7),
            ];
            // Step p + j's six values, stored as eight: the two extra lanes land on the next
            // step's first two values, which the next store writes (or, past step p + 7, the
            // next round's or the tail's); the last round's last store is cut to its six (a
            // masked store, about 12 cycles on Zen 4, so only there).
            let six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
            for (j, v) in c.iter().enumerate() {
                let at = out[(p + j) * 6..].as_mut_ptr();
                // SAFETY: steps p..p + 8 lie inside out; eight floats from step p + j < p + 7,
                // or from step p + 7 when step p + 8 exists, end inside the next step; the
                // last store writes six.
                unsafe {
                    if j < 7 || p + 8 < kc {
                        _mm256_storeu_ps(at, *v);
                    } else {
                        _mm256_maskstore_ps(at, six, *v);
                    }
                }
            }
            p += 8;
        }
        for (q, step) in out.chunks_exact_mut(6).enumerate().skip(p) {
            for (v, row) in step.iter_mut().zip(rows) {
                // SAFETY: step q < kc of the row.
                *v = unsafe { *row.add(q) };
            }
        }
    }

    /// A [`Kernel`] of the packed micro-kernel `$tile` and the blocking given.
    macro_rules! packed_kernel {
        ($(#[$doc:meta])* $name:ident, $tile:ident,
         MR $mr:literal, NR $nr:literal, KC $kc:literal, MC $mc:literal, NC $nc:literal) => {
            $(#[$doc])*
            pub struct $name;

            impl Kernel for $name {
                const MR: usize = $mr;
                const NR: usize = $nr;
                const KC: usize = $kc;
                const MC: usize = $mc;
                const NC: usize = $nc;

                unsafe fn tile(
                    kc: usize,
                    a: *const f32,
                    b: *const f32,
                    c: *mut f32,
                    ldc: usize,
                    first: bool,
                ) {
                    // SAFETY: the caller checked that this processor has the kernel's
                    // instruction set (the one its documentation names).
                    unsafe { $tile(kc, a, b, c, ldc, first, std::ptr::null()) }
                }
            }
        };
    }

    packed_kernel!(
        /// AVX-512 F: an 8×32 tile in 16 zmm accumulators (the driver's kernel for products
        /// of a few dozen rows, see [`super::OWN_ROWS`]).
        Avx512, avx512_tile_8x32,
        MR 8, NR 32, KC 384, MC 96, NC 1024
    );

    // KC 384 and NC 1024 rather than 256 and 2048: 2-3% faster on one core of an AVX-512 Xeon
    // with cpuid capped at AVX2 (1024³ 113 -> 116 GFLOP/s, 2048³ 112 -> 114), within the noise
    // on the Zen 3 EPYC of 2026-12-02.
    packed_kernel!(
        /// AVX2 + FMA: a 6×16 tile in 12 ymm accumulators.
        Avx2, avx2_tile_6x16,
        MR 6, NR 16, KC 384, MC 144, NC 1024
    );

    /// Broadcasts `$rows` left values per step against `$vecs` vectors of `$lanes` lanes of
    /// the right sliver: the body of the AVX-512 and AVX2 micro-kernels.
    macro_rules! packed_tile {
        // The two instruction sets' spellings: 16-lane zmm with AVX-512 F, 8-lane ymm with
        // AVX2 + FMA.
        (avx512: $name:ident, $rows:literal rows, $vecs:literal vectors) => {
            packed_tile!(
                $name,
                "avx512f",
                __m512,
                16,
                $rows,
                $vecs,
                _mm512_setzero_ps,
                _mm512_loadu_ps,
                _mm512_set1_ps,
                _mm512_fmadd_ps,
                _mm512_add_ps,
                _mm512_storeu_ps
            );
        };
        (avx2: $name:ident, $rows:literal rows, $vecs:literal vectors) => {
            packed_tile!(
                $name,
                "avx2,fma",
                __m256,
                8,
                $rows,
                $vecs,
                _mm256_setzero_ps,
                _mm256_loadu_ps,
                _mm256_set1_ps,
                _mm256_fmadd_ps,
                _mm256_add_ps,
                _mm256_storeu_ps
            );
        };
        ($name:ident, $feat:literal, $vec:ty, $lanes:literal, $rows:literal, $vecs:literal,
         $zero:ident, $load:ident, $set1:ident, $fmadd:ident, $add:ident, $store:ident) => {
            /// The packed micro-kernel (see [`super::Packed::tile_fetching`]; a null `fetch`
            /// fetches nothing).
            ///
            /// # Safety
            /// As for [`super::Packed::tile`]; the processor has the function's features.
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name(
                kc: usize,
                a: *const f32,
                b: *const f32,
                c: *mut f32,
                ldc: usize,
                first: bool,
                fetch: *const i8,
            ) {
                // Fetch the tile's rows of c while the loop runs (see avx2_tile_4x24).
                for r in 0..$rows {
                    let row = c.wrapping_add(r * ldc) as *const i8;
                    _mm_prefetch::<_MM_HINT_T0>(row);
                    _mm_prefetch::<_MM_HINT_T0>(row.wrapping_add($vecs * $lanes * 4 - 4));
                }
                let mut acc: [[$vec; $vecs]; $rows] = [[$zero(); $vecs]; $rows];
                // One step: $rows values of a against $vecs·$lanes of b (inlined into each of
                // the two loops below).
                let mut step = |a: *const f32, b: *const f32| {
                    // SAFETY: one packed step of each sliver (the caller's contract).
                    unsafe {
                        let mut bv: [$vec; $vecs] = [$zero(); $vecs];
                        for (h, v) in bv.iter_mut().enumerate() {
                            *v = $load(b.add($lanes * h));
                        }
                        for (r, row) in acc.iter_mut().enumerate() {
                            let x = $set1(*a.add(r));
                            for (o, v) in row.iter_mut().zip(&bv) {
                                *o = $fmadd(x, *v, *o);
                            }
                        }
                    }
                };
                let (a_step, b_step) = ($rows, $vecs * $lanes);
                if fetch.is_null() {
                    // Four steps an iteration: the loop's own instructions (two pointer
                    // adds, the count and its branch) once per 4·$rows·$vecs multiplies.
                    let whole = kc / 4 * 4;
                    for p in (0..whole).step_by(4) {
                        for q in p..p + 4 {
                            step(a.wrapping_add(q * a_step), b.wrapping_add(q * b_step));
                        }
                    }
                    for p in whole..kc {
                        step(a.wrapping_add(p * a_step), b.wrapping_add(p * b_step));
                    }
                } else {
                    for p in 0..kc {
                        // One line of the region per 64 bytes of it ($rows floats a step).
                        let at = p * $rows * 4;
                        if at % 64 < $rows * 4 {
                            _mm_prefetch::<_MM_HINT_T1>(fetch.wrapping_add(at));
                        }
                        step(a.wrapping_add(p * a_step), b.wrapping_add(p * b_step));
                    }
                }
                for (r, row) in acc.iter().enumerate() {
                    for (h, v) in row.iter().enumerate() {
                        // SAFETY: $lanes floats of row r of the tile.
                        unsafe {
                            let o = c.add(r * ldc + $lanes * h);
                            let v = if first { *v } else { $add($load(o), *v) };
                            $store(o, v);
                        }
                    }
                }
            }
        };
    }

    packed_tile!(avx512: avx512_tile_8x32, 8 rows, 2 vectors);
    packed_tile!(avx512: avx512_tile_8x48, 8 rows, 3 vectors);
    packed_tile!(avx2: avx2_tile_6x16, 6 rows, 2 vectors);

    /// The AVX2 4×24 packed micro-kernel (see [`super::Packed::tile`]), in assembly: it needs
    /// all 16 ymm registers (12 accumulators, 3 right vectors, 1 broadcast), and the compiler,
    /// given the same loop in intrinsics, spilled an accumulator to the stack, which put a
    /// store-to-load round trip on the loop's critical path (the kernel ran at less than half
    /// of its speed on a Zen 3 EPYC).
    ///
    /// # Safety
    /// As for [`super::Packed::tile`]; the processor has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2_tile_4x24(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        first: bool,
    ) {
        // SAFETY: the loop reads kc steps of 4 left and 24 right floats, the stores write the
        // tile's 4 rows of 24 floats at row stride ldc; every register it changes is declared.
        unsafe {
            std::arch::asm!(
                // Fetch the tile's rows of c while the loop runs: they are read or written
                // only after it, and a miss there would stall the whole core.
                "lea {r1}, [{c} + 4*{ldc}]",
                "lea {r2}, [{c} + 8*{ldc}]",
                "lea {r3}, [{r2} + 4*{ldc}]",
                "prefetcht0 [{c}]",
                "prefetcht0 [{c} + 92]",
                "prefetcht0 [{r1}]",
                "prefetcht0 [{r1} + 92]",
                "prefetcht0 [{r2}]",
                "prefetcht0 [{r2} + 92]",
                "prefetcht0 [{r3}]",
                "prefetcht0 [{r3} + 92]",
                "vxorps ymm0, ymm0, ymm0",
                "vxorps ymm1, ymm1, ymm1",
                "vxorps ymm2, ymm2, ymm2",
                "vxorps ymm3, ymm3, ymm3",
                "vxorps ymm4, ymm4, ymm4",
                "vxorps ymm5, ymm5, ymm5",
                "vxorps ymm6, ymm6, ymm6",
                "vxorps ymm7, ymm7, ymm7",
                "vxorps ymm8, ymm8, ymm8",
                "vxorps ymm9, ymm9, ymm9",
                "vxorps ymm10, ymm10, ymm10",
                "vxorps ymm11, ymm11, ymm11",
                "test {kc}, {kc}",
                "jz 3f",
                "2:",
                "vmovups ymm12, [{b}]",
                "vmovups ymm13, [{b} + 32]",
                "vmovups ymm14, [{b} + 64]",
                "vbroadcastss ymm15, [{a}]",
                "vfmadd231ps ymm0, ymm15, ymm12",
                "vfmadd231ps ymm1, ymm15, ymm13",
                "vfmadd231ps ymm2, ymm15, ymm14",
                "vbroadcastss ymm15, [{a} + 4]",
                "vfmadd231ps ymm3, ymm15, ymm12",
                "vfmadd231ps ymm4, ymm15, ymm13",
                "vfmadd231ps ymm5, ymm15, ymm14",
                "vbroadcastss ymm15, [{a} + 8]",
                "vfmadd231ps ymm6, ymm15, ymm12",
                "vfmadd231ps ymm7, ymm15, ymm13",
                "vfmadd231ps ymm8, ymm15, ymm14",
                "vbroadcastss ymm15, [{a} + 12]",
                "vfmadd231ps ymm9, ymm15, ymm12",
                "vfmadd231ps ymm10, ymm15, ymm13",
                "vfmadd231ps ymm11, ymm15, ymm14",
                "add {a}, 16",
                "add {b}, 96",
                "dec {kc}",
                "jnz 2b",
                "3:",
                "test {first}, {first}",
                "jnz 4f",
                "vaddps ymm0, ymm0, [{c}]",
                "vaddps ymm1, ymm1, [{c} + 32]",
                "vaddps ymm2, ymm2, [{c} + 64]",
                "vaddps ymm3, ymm3, [{r1}]",
                "vaddps ymm4, ymm4, [{r1} + 32]",
                "vaddps ymm5, ymm5, [{r1} + 64]",
                "vaddps ymm6, ymm6, [{r2}]",
                "vaddps ymm7, ymm7, [{r2} + 32]",
                "vaddps ymm8, ymm8, [{r2} + 64]",
                "vaddps ymm9, ymm9, [{r3}]",
                "vaddps ymm10, ymm10, [{r3} + 32]",
                "vaddps ymm11, ymm11, [{r3} + 64]",
                "4:",
                "vmovups [{c}], ymm0",
                "vmovups [{c} + 32], ymm1",
                "vmovups [{c} + 64], ymm2",
                "vmovups [{r1}], ymm3",
                "vmovups [{r1} + 32], ymm4",
                "vmovups [{r1} + 64], ymm5",
                "vmovups [{r2}], ymm6",
                "vmovups [{r2} + 32], ymm7",
                "vmovups [{r2} + 64], ymm8",
                "vmovups [{r3}], ymm9",
                "vmovups [{r3} + 32], ymm10",
                "vmovups [{r3} + 64], ymm11",
                // Leave the upper halves clean for any SSE code after the call.
                "vzeroupper",
                kc = inout(reg) kc => _,
                a = inout(reg) a => _,
                b = inout(reg) b => _,
                c = in(reg) c,
                ldc = in(reg) ldc,
                first = in(reg_byte) first as u8,
                r1 = out(reg) _,
                r2 = out(reg) _,
                r3 = out(reg) _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                out("ymm12") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
                options(nostack),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        b: &[f32],
        ars: usize,
        acs: usize,
    ) -> Vec<f64> {
        let mut c = vec![0.0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k)
                    .map(|p| a[i * ars + p * acs] as f64 * b[p * n + j] as f64)
                    .sum();
            }
        }
        c
    }

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// The AVX2 packing of six rows (register transpose, overlapping stores, scalar tail)
    /// writes exactly the steps the definition gives, and nothing past them.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn six_row_packing_is_the_plain_transpose() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut seed = 3u64;
        for kc in 0..27 {
            let rows: Vec<Vec<f32>> = (0..6)
                .map(|_| (0..kc).map(|_| lcg(&mut seed)).collect())
                .collect();
            let ptrs: [*const f32; 6] = std::array::from_fn(|r| rows[r].as_ptr());
            let mut out = vec![f32::NAN; 6 * kc + 5];
            // SAFETY: six rows of kc floats; out holds more than 6 kc; AVX2 checked above.
            unsafe { x86::pack_a6(&ptrs, kc, &mut out) };
            for p in 0..kc {
                for r in 0..6 {
                    assert_eq!(out[p * 6 + r], rows[r][p], "kc {kc}, step {p}, row {r}");
                }
            }
            assert!(
                out[6 * kc..].iter().all(|v| v.is_nan()),
                "kc {kc}: wrote past the sliver"
            );
        }
    }

    #[test]
    fn every_available_level_matches_the_f64_product_on_edge_shapes() {
        let mut seed = 7u64;
        for isa in Isa::ALL.into_iter().filter(|i| i.is_available()) {
            for &(m, n, k) in &[
                (1, 1, 1),
                (13, 33, 7),
                (37, 70, 300),
                (300, 5, 513),
                // More columns than one NC block of the AVX2 driver (1024).
                (7, 1030, 20),
                // Few rows, many columns, and the reverse: split by columns (rows) among the
                // threads (the AVX-512 level runs the crate on each part, in runs of 32
                // columns or rows and a rest).
                (37, 1000, 130),
                (1000, 37, 130),
                // A few dozen rows and many columns: kiln's own 8×32 kernel at AVX-512.
                (21, 1100, 45),
                (25, 65, 0),
                // Vector products: several ranges of outputs (4096 a task), several runs of
                // rows (partial rows added at the end), a column, a dot product.
                (1, 9000, 5),
                (1, 300, 700),
                // Eight rows of the matrix at a time and the rows left one by one; columns
                // fewer than a vector, and whole vectors only.
                (1, 7, 19),
                (1, 64, 24),
                (700, 1, 300),
                (1, 1, 77),
            ] {
                for (transposed_a, transposed_b) in [(false, false), (true, false), (false, true)] {
                    let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
                    let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
                    let (ars, acs) = if transposed_a { (1, m) } else { (k, 1) };
                    // A transposed B is stored column by column (b[j·k + p]).
                    let (brs, bcs) = if transposed_b { (1, k) } else { (n, 1) };
                    let b_rows: Vec<f32> = (0..k * n)
                        .map(|i| b[(i / n) * brs + (i % n) * bcs])
                        .collect();
                    let want = reference(m, n, k, &a, &b_rows, ars, acs);
                    for (accumulate, threads) in [(false, 1), (false, 2), (true, 2)] {
                        let mut c = vec![f32::NAN; m * n];
                        if accumulate {
                            c.fill(0.5);
                        }
                        // SAFETY: the buffers match the sizes and strides.
                        unsafe {
                            sgemm(
                                isa,
                                m,
                                n,
                                k,
                                (c.as_mut_ptr(), n as isize, 1),
                                (a.as_ptr(), ars as isize, acs as isize),
                                (b.as_ptr(), brs as isize, bcs as isize),
                                accumulate,
                                threads,
                            )
                        };
                        let base = if accumulate { 0.5 } else { 0.0 };
                        for (i, (g, w)) in c.iter().zip(&want).enumerate() {
                            let tol = 1e-5 * (k as f64 + 1.0);
                            assert!(
                                (*g as f64 - (w + base)).abs() <= tol,
                                "{isa} {m}x{n}x{k} ta={transposed_a} tb={transposed_b} acc={accumulate}: [{i}] {g} vs {}",
                                w + base
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_packed_kernel_multiplies_its_slivers() {
        let mut seed = 11u64;
        let mut wide = 0;
        for isa in Isa::ALL.into_iter().filter(|i| i.is_available()) {
            // SAFETY: the level is available.
            let narrow = unsafe { Packed::for_isa(isa) };
            assert_eq!(narrow.dims(), Packed::dims_of(isa), "{isa}");
            // SAFETY: as above.
            let wider = unsafe { Packed::wide_for_isa(isa) };
            assert_eq!(wider.map(|k| k.dims()), Packed::wide_dims_of(isa), "{isa}");
            wide += usize::from(wider.is_some());
            for (kern, kc) in std::iter::once(narrow)
                .chain(wider)
                .flat_map(|k| [1, 7, 64, 129].map(|kc| (k, kc)))
            {
                let a: Vec<f32> = (0..kc * kern.mr).map(|_| lcg(&mut seed)).collect();
                let b: Vec<f32> = (0..kc * kern.nr).map(|_| lcg(&mut seed)).collect();
                let ldc = kern.nr + 5;
                for first in [true, false] {
                    let mut c = vec![0.25f32; kern.mr * ldc];
                    // SAFETY: the slivers hold kc steps, c the whole tile at row stride ldc.
                    unsafe { kern.tile(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc, first) };
                    // The fetching form computes the same bits (it runs its own loop).
                    let mut fetched = vec![0.25f32; kern.mr * ldc];
                    // SAFETY: as above; the fetched region is a's own.
                    unsafe {
                        kern.tile_fetching(
                            kc,
                            a.as_ptr(),
                            b.as_ptr(),
                            fetched.as_mut_ptr(),
                            ldc,
                            first,
                            a.as_ptr(),
                        )
                    };
                    assert!(
                        c.iter()
                            .zip(&fetched)
                            .all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{isa} kc={kc} first={first}: the fetching tile differs"
                    );
                    for i in 0..kern.mr {
                        for j in 0..ldc {
                            let got = c[i * ldc + j] as f64;
                            if j >= kern.nr {
                                assert_eq!(got, 0.25, "{isa}: ({i},{j}) outside the tile written");
                                continue;
                            }
                            let dot: f64 = (0..kc)
                                .map(|p| a[p * kern.mr + i] as f64 * b[p * kern.nr + j] as f64)
                                .sum();
                            let want = dot + if first { 0.0 } else { 0.25 };
                            assert!(
                                (got - want).abs() <= 1e-5 * (kc as f64 + 1.0),
                                "{isa} kc={kc} first={first}: ({i},{j}) {got} vs {want}"
                            );
                        }
                    }
                }
            }
        }
        // The AVX-512 levels have a wide kernel; on a processor with AVX-512 F it was tested.
        if Isa::Avx512.is_available() {
            assert!(wide >= 1, "no wide kernel was tested");
        }
    }

    #[test]
    fn a_vector_product_writes_only_its_strided_outputs() {
        let (len, k) = (37, 600);
        let mut seed = 5u64;
        let x: Vec<f32> = (0..k).map(|_| lcg(&mut seed)).collect();
        let mat: Vec<f32> = (0..k * len).map(|_| lcg(&mut seed)).collect();
        // mat as k×len row-major; the product of the row x with it.
        let want = reference(1, len, k, &x, &mat, k, 1);
        for isa in Isa::ALL.into_iter().filter(|i| i.is_available()) {
            for (m, n) in [(1, len), (len, 1)] {
                // Outputs 3 apart, the gaps poisoned.
                let mut c = vec![-7.0f32; 3 * len];
                let out = if m == 1 {
                    (c.as_mut_ptr(), 0, 3)
                } else {
                    (c.as_mut_ptr(), 3, 0)
                };
                // A row times the matrix, or the matrix's transpose times a column.
                let (lhs, rhs) = if m == 1 {
                    ((x.as_ptr(), 0, 1), (mat.as_ptr(), len as isize, 1))
                } else {
                    ((mat.as_ptr(), 1, len as isize), (x.as_ptr(), 1, 0))
                };
                // SAFETY: the strides address x, mat and every third value of c.
                unsafe { sgemm(isa, m, n, k, out, lhs, rhs, false, 2) };
                for (i, &g) in c.iter().enumerate() {
                    if i % 3 == 0 {
                        let w = want[i / 3];
                        assert!(
                            (g as f64 - w).abs() <= 1e-4,
                            "{isa} {m}x{n}: [{i}] {g} vs {w}"
                        );
                    } else {
                        assert_eq!(g, -7.0, "{isa} {m}x{n}: gap [{i}] written");
                    }
                }
            }
        }
    }

    #[test]
    fn a_strided_output_gets_only_its_own_elements() {
        let (m, n, k) = (20, 40, 9);
        let mut seed = 3u64;
        let a: Vec<f32> = (0..m * k).map(|_| lcg(&mut seed)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| lcg(&mut seed)).collect();
        let want = reference(m, n, k, &a, &b, k, 1);
        for isa in Isa::ALL.into_iter().filter(|i| i.is_available()) {
            // Column-major output inside a wider buffer: the gaps must stay untouched.
            let ld = m + 3;
            let mut c = vec![-7.0f32; ld * n];
            // SAFETY: column stride ld, row stride 1, all inside c.
            unsafe {
                sgemm(
                    isa,
                    m,
                    n,
                    k,
                    (c.as_mut_ptr(), 1, ld as isize),
                    (a.as_ptr(), k as isize, 1),
                    (b.as_ptr(), n as isize, 1),
                    false,
                    2,
                )
            };
            for j in 0..n {
                for i in 0..ld {
                    let g = c[j * ld + i];
                    if i < m {
                        assert!((g as f64 - want[i * n + j]).abs() < 1e-4, "{isa} ({i},{j})");
                    } else {
                        assert_eq!(g, -7.0, "{isa}: gap ({i},{j}) written");
                    }
                }
            }
        }
    }
}
