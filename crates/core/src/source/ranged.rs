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

    /// True when the object's jobs are best handed out in file order
    /// (by offset) rather than largest first: an OCI blob, whose bytes are
    /// hashed again in order for its digest as the label's pieces arrive,
    /// so pieces near that digest's frontier are read once for both
    /// (docs/adr/0046). Every other object keeps largest first.
    fn wants_file_order(&self) -> bool {
        false
    }
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

    /// True when this source's jobs are handed out in file order
    /// ([`RangeSource::wants_file_order`]); false for a file or a stream.
    pub fn wants_file_order(&self) -> bool {
        self.ranged().is_some_and(RangeSource::wants_file_order)
    }

    /// The object this source reads by ranges; `None` for a file or a stream.
    pub fn ranged(&self) -> Option<&dyn RangeSource> {
        match &self.backing {
            Backing::Ranged(r) => Some(r.as_ref()),
            Backing::File(_) | Backing::Stream(_) => None,
        }
    }
}
