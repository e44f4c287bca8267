//! Every call only Linux has, behind one face: the read path above it
//! (`source/`) asks here and never calls the system itself for these.
//!
//! Two implementations, chosen by `cfg`: `linux/` (the default on Linux)
//! and `portable.rs` (every other system, and Linux with the cargo feature
//! `portable`, which CI builds and tests so that the fallback is known to
//! give every label). What the portable path gives up, call by call:
//!
//! - the SIGBUS guard (`linux/map_guard.rs`): no file is mapped, metadata
//!   and tensors are read with `pread` (a map of a file that shrinks could
//!   kill the process without the guard), as `--no-mmap` reads them: metadata
//!   past `MAX_READ_METADATA` (128 MiB) is refused, as it is there;
//! - read leases (`F_SETLEASE`): a process holding the file open for
//!   writing is not seen at open, nor one that opens it while it is hashed
//!   without changing its size or times; every entry says so in `--json`
//!   (`read_lease_unavailable`: "this system has no file leases");
//! - `cachestat`/`mincore`: every file counts as cached, so a cold file is
//!   hashed by parallel reads, not front to back by one reader (slower on a
//!   spinning disk, the same label);
//! - `O_DIRECT` and `posix_fadvise`: a file larger than memory goes
//!   through the page cache, and no read-ahead or eviction is asked for;
//! - `openat2(RESOLVE_BENEATH)`: the walk in `beneath.rs` does the same,
//!   a component at a time (as on a kernel older than 5.6);
//! - the machine's memory (`sysinfo`) is not known, and a pipe's buffer is
//!   not grown (`F_SETPIPE_SZ`).
//!
//! POSIX calls stay where they are used, behind `cfg(unix)`: the open-file
//! limit and the page size (`system.rs`), `openat`, `fstat`, `readlinkat`
//! and directory listing through a descriptor (`beneath.rs`), `pread`.
//!
//! docs/adr/0018 says what remains for macOS and Windows.

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod linux;
#[cfg(all(target_os = "linux", not(feature = "portable")))]
pub use linux::*;

#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
mod portable;
#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
pub use portable::*;

/// `O_PATH`: a descriptor that names a file without opening it (a link
/// itself with `O_NOFOLLOW`), which `beneath.rs` resolves and looks at
/// files through. Linux's (rustix also has it for Android and FreeBSD), and
/// needed by the portable path on Linux too, so it is here rather than in
/// `linux/`: a build for a system without it stops at this line, where its
/// own way to look at a link would go (docs/adr/0018).
#[cfg(unix)]
pub const PATH_ONLY: rustix::fs::OFlags = rustix::fs::OFlags::PATH;

/// The variable that names the user's home directory: `HOME` on Unix,
/// `USERPROFILE` on Windows, as Go's `os.UserHomeDir` (Ollama's store,
/// `~/.ollama/models`, or `%USERPROFILE%\.ollama\models`) and Python's
/// `os.path.expanduser` (the Hugging Face cache, `~/.cache/huggingface/hub`
/// on every system) read it.
pub const HOME_VAR: &str = if cfg!(windows) { "USERPROFILE" } else { "HOME" };

/// The user's home directory ([`HOME_VAR`]), `None` when it is unset or empty.
pub fn home_dir() -> Option<std::path::PathBuf> {
    std::env::var_os(HOME_VAR).filter(|h| !h.is_empty()).map(std::path::PathBuf::from)
}

/// What `lease_take` returns where the system has no leases (no kernel
/// error number is negative).
pub const NO_LEASES: i32 = -1;

#[cfg(test)]
mod tests {
    #[test]
    fn the_home_directory_is_named_by_the_systems_variable() {
        assert_eq!(super::HOME_VAR, if cfg!(unix) { "HOME" } else { "USERPROFILE" });
    }
}
