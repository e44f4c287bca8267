//! Read leases: the three `fcntl` calls (`F_SETLEASE`, `F_GETLEASE`, and
//! `F_SETSIG`/`F_SETOWN` so that a broken lease signals no one). What a
//! lease means and when it is taken is `source/lease.rs`.

use std::fs::File;
use std::os::fd::AsRawFd;

/// `F_SETSIG` (`<linux/fcntl.h>`: 10 on every architecture), which the
/// libc crate does not export for glibc targets.
const F_SETSIG: libc::c_int = 10;

/// The error number of the last failed call.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// Takes a read lease on `file`, or returns the kernel's error number.
///
/// Taking a lease makes this process the file's owner for signals, and
/// the kernel signals the owner when a writer breaks the lease: by
/// default SIGIO, whose default action ends the process (a program
/// embedding the library with it). So first the signal becomes SIGURG,
/// which is ignored by default, and right after the lease is taken the
/// owner is cleared, so that no signal is sent at all: a writer racing
/// in between the two calls costs an ignored SIGURG, never the process.
pub fn take(file: &File) -> Result<(), i32> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl with integer arguments reads and writes no memory
    // of ours; on a descriptor we own (borrowed from `file` for the
    // call) it changes only that open file's signal number.
    if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } != 0 {
        return Err(errno());
    }
    // SAFETY: as above; it adds a lease to this open file, released by
    // `release` or when the file is closed. The file's bytes are not
    // touched: if the file changes later, the lease breaks, which
    // `is_held` reports.
    if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) } != 0 {
        return Err(errno());
    }
    // SAFETY: as above; owner 0 means no process is signalled.
    if unsafe { libc::fcntl(fd, libc::F_SETOWN, 0) } != 0 {
        let e = errno();
        release(file);
        return Err(e);
    }
    Ok(())
}

/// True while the read lease on `file` is held and unbroken (a lease
/// being broken reads as `F_UNLCK`, as does one the kernel took back).
pub fn is_held(file: &File) -> bool {
    // SAFETY: F_GETLEASE reads no memory of ours and changes nothing.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLEASE) == libc::F_RDLCK }
}

/// Releases the lease on `file`; a writer waiting for it goes on.
pub fn release(file: &File) {
    // SAFETY: as in `take`; failing (no lease held any more: the kernel
    // took it back) leaves nothing to undo.
    let _ = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
}
