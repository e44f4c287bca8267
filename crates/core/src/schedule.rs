//! Labelling many models at once, of any formats: every tensor of every
//! file is one job on a shared thread pool, so the cores stay busy across
//! file boundaries, while results come back in the order the paths were
//! given. Format-neutral: models are [`Labelled`], opened by the function
//! the caller passes (`input::open_model`, which knows the formats).
//!
//! Every hash job of a run goes through one queue (`queue.rs`, docs/adr/0039):
//! a thread that is free takes the largest job not yet taken among every
//! model in flight, not file by file. The same queue hashes a BOM's files
//! and an OpenSSF model signature's files and pieces ([`hash_sets`],
//! [`digest_with`]). A file's result is reported as soon as it and every
//! file before it are done, and at most a few files (twice the threads)
//! are open at a time, so a long argument list needs neither many
//! descriptors nor much memory: largest first is across the models open
//! at once, which for a run of that many models or fewer is all of them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};

use crate::cache::Cache;
use crate::error::{Error, ErrorKind, Result};
use crate::format::{self, Labelled, OpenOptions};
use crate::hash::{Digest, Sha256Digest};
use crate::pipeline;

mod pool;
mod queue;
pub use pool::{MAX_THREADS, hashing_pool};
pub use queue::{HashJobs, JobList, ModelJobs, hash_sets};
use queue::{Queue, Work, contained, largest_first};

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

/// A model being labelled, as a set of jobs for the queue.
struct Model<M>(M);

impl<M: Labelled> HashJobs for Model<M> {
    fn jobs_len(&self) -> usize {
        self.0.job_count()
    }
    fn job_at(&self, i: usize) -> Option<crate::hash::Job<'_>> {
        self.0.job(i)
    }
}

/// One model in flight: its jobs, in the run's one queue, and the digests
/// they fill in.
type FileWork<M> = Work<Model<M>>;

impl<M: Labelled> FileWork<M> {
    /// Hashes every job front to back (a stream, or files not in the page
    /// cache) and fills every slot.
    fn run_front_to_back(&self, opts: &OpenOptions, threads: usize, tally: &Tally) {
        let model = &self.set.0;
        let r = contained(|| {
            tally.add(0).and_then(|()| pipeline::hash_front_to_back(model, &opts.pieces, threads, &|n| tally.add(n)))
        });
        if let Ok(digests) = &r {
            note_leaves(model, digests);
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
        let (Model(model), data) = self.into_parts();
        let data = data?;
        let digest = format::finish(&model, data)?;
        Ok((model, digest))
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
    // Every job of every model in flight, taken largest first by whichever
    // thread is free.
    let queue: Arc<Queue<Arc<FileWork<M>>>> = Arc::new(Queue::new());
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
                    let work = Arc::new(FileWork::new(index, Model(model), Vec::new()));
                    let (work2, tx, tally, open) = (Arc::clone(&work), done_tx.clone(), opts.tally(), opts.open);
                    let threads = pool.current_num_threads();
                    pool.spawn_fifo(move || {
                        work2.run_front_to_back(&open, threads, &tally);
                        let _ = tx.send(work2.index);
                    });
                    in_flight.insert(index, work);
                }
                Ok(model) => {
                    // Its jobs join the run's one queue, largest first
                    // among those of every model in flight.
                    let model = Model(model);
                    let order = largest_first(&model);
                    let runners = order.len().min(pool.current_num_threads().max(1));
                    let work = Arc::new(FileWork::new(index, model, order));
                    queue.push(Arc::clone(&work));
                    for _ in 0..runners {
                        let queue = Arc::clone(&queue);
                        let tx = done_tx.clone();
                        let tally = opts.tally();
                        let pieces = opts.open.pieces;
                        pool.spawn_fifo(move || {
                            // The receiver outlives every job; a send error cannot happen.
                            let done = |w: &Arc<FileWork<M>>| {
                                let _ = tx.send(w.index);
                            };
                            queue.drain(&pieces, &|n| tally.add(n), &done);
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
    digest_with(model, &[], pieces).0
}

/// Hashes every job of `model` and of `others` on the current rayon pool,
/// largest first across all of them (a model read front to back is read
/// so first, then the others hashed), and only then finishes the model,
/// so its files are checked unchanged after every read of them (an OpenSSF
/// model signature's whole files). Returns the model's digest and each of
/// `others`' digests, as [`hash_sets`] does.
pub fn digest_with(
    model: &dyn Labelled,
    others: &[&(dyn HashJobs + '_)],
    pieces: &crate::hash::PieceSizes,
) -> (Result<Digest>, Vec<Result<Vec<Sha256Digest>>>) {
    let none = || Err(Error::internal("a set of hashing jobs went missing"));
    let (data, others) = if reads_front_to_back(model) {
        let data = pipeline::hash_front_to_back(model, pieces, rayon::current_num_threads(), &|_| Ok(()));
        if let Ok(digests) = &data {
            note_leaves(model, digests);
        }
        (data, hash_sets(others, None, pieces, &|_| Ok(())))
    } else {
        let jobs = ModelJobs(model);
        let mut sets: Vec<&dyn HashJobs> = vec![&jobs];
        sets.extend_from_slice(others);
        let mut all = hash_sets(&sets, None, pieces, &|_| Ok(())).into_iter();
        (all.next().unwrap_or_else(none), all.collect())
    };
    (data.and_then(|data| format::finish(model, data)), others)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Subject;
    use crate::hash::{Conversion, Job};
    use crate::source::{ReadMode, Source};
    use std::sync::Mutex;

    /// A model of pieces of one file, whose jobs note which of them a
    /// hashing thread asked for, in order.
    struct Pieces {
        name: &'static str,
        source: Source,
        lens: Vec<u64>,
        hashed: Arc<Mutex<Vec<(&'static str, u64)>>>,
    }

    impl Labelled for Pieces {
        fn job_count(&self) -> usize {
            self.lens.len()
        }
        fn job(&self, i: usize) -> Option<crate::hash::Job<'_>> {
            let len = *self.lens.get(i)?;
            if std::thread::current().name().is_some_and(|n| n.starts_with("gguf-digest-")) {
                self.hashed.lock().unwrap().push((self.name, len));
            }
            let subject = Subject::Key(format!("{} {i}", self.name).into_bytes());
            Some(Job {
                source: &self.source,
                start: 0,
                len,
                conversion: Conversion::none(1, "bytes"),
                subject,
                gather: None,
            })
        }
        fn sources(&self) -> Vec<&Source> {
            vec![&self.source]
        }
        fn write_skeleton(&self, data: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
            data.iter().for_each(|d| sink(d));
            Ok(())
        }
        fn write_json(&self, _: &mut crate::output::JsonWriter<'_>, _: &Path, _: &Digest) -> std::io::Result<()> {
            Ok(())
        }
        fn contract(&self) -> (&'static str, &'static str) {
            ("test", "test")
        }
    }

    #[test]
    fn a_later_model_s_larger_job_goes_before_an_earlier_model_s_smaller_one() {
        // One hashing thread. While it hashes a's 32 MiB job, b is opened
        // and queued: its 1 KiB job is taken before a's 10 bytes (file by
        // file, as the scheduler used to queue, a's would come first).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![5u8; 32 << 20]).unwrap();
        let hashed = Arc::new(Mutex::new(Vec::new()));
        let open = |name: &&'static str, _: &OpenOptions| -> Result<Pieces> {
            let lens = if *name == "a" { vec![10, 32 << 20] } else { vec![1024] };
            let source = Source::open(&path, ReadMode::Pread)?;
            Ok(Pieces { name, source, lens, hashed: Arc::clone(&hashed) })
        };
        let pool = hashing_pool(1).unwrap();
        let results = schedule_all(&["a", "b"], &BatchOptions::default(), &pool, &open);
        assert!(results.iter().all(Result::is_ok));
        let order = hashed.lock().unwrap().clone();
        assert_eq!(order, [("a", 32 << 20), ("b", 1024), ("a", 10)]);
    }
}
