//! Hashing a model's tensor data front to back: one reader in file order,
//! hashing threads behind it. How a file that is not in the page cache is
//! read at the disk's speed, and a stream (standard input) at the pipe's.
//!
//! A disk delivers at its speed only to a reader that goes front to back
//! with large reads (the kernel's read-ahead then keeps the device busy);
//! a pipe can only be read that way. So the calling thread reads every
//! job's bytes in file order (file by file, as `sources()` lists them),
//! skipping what lies between tensors, in pieces of whole blocks, and hands
//! each piece to one of the hashing threads: all pieces of a tensor go to
//! the same thread, in order, and each new tensor to the thread with the
//! least work queued, so several tensors are hashed at once. A fixed pool of
//! buffers bounds what is read ahead of the hashers: memory never grows with
//! the model. A file larger than half of memory is read around the page
//! cache (`O_DIRECT`) by two I/O threads, two reads in flight, the batches
//! still handed on in file order. See docs/adr/0016-cold-files-and-streams.md.
//!
//! Every piece is whole blocks (`PieceSizes::plan`), so big-endian data is
//! converted exactly as on the other paths; tests shrink the pieces to a
//! few bytes and compare with a one-shot oracle.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

use crate::error::{Error, Result};
use crate::format::Labelled;
use crate::hash::{Algorithm, Conversion, Hasher as JobHasher, PieceSizes, ProgressCallback, Sha256Digest};
use crate::source::Source;

/// Bytes read ahead of the hashing threads, at most (by default)... (32
/// and 64 MiB were no faster cold, and cost their pages in RSS)...
const IN_FLIGHT: usize = 16 << 20;
/// ...in at least this many buffers per hashing thread, and at most
/// `MAX_BUFFERS` (with pieces shrunk to a few bytes, in tests).
const MIN_BUFFERS_PER_THREAD: usize = 2;
const MAX_BUFFERS: usize = 64;

/// One front-to-back reader at a time in this process: two would make the
/// disk seek between them (measured: two readers of one cold file took
/// twice as long as one).
static ONE_READER: Mutex<()> = Mutex::new(());

/// True when `model` is best hashed front to back: it is read from a
/// stream, or some of its files are not in the page cache.
pub fn reads_front_to_back(model: &dyn Labelled) -> bool {
    // A stream is cold too: it has no page cache to be read from. A job
    // that gathers a view's elements reads where they lie, not front to back.
    model.sources().iter().any(|s| s.is_cold())
        && !(0..model.job_count()).any(|i| model.job(i).is_some_and(|j| j.gather.is_some()))
}

/// One read: consecutive bytes of one input holding whole-block pieces of
/// one or more jobs (small tensors are read and sent together, so a model
/// of hundreds of small tensors costs a few reads and wake-ups, not hundreds),
/// on its way to a hashing thread.
struct Batch {
    buf: Vec<u8>,
    /// Where the batch's first byte lies in `buf` (past the alignment of a
    /// direct read).
    base: usize,
    len: usize,
    parts: Vec<Part>,
    /// The pool `buf` goes back to.
    free: mpsc::SyncSender<Vec<u8>>,
}

impl Drop for Batch {
    /// The buffer goes back to the pool however the batch ends: hashed, or
    /// dropped unhashed with the channel of a hashing thread that died. A
    /// lost buffer would leave the reader waiting for it forever.
    fn drop(&mut self) {
        let _ = self.free.send(std::mem::take(&mut self.buf));
    }
}

/// A piece of one job inside a [`Batch`].
#[derive(Debug, Clone, Copy)]
struct Part {
    /// The job, as an index into the reading order.
    job: usize,
    /// Where the piece lies in the batch's buffer.
    at: usize,
    len: usize,
    first: bool,
    last: bool,
}

/// Bytes between two pieces that may be read through to put them in one
/// batch (padding between tensors is at most the alignment, 32 by default).
const MAX_GAP: u64 = 64 << 10;

/// Pieces in one batch, at most: a batch of tiny tensors (a million of 4
/// bytes) would otherwise carry a 32-byte record per 32 bytes read, as many
/// records as bytes in flight.
const MAX_PARTS: usize = 4096;

/// One hashing thread's inbox and how many bytes wait in it.
struct Hasher<'a> {
    tx: mpsc::Sender<Batch>,
    queued: &'a AtomicU64,
}

/// Hashes every job of `model` front to back with `threads` hashing
/// threads; the digests come back in job order. `progress` is called with
/// the bytes taken from the inputs (for a stream: every byte, metadata and
/// gaps included; it has no known total).
pub fn hash_front_to_back(
    model: &dyn Labelled,
    pieces: &PieceSizes,
    threads: usize,
    progress: &ProgressCallback<'_>,
) -> Result<Vec<Sha256Digest>> {
    hash_front_to_back_with(model, pieces, threads, DirectReads::Auto, progress)
}

/// When files are read around the page cache (`O_DIRECT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectReads {
    /// A cold file larger than half of memory (the default).
    Auto,
    /// Every file that allows it (tests, to run the direct path on small files).
    Always,
}

/// Reads that may be in flight at once on a file read directly: a read
/// around the page cache has no read-ahead, so the device sees only what
/// is asked (one 8 MiB read at a time ran at 0.76 x the time of buffered
/// `cat` on 32 GiB, two at once 0.55 x).
const DIRECT_DEPTH: usize = 2;

/// [`hash_front_to_back`], choosing when files are read directly.
pub fn hash_front_to_back_with(
    model: &dyn Labelled,
    pieces: &PieceSizes,
    threads: usize,
    direct: DirectReads,
    progress: &ProgressCallback<'_>,
) -> Result<Vec<Sha256Digest>> {
    let sources = model.sources();
    let order = reading_order(model, &sources);
    let _one = ONE_READER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for s in &sources {
        progress(s.stream_pos())?;
    }
    let threads = threads.max(1);
    let (largest, buffers) = buffer_sizes(model, pieces, threads);
    let (free_tx, free_rx) = mpsc::sync_channel::<Vec<u8>>(buffers);
    for _ in 0..buffers {
        let _ = free_tx.send(Vec::new());
    }
    let failed = AtomicBool::new(false);
    let queued: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let done = Mutex::new(Done { digests: vec![[0u8; 32]; model.job_count()], ..Done::default() });
    let (io_tx, io_rx) = mpsc::channel::<IoJob<'_>>();
    let io_rx = Mutex::new(io_rx);
    let read = std::thread::scope(|scope| {
        let mut hashers = Vec::with_capacity(threads);
        let mut handles = Vec::with_capacity(threads);
        for queued in &queued {
            let (tx, rx) = mpsc::channel::<Batch>();
            hashers.push(Hasher { tx, queued });
            let (order, failed, done) = (&order, &failed, &done);
            let job = move |k: usize| order.get(k).and_then(|&i| Some((i, model.job(i)?.conversion)));
            handles.push(scope.spawn(move || hash_pieces(rx, queued, &job, failed, done)));
        }
        let hashers = hashers;
        let force = direct == DirectReads::Always;
        let io_threads = if sources.iter().any(|s| s.reads_directly(force)) { DIRECT_DEPTH } else { 0 };
        for _ in 0..io_threads {
            let io_rx = &io_rx;
            scope.spawn(move || run_io(io_rx));
        }
        let mut reader = Reader {
            io: io_tx,
            force,
            flights: std::collections::VecDeque::new(),
            hashers: &hashers,
            free: &free_rx,
            give_back: free_tx.clone(),
            failed: &failed,
            progress,
            owner: None,
            model,
            order: &order,
        };
        let read = reader.read_all(pieces, largest);
        // Hangs up the I/O threads.
        drop(reader);
        let read = read.and_then(|()| sources.iter().try_for_each(|s| progress(s.read_to_end()?)));
        drop(hashers);
        for h in handles {
            // A hashing thread that died leaves its jobs unhashed: an error below.
            let _ = h.join();
        }
        read
    });
    read?;
    let done = done.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    done.digests(model, &order)
}

/// The model's jobs in reading order: by file (in `sources` order), then
/// by offset. Each job's place is computed once; jobs are not kept (each
/// holds its tensor's name, and a model may have a million): the reader
/// and the hashers build each again when they come to it.
fn reading_order(model: &dyn Labelled, sources: &[&Source]) -> Vec<usize> {
    // By address: a model of a thousand blobs would otherwise search the
    // list once per job.
    let numbers: std::collections::HashMap<*const Source, usize> =
        sources.iter().enumerate().map(|(n, s)| (*s as *const Source, n)).collect();
    let file_no = |s: &Source| numbers.get(&(s as *const Source)).copied().unwrap_or(usize::MAX);
    let mut places: Vec<(usize, u64, usize)> = Vec::with_capacity(model.job_count());
    places.extend((0..model.job_count()).filter_map(|i| model.job(i).map(|j| (file_no(j.source), j.start, i))));
    places.sort_unstable();
    // A list of its own: collected in place, it would keep the places' room.
    let mut order: Vec<usize> = Vec::with_capacity(places.len());
    order.extend(places.iter().map(|&(_, _, i)| i));
    order
}

/// The largest piece any job of the model is read in, and how many
/// buffers of it are in flight for `threads` hashing threads.
fn buffer_sizes(model: &dyn Labelled, pieces: &PieceSizes, threads: usize) -> (usize, usize) {
    let largest = (0..model.job_count())
        .filter_map(|i| model.job(i))
        .map(|j| pieces.read_piece(j.conversion.block))
        .max()
        .unwrap_or(1)
        .max(1);
    let fewest = threads.saturating_mul(MIN_BUFFERS_PER_THREAD).min(MAX_BUFFERS);
    (largest, IN_FLIGHT.checked_div(largest).unwrap_or(0).clamp(fewest, MAX_BUFFERS))
}

/// What the hashing threads have finished: every job's digest at its index
/// (the order the model gives its jobs), and the jobs that failed.
#[derive(Default)]
struct Done {
    digests: Vec<Sha256Digest>,
    hashed: usize,
    /// Failed jobs, by their place in the reading order.
    errors: Vec<(usize, Error)>,
}

impl Done {
    /// Every job's digest; else the first failure in reading order (`order`),
    /// named by its tensor.
    fn digests(self, model: &dyn Labelled, order: &[usize]) -> Result<Vec<Sha256Digest>> {
        if let Some((k, e)) = self.errors.into_iter().min_by_key(|&(k, _)| k) {
            let job = order.get(k).and_then(|&i| model.job(i));
            return Err(match job {
                Some(j) => e.about(j.subject),
                None => e,
            });
        }
        if self.hashed != order.len() {
            return Err(Error::internal("a tensor was not hashed"));
        }
        Ok(self.digests)
    }
}

/// A batch being gathered: where it starts and ends in its input, and
/// its parts.
struct Pending<'s> {
    source: &'s Source,
    start: u64,
    end: u64,
    parts: Vec<Part>,
}

/// A read handed to an I/O thread (files read directly, [`DIRECT_DEPTH`]
/// at a time), and where its result goes.
struct IoJob<'s> {
    source: &'s Source,
    start: u64,
    len: usize,
    buf: Vec<u8>,
    reply: mpsc::Sender<Read>,
}

/// A finished read: the buffer, where the bytes start in it, the bytes
/// taken from the input.
type Read = (Vec<u8>, Result<(usize, u64)>);

/// An I/O thread: runs reads until the reader hangs up.
fn run_io(jobs: &Mutex<mpsc::Receiver<IoJob<'_>>>) {
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(mut job) = job else { return };
        // Only files read directly are sent here (`Reader::send`).
        let r = job.source.read_direct(job.start, job.len, &mut job.buf).map(|base| (base, job.len as u64));
        let _ = job.reply.send((job.buf, r));
    }
}

/// Reads `len` bytes at `start` into `buf` through the page cache (or from
/// the stream), front to back: where they start in `buf` (0), and the
/// bytes taken.
fn read_buffered(source: &Source, start: u64, len: usize, buf: &mut Vec<u8>) -> Result<(usize, u64)> {
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let taken = source.read_forward(start, buf.get_mut(..len).unwrap_or(&mut []))?;
    Ok((0, taken))
}

/// A batch whose read is under way, waiting its turn to be sent.
struct Flight {
    to: usize,
    len: usize,
    parts: Vec<Part>,
    done: mpsc::Receiver<Read>,
}

/// What the reading side needs to read and send a batch.
struct Reader<'a, 'j> {
    io: mpsc::Sender<IoJob<'j>>,
    force: bool,
    /// Batches being read, in file order: sent to their threads in this
    /// order, whichever read finishes first.
    flights: std::collections::VecDeque<Flight>,
    hashers: &'a [Hasher<'a>],
    free: &'a mpsc::Receiver<Vec<u8>>,
    give_back: mpsc::SyncSender<Vec<u8>>,
    failed: &'a AtomicBool,
    progress: &'a ProgressCallback<'a>,
    /// The last job sent, by its place in the reading order, and the
    /// hashing thread it went to: a job's pieces are read one after the
    /// other, so only it can go on in the next batch (and must go there).
    owner: Option<(usize, usize)>,
    model: &'j dyn Labelled,
    /// Job indices in reading order.
    order: &'a [usize],
}

impl<'j> Reader<'_, 'j> {
    /// Every job's bytes in order, cut into pieces of whole blocks,
    /// gathered into batches of consecutive bytes (at most `largest`
    /// bytes), read and sent to the hashers.
    fn read_all(&mut self, pieces: &PieceSizes, largest: usize) -> Result<()> {
        let mut pending: Option<Pending<'_>> = None;
        for (k, &i) in self.order.iter().enumerate() {
            let job = self.model.job(i).ok_or_else(|| Error::internal("a job vanished"))?;
            let piece = pieces.read_piece(job.conversion.block) as u64;
            let mut done = 0u64;
            loop {
                let n = piece.min(job.len.saturating_sub(done));
                let start = match &pending {
                    // A zero-length tensor needs no bytes, and may sit anywhere
                    // (even inside another tensor's data): it rides with the
                    // batch being gathered, never sending the reader back.
                    Some(p) if n == 0 && std::ptr::eq(p.source, job.source) => p.end,
                    _ => job.start.saturating_add(done),
                };
                let joins = pending.as_ref().is_some_and(|p| {
                    std::ptr::eq(p.source, job.source)
                        && p.parts.len() < MAX_PARTS
                        && start >= p.end
                        && start.saturating_sub(p.end) <= MAX_GAP
                        && start.saturating_add(n).saturating_sub(p.start) <= largest as u64
                });
                if !joins {
                    if let Some(p) = pending.take() {
                        if !self.send(p)? {
                            return Ok(());
                        }
                    }
                    pending = Some(Pending { source: job.source, start, end: start, parts: Vec::new() });
                }
                if let Some(p) = pending.as_mut() {
                    let at = usize::try_from(start.saturating_sub(p.start)).unwrap_or(usize::MAX);
                    let len = usize::try_from(n).unwrap_or(0);
                    done = done.saturating_add(n);
                    p.parts.push(Part { job: k, at, len, first: done == n, last: done >= job.len });
                    p.end = start.saturating_add(n);
                }
                if done >= job.len {
                    break;
                }
            }
        }
        if let Some(p) = pending.take() {
            self.send(p)?;
        }
        while !self.flights.is_empty() {
            if !self.land()? {
                break;
            }
        }
        Ok(())
    }

    /// Starts reading a batch (on an I/O thread for a file read directly,
    /// else here) and sends the oldest batch read once too many are under
    /// way; false when hashing already failed.
    fn send(&mut self, p: Pending<'j>) -> Result<bool> {
        if self.failed.load(Ordering::Relaxed) {
            return Ok(false);
        }
        // A job already begun stays with its thread; the batch goes there,
        // and so do the jobs it begins. Otherwise, the least busy thread.
        let to = p
            .parts
            .first()
            .and_then(|part| self.owner.filter(|&(k, _)| k == part.job))
            .map(|(_, to)| to)
            .or_else(|| {
                self.hashers.iter().enumerate().min_by_key(|(_, h)| h.queued.load(Ordering::Relaxed)).map(|(i, _)| i)
            })
            .unwrap_or(0);
        if let Some(last) = p.parts.last() {
            self.owner = Some((last.job, to));
        }
        let len = usize::try_from(p.end.saturating_sub(p.start)).unwrap_or(0);
        let Ok(mut buf) = self.free.recv() else { return Ok(false) };
        let (reply, done) = mpsc::channel();
        let direct = p.source.reads_directly(self.force);
        if direct {
            let job = IoJob { source: p.source, start: p.start, len, buf, reply };
            if self.io.send(job).is_err() {
                return Err(Error::internal("the reading threads stopped"));
            }
        } else {
            // Streams and buffered files: read here, in order, and sent at
            // once (after any batch still in flight).
            let r = read_buffered(p.source, p.start, len, &mut buf);
            let _ = reply.send((buf, r));
        }
        self.flights.push_back(Flight { to, len, parts: p.parts, done });
        let keep = if direct { DIRECT_DEPTH.saturating_sub(1) } else { 0 };
        while self.flights.len() > keep {
            if !self.land()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Waits for the oldest read and sends its batch to its thread.
    fn land(&mut self) -> Result<bool> {
        let Some(f) = self.flights.pop_front() else { return Ok(true) };
        let Ok((buf, r)) = f.done.recv() else { return Ok(false) };
        // A failed read or a cancel names the batch's first tensor, as the
        // mapped path names the tensor it was hashing.
        let (model, order) = (self.model, self.order);
        let located = |e: Error| match f.parts.first().and_then(|part| order.get(part.job)).and_then(|&i| model.job(i))
        {
            Some(j) if e.subject().is_none() => e.about(j.subject),
            _ => e,
        };
        let (base, taken) = r.map_err(located)?;
        (self.progress)(taken).map_err(located)?;
        let Some(h) = self.hashers.get(f.to) else { return Ok(false) };
        h.queued.fetch_add(f.len as u64, Ordering::Relaxed);
        let free = self.give_back.clone();
        Ok(h.tx.send(Batch { buf, base, len: f.len, parts: f.parts, free }).is_ok())
    }
}

/// One hashing thread: hashes the batches it is sent, in order (each
/// buffer goes back as its batch is dropped), and puts the digest of every
/// job it finishes in `done`. `job(k)` is the index (in the model's order)
/// and the conversion of the k-th job in reading order.
fn hash_pieces(
    rx: mpsc::Receiver<Batch>,
    queued: &AtomicU64,
    job: &dyn Fn(usize) -> Option<(usize, Conversion)>,
    failed: &AtomicBool,
    done: &Mutex<Done>,
) {
    let mut hasher = JobHasher::new(Algorithm::Sha256);
    let mut broken: Option<Error> = None;
    // The job being hashed: its place in the reading order, index, conversion.
    let mut current: Option<(usize, usize, Conversion)> = None;
    for mut b in rx {
        for part in &b.parts {
            if current.is_none_or(|(k, _, _)| k != part.job) {
                current = job(part.job).map(|(i, c)| (part.job, i, c));
            }
            if part.first {
                hasher = JobHasher::new(current.map_or(Algorithm::Sha256, |(_, _, c)| c.digest));
                broken = None;
            }
            if broken.is_none() {
                let at = b.base.saturating_add(part.at);
                // Neither can happen (parts are cut inside their batch, one
                // conversion per job), but a wrong digest must never be the
                // silent answer if it did.
                let bytes = b.buf.get_mut(at..at.saturating_add(part.len));
                let converted = match (bytes, current) {
                    (Some(bytes), Some((_, _, c))) => c.apply(bytes).map(|()| bytes),
                    _ => Err(Error::internal("a piece outside its batch")),
                };
                match converted {
                    Ok(bytes) => hasher.update(&*bytes),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        broken = Some(e);
                    }
                }
            }
            if part.last {
                let h = std::mem::replace(&mut hasher, JobHasher::new(Algorithm::Sha256));
                let mut d = done.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let slot = current.and_then(|(_, i, _)| d.digests.get_mut(i));
                match (broken.take(), slot) {
                    (None, Some(slot)) => {
                        *slot = h.finalize();
                        d.hashed = d.hashed.saturating_add(1);
                    }
                    (Some(e), _) => d.errors.push((part.job, e)),
                    (None, None) => d.errors.push((part.job, Error::internal("a job vanished"))),
                }
            }
        }
        queued.fetch_sub(b.len as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest as _, Sha256};

    fn batch(free: &mpsc::SyncSender<Vec<u8>>, bytes: &[u8]) -> Batch {
        let part = Part { job: 0, at: 0, len: bytes.len(), first: true, last: true };
        Batch { buf: bytes.to_vec(), base: 0, len: bytes.len(), parts: vec![part], free: free.clone() }
    }

    #[test]
    fn every_buffer_comes_back_hashed_or_not() {
        let (free_tx, free_rx) = mpsc::sync_channel::<Vec<u8>>(4);
        let queued = AtomicU64::new(0);
        let conversion = Conversion::none(1, "U8");
        let failed = AtomicBool::new(false);
        // Hashed: the digest, and the buffer back in the pool.
        let (tx, rx) = mpsc::channel();
        tx.send(batch(&free_tx, b"abc")).unwrap();
        drop(tx);
        let done = Mutex::new(Done { digests: vec![[0; 32]], ..Done::default() });
        hash_pieces(rx, &queued, &|k| (k == 0).then_some((0, conversion)), &failed, &done);
        let want: Sha256Digest = Sha256::digest(b"abc").into();
        let done = done.into_inner().unwrap();
        assert_eq!((done.digests, done.hashed, done.errors.len()), (vec![want], 1, 0));
        assert_eq!(free_rx.try_recv().unwrap(), b"abc");
        // Never hashed (the inbox of a hashing thread that died): every
        // buffer still comes back, so the reader is not left waiting.
        let (tx, rx) = mpsc::channel();
        for b in [&b"x"[..], b"y", b"z"] {
            tx.send(batch(&free_tx, b)).unwrap();
        }
        drop(rx);
        let back: Vec<Vec<u8>> = free_rx.try_iter().collect();
        assert_eq!(back, [b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]);
    }
}
