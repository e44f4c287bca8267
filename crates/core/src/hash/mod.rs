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
//!
//! The folder: `pieces` cuts ranges into [`PieceSizes`]; `convert` holds
//! the [`Conversion`]s and the [`Hasher`]; `gather` walks a strided
//! [`Gather`] (its tiles transposed by `transpose`); `digest` is a model's
//! [`Digest`]. This face holds the [`Job`] and [`hash_job`].

mod convert;
mod digest;
mod gather;
mod pieces;
mod transpose;

pub use convert::{Algorithm, Conversion, Hasher, Swap};
pub use digest::Digest;
pub use gather::Gather;
use pieces::Plan;
pub use pieces::{CHUNK, MIN_MAPPED, PieceSizes, READ_CHUNKS, WINDOW};

use crate::error::{Error, Result, Subject};
use crate::source::{MappedRange, Source};

/// A SHA-256 digest.
pub type Sha256Digest = [u8; 32];

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
///
/// [`ErrorKind::Cancelled`]: crate::error::ErrorKind::Cancelled
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
        return gather::hash_gathered(job, g, plan, pieces.min_mapped, progress).map_err(located);
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

/// Streams a range with `pread` (or, for an object read by ranges, its
/// streamed range) into one chunk-sized buffer.
fn hash_read(job: &Job<'_>, plan: Plan, progress: &ProgressCallback<'_>) -> Result<Sha256Digest> {
    let chunk = plan.chunk as u64;
    let mut buf = vec![0u8; usize::try_from(chunk.min(job.len)).unwrap_or(0)];
    let mut hasher = Hasher::new(job.conversion.digest);
    // By position for a file; one streamed range for an object read by
    // ranges (docs/adr/0044), in the same whole-block pieces.
    let mut pieces = job.source.pieces(job.start, job.len)?;
    let mut done = 0u64;
    while done < job.len {
        let n = chunk.min(job.len.saturating_sub(done));
        let part = buf.get_mut(..usize::try_from(n).unwrap_or(0)).unwrap_or(&mut []);
        if job.conversion.is_identity() {
            // Hashed where the reader holds it (an object's network
            // buffers: one copy fewer, docs/adr/0044 "Speed").
            pieces.feed(part, &mut |s| hasher.update(s))?;
        } else {
            pieces.read_next(part)?;
            job.conversion.apply(part)?;
            hasher.update(&*part);
        }
        done = done.saturating_add(n);
        progress(n)?;
    }
    Ok(hasher.finalize())
}

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use sha2::{Digest as _, Sha256};

    use super::*;
    use crate::error::{Error, Subject};
    use crate::source::{RangeDir, RangeReader, RangeSource};

    /// An object whose ranges arrive in chunks of `chunk` bytes, as a
    /// network's would: lengths unrelated to the hasher's pieces or blocks.
    #[derive(Debug)]
    struct Chunked {
        bytes: Vec<u8>,
        chunk: usize,
        /// Bytes lent through `feed`, not copied by `read_next`.
        lent: std::sync::atomic::AtomicU64,
    }

    struct Lender<'a> {
        rest: &'a [u8],
        chunk: usize,
        lent: &'a std::sync::atomic::AtomicU64,
        /// Where the current chunk ends (chunks are cut from the range's start).
        in_chunk: usize,
    }

    impl Lender<'_> {
        fn take(&mut self, len: usize, sink: &mut dyn FnMut(&[u8])) -> Result<()> {
            let mut left = len;
            while left > 0 {
                if self.rest.is_empty() {
                    return Err(Error::internal("past the range"));
                }
                if self.in_chunk == 0 {
                    self.in_chunk = self.chunk;
                }
                let n = left.min(self.in_chunk).min(self.rest.len());
                sink(&self.rest[..n]);
                self.rest = &self.rest[n..];
                self.in_chunk -= n;
                left -= n;
            }
            Ok(())
        }
    }

    impl RangeReader for Lender<'_> {
        fn read_next(&mut self, buf: &mut [u8]) -> Result<()> {
            let mut filled = 0;
            self.take(buf.len(), &mut |s| {
                buf[filled..filled + s.len()].copy_from_slice(s);
                filled += s.len();
            })
        }

        fn feed(&mut self, buf: &mut [u8], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
            // Lent only: the hasher's buffer is left as it was.
            self.lent.fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
            self.take(buf.len(), sink)
        }
    }

    impl RangeSource for Chunked {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn version(&self) -> Option<&str> {
            None
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            let at = offset as usize;
            buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
            Ok(())
        }
        fn read_range(&self, start: u64, len: u64) -> Result<Box<dyn RangeReader + '_>> {
            let rest = &self.bytes[start as usize..(start + len) as usize];
            Ok(Box::new(Lender { rest, chunk: self.chunk, lent: &self.lent, in_chunk: 0 }))
        }
        fn check_unchanged(&self) -> Result<()> {
            Ok(())
        }
        fn beside(&self) -> Result<Arc<dyn RangeDir>> {
            Err(Error::internal("no place in this test"))
        }
    }

    #[test]
    fn lent_chunks_of_any_length_hash_as_the_range_does_in_one_piece() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        // Chunks and pieces straddling each other, none a multiple of the
        // other, nor of SHA-256's 64-byte block; a range not at 0.
        for chunk in [1, 63, 64, 65, 100, 333, 4096, 10_000] {
            let object = Arc::new(Chunked { bytes: bytes.clone(), chunk, lent: Default::default() });
            let source = Source::from_range(&PathBuf::from("x"), Arc::clone(&object) as Arc<dyn RangeSource>);
            let lent = || object.lent.swap(0, std::sync::atomic::Ordering::Relaxed);
            for (start, len) in [(0u64, 5000u64), (17, 4000), (4999, 1), (130, 0)] {
                for piece in [4u64, 90, 256, 1000, 1 << 20] {
                    let sizes = PieceSizes { window: piece, chunk: piece, min_mapped: 0 };
                    let range = &bytes[start as usize..(start + len) as usize];
                    let job = |conversion| Job {
                        source: &source,
                        start,
                        len,
                        conversion,
                        subject: Subject::Tensor(b"t".to_vec()),
                        gather: None,
                    };
                    let plain = Conversion { block: 1, swap: Swap::None, type_name: "U8", digest: Algorithm::Sha256 };
                    let want: [u8; 32] = Sha256::digest(range).into();
                    assert_eq!(hash_job(&job(plain), &sizes, &|_| Ok(())).unwrap(), want, "{chunk} {start} {piece}");
                    // Data hashed as stored is hashed where the reader holds it.
                    assert_eq!(lent(), len);
                    // Converted data is copied into whole blocks first.
                    if len % 4 == 0 {
                        let words =
                            Conversion { block: 4, swap: Swap::Words(4), type_name: "F32", digest: Algorithm::Sha256 };
                        let swapped: Vec<u8> = range.chunks(4).flat_map(|w| w.iter().rev().copied()).collect();
                        let want: [u8; 32] = Sha256::digest(&swapped).into();
                        assert_eq!(
                            hash_job(&job(words), &sizes, &|_| Ok(())).unwrap(),
                            want,
                            "{chunk} {start} {piece}"
                        );
                        assert_eq!(lent(), 0);
                    }
                }
            }
        }
    }
}
