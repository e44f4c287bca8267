//! Hashing jobs, and the finished [`Digest`] of a model. Format-neutral: a
//! format describes each tensor's data as a [`Job`] (a file, a byte range,
//! a [`Conversion`]) and builds its skeleton from the digests; this module
//! knows nothing of any format.
//!
//! Each job is one digest stream, fed in pieces whose sizes are
//! [`PieceSizes`]: SHA-256, or Git's blob SHA-1 when its [`Conversion`]'s
//! [`Algorithm`] says so (`--verify-blobs`); a job with a `Gather` feeds it
//! the elements a strided view walks rather than its whole range. By default its bytes are hashed where they lie in the
//! file's guarded map, a window at a time (faulted in with one call, dropped
//! from the process after): no copy, so hashing runs at the SHA-NI rate, and
//! memory stays at about a window per thread. Short tensors, and all of them
//! with `--no-mmap`, are read with `pread` a chunk at a time into one
//! bounded buffer. A truncation is an error either way (a guarded fault or a
//! short read), never SIGBUS.
//!
//! Big-endian data is converted to little-endian in a buffer before it is
//! hashed, and a conversion works on whole blocks only. So every piece this
//! module cuts is a whole number of blocks: a chunk is whole blocks, a
//! window is whole chunks, and a job is whole blocks (its format's parser
//! checks it). A piece that is not is a bug, and the conversion returns an
//! error for it instead of leaving its tail unconverted. See docs/adr/0003
//! and docs/adr/0005.

use sha2::{Digest as _, Sha256};

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::source::{MappedRange, Source};

/// A SHA-256 digest.
pub type Sha256Digest = [u8; 32];

/// Bytes read per `pread` by default: large enough that syscalls cost
/// nothing next to hashing, small enough to stay in the core's L2 cache.
pub const CHUNK: u64 = 256 * 1024;

/// Bytes of a mapped tensor faulted in and dropped at a time by default:
/// one madvise call each way per window keeps system time small, and the
/// resident set stays at about a window per thread.
pub const WINDOW: u64 = 8 << 20;

/// Tensors shorter than this are read, not mapped, by default: for a few
/// KiB, copying costs less than the `madvise` calls that bring a mapped
/// range in and drop it again (a drop flushes the TLB of every core running
/// another hashing thread).
pub const MIN_MAPPED: u64 = 64 << 10;

/// The sizes of the pieces tensor data is cut into on its way into SHA-256.
///
/// They decide speed and memory only, never a digest: every size is rounded
/// to whole blocks of the tensor's type before use. Tests shrink them to a
/// few hundred bytes so that small tensors cross every boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PieceSizes {
    /// Bytes of a mapped tensor faulted in, hashed and dropped at a time.
    pub window: u64,
    /// Bytes read per `pread`, and converted per buffer for big-endian data.
    pub chunk: u64,
    /// Tensors shorter than this are read with `pread`, not mapped.
    pub min_mapped: u64,
}

impl Default for PieceSizes {
    fn default() -> Self {
        PieceSizes { window: WINDOW, chunk: CHUNK, min_mapped: MIN_MAPPED }
    }
}

/// The piece sizes for one tensor, in bytes: `chunk` is a whole number of
/// blocks (at least one), `window` a whole number of chunks (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    chunk: usize,
    window: usize,
}

impl PieceSizes {
    /// The plan for data made of `block`-byte blocks.
    fn plan(&self, block: u64) -> Plan {
        let block = usize::try_from(block.max(1)).unwrap_or(usize::MAX);
        let whole = |size: u64, unit: usize| {
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            size.checked_div(unit).unwrap_or(0).max(1).saturating_mul(unit)
        };
        let chunk = whole(self.chunk, block);
        Plan { chunk, window: whole(self.window, chunk) }
    }

    /// Bytes read at a time when data is read front to back (a stream, a
    /// file not in the page cache): [`READ_CHUNKS`] chunks, so whole blocks.
    pub fn read_piece(&self, block: u64) -> usize {
        self.plan(block).chunk.saturating_mul(READ_CHUNKS)
    }
}

/// Chunks per read when data is read front to back: 1 MiB by default.
/// Larger pieces (2 MiB, with 32 MiB in flight) were slower on SmolLM2
/// cold: more fresh buffer pages to fault in, and a reader held up longer
/// behind the thread hashing the first, largest tensor (docs/adr/0016).
pub const READ_CHUNKS: usize = 4;

/// How a job's stored bytes become the bytes that are hashed: a rule
/// applied to each block of `block` bytes (reversing words or halves for
/// big-endian data; nothing for little-endian data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conversion {
    /// Bytes per block: pieces are cut at whole blocks.
    pub block: u64,
    /// What to do to each block.
    pub swap: Swap,
    /// The name of the block's type, for the one error a conversion has.
    pub type_name: &'static str,
    /// The digest the bytes go into.
    pub digest: Algorithm,
}

/// The digest a job computes. Each fits the 32 bytes of a
/// [`Sha256Digest`]; a shorter one is zero-padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// SHA-256 of the bytes (every label's data digest).
    Sha256,
    /// Git's blob object id: SHA-1 of `"blob <len>\0"` and then the `len`
    /// bytes, in the first 20 bytes (a Hugging Face cache names a blob
    /// that is not an LFS file so).
    GitBlobSha1 {
        /// The number of bytes hashed, which the header states.
        len: u64,
    },
}

/// A digest being computed, of either [`Algorithm`].
pub enum Hasher {
    /// SHA-256.
    Sha256(Sha256),
    /// Git's blob SHA-1 (its header already fed).
    Sha1(sha1::Sha1),
}

impl Hasher {
    /// A new digest of `algorithm`, its header (if any) already fed.
    pub fn new(algorithm: Algorithm) -> Hasher {
        match algorithm {
            Algorithm::Sha256 => Hasher::Sha256(Sha256::new()),
            Algorithm::GitBlobSha1 { len } => {
                let mut h = sha1::Sha1::new();
                h.update(format!("blob {len}\0").as_bytes());
                Hasher::Sha1(h)
            }
        }
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(bytes),
            Hasher::Sha1(h) => h.update(bytes),
        }
    }

    /// The digest, a SHA-1's 20 bytes followed by zeros.
    pub fn finalize(self) -> Sha256Digest {
        match self {
            Hasher::Sha256(h) => h.finalize().into(),
            Hasher::Sha1(h) => {
                let mut out = [0u8; 32];
                for (o, b) in out.iter_mut().zip(h.finalize()) {
                    *o = b;
                }
                out
            }
        }
    }
}

/// What a [`Conversion`] does to each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swap {
    /// No conversion rule is defined (a format rejects such data before it
    /// makes a job of it).
    Unsupported,
    /// The bytes are hashed as stored.
    None,
    /// Every `n`-byte word is reversed (plain integer and float types).
    Words(usize),
    /// Within each block, the 2-byte halves at these block offsets are
    /// reversed (the fp16 scales of quantized blocks); the rest is bytes.
    Halves(&'static [usize]),
    /// Bytes hashed as stored, each checked to be 0 or 1 (a bool tensor:
    /// any other byte is an error, never a label).
    Bool,
}

impl Conversion {
    /// Data hashed as stored, cut at whole `block`-byte blocks.
    pub fn none(block: u64, type_name: &'static str) -> Conversion {
        Conversion { block, swap: Swap::None, type_name, digest: Algorithm::Sha256 }
    }

    /// Bytes hashed as stored into Git's blob id of `len` bytes.
    pub fn git_blob(len: u64) -> Conversion {
        Conversion { digest: Algorithm::GitBlobSha1 { len }, ..Conversion::none(1, "blob") }
    }

    /// Converts whole blocks in place.
    ///
    /// A buffer that is not a whole number of blocks is an error, never a
    /// partial conversion: a block cut in two would have its halves swapped
    /// at the wrong offsets, or its tail left as stored. No caller hands one
    /// over (see [`PieceSizes`]); if one did, the label is refused rather
    /// than wrong.
    pub fn apply(&self, buf: &mut [u8]) -> Result<()> {
        let block = usize::try_from(self.block).unwrap_or(usize::MAX);
        if block == 0 || buf.len().checked_rem(block) != Some(0) {
            let kind =
                ErrorKind::PartialBlock { len: buf.len() as u64, type_name: self.type_name, type_size: self.block };
            return Err(Error::new(kind));
        }
        match self.swap {
            Swap::Unsupported | Swap::None => {}
            // Constant word sizes let the compiler vectorize the reversal
            // (a runtime size cost big-endian F32 models 7 % at -j1).
            Swap::Words(2) => reverse_words::<2>(buf),
            Swap::Words(4) => reverse_words::<4>(buf),
            Swap::Words(8) => reverse_words::<8>(buf),
            Swap::Words(n) => {
                for word in buf.chunks_exact_mut(n) {
                    word.reverse();
                }
            }
            Swap::Bool => {
                if let Some(i) = buf.iter().position(|&b| b > 1) {
                    let kind = ErrorKind::BoolByte(buf.get(i).copied().unwrap_or(0));
                    return Err(Error::new(kind));
                }
            }
            Swap::Halves(offsets) => {
                for b in buf.chunks_exact_mut(block) {
                    for &o in offsets {
                        if let Some(half) = b.get_mut(o..o.saturating_add(2)) {
                            half.reverse();
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The conversion's key in the verified-leaf cache: the first 8 bytes
    /// of the SHA-256 of everything that decides the digest (block, rule,
    /// algorithm; the type's name, for errors only, is left out).
    pub fn cache_tag(&self) -> u64 {
        let mut h = Sha256::new();
        h.update(b"conversion v1\0");
        h.update(self.block.to_le_bytes());
        match self.swap {
            Swap::Unsupported => h.update([0u8]),
            Swap::None => h.update([1u8]),
            Swap::Words(n) => {
                h.update([2u8]);
                h.update((n as u64).to_le_bytes());
            }
            Swap::Halves(offsets) => {
                h.update([3u8]);
                h.update((offsets.len() as u64).to_le_bytes());
                for &o in offsets {
                    h.update((o as u64).to_le_bytes());
                }
            }
            Swap::Bool => h.update([4u8]),
        }
        match self.digest {
            Algorithm::Sha256 => h.update([0u8]),
            Algorithm::GitBlobSha1 { len } => {
                h.update([1u8]);
                h.update(len.to_le_bytes());
            }
        }
        let d: [u8; 32] = h.finalize().into();
        u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
    }

    /// True when bytes are hashed as stored (no copy needed).
    fn is_identity(&self) -> bool {
        matches!(self.swap, Swap::None | Swap::Unsupported)
    }
}

/// Reverses every `N`-byte word of `buf` (a whole number of words).
fn reverse_words<const N: usize>(buf: &mut [u8]) {
    for word in buf.chunks_exact_mut(N) {
        word.reverse();
    }
}

/// A strided walk over a job's range: the elements of a view (a
/// transposed or expanded tensor, a slice of a larger storage) in
/// row-major order of `size`, element `index` read at `offset + Σ index[i]
/// × stride[i]` elements from the range's start, each converted by the
/// job's `Conversion` (whose block is the element). Memory stays at a
/// chunk and, when the range is not mapped, a window: nothing in
/// proportion to the tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gather {
    /// Bytes per element (the conversion's block).
    pub elem: u64,
    /// The first element read, in elements from the range's start.
    pub offset: u64,
    /// The view's shape.
    pub size: Vec<u64>,
    /// Its strides, in elements.
    pub stride: Vec<u64>,
}

/// One hashing job: `len` bytes at `start` in `source`, converted by
/// `conversion`, into one digest (SHA-256, or the conversion's other
/// [`Algorithm`]); or, with a `Gather`, the elements it
/// walks in that range. What a format hands the core per tensor.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The file holding the bytes.
    pub source: &'a Source,
    /// The file position of the first byte.
    pub start: u64,
    /// The number of bytes.
    pub len: u64,
    /// How the stored bytes become the hashed ones.
    pub conversion: Conversion,
    /// The tensor it hashes, named in errors.
    pub subject: Subject,
    /// When set, the elements this walk reads from the range, not the range.
    pub gather: Option<std::sync::Arc<Gather>>,
}

/// Told the size of every piece as it is hashed. An error it returns (a
/// cancelled run: [`ErrorKind::Cancelled`]) stops the hashing there.
pub type ProgressCallback<'a> = dyn Fn(u64) -> Result<()> + Sync + 'a;

/// Hashes one job in pieces of `pieces`; `progress` is called with each
/// piece's size after it is hashed. With the verified-leaf cache attached
/// to its file, a job the cache holds is answered without a read (its
/// whole length reported at once), and one it does not is noted for it.
pub fn hash_job(job: &Job<'_>, pieces: &PieceSizes, progress: &ProgressCallback<'_>) -> Result<Sha256Digest> {
    let located = |e: Error| e.about(job.subject.clone());
    let plan = pieces.plan(job.conversion.block);
    // A gathered view is never cached: its key would have to bind the
    // view's shape and strides, not only the range it reads (two views of
    // one storage read the same range in other orders).
    if let Some(g) = &job.gather {
        return hash_gathered(job, g, plan, pieces.min_mapped, progress).map_err(located);
    }
    // The tag only with the cache on: a model of a million tensors would
    // otherwise pay a million small hashes for nothing.
    let tag = job.source.cache_attached().then(|| job.conversion.cache_tag());
    if let Some(d) = tag.and_then(|tag| job.source.cached_leaf(job.start, job.len, tag)) {
        progress(job.len).map_err(located)?;
        return Ok(d);
    }
    let d = match job.source.map_range(job.start, job.len, pieces.min_mapped).map_err(located)? {
        Some(range) => hash_mapped(&range, job, plan, progress).map_err(located)?,
        None => hash_read(job, plan, progress).map_err(located)?,
    };
    if let Some(tag) = tag {
        job.source.note_leaf(job.start, job.len, tag, d);
    }
    Ok(d)
}

/// Streams a mapped range: data hashed as stored is hashed where it lies,
/// with no copy; converted data goes through a chunk-sized buffer.
fn hash_mapped(
    range: &MappedRange,
    job: &Job<'_>,
    plan: Plan,
    progress: &ProgressCallback<'_>,
) -> Result<Sha256Digest> {
    let mut hasher = Hasher::new(job.conversion.digest);
    let mut converted = Vec::new();
    let mut done = 0usize;
    for window in range.bytes().chunks(plan.window) {
        range.populate(done, window.len());
        let start = done;
        for part in window.chunks(plan.chunk) {
            if job.conversion.is_identity() {
                hasher.update(part);
            } else {
                converted.clear();
                converted.extend_from_slice(part);
                job.conversion.apply(&mut converted)?;
                hasher.update(&converted);
            }
            progress(part.len() as u64)?;
        }
        done = done.saturating_add(window.len());
        range.release(start, done);
        // A truncated file reads as zeros from here on: stop, not hash them.
        range.check(job.source.path())?;
        // A writer opened the file: stop here, and let it go on.
        job.source.check_lease()?;
    }
    Ok(hasher.finalize())
}

/// Streams a range with `pread` into one chunk-sized buffer.
fn hash_read(job: &Job<'_>, plan: Plan, progress: &ProgressCallback<'_>) -> Result<Sha256Digest> {
    let chunk = plan.chunk as u64;
    let mut buf = vec![0u8; usize::try_from(chunk.min(job.len)).unwrap_or(0)];
    let mut hasher = Hasher::new(job.conversion.digest);
    let mut done = 0u64;
    while done < job.len {
        let n = chunk.min(job.len.saturating_sub(done));
        let part = buf.get_mut(..usize::try_from(n).unwrap_or(0)).unwrap_or(&mut []);
        job.source.read_exact_at(part, job.start.saturating_add(done))?;
        job.conversion.apply(part)?;
        hasher.update(&*part);
        done = done.saturating_add(n);
        progress(n)?;
    }
    Ok(hasher.finalize())
}

/// Reads the bytes of a gather's elements: from the mapped range, or
/// with `pread` (through one window of the range for single elements).
struct Elements<'j, 'a> {
    job: &'j Job<'a>,
    mapped: Option<&'j MappedRange<'a>>,
    window: Vec<u8>,
    window_at: u64,
    window_cap: u64,
}

fn outside() -> Error {
    Error::internal("a gathered element outside its job's range")
}

impl Elements<'_, '_> {
    /// Appends `len` bytes at `pos` (from the range's start) to `out`,
    /// through the window when unmapped (for walks of single elements).
    fn copy(&mut self, pos: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
        if pos.checked_add(len).is_none_or(|e| e > self.job.len) {
            return Err(outside());
        }
        if self.mapped.is_some() {
            return self.read(pos, len, out);
        }
        let (mut pos, mut len) = (pos, len);
        while len > 0 {
            let end = self.window_at.saturating_add(self.window.len() as u64);
            if pos < self.window_at || pos >= end {
                let n = self.window_cap.max(1).min(self.job.len.saturating_sub(pos));
                self.window.resize(usize::try_from(n).map_err(|_| outside())?, 0);
                self.job.source.read_exact_at(&mut self.window, self.job.start.saturating_add(pos))?;
                self.window_at = pos;
                continue;
            }
            let n = len.min(end.saturating_sub(pos));
            let s = usize::try_from(pos.saturating_sub(self.window_at)).map_err(|_| outside())?;
            let e = s.saturating_add(usize::try_from(n).map_err(|_| outside())?);
            out.extend_from_slice(self.window.get(s..e).ok_or_else(outside)?);
            pos = pos.saturating_add(n);
            len = len.saturating_sub(n);
        }
        Ok(())
    }

    /// Appends exactly the `len` bytes at `pos` to `out`: from the map, or
    /// with one `pread` of them (a tile's run, read once).
    fn read(&mut self, pos: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
        let end = pos.checked_add(len).filter(|&e| e <= self.job.len).ok_or_else(outside)?;
        if let Some(m) = self.mapped {
            let (s, e) = (usize::try_from(pos).map_err(|_| outside())?, usize::try_from(end).map_err(|_| outside())?);
            out.extend_from_slice(m.bytes().get(s..e).ok_or_else(outside)?);
            return Ok(());
        }
        let at = out.len();
        let to = at.checked_add(usize::try_from(len).map_err(|_| outside())?).ok_or_else(outside)?;
        out.resize(to, 0);
        let part = out.get_mut(at..to).ok_or_else(outside)?;
        self.job.source.read_exact_at(part, self.job.start.saturating_add(pos))
    }
}

/// Where gathered bytes go: a chunk-sized buffer, converted, hashed and
/// reported each time it fills (a chunk is whole elements, and every push
/// is whole elements, so each piece converted is whole blocks).
struct Sink<'j, 'a, 'p> {
    job: &'j Job<'a>,
    mapped: Option<&'j MappedRange<'a>>,
    hasher: Hasher,
    out: Vec<u8>,
    chunk: usize,
    reported: u64,
    progress: &'p ProgressCallback<'p>,
}

impl Sink<'_, '_, '_> {
    /// Bytes the buffer takes before it is hashed.
    fn room(&self) -> usize {
        self.chunk.saturating_sub(self.out.len())
    }

    /// Hashes the buffer once it holds a chunk.
    fn filled(&mut self) -> Result<()> {
        if self.out.len() >= self.chunk { self.flush() } else { Ok(()) }
    }

    /// Hashes `bytes` (whole elements, hashed as stored: the conversion is
    /// the identity) after what the buffer holds, where they lie.
    fn hash_stored(&mut self, bytes: &[u8]) -> Result<()> {
        if !self.out.is_empty() {
            self.flush()?;
        }
        for part in bytes.chunks(self.chunk.max(1)) {
            self.hasher.update(part);
            self.report(part.len())?;
        }
        Ok(())
    }

    /// Hashes `buf` (whole elements) after what the buffer holds, in
    /// place: converted where it is, not copied into the buffer.
    fn hash_whole(&mut self, buf: &mut [u8]) -> Result<()> {
        if !self.out.is_empty() {
            self.flush()?;
        }
        self.job.conversion.apply(buf)?;
        self.hasher.update(buf);
        self.report(buf.len())
    }

    fn flush(&mut self) -> Result<()> {
        self.job.conversion.apply(&mut self.out)?;
        self.hasher.update(&self.out);
        let len = self.out.len();
        self.out.clear();
        self.report(len)
    }

    /// Reports `len` bytes hashed (at most the job's length in all), then
    /// checks that the file is still whole and not being written.
    fn report(&mut self, len: usize) -> Result<()> {
        let n = (len as u64).min(self.job.len.saturating_sub(self.reported));
        self.reported = self.reported.saturating_add(n);
        (self.progress)(n)?;
        if let Some(m) = self.mapped {
            m.check(self.job.source.path())?;
        }
        self.job.source.check_lease()
    }
}

fn overflow() -> Error {
    Error::internal("a gather's index overflows")
}

/// Advances `idx` over `size` in row-major order (last dimension fastest);
/// false once every index has been visited.
fn next_index(idx: &mut [u64], size: &[u64]) -> bool {
    for (i, &s) in idx.iter_mut().zip(size).rev() {
        *i = i.saturating_add(1);
        if *i < s {
            return true;
        }
        *i = 0;
    }
    false
}

/// `base + Σ idx[i] × stride[i]`, checked.
fn position(base: u64, idx: &[u64], stride: &[u64]) -> Result<u64> {
    idx.iter()
        .zip(stride)
        .try_fold(base, |b, (i, s)| i.checked_mul(*s).and_then(|v| v.checked_add(b)).ok_or_else(overflow))
}

/// Hashes the elements a `Gather` walks, a chunk at a time.
///
/// Dimensions of size 1 are dropped first (their stride reads nothing).
/// Then the walk takes the fastest of three shapes, all of which hash the
/// same bytes in the same (row-major) order:
/// - the last dimension has stride 1: its rows are contiguous runs, copied
///   a chunk at a time;
/// - another dimension `p` has stride 1 (a transpose, a permutation): the
///   output is cut into tiles of `b` consecutive indices of `p` (for each
///   index of the dimensions before it); a tile's source is, for each index
///   of the dimensions after `p`, one contiguous run of `b` elements, read
///   once (one `pread` each, or from the map), and the tile is then
///   transposed in memory in cache-sized blocks and hashed. A tile and its
///   transposed copy hold at most a window of bytes between them, so each
///   source byte is read once and memory stays bounded;
/// - otherwise (no stride 1, or one index of `p` alone is more than a
///   window) element by element, through a window of the range.
fn hash_gathered(
    job: &Job<'_>,
    g: &Gather,
    plan: Plan,
    min_mapped: u64,
    progress: &ProgressCallback<'_>,
) -> Result<Sha256Digest> {
    let numel = g
        .size
        .iter()
        .try_fold(1u64, |a, &s| a.checked_mul(s))
        .ok_or_else(|| Error::internal("a gather's size overflows"))?;
    if numel == 0 || g.elem == 0 || g.size.len() != g.stride.len() {
        return Ok(Hasher::new(job.conversion.digest).finalize());
    }
    let (size, stride): (Vec<u64>, Vec<u64>) = g.size.iter().zip(&g.stride).filter(|(s, _)| **s != 1).unzip();
    let mapped = job.source.map_range(job.start, job.len, min_mapped)?;
    let mut elements =
        Elements { job, mapped: mapped.as_ref(), window: Vec::new(), window_at: 0, window_cap: plan.window as u64 };
    let chunk = plan.chunk;
    let mut sink = Sink {
        job,
        mapped: mapped.as_ref(),
        hasher: Hasher::new(job.conversion.digest),
        out: Vec::with_capacity(chunk.min(usize::try_from(numel.saturating_mul(g.elem)).unwrap_or(chunk))),
        chunk,
        reported: 0,
        progress,
    };
    let last_contiguous = stride.last().is_none_or(|&t| t == 1);
    let tile_dim = (!last_contiguous)
        .then(|| stride.iter().rposition(|&t| t == 1))
        .flatten()
        .filter(|&p| tile_row_bytes(&size, p, g.elem).is_some_and(|r| r <= plan.window as u64));
    match tile_dim {
        Some(p) => walk_tiles(g, &size, &stride, p, plan.window as u64, &mut elements, &mut sink)?,
        None => walk_rows(g, &size, &stride, &mut elements, &mut sink)?,
    }
    if !sink.out.is_empty() {
        sink.flush()?;
    }
    let rest = job.len.saturating_sub(sink.reported);
    if rest > 0 {
        progress(rest)?;
    }
    if let Some(m) = &mapped {
        m.release(0, m.bytes().len());
    }
    Ok(sink.hasher.finalize())
}

/// The bytes of one index of dimension `p`: the elements of every
/// dimension after it.
fn tile_row_bytes(size: &[u64], p: usize, elem: u64) -> Option<u64> {
    size.get(p.checked_add(1)?..)?.iter().try_fold(elem, |a, &s| a.checked_mul(s))
}

/// The walk in tiles over dimension `p` (stride 1; see [`hash_gathered`]).
///
/// A tile is `b` consecutive indices of `p` by every index of the
/// dimensions after it (its "runs": `b` elements each, contiguous in the
/// source). The runs are taken a group at a time ([`group_runs`]),
/// straight from the map or read with one `pread` each, and written
/// transposed into the tile's output, which is then hashed as it is (no
/// copy into the sink's buffer).
fn walk_tiles(
    g: &Gather,
    size: &[u64],
    stride: &[u64],
    p: usize,
    budget: u64,
    elements: &mut Elements<'_, '_>,
    sink: &mut Sink<'_, '_, '_>,
) -> Result<()> {
    let (outer_size, rest_size) = size.split_at_checked(p).ok_or_else(overflow)?;
    let (outer_stride, rest_stride) = stride.split_at_checked(p).ok_or_else(overflow)?;
    let (Some((&len_p, inner_size)), Some((_, inner_stride))) = (rest_size.split_first(), rest_stride.split_first())
    else {
        return Err(overflow());
    };
    let row = tile_row_bytes(size, p, g.elem).ok_or_else(overflow)?;
    let runs = usize::try_from(row.checked_div(g.elem).ok_or_else(overflow)?).map_err(|_| overflow())?;
    let elem = usize::try_from(g.elem).map_err(|_| overflow())?;
    // The tile's output and (unmapped) a group's runs: a window between them.
    let per_tile = budget.checked_div(2).and_then(|h| h.checked_div(row)).unwrap_or(1).max(1).min(len_p);
    let cap = usize::try_from(per_tile.saturating_mul(row)).map_err(|_| overflow())?;
    let mut flipped: Vec<u8> = Vec::with_capacity(cap);
    let mut read: Vec<u8> = Vec::new();
    let mut outer = vec![0u64; outer_size.len()];
    let mut inner = vec![0u64; inner_size.len()];
    let mut group = [0u64; GROUP];
    let per_group = group_runs(elem);
    loop {
        let base = position(g.offset, &outer, outer_stride)?;
        let mut first = 0u64;
        while first < len_p {
            let b = per_tile.min(len_p.saturating_sub(first));
            let bu = usize::try_from(b).map_err(|_| overflow())?;
            let run = b.checked_mul(g.elem).ok_or_else(overflow)?;
            flipped.clear();
            flipped.resize(bu.checked_mul(runs).and_then(|n| n.checked_mul(elem)).ok_or_else(overflow)?, 0);
            inner.fill(0);
            let start = base.checked_add(first).ok_or_else(overflow)?;
            // Runs `q .. q + n` of the tile: their positions, then their bytes.
            let (mut q, mut n) = (0usize, 0usize);
            loop {
                let at = position(start, &inner, inner_stride)?.checked_mul(g.elem).ok_or_else(overflow)?;
                *group.get_mut(n).ok_or_else(overflow)? = at;
                n = n.saturating_add(1);
                let more = next_index(&mut inner, inner_size);
                if n == per_group || !more {
                    let at = group.get(..n).ok_or_else(overflow)?;
                    let mut slices: [&[u8]; GROUP] = [&[]; GROUP];
                    if let Some(m) = elements.mapped {
                        for (s, &pos) in slices.iter_mut().zip(at) {
                            *s = mapped_run(m, elements.job.len, pos, run)?;
                        }
                    } else {
                        read.clear();
                        for &pos in at {
                            elements.read(pos, run, &mut read)?;
                        }
                        let each = usize::try_from(run).map_err(|_| overflow())?.max(1);
                        for (s, r) in slices.iter_mut().zip(read.chunks(each)) {
                            *s = r;
                        }
                    }
                    let src = slices.get(..n).ok_or_else(overflow)?;
                    match elem {
                        1 => transpose::<u8>(src, &mut flipped, bu, runs, q),
                        2 => transpose::<u16>(src, &mut flipped, bu, runs, q),
                        4 => transpose::<u32>(src, &mut flipped, bu, runs, q),
                        8 => transpose::<u64>(src, &mut flipped, bu, runs, q),
                        _ => transpose_any(src, &mut flipped, bu, runs, q, elem),
                    }
                    .ok_or_else(overflow)?;
                    q = q.saturating_add(n);
                    n = 0;
                }
                if !more {
                    break;
                }
            }
            sink.hash_whole(&mut flipped)?;
            first = first.saturating_add(b);
        }
        if !next_index(&mut outer, outer_size) {
            return Ok(());
        }
    }
}

/// `len` bytes at `pos` of a job's mapped range.
fn mapped_run<'m>(m: &'m MappedRange<'_>, job_len: u64, pos: u64, len: u64) -> Result<&'m [u8]> {
    let end = pos.checked_add(len).filter(|&e| e <= job_len).ok_or_else(outside)?;
    let (s, e) = (usize::try_from(pos).map_err(|_| outside())?, usize::try_from(end).map_err(|_| outside())?);
    m.bytes().get(s..e).ok_or_else(outside)
}

/// Elements per side of a block transposed in registers.
const BLOCK: usize = 8;

/// The most runs transposed at a time: a group is 64 bytes of each row
/// (one cache line written whole), and at least a block.
const GROUP: usize = 64;

/// The runs of a group for `elem`-byte elements: 64 bytes' worth, at least
/// [`BLOCK`].
fn group_runs(elem: usize) -> usize {
    GROUP.checked_div(elem).unwrap_or(0).clamp(BLOCK, GROUP)
}

/// An element of 1, 2, 4 or 8 bytes as an integer, so that a block is
/// transposed in registers. Read and written in one byte order, so the
/// bytes are moved unchanged on any host.
trait Lane: Copy + Default {
    /// Bytes per element.
    const E: usize;
    /// The element at the start of `b` (which holds at least `E` bytes).
    fn load(b: &[u8]) -> Option<Self>;
    /// Writes the element into `b` (exactly `E` bytes).
    fn store(self, b: &mut [u8]) -> Option<()>;
}

macro_rules! lane {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            const E: usize = size_of::<$t>();
            fn load(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(*b.first_chunk()?))
            }
            fn store(self, b: &mut [u8]) -> Option<()> {
                b.first_chunk_mut::<{ size_of::<$t>() }>()?.copy_from_slice(&self.to_le_bytes());
                Some(())
            }
        }
    )*};
}
lane!(u8, u16, u32, u64);

/// Writes `src` (runs `q0 ..` of a tile, each `b` elements of `T`)
/// transposed into `to`, which holds `b` rows of `runs` elements:
/// `to[i][q0 + k] = src[k][i]`. `None` if a buffer is shorter than that (a
/// bug). Blocks of [`BLOCK`] × [`BLOCK`] elements go through registers;
/// a group of 64 bytes of runs fills whole cache lines of each row.
fn transpose<T: Lane>(src: &[&[u8]], to: &mut [u8], b: usize, runs: usize, q0: usize) -> Option<()> {
    let pitch = runs.checked_mul(T::E)?;
    let seg = BLOCK.checked_mul(T::E)?;
    let whole_rows = b.checked_div(BLOCK)?.checked_mul(BLOCK)?;
    let whole_runs = src.len().checked_div(BLOCK)?.checked_mul(BLOCK)?;
    for i0 in (0..whole_rows).step_by(BLOCK) {
        let from = i0.checked_mul(T::E)?;
        for (k0, block) in src.chunks_exact(BLOCK).enumerate() {
            let mut m = [[T::default(); BLOCK]; BLOCK];
            for (k, s) in block.iter().enumerate() {
                let s = s.get(from..from.checked_add(seg)?)?;
                for (row, e) in m.iter_mut().zip(s.chunks_exact(T::E)) {
                    *row.get_mut(k)? = T::load(e)?;
                }
            }
            let col = k0.checked_mul(BLOCK)?.checked_add(q0)?.checked_mul(T::E)?;
            for (j, row) in m.iter().enumerate() {
                let at = i0.checked_add(j)?.checked_mul(pitch)?.checked_add(col)?;
                let out = to.get_mut(at..at.checked_add(seg)?)?;
                for (v, o) in row.iter().zip(out.chunks_exact_mut(T::E)) {
                    v.store(o)?;
                }
            }
        }
    }
    // The rest, an element at a time: the runs after the last whole block
    // (every row), and every run of the rows after the last whole block.
    let rest = src.get(whole_runs..)?;
    for i in 0..b {
        let (runs_from, part) = if i < whole_rows { (whole_runs, rest) } else { (0, src) };
        let at = i.checked_mul(pitch)?.checked_add(q0.checked_add(runs_from)?.checked_mul(T::E)?)?;
        let out = to.get_mut(at..at.checked_add(part.len().checked_mul(T::E)?)?)?;
        let from = i.checked_mul(T::E)?;
        for (s, o) in part.iter().zip(out.chunks_exact_mut(T::E)) {
            T::load(s.get(from..)?)?.store(o)?;
        }
    }
    Some(())
}

/// [`transpose`] for an element size without its own copy.
fn transpose_any(src: &[&[u8]], to: &mut [u8], b: usize, runs: usize, q0: usize, elem: usize) -> Option<()> {
    let pitch = runs.checked_mul(elem)?;
    let col = q0.checked_mul(elem)?;
    let width = src.len().checked_mul(elem)?;
    for i in 0..b {
        let at = i.checked_mul(pitch)?.checked_add(col)?;
        let out = to.get_mut(at..at.checked_add(width)?)?;
        let from = i.checked_mul(elem)?;
        for (s, o) in src.iter().zip(out.chunks_exact_mut(elem)) {
            o.copy_from_slice(s.get(from..from.checked_add(elem)?)?);
        }
    }
    Some(())
}

/// The walk row by row: contiguous runs when the last dimension has
/// stride 1, else element by element.
fn walk_rows(
    g: &Gather,
    size: &[u64],
    stride: &[u64],
    elements: &mut Elements<'_, '_>,
    sink: &mut Sink<'_, '_, '_>,
) -> Result<()> {
    let (inner, inner_stride) = match (size.last(), stride.last()) {
        (Some(&s), Some(&t)) => (s, t),
        _ => (1, 1),
    };
    let outer = size.len().saturating_sub(1);
    let (outer_size, outer_stride) = (size.get(..outer).unwrap_or(&[]), stride.get(..outer).unwrap_or(&[]));
    let mut idx = vec![0u64; outer];
    loop {
        let base = position(g.offset, &idx, outer_stride)?;
        if inner_stride == 1 {
            let mut left = inner.checked_mul(g.elem).ok_or_else(overflow)?;
            let mut pos = base.checked_mul(g.elem).ok_or_else(overflow)?;
            // A mapped run of a chunk or more hashed as stored is hashed
            // where it lies (a tensor sharing its storage, a row of a slice);
            // else copied a chunk at a time.
            if let Some(m) = elements.mapped.filter(|_| left >= sink.chunk as u64 && sink.job.conversion.is_identity())
            {
                sink.hash_stored(mapped_run(m, sink.job.len, pos, left)?)?;
                left = 0;
            }
            while left > 0 {
                let n = left.min((sink.room() as u64).max(g.elem));
                elements.copy(pos, n, &mut sink.out)?;
                pos = pos.saturating_add(n);
                left = left.saturating_sub(n);
                sink.filled()?;
            }
        } else {
            for j in 0..inner {
                let e = j.checked_mul(inner_stride).and_then(|v| v.checked_add(base)).ok_or_else(overflow)?;
                elements.copy(e.checked_mul(g.elem).ok_or_else(overflow)?, g.elem, &mut sink.out)?;
                sink.filled()?;
            }
        }
        if !next_index(&mut idx, outer_size) {
            return Ok(());
        }
    }
}

/// A model's label, with the data digest of every job. The skeleton is
/// not kept: it is hashed as the format writes it (a model of a million
/// tensors has a skeleton of ~100 MB), and written again on request
/// (`Labelled::skeleton`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    label: Sha256Digest,
    tensor_sha256: Vec<Sha256Digest>,
}

impl Digest {
    /// The digest of a skeleton that `write` hands, a piece at a time, to
    /// the sink it is given; `tensor_sha256` are the jobs' digests (in the
    /// format's tensor order) it was written from.
    pub fn of_skeleton(
        tensor_sha256: Vec<Sha256Digest>,
        write: impl FnOnce(&[Sha256Digest], &mut dyn FnMut(&[u8])) -> Result<()>,
    ) -> Result<Digest> {
        let mut hasher = Sha256::new();
        write(&tensor_sha256, &mut |piece| hasher.update(piece))?;
        Ok(Digest { label: hasher.finalize().into(), tensor_sha256 })
    }

    /// The digest of a skeleton already hashed into `label`.
    pub fn from_label(label: Sha256Digest, tensor_sha256: Vec<Sha256Digest>) -> Digest {
        Digest { label, tensor_sha256 }
    }

    /// The label as 64 lowercase hex digits.
    pub fn label(&self) -> String {
        hex::encode(self.label)
    }

    /// The label's 32 bytes.
    pub fn label_bytes(&self) -> &Sha256Digest {
        &self.label
    }

    /// The SHA-256 of each tensor's data, in the model's tensor order.
    pub fn tensor_sha256(&self) -> &[Sha256Digest] {
        &self.tensor_sha256
    }
}

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_whole_blocks_and_windows_whole_chunks() {
        let sizes = [0, 1, 2, 17, 33, 34, 35, 143, 144, 145, 210, 1000, 4096, CHUNK, WINDOW, u64::MAX];
        for block in [1, 2, 4, 8, 17, 18, 34, 36, 54, 144, 210, 292] {
            for chunk in sizes {
                for window in sizes {
                    let p = PieceSizes { window, chunk, min_mapped: 0 }.plan(block);
                    let b = block as usize;
                    assert!(p.chunk >= b && p.chunk % b == 0, "block {block}, chunk {chunk}: {p:?}");
                    assert!(p.window >= p.chunk && p.window % p.chunk == 0, "block {block}, window {window}: {p:?}");
                    // Never more than asked for, unless one block (or chunk) is more.
                    assert!(p.chunk as u64 <= chunk.max(block), "{p:?}");
                    assert!(p.window as u64 <= window.max(p.chunk as u64), "{p:?}");
                }
            }
        }
    }

    #[test]
    fn a_partial_block_is_an_error_for_every_rule() {
        // Whatever the rule (none, words, halves), a buffer that is not
        // whole blocks is refused and left untouched, never half converted.
        let rules = [(4, Swap::Words(4)), (34, Swap::Halves(&[0])), (144, Swap::Halves(&[0, 2])), (17, Swap::None)];
        for (block, swap) in rules {
            let c = Conversion { block, swap, type_name: "T", digest: Algorithm::Sha256 };
            let size = block as usize;
            for len in [1, size - 1, size + 1, 2 * size + size / 2] {
                let mut buf: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let before = buf.clone();
                let e = c.apply(&mut buf).unwrap_err();
                assert!(
                    matches!(e.kind(), ErrorKind::PartialBlock { len: l, .. } if *l == len as u64),
                    "{swap:?}: {e}"
                );
                assert_eq!(buf, before, "{swap:?}");
            }
            c.apply(&mut vec![0u8; 3 * size]).unwrap();
            c.apply(&mut []).unwrap();
        }
    }

    #[test]
    fn a_git_blob_id_is_sha1_of_its_header_and_bytes() {
        // `git hash-object` of an empty file and of "hello\n".
        let id = |bytes: &[u8]| {
            let mut h = Hasher::new(Algorithm::GitBlobSha1 { len: bytes.len() as u64 });
            h.update(bytes);
            h.finalize()
        };
        assert_eq!(hex::encode(&id(b"")[..20]), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(hex::encode(id(b"hello\n")), format!("ce013625030ba8dba906f756967f9e9ca394464a{}", "0".repeat(24)));
        let mut h = Hasher::new(Algorithm::Sha256);
        h.update(b"abc");
        assert_eq!(h.finalize(), <[u8; 32]>::from(Sha256::digest(b"abc")));
    }

    #[test]
    fn tiles_are_transposed_group_by_group_as_element_by_element() {
        // Every element size, tiles of rows not a multiple of the block,
        // groups of fewer runs than a group or a block, at every column.
        for elem in [1usize, 2, 3, 4, 8, 16] {
            for b in [1usize, 2, 7, 8, 9, 16, 17, 33] {
                for runs in [1usize, 3, 8, 13, 24, 70, 130] {
                    // The tile's runs: run q is b elements, element i of it
                    // bytes (q, i, byte) encoded so that each is distinct.
                    let run = |q: usize| -> Vec<u8> {
                        (0..b * elem).map(|x| (q * 131 + (x / elem) * 7 + (x % elem) * 29) as u8).collect()
                    };
                    let all: Vec<Vec<u8>> = (0..runs).map(run).collect();
                    let mut want = vec![0u8; b * runs * elem];
                    for (q, r) in all.iter().enumerate() {
                        for i in 0..b {
                            let d = (i * runs + q) * elem;
                            want[d..d + elem].copy_from_slice(&r[i * elem..(i + 1) * elem]);
                        }
                    }
                    let mut got = vec![0xAAu8; want.len()];
                    let g = group_runs(elem);
                    for q0 in (0..runs).step_by(g) {
                        let src: Vec<&[u8]> = all[q0..runs.min(q0 + g)].iter().map(Vec::as_slice).collect();
                        let done = match elem {
                            1 => transpose::<u8>(&src, &mut got, b, runs, q0),
                            2 => transpose::<u16>(&src, &mut got, b, runs, q0),
                            4 => transpose::<u32>(&src, &mut got, b, runs, q0),
                            8 => transpose::<u64>(&src, &mut got, b, runs, q0),
                            _ => transpose_any(&src, &mut got, b, runs, q0, elem),
                        };
                        assert_eq!(done, Some(()), "elem {elem} b {b} runs {runs} q0 {q0}");
                    }
                    assert_eq!(got, want, "elem {elem} b {b} runs {runs}");
                    // A buffer too short is refused, never indexed past.
                    if elem <= 8 {
                        let src: Vec<&[u8]> = all.iter().take(group_runs(elem)).map(Vec::as_slice).collect();
                        let mut short = vec![0u8; want.len() - 1];
                        let r = match elem {
                            1 => transpose::<u8>(&src, &mut short, b, runs, 0),
                            2 => transpose::<u16>(&src, &mut short, b, runs, 0),
                            4 => transpose::<u32>(&src, &mut short, b, runs, 0),
                            _ => transpose::<u64>(&src, &mut short, b, runs, 0),
                        };
                        // Only the last row reaches the missing byte, and only
                        // when this group is the last one.
                        if runs <= group_runs(elem) {
                            assert_eq!(r, None, "elem {elem} b {b} runs {runs}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gathered_views_hash_their_elements_in_row_major_order() {
        // Views of one file's bytes walked every way (contiguous rows of a
        // slice, hashed where they lie or copied; transposes in tiles; a
        // permutation; an expanded dimension; element by element), in both
        // read modes and with pieces from one byte to the defaults, against
        // the digest of the elements picked one by one.
        let bytes: Vec<u8> = (0..40_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, &bytes).unwrap();
        // (elem, offset, size, stride), all inside the file from byte 16.
        let views: &[(u64, u64, &[u64], &[u64])] = &[
            (4, 3, &[20, 30], &[40, 1]),
            (2, 0, &[64, 96], &[1, 64]),
            (4, 5, &[37, 29], &[1, 37]),
            (1, 0, &[33, 70], &[1, 33]),
            (8, 0, &[6, 7, 5], &[1, 30, 6]),
            (2, 1, &[4, 1, 50, 9], &[450, 7, 1, 50]),
            (4, 0, &[12, 3], &[0, 1]),
            (2, 0, &[10, 11], &[11, 1]),
            (4, 2, &[9, 8], &[3, 31]),
            (3, 0, &[17, 19], &[1, 17]),
        ];
        let pieces = [
            PieceSizes { window: 1, chunk: 1, min_mapped: 0 },
            PieceSizes { window: 64, chunk: 16, min_mapped: 0 },
            PieceSizes { window: 1000, chunk: 40, min_mapped: 0 },
            PieceSizes { window: 4096, chunk: 512, min_mapped: 0 },
            PieceSizes::default(),
        ];
        for &(elem, offset, size, stride) in views {
            let mut want = Sha256::new();
            let mut idx = vec![0u64; size.len()];
            let mut last = 0;
            if size.iter().all(|&s| s > 0) {
                loop {
                    let e = offset + idx.iter().zip(stride).map(|(i, s)| i * s).sum::<u64>();
                    let at = (16 + e * elem) as usize;
                    want.update(&bytes[at..at + elem as usize]);
                    last = last.max(e);
                    if !next_index(&mut idx, size) {
                        break;
                    }
                }
            }
            let want: Sha256Digest = want.finalize().into();
            let g = Gather { elem, offset, size: size.to_vec(), stride: stride.to_vec() };
            for mode in [crate::source::ReadMode::Mmap, crate::source::ReadMode::Pread] {
                let source = Source::open(&path, mode).unwrap();
                let job = Job {
                    source: &source,
                    start: 16,
                    len: (last + 1) * elem,
                    conversion: Conversion::none(elem, "T"),
                    subject: Subject::Tensor(b"t".to_vec()),
                    gather: Some(std::sync::Arc::new(g.clone())),
                };
                for pieces in pieces {
                    let reported = std::sync::atomic::AtomicU64::new(0);
                    let progress = |n: u64| {
                        reported.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                        Ok(())
                    };
                    let got = hash_job(&job, &pieces, &progress).unwrap();
                    let what = format!("{g:?} {mode:?} {pieces:?}");
                    assert_eq!(hex::encode(got), hex::encode(want), "{what}");
                    assert_eq!(reported.into_inner(), job.len, "{what}: progress is the job's length");
                }
            }
        }
    }

    #[test]
    fn default_sizes_for_little_endian_bytes_are_unchanged() {
        // Block 1 (and 4) divides both defaults: the plan is the defaults.
        for block in [1, 2, 4] {
            let p = PieceSizes::default().plan(block);
            assert_eq!((p.chunk as u64, p.window as u64), (CHUNK, WINDOW));
        }
    }
}
