//! The CPU engines' own fork-join: the calling thread works in every parallel region, and the
//! helper threads look for the next region for a short while before they sleep.
//!
//! Why not rayon's pool: called from outside it, each rayon fork-join puts the calling thread to
//! sleep until the pool's job ends, and rayon's workers sleep soon after a job. On a 2-vCPU
//! guest each of those waits cost 12-33 µs at the median and up to 80 µs at p90 (session 31,
//! `docs/benchmarks.md`), which is most of a 1×1000×1000 matrix-vector product (40 µs when
//! both threads start at once) and of a layernorm over 64 rows. OpenBLAS's and ONNX Runtime's
//! pools work the same way as this one: the caller takes part, the helpers spin first.
//!
//! A region ([`run`]) runs a body once on each participant (the caller and the helpers that
//! arrive while it is open); the body claims numbered items from a shared counter
//! ([`for_each`], [`for_each_init`], [`map_init`], [`for_each_chunk_mut`]), so a helper that
//! arrives late only gets fewer items, and what an item computes never depends on which thread
//! runs it or on how many do. Sums over items ([`fold`]) are kept per fixed group of items and
//! added in order, for the same reason.
//!
//! - One region at a time: a region opened while another is running (another thread's
//!   execute) or from inside a region runs its body on the calling thread alone.
//! - How many threads: at most rayon's thread count where the region opens (so
//!   `RAYON_NUM_THREADS` and an installed rayon pool still set it) and at most the processor
//!   count; the helpers are started on the first region that can use them.
//! - A panic in a body, on any participant, is carried to the caller after every participant
//!   has left the region (the body borrows the caller's stack).

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a helper keeps looking for the next region after one ends, before it sleeps: long
/// enough to cover the gap between the parallel regions of one execute and between executes
/// called back to back, short enough not to hold a core long after kiln's work stops.
const SPIN: Duration = Duration::from_micros(200);
/// Most helper threads, whatever the processor count.
const MAX_HELPERS: usize = 63;

/// One open region: the body every participant runs (with its seat: 0 the caller, helper `i`
/// seat `i + 1`), how many seats it has, and its generation.
struct Region<'a> {
    body: &'a (dyn Fn(usize) + Sync),
    seats: usize,
    generation: u64,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

struct Pool {
    /// The helper threads, to wake; set once they are started.
    helpers: OnceLock<Vec<Thread>>,
    /// Set while a region is open (one at a time).
    busy: AtomicBool,
    /// Counts regions opened; helpers wait for it to change.
    generation: AtomicU64,
    /// The open region, or null. Its lifetime is erased: [`run`] clears it and waits for
    /// `active` to reach 0 before the region goes out of scope.
    open: AtomicPtr<Region<'static>>,
    /// Helpers that may be reading `open`'s region.
    active: AtomicUsize,
    /// Helpers asleep (or about to be), to be woken by the next region.
    sleepers: AtomicUsize,
}

thread_local! {
    /// Whether this thread is running a region's body: a region it opens runs alone.
    static IN_REGION: Cell<bool> = const { Cell::new(false) };
}

static POOL: OnceLock<Option<&'static Pool>> = OnceLock::new();

/// The processor count, at least 1, read once (std reads the cgroup's files each time).
fn processors() -> usize {
    static PROCESSORS: OnceLock<usize> = OnceLock::new();
    *PROCESSORS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How many threads a region opened here would use: rayon's thread count in this context,
/// at most the processor count, at least 1.
pub(crate) fn threads() -> usize {
    rayon::current_num_threads().min(processors()).max(1)
}

/// The pool, started on first use with one helper fewer than the processors (or than
/// `RAYON_NUM_THREADS`, rayon's own setting, where it is set); `None` when there is no helper
/// to start or none could be started.
fn pool() -> Option<&'static Pool> {
    *POOL.get_or_init(|| {
        // Not rayon's count here: the first region may open inside a smaller installed pool.
        let cap = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(usize::MAX);
        let helpers = processors().min(cap).saturating_sub(1).min(MAX_HELPERS);
        if helpers == 0 {
            return None;
        }
        // Leaked: the helpers live as long as the process and refer to it.
        let shared: &'static Pool = Box::leak(Box::new(Pool {
            helpers: OnceLock::new(),
            busy: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            open: AtomicPtr::new(std::ptr::null_mut()),
            active: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
        }));
        let mut started = Vec::with_capacity(helpers);
        for i in 0..helpers {
            let spawned = std::thread::Builder::new()
                .name(format!("kiln-cpu-{}", i + 1))
                .spawn(move || helper(shared, i + 1));
            match spawned {
                Ok(handle) => started.push(handle.thread().clone()),
                Err(_) => break,
            }
        }
        if started.is_empty() {
            return None;
        }
        shared.helpers.get_or_init(|| started);
        Some(shared)
    })
}

/// A helper's life: wait for a region, take a seat if one is left, run the body, repeat.
fn helper(pool: &'static Pool, seat: usize) {
    let mut seen = 0u64;
    loop {
        seen = wait_for_region(pool, seen);
        pool.active.fetch_add(1, Ordering::SeqCst);
        let open = pool.open.load(Ordering::SeqCst);
        if !open.is_null() {
            // SAFETY: `run` clears `open` and then waits for `active` to reach 0 before the
            // region leaves scope; this helper counted itself active before it read `open`.
            let region = unsafe { &*open };
            // The region read may be later than the one waited for: it is not run twice.
            seen = seen.max(region.generation);
            if seat < region.seats {
                IN_REGION.with(|f| f.set(true));
                let outcome = catch_unwind(AssertUnwindSafe(|| (region.body)(seat)));
                IN_REGION.with(|f| f.set(false));
                if let Err(payload) = outcome {
                    let mut slot = region.panic.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(payload);
                }
            }
        }
        pool.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits until a region later than `seen` opens (spinning for [`SPIN`], then asleep) and
/// returns its generation.
fn wait_for_region(pool: &Pool, seen: u64) -> u64 {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        let now = pool.generation.load(Ordering::SeqCst);
        if now != seen {
            return now;
        }
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(128) && start.elapsed() >= SPIN {
            break;
        }
    }
    loop {
        pool.sleepers.fetch_add(1, Ordering::SeqCst);
        // A region opened after this count is seen by `run`, which wakes this thread; one
        // opened before it is seen here.
        let now = pool.generation.load(Ordering::SeqCst);
        if now == seen {
            std::thread::park();
        }
        pool.sleepers.fetch_sub(1, Ordering::SeqCst);
        let now = pool.generation.load(Ordering::SeqCst);
        if now != seen {
            return now;
        }
    }
}

/// How many seats a region opened here has: [`threads`], at most the pool's helpers + 1 (1
/// where it has none). Items are shared out by seat; a seat whose thread does not come (its
/// helper is busy elsewhere, or the region runs alone) has its items taken by the others.
fn seats() -> usize {
    let threads = threads();
    if threads <= 1 || IN_REGION.with(|f| f.get()) {
        return 1;
    }
    pool().map_or(1, |p| threads.min(p.helpers.get().map_or(0, Vec::len) + 1))
}

/// Runs `body(seat)` on the calling thread (seat 0) and on each helper whose seat (helper `i`
/// has seat `i + 1`) is below `seats` and that joins before the region ends; returns when every
/// run has returned. Where the pool is busy (another thread's region) or this thread is in a
/// region already, runs `body(0)` alone. A panic in any run is resumed here, after all of
/// them have returned.
fn run(seats: usize, body: &(dyn Fn(usize) + Sync)) {
    let pool = if seats > 1 && !IN_REGION.with(|f| f.get()) {
        pool()
    } else {
        None
    };
    let Some(pool) = pool.filter(|p| !p.busy.swap(true, Ordering::Acquire)) else {
        body(0);
        return;
    };
    // Only this thread changes the generation while it holds `busy`.
    let generation = pool.generation.load(Ordering::SeqCst) + 1;
    let region = Region {
        body,
        seats,
        generation,
        panic: Mutex::new(None),
    };
    let erased = (&region as *const Region<'_>).cast::<Region<'static>>() as *mut _;
    pool.open.store(erased, Ordering::SeqCst);
    pool.generation.store(generation, Ordering::SeqCst);
    if pool.sleepers.load(Ordering::SeqCst) > 0 {
        for h in pool.helpers.get().into_iter().flatten() {
            h.unpark();
        }
    }
    IN_REGION.with(|f| f.set(true));
    let mine = catch_unwind(AssertUnwindSafe(|| body(0)));
    IN_REGION.with(|f| f.set(false));
    pool.open.store(std::ptr::null_mut(), Ordering::SeqCst);
    let mut spins = 0u32;
    while pool.active.load(Ordering::SeqCst) != 0 {
        spins = spins.saturating_add(1);
        if spins < 1 << 12 {
            std::hint::spin_loop();
        } else {
            // A helper in the region may have lost its core.
            std::thread::yield_now();
        }
    }
    pool.busy.store(false, Ordering::Release);
    if let Err(payload) = mine {
        resume_unwind(payload);
    }
    let theirs = region.panic.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(payload) = theirs {
        resume_unwind(payload);
    }
}

/// Runs `f(i)` for every `i` in `0..n`, on the calling thread and the pool's helpers, each
/// index once; returns when all have returned.
pub(crate) fn for_each(n: usize, f: impl Fn(usize) + Sync) {
    for_each_init(n, 1, || (), |_, i| f(i));
}

/// As [`for_each`], with a value `init()` made by each thread before its first item and
/// passed to each of its items (scratch buffers). A thread claims at least `min_len` items at
/// a time (at least 1), so that work of fewer than `2 × min_len` items runs on the calling
/// thread alone.
///
/// The items are cut into one run of consecutive indices per seat: each thread takes its own
/// run's items in order, then those left in the other runs. A thread so gets the same items
/// in each call where it can, and none waits for a late one. Claims are of a 64th of a
/// seat's run at most, so that the threads end together.
pub(crate) fn for_each_init<S>(
    n: usize,
    min_len: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) + Sync,
) {
    let min_len = min_len.max(1);
    let seats = seats().min(n / min_len);
    if seats <= 1 {
        if n > 0 {
            let mut state = init();
            (0..n).for_each(|i| f(&mut state, i));
        }
        return;
    }
    let grain = (n / (64 * seats)).max(min_len);
    // Seat s's run is starts[s]..starts[s + 1]; next[s] its next unclaimed index.
    let starts: Vec<usize> = (0..=seats).map(|s| n * s / seats).collect();
    let next: Vec<AtomicUsize> = starts[..seats]
        .iter()
        .map(|&i| AtomicUsize::new(i))
        .collect();
    run(seats, &|seat| {
        let mut state = None;
        for s in (seat..seats).chain(0..seat) {
            loop {
                let i = next[s].fetch_add(grain, Ordering::Relaxed);
                if i >= starts[s + 1] {
                    break;
                }
                let state = state.get_or_insert_with(&init);
                (i..(i + grain).min(starts[s + 1])).for_each(|i| f(state, i));
            }
        }
    });
}

/// Runs `f(scratch, state, i)` for every `i` in `0..n`, the indices cut into `groups` runs of
/// consecutive indices (at least 1, at most `n`), each run in order on one thread and with a
/// state of its own made by `init()`; returns the runs' states in order. What each state sees
/// depends only on `n` and `groups`, never on the threads, so sums that the caller adds up
/// from them in order come out the same at every execute. `scratch()` is made once per thread
/// (buffers whose contents do not carry from one item to the next).
pub(crate) fn fold<T, S: Send>(
    n: usize,
    groups: usize,
    scratch: impl Fn() -> T + Sync,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut T, &mut S, usize) + Sync,
) -> Vec<S> {
    if n == 0 {
        return Vec::new();
    }
    let groups = groups.clamp(1, n);
    map_init(groups, 1, scratch, |scratch, g| {
        let mut state = init();
        (n * g / groups..n * (g + 1) / groups).for_each(|i| f(scratch, &mut state, i));
        state
    })
}

/// `f(i)` for every `i` in `0..n`, in order, computed as [`for_each_init`] computes them.
pub(crate) fn map_init<S, T: Send>(
    n: usize,
    min_len: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    let mut out: Vec<std::mem::MaybeUninit<T>> = Vec::with_capacity(n);
    out.resize_with(n, std::mem::MaybeUninit::uninit);
    let slots = SyncSlots(out.as_mut_ptr());
    for_each_init(n, min_len, init, |state, i| {
        let value = f(state, i);
        // SAFETY: i < n, inside `out`; each index is run once, so no other thread writes
        // or reads slot i.
        unsafe { (*slots.at(i)).write(value) };
    });
    // Every slot was written (for_each_init returns only when every index has run; a panic
    // would have left through it, leaking the written values with `out`).
    let mut out = std::mem::ManuallyDrop::new(out);
    let (ptr, len, cap) = (out.as_mut_ptr(), out.len(), out.capacity());
    // SAFETY: MaybeUninit<T> has T's layout, and all len values are initialised.
    unsafe { Vec::from_raw_parts(ptr.cast::<T>(), len, cap) }
}

/// Runs `f(i, chunk)` for each `chunk` of `len` items of `data` (the last may be shorter),
/// as [`for_each`] runs its items.
pub(crate) fn for_each_chunk_mut<T: Send>(
    data: &mut [T],
    len: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let len = len.max(1);
    let total = data.len();
    let base = SyncSlots(data.as_mut_ptr());
    for_each(total.div_ceil(len), |i| {
        let start = i * len;
        let end = (start + len).min(total);
        // SAFETY: start..end lies inside `data`, which this call borrows mutably; each index,
        // and so each chunk, is run once, so no other thread touches these items meanwhile.
        let chunk = unsafe { std::slice::from_raw_parts_mut(base.at(start), end - start) };
        f(i, chunk)
    });
}

/// A pointer to items that the threads of a region each write at indices of their own.
struct SyncSlots<T>(*mut T);

// SAFETY: the items are sent or written across threads only where `T: Send`, each at an index
// that one thread alone touches (see the uses above).
unsafe impl<T: Send> Sync for SyncSlots<T> {}

impl<T> SyncSlots<T> {
    /// The pointer to item `i` (a method, so that closures capture the whole wrapper).
    fn at(&self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_index_runs_once() {
        for n in [0, 1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
            for _ in 0..50 {
                for_each(n, |i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
            }
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 50),
                "n = {n}"
            );
        }
    }

    #[test]
    fn regions_from_many_threads_and_nested_regions_all_finish() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        for_each(8, |_| {
                            for_each(3, |_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            });
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 200 * 8 * 3);
    }

    #[test]
    fn each_thread_makes_its_state_once_at_most() {
        let made = AtomicUsize::new(0);
        let sum = AtomicUsize::new(0);
        for_each_init(
            100,
            1,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                0usize
            },
            |count, i| {
                *count += 1;
                sum.fetch_add(i, Ordering::Relaxed);
            },
        );
        assert_eq!(sum.load(Ordering::Relaxed), 4950);
        let made = made.load(Ordering::Relaxed);
        assert!(
            (1..=seats()).contains(&made),
            "{made} states for {} seats",
            seats()
        );
    }

    #[test]
    fn map_keeps_order_and_chunks_cover_the_data_once() {
        for n in [0, 1, 5, 64, 1001] {
            let squares = map_init(n, 3, || (), |_, i| i * i);
            assert_eq!(squares, (0..n).map(|i| i * i).collect::<Vec<_>>());
            let mut data = vec![0usize; n];
            for_each_chunk_mut(&mut data, 7, |c, chunk| {
                for (j, v) in chunk.iter_mut().enumerate() {
                    *v += c * 7 + j;
                }
            });
            assert_eq!(data, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn fold_groups_do_not_depend_on_the_threads() {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let seen = |i: usize| (i as f32).sqrt() * 1e-3 + 1e4;
        let sums = || {
            fold(100_003, 13, || (), || 0f32, |_, acc, i| *acc += seen(i))
                .into_iter()
                .fold(0f32, |a, b| a + b)
        };
        let alone = one.install(sums);
        for _ in 0..20 {
            assert_eq!(sums().to_bits(), alone.to_bits());
        }
        let groups = fold(10, 4, || (), Vec::new, |_, v, i| v.push(i));
        assert_eq!(
            groups,
            [vec![0, 1], vec![2, 3, 4], vec![5, 6], vec![7, 8, 9]]
        );
        assert!(fold(0, 4, || (), || 0, |_, _, _| ()).is_empty());
        assert_eq!(fold(3, 9, || (), || 0, |_, c, _| *c += 1), [1, 1, 1]);
    }

    #[test]
    fn a_panic_in_a_body_reaches_the_caller_and_the_pool_still_works() {
        for _ in 0..20 {
            let caught = catch_unwind(|| {
                for_each(64, |i| {
                    if i == 37 {
                        panic!("item 37");
                    }
                })
            });
            let payload = caught.expect_err("the panic must reach the caller");
            assert_eq!(payload.downcast_ref::<&str>(), Some(&"item 37"));
        }
        let hits = AtomicUsize::new(0);
        for_each(64, |_| {
            hits.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(hits.load(Ordering::Relaxed), 64);
    }
}
