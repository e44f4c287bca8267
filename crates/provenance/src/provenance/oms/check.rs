//! The model checked against a verified manifest, as model_signing 1.1.1
//! recomputes it: every regular file beneath the root (its ignore paths,
//! git's files and the signature itself left out) cut as the signer cut it
//! (whole, or at multiples of the shard size; an empty file has no shard),
//! every piece of every file hashed in one run of the scheduler (largest
//! first across files), every file answered `OK`,
//! `FAILED`, missing or unexpected. Every file is opened beneath the root
//! ([`Root`]), and every signed name is located before any file is opened.
//! A Hugging Face cache snapshot is walked as its directory label walks it
//! (its root the repository folder, its links into `blobs/` resolved a step
//! at a time), so what `sign --format oms` signed there verifies.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use std::os::unix::fs::MetadataExt as _;

use rustix::fs::FileType;

use crate::directory::walk::{Store, walk};
use crate::error::{Error, Result, Subject};
use crate::hash::{Conversion, Job};
use crate::provenance::oms::manifest::{Manifest, Method};
use crate::provenance::oms::relayout;
use crate::schedule::{BatchOptions, HashJobs, JobList, hash_sets};
use crate::source::{Beside, Last, ReadMode, Root, Source};

/// What git keeps beside a model, left out as model_signing leaves it out.
const GIT_PATHS: [&str; 4] = [".git", ".gitattributes", ".github", ".gitignore"];

/// A piece of a file: start, end, its signed digest.
type Piece = (u64, u64, [u8; 32]);

/// The verdict on one file.
#[derive(Debug)]
pub enum Verdict {
    /// Every piece's digest is the signed one.
    Ok,
    /// A piece's digest differs, or the file is cut otherwise than signed
    /// (its size changed), with why.
    Failed(String),
    /// Signed, and not in the model.
    Missing,
    /// In the model, and not signed.
    Unexpected,
    /// It could not be read.
    Unreadable(Error),
}

/// The answer for every file, sorted as model_signing sorts paths.
#[derive(Debug)]
pub struct Report {
    /// Each file's path (relative to the root, `/`-separated) and verdict.
    pub files: Vec<(String, Verdict)>,
    /// The signature's ignore paths that are not below the model (absolute,
    /// or with a `..` component): they ignore nothing, as model_signing
    /// drops them.
    pub dropped_ignore_paths: Vec<String>,
}

impl Report {
    /// True when every file is `OK`.
    pub fn passed(&self) -> bool {
        self.files.iter().all(|(_, v)| matches!(v, Verdict::Ok))
    }
}

/// Refuses, before anything is opened, a signed name that leads out of
/// `root` through a symbolic link (absolute names and `..` were refused
/// when the statement was read). The open beneath the root is what holds
/// if the links change in between.
pub fn locate_all(root: &Path, manifest: &Manifest) -> Result<()> {
    let root = if root.as_os_str().is_empty() { Path::new(".") } else { root };
    // A snapshot's links lead into its repository's `blobs/`: its extent.
    let (extent, snapshot) = Root::around(root).map_or_else(
        |_| (root.to_path_buf(), false),
        |(r, beneath)| (r.path().to_path_buf(), !beneath.as_os_str().is_empty()),
    );
    let Ok(real_root) = extent.canonicalize() else { return Ok(()) };
    // And the cache's shared (Xet) store, when it is one: `<cache>/blobs/`
    // holding its marker, where a snapshot's blobs may link on to.
    let shared = real_root
        .parent()
        .map(|cache| cache.join("blobs"))
        .filter(|b| snapshot && b.join(".huggingface-shared-blobs").is_file());
    let mut seen = std::collections::HashSet::new();
    for r in &manifest.resources {
        if !seen.insert(r.path.as_str()) {
            continue;
        }
        if let Ok(real) = root.join(&r.path).canonicalize() {
            if !real.starts_with(&real_root) && !shared.as_ref().is_some_and(|b| real.starts_with(b)) {
                return Err(Error::schema(format!(
                    "resource {:?} is refused: it leads outside the root through a symbolic link; nothing was opened",
                    r.path
                )));
            }
        }
    }
    Ok(())
}

/// Whether an ignore path names something below the model: model_signing
/// joins it to the model's path and drops it when the result is not below
/// (an absolute path); one with a `..` component matches no file its walk
/// yields. Either way it ignores nothing.
fn below_the_model(p: &str) -> bool {
    !p.starts_with('/') && !p.split('/').any(|c| c == "..")
}

/// One file the walk found: its name as signed, and where it is opened.
struct Entry {
    /// Relative to the model directory.
    rel: PathBuf,
    /// The root it is opened beneath (a snapshot's repository, or its
    /// shared blob store).
    root: Arc<Root>,
    /// Its path beneath that root.
    at: PathBuf,
    /// Whether a link at its end is followed (the walk resolved the rest).
    last: Last,
}

/// Checks the model directory `dir` against `manifest`; `signature` (the
/// bundle's path) is left out when it lies in the model: the file at its
/// own relative path, if the descriptor opened there is the bundle's file.
pub fn check(
    dir: &Path,
    manifest: &Manifest,
    signature: &Path,
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> Result<Report> {
    let ser = &manifest.serialization;
    let (ignored, dropped) = ignore_rule(manifest);
    let skip = |rel: &str| skipped(&ignored, rel);
    // The bundle: its place in the model, and the file it is (its own
    // descriptor, opened once here).
    let sig_rel = relayout::inside(dir, signature);
    let sig_id = std::fs::File::open(signature).and_then(|f| f.metadata()).ok().map(|m| (m.dev(), m.ino()));
    let found = entries(dir, ser.allow_symlinks, &skip)?;

    let signed = signed_pieces(manifest);
    let mut files: Vec<(String, Verdict)> = Vec::new();
    let mut opened: Vec<(usize, Source, Vec<Piece>)> = Vec::new();
    let mut present = std::collections::HashSet::new();
    for Entry { rel, root, at, last } in found {
        let shown = dir.join(&rel);
        let Some(name) = rel.to_str().map(str::to_string) else {
            files.push((String::from_utf8_lossy(rel.as_os_str().as_bytes()).into_owned(), Verdict::Unexpected));
            continue;
        };
        let Some(pieces) = signed.get(name.as_str()) else {
            // A file the signer could not have seen: the signature itself,
            // at its own path only, and only if the file opened there is it
            // (a link to it elsewhere, hard or not, is a file like any other).
            let is_sig = sig_rel.as_deref() == Some(rel.as_path())
                && root
                    .open_file(&at, last)
                    .and_then(|f| f.metadata().map_err(Error::from))
                    .is_ok_and(|m| sig_id == Some((m.dev(), m.ino())));
            // An empty file has no shard: nothing of it is signed.
            let no_shard = matches!(ser.method, Method::Shards(_))
                && Source::open_beneath(&root, &at, &shown, ReadMode::Mmap, last).is_ok_and(|s| s.is_empty());
            if !is_sig && !no_shard {
                files.push((name, Verdict::Unexpected));
            }
            continue;
        };
        present.insert(name.clone());
        let source = Source::open_beneath(&root, &at, &shown, ReadMode::Mmap, last);
        admit(name, source, pieces, ser.method, &mut files, &mut opened);
    }
    finish(files, &opened, &signed, &present, dropped, opts, pool)
}

/// Checks the remote prefix `place` (a URL ending in `/`,
/// docs/adr/0052-oms-of-urls.md) against `manifest` as [`check`] checks a
/// local directory: its objects listed once (the listing is what is in
/// the model), each signed name opened below the prefix by its plain
/// components (the opener refuses any other; the manifest already refused
/// absolute names and `..`), its version pinned, cut as signed and its
/// pieces hashed by ranges, then checked unchanged; a listed object not
/// signed is unexpected, a signed name not listed missing. No symbolic
/// link exists there, and the signature is not among the objects.
pub fn check_place(
    place: &Beside,
    manifest: &Manifest,
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> Result<Report> {
    let ser = &manifest.serialization;
    let (ignored, dropped) = ignore_rule(manifest);
    let skip = |rel: &str| skipped(&ignored, rel);
    let listed = place.walk()?;
    let signed = signed_pieces(manifest);
    let mut files: Vec<(String, Verdict)> = Vec::new();
    let mut opened: Vec<(usize, Source, Vec<Piece>)> = Vec::new();
    let mut present = std::collections::HashSet::new();
    for name in listed {
        // No signed name is other than UTF-8: such an object is unexpected.
        let name = match String::from_utf8(name) {
            Ok(name) => name,
            Err(e) => {
                files.push((String::from_utf8_lossy(e.as_bytes()).into_owned(), Verdict::Unexpected));
                continue;
            }
        };
        if skip(&name) {
            continue;
        }
        let Some(pieces) = signed.get(name.as_str()) else {
            // An empty object has no shard: nothing of it is signed.
            let no_shard = matches!(ser.method, Method::Shards(_))
                && place.open_below(Path::new(&name), opts.open.read_mode).is_ok_and(|s| s.is_empty());
            if !no_shard {
                files.push((name, Verdict::Unexpected));
            }
            continue;
        };
        present.insert(name.clone());
        let source = place.open_below(Path::new(&name), opts.open.read_mode);
        admit(name, source, pieces, ser.method, &mut files, &mut opened);
    }
    finish(files, &opened, &signed, &present, dropped, opts, pool)
}

/// The signature's ignore paths below the model (normalised) with git's
/// files, and those not below it (absolute, or with `..`: they ignore
/// nothing, as model_signing drops them).
fn ignore_rule(manifest: &Manifest) -> (Vec<String>, Vec<&String>) {
    let (kept, dropped): (Vec<&String>, Vec<&String>) =
        manifest.serialization.ignore_paths.iter().partition(|p| below_the_model(p));
    let ignored = kept.into_iter().map(|p| normal(p)).chain(GIT_PATHS.map(String::from)).collect();
    (ignored, dropped)
}

/// True when `rel` is an ignored path or lies below one.
fn skipped(ignored: &[String], rel: &str) -> bool {
    ignored
        .iter()
        .any(|i| !i.is_empty() && (rel == i || rel.strip_prefix(i.as_str()).is_some_and(|r| r.starts_with('/'))))
}

/// The signed pieces of each file, by path (a whole file's end is
/// `u64::MAX` until its length is known).
fn signed_pieces(manifest: &Manifest) -> BTreeMap<&str, Vec<Piece>> {
    let mut signed: BTreeMap<&str, Vec<Piece>> = BTreeMap::new();
    for r in &manifest.resources {
        let (start, end) = r.range.unwrap_or((0, u64::MAX));
        signed.entry(r.path.as_str()).or_default().push((start, end, r.digest));
    }
    signed
}

/// A signed file, opened (or not): unreadable, cut otherwise than signed
/// (its size changed), or kept in `opened` with its pieces to be hashed
/// (answered `OK` unless [`judge`] finds otherwise).
fn admit(
    name: String,
    source: Result<Source>,
    pieces: &[Piece],
    method: Method,
    files: &mut Vec<(String, Verdict)>,
    opened: &mut Vec<(usize, Source, Vec<Piece>)>,
) {
    let source = match source {
        Err(e) => return files.push((name, Verdict::Unreadable(e))),
        Ok(source) => source,
    };
    let mut pieces = pieces.to_vec();
    pieces.sort_unstable();
    let len = source.len();
    let cut = cut(method, len);
    let wanted: Vec<(u64, u64)> = pieces.iter().map(|&(s, e, _)| (s, if e == u64::MAX { len } else { e })).collect();
    if cut != wanted {
        return files.push((name, Verdict::Failed(format!("{len} bytes, cut otherwise than signed"))));
    }
    let pieces = pieces.iter().zip(&cut).map(|(&(_, _, d), &(s, e))| (s, e, d)).collect();
    files.push((name, Verdict::Ok));
    opened.push((files.len().saturating_sub(1), source, pieces));
}

/// The answers: every signed name not found is missing, then every opened
/// file judged.
fn finish(
    mut files: Vec<(String, Verdict)>,
    opened: &[(usize, Source, Vec<Piece>)],
    signed: &BTreeMap<&str, Vec<Piece>>,
    present: &std::collections::HashSet<String>,
    dropped: Vec<&String>,
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> Result<Report> {
    for name in signed.keys() {
        if !present.contains(*name) {
            files.push((name.to_string(), Verdict::Missing));
        }
    }
    let files = judge(files, opened, opts, pool);
    Ok(Report { files, dropped_ignore_paths: dropped.into_iter().cloned().collect() })
}

/// Every piece of every opened file hashed and compared with its signed
/// digest, each file then checked unchanged; `files` (its slots named in
/// `opened`) answered and sorted as model_signing sorts paths.
fn judge(
    mut files: Vec<(String, Verdict)>,
    opened: &[(usize, Source, Vec<Piece>)],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> Vec<(String, Verdict)> {
    // Every piece of every file in one run of the scheduler, largest first
    // across all files; a file's pieces are one set of jobs.
    let sets: Vec<JobList<'_>> = opened
        .iter()
        .map(|(_, source, pieces)| {
            JobList(
                pieces
                    .iter()
                    .map(|&(start, end, _)| Job {
                        source,
                        start,
                        len: end.saturating_sub(start),
                        conversion: Conversion::none(1, "bytes"),
                        subject: Subject::Key(format!("bytes {start}..{end}").into_bytes()),
                        gather: None,
                    })
                    .collect(),
            )
        })
        .collect();
    let set_refs: Vec<&dyn HashJobs> = sets.iter().map(|s| s as &dyn HashJobs).collect();
    let hashed = hash_sets(&set_refs, Some(pool), &opts.open.pieces, &|n| tally(opts, n));
    let mut bad: HashMap<usize, Vec<String>> = HashMap::new();
    for ((slot, source, pieces), r) in opened.iter().zip(hashed) {
        match r {
            Ok(digests) => {
                for (&(s, e, signed), d) in pieces.iter().zip(digests) {
                    if d != signed {
                        bad.entry(*slot).or_default().push(if pieces.len() > 1 {
                            format!("bytes {s}..{e}")
                        } else {
                            String::new()
                        });
                    }
                }
            }
            Err(e) => {
                if let Some(v) = files.get_mut(*slot) {
                    v.1 = Verdict::Unreadable(e.in_file(source.path()));
                }
            }
        }
    }
    for (slot, source, _) in opened {
        if let Err(e) = source.check_unchanged() {
            if let Some(v) = files.get_mut(*slot) {
                v.1 = Verdict::Unreadable(e);
            }
        }
    }
    for (slot, mut where_) in bad {
        if let Some(v) = files.get_mut(slot) {
            if matches!(v.1, Verdict::Ok) {
                where_.retain(|w| !w.is_empty());
                where_.sort();
                v.1 = Verdict::Failed(where_.join(", "));
            }
        }
    }
    files.sort_by(|a, b| a.0.split('/').cmp(b.0.split('/')));
    files
}

fn tally(opts: &BatchOptions, n: u64) -> Result<()> {
    if let Some(p) = &opts.progress {
        p.fetch_add(n, Ordering::Relaxed);
    }
    if opts.cancel.as_deref().is_some_and(|c| c.load(Ordering::Relaxed)) {
        return Err(Error::new(crate::error::ErrorKind::Cancelled));
    }
    Ok(())
}

/// The pieces a file of `len` bytes is cut into.
pub fn cut(method: Method, len: u64) -> Vec<(u64, u64)> {
    match method {
        Method::Files => vec![(0, len)],
        Method::Shards(size) => {
            let mut out = Vec::new();
            let mut start = 0u64;
            while start < len {
                let end = start.saturating_add(size).min(len);
                out.push((start, end));
                start = end;
            }
            out
        }
    }
}

/// An ignore path as Python's `pathlib` reads it: `./a/` is `a`.
fn normal(p: &str) -> String {
    p.split('/').filter(|c| !c.is_empty() && *c != ".").collect::<Vec<_>>().join("/")
}

/// Every file of the model directory `dir` not skipped. A Hugging Face
/// cache snapshot is walked as its label walks it (`directory::walk`: its
/// links resolved beneath the repository folder); any other directory by
/// [`walk_plain`], as model_signing walks it.
fn entries(dir: &Path, allow_symlinks: bool, skip: &dyn Fn(&str) -> bool) -> Result<Vec<Entry>> {
    let (_, beneath) = Root::around(dir)?;
    if beneath.as_os_str().is_empty() {
        let root = Root::open(dir)?;
        let mut found = Vec::new();
        walk_plain(&root, PathBuf::new(), allow_symlinks, skip, &mut found)?;
        let last = if allow_symlinks { Last::Follow } else { Last::NoFollow };
        return Ok(found
            .into_iter()
            .map(|rel| Entry { at: rel.clone(), rel, root: Arc::clone(&root), last })
            .collect());
    }
    let tree = walk(dir)?;
    let mut out = Vec::new();
    for f in &tree.files {
        let rel = PathBuf::from(std::ffi::OsStr::from_bytes(&f.name));
        if rel.to_str().is_some_and(skip) {
            continue;
        }
        // A file of the snapshot that is not where its name says is a link.
        if !allow_symlinks && (f.store != Store::Main || f.at != beneath.join(&rel)) {
            return Err(Error::schema(format!(
                "{} is a symbolic link, and the signature was made without allow_symlinks",
                tree.shown_path(&f.name).display()
            )));
        }
        let root = tree.root(f.store).ok_or_else(|| Error::internal("a file in no root"))?;
        out.push(Entry { rel, root: Arc::clone(root), at: f.at.clone(), last: Last::NoFollow });
    }
    Ok(out)
}

/// Every regular file beneath `dir` (relative to the root). A symbolic
/// link is refused unless the signer allowed them; then one to a file is
/// that file (opened beneath the root) and one to a directory is not
/// entered, as model_signing's walk does.
fn walk_plain(
    root: &Root,
    dir: PathBuf,
    allow_symlinks: bool,
    skip: &dyn Fn(&str) -> bool,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    let mut names: Vec<OsString> = root.entries(&dir).map_err(|e| e.in_file(&root.path().join(&dir)))?;
    names.sort();
    for name in names {
        let rel = dir.join(&name);
        if rel.to_str().is_some_and(skip) {
            continue;
        }
        let shown = root.path().join(&rel);
        if root.is_link(&rel) {
            if !allow_symlinks {
                return Err(Error::schema(format!(
                    "{} is a symbolic link, and the signature was made without allow_symlinks",
                    shown.display()
                )));
            }
            match root.file_type(&rel) {
                Ok(FileType::RegularFile) => out.push(rel),
                Ok(_) => {}
                Err(e) => return Err(e.in_file(&shown)),
            }
            continue;
        }
        match root.file_type(&rel).map_err(|e| e.in_file(&shown))? {
            FileType::Directory => walk_plain(root, rel, allow_symlinks, skip, out)?,
            FileType::RegularFile => out.push(rel),
            _ => return Err(Error::schema(format!("{} is neither a file nor a directory", shown.display()))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_cut_as_model_signing_cuts_them() {
        assert_eq!(cut(Method::Shards(4), 10), [(0, 4), (4, 8), (8, 10)]);
        assert_eq!(cut(Method::Shards(4), 8), [(0, 4), (4, 8)]);
        assert!(cut(Method::Shards(4), 0).is_empty());
        assert_eq!(cut(Method::Files, 0), [(0, 0)]);
        assert_eq!(normal("./a//b/"), "a/b");
    }

    #[test]
    fn ignore_paths_not_below_the_model_ignore_nothing() {
        assert!(below_the_model("model.sig") && below_the_model("./a/b") && below_the_model("a..b"));
        assert!(!below_the_model("/evil.py") && !below_the_model("../m/evil.py") && !below_the_model("a/../evil.py"));
    }
}
