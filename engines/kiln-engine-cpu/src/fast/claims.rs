//! Work shared out inside one parallel region: the workers of a region claim numbered jobs in
//! turn, so that a worker that wakes late costs only the jobs it does not get to.

use super::pool;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `count` jobs that the workers of one parallel region claim in turn, and a count of those
/// done, so that a worker can wait for every job before it goes on to work that reads their
/// results (one fork-join where two would be needed otherwise).
pub(crate) struct Claims {
    count: usize,
    next: AtomicUsize,
    done: AtomicUsize,
}

impl Claims {
    pub fn new(count: usize) -> Self {
        Claims {
            count,
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
        }
    }

    /// The next unclaimed job, or `None` when every job is claimed.
    #[inline]
    pub fn claim(&self) -> Option<usize> {
        let job = self.next.fetch_add(1, Ordering::Relaxed);
        (job < self.count).then_some(job)
    }

    /// Runs `job` on claimed jobs until none is left, then waits until every job, the other
    /// workers' included, is done; what the jobs wrote is then visible to the caller.
    ///
    /// This cannot wait forever as long as `job` itself never waits on other workers: a job is
    /// only claimed by a running worker, which finishes it.
    pub fn run_all_then_wait(&self, mut job: impl FnMut(usize)) {
        while let Some(j) = self.claim() {
            job(j);
            self.done.fetch_add(1, Ordering::Release);
        }
        let mut spins = 0u32;
        while self.done.load(Ordering::Acquire) < self.count {
            spins = spins.saturating_add(1);
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                // The worker that holds the last claim may have lost its core.
                std::thread::yield_now();
            }
        }
    }
}

/// Runs `work(i, slot)` for each slot of `per_slot` items of `bufs` (the last may be
/// shorter), on the calling thread and the pool's helpers ([`pool::for_each_chunk_mut`]): the
/// caller starts on the first slot at once and does not wait for a helper to start (with
/// work claimed in turn, [`Claims`], a helper that comes late only gets less of it). Returns
/// when every slot's work has returned.
pub(crate) fn run_slots<T: Send>(
    bufs: &mut [T],
    per_slot: usize,
    work: impl Fn(usize, &mut [T]) + Sync,
) {
    pool::for_each_chunk_mut(bufs, per_slot, work);
}

#[cfg(test)]
mod tests {
    use super::{pool, run_slots, Claims};
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn every_job_runs_once_and_is_seen_done_by_every_worker() {
        let flags: Vec<AtomicU32> = (0..1000).map(|_| AtomicU32::new(0)).collect();
        let jobs = Claims::new(flags.len());
        let seen: Vec<u32> = pool::map_init(
            8,
            1,
            || (),
            |_, _| {
                jobs.run_all_then_wait(|j| {
                    flags[j].fetch_add(1, Ordering::Relaxed);
                });
                flags.iter().map(|f| f.load(Ordering::Relaxed)).sum()
            },
        );
        assert!(flags.iter().all(|f| f.load(Ordering::Relaxed) == 1));
        assert!(seen.iter().all(|&s| s == 1000), "{seen:?}");
        assert_eq!(jobs.claim(), None);
    }

    #[test]
    fn run_slots_runs_each_slot_once_with_its_index() {
        let mut bufs = vec![0u32; 10];
        run_slots(&mut bufs, 3, |i, slot| {
            slot.iter_mut().for_each(|v| *v += i as u32 + 1)
        });
        assert_eq!(bufs, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]);
        let mut none: [u32; 0] = [];
        run_slots(&mut none, 3, |_, _| panic!("no slot to run"));
    }
}
