//! Labelling many models at once, of any formats: every tensor of every
//! file is one job on a shared thread pool, so the cores stay busy across
//! file boundaries, while results come back in the order the paths were
//! given. Format-neutral: models are [`Labelled`], opened by the function
//! the caller passes (`input::open_model`, which knows the formats).
//!
//! Jobs are queued file by file, largest tensor first within a file; the
//! pool takes them first in, first out. A file's result is reported as soon
//! as it and every file before it are done, and at most a few files are open
//! at a time, so a long argument list needs neither many descriptors nor
//! much memory.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use crate::cache::Cache;
use crate::error::{Error, ErrorKind, Result};
use crate::format::{self, Labelled, OpenOptions};
use crate::hash::{Digest, Sha256Digest};
use crate::pipeline;

mod pool;
pub use pool::{MAX_THREADS, hashing_pool};

/// How to label a batch of paths.
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    /// How each model is opened.
    pub open: OpenOptions,
    /// Counts tensor bytes hashed so far, for a progress display.
    pub progress: Option<Arc<AtomicU64>>,
    /// Set it to stop the run: hashing stops within a piece, and every
    /// model not yet finished gets [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled).
    pub cancel: Option<Arc<AtomicBool>>,
    /// The verified-leaf cache (`--cache`, docs/adr/0033): attached to
    /// every file of every model opened, so unchanged files are not read
    /// and the files read are stored once checked unchanged.
    pub cache: Option<Arc<Cache>>,
}

impl BatchOptions {
    /// True once the run was cancelled.
    fn cancelled(&self) -> bool {
        self.cancel.as_deref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// What the hashing loops are told of each piece: the byte counter,
    /// and the cancel flag they stop at.
    fn tally(&self) -> Tally {
        Tally { progress: self.progress.clone(), cancel: self.cancel.clone() }
    }
}

/// The progress counter and the cancel flag of a run, moved into its jobs.
struct Tally {
    progress: Option<Arc<AtomicU64>>,
    cancel: Option<Arc<AtomicBool>>,
}

impl Tally {
    /// Counts `n` bytes hashed; an error once the run is cancelled.
    fn add(&self, n: u64) -> Result<()> {
        if let Some(p) = &self.progress {
            p.fetch_add(n, Ordering::Relaxed);
        }
        match &self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => Err(Error::new(ErrorKind::Cancelled)),
            _ => Ok(()),
        }
    }
}

/// Runs one job's work, a panic (a bug: none is known) turned into an
/// error. Without it a panic would abort the process from the pool (rayon's
/// default), taking a Python interpreter that called the library with it,
/// and the scheduler would wait forever for the job's result.
fn contained<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(Error::internal("a hashing job panicked")))
}

/// One file in flight: its model, its jobs in hashing order, and the
/// digests they fill in. A few runners per file take its jobs in turn
/// (`next`), so queueing a file of a million tensors costs a task per
/// thread, not one per tensor.
struct FileWork<M> {
    index: usize,
    model: M,
    /// Job indices, largest first (empty when read front to back).
    order: Vec<usize>,
    /// The position in `order` of the next job to take.
    next: AtomicUsize,
    digests: Mutex<Digests>,
    /// Jobs not yet done (the mapped path: the last one reports the file).
    remaining: AtomicUsize,
    /// Set by the first failing job, so the others are skipped.
    failed: AtomicBool,
}

/// What a file's jobs have produced so far.
#[derive(Default)]
struct Digests {
    /// Job `i`'s digest at `i` (all of them, once every job succeeded).
    data: Vec<Sha256Digest>,
    /// Jobs that filled their slot.
    filled: usize,
    /// Jobs that failed, with their job index.
    errors: Vec<(usize, Error)>,
}

impl Digests {
    fn record(&mut self, t: usize, r: Result<Sha256Digest>) {
        match r {
            Ok(d) => {
                if let Some(slot) = self.data.get_mut(t) {
                    *slot = d;
                    self.filled = self.filled.saturating_add(1);
                }
            }
            Err(e) => self.errors.push((t, e)),
        }
    }
}

impl<M: Labelled> FileWork<M> {
    /// A file with every job still to do, in `order` (empty when the file
    /// is read front to back, which fills every slot at once).
    fn new(index: usize, model: M, order: Vec<usize>) -> FileWork<M> {
        let n = model.job_count();
        // Slots only for the jobs run one by one.
        let data = if order.is_empty() { Vec::new() } else { vec![[0u8; 32]; n] };
        FileWork {
            index,
            digests: Mutex::new(Digests { data, ..Digests::default() }),
            order,
            next: AtomicUsize::new(0),
            remaining: AtomicUsize::new(n),
            failed: AtomicBool::new(false),
            model,
        }
    }

    fn lock_digests(&self) -> std::sync::MutexGuard<'_, Digests> {
        // A panic is caught before it could poison the lock (`contained`).
        self.digests.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs jobs in order until none is left; true when this runner did the
    /// file's last job.
    fn run_jobs(&self, opts: &OpenOptions, tally: &Tally) -> bool {
        let mut last = false;
        while let Some(&t) = self.order.get(self.next.fetch_add(1, Ordering::Relaxed)) {
            self.run(t, opts, tally);
            last = self.remaining.fetch_sub(1, Ordering::AcqRel) == 1;
        }
        last
    }

    fn run(&self, t: usize, opts: &OpenOptions, tally: &Tally) {
        // After one failure the file's label is lost anyway: skip the rest.
        if self.failed.load(Ordering::Relaxed) {
            return;
        }
        let r =
            contained(|| tally.add(0).and_then(|()| format::run_job(&self.model, t, &opts.pieces, &|n| tally.add(n))));
        if r.is_err() {
            self.failed.store(true, Ordering::Relaxed);
        }
        self.lock_digests().record(t, r);
    }

    /// Hashes every job front to back (a stream, or files not in the page
    /// cache) and fills every slot.
    fn run_front_to_back(&self, opts: &OpenOptions, threads: usize, tally: &Tally) {
        let r = contained(|| {
            tally
                .add(0)
                .and_then(|()| pipeline::hash_front_to_back(&self.model, &opts.pieces, threads, &|n| tally.add(n)))
        });
        if let Ok(digests) = &r {
            note_leaves(&self.model, digests);
        }
        let mut d = self.lock_digests();
        match r {
            Ok(digests) => {
                d.filled = digests.len();
                d.data = digests;
            }
            Err(e) => d.errors.push((0, e)),
        }
    }

    /// The finished digest, or the first error in tensor order.
    fn finish(self) -> Result<(M, Digest)> {
        let d = self.digests.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, e)) = d.errors.into_iter().min_by_key(|&(t, _)| t) {
            return Err(e);
        }
        if d.filled != self.model.job_count() || d.data.len() != d.filled {
            // Only reached if a job was skipped without any job failing.
            return Err(Error::internal("tensor hashing was interrupted, and no job failed"));
        }
        let digest = format::finish(&self.model, d.data)?;
        Ok((self.model, digest))
    }
}

/// Opens a model of whatever format a path holds (it may borrow, as
/// [`NamedModels::open`](crate::NamedModels::open) does).
pub type Opener<'a, M> = dyn Fn(&Path, &OpenOptions) -> Result<M> + 'a;

/// Labels every argument on `pool`, each opened by `open`, calling
/// `emit(i, result)` for the i-th argument in order, as soon as it and all
/// before it are finished. An argument is whatever the caller parsed it
/// into (`input::Input`, or a path), named in errors as the path it was
/// given as.
pub fn schedule<A: AsRef<Path>, M: Labelled + 'static>(
    paths: &[A],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
    open: &(dyn Fn(&A, &OpenOptions) -> Result<M> + '_),
    mut emit: impl FnMut(usize, Result<(M, Digest)>),
) {
    let (done_tx, done_rx) = mpsc::channel::<usize>();
    let window = pool.current_num_threads().max(1).saturating_mul(2);
    let mut in_flight: BTreeMap<usize, Arc<FileWork<M>>> = BTreeMap::new();
    let mut ready: BTreeMap<usize, Result<(M, Digest)>> = BTreeMap::new();
    let mut next_open = 0;
    let mut next_emit = 0;
    while next_emit < paths.len() {
        while next_open < paths.len() && in_flight.len().saturating_add(ready.len()) < window {
            let index = next_open;
            next_open = next_open.saturating_add(1);
            let Some(path) = paths.get(index) else { break };
            let opened = match opts.cancelled() {
                true => Err(Error::new(ErrorKind::Cancelled)),
                false => open(path, &opts.open),
            };
            if let (Ok(model), Some(cache)) = (&opened, &opts.cache) {
                attach_cache(model, cache);
            }
            match opened {
                Err(e) => {
                    ready.insert(index, Err(e));
                }
                Ok(model) if model.job_count() == 0 => {
                    let r = format::finish(&model, Vec::new()).map(|d| (model, d));
                    ready.insert(index, r);
                }
                Ok(model) if reads_front_to_back(&model) => {
                    // One task reads the whole model front to back, with
                    // hashing threads of its own as many as the pool's.
                    let work = Arc::new(FileWork::new(index, model, Vec::new()));
                    let (work2, tx, tally, open) = (Arc::clone(&work), done_tx.clone(), opts.tally(), opts.open);
                    let threads = pool.current_num_threads();
                    pool.spawn_fifo(move || {
                        work2.run_front_to_back(&open, threads, &tally);
                        let _ = tx.send(work2.index);
                    });
                    in_flight.insert(index, work);
                }
                Ok(model) => {
                    let order = format::hash_order(&model);
                    let runners = order.len().min(pool.current_num_threads().max(1));
                    let work = Arc::new(FileWork::new(index, model, order));
                    for _ in 0..runners {
                        let work = Arc::clone(&work);
                        let tx = done_tx.clone();
                        let tally = opts.tally();
                        let open = opts.open;
                        pool.spawn_fifo(move || {
                            if work.run_jobs(&open, &tally) {
                                // The receiver outlives every job; a send error cannot happen.
                                let _ = tx.send(work.index);
                            }
                        });
                    }
                    in_flight.insert(index, work);
                }
            }
        }
        while let Some(r) = ready.remove(&next_emit) {
            // Every error names the argument it came from (a directory, an
            // index, a first shard, an `ollama:` reference), beside the file.
            let argument = paths.get(next_emit).map_or(Path::new(""), AsRef::as_ref);
            emit(next_emit, r.map_err(|e| e.for_argument(argument)));
            next_emit = next_emit.saturating_add(1);
        }
        if next_emit >= paths.len() {
            break;
        }
        if in_flight.is_empty() {
            // Emitting freed the window and nothing is hashing: open more
            // files instead of waiting for news that cannot come.
            continue;
        }
        let Ok(index) = done_rx.recv() else { break };
        if let Some(work) = in_flight.remove(&index) {
            ready.insert(index, finish_when_released(work));
        }
    }
}

/// Labels every path on `pool` like [`schedule`] and returns all the
/// results at once, in argument order (for callers that need every model
/// before they can say anything: a statement, `inspect`, `diff`, Python).
pub fn schedule_all<A: AsRef<Path>, M: Labelled + 'static>(
    paths: &[A],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
    open: &(dyn Fn(&A, &OpenOptions) -> Result<M> + '_),
) -> Vec<Result<(M, Digest)>> {
    let mut done: Vec<Option<Result<(M, Digest)>>> = paths.iter().map(|_| None).collect();
    schedule(paths, opts, pool, open, |i, r| {
        if let Some(slot) = done.get_mut(i) {
            *slot = Some(r);
        }
    });
    // `schedule` emits every index; a slot left empty would be a bug, not
    // a label.
    done.into_iter().map(|r| r.unwrap_or_else(|| Err(Error::internal("a path was not labelled")))).collect()
}

/// Takes the file's work back from the job that announced it (which may
/// still hold its reference for an instant) and finishes it.
fn finish_when_released<M: Labelled>(mut work: Arc<FileWork<M>>) -> Result<(M, Digest)> {
    loop {
        match Arc::try_unwrap(work) {
            Ok(w) => return w.finish(),
            Err(shared) => {
                work = shared;
                std::thread::yield_now();
            }
        }
    }
}

/// Attaches the verified-leaf cache to every file of `model`.
pub fn attach_cache(model: &dyn Labelled, cache: &Arc<Cache>) {
    for s in model.sources() {
        s.attach_cache(cache);
    }
}

/// Whether `model` is read front to back (a stream, or a file not in the
/// page cache): not when the cache holds some of its files' leaves, which
/// are then taken from it and the rest hashed job by job.
fn reads_front_to_back(model: &dyn Labelled) -> bool {
    !model.sources().iter().any(|s| s.has_cached_leaves()) && pipeline::reads_front_to_back(model)
}

/// Notes every job's digest, hashed front to back, for the cache of its
/// file (the jobs hashed one by one are noted as they are hashed).
fn note_leaves(model: &dyn Labelled, digests: &[Sha256Digest]) {
    if !model.sources().iter().any(|s| s.cache_attached()) {
        return;
    }
    for (i, d) in digests.iter().enumerate() {
        if let Some(job) = model.job(i).filter(|j| j.source.cache_attached()) {
            job.source.note_leaf(job.start, job.len, job.conversion.cache_tag(), *d);
        }
    }
}

/// Hashes every job of `model` on the current rayon pool (front to back,
/// with as many threads, when it is a stream or not in the page cache) and
/// finishes it.
pub fn digest(model: &dyn Labelled, pieces: &crate::hash::PieceSizes) -> Result<Digest> {
    use rayon::prelude::*;
    if reads_front_to_back(model) {
        let digests = pipeline::hash_front_to_back(model, pieces, rayon::current_num_threads(), &|_| Ok(()))?;
        note_leaves(model, &digests);
        return format::finish(model, digests);
    }
    let order = format::hash_order(model);
    let hashed: Vec<(usize, Result<Sha256Digest>)> =
        order.par_iter().with_max_len(1).map(|&i| (i, format::run_job(model, i, pieces, &|_| Ok(())))).collect();
    let mut digests = vec![[0u8; 32]; model.job_count()];
    for (i, r) in hashed {
        if let Some(d) = digests.get_mut(i) {
            *d = r?;
        }
    }
    format::finish(model, digests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_job_becomes_an_error() {
        let r: Result<()> = contained(|| panic!("a bug"));
        let e = r.expect_err("contained");
        assert!(e.to_string().contains("internal error"), "{e}");
        assert_eq!(contained(|| Ok(7)).ok(), Some(7));
    }
}
