//! Opening a directory (directory contract): its files walked ([`walk`]),
//! grouped into components by every format's rule ([`group`]), each file
//! opened once beneath its root, each component's model opened by the rule
//! of the format that planned it and every other file held open to be
//! hashed whole; with `--verify-blobs`, each file a snapshot links to a
//! blob audited.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::directory::group::{Plan, group};
use crate::directory::model::{Audit, Component, JobRef, Model, Part, SourceAt};
use crate::directory::skeleton::Kind;
use crate::directory::walk::{Found, Tree, walk, walk_within};
use crate::error::{Error, ErrorKind, Result};
use crate::format::OpenOptions;
use crate::format::directory_rule::{DirectoryRule, Held, Placed};
use crate::source::{Last, Root, Source};

/// What a Git LFS pointer file begins with.
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1";

/// The error for a model one of whose files is a Git LFS pointer, if one is
/// (contract §3: a file that claims a format by its name is never hashed
/// as bytes in its place).
fn lfs_pointer(sources: &[&Source]) -> Result<()> {
    for s in sources {
        if s.len() >= LFS_POINTER.len() as u64 && s.head(LFS_POINTER.len() as u64)? == LFS_POINTER {
            return Err(Error::new(ErrorKind::LfsPointer).in_file(s.path()));
        }
    }
    Ok(())
}

impl Model {
    /// Opens the directory `dir` (directory contract): walks it, groups its
    /// files and opens every one, once, beneath its root. Errors name the
    /// file (or `d/P` for a grouping refused).
    pub fn open(dir: &Path, opts: &OpenOptions) -> Result<Model> {
        Model::open_tree(walk(dir)?, dir, opts)
    }

    /// Opens the directory `rel` beneath `root`, shown as `shown` (a
    /// statement's subject under `verify`'s root): it, and any blob store
    /// its links reach, must lie inside the root.
    pub fn open_beneath(root: &Root, rel: &Path, shown: &Path, opts: &OpenOptions) -> Result<Model> {
        let at = if root.path().as_os_str().is_empty() { Path::new(".") } else { root.path() };
        let within = std::fs::canonicalize(at).map_err(|e| Error::from(e).in_file(root.path()))?;
        Model::open_tree(walk_within(&root.path().join(rel), shown, Some(&within))?, shown, opts)
    }

    /// Opens the directory `dir` from its walk `tree` (each file once, as
    /// [`Model::open`] does): for a caller that needs what the walk found
    /// (`sign --format oms`: which files, reached through which links).
    pub fn open_tree(tree: Tree, dir: &Path, opts: &OpenOptions) -> Result<Model> {
        let found: HashMap<&[u8], &Found> = tree.files.iter().map(|f| (f.name.as_slice(), f)).collect();
        let open = |name: &[u8]| -> Result<Source> {
            let f = found.get(name).ok_or_else(|| Error::internal("a file the walk did not find"))?;
            let root = tree.root(f.store).ok_or_else(|| Error::internal("a file in no root"))?;
            Source::open_beneath(root, &f.at, &tree.shown_path(name), opts.read_mode, Last::NoFollow)
        };
        let names: Vec<Vec<u8>> = tree.files.iter().map(|f| f.name.clone()).collect();
        Model::open_listed(&names, &open, Some(&tree), &tree.shown, dir, opts)
    }

    /// Opens a remote prefix ending in `/` as a directory (docs/adr/0044):
    /// its objects listed (`RangeDir::walk`, bounded), the names a local
    /// walk leaves out left out, each opened below the prefix by its
    /// relative name; grouped and labelled as a local directory of the
    /// same files is.
    pub fn open_place(place: &crate::source::Beside, opts: &OpenOptions) -> Result<Model> {
        let shown = place.shown().to_path_buf();
        let names = crate::directory::walk::listed(place.walk()?, &shown)?;
        let open = |name: &[u8]| -> Result<Source> {
            let rel = std::str::from_utf8(name).map_err(|_| Error::internal("an object name that is not UTF-8"))?;
            place.open_below(Path::new(rel), opts.read_mode)
        };
        Model::open_listed(&names, &open, None, &shown, &shown, opts)
    }

    /// A directory's files by name (sorted, `/`-separated), each opened by
    /// `open`; `tree` when they were walked on disk (a snapshot's blobs are
    /// audited from it).
    fn open_listed(
        names: &[Vec<u8>],
        open: &dyn Fn(&[u8]) -> Result<Source>,
        tree: Option<&Tree>,
        shown: &Path,
        dir: &Path,
        opts: &OpenOptions,
    ) -> Result<Model> {
        // What each list's reading kept, by the list's relative path.
        let mut held: HashMap<Vec<u8>, Held> = HashMap::new();
        let mut lister = |name: &[u8], rule: &'static dyn DirectoryRule| -> Result<Vec<Vec<u8>>> {
            let source = open(name)?;
            lfs_pointer(&[&source])?;
            let (files, kept) = rule.read_list(source, *opts)?;
            held.insert(name.to_vec(), kept);
            Ok(files)
        };
        let plans = group(names, &mut lister).map_err(|e| e.in_file(dir))?;
        let mut components = Vec::with_capacity(plans.len());
        let mut kept = Vec::new();
        let mut index_of: HashMap<Vec<u8>, usize> = HashMap::new();
        for plan in plans {
            let component = open_component(plan, &open, &mut held, dir, opts, &mut kept, &mut index_of)?;
            components.push(component);
        }
        Model::assemble(tree, shown, components, kept, &index_of, opts)
    }

    fn assemble(
        tree: Option<&Tree>,
        shown: &Path,
        components: Vec<Component>,
        indexes: Vec<Source>,
        index_of: &HashMap<Vec<u8>, usize>,
        opts: &OpenOptions,
    ) -> Result<Model> {
        let mut jobs = Vec::new();
        for (c, comp) in components.iter().enumerate() {
            jobs.extend((0..comp.job_count()).map(|t| JobRef::Part(c, t)));
        }
        let (mut audits, mut unaudited) = (Vec::new(), Vec::new());
        if let Some(tree) = tree.filter(|t| opts.verify_blobs && t.snapshot) {
            // Where each file's open source is, by its shown path.
            let mut at: HashMap<PathBuf, SourceAt> = HashMap::new();
            for (c, comp) in components.iter().enumerate() {
                for (f, s) in comp.sources().iter().enumerate() {
                    at.insert(s.path().to_path_buf(), SourceAt::Component(c, f));
                }
            }
            for (name, &i) in index_of {
                at.insert(tree.shown_path(name), SourceAt::Index(i));
            }
            for f in tree.files.iter() {
                let shown = tree.shown_path(&f.name);
                let Some(blob) = &f.blob else {
                    // Nothing names what it should hold: say it was not checked.
                    unaudited.push(shown);
                    continue;
                };
                let source = *at.get(&shown).ok_or_else(|| Error::internal("an audited file not opened"))?;
                let blob = String::from_utf8(blob.clone())
                    .ok()
                    .filter(|b| (b.len() == 64 || b.len() == 40) && b.bytes().all(|c| c.is_ascii_hexdigit()))
                    .ok_or_else(|| {
                        let what = format!(
                            "links to the blob {}, whose name is neither a SHA-256 nor a Git SHA-1, so it cannot be checked",
                            crate::text::escape_bytes(blob)
                        );
                        Error::new(ErrorKind::DamagedStore(what)).in_file(&shown)
                    })?;
                jobs.push(JobRef::Audit(audits.len()));
                audits.push(Audit { name: f.name.clone(), blob: blob.to_ascii_lowercase(), source });
            }
        }
        let incomplete = tree.map_or_else(Vec::new, |tree| {
            let blobs = tree.main.path().join("blobs");
            tree.incomplete.iter().map(|n| blobs.join(OsStr::from_bytes(n))).collect()
        });
        Ok(Model { shown: shown.to_path_buf(), components, indexes, audits, unaudited, incomplete, jobs, opts: *opts })
    }
}

/// Opens one planned component: a `FILE` held open, or its format's model
/// from its open files (a file the model keeps beside it pushed to `kept`,
/// its place in `index_of` by its relative path).
fn open_component(
    plan: Plan,
    open: &dyn Fn(&[u8]) -> Result<Source>,
    held: &mut HashMap<Vec<u8>, Held>,
    dir: &Path,
    opts: &OpenOptions,
    kept: &mut Vec<Source>,
    index_of: &mut HashMap<Vec<u8>, usize>,
) -> Result<Component> {
    let all = plan.all_files();
    let Plan { kind, format, planned } = plan;
    let Some(rule) = format.and_then(|f| f.directory_rule()) else {
        let source = open(&planned.name)?;
        return Ok(Component {
            kind: Kind::FILE,
            name: planned.name,
            files: all,
            part: Part::File(Box::new(source)),
            note: None,
        });
    };
    let mut files = Vec::with_capacity(planned.files.len());
    for f in &planned.files {
        files.push((f.clone(), open(f)?));
    }
    lfs_pointer(&files.iter().map(|(_, s)| s).collect::<Vec<_>>())?;
    let head = match &planned.head {
        Some(h) => Some(held.remove(h).ok_or_else(|| Error::internal("a list not read"))?),
        None => None,
    };
    match rule.open(&planned, head, files, dir, *opts)? {
        Placed::Model { model, keep } => {
            if let (Some(source), Some(h)) = (keep, &planned.head) {
                index_of.insert(h.clone(), kept.len());
                kept.push(source);
            }
            Ok(Component { kind, name: planned.name, files: all, part: Part::Weights(model), note: None })
        }
        Placed::File { source, note } => Ok(Component {
            kind: Kind::FILE,
            name: planned.name,
            files: all,
            part: Part::File(Box::new(source)),
            note: Some(note),
        }),
    }
}
