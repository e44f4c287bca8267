//! Models in the Hugging Face cache, named `hf:ORG/NAME[@REV]` as `ollama:`
//! names a model in Ollama's store (docs/adr/0024). `name` parses a
//! reference and lays it out as `huggingface_hub` does; here a reference
//! is resolved to its snapshot folder, and the cache is listed for `hf:`
//! alone. Everything beneath the cache is read through a [`Root`] of it
//! (docs/adr/0020); nothing is ever downloaded. What a snapshot holds is
//! labelled as any directory is: the input layer opens the [`Snapshot`].

mod error;
pub mod name;

pub use error::HfErrorKind;

pub use name::{Reference, SCHEME, cache_root};

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::FileType;

use crate::error::{Error, ErrorKind, Result};
use crate::source::{Last, Root};

/// A snapshot folder an `hf:` reference resolved to.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The repository folder (`models--ORG--NAME`), held open: the
    /// snapshot's links into its `blobs/` are opened beneath it, as for a
    /// snapshot directory given by path (`Root::around`).
    pub repo: Arc<Root>,
    /// `snapshots/COMMIT`, beneath [`Snapshot::repo`].
    pub rel: PathBuf,
    /// The snapshot folder as messages show it (the cache's path, joined).
    pub shown: PathBuf,
}

/// True when `arg` is an `hf:` reference (the prefix wins over a file of
/// that name: `./hf:x` is the file).
pub fn is_reference(arg: &Path) -> bool {
    arg.to_str().is_some_and(|s| s.starts_with(SCHEME))
}

/// The snapshot folder `reference` (`hf:…`) names in the cache
/// [`cache_root`] finds.
pub fn resolve(reference: &str) -> Result<Snapshot> {
    let parsed = Reference::parse(reference).map_err(|e| e.in_file(Path::new(reference)))?;
    resolve_in(&cache_root()?, &parsed)
}

/// The snapshot folder `r` names in the cache at `cache`: `refs/REV`'s
/// commit, else, for a 40-hex revision, `snapshots/REV` itself (the order
/// `huggingface_hub`'s `try_to_load_from_cache` looks in). Not there is an
/// error saying so and which call would download it; a ref that does not
/// hold exactly a commit, or that names a missing snapshot, is a damaged
/// cache.
pub fn resolve_in(cache: &Path, r: &Reference) -> Result<Snapshot> {
    let not_cached = |what: String| {
        let how = r.download_calls();
        Error::new(HfErrorKind::HfNotCached(format!("{what}; nothing is downloaded here: {how} fetches it")))
    };
    let cache_text = crate::text::escape_name(cache.as_os_str().as_encoded_bytes());
    let Ok(root) = Root::open(cache) else {
        return Err(not_cached(format!(
            "{} is not in the Hugging Face cache: there is no cache at {cache_text}",
            r.repo_id
        )));
    };
    let repo_rel = r.repo_rel();
    let repo_shown = cache.join(&repo_rel);
    let repo = match root.sub(&repo_rel, &repo_shown) {
        Err(e) if e.is_not_found() => {
            let folder = repo_rel.display();
            return Err(not_cached(format!(
                "{} is not in the Hugging Face cache {cache_text} (no {folder})",
                r.repo_id
            )));
        }
        other => other?,
    };
    let rev = r.revision();
    let ref_rel = name::ref_rel(rev);
    let (commit, by_ref) = match read_ref(&repo, &ref_rel, &repo_shown.join(&ref_rel))? {
        Some(commit) => (commit, true),
        None if name::is_commit(rev) => (rev.to_string(), false),
        None => {
            let what = format!("revision {rev} of {} is not in the Hugging Face cache (no refs/{rev})", r.repo_id);
            return Err(not_cached(what));
        }
    };
    let rel = name::snapshot_rel(&commit);
    let shown = repo_shown.join(&rel);
    match repo.file_type(&rel) {
        Ok(FileType::Directory) => Ok(Snapshot { repo, rel, shown }),
        Ok(_) => Err(damaged("not a directory: a snapshot is a folder".into()).in_file(&shown)),
        Err(e) if e.is_not_found() && by_ref => {
            let what = format!("refs/{rev} names commit {commit}, whose snapshot folder is missing");
            Err(damaged(what).in_file(&shown))
        }
        Err(e) if e.is_not_found() => {
            Err(not_cached(format!("commit {commit} of {} is not in the Hugging Face cache", r.repo_id)))
        }
        Err(e) => Err(e.in_file(&shown)),
    }
}

fn damaged(what: String) -> Error {
    Error::new(ErrorKind::DamagedStore(what))
}

/// The commit the ref file `rel` beneath `repo` holds, `None` when there is
/// no such file. `huggingface_hub` writes the 40 hex digits and nothing else
/// (`write_text(commit_hash)`, no newline) and reads the whole file back as
/// the commit: anything else (a newline, upper case, a short hash) names no
/// snapshot there, so it is refused here too. A ref must be a regular file,
/// not a link.
fn read_ref(repo: &Root, rel: &Path, shown: &Path) -> Result<Option<String>> {
    let file = match repo.open_file(rel, Last::NoFollow) {
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            let what = "a symbolic link: huggingface_hub writes a ref as a file holding a commit";
            return Err(damaged(what.into()).in_file(shown));
        }
        other => other.map_err(|e| e.in_file(shown))?,
    };
    let meta = file.metadata().map_err(|e| Error::from(e).in_file(shown))?;
    if !meta.is_file() {
        return Err(damaged("not a regular file: a ref is a file holding a commit".into()).in_file(shown));
    }
    let mut held = Vec::with_capacity(41);
    file.take(41).read_to_end(&mut held).map_err(|e| Error::from(e).in_file(shown))?;
    match std::str::from_utf8(&held).ok().filter(|s| name::is_commit(s)) {
        Some(commit) => Ok(Some(commit.to_string())),
        None => {
            let what = format!(
                "a ref must hold exactly a commit, 40 lowercase hex digits and no newline, as huggingface_hub \
                 writes it; this one begins '{}'",
                crate::text::escape_bytes(&held)
            );
            Err(damaged(what).in_file(shown))
        }
    }
}

/// The cache's models, and the entries that are none.
#[derive(Debug, Default)]
pub struct Listing {
    /// One reference per snapshot some ref names, sorted: `hf:ORG/NAME` for
    /// the snapshot `main` names, else `hf:ORG/NAME@REF` with the least of
    /// its refs' names (byte order).
    pub models: Vec<String>,
    /// Each entry that is not a model repository or a valid ref (an error
    /// naming it, saying why), in path order: reported, the listing goes on.
    pub strays: Vec<Error>,
}

/// Names `huggingface_hub`'s cache scan passes over (`FILES_TO_IGNORE`,
/// `.locks`, `CACHEDIR.TAG`); hidden names are passed over too.
const IGNORED: [&str; 3] = ["CACHEDIR.TAG", "Thumbs.db", "desktop.ini"];
/// Repository folders of other kinds than models, passed over in silence.
const OTHER_KINDS: [&str; 3] = ["datasets--", "spaces--", "kernels--"];
/// How deep refs may nest below `refs/` (`pr/1` is 2).
const MAX_REF_DEPTH: usize = 16;

/// Every snapshot a ref names in the cache at `cache`: each model
/// repository folder `models--…` whose name is a valid repository id, each
/// file below its `refs/` whose name is a valid ref and which holds a
/// commit whose snapshot folder exists (docs/adr/0024). Snapshots no ref
/// names (older revisions) are not listed: a user names them `@COMMIT`.
/// Dataset, space and kernel folders, hidden entries and the files
/// `huggingface_hub` itself ignores are passed over; the shared blob store
/// `blobs/` too. Every other entry is a stray. Only the cache itself
/// unreadable is an error.
pub fn every_snapshot(cache: &Path) -> Result<Listing> {
    let Ok(root) = Root::open(cache) else {
        let which = "$HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub";
        let cache = crate::text::escape_name(cache.as_os_str().as_encoded_bytes());
        let what = format!("no Hugging Face cache found: {cache} is not a directory (the cache is {which})");
        return Err(Error::new(HfErrorKind::HfNotCached(what)));
    };
    let mut listing = Listing::default();
    let mut names = root.entries(Path::new("")).map_err(|e| e.in_file(cache))?;
    names.sort();
    for entry in names {
        let shown = cache.join(&entry);
        let Some(folder) = entry.to_str() else {
            listing.strays.push(stray(&shown, "a name that is not UTF-8".into()));
            continue;
        };
        if folder.starts_with('.') || IGNORED.contains(&folder) || OTHER_KINDS.iter().any(|k| folder.starts_with(k)) {
            continue;
        }
        if folder == "blobs" && root.file_type(&Path::new("blobs").join(".huggingface-shared-blobs")).is_ok() {
            continue;
        }
        let Some(repo_id) = name::repo_id_of_folder(folder) else {
            let why = "not a model repository folder (models--ORG--NAME with a repository id huggingface_hub accepts)";
            listing.strays.push(stray(&shown, why.into()));
            continue;
        };
        match root.sub(Path::new(&entry), &shown) {
            Ok(repo) => list_repo(&repo, &repo_id, &shown, &mut listing),
            Err(e) => listing.strays.push(e.in_file(&shown)),
        }
    }
    listing.models.sort();
    listing.strays.sort_by(|a, b| a.path().cmp(&b.path()));
    Ok(listing)
}

/// The snapshots the refs of one repository name, into `listing`.
fn list_repo(repo: &Root, repo_id: &str, shown: &Path, listing: &mut Listing) {
    // Commit -> the refs naming it, sorted.
    let mut by_commit: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let refs = PathBuf::from("refs");
    match repo.file_type(&refs) {
        Err(e) if e.is_not_found() => return,
        Ok(FileType::Directory) if !repo.is_link(&refs) => {}
        Ok(_) => return listing.strays.push(stray(&shown.join(&refs), "refs is not a folder".into())),
        Err(e) => return listing.strays.push(e.in_file(&shown.join(&refs))),
    }
    let mut dirs: Vec<(PathBuf, Vec<String>)> = vec![(refs, Vec::new())];
    while let Some((dir, parts)) = dirs.pop() {
        let entries = match repo.entries(&dir) {
            Ok(e) => e,
            Err(e) => {
                listing.strays.push(e.in_file(&shown.join(&dir)));
                continue;
            }
        };
        for entry in entries {
            let (rel, at) = (dir.join(&entry), shown.join(dir.join(&entry)));
            let Some(part) = entry.to_str().filter(|p| !IGNORED.contains(p) && *p != ".DS_Store") else {
                if entry.to_str().is_none() {
                    listing.strays.push(stray(&at, "a name that is not UTF-8".into()));
                }
                continue;
            };
            let mut deeper = parts.clone();
            deeper.push(part.to_string());
            let ref_name = deeper.join("/");
            if repo.is_link(&rel) {
                listing.strays.push(stray(&at, "a symbolic link (huggingface_hub writes refs as files)".into()));
                continue;
            }
            match repo.file_type(&rel) {
                Ok(FileType::Directory) if deeper.len() < MAX_REF_DEPTH => dirs.push((rel, deeper)),
                Ok(FileType::Directory) => listing.strays.push(stray(&at, "refs nested too deep".into())),
                Ok(FileType::RegularFile) => match name::ref_error(&ref_name) {
                    Some(why) => listing.strays.push(stray(&at, format!("not a ref name: it {why}"))),
                    None => match read_ref(repo, &rel, &at) {
                        Ok(Some(commit)) => {
                            let snapshot = name::snapshot_rel(&commit);
                            if repo.file_type(&snapshot).is_ok_and(|t| t == FileType::Directory) {
                                by_commit.entry(commit).or_default().insert(ref_name);
                            } else {
                                let why = format!("it names commit {commit}, whose snapshot folder is missing");
                                listing.strays.push(stray(&at, why));
                            }
                        }
                        Ok(None) => listing.strays.push(stray(&at, "it went away while listed".into())),
                        Err(e) => listing.strays.push(e),
                    },
                },
                Ok(_) => listing.strays.push(stray(&at, "not a regular file".into())),
                Err(e) => listing.strays.push(e.in_file(&at)),
            }
        }
    }
    for refs in by_commit.into_values() {
        let shown = match refs.iter().next() {
            _ if refs.contains(name::DEFAULT_REVISION) => format!("{SCHEME}{repo_id}"),
            Some(first) => format!("{SCHEME}{repo_id}@{first}"),
            None => continue,
        };
        listing.models.push(shown);
    }
}

/// An entry of the cache that is no model or ref.
fn stray(path: &Path, why: String) -> Error {
    damaged(format!("not a model of the Hugging Face cache: {why}")).in_file(path)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn cache() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let c = t.path().join("hub");
        std::fs::create_dir_all(&c).unwrap();
        (t, c)
    }

    fn snapshot(c: &Path, folder: &str, commit: &str, refs: &[&str]) {
        let repo = c.join(folder);
        std::fs::create_dir_all(repo.join("snapshots").join(commit)).unwrap();
        for r in refs {
            let f = repo.join("refs").join(r);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, commit).unwrap();
        }
    }

    #[test]
    fn refs_and_commits_resolve_to_snapshot_folders() {
        let (_t, c) = cache();
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        snapshot(&c, "models--o--n", &a, &["main", "refs/pr/1"]);
        snapshot(&c, "models--o--n", &b, &[]);
        let at = |r: &str| resolve_in(&c, &Reference::parse(r).unwrap()).map(|s| s.rel);
        assert_eq!(at("hf:o/n").unwrap(), Path::new("snapshots").join(&a));
        assert_eq!(at("hf:o/n@refs/pr/1").unwrap(), Path::new("snapshots").join(&a));
        assert_eq!(at(&format!("hf:o/n@{b}")).unwrap(), Path::new("snapshots").join(&b));
        for missing in ["hf:o/m", "hf:o/n@v1", &format!("hf:o/n@{}", "c".repeat(40))] {
            let e = at(missing).unwrap_err();
            assert!(matches!(e.kind().of::<HfErrorKind>(), Some(HfErrorKind::HfNotCached(_))), "{missing}: {e}");
            assert!(e.to_string().contains("snapshot_download"), "{e}");
        }
    }

    #[test]
    fn the_listing_names_each_snapshot_a_ref_names_once() {
        let (_t, c) = cache();
        let (a, b, d) = ("a".repeat(40), "b".repeat(40), "d".repeat(40));
        snapshot(&c, "models--o--n", &a, &["main", "v1"]);
        snapshot(&c, "models--o--n", &b, &["v2", "refs/pr/1"]);
        snapshot(&c, "models--o--n", &d, &[]);
        snapshot(&c, "models--gpt2", &a, &["main"]);
        snapshot(&c, "datasets--o--n", &a, &["main"]);
        std::fs::create_dir_all(c.join(".locks")).unwrap();
        std::fs::write(c.join("stray.txt"), b"").unwrap();
        std::fs::create_dir_all(c.join("models--o--n/refs")).unwrap();
        std::fs::write(c.join("models--o--n/refs/bad"), b"nope").unwrap();
        let l = every_snapshot(&c).unwrap();
        assert_eq!(l.models, ["hf:gpt2", "hf:o/n", "hf:o/n@refs/pr/1"]);
        let strays: Vec<String> = l.strays.iter().map(ToString::to_string).collect();
        assert_eq!(strays.len(), 2, "{strays:?}");
        assert!(strays[0].contains("refs/bad") && strays[1].contains("stray.txt"), "{strays:?}");
    }
}
