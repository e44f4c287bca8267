//! A job with a strided [`Gather`]: the elements of a view hashed in
//! row-major order, by rows, in tiles, or element by element.

use super::transpose::{GROUP, group_runs, transpose};
use super::{Hasher, Job, Plan, ProgressCallback, Sha256Digest};
use crate::error::{Error, Result};
use crate::source::MappedRange;

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
pub(super) fn hash_gathered(
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
    // The tile's output is a quarter of a window (2 MiB by default): two
    // hashing threads' tiles then stay in the shared L3 cache between the
    // transpose and SHA-256 (half a window cost ~25 % more, BENCHMARKS
    // "Views, session 14"); with a group's runs (unmapped) it holds less
    // than a window. Whole blocks of 8 rows where the tile is cut, so
    // that no row of a tile but the tensor's last ones goes element by
    // element.
    let per_tile = budget.checked_div(4).and_then(|h| h.checked_div(row)).unwrap_or(1).max(1);
    let per_tile = if per_tile >= 8 && per_tile < len_p { per_tile & !7 } else { per_tile.min(len_p) };
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
            // Every byte of the tile is written before it is hashed: only
            // its length changes (the last tile), never zeroed again.
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
                    transpose(src, &mut flipped, bu, runs, q, elem).ok_or_else(overflow)?;
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

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use sha2::{Digest as _, Sha256};

    use super::*;
    use crate::error::Subject;
    use crate::hash::{Conversion, PieceSizes, hash_job};
    use crate::source::Source;

    #[test]
    fn gathered_views_hash_their_elements_in_row_major_order() {
        // Views of one file's bytes walked every way (contiguous rows of a
        // slice, hashed where they lie or copied; transposes in tiles; a
        // permutation; an expanded dimension; element by element), in both
        // read modes and with pieces from one byte to the defaults, against
        // the digest of the elements picked one by one.
        let bytes: Vec<u8> = (0..40_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
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
        assert_views(&bytes, views, &pieces);
    }

    /// Hashes each view (elem, offset, size, stride) of `bytes` (a file,
    /// its views from byte 16) in both read modes with each of `pieces`,
    /// against the digest of its elements picked one by one.
    fn assert_views(bytes: &[u8], views: &[(u64, u64, &[u64], &[u64])], pieces: &[PieceSizes]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, bytes).unwrap();
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
                for &pieces in pieces {
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
    fn tiles_of_every_length_reuse_one_buffer_and_hash_as_element_by_element() {
        // Transposes cut into tiles of many lengths (a quarter of a window of rows in whole 8-row blocks,
        // a shorter last tile): the tile's buffer is not zeroed between
        // tiles, so every byte of each must be written again; against the
        // elements picked one by one.
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
        let views: &[(u64, u64, &[u64], &[u64])] = &[
            (4, 0, &[300, 70], &[1, 300]),
            (2, 3, &[513, 40], &[1, 513]),
            (1, 0, &[1000, 9], &[1, 1000]),
            (8, 0, &[77, 3, 50], &[1, 3850, 77]),
            (3, 1, &[201, 11], &[1, 201]),
        ];
        let mut pieces = Vec::new();
        for window in [600, 4096, 16_384, 65_536, 1 << 20] {
            for chunk in [512, 4096] {
                pieces.push(PieceSizes { window, chunk, min_mapped: 0 });
            }
        }
        assert_views(&bytes, views, &pieces);
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod speed {
    use super::*;
    use crate::error::Subject;
    use crate::hash::{Conversion, PieceSizes, hash_job};
    use crate::source::Source;

    #[test]
    #[ignore = "a benchmark: cargo test --release -p gguf-digest-core --lib hash::gather::speed -- --ignored --nocapture"]
    fn tile_speed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        let n = 32000usize * 1024 * 2;
        let bytes: Vec<u8> = (0..n as u64).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let source = Source::open(&path, crate::source::ReadMode::Mmap).unwrap();
        let progress = |_: u64| Ok(());
        let job = |g: Option<Gather>| Job {
            source: &source,
            start: 0,
            len: g.as_ref().map_or(n as u64, |g| g.size.iter().product::<u64>() * g.elem),
            conversion: Conversion::none(g.as_ref().map_or(2, |g| g.elem), "T"),
            subject: Subject::Tensor(b"t".to_vec()),
            gather: g.map(std::sync::Arc::new),
        };
        let time = |j: &Job<'_>, p: &PieceSizes| {
            let mut best = f64::MAX;
            for _ in 0..9 {
                let cpu = || {
                    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
                    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
                };
                let t = cpu();
                std::hint::black_box(hash_job(j, p, &progress).unwrap());
                best = best.min(cpu() - t);
            }
            best
        };
        let flat = time(&job(None), &PieceSizes::default()) / n as f64;
        println!("contiguous: {:.3} ns/byte", flat * 1e9);
        let windows: Vec<u64> = std::env::var("GD_WINDOWS")
            .map(|s| s.split(',').map(|w| w.parse::<u64>().unwrap() << 10).collect())
            .unwrap_or_else(|_| vec![1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20]);
        for (name, size, stride, elem) in [
            ("gate [5632,2048] s[1,5632]", [5632u64, 2048], [1u64, 5632], 2),
            ("down [2048,5632] s[1,2048]", [2048, 5632], [1, 2048], 2),
            ("f32 [2816,2048] s[1,2816]", [2816, 2048], [1, 2816], 4),
            ("f32 [2048,2816] s[1,2048]", [2048, 2816], [1, 2048], 4),
            ("embed f32 [32000,512] s[1,32000]", [32000, 512], [1, 32000], 4),
            ("head [32000,1024] s[1,32000]", [32000, 1024], [1, 32000], 2),
        ] {
            for &window in &windows {
                let g = Gather { elem, offset: 0, size: size.to_vec(), stride: stride.to_vec() };
                let len = (size[0] * size[1] * elem) as f64;
                let t = time(&job(Some(g)), &PieceSizes { window, ..PieceSizes::default() }) / len;
                println!("{name} window {:5} KiB: {:.3} ns/byte, {:.2} x contiguous", window >> 10, t * 1e9, t / flat);
            }
        }
    }
}
