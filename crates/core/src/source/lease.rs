//! A read lease on an open file (Linux `F_SETLEASE`, `F_RDLCK`): the one
//! way the kernel tells a reader that the file's bytes may be changing
//! without their times moving.
//!
//! A writer can change a file without touching its size, modification time
//! or change time: pages of a `MAP_SHARED` writable map, dirtied before we
//! opened the file, take further writes without a fault, so no time is
//! updated (issue 23, item 3). The identity check after hashing cannot see
//! that. A read lease can: the kernel refuses one while any process holds
//! the file open for writing (a map keeps the file it was made from open, so
//! a writable shared map counts even after its descriptor was closed), and
//! breaks it when a process opens the file for writing (or truncates it by
//! path) while it is held. So a file is refused at open when a writer is
//! there ([`ErrorKind::OpenForWriting`]), and its label is refused when one
//! came while it was hashed ("file changed while hashing (it was opened for
//! writing)").
//!
//! A writer that opens the file while we hold the lease waits in its `open`
//! until we release the lease (at most the kernel's `lease-break-time`, 45 s
//! by default, after which the kernel takes it from us): we release it as
//! soon as the file's hashing is checked, or the moment a hashing loop sees
//! it broken ([`Lease::check_held`]).
//!
//! Where the kernel gives no lease (not the file's owner and no
//! `CAP_LEASE`; a file system that refuses leases; leases turned off), the
//! file is read as before, checked by its identity alone, and the reason is
//! kept ([`Lease::unavailable`]) for the model's `--json` entry. See
//! docs/adr/0021-read-lease.md.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU8, Ordering};

use super::platform;
use crate::error::{Error, ErrorKind, Result};

/// Why no lease was taken on a file; said in its model's `--json` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unavailable {
    /// A stream (standard input): no file to lease, nothing to note.
    Stream,
    /// `EACCES`/`EPERM`: only the file's owner or a holder of `CAP_LEASE`
    /// may take a lease.
    NotOwner,
    /// `EINVAL`: the file system refuses leases (network and FUSE file
    /// systems among them), or leases are turned off (`fs.leases-enable`).
    Refused,
    /// Any other error of the kernel, by its number.
    Other(i32),
    /// Not Linux: no leases to ask for.
    NoLeases,
}

impl Unavailable {
    /// The reason, for a person reading the `--json` entry; `None` for a
    /// stream, which has nothing to note.
    pub fn why(self) -> Option<String> {
        Some(match self {
            Unavailable::Stream => return None,
            Unavailable::NotOwner => "not the file's owner, and without CAP_LEASE".to_string(),
            Unavailable::Refused => "the file system refuses leases, or leases are turned off".to_string(),
            Unavailable::Other(errno) => format!("the kernel refused one: {}", io::Error::from_raw_os_error(errno)),
            Unavailable::NoLeases => "this system has no file leases".to_string(),
        })
    }
}

/// How long a writer may be seen before it is believed (see [`Lease::take`]).
const WRITER_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// What the kernel's refusal of a lease means: a writer is there (an
/// error), or no lease can be had here (read without one).
fn refusal(errno: i32) -> std::result::Result<Unavailable, Error> {
    match errno {
        NO_LEASES => Ok(Unavailable::NoLeases),
        libc::EAGAIN => Err(Error::new(ErrorKind::OpenForWriting)),
        libc::EACCES | libc::EPERM => Ok(Unavailable::NotOwner),
        libc::EINVAL => Ok(Unavailable::Refused),
        other => Ok(Unavailable::Other(other)),
    }
}

/// What `platform::lease_take` returns where the system has no leases (no
/// kernel error number is negative).
const NO_LEASES: i32 = platform::NO_LEASES;

/// The states of a taken lease.
const HELD: u8 = 0;
/// Released after the file's hashing was checked and found whole.
const RELEASED: u8 = 1;
/// Found broken (a writer opened the file); released, and every later
/// check of this open file fails.
const BROKEN: u8 = 2;

/// The read lease of one open file, or why it has none.
#[derive(Debug)]
pub struct Lease {
    /// `Ok(state)` when one was taken (`HELD`, `RELEASED`, `BROKEN`).
    taken: std::result::Result<AtomicU8, Unavailable>,
}

/// The error of a label whose file was opened for writing while it was hashed.
fn broken() -> Error {
    super::changed("it was opened for writing")
}

impl Lease {
    /// No lease, for a stream.
    pub fn stream() -> Lease {
        Lease { taken: Err(Unavailable::Stream) }
    }

    /// Takes a read lease on `file` (opened read-only). An error when a
    /// process holds the file open for writing
    /// ([`ErrorKind::OpenForWriting`]); a lease the kernel will not give
    /// for any other reason is [`Lease::unavailable`], not an error.
    pub fn take(file: &File) -> Result<Lease> {
        // A descriptor open for writing may be there for an instant only:
        // a thread that forks lends the child every descriptor of its
        // process until the child's exec closes them (O_CLOEXEC), so a
        // program that writes a file and labels it while another thread
        // starts a process can meet its own closed writer. A writer is
        // believed when it is still there after about 300 ms; a real one
        // (an open descriptor, a shared writable map) stays.
        let mut pause = std::time::Duration::from_millis(5);
        let mut paused = std::time::Duration::ZERO;
        loop {
            match platform::lease_take(file) {
                Ok(()) => return Ok(Lease { taken: Ok(AtomicU8::new(HELD)) }),
                Err(libc::EAGAIN) if paused < WRITER_GRACE => {
                    std::thread::sleep(pause);
                    paused = paused.saturating_add(pause);
                    pause = pause.saturating_mul(2);
                }
                Err(errno) => return refusal(errno).map(|why| Lease { taken: Err(why) }),
            }
        }
    }

    /// Why the file has no lease, when it has none.
    pub fn unavailable(&self) -> Option<Unavailable> {
        self.taken.as_ref().err().copied()
    }

    /// While hashing: fails (and releases the lease at once, so that the
    /// writer waiting in its `open` goes on) when the lease was broken.
    /// Cheap (one `fcntl`); a file without a lease always passes.
    pub fn check_held(&self, file: &File) -> Result<()> {
        let Ok(state) = &self.taken else { return Ok(()) };
        match state.load(Ordering::Acquire) {
            HELD if platform::lease_is_held(file) => Ok(()),
            HELD | BROKEN => {
                if state.swap(BROKEN, Ordering::AcqRel) == HELD {
                    platform::lease_release(file);
                }
                Err(broken())
            }
            _ => Ok(()),
        }
    }

    /// After hashing: fails when the lease was broken (a writer opened the
    /// file meanwhile, or the kernel took the lease back after making one
    /// wait), then releases it. A file checked again (a model labelled a
    /// second time through the library) holds no lease any more; it fails
    /// if a writer holds it open at that moment.
    pub fn check_and_release(&self, file: &File) -> Result<()> {
        let Ok(state) = &self.taken else { return Ok(()) };
        match state.load(Ordering::Acquire) {
            HELD => {
                let whole = platform::lease_is_held(file);
                let was = state.swap(if whole { RELEASED } else { BROKEN }, Ordering::AcqRel);
                if was == HELD {
                    platform::lease_release(file);
                }
                if whole && was == HELD { Ok(()) } else { Err(broken()) }
            }
            RELEASED => match platform::lease_take(file) {
                Ok(()) => {
                    platform::lease_release(file);
                    Ok(())
                }
                Err(libc::EAGAIN) => Err(broken()),
                Err(_) => Ok(()),
            },
            _ => Err(broken()),
        }
    }

    /// Releases the lease if it is held (the file is being closed).
    pub fn release(&self, file: &File) {
        if let Ok(state) = &self.taken {
            if state.swap(RELEASED, Ordering::AcqRel) == HELD {
                platform::lease_release(file);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    fn file_of(dir: &Path, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.join("f");
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn read_only(p: &Path) -> File {
        File::open(p).unwrap()
    }

    /// Opens `p` for writing without waiting for a lease to be released:
    /// with a lease held it fails (EWOULDBLOCK) and breaks the lease.
    fn try_write_open(p: &Path) -> std::io::Result<File> {
        std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(p)
    }

    // Linux leases: the portable path takes none (below).
    #[cfg(not(feature = "portable"))]
    #[test]
    fn a_lease_is_held_until_checked_and_released() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"bytes");
        let f = read_only(&p);
        let lease = Lease::take(&f).unwrap();
        assert_eq!(lease.unavailable(), None);
        assert!(platform::lease_is_held(&f));
        lease.check_held(&f).unwrap();
        // Held, no writer gets in (and the refusal does not signal us to death).
        assert_eq!(try_write_open(&p).unwrap_err().raw_os_error(), Some(libc::EWOULDBLOCK));
        // The attempt broke it: hashing stops, and the lease is let go at once.
        let e = lease.check_held(&f).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::FileChanged(_)), "{e}");
        assert!(e.to_string().contains("opened for writing"), "{e}");
        assert!(!platform::lease_is_held(&f));
        // A broken lease stays a failure for this open file.
        assert!(lease.check_and_release(&f).is_err());
        assert!(lease.check_and_release(&f).is_err());
    }

    // Linux leases: the portable path takes none (below).
    #[cfg(not(feature = "portable"))]
    #[test]
    fn a_whole_file_is_released_after_its_check_and_a_writer_then_gets_in() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"bytes");
        let f = read_only(&p);
        let lease = Lease::take(&f).unwrap();
        lease.check_and_release(&f).unwrap();
        assert!(!platform::lease_is_held(&f));
        let w = try_write_open(&p).expect("no lease held after the check");
        // Checked again (a model labelled twice) while a writer holds it open: refused.
        assert!(lease.check_and_release(&f).is_err());
        drop(w);
        lease.check_and_release(&f).unwrap();
        lease.release(&f);
    }

    // Linux leases: the portable path takes none (below).
    #[cfg(not(feature = "portable"))]
    #[test]
    fn a_file_open_for_writing_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"bytes");
        let w = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        let e = Lease::take(&read_only(&p)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OpenForWriting), "{e}");
        assert!(e.to_string().contains("open for writing"), "{e}");
        drop(w);
        Lease::take(&read_only(&p)).unwrap();
    }

    /// The writer: a shared writable map whose descriptor is
    /// closed still holds the file open for writing.
    // Linux leases: the portable path takes none (below).
    #[cfg(not(feature = "portable"))]
    #[test]
    fn a_writable_shared_map_with_its_descriptor_closed_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), &[0u8; 8192]);
        let w = std::fs::OpenOptions::new().read(true).write(true).open(&p).unwrap();
        // SAFETY: a map of a file only this test uses, written below and
        // unmapped at its end.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&w).unwrap() };
        drop(w);
        map[100] = 1;
        let e = Lease::take(&read_only(&p)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OpenForWriting), "{e}");
        drop(map);
        Lease::take(&read_only(&p)).unwrap();
        // A read-only map (ours) is no writer.
        let r = read_only(&p);
        // SAFETY: as above, read only.
        let _ro = unsafe { memmap2::Mmap::map(&r).unwrap() };
        Lease::take(&read_only(&p)).unwrap();
    }

    /// One run may open a file twice (the same path twice on a command
    /// line): read leases coexist, and each is released on its own.
    // Linux leases: the portable path takes none (below).
    #[cfg(not(feature = "portable"))]
    #[test]
    fn two_opens_of_one_file_both_hold_a_lease() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"bytes");
        let (a, b) = (read_only(&p), read_only(&p));
        let (la, lb) = (Lease::take(&a).unwrap(), Lease::take(&b).unwrap());
        la.check_and_release(&a).unwrap();
        assert!(platform::lease_is_held(&b));
        assert!(try_write_open(&p).is_err(), "the second lease still holds writers off");
        assert!(lb.check_and_release(&b).is_err(), "and it was broken");
    }

    #[test]
    fn the_kernels_refusals_map_to_an_error_or_a_reason() {
        assert!(matches!(refusal(libc::EAGAIN).unwrap_err().kind(), ErrorKind::OpenForWriting));
        assert_eq!(refusal(libc::EACCES).unwrap(), Unavailable::NotOwner);
        assert_eq!(refusal(libc::EPERM).unwrap(), Unavailable::NotOwner);
        assert_eq!(refusal(libc::EINVAL).unwrap(), Unavailable::Refused);
        assert_eq!(refusal(libc::ENOMEM).unwrap(), Unavailable::Other(libc::ENOMEM));
        assert_eq!(refusal(NO_LEASES).unwrap(), Unavailable::NoLeases);
        assert!(Unavailable::NotOwner.why().unwrap().contains("CAP_LEASE"));
        assert!(Unavailable::Refused.why().unwrap().contains("refuses leases"));
        assert!(Unavailable::Other(libc::ENOMEM).why().unwrap().contains("memory"));
        assert_eq!(Unavailable::Stream.why(), None);
    }

    #[test]
    fn a_file_without_a_lease_passes_every_check() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"bytes");
        let f = read_only(&p);
        let lease = Lease { taken: Err(Unavailable::Refused) };
        let _w = try_write_open(&p).unwrap();
        lease.check_held(&f).unwrap();
        lease.check_and_release(&f).unwrap();
        assert_eq!(lease.unavailable(), Some(Unavailable::Refused));
    }

    /// The portable path asks for no lease: every file is read as where
    /// the kernel refuses one, and says so (`read_lease_unavailable`).
    #[cfg(feature = "portable")]
    #[test]
    fn the_portable_path_takes_no_lease_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let p = file_of(dir.path(), b"bytes");
        let _w = try_write_open(&p).unwrap();
        let f = read_only(&p);
        let lease = Lease::take(&f).unwrap();
        assert_eq!(lease.unavailable(), Some(Unavailable::NoLeases));
        assert_eq!(Unavailable::NoLeases.why().unwrap(), "this system has no file leases");
        lease.check_and_release(&f).unwrap();
    }
}
