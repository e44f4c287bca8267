//! The Linux calls of the read path (see `platform/mod.rs` for what each
//! gives, and what the portable path does without it).

use std::fs::File;
use std::num::NonZeroU64;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags, ResolveFlags};

mod lease;
mod map_guard;
mod residency;

pub use lease::{is_held as lease_is_held, release as lease_release, take as lease_take};
pub use map_guard::Guard;
pub use residency::all_sampled_pages_cached;

/// Files are mapped, read through the SIGBUS guard.
pub const GUARDED_MAPS: bool = true;

/// Maps in the pages of `len` bytes at `offset` of `map` with one call
/// (`MADV_POPULATE_READ`) instead of a page fault every few pages. Only a
/// hint; without it (Linux < 5.14) faults do it.
pub fn populate_read(map: &memmap2::Mmap, offset: usize, len: usize) {
    let _ = map.advise_range(memmap2::Advice::PopulateRead, offset, len);
}

/// Asks the kernel to drop `len` bytes at `offset` (no length: to the end)
/// from the page cache. Only a hint.
pub fn drop_from_cache(file: &File, offset: u64, len: Option<NonZeroU64>) {
    let _ = rustix::fs::fadvise(file, offset, len, rustix::fs::Advice::DontNeed);
}

/// Asks the kernel to read the first `len` bytes (no length: the whole
/// file) ahead. Only a hint.
pub fn read_ahead(file: &File, len: Option<NonZeroU64>) {
    let _ = rustix::fs::fadvise(file, 0, len, rustix::fs::Advice::WillNeed);
}

/// `file` opened again with `O_DIRECT`, through `/proc/self/fd`, so that it
/// is the same inode whatever its path names now (checked); `None` when the
/// file system refuses `O_DIRECT`.
pub fn open_direct(file: &File) -> Option<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let fd = std::os::fd::AsRawFd::as_raw_fd(file);
    let direct =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(format!("/proc/self/fd/{fd}")).ok()?;
    let (a, b) = (file.metadata().ok()?, direct.metadata().ok()?);
    (a.dev() == b.dev() && a.ino() == b.ino()).then_some(direct)
}

/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: `at` opened beneath
/// `root`, the kernel refusing every way out.
pub fn openat2_beneath(root: BorrowedFd<'_>, at: &Path, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    rustix::fs::openat2(root, at, flags, Mode::empty(), resolve)
}

/// Grows standard input's pipe buffer to `size`; on anything but a pipe it
/// fails and changes nothing.
pub fn grow_stdin_pipe(size: usize) {
    let _ = rustix::pipe::fcntl_setpipe_size(std::io::stdin(), size);
}

/// The machine's memory in bytes: what sysconf(_SC_PHYS_PAGES) times the
/// page size is, since glibc and musl compute it from these two fields.
pub fn memory_bytes() -> u64 {
    let info = rustix::system::sysinfo();
    // `as`: the field is a C unsigned long, 32 bits on some targets.
    (info.totalram as u64).saturating_mul(u64::from(info.mem_unit))
}

/// Whether the file system holding `file` stamps times from this machine's
/// clock: false for network and FUSE file systems (another machine's clock,
/// or a daemon's word), whose files the verified-leaf cache never trusts.
pub fn local_times(file: &File) -> bool {
    // f_type magic numbers, from linux/magic.h and the file systems.
    const REMOTE: [i64; 10] = [
        0x6969,      // NFS
        0x517B,      // SMB
        0xFE53_4D42, // SMB2
        0xFF53_4D42, // CIFS
        0x6573_5546, // FUSE
        0x0102_1997, // 9P
        0x00C3_6400, // Ceph
        0x5346_414F, // AFS
        0x0BD0_0BD0, // Lustre
        0x0115_6C61, // GPFS
    ];
    match rustix::fs::fstatfs(file) {
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok(s) => !REMOTE.contains(&(s.f_type as i64)),
        Err(_) => false,
    }
}
