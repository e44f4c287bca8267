//! An object read by ranges (a remote object: S3, GCS, Azure, HTTP): the
//! seam between the core and whatever fetches its bytes
//! (docs/adr/0044-remote-inputs.md). The core names no transport: the
//! remote crate implements [`RangeSource`] (one object: its length, the
//! version pinned at its first request, reads at a position and streamed
//! ranges) and [`RangeDir`] (the place it lies: where the files it names,
//! and a listed prefix's entries, are opened), and [`Source::from_range`]
//! makes a [`Source`] of it that every format's parser and model use as
//! they use a file opened with `--no-mmap`: metadata read by `pread`-like
//! reads as the parser asks (`metadata.rs`), each job's range hashed in
//! whole-block pieces (`hash::hash_job`), on the one scheduler.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::{Backing, ReadMode, Source};
use crate::error::Result;

/// One object read by ranges. Every read is of the version pinned when
/// the object was first asked for (its ETag or version id, sent again as
/// a condition on every later request, or checked on every answer): an
/// object replaced mid-read is an error ([`crate::ErrorKind::FileChanged`]),
/// never a label of two objects. Errors name the object as
/// [`Source::path`] shows it, without credentials.
pub trait RangeSource: Send + Sync + fmt::Debug {
    /// The object's length in bytes, as pinned.
    fn len(&self) -> u64;

    /// True for an object of 0 bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The version pinned on the first request (an ETag or a version id),
    /// for a `--json` entry; `None` when the server gives none.
    fn version(&self) -> Option<&str>;

    /// Reads exactly `buf.len()` bytes at `offset` (metadata, a gathered
    /// view's elements). A short answer is retried or refused, never
    /// handed back.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// The `len` bytes at `start`, in order, handed over a piece at a
    /// time as they arrive (a job's range): bounded memory, whatever `len`.
    fn read_range(&self, start: u64, len: u64) -> Result<Box<dyn RangeReader + '_>>;

    /// After hashing: fails when the object is no longer the version
    /// pinned (asked of the server again).
    fn check_unchanged(&self) -> Result<()>;

    /// Where the object lies: the place the files it names (a shard's
    /// siblings, an index's files, external data) are opened, by plain
    /// names only.
    fn beside(&self) -> Result<Arc<dyn RangeDir>>;
}

/// A range being read front to back ([`RangeSource::read_range`]).
pub trait RangeReader: Send {
    /// Fills `buf` with the range's next `buf.len()` bytes: all of them, or
    /// an error (a body that ends early is retried or refused, never
    /// handed back short).
    fn read_next(&mut self, buf: &mut [u8]) -> Result<()>;

    /// Hands the range's next `buf.len()` bytes to `sink`, in order, in
    /// one or more slices whose lengths are the reader's (not whole blocks):
    /// all of them, or an error. A reader that holds the bytes already (a
    /// network buffer) lends them without a copy; the default reads them
    /// into `buf` first. For data hashed as stored: SHA-256 takes any
    /// slice lengths. An error may come after some bytes were handed on;
    /// the caller then gives up the whole range (docs/adr/0044, "Speed").
    fn feed(&mut self, buf: &mut [u8], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.read_next(buf)?;
        sink(buf);
        Ok(())
    }
}

/// A place objects lie in (a bucket's prefix, an HTTP folder): the remote
/// side of [`super::Beside`]. Names are plain (no `/`, `..` or other
/// host: the caller checked them, and an implementation refuses any
/// other), so nothing an input names leaves the place it was found in.
pub trait RangeDir: Send + Sync + fmt::Debug {
    /// The place as messages show it (credentials left out).
    fn shown(&self) -> &Path;

    /// Opens the object `name` here.
    fn open(&self, name: &OsStr, mode: ReadMode) -> Result<Source>;

    /// Opens `rel`, plain components below this place.
    fn open_below(&self, rel: &Path, mode: ReadMode) -> Result<Source>;

    /// True when `name` here is an object.
    fn holds_file(&self, name: &OsStr) -> bool;

    /// The names of the objects directly here (a listing, bounded as the
    /// local walk is).
    fn names(&self) -> Result<Vec<OsString>>;

    /// Every object below this place, as `/`-separated names relative to
    /// it, sorted (a prefix listed as a directory; bounded as the local
    /// walk is).
    fn walk(&self) -> Result<Vec<Vec<u8>>>;
}

impl Source {
    /// A source of an object read by ranges, named `shown` in output and
    /// errors (a URL without its credentials). Read as a file is with
    /// `--no-mmap`: no map, no lease (the pinned version stands for it),
    /// no cache (no file identity); its jobs hashed in parallel, each
    /// range streamed ([`RangeSource::read_range`]).
    pub fn from_range(shown: &Path, object: Arc<dyn RangeSource>) -> Source {
        let len = object.len();
        let mut source = Source::from_reader(shown, Box::new(std::io::empty()));
        source.backing = Backing::Ranged(object);
        source.identity.len = len;
        source
    }

    /// The object this source reads by ranges; `None` for a file or a stream.
    pub fn ranged(&self) -> Option<&dyn RangeSource> {
        match &self.backing {
            Backing::Ranged(r) => Some(r.as_ref()),
            Backing::File(_) | Backing::Stream(_) => None,
        }
    }
}

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use std::path::PathBuf;

    use sha2::{Digest as _, Sha256};

    use super::*;
    use crate::error::{Error, Subject};
    use crate::hash::{Algorithm, Conversion, Job, PieceSizes, Swap, hash_job};

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
