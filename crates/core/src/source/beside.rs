//! Where the files an input names are opened: beside the file that names
//! them, beneath the same root (docs/adr/0020). A [`Beside`] is a directory
//! beneath a [`Root`]; a [`Source`] opened beneath a root keeps the one it
//! lies in, so that its shards, an index's files or a directory's entries
//! are opened there, and a file the user named gets the one
//! [`Root::around`] gives its directory.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::FileType;

use super::{Backing, Last, RangeDir, ReadMode, Root, Source};
use crate::error::{Error, ErrorKind, Result, SYMBOLIC_LINK};

/// A directory beneath a root, as a file in it was reached: where the
/// files that file names are opened (a shard's siblings, an index's files,
/// a directory argument's entries), beneath the same root.
///
/// Or the place a remote object lies ([`RangeDir`], docs/adr/0044): the
/// same questions, answered by the remote side, names held to the same
/// rule (plain names only).
#[derive(Debug, Clone)]
pub struct Beside {
    place: Place,
}

/// Where a [`Beside`]'s files are.
#[derive(Debug, Clone)]
enum Place {
    /// A directory beneath a root.
    Local {
        root: Arc<Root>,
        /// The directory's path beneath the root.
        dir: PathBuf,
        /// The directory as messages show it (what the user named, joined).
        shown: PathBuf,
    },
    /// A remote place (a bucket's prefix, an HTTP folder).
    Remote(Arc<dyn RangeDir>),
}

impl Beside {
    /// The directory `dir` beneath `root`, shown as `shown`.
    pub fn new(root: Arc<Root>, dir: PathBuf, shown: PathBuf) -> Beside {
        Beside { place: Place::Local { root, dir, shown } }
    }

    /// A remote place, where a remote object's files are opened.
    pub fn remote(place: Arc<dyn RangeDir>) -> Beside {
        Beside { place: Place::Remote(place) }
    }

    /// A directory the user named, under its root ([`Root::around`]).
    pub fn around(shown: &Path) -> Result<Beside> {
        let (root, dir) = Root::around(shown)?;
        Ok(Beside::new(root, dir, shown.to_path_buf()))
    }

    /// The directory as messages show it.
    pub fn shown(&self) -> &Path {
        match &self.place {
            Place::Local { shown, .. } => shown,
            Place::Remote(r) => r.shown(),
        }
    }

    /// How messages show the file `name` in this directory.
    pub fn path_of(&self, name: &OsStr) -> PathBuf {
        self.shown().join(name)
    }

    /// Opens the file `name` in this directory, beneath the root; a link
    /// is followed as long as it stays inside the root.
    pub fn open(&self, name: &OsStr, mode: ReadMode) -> Result<Source> {
        self.open_with(name, mode, Last::Follow)
    }

    /// Opens the file `name` in this directory as [`Beside::open`] does,
    /// `last` saying whether it may itself be a link.
    pub fn open_with(&self, name: &OsStr, mode: ReadMode, last: Last) -> Result<Source> {
        let shown = self.path_of(name);
        let rel = self.rel(name).map_err(|e| e.in_file(&shown))?;
        match &self.place {
            Place::Local { root, .. } => Source::open_beneath(root, &rel, &shown, mode, last),
            // An object store has no links: `last` has nothing to refuse.
            Place::Remote(r) => r.open(name, mode),
        }
    }

    /// True when `name` here is a regular file (through links inside the
    /// root), or a link that leads out of the root: opening that one is
    /// refused, saying so, rather than passed over in silence.
    pub fn holds_file(&self, name: &OsStr) -> bool {
        let root = match &self.place {
            Place::Local { root, .. } => root,
            Place::Remote(r) => return self.rel(name).is_ok() && r.holds_file(name),
        };
        match self.rel(name).and_then(|rel| root.file_type(&rel)) {
            Ok(t) => t == FileType::RegularFile,
            Err(e) => matches!(e.kind(), ErrorKind::OutsideRoot { .. }),
        }
    }

    /// Opens `rel`, one or more plain components below this directory
    /// (an ONNX model's external data), beneath the root: every directory
    /// on the way must be a real one (a link there is refused, as the
    /// directory walk refuses it), the last component is opened as
    /// [`Beside::open`] opens a name. Errors carry `rel` joined to this
    /// directory as the path.
    pub fn open_below(&self, rel: &Path, mode: ReadMode) -> Result<Source> {
        let shown = self.shown().join(rel);
        let parts: Vec<&OsStr> = rel
            .components()
            .map(|c| match c {
                Component::Normal(n) => Ok(n),
                _ => Err(Error::internal("a path to open below a directory is not plain components").in_file(&shown)),
            })
            .collect::<Result<_>>()?;
        let (root, base) = match &self.place {
            Place::Local { root, dir, .. } => (root, dir),
            Place::Remote(r) => return r.open_below(rel, mode),
        };
        let mut dir = base.clone();
        for n in parts.iter().take(parts.len().saturating_sub(1)) {
            dir.push(n);
            let t = root.entry_type(&dir).map_err(|e| e.in_file(&shown))?;
            if t != FileType::Directory {
                return Err(Error::new(ErrorKind::NotRegularFile("a path through a link or a file, not a directory"))
                    .in_file(&shown));
            }
        }
        Source::open_beneath(root, &base.join(rel), &shown, mode, Last::Follow)
    }

    /// The names of this directory's entries, read through a descriptor of
    /// it opened beneath the root.
    pub fn names(&self) -> Result<Vec<OsString>> {
        match &self.place {
            Place::Local { root, dir, shown } => root.entries(dir).map_err(|e| e.in_file(shown)),
            Place::Remote(r) => r.names(),
        }
    }

    /// Every file below a remote place, relative names sorted
    /// ([`RangeDir::walk`]); a local directory is walked by the directory
    /// model's own walk, which resolves links (an internal error here).
    pub fn walk(&self) -> Result<Vec<Vec<u8>>> {
        match &self.place {
            Place::Remote(r) => r.walk(),
            Place::Local { .. } => Err(Error::internal("a local directory is walked by the directory model")),
        }
    }

    /// The directory `levels` above this one as a root of its own, shown
    /// as `shown`; beneath this root, so one above it is refused.
    pub fn root_above(&self, levels: usize, shown: &Path) -> Result<Arc<Root>> {
        let (root, dir) = match &self.place {
            Place::Local { root, dir, .. } => (root, dir),
            // Nothing above a remote object is opened (no `../`).
            Place::Remote(_) => return Err(Error::new(ErrorKind::NotRegularFile("a remote object")).in_file(shown)),
        };
        let depth = dir.components().count();
        match depth.checked_sub(levels) {
            Some(keep) => {
                let rel: PathBuf = dir.components().take(keep).collect();
                root.sub(&rel, shown)
            }
            None => Err(root.outside().in_file(shown)),
        }
    }

    /// `name`'s path beneath the root: only a plain file name is one
    /// (callers pass names they checked; anything else is a bug).
    fn rel(&self, name: &OsStr) -> Result<PathBuf> {
        let mut parts = Path::new(name).components();
        let dir = match &self.place {
            Place::Local { dir, .. } => dir.as_path(),
            Place::Remote(_) => Path::new(""),
        };
        match (parts.next(), parts.next()) {
            (Some(Component::Normal(n)), None) if n == name => Ok(dir.join(name)),
            _ => Err(Error::internal("a name to open beside a file is not a plain file name")),
        }
    }
}

impl Source {
    /// Opens the regular file `rel` beneath `root` (docs/adr/0020): the
    /// kernel refuses any resolution that leaves the root
    /// ([`ErrorKind::OutsideRoot`]); a link inside it is followed, unless
    /// `last` refuses one at the last component
    /// ([`ErrorKind::NotRegularFile`]`(`[`SYMBOLIC_LINK`]`)`). `shown` names
    /// it in output and errors. The files it names are opened beneath the
    /// same root ([`Source::beside`]).
    pub fn open_beneath(root: &Arc<Root>, rel: &Path, shown: &Path, mode: ReadMode, last: Last) -> Result<Source> {
        let file = root.open_file(rel, last).map_err(|e| {
            // ELOOP is also a loop of links on the way; only the last
            // component being a link is this refusal (looked at after the
            // open failed, for the wording alone).
            if last == Last::NoFollow && e.raw_os_error() == Some(libc::ELOOP) && root.is_link(rel) {
                Error::new(ErrorKind::NotRegularFile(SYMBOLIC_LINK)).in_file(shown)
            } else {
                e.in_file(shown)
            }
        })?;
        let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        let beside = Beside::new(Arc::clone(root), parent(rel), parent(shown));
        // `Source` releases its lease on drop, so it is changed in place
        // rather than rebuilt from its fields.
        let mut source = Source::from_opened(shown, file, mode)?;
        source.beside = Some(beside);
        Ok(source)
    }

    /// The directory this file was opened in, beneath its root: where the
    /// files it names (shards, an index's files) are opened. For a file
    /// opened by a path the user gave, its directory as named, under the
    /// root [`Root::around`] gives it.
    pub fn beside(&self) -> Result<Beside> {
        match (&self.beside, &self.backing) {
            (Some(b), _) => Ok(b.clone()),
            (None, Backing::Stream(_)) => Err(Error::internal("a stream has no directory")),
            (None, Backing::Ranged(r)) => Ok(Beside::remote(r.beside()?)),
            (None, Backing::File(_)) => Beside::around(self.path.parent().unwrap_or(Path::new(""))),
        }
    }

    /// The directory `levels` above this file's as a root of its own, shown
    /// as `shown`: beneath this file's root when it was opened beneath one
    /// (one above that root is refused), else as the user named it.
    pub fn root_above(&self, levels: usize, shown: &Path) -> Result<Arc<Root>> {
        match (&self.beside, &self.backing) {
            (Some(b), _) => b.root_above(levels, shown),
            (None, Backing::Ranged(r)) => Beside::remote(r.beside()?).root_above(levels, shown),
            (None, Backing::File(_) | Backing::Stream(_)) => Root::open(shown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_beneath_refuses_a_symbolic_link_that_open_follows_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (target, link) = (dir.path().join("f"), dir.path().join("link"));
        std::fs::write(&target, b"bytes").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let beneath =
            |rel: &str, last| Source::open_beneath(&root, Path::new(rel), &dir.path().join(rel), ReadMode::Mmap, last);
        assert_eq!(Source::open(&link, ReadMode::Mmap).unwrap().len(), 5);
        assert_eq!(beneath("f", Last::NoFollow).unwrap().len(), 5);
        // An absolute link inside the root is still a way out (RESOLVE_BENEATH).
        let e = beneath("link", Last::Follow).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutsideRoot { .. }), "{e}");
        let e = beneath("link", Last::NoFollow).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::NotRegularFile(SYMBOLIC_LINK)), "{e}");
        assert_eq!(e.path(), Some(link.as_path()));
        std::os::unix::fs::symlink("f", dir.path().join("relative")).unwrap();
        assert_eq!(beneath("relative", Last::Follow).unwrap().len(), 5);
        // A loop of links on the way is the system's own error, not this one.
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", &b).unwrap();
        let e = beneath("a/f", Last::NoFollow).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{e}");
        // The files a file names are opened beside it, beneath its root.
        let s = beneath("f", Last::Follow).unwrap();
        assert_eq!(s.beside().unwrap().open("relative".as_ref(), ReadMode::Pread).unwrap().len(), 5);
        assert!(s.beside().unwrap().open("link".as_ref(), ReadMode::Pread).is_err());
    }
}
