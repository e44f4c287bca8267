//! One opened input: a regular file or a stream (standard input), its
//! length, the bytes of its metadata (handed to a format's parser), and
//! reads of its tensor data. Format-neutral: a parser is a function of a
//! byte prefix.
//!
//! One concept a file: `open.rs` (opening, and the checks that the file is
//! still the one opened), `prefix.rs` (a format parser's side of the
//! protocol), `metadata.rs` (reading metadata until the parser has enough),
//! `map.rs` (the guarded map, and dropping its pages), `read.rs` (reads at a
//! position and front to back), `direct.rs` (files larger than half of
//! memory: `O_DIRECT` reads, pages dropped from the cache), `residency.rs`
//! (cold or cached), `lease.rs`, `cached.rs` (the
//! verified-leaf cache: this file's leaves found, hashed and stored), `stream.rs`, `system.rs` (process-wide:
//! the open-file limit, memory, the page size), `beneath.rs` and `beside.rs`
//! (opening files beneath a root), `platform/` (every call only Linux has,
//! and the portable fallback: the feature `portable` forces it on Linux),
//! `ranged.rs` (an object read by ranges: the seam a remote transport
//! implements, docs/adr/0044).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

mod beneath;
mod beside;
mod cached;
mod direct;
mod lease;
mod map;
mod metadata;
mod open;
mod platform;
mod prefix;
mod ranged;
mod read;
mod residency;
mod stream;
mod system;

pub use beneath::{Last, Root};
pub use beside::Beside;
pub use map::MappedRange;
pub use metadata::MAX_READ_METADATA;
pub use metadata::metadata_too_big;
pub use open::changed;
pub use platform::{HOME_VAR, home_dir};
pub use prefix::{PrefixParser, Step};
pub use ranged::{RangeDir, RangeReader, RangeSource};
pub use read::Pieces;
pub use system::raise_open_file_limit;

use map::FileMap;
use open::Identity;
use stream::Stream;

/// How the metadata of a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Map the file and parse the metadata in place (the default).
    #[default]
    Mmap,
    /// Read the metadata into a buffer with `pread`, growing it as the parser
    /// asks; the file is never mapped.
    Pread,
}

/// An open input: a regular file, a stream read once, front to back
/// (standard input), or an object read by ranges (a remote object:
/// [`RangeSource`]).
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    backing: Backing,
    /// The read lease taken when the file was opened (`lease.rs`): it
    /// breaks when a process opens the file for writing, which the file's
    /// times do not always show. Released once hashing is checked.
    lease: lease::Lease,
    identity: Identity,
    mode: ReadMode,
    /// The guarded map of the whole file, made on first use and kept while
    /// the file is open: metadata is parsed from it and every tensor is
    /// hashed from it, so a model with hundreds of tensors costs one `mmap`,
    /// not one per tensor. `None` inside when no map could be guarded.
    map: OnceLock<Option<FileMap>>,
    /// Whether the file was found (mostly) outside the page cache, sampled
    /// once on first use; see [`Source::is_cold`].
    cold: OnceLock<bool>,
    /// For a cold file larger than half of memory (or any file, with
    /// `DirectReads::Always`): the same file opened again with `O_DIRECT`,
    /// read around the page cache (see [`Source::read_direct`]); `None`
    /// inside when the file system refuses it. Unset until wanted.
    direct: OnceLock<Option<File>>,
    /// The directory it was opened in, beneath a root, when it was: the
    /// files it names are opened there too ([`Source::beside`]).
    beside: Option<Beside>,
    /// Its identity for the verified-leaf cache (`None` for a stream).
    file_id: Option<crate::cache::FileId>,
    /// The cache, once a run with it on attached it (`cached.rs`).
    cache: OnceLock<cached::Attached>,
    /// Set before any byte of the file is read (a `pread`, a direct read, its
    /// map made): a file none of whose bytes were read, every job taken
    /// from the cache, needs no stat at its end (`Source::check_unchanged`).
    touched: AtomicBool,
}

/// Where an input's bytes come from.
#[derive(Debug)]
enum Backing {
    /// A regular file: read with `pread` or mapped, in any order.
    File(File),
    /// A stream: read once, front to back.
    Stream(Mutex<Stream>),
    /// An object read by ranges, in any order (`ranged.rs`).
    Ranged(std::sync::Arc<dyn RangeSource>),
}

/// The length a format's parser is handed for a stream whose end has not
/// been seen: every check against the file's length passes, and bytes past
/// the prefix are asked for (a stream that ends then is judged again at its
/// true length).
pub const UNKNOWN_LEN: u64 = u64::MAX;

impl Source {
    /// The file's device and inode (`None` for a stream): one file reached
    /// by two names is one file (an ONNX model's work bound counts it once).
    pub fn device_inode(&self) -> Option<(u64, u64)> {
        self.file_id.as_ref().map(|id| (id.dev, id.ino))
    }

    /// True for a stream (standard input): read once, front to back.
    pub fn is_stream(&self) -> bool {
        matches!(self.backing, Backing::Stream(_))
    }

    fn file(&self) -> Option<&File> {
        match &self.backing {
            Backing::File(f) => Some(f),
            Backing::Stream(_) | Backing::Ranged(_) => None,
        }
    }

    fn stream(&self) -> Option<std::sync::MutexGuard<'_, Stream>> {
        match &self.backing {
            Backing::File(_) | Backing::Ranged(_) => None,
            Backing::Stream(s) => Some(lock(s)),
        }
    }

    /// How this file is read.
    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    /// The path the file was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length when it was opened; a stream's length once it
    /// ended, [`UNKNOWN_LEN`] before.
    pub fn len(&self) -> u64 {
        match self.stream() {
            Some(s) => s.len(),
            None => self.identity.len,
        }
    }

    /// Notes that bytes of the file are about to be read (see `touched`).
    fn touch(&self) {
        self.touched.store(true, Ordering::Relaxed);
    }

    /// True once bytes of the file were read, or were about to be.
    fn was_touched(&self) -> bool {
        self.touched.load(Ordering::Relaxed)
    }

    /// True for a 0-byte file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Source {
    /// A lease not yet released (a file whose hashing was never checked:
    /// it failed, or was never asked for) is let go before the descriptor
    /// closes: with the map still open the kernel would keep it until the
    /// unmap.
    fn drop(&mut self) {
        if let Backing::File(file) = &self.backing {
            self.lease.release(file);
        }
    }
}

/// A stream's state, locked (a panic elsewhere leaves nothing half-done
/// that matters to a reader: its position and prefix are always whole).
fn lock(stream: &Mutex<Stream>) -> std::sync::MutexGuard<'_, Stream> {
    stream.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
