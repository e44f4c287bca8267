//! The one queue every hash job of a run is taken from (docs/adr/0039):
//! a model's tensors, a BOM's whole files, an OpenSSF model signature's
//! files and shards. Each set of jobs is sorted largest first once; the
//! queue merges the sets, so a thread that asks for work gets the largest
//! job not yet taken of every set queued, whichever model it belongs to.
//! It holds one entry per set, not one per job: a model of a million
//! tensors costs the queue one slot.

use std::collections::BinaryHeap;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{Error, Result};
use crate::format::Labelled;
use crate::hash::{Job, PieceSizes, ProgressCallback, Sha256Digest, hash_job};

/// A set of hashing jobs the scheduler runs, numbered from 0: a model's
/// ([`ModelJobs`]), or jobs built by the caller ([`JobList`]).
pub trait HashJobs: Sync {
    /// How many jobs the set holds.
    fn jobs_len(&self) -> usize;
    /// Job `i`, `0 <= i < jobs_len()`.
    fn job_at(&self, i: usize) -> Option<Job<'_>>;
}

impl<T: HashJobs + ?Sized> HashJobs for &T {
    fn jobs_len(&self) -> usize {
        (**self).jobs_len()
    }
    fn job_at(&self, i: usize) -> Option<Job<'_>> {
        (**self).job_at(i)
    }
}

/// Every job of a model, in its tensor order.
pub struct ModelJobs<'a>(pub &'a dyn Labelled);

impl HashJobs for ModelJobs<'_> {
    fn jobs_len(&self) -> usize {
        self.0.job_count()
    }
    fn job_at(&self, i: usize) -> Option<Job<'_>> {
        self.0.job(i)
    }
}

/// Jobs the caller built: a file hashed whole, a piece of one.
#[derive(Debug, Clone, Default)]
pub struct JobList<'a>(pub Vec<Job<'a>>);

impl HashJobs for JobList<'_> {
    fn jobs_len(&self) -> usize {
        self.0.len()
    }
    fn job_at(&self, i: usize) -> Option<Job<'_>> {
        self.0.get(i).cloned()
    }
}

/// Every job of `set` as (length, index), largest first, ties in job
/// order: the order that keeps every core busy to the end when one job
/// dominates. When every job's source asks for file order
/// ([`crate::source::Source::wants_file_order`]: an OCI blob, whose digest
/// is hashed in order from the label's own pieces, docs/adr/0046), its jobs
/// go by file (in the order the set first names them) and offset instead.
pub(crate) fn largest_first(set: &dyn HashJobs) -> Vec<(u64, usize)> {
    let n = set.jobs_len();
    // (length, index, file rank, offset); the rank only when file order is kept.
    let mut files: Vec<*const crate::source::Source> = Vec::new();
    let mut in_file_order = n > 0;
    let mut jobs: Vec<(u64, usize, usize, u64)> = Vec::with_capacity(n);
    for i in 0..n {
        let Some(job) = set.job_at(i) else {
            jobs.push((0, i, 0, 0));
            in_file_order = false;
            continue;
        };
        let mut rank = 0;
        if in_file_order && job.source.wants_file_order() {
            let at: *const crate::source::Source = job.source;
            // A model's jobs come file by file: the last file seen is found first.
            rank = files.iter().rposition(|&f| std::ptr::eq(f, at)).unwrap_or_else(|| {
                files.push(at);
                files.len().saturating_sub(1)
            });
        } else {
            in_file_order = false;
        }
        jobs.push((job.len, i, rank, job.start));
    }
    if in_file_order {
        jobs.sort_unstable_by_key(|&(_, i, rank, start)| (rank, start, i));
    } else {
        jobs.sort_unstable_by_key(|&(len, i, _, _)| (std::cmp::Reverse(len), i));
    }
    jobs.into_iter().map(|(len, i, _, _)| (len, i)).collect()
}

/// Runs one job's work, a panic (a bug: none is known) turned into an
/// error. Without it a panic would abort the process from the pool (rayon's
/// default), taking a Python interpreter that called the library with it,
/// and the scheduler would wait forever for the job's result.
pub(crate) fn contained<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(Error::internal("a hashing job panicked")))
}

/// One set in flight: its jobs in hashing order, and the digests they fill
/// in.
pub(crate) struct Work<W> {
    /// Its place among the sets of the run (argument order): ties between
    /// sets go to the earlier one.
    pub(crate) index: usize,
    pub(crate) set: W,
    /// (length, job index), largest first; empty when the set is read front
    /// to back (which fills every slot at once).
    order: Vec<(u64, usize)>,
    digests: Mutex<Digests>,
    /// Jobs not yet done: the one that does the last reports the set.
    remaining: AtomicUsize,
    /// Set by the first failing job, so the others are skipped.
    failed: AtomicBool,
}

/// What a set's jobs have produced so far.
#[derive(Default)]
pub(crate) struct Digests {
    /// Job `i`'s digest at `i` (all of them, once every job succeeded).
    pub(crate) data: Vec<Sha256Digest>,
    /// Jobs that filled their slot.
    pub(crate) filled: usize,
    /// Jobs that failed, with their job index.
    pub(crate) errors: Vec<(usize, Error)>,
}

impl<W: HashJobs> Work<W> {
    /// A set with every job still to do: in `order`, or, when it is empty,
    /// by one task that fills every slot (front to back).
    pub(crate) fn new(index: usize, set: W, order: Vec<(u64, usize)>) -> Work<W> {
        let n = set.jobs_len();
        // Slots only for the jobs run one by one.
        let data = if order.is_empty() { Vec::new() } else { vec![[0u8; 32]; n] };
        Work {
            index,
            digests: Mutex::new(Digests { data, ..Digests::default() }),
            order,
            remaining: AtomicUsize::new(n),
            failed: AtomicBool::new(false),
            set,
        }
    }

    /// How many jobs are taken from the queue one by one.
    pub(crate) fn queued(&self) -> usize {
        self.order.len()
    }

    pub(crate) fn lock_digests(&self) -> MutexGuard<'_, Digests> {
        // A panic is caught before it could poison the lock (`contained`).
        self.digests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hashes job `t` (skipped once a job of the set failed: its result is
    /// lost anyway) and records its digest; true when it was the set's last.
    fn run(&self, t: usize, pieces: &PieceSizes, progress: &ProgressCallback<'_>) -> bool {
        if !self.failed.load(Ordering::Relaxed) {
            // The progress callback is asked first, so a cancelled run
            // starts no job.
            let r = contained(|| {
                progress(0)?;
                match self.set.job_at(t) {
                    Some(job) => hash_job(&job, pieces, progress),
                    None => Err(Error::internal(&format!("no hashing job #{t}"))),
                }
            });
            if r.is_err() {
                self.failed.store(true, Ordering::Relaxed);
            }
            let mut d = self.lock_digests();
            match r {
                Ok(digest) => {
                    if let Some(slot) = d.data.get_mut(t) {
                        *slot = digest;
                        d.filled = d.filled.saturating_add(1);
                    }
                }
                Err(e) => d.errors.push((t, e)),
            }
        }
        self.remaining.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// The set, and every job's digest in job order or the first error in
    /// job order.
    pub(crate) fn into_parts(self) -> (W, Result<Vec<Sha256Digest>>) {
        let d = self.digests.into_inner().unwrap_or_else(PoisonError::into_inner);
        let r = if let Some((_, e)) = d.errors.into_iter().min_by_key(|&(t, _)| t) {
            Err(e)
        } else if d.filled != self.set.jobs_len() || d.data.len() != d.filled {
            // Only reached if a job was skipped without any job failing.
            Err(Error::internal("hashing was interrupted, and no job failed"))
        } else {
            Ok(d.data)
        };
        (self.set, r)
    }
}

/// A set's next job in the queue: its length first, then the set.
struct Next<T> {
    len: u64,
    index: usize,
    /// The position in the set's `order` of the job to take.
    pos: usize,
    work: T,
}

impl<T> Next<T> {
    fn key(&self) -> (u64, std::cmp::Reverse<usize>) {
        (self.len, std::cmp::Reverse(self.index))
    }
}

impl<T> PartialEq for Next<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<T> Eq for Next<T> {}
impl<T> PartialOrd for Next<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Next<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The sets of a run whose jobs are not all taken, by their largest job
/// not yet taken. `T` holds a set: an `Arc` of it (a schedule, whose
/// threads outlive the caller's borrow) or a reference (a scope).
pub(crate) struct Queue<T> {
    heap: Mutex<BinaryHeap<Next<T>>>,
}

impl<W: HashJobs, T: Deref<Target = Work<W>> + Clone> Queue<T> {
    pub(crate) fn new() -> Queue<T> {
        Queue { heap: Mutex::new(BinaryHeap::new()) }
    }

    fn lock(&self) -> MutexGuard<'_, BinaryHeap<Next<T>>> {
        // Nothing panics while it is held (no job runs under it).
        self.heap.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues every job of `work` (none when it is read front to back).
    pub(crate) fn push(&self, work: T) {
        if let Some(&(len, _)) = work.order.first() {
            let index = work.index;
            self.lock().push(Next { len, index, pos: 0, work });
        }
    }

    /// The largest job not yet taken, and its set.
    fn pop(&self) -> Option<(T, usize)> {
        let mut heap = self.lock();
        let next = heap.pop()?;
        let &(_, t) = next.work.order.get(next.pos)?;
        let pos = next.pos.saturating_add(1);
        if let Some(&(len, _)) = next.work.order.get(pos) {
            heap.push(Next { len, index: next.index, pos, work: next.work.clone() });
        }
        Some((next.work, t))
    }

    /// Takes and runs jobs until none is left, calling `done` with each set
    /// whose last job this thread ran.
    pub(crate) fn drain(&self, pieces: &PieceSizes, progress: &ProgressCallback<'_>, done: &dyn Fn(&T)) {
        while let Some((work, t)) = self.pop() {
            if work.run(t, pieces, progress) {
                done(&work);
            }
        }
    }
}

/// Hashes every job of every set of `sets` on `pool` (`None`: the current
/// pool), largest first across all of them, and returns each set's digests
/// in its job order, or its first error in job order. `progress` is told
/// 0 before each job (its error stops the job: a cancelled run), then each
/// piece's size. A BOM's files, an OpenSSF model signature's files and
/// pieces, and a model's tensors beside them, are hashed here.
pub fn hash_sets<'a>(
    sets: &[&'a (dyn HashJobs + 'a)],
    pool: Option<&rayon::ThreadPool>,
    pieces: &PieceSizes,
    progress: &ProgressCallback<'_>,
) -> Vec<Result<Vec<Sha256Digest>>> {
    let works: Vec<Work<&'a (dyn HashJobs + 'a)>> =
        sets.iter().enumerate().map(|(i, &set)| Work::new(i, set, largest_first(set))).collect();
    let queue: Queue<&Work<&'a (dyn HashJobs + 'a)>> = Queue::new();
    let mut jobs = 0usize;
    for w in &works {
        jobs = jobs.saturating_add(w.queued());
        queue.push(w);
    }
    let threads = pool.map_or_else(rayon::current_num_threads, rayon::ThreadPool::current_num_threads);
    let runners = jobs.min(threads.max(1));
    let run = || queue.drain(pieces, progress, &|_| {});
    match pool {
        Some(p) => p.in_place_scope_fifo(|s| (0..runners).for_each(|_| s.spawn_fifo(|_| run()))),
        None => rayon::in_place_scope_fifo(|s| (0..runners).for_each(|_| s.spawn_fifo(|_| run()))),
    }
    drop(queue);
    works.into_iter().map(|w| w.into_parts().1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Subject;
    use crate::hash::Conversion;
    use crate::source::{ReadMode, Source};

    #[test]
    fn every_hash_job_goes_through_the_scheduler() {
        // Outside the hashing code itself and two calls of one job for a
        // library user (`run_job`, GGUF's `hash_tensor`), no module hashes
        // a job by itself: a new one submits its jobs here (docs/adr/0039).
        let allowed = [
            "core/src/hash/mod.rs",
            "core/src/hash/gather.rs",
            "core/src/schedule/queue.rs",
            "core/src/format.rs",
            "formats/src/gguf/model.rs",
        ];
        // Every crate of the workspace (this one's manifest is crates/core).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut stack = vec![root.join("crates"), root.join("src")];
        let mut offenders = Vec::new();
        let mut read = 0usize;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                read += 1;
                let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let calls = text.lines().filter(|l| !l.trim_start().starts_with("//")).any(|l| l.contains("hash_job("));
                if calls && !allowed.iter().any(|a| rel.ends_with(a)) {
                    offenders.push(rel);
                }
            }
        }
        // The walk found the crates (the formats' and provenance's too).
        assert!(read > 100, "only {read} source files found under {}", root.display());
        assert!(offenders.is_empty(), "hash jobs run outside the scheduler in {offenders:?}");
    }

    #[test]
    fn a_panicking_job_becomes_an_error() {
        let r: Result<()> = contained(|| panic!("a bug"));
        let e = r.expect_err("contained");
        assert!(e.to_string().contains("internal error"), "{e}");
        assert_eq!(contained(|| Ok(7)).ok(), Some(7));
    }

    fn whole(source: &Source, start: u64, len: u64) -> Job<'_> {
        Job {
            source,
            start,
            len,
            conversion: Conversion::none(1, "bytes"),
            subject: Subject::Key(format!("bytes {start}+{len}").into_bytes()),
            gather: None,
        }
    }

    /// Two "models" of pieces of one file, their sizes interleaved: the
    /// queue hands out the largest of both first, not model by model.
    fn two_sets(source: &Source) -> (JobList<'_>, JobList<'_>) {
        let a = JobList(vec![whole(source, 0, 10), whole(source, 0, 300), whole(source, 0, 30)]);
        let b = JobList(vec![whole(source, 0, 200), whole(source, 0, 20), whole(source, 0, 1000), whole(source, 0, 0)]);
        (a, b)
    }

    fn file(dir: &tempfile::TempDir) -> Source {
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, bytes).unwrap();
        Source::open(&path, ReadMode::Pread).unwrap()
    }

    #[test]
    fn the_queue_hands_out_the_largest_job_of_every_set_first() {
        let dir = tempfile::tempdir().unwrap();
        let source = file(&dir);
        let (a, b) = two_sets(&source);
        let (wa, wb) = (Work::new(0, &a, largest_first(&a)), Work::new(1, &b, largest_first(&b)));
        let queue: Queue<&Work<&JobList<'_>>> = Queue::new();
        queue.push(&wa);
        queue.push(&wb);
        let mut taken = Vec::new();
        while let Some((w, t)) = queue.pop() {
            taken.push((w.index, t));
        }
        assert_eq!(taken, [(1, 2), (0, 1), (1, 0), (0, 2), (1, 1), (0, 0), (1, 3)]);
    }

    /// An object read by ranges that asks for its jobs in file order (as
    /// an OCI blob does), or not.
    #[derive(Debug)]
    struct Ordered(bool);

    impl crate::source::RangeSource for Ordered {
        fn len(&self) -> u64 {
            1000
        }
        fn version(&self) -> Option<&str> {
            None
        }
        fn read_at(&self, _: u64, _: &mut [u8]) -> Result<()> {
            Err(Error::internal("not read in this test"))
        }
        fn read_range(&self, _: u64, _: u64) -> Result<Box<dyn crate::source::RangeReader + '_>> {
            Err(Error::internal("not read in this test"))
        }
        fn check_unchanged(&self) -> Result<()> {
            Ok(())
        }
        fn beside(&self) -> Result<std::sync::Arc<dyn crate::source::RangeDir>> {
            Err(Error::internal("no place in this test"))
        }
        fn wants_file_order(&self) -> bool {
            self.0
        }
    }

    fn object(file_order: bool) -> Source {
        Source::from_range(std::path::Path::new("o"), std::sync::Arc::new(Ordered(file_order)))
    }

    #[test]
    fn objects_that_ask_for_file_order_get_their_jobs_by_file_then_offset() {
        let (a, b) = (object(true), object(true));
        // Listed out of order: b's jobs first, a's interleaved.
        let set = JobList(vec![
            whole(&b, 500, 10),
            whole(&a, 300, 600),
            whole(&a, 0, 5),
            whole(&b, 0, 400),
            whole(&a, 100, 20),
        ]);
        let order: Vec<usize> = largest_first(&set).into_iter().map(|(_, i)| i).collect();
        // b first (the set names it first), then a, each by offset.
        assert_eq!(order, [3, 0, 2, 4, 1]);
        // One source that does not ask (a file, another object): largest
        // first, as before, for the whole set.
        let dir = tempfile::tempdir().unwrap();
        let f = file(&dir);
        let other = object(false);
        for odd in [&f, &other] {
            let mixed = JobList(vec![whole(&a, 0, 5), whole(&a, 100, 20), whole(odd, 0, 300)]);
            let order: Vec<usize> = largest_first(&mixed).into_iter().map(|(_, i)| i).collect();
            assert_eq!(order, [2, 1, 0]);
        }
        let lens: Vec<u64> = largest_first(&set).into_iter().map(|(len, _)| len).collect();
        assert_eq!(lens, [400, 10, 5, 20, 600], "each job keeps its length for the queue");
    }

    #[test]
    fn one_thread_hashes_every_set_largest_first_across_sets() {
        // One thread, every job smaller than a piece: the progress callback
        // sees each job's length once, in the order jobs were handed out.
        let dir = tempfile::tempdir().unwrap();
        let source = file(&dir);
        let (a, b) = two_sets(&source);
        let pool = crate::schedule::hashing_pool(1).unwrap();
        let seen = Mutex::new(Vec::new());
        let progress = |n: u64| -> Result<()> {
            if n > 0 {
                seen.lock().unwrap().push(n);
            }
            Ok(())
        };
        let got = hash_sets(&[&a, &b], Some(&pool), &PieceSizes::default(), &progress);
        assert_eq!(seen.into_inner().unwrap(), [1000, 300, 200, 30, 20, 10]);
        // And each set's digests come back in its own job order.
        let bytes = std::fs::read(dir.path().join("f")).unwrap();
        let sha = |n: usize| -> Sha256Digest {
            use sha2::Digest as _;
            sha2::Sha256::digest(&bytes[..n]).into()
        };
        let got: Vec<Vec<Sha256Digest>> = got.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got, [vec![sha(10), sha(300), sha(30)], vec![sha(200), sha(20), sha(1000), sha(0)]]);
    }

    #[test]
    fn a_failing_job_fails_its_set_only_and_a_cancel_starts_no_job() {
        let dir = tempfile::tempdir().unwrap();
        let source = file(&dir);
        // Past the end of the file: an error naming the job.
        let bad = JobList(vec![whole(&source, 0, 5), whole(&source, 990, 20)]);
        let good = JobList(vec![whole(&source, 0, 5)]);
        let empty = JobList::default();
        let pool = crate::schedule::hashing_pool(2).unwrap();
        let r = hash_sets(&[&bad, &good, &empty], Some(&pool), &PieceSizes::default(), &|_| Ok(()));
        let e = r[0].as_ref().unwrap_err().to_string();
        assert!(e.contains("bytes 990+20"), "{e}");
        assert_eq!(r[1].as_ref().unwrap().len(), 1);
        assert_eq!(r[2].as_ref().unwrap().len(), 0);

        let started = AtomicUsize::new(0);
        let cancelled = |n: u64| -> Result<()> {
            if n > 0 {
                started.fetch_add(1, Ordering::Relaxed);
            }
            Err(Error::new(crate::error::ErrorKind::Cancelled))
        };
        let r = hash_sets(&[&good], Some(&pool), &PieceSizes::default(), &cancelled);
        assert!(matches!(r[0].as_ref().unwrap_err().kind(), crate::error::ErrorKind::Cancelled));
        assert_eq!(started.load(Ordering::Relaxed), 0);
    }
}
