//! Opening files beneath a directory: containment is a property of how a
//! file is opened, not of a check made before (docs/adr/0020).
//!
//! A [`Root`] holds a descriptor of the directory the tool was pointed at
//! (a directory argument, the directory of a file argument, `verify
//! --root`, an Ollama store). Every path an input leads to (a shard's
//! sibling, an index's files, a directory's entries, a statement's
//! subjects, a store's manifests and blobs) is opened relative to that
//! descriptor with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: the
//! kernel resolves every component, links included, and refuses (`EXDEV`)
//! any resolution that would leave the root, at the moment of the open, so
//! nothing swapped in between a check and the open can lead out. Links that
//! stay inside the root are followed (a Hugging Face snapshot's are).
//!
//! Where `openat2` is missing (Linux before 5.6, or a seccomp filter that
//! answers `ENOSYS`/`EPERM`), the same resolution is walked here a
//! component at a time: each directory opened relative to the one before
//! with `O_NOFOLLOW`, each link read with `readlinkat` and resolved by this
//! code on a stack of descriptors, never by the kernel. That is race-free
//! for the same reason `openat2` is: every step is relative to a descriptor
//! already inside the root, and no step lets the kernel follow a link.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use super::platform::PATH_ONLY;
use crate::error::{Error, ErrorKind, Result};

/// A directory the tool was pointed at, held open: files beneath it are
/// opened relative to this descriptor, never by a path from the top.
#[derive(Debug)]
pub struct Root {
    fd: OwnedFd,
    /// The root as it was named (messages only; never opened again).
    path: PathBuf,
}

/// Whether a symbolic link at the last component of a path is followed
/// (inside the root) or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Last {
    /// Followed, as long as it leads to something inside the root.
    Follow,
    /// Refused (`O_NOFOLLOW`): an Ollama manifest or blob must be a file.
    NoFollow,
}

/// How many links one resolution may follow, as the kernel allows.
const MAX_LINKS: u32 = 40;

/// How often an `openat2` that the kernel asks to retry (`EAGAIN`: a rename
/// elsewhere raced its `..` check) is retried before the walk takes over.
const RETRIES: u32 = 8;

/// Set once `openat2` answered `ENOSYS`: the walk is used from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

impl Root {
    /// Opens the directory `dir` as a root. Links on the way to it are
    /// followed: the user named it (an empty path is the working directory).
    pub fn open(dir: &Path) -> Result<Arc<Root>> {
        let at = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        let flags = PATH_ONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(at, flags, Mode::empty()).map_err(|e| io_error(e).in_file(dir))?;
        Ok(Arc::new(Root { fd, path: dir.to_path_buf() }))
    }

    /// The root as it was named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory `rel` beneath this root as a root of its own, named
    /// `shown` (an Ollama store reached inside `verify`'s root).
    pub fn sub(&self, rel: &Path, shown: &Path) -> Result<Arc<Root>> {
        let flags = PATH_ONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = self.open_fd(rel, flags, Last::Follow).map_err(|e| e.in_file(shown))?;
        Ok(Arc::new(Root { fd, path: shown.to_path_buf() }))
    }

    /// Opens the file `rel` beneath the root for reading (`O_NONBLOCK`: a
    /// FIFO must not make the open wait). Errors carry no path: the caller
    /// names the file as it shows it.
    pub fn open_file(&self, rel: &Path, last: Last) -> Result<File> {
        let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        if last == Last::NoFollow {
            flags |= OFlags::NOFOLLOW;
        }
        Ok(File::from(self.open_fd(rel, flags, last)?))
    }

    /// What `rel` beneath the root is, links inside the root followed.
    pub fn file_type(&self, rel: &Path) -> Result<FileType> {
        let fd = self.open_fd(rel, PATH_ONLY | OFlags::CLOEXEC, Last::Follow)?;
        Ok(FileType::from_raw_mode(rustix::fs::fstat(&fd).map_err(io_error)?.st_mode))
    }

    /// True when `rel`'s last component is itself a symbolic link (the
    /// directories on the way resolved beneath the root).
    pub fn is_link(&self, rel: &Path) -> bool {
        let flags = PATH_ONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        self.open_fd(rel, flags, Last::NoFollow)
            .and_then(|fd| rustix::fs::fstat(&fd).map_err(io_error))
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
    }

    /// The names in the directory `rel` beneath the root (`.` and `..`
    /// left out), read through a descriptor of that directory opened
    /// beneath the root: a directory linked out of the root is refused,
    /// never listed.
    pub fn entries(&self, rel: &Path) -> Result<Vec<OsString>> {
        Ok(self.typed_entries(rel)?.into_iter().map(|(name, _)| name).collect())
    }

    /// [`Root::entries`], each with the type its directory entry records
    /// (`d_type`: what the entry was when listed, no link followed;
    /// [`FileType::Unknown`] on a file system that does not record it).
    /// It is a hint for the directory walk, which would otherwise stat
    /// every entry: whatever it says, a file is stat'ed again when opened.
    pub fn typed_entries(&self, rel: &Path) -> Result<Vec<(OsString, FileType)>> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = self.open_fd(rel, flags, Last::Follow)?;
        let mut dir = rustix::fs::Dir::new(fd).map_err(io_error)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(io_error)?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push((OsString::from(OsStr::from_bytes(name)), entry.file_type()));
            }
        }
        Ok(names)
    }

    /// What `rel` beneath the root is itself (a link is a link, never
    /// followed), every directory on the way a real one: no link is
    /// followed anywhere (each component opened `O_NOFOLLOW` relative to
    /// the one before), so a link on the way is an error, `ELOOP` or
    /// `ENOTDIR`. `rel` holds no `..`. The directory walk resolves links
    /// itself, a step at a time, with this and [`Root::link_target`].
    pub fn entry_type(&self, rel: &Path) -> Result<FileType> {
        let fd = self.open_no_links(rel)?;
        Ok(FileType::from_raw_mode(rustix::fs::fstat(&fd).map_err(io_error)?.st_mode))
    }

    /// The target of the link `rel` beneath the root, reached as
    /// [`Root::entry_type`] reaches it.
    pub fn link_target(&self, rel: &Path) -> Result<Vec<u8>> {
        let fd = self.open_no_links(rel)?;
        Ok(rustix::fs::readlinkat(&fd, "", Vec::new()).map_err(io_error)?.into_bytes())
    }

    /// `rel` opened `O_PATH`, no link followed on the way or at its end.
    fn open_no_links(&self, rel: &Path) -> Result<OwnedFd> {
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, rel.as_os_str().as_bytes()).map_err(|e| self.refusal(e))?;
        let mut here: Option<OwnedFd> = None;
        while let Some(name) = pending.pop() {
            if name == ".." {
                return Err(self.outside());
            }
            let at = here.as_ref().map_or(self.fd.as_fd(), |d| d.as_fd());
            let mut flags = PATH_ONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            if !pending.is_empty() {
                flags |= OFlags::DIRECTORY;
            }
            here = Some(rustix::fs::openat(at, &name, flags, Mode::empty()).map_err(io_error)?);
        }
        match here {
            Some(fd) => Ok(fd),
            None => {
                rustix::fs::openat(self.fd.as_fd(), ".", PATH_ONLY | OFlags::CLOEXEC, Mode::empty()).map_err(io_error)
            }
        }
    }

    /// The refusal of a path that leaves this root.
    pub fn outside(&self) -> Error {
        Error::new(ErrorKind::OutsideRoot { root: self.path.clone() })
    }

    fn open_fd(&self, rel: &Path, flags: OFlags, last: Last) -> Result<OwnedFd> {
        open_beneath(self.fd.as_fd(), rel, flags, last).map_err(|e| self.refusal(e))
    }

    /// A system error as the crate's: leaving the root is
    /// [`ErrorKind::OutsideRoot`], anything else the system's own words.
    fn refusal(&self, e: Errno) -> Error {
        if e == Errno::XDEV {
            return self.outside();
        }
        io_error(e)
    }

    /// The root of a directory a user named, and the directory's path
    /// beneath it: the directory itself, except in a Hugging Face cache.
    /// There a snapshot (`models--ORG--NAME/snapshots/REV/`, or a folder in
    /// it) holds links to `../../blobs/SHA`, so its root is the repository
    /// folder `models--ORG--NAME`: links into its `blobs/` stay inside,
    /// links out of the repository do not. Which directory the snapshot
    /// really is, is read from its resolved path; only the root's extent
    /// depends on that, every open is still beneath the root.
    pub fn around(dir: &Path) -> Result<(Arc<Root>, PathBuf)> {
        if let Some((repo, rel)) = hugging_face_repository(dir) {
            if let Ok(root) = Root::open(&repo) {
                return Ok((root, rel));
            }
        }
        Ok((Root::open(dir)?, PathBuf::new()))
    }
}

/// `(repository folder, snapshots/REV[/...])` when `dir` resolves to a
/// directory inside a Hugging Face cache snapshot.
fn hugging_face_repository(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let at = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let real = std::fs::canonicalize(at).ok()?;
    for repo in real.ancestors().skip(1) {
        let rel = real.strip_prefix(repo).ok()?;
        let mut parts = rel.components();
        let in_snapshot = parts.next() == Some(Component::Normal(OsStr::new("snapshots"))) && parts.next().is_some();
        let is_repo = repo.file_name().and_then(OsStr::to_str).is_some_and(|n| n.starts_with("models--"));
        if in_snapshot && is_repo {
            return Some((repo.to_path_buf(), rel.to_path_buf()));
        }
    }
    None
}

/// A system error as the crate's I/O error.
fn io_error(e: Errno) -> Error {
    Error::from(std::io::Error::from(e))
}

/// Opens `rel` beneath `root`: `openat2` where the kernel has it, the walk
/// where it does not.
fn open_beneath(root: BorrowedFd<'_>, rel: &Path, flags: OFlags, last: Last) -> rustix::io::Result<OwnedFd> {
    let at = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        for _ in 0..RETRIES {
            match super::platform::openat2_beneath(root, at, flags) {
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    break;
                }
                // A seccomp filter may answer EPERM for a call it does not
                // know; the walk then finds out what is really allowed.
                Err(Errno::PERM) => break,
                r => return r,
            }
        }
    }
    walk(root, at, flags, last)
}

/// One step of the walk.
enum Step {
    /// A directory on the way, opened.
    Dir(OwnedFd),
    /// The file asked for, opened.
    Done(OwnedFd),
    /// A link, whose target is to be resolved from where it lies.
    Link(Vec<u8>),
    /// An error that ends the walk.
    Fail(Errno),
}

/// `RESOLVE_BENEATH` done here, a component at a time: directories opened
/// `O_PATH | O_DIRECTORY | O_NOFOLLOW` relative to the one before (kept on
/// a stack), links read with `readlinkat` and their targets resolved the
/// same way from the directory holding them, `..` a pop of the stack
/// (refused at the root), an absolute target refused, at most
/// [`MAX_LINKS`] links. The kernel never follows a link, so nothing can
/// lead out, whatever changes meanwhile.
fn walk(root: BorrowedFd<'_>, rel: &Path, flags: OFlags, last: Last) -> rustix::io::Result<OwnedFd> {
    // The components still to resolve, the next one last.
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, rel.as_os_str().as_bytes())?;
    let mut stack: Vec<OwnedFd> = Vec::new();
    let mut links = 0u32;
    loop {
        let here = stack.last().map_or(root, |d| d.as_fd());
        let Some(name) = pending.pop() else {
            // The path names the directory reached (the root, or after `..`).
            return rustix::fs::openat(here, ".", flags, Mode::empty());
        };
        if name == ".." {
            if stack.pop().is_none() {
                return Err(Errno::XDEV);
            }
            continue;
        }
        let is_last = pending.is_empty();
        let opened = if is_last {
            rustix::fs::openat(here, &name, flags | OFlags::NOFOLLOW, Mode::empty())
        } else {
            let dir = PATH_ONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            rustix::fs::openat(here, &name, dir, Mode::empty())
        };
        let step = match opened {
            // O_PATH | O_NOFOLLOW opens a link itself: look at what it is.
            Ok(fd) if is_last && flags.contains(PATH_ONLY) && last == Last::Follow => {
                match rustix::fs::fstat(&fd).map(|st| FileType::from_raw_mode(st.st_mode)) {
                    Ok(FileType::Symlink) => read_link(here, &name, Errno::LOOP),
                    Ok(_) => Step::Done(fd),
                    Err(e) => Step::Fail(e),
                }
            }
            Ok(fd) if is_last => Step::Done(fd),
            Ok(fd) => Step::Dir(fd),
            Err(e) if is_last && last == Last::NoFollow => Step::Fail(e),
            // ELOOP or ENOTDIR for a link; anything else is no link either.
            Err(e) => read_link(here, &name, e),
        };
        match step {
            Step::Dir(fd) => stack.push(fd),
            Step::Done(fd) => return Ok(fd),
            Step::Fail(e) => return Err(e),
            Step::Link(target) => {
                links = links.saturating_add(1);
                if links > MAX_LINKS {
                    return Err(Errno::LOOP);
                }
                push_components(&mut pending, &target)?;
            }
        }
    }
}

/// The target of the link `name` in `dir`, or `otherwise` when it is no link.
fn read_link(dir: BorrowedFd<'_>, name: &OsStr, otherwise: Errno) -> Step {
    match rustix::fs::readlinkat(dir, name, Vec::new()) {
        Ok(target) => Step::Link(target.into_bytes()),
        Err(_) => Step::Fail(otherwise),
    }
}

/// Puts the components of `path` in front of `pending` (whose next
/// component is its last). An absolute path leaves the root.
fn push_components(pending: &mut Vec<OsString>, path: &[u8]) -> rustix::io::Result<()> {
    if path.first() == Some(&b'/') {
        return Err(Errno::XDEV);
    }
    let parts = path.split(|&b| b == b'/').filter(|p| !p.is_empty() && *p != b".");
    let parts: Vec<&[u8]> = parts.collect();
    pending.extend(parts.into_iter().rev().map(|p| OsString::from(OsStr::from_bytes(p))));
    Ok(())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A root holding files, directories and links of every kind, beside
    /// a file outside it.
    fn tree() -> (tempfile::TempDir, Arc<Root>) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("root");
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        std::fs::write(t.path().join("outside"), b"out").unwrap();
        std::fs::write(r.join("f"), b"f").unwrap();
        std::fs::write(r.join("a/b/g"), b"g").unwrap();
        symlink("f", r.join("to_f")).unwrap();
        symlink("a/b", r.join("to_b")).unwrap();
        symlink("../../f", r.join("a/b/up_f")).unwrap();
        symlink("b/../../f", r.join("a/dotdot_f")).unwrap();
        symlink("../outside", r.join("out")).unwrap();
        symlink("../root/f", r.join("out_and_back")).unwrap();
        symlink("..", r.join("parent")).unwrap();
        symlink(t.path().join("root/f"), r.join("absolute")).unwrap();
        symlink("nowhere", r.join("dangling")).unwrap();
        symlink("loop2", r.join("loop1")).unwrap();
        symlink("loop1", r.join("loop2")).unwrap();
        symlink("/proc/self/root", r.join("magic")).unwrap();
        let root = Root::open(&r).unwrap();
        (t, root)
    }

    fn read(fd: OwnedFd) -> Vec<u8> {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut File::from(fd), &mut v).unwrap();
        v
    }

    /// What opening `rel` gives: the bytes read, or the error number.
    fn outcome(r: rustix::io::Result<OwnedFd>) -> std::result::Result<Vec<u8>, Errno> {
        r.map(read)
    }

    const READ: OFlags = OFlags::RDONLY.union(OFlags::CLOEXEC);

    #[test]
    fn opens_beneath_the_root_and_nowhere_else() {
        let (_t, root) = tree();
        type Case = (&'static str, Last, std::result::Result<&'static [u8], Errno>);
        let cases: &[Case] = &[
            ("f", Last::Follow, Ok(b"f")),
            ("a/b/g", Last::Follow, Ok(b"g")),
            ("to_f", Last::Follow, Ok(b"f")),
            ("to_b/g", Last::Follow, Ok(b"g")),
            ("a/b/up_f", Last::Follow, Ok(b"f")),
            ("a/dotdot_f", Last::Follow, Ok(b"f")),
            ("to_b/../b/g", Last::Follow, Ok(b"g")),
            ("to_f", Last::NoFollow, Err(Errno::LOOP)),
            ("to_b/g", Last::NoFollow, Ok(b"g")),
            ("out", Last::Follow, Err(Errno::XDEV)),
            ("out_and_back", Last::Follow, Err(Errno::XDEV)),
            ("parent/outside", Last::Follow, Err(Errno::XDEV)),
            ("../outside", Last::Follow, Err(Errno::XDEV)),
            ("absolute", Last::Follow, Err(Errno::XDEV)),
            ("missing", Last::Follow, Err(Errno::NOENT)),
            ("dangling", Last::Follow, Err(Errno::NOENT)),
            ("loop1", Last::Follow, Err(Errno::LOOP)),
            ("f/x", Last::Follow, Err(Errno::NOTDIR)),
        ];
        for (rel, last, want) in cases {
            let mut flags = READ;
            if *last == Last::NoFollow {
                flags |= OFlags::NOFOLLOW;
            }
            let want = want.map(<[u8]>::to_vec);
            let kernel = rustix::fs::openat2(
                root.fd.as_fd(),
                *rel,
                flags,
                Mode::empty(),
                rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_MAGICLINKS,
            );
            if !matches!(kernel, Err(Errno::NOSYS)) {
                assert_eq!(outcome(kernel), want, "openat2 {rel}");
            }
            assert_eq!(outcome(walk(root.fd.as_fd(), Path::new(rel), flags, *last)), want, "walk {rel}");
        }
        // An absolute link is refused even where it leads back inside.
        assert_eq!(walk(root.fd.as_fd(), Path::new("magic"), READ, Last::Follow).unwrap_err(), Errno::XDEV);
        // A magic link (/proc/self/cwd) is never followed: openat2 refuses
        // it (RESOLVE_NO_MAGICLINKS), the walk reads its absolute target.
        let proc = Root::open(Path::new("/proc/self")).unwrap();
        let dir = PATH_ONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        assert!(open_beneath(proc.fd.as_fd(), Path::new("cwd"), dir, Last::Follow).is_err());
        assert_eq!(walk(proc.fd.as_fd(), Path::new("cwd"), dir, Last::Follow).unwrap_err(), Errno::XDEV);
        // The root itself, and a directory through a link, for listing.
        let dir = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        assert!(walk(root.fd.as_fd(), Path::new(""), dir, Last::Follow).is_ok());
        assert!(walk(root.fd.as_fd(), Path::new("to_b"), dir, Last::Follow).is_ok());
        assert_eq!(walk(root.fd.as_fd(), Path::new("parent"), dir, Last::Follow).unwrap_err(), Errno::XDEV);
    }

    #[test]
    fn kinds_links_and_listings_stay_beneath_the_root() {
        let (_t, root) = tree();
        assert_eq!(root.file_type(Path::new("to_f")).unwrap(), FileType::RegularFile);
        assert_eq!(root.file_type(Path::new("to_b")).unwrap(), FileType::Directory);
        let e = root.file_type(Path::new("out")).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutsideRoot { .. }), "{e}");
        assert!(e.to_string().contains("leads outside"), "{e}");
        assert!(root.is_link(Path::new("to_f")) && root.is_link(Path::new("out")));
        assert!(!root.is_link(Path::new("f")) && !root.is_link(Path::new("missing")));
        let mut names = root.entries(Path::new("to_b")).unwrap();
        names.sort();
        assert_eq!(names, ["g", "up_f"]);
        let e = root.entries(Path::new("parent")).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutsideRoot { .. }), "{e}");
        let sub = root.sub(Path::new("to_b"), Path::new("shown")).unwrap();
        assert_eq!(read(sub.open_file(Path::new("g"), Last::Follow).unwrap().into()), b"g");
        let e = sub.open_file(Path::new("up_f"), Last::Follow).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutsideRoot { root } if root == Path::new("shown")), "{e}");
        let e = root.open_file(Path::new("to_f"), Last::NoFollow).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    }

    /// The walk's hint: each entry's type as listed, a link as a link
    /// (never followed), and only beneath the root.
    #[test]
    fn typed_entries_give_each_entry_s_own_type() {
        let (_t, root) = tree();
        let mut got = root.typed_entries(Path::new("")).unwrap();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        let kind = |name: &str| got.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        // tmpfs and ext4 record types; a file system that does not gives Unknown.
        let want = [
            ("f", FileType::RegularFile),
            ("a", FileType::Directory),
            ("to_f", FileType::Symlink),
            ("to_b", FileType::Symlink),
        ];
        for (name, want) in want {
            assert!(matches!(kind(name), Some(t) if t == want || t == FileType::Unknown), "{name}: {got:?}");
        }
        assert_eq!(got.len(), root.entries(Path::new("")).unwrap().len());
        assert!(got.iter().all(|(n, _)| n != "." && n != ".."));
        let e = root.typed_entries(Path::new("out")).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutsideRoot { .. }) || e.raw_os_error() == Some(libc::ENOTDIR), "{e}");
    }

    #[test]
    fn a_hugging_face_snapshot_is_rooted_at_its_repository_folder() {
        let t = tempfile::tempdir().unwrap();
        let snap = t.path().join("models--org--name/snapshots/abc");
        std::fs::create_dir_all(snap.join("sub")).unwrap();
        let real = std::fs::canonicalize(t.path()).unwrap();
        let (root, rel) = Root::around(&snap).unwrap();
        assert_eq!(root.path(), real.join("models--org--name"));
        assert_eq!(rel, Path::new("snapshots/abc"));
        let (_, rel) = Root::around(&snap.join("sub")).unwrap();
        assert_eq!(rel, Path::new("snapshots/abc/sub"));
        // The snapshots folder itself, the repository, and a look-alike
        // outside a `models--` folder are their own roots.
        for own in [snap.parent().unwrap().to_path_buf(), t.path().join("models--org--name")] {
            let (root, rel) = Root::around(&own).unwrap();
            assert_eq!((root.path(), rel.as_path()), (own.as_path(), Path::new("")));
        }
        std::fs::create_dir_all(t.path().join("other/snapshots/abc")).unwrap();
        let (_, rel) = Root::around(&t.path().join("other/snapshots/abc")).unwrap();
        assert_eq!(rel, Path::new(""));
    }
}
