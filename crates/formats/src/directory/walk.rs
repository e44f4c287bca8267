//! The files of a directory (directory contract §2): walked recursively
//! beneath its root, the root's own version-control entries skipped, every symbolic link
//! resolved here one step at a time and each step checked where it lands,
//! anything that is not a regular file refused.
//!
//! Nothing is followed by the kernel while walking: each entry is looked
//! at with `Root::entry_type` (no link followed on the way or at the
//! end) and each link read with `Root::link_target`, both beneath a
//! [`Root`] held open. An entry its directory listing records as a regular
//! file or a link (`d_type`, also never followed) is taken as that without
//! a stat of its own, and so is a snapshot's blob the listing of
//! `<repo>/blobs/` records as a regular file: the open that follows stats
//! every file anyway, and refuses a link or anything but a regular file
//! there, so a file relabelled from the verified-leaf cache costs one
//! `statx` (docs/adr/0033). A link's target is resolved by this code on names
//! (a `..` only from a directory checked to be a real one), so a step that
//! would leave the root is refused before anything there is touched. The
//! files found are later opened beneath the same root, by the resolved
//! path, refusing a link at the end (docs/adr/0020, docs/adr/0023).
//!
//! A Hugging Face cache snapshot (`<repo>/snapshots/<rev>`, `<repo>/blobs`
//! a real directory) is walked beneath `<repo>`: its links land in
//! `<repo>/blobs/`; and beneath a second root, the cache-wide shared store
//! `<cache>/blobs/` (marked by `.huggingface-shared-blobs`), for links
//! that pass through a link directly in `<repo>/blobs/`.

use crate::directory::DirectoryErrorKind;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::FileType;

use crate::error::{Error, ErrorKind, Result};
use crate::source::Root;

/// The most links one chain may take (as the kernel allows).
pub const MAX_STEPS: usize = 40;

/// Entries of the root that are not content, with everything below them
/// (contract §2, revision 2: only directly in the root, as OpenSSF model
/// signing leaves them out; a `.git` below the root is content, since a
/// planted `.git/config` runs code in any `git` command started there).
const SKIPPED: [&[u8]; 4] = [b".git", b".github", b".gitattributes", b".gitignore"];

/// The top-level directory `huggingface_hub` keeps a `local_dir`'s
/// download metadata in.
const CACHE_DIR: &[u8] = b".cache";

/// The file that marks `<cache>/blobs/` as the shared blob store.
const SHARED_MARKER: &str = ".huggingface-shared-blobs";

/// What a partial download in `<repo>/blobs/` ends in.
const INCOMPLETE: &[u8] = b".incomplete";

/// Which root a file lies beneath.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// The directory's root (for a snapshot: its repository folder).
    Main,
    /// The cache-wide shared blob store `<cache>/blobs/`.
    Shared,
}

/// One file of the directory, its links resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its relative path in the directory, `/`-separated, raw bytes.
    pub name: Vec<u8>,
    /// The root the regular file lies beneath.
    pub store: Store,
    /// The regular file's path beneath that root (no link in it).
    pub at: PathBuf,
    /// For a snapshot: the name of the entry of `<repo>/blobs/` its chain
    /// of links reached first, when it reached one.
    pub blob: Option<Vec<u8>>,
}

/// A directory walked: its files and where they lie.
#[derive(Debug)]
pub struct Tree {
    /// The directory as the user named it (messages only).
    pub shown: PathBuf,
    /// The root its files lie beneath (for a snapshot, `<repo>`).
    pub main: Arc<Root>,
    /// The shared blob store, when a snapshot's cache has one.
    pub shared: Option<Arc<Root>>,
    /// True for a Hugging Face cache snapshot.
    pub snapshot: bool,
    /// Every file, sorted by name.
    pub files: Vec<Found>,
    /// For a snapshot, the partial downloads (`*.incomplete`) in its
    /// repository's `blobs/`, by name.
    pub incomplete: Vec<Vec<u8>>,
}

impl Tree {
    /// How messages show the file named `name` (a relative path).
    pub fn shown_path(&self, name: &[u8]) -> PathBuf {
        self.shown.join(OsStr::from_bytes(name))
    }

    /// The root `store` names.
    pub fn root(&self, store: Store) -> Option<&Arc<Root>> {
        match store {
            Store::Main => Some(&self.main),
            Store::Shared => self.shared.as_ref(),
        }
    }
}

/// A place, as names below the walk's base: the root itself, or for a
/// snapshot the cache (`<repo>` is then the first name).
type Place = Vec<Vec<u8>>;

/// The names of a listing (a remote prefix's objects, `/`-separated,
/// relative) that a walk of the same files on disk would find: the root's
/// version-control entries and `.cache` directory left out, sorted; an
/// empty result is the walk's own error.
pub fn listed(mut names: Vec<Vec<u8>>, dir: &Path) -> Result<Vec<Vec<u8>>> {
    names.retain(|n| {
        let (first, below) = match n.iter().position(|&b| b == b'/') {
            Some(i) => (n.get(..i).unwrap_or(&[]), true),
            None => (n.as_slice(), false),
        };
        !(SKIPPED.contains(&first) || (below && first == CACHE_DIR))
    });
    if names.is_empty() {
        return Err(entry_error("holds no file; a directory label needs at least one".into()).in_file(dir));
    }
    names.sort();
    Ok(names)
}

/// Where the walk may go.
struct Layout {
    main: Arc<Root>,
    shared: Option<Arc<Root>>,
    /// The repository's folder name, for a snapshot.
    repo: Option<Vec<u8>>,
    /// The root, as a place.
    root: Place,
    /// The base's real path (for absolute link targets).
    base: PathBuf,
    shown: PathBuf,
    /// For a snapshot, the entries of `<repo>/blobs/` with the types their
    /// listing records (a hint: see the module).
    blobs: HashMap<Vec<u8>, FileType>,
}

fn entry_error(what: String) -> Error {
    Error::new(DirectoryErrorKind::DirectoryEntry(what))
}

fn joined(names: &[Vec<u8>]) -> PathBuf {
    let mut p = PathBuf::new();
    for n in names {
        p.push(OsStr::from_bytes(n));
    }
    p
}

impl Layout {
    /// The root and path beneath it of a place; `None` outside every root.
    /// The shared store is reachable only by a chain that passed through a
    /// link directly in `<repo>/blobs/`.
    fn locate(&self, place: &[Vec<u8>], via_blob_link: bool) -> Option<(Store, PathBuf)> {
        let Some(repo) = &self.repo else { return Some((Store::Main, joined(place))) };
        match place.split_first() {
            Some((first, rest)) if first == repo => Some((Store::Main, joined(rest))),
            Some((first, rest)) if first.as_slice() == b"blobs" && via_blob_link && self.shared.is_some() => {
                (!rest.is_empty()).then(|| (Store::Shared, joined(rest)))
            }
            _ => None,
        }
    }

    fn root_of(&self, store: Store) -> Result<&Arc<Root>> {
        match store {
            Store::Main => Ok(&self.main),
            Store::Shared => self.shared.as_ref().ok_or_else(|| Error::internal("no shared blob store")),
        }
    }

    /// What lies at `place` (itself: a link is a link), every directory on
    /// the way a real one.
    fn entry_type(&self, place: &[Vec<u8>], via: bool) -> Result<FileType> {
        let (store, rel) = self.locate(place, via).ok_or_else(|| self.outside())?;
        self.root_of(store)?.entry_type(&rel)
    }

    fn outside(&self) -> Error {
        Error::new(ErrorKind::OutsideRoot { root: self.shown.clone() })
    }

    /// What a link's step landed on: a blob of `<repo>/blobs/` its listing
    /// records as a regular file is taken as one (the module says why),
    /// anything else is looked at ([`Layout::entry_type`]).
    fn landing_type(&self, place: &[Vec<u8>], via: bool) -> Result<FileType> {
        let listed = match place {
            [_, _, name] if self.in_repo_blobs(place) => self.blobs.get(name).copied(),
            _ => None,
        };
        match listed {
            Some(FileType::RegularFile) => Ok(FileType::RegularFile),
            _ => self.entry_type(place, via),
        }
    }

    /// True when `place` lies in `<repo>/blobs/` directly.
    fn in_repo_blobs(&self, place: &[Vec<u8>]) -> bool {
        match (&self.repo, place) {
            (Some(repo), [r, b, _]) => r == repo && b.as_slice() == b"blobs",
            _ => false,
        }
    }

    /// Whether a chain may end in a regular file at `place`: inside the
    /// root, or for a snapshot below `<repo>/blobs/` or (through a link in
    /// it) in the shared store.
    fn may_end(&self, place: &[Vec<u8>], via: bool) -> bool {
        if place.starts_with(&self.root) {
            return true;
        }
        let Some(repo) = &self.repo else { return false };
        match place {
            [r, b, _, ..] if r == repo && b.as_slice() == b"blobs" => true,
            [b, _, ..] if b.as_slice() == b"blobs" => via && self.shared.is_some(),
            _ => false,
        }
    }

    /// Resolves the link at `link` (a place, known to be a link) to the
    /// regular file its chain ends in: where it lies, and the entry of
    /// `<repo>/blobs/` the chain reached first.
    fn resolve(&self, link: Place) -> Result<(Store, PathBuf, Option<Vec<u8>>)> {
        let mut seen: HashSet<Place> = HashSet::new();
        let mut at = link;
        let mut via = false;
        let mut blob: Option<Vec<u8>> = None;
        for _ in 0..MAX_STEPS {
            if !seen.insert(at.clone()) {
                return Err(looped());
            }
            via = via || self.in_repo_blobs(&at);
            let (store, rel) = self.locate(&at, via).ok_or_else(|| self.outside())?;
            let target = self.root_of(store)?.link_target(&rel)?;
            at = self.land(&at, &target, via)?;
            if blob.is_none() && self.in_repo_blobs(&at) {
                blob = at.last().cloned();
            }
            match self.landing_type(&at, via).map_err(|e| self.step_error(e, &target))? {
                FileType::Symlink => continue,
                FileType::RegularFile if self.may_end(&at, via) => {
                    let (store, rel) = self.locate(&at, via).ok_or_else(|| self.outside())?;
                    return Ok((store, rel, blob));
                }
                FileType::RegularFile => return Err(self.outside()),
                FileType::Directory => {
                    return Err(entry_error(
                        "is a symbolic link to a directory; only links to files are followed".into(),
                    ));
                }
                other => return Err(Error::new(ErrorKind::NotRegularFile(kind_name(other)))),
            }
        }
        Err(looped())
    }

    /// Where the target of the link at `link` lands: resolved on names from
    /// the link's directory, a `..` only out of a directory checked to be a
    /// real one. A target may pass above the base and come back down its
    /// own real path (`../back-in/x` from the root `back-in`): contract §2
    /// checks a step where it lands. Above the base only the base's real
    /// path is followed: each of its prefixes is a real directory (the path
    /// was canonicalized), so nothing outside is looked at; a name off that
    /// path leads outside.
    fn land(&self, link: &[Vec<u8>], target: &[u8], via: bool) -> Result<Place> {
        let (mut at, rest): (Place, &[u8]) = if target.first() == Some(&b'/') {
            let path = Path::new(OsStr::from_bytes(target));
            let below = path.strip_prefix(&self.base).map_err(|_| self.outside())?;
            (Vec::new(), below.as_os_str().as_bytes())
        } else {
            (link.get(..link.len().saturating_sub(1)).unwrap_or_default().to_vec(), target)
        };
        let base: Vec<&[u8]> = self.base.iter().map(OsStrExt::as_bytes).filter(|n| *n != b"/").collect();
        // Levels above the base (0: at it or below).
        let mut above = 0usize;
        for part in rest.split(|&b| b == b'/') {
            match part {
                b"" | b"." => {}
                b".." if above > 0 || at.is_empty() => {
                    above = above.checked_add(1).filter(|&a| a <= base.len()).ok_or_else(|| self.outside())?;
                }
                name if above > 0 => {
                    // Back down only along the base's own real path.
                    let next = base.len().checked_sub(above).and_then(|i| base.get(i));
                    if next != Some(&name) {
                        return Err(self.outside());
                    }
                    above = above.saturating_sub(1);
                }
                b".." => {
                    if self.entry_type(&at, via).map_err(|e| self.step_error(e, target))? != FileType::Directory {
                        return Err(through_link(target));
                    }
                    at.pop();
                }
                name => at.push(name.to_vec()),
            }
        }
        if above > 0 {
            return Err(self.outside());
        }
        Ok(at)
    }

    /// A failed look at where a step landed, worded for the link.
    fn step_error(&self, e: Error, target: &[u8]) -> Error {
        if e.is_not_found() {
            return entry_error(format!(
                "is a dangling symbolic link: its target {} does not exist",
                crate::text::escape_bytes(target)
            ));
        }
        match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR) => through_link(target),
            _ => e,
        }
    }
}

fn looped() -> Error {
    entry_error(format!("is a loop of symbolic links (the same link met twice, or more than {MAX_STEPS} steps)"))
}

fn through_link(target: &[u8]) -> Error {
    entry_error(format!(
        "is a symbolic link whose target {} passes through a link or a file where a directory should be; \
         only real directories are passed through",
        crate::text::escape_bytes(target)
    ))
}

fn kind_name(t: FileType) -> &'static str {
    match t {
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        _ => "not a file",
    }
}

/// The layout of the directory `dir` names: its real path, and whether it
/// is a Hugging Face cache snapshot.
fn layout(path: &Path, dir: &Path, within: Option<&Path>) -> Result<Layout> {
    let at = if path.as_os_str().is_empty() { Path::new(".") } else { path };
    let real = std::fs::canonicalize(at).map_err(|e| Error::from(e).in_file(dir))?;
    let inside = |p: &Path| within.is_none_or(|w| p.starts_with(w));
    if !inside(&real) {
        return Err(
            Error::new(ErrorKind::OutsideRoot { root: within.unwrap_or(Path::new("")).to_path_buf() }).in_file(dir)
        );
    }
    if !real.is_dir() {
        return Err(Error::from(std::io::Error::from_raw_os_error(libc::ENOTDIR)).in_file(dir));
    }
    let snapshot = real.parent().filter(|p| p.file_name() == Some(OsStr::new("snapshots"))).and_then(|snapshots| {
        let repo = snapshots.parent()?;
        let (repo_name, rev) = (repo.file_name()?, real.file_name()?);
        let blobs = std::fs::symlink_metadata(repo.join("blobs")).ok()?;
        let found = (repo.to_path_buf(), repo_name.as_bytes().to_vec(), rev.as_bytes().to_vec());
        (blobs.is_dir() && inside(repo)).then_some(found)
    });
    let shown = dir.to_path_buf();
    let Some((repo, repo_name, rev)) = snapshot else {
        let main = Root::open(&real).map_err(|e| e.in_file(dir))?;
        let blobs = HashMap::new();
        return Ok(Layout { main, shared: None, repo: None, root: Vec::new(), base: real, shown, blobs });
    };
    let main = Root::open(&repo).map_err(|e| e.in_file(dir))?;
    let cache = repo.parent().map(Path::to_path_buf).unwrap_or_default();
    let shared = shared_store(&cache).filter(|_| repo_name.as_slice() != b"blobs" && inside(&cache.join("blobs")));
    let root = vec![repo_name.clone(), b"snapshots".to_vec(), rev];
    let blobs = main.typed_entries(Path::new("blobs")).map_err(|e| e.in_file(dir))?;
    let blobs = blobs.into_iter().map(|(n, t)| (n.as_bytes().to_vec(), t)).collect();
    Ok(Layout { main, shared, repo: Some(repo_name), root, base: cache, shown, blobs })
}

/// The cache-wide shared blob store `<cache>/blobs/`, when it is a real
/// directory holding the regular file that marks it.
fn shared_store(cache: &Path) -> Option<Arc<Root>> {
    let blobs = cache.join("blobs");
    if !std::fs::symlink_metadata(&blobs).ok()?.is_dir() {
        return None;
    }
    let root = Root::open(&blobs).ok()?;
    (root.entry_type(Path::new(SHARED_MARKER)).ok()? == FileType::RegularFile).then_some(root)
}

/// Walks the directory `dir` names (contract §2). Errors name the file.
pub fn walk(dir: &Path) -> Result<Tree> {
    walk_within(dir, dir, None)
}

/// Walks the directory at `path`, shown as `dir`; with `within` (a real
/// path), a directory or store outside it is not used: the directory is
/// refused, a snapshot is walked as a plain directory, a shared store is
/// left out (`verify`'s subjects stay beneath its root).
pub fn walk_within(path: &Path, dir: &Path, within: Option<&Path>) -> Result<Tree> {
    let layout = layout(path, dir, within)?;
    let mut files = Vec::new();
    // (place, relative path) of each directory still to list.
    let mut pending: Vec<(Place, Vec<u8>)> = vec![(layout.root.clone(), Vec::new())];
    while let Some((place, rel)) = pending.pop() {
        let (store, beneath) = layout.locate(&place, false).ok_or_else(|| layout.outside())?;
        let shown_dir = dir.join(OsStr::from_bytes(&rel));
        let mut names = layout.root_of(store)?.typed_entries(&beneath).map_err(|e| e.in_file(&shown_dir))?;
        // Sorted: of several bad entries, the same one is named every time.
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, listed) in names {
            let name = name.as_bytes().to_vec();
            if rel.is_empty() && SKIPPED.contains(&name.as_slice()) {
                continue;
            }
            let mut entry_rel = rel.clone();
            if !entry_rel.is_empty() {
                entry_rel.push(b'/');
            }
            entry_rel.extend_from_slice(&name);
            let mut entry = place.clone();
            entry.push(name.clone());
            let shown = dir.join(OsStr::from_bytes(&entry_rel));
            let located = |e: Error| e.in_file(&shown);
            // A regular file or a link as listed (the module says why);
            // anything else looked at.
            let kind = match listed {
                FileType::RegularFile | FileType::Symlink => listed,
                _ => layout.entry_type(&entry, false).map_err(located)?,
            };
            match kind {
                FileType::Directory if rel.is_empty() && name == CACHE_DIR => {}
                FileType::Directory => pending.push((entry, entry_rel)),
                FileType::RegularFile => {
                    let (store, at) = layout.locate(&entry, false).ok_or_else(|| located(layout.outside()))?;
                    files.push(Found { name: entry_rel, store, at, blob: None });
                }
                FileType::Symlink => {
                    let (store, at, blob) = layout.resolve(entry).map_err(located)?;
                    files.push(Found { name: entry_rel, store, at, blob });
                }
                other => return Err(located(Error::new(ErrorKind::NotRegularFile(kind_name(other))))),
            }
        }
    }
    if files.is_empty() {
        return Err(entry_error("holds no file; a directory label needs at least one".into()).in_file(dir));
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    let mut incomplete: Vec<Vec<u8>> = layout.blobs.keys().filter(|n| n.ends_with(INCOMPLETE)).cloned().collect();
    incomplete.sort();
    Ok(Tree {
        shown: layout.shown,
        snapshot: layout.repo.is_some(),
        main: layout.main,
        shared: layout.shared,
        files,
        incomplete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn write(p: &Path, b: &[u8]) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }

    #[test]
    fn a_snapshot_s_links_end_in_its_blobs_and_the_shared_store() {
        let t = tempfile::tempdir().unwrap();
        let cache = std::fs::canonicalize(t.path()).unwrap();
        let repo = cache.join("models--o--n");
        let snap = repo.join("snapshots/rev");
        write(&repo.join("blobs/aa"), b"a");
        write(&cache.join("blobs/bb"), b"b");
        write(&cache.join("blobs/.huggingface-shared-blobs"), b"");
        symlink("../../blobs/bb", repo.join("blobs/bb")).unwrap();
        std::fs::create_dir_all(snap.join("d")).unwrap();
        symlink("../../blobs/aa", snap.join("a")).unwrap();
        symlink("../../../blobs/bb", snap.join("d/b")).unwrap();
        // An absolute link inside the root is a step like any other.
        write(&snap.join("real"), b"r");
        symlink(snap.join("real"), snap.join("abs")).unwrap();
        let tree = walk(&snap).unwrap();
        assert!(tree.snapshot && tree.shared.is_some());
        type Row<'a> = (&'a [u8], Store, &'a Path, Option<&'a [u8]>);
        let got: Vec<Row<'_>> =
            tree.files.iter().map(|f| (f.name.as_slice(), f.store, f.at.as_path(), f.blob.as_deref())).collect();
        assert_eq!(
            got,
            [
                (&b"a"[..], Store::Main, Path::new("blobs/aa"), Some(&b"aa"[..])),
                (b"abs", Store::Main, Path::new("snapshots/rev/real"), None),
                (b"d/b", Store::Shared, Path::new("bb"), Some(&b"bb"[..])),
                (b"real", Store::Main, Path::new("snapshots/rev/real"), None),
            ]
        );
        // Without the marker, the shared store is no store: the link leads out.
        std::fs::remove_file(cache.join("blobs/.huggingface-shared-blobs")).unwrap();
        let e = walk(&snap).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::OutsideRoot { .. }), "{e}");
        assert_eq!(e.path(), Some(snap.join("d/b").as_path()));
    }

    #[test]
    fn version_control_entries_are_skipped_only_in_the_root() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("r");
        for name in [".git/config", ".github/x", ".gitattributes", ".gitignore", "m"] {
            write(&root.join(name), b"x");
            write(&root.join("sub").join(name), b"x");
        }
        let tree = walk(&root).unwrap();
        let names: Vec<&[u8]> = tree.files.iter().map(|f| f.name.as_slice()).collect();
        let want: [&[u8]; 6] =
            [b"m", b"sub/.git/config", b"sub/.gitattributes", b"sub/.github/x", b"sub/.gitignore", b"sub/m"];
        assert_eq!(names, want);
    }

    #[test]
    fn a_dot_dot_out_of_a_linked_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("r");
        write(&root.join("a/b/f"), b"f");
        write(&root.join("x"), b"x");
        // `.git/..` is `a/b/..` to the kernel, `.` on names: refused (the
        // link itself is a skipped entry, so only `y` is looked at).
        symlink("a/b", root.join(".git")).unwrap();
        symlink(".git/../x", root.join("y")).unwrap();
        let e = walk(&root).unwrap_err();
        assert!(e.to_string().contains("passes through a link"), "{e}");
        assert_eq!(e.path(), Some(root.join("y").as_path()));
    }
}
