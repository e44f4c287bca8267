//! The portable read path: plain reads, nothing mapped, no hint to the
//! kernel. Built on every system but Linux, and on Linux with the feature
//! `portable` (CI runs the whole suite so). What each missing call costs is
//! said in `platform/mod.rs`; here only std's calls are made.

use std::fs::File;
use std::num::NonZeroU64;
use std::path::Path;

#[cfg(unix)]
use rustix::fs::OFlags;
#[cfg(unix)]
use std::os::fd::{BorrowedFd, OwnedFd};

/// No file is mapped: without the SIGBUS guard a map of a file that shrinks
/// while it is read would end the process, so every read is a `pread`.
pub const GUARDED_MAPS: bool = false;

/// Nothing to ask: no map is made where there is no guard ([`GUARDED_MAPS`]).
pub fn populate_read(_: &memmap2::Mmap, _: usize, _: usize) {}

/// Never made: [`GUARDED_MAPS`] is false, so no map asks for a guard.
pub struct Guard(());

impl Guard {
    /// No guard here: the caller reads instead.
    pub fn new(_start: *const u8, _len: usize) -> Option<Guard> {
        None
    }

    /// No guard, no fault seen.
    pub fn was_hit(&self) -> bool {
        false
    }
}

/// No leases: every file is read as where the kernel refuses them.
pub fn lease_take(_: &File) -> Result<(), i32> {
    Err(super::NO_LEASES)
}

/// No lease is ever held.
pub fn lease_is_held(_: &File) -> bool {
    false
}

/// Nothing to release.
pub fn lease_release(_: &File) {}

/// Residency is not asked: every file counts as cached (hashed by parallel
/// reads, never front to back by one reader; the same label).
pub fn all_sampled_pages_cached(_: &File, _: u64) -> bool {
    true
}

/// No eviction hint.
pub fn drop_from_cache(_: &File, _: u64, _: Option<NonZeroU64>) {}

/// No read-ahead hint.
pub fn read_ahead(_: &File, _: Option<NonZeroU64>) {}

/// No `O_DIRECT`: every file is read through the page cache.
pub fn open_direct(_: &File) -> Option<File> {
    None
}

/// No `openat2`: answered as a kernel without it answers, so that the
/// walk in `beneath.rs` opens every file beneath its root.
#[cfg(unix)]
pub fn openat2_beneath(_: BorrowedFd<'_>, _: &Path, _: OFlags) -> rustix::io::Result<OwnedFd> {
    Err(rustix::io::Errno::NOSYS)
}

/// No pipe buffer to grow.
pub fn grow_stdin_pipe(_: usize) {}

/// Unknown: no file counts as larger than half of memory.
pub fn memory_bytes() -> u64 {
    0
}

/// Whether the file system's times can be trusted by the verified-leaf
/// cache: not known here (and no file has a lease), so never.
pub fn local_times(_: &File) -> bool {
    false
}
