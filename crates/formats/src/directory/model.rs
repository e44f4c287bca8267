//! A directory as one model (directory contract): its files walked
//! ([`walk`]), grouped into components ([`group`]), each weights component
//! opened as the GGUF or safetensors model it is and every other file held
//! open to be hashed whole; all their jobs, and with `--verify-blobs` a
//! whole-file job per file a snapshot links to a blob, are hashed in one
//! schedule. The skeleton is written from the jobs' digests: each weights
//! component's raw label through its format's own skeleton writer, then
//! the directory skeleton ([`skeleton`]), as an Ollama model composes its
//! layers.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::directory::group::{Planned, group};
use crate::directory::skeleton::{Kind, skeleton};
use crate::directory::walk::{Found, Tree, walk, walk_within};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::{AnyModel, FileFormat, Labelled, OpenOptions};
use crate::gguf::{self, Gguf};
use crate::hash::{Conversion, Digest, Job, Sha256Digest};
use crate::output::JsonWriter;
use crate::pytorch::{self, Pytorch};
use crate::safetensors::{self, Safetensors};
use crate::source::{Last, Root, Source};
use crate::text::escape_name;

/// The kind of a weights component of `format`, from the registry's
/// description of it.
fn kind_of(format: &dyn FileFormat) -> Result<Kind> {
    format.component_kind().ok_or_else(|| Error::internal("a weights format with no directory kind"))
}

/// What a Git LFS pointer file begins with.
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1";

/// How a component's digest is computed.
#[derive(Debug)]
pub enum Part {
    /// A weights model of a format in the registry (a safetensors model's
    /// index, when it has one, is held beside): its jobs, skeleton,
    /// sections and facts are the model's own.
    Weights(AnyModel),
    /// Any other file, hashed whole.
    File(Box<Source>),
}

/// One component of the directory.
#[derive(Debug)]
pub struct Component {
    /// Its kind.
    pub kind: Kind,
    /// Its name: `d/P` for weights, the relative path for a file.
    pub name: Vec<u8>,
    /// Its files' relative paths (an index first).
    pub files: Vec<Vec<u8>>,
    /// What it is opened as.
    pub part: Part,
    /// Why a file that could have been a weights component by its name is
    /// a `FILE` (a `.pt` the PyTorch contract refuses: what it refused).
    pub note: Option<String>,
}

impl Component {
    /// The open files it is hashed from (an index is not one: see
    /// [`Model::sources`]).
    pub(crate) fn sources(&self) -> Vec<&Source> {
        match &self.part {
            Part::Weights(m) => m.sources(),
            Part::File(s) => vec![s],
        }
    }

    fn job_count(&self) -> usize {
        match &self.part {
            Part::Weights(m) => m.job_count(),
            Part::File(_) => 1,
        }
    }
}

/// A file checked against the name of the blob it links to
/// (`--verify-blobs`).
#[derive(Debug)]
pub struct Audit {
    /// The file's relative path.
    pub name: Vec<u8>,
    /// The blob's name: 64 hex digits (SHA-256) or 40 (Git blob SHA-1).
    pub blob: String,
    source: SourceAt,
}

/// Where an audited file's open source is.
#[derive(Debug, Clone, Copy)]
enum SourceAt {
    /// File `f` of component `c`.
    Component(usize, usize),
    /// Index file `i` of [`Model::indexes`].
    Index(usize),
}

#[derive(Debug, Clone, Copy)]
enum JobRef {
    /// Job `t` of component `c`.
    Part(usize, usize),
    /// Audit `a`.
    Audit(usize),
}

/// An opened directory.
#[derive(Debug)]
pub struct Model {
    shown: PathBuf,
    components: Vec<Component>,
    /// The safetensors indexes, held open while the model is (their
    /// `metadata` is in the label, and they are checked unchanged).
    indexes: Vec<Source>,
    audits: Vec<Audit>,
    /// With `--verify-blobs`, the files of a snapshot that lead to no blob
    /// (a regular file, or a link that stays in the snapshot): not checked.
    unaudited: Vec<PathBuf>,
    incomplete: Vec<PathBuf>,
    jobs: Vec<JobRef>,
    opts: OpenOptions,
}

/// The error for a weights model one of whose files is a Git LFS pointer,
/// if one is.
fn lfs_pointer(sources: &[&Source]) -> Result<()> {
    for s in sources {
        if s.len() >= LFS_POINTER.len() as u64 && s.head(LFS_POINTER.len() as u64)? == LFS_POINTER {
            return Err(Error::new(ErrorKind::LfsPointer).in_file(s.path()));
        }
    }
    Ok(())
}

fn last_name(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
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
    /// its objects listed (`RangeDir::walk`, bounded as the local walk is),
    /// each opened below the prefix by its relative name; grouped and
    /// labelled as a local directory of the same files is.
    pub fn open_place(place: &crate::source::Beside, opts: &OpenOptions) -> Result<Model> {
        let shown = place.shown().to_path_buf();
        let names = super::walk::listed(place.walk()?, &shown)?;
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
        let mut indexes: HashMap<Vec<u8>, (Source, safetensors::Index)> = HashMap::new();
        let mut pt_indexes: HashMap<Vec<u8>, (Source, pytorch::shards::Index)> = HashMap::new();
        let mut lister = |name: &[u8]| -> Result<Vec<Vec<u8>>> {
            let source = open(name)?;
            lfs_pointer(&[&source])?;
            if pytorch::shards::is_index_name(OsStr::from_bytes(last_name(name))) {
                let index = pytorch::Model::read_index(&source)?;
                let files = index.files.iter().map(|f| f.as_bytes().to_vec()).collect();
                pt_indexes.insert(name.to_vec(), (source, index));
                return Ok(files);
            }
            let index = safetensors::read_index_from(&source)?;
            let files = index.files.iter().map(|f| f.as_bytes().to_vec()).collect();
            indexes.insert(name.to_vec(), (source, index));
            Ok(files)
        };
        let planned = group(names, &mut lister).map_err(|e| e.in_file(dir))?;
        let mut components = Vec::with_capacity(planned.len());
        let mut index_sources = Vec::new();
        let mut index_of: HashMap<Vec<u8>, usize> = HashMap::new();
        for p in planned {
            let component = match p {
                Planned::File(name) => {
                    let source = open(&name)?;
                    Component {
                        kind: Kind::FILE,
                        files: vec![name.clone()],
                        name,
                        part: Part::File(Box::new(source)),
                        note: None,
                    }
                }
                Planned::Checkpoint(name) => {
                    let source = open(&name)?;
                    open_candidate(name, source, opts)?
                }
                Planned::Pytorch { name, index, files } => {
                    let mut opened = HashMap::new();
                    for f in &files {
                        opened.insert(last_name(f).to_vec(), open(f)?);
                    }
                    lfs_pointer(&opened.values().collect::<Vec<_>>())?;
                    let mut all = files.clone();
                    let model = match &index {
                        Some(i) => {
                            let (source, parsed) =
                                pt_indexes.remove(i).ok_or_else(|| Error::internal("an index not read"))?;
                            let mut take = |n: &OsStr| {
                                opened.remove(n.as_bytes()).ok_or_else(|| Error::internal("an index file not opened"))
                            };
                            let m = pytorch::Model::from_index(source.path(), parsed, None, *opts, &mut take)?;
                            all.insert(0, i.clone());
                            index_of.insert(i.clone(), index_sources.len());
                            index_sources.push(source);
                            m
                        }
                        None => {
                            let mut sources = Vec::with_capacity(files.len());
                            for f in &files {
                                sources.push(
                                    opened.remove(last_name(f)).ok_or_else(|| Error::internal("a shard not opened"))?,
                                );
                            }
                            // A set of one (`pytorch_model-00001-of-00001.bin`) is still a set: its root a
                            // mapping of strings without attributes (pytorch-skeleton-v1 §6).
                            let set = files.first().is_some_and(|f| {
                                pytorch::shards::ShardName::parse(OsStr::from_bytes(last_name(f))).is_some()
                            });
                            pytorch::Model::from_files(sources, set, *opts)?
                        }
                    };
                    Component {
                        kind: kind_of(&Pytorch)?,
                        name,
                        files: all,
                        part: Part::Weights(AnyModel::new(model)),
                        note: None,
                    }
                }
                Planned::Safetensors { name, index, files } => {
                    let mut opened = HashMap::new();
                    for f in &files {
                        opened.insert(last_name(f).to_vec(), open(f)?);
                    }
                    lfs_pointer(&opened.values().collect::<Vec<_>>())?;
                    let mut all = files.clone();
                    let model = match &index {
                        Some(i) => {
                            let (source, parsed) =
                                indexes.remove(i).ok_or_else(|| Error::internal("an index not read"))?;
                            let mut take = |n: &OsStr| {
                                opened.remove(n.as_bytes()).ok_or_else(|| Error::internal("an index file not opened"))
                            };
                            let m = safetensors::Model::from_index(source.path(), parsed, *opts, &mut take)?;
                            all.insert(0, i.clone());
                            index_of.insert(i.clone(), index_sources.len());
                            index_sources.push(source);
                            m
                        }
                        None => {
                            let mut sources = Vec::with_capacity(files.len());
                            for f in &files {
                                sources.push(
                                    opened.remove(last_name(f)).ok_or_else(|| Error::internal("a shard not opened"))?,
                                );
                            }
                            safetensors::Model::from_sources(sources, *opts)?
                        }
                    };
                    Component {
                        kind: kind_of(&Safetensors)?,
                        name,
                        files: all,
                        part: Part::Weights(AnyModel::new(model)),
                        note: None,
                    }
                }
                Planned::Gguf { name, files } => Component {
                    kind: kind_of(&Gguf)?,
                    part: Part::Weights(AnyModel::new(open_gguf(&name, &files, &open, opts, dir)?)),
                    name,
                    files,
                    note: None,
                },
            };
            components.push(component);
        }
        Model::assemble(tree, shown, components, index_sources, &index_of, opts)
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

    /// The directory as it was named.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// The components, in the order they were grouped.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The files checked against their blobs' names (`--verify-blobs`).
    pub fn audits(&self) -> &[Audit] {
        &self.audits
    }

    /// With `--verify-blobs`, the files of a snapshot that are no link into
    /// its `blobs/`, so no blob name says what they should hold: not checked.
    pub fn unaudited(&self) -> &[PathBuf] {
        &self.unaudited
    }

    /// The partial downloads (`*.incomplete`) of a snapshot's repository.
    pub fn incomplete(&self) -> &[PathBuf] {
        &self.incomplete
    }

    /// Warnings about the directory, one line each, for standard error.
    pub fn warnings(&self) -> Vec<String> {
        let line = |p: &PathBuf| {
            format!("{}: a partial download, not part of the label", escape_name(p.as_os_str().as_bytes()))
        };
        let unchecked = |p: &PathBuf| {
            format!(
                "{}: not a link into the repository's blobs/, so --verify-blobs could not check it \
                 (no blob name says what it should hold)",
                escape_name(p.as_os_str().as_bytes())
            )
        };
        self.unaudited.iter().map(unchecked).chain(self.incomplete.iter().map(line)).collect()
    }

    fn audit_source(&self, a: &Audit) -> Option<&Source> {
        match a.source {
            SourceAt::Component(c, f) => self.components.get(c)?.sources().get(f).copied(),
            SourceAt::Index(i) => self.indexes.get(i),
        }
    }

    /// Hashes every job on the current rayon pool and finishes the model.
    pub fn digest(&self) -> Result<Digest> {
        crate::schedule::digest(self, &self.opts.pieces)
    }

    /// Each component's digest (in [`Model::components`] order) from the
    /// jobs' digests (in job order), after checking every audited file
    /// against its blob's name.
    pub fn component_digests(&self, data: &[Sha256Digest]) -> Result<Vec<Sha256Digest>> {
        let mut next = 0usize;
        let mut take = |n: usize| -> &[Sha256Digest] {
            let start = next;
            next = next.saturating_add(n);
            data.get(start..next).unwrap_or(&[])
        };
        let mut digests = Vec::with_capacity(self.components.len());
        for c in &self.components {
            let d = take(c.job_count());
            let mut hasher = Sha256::new();
            let digest = match &c.part {
                Part::Weights(m) => {
                    m.write_skeleton(d, &mut |piece| hasher.update(piece))?;
                    hasher.finalize().into()
                }
                Part::File(_) => *d.first().ok_or_else(|| Error::internal("a file was not hashed"))?,
            };
            digests.push(digest);
        }
        for (a, d) in self.audits.iter().zip(take(self.audits.len())) {
            let got = hex::encode(d.get(..a.blob.len() / 2).unwrap_or_default());
            if got != a.blob {
                let algorithm = if a.blob.len() == 64 { "SHA-256" } else { "Git blob SHA-1" };
                let what = format!("its {algorithm} is {got}, not the name of the blob it links to ({})", a.blob);
                let shown = self.shown.join(OsStr::from_bytes(&a.name));
                return Err(Error::new(ErrorKind::DamagedStore(what)).in_file(&shown));
            }
        }
        Ok(digests)
    }

    /// Each component's own digest (its label, and the data digests of its
    /// jobs), in [`Model::components`] order: what `inspect` and `diff`
    /// hand a weights component's own section.
    pub fn sub_digests(&self, data: &[Sha256Digest]) -> Result<Vec<Digest>> {
        let labels = self.component_digests(data)?;
        let mut next = 0usize;
        let mut out = Vec::with_capacity(labels.len());
        for (c, label) in self.components.iter().zip(labels) {
            let start = next;
            next = next.saturating_add(c.job_count());
            out.push(Digest::from_label(label, data.get(start..next).unwrap_or(&[]).to_vec()));
        }
        Ok(out)
    }

    /// The hashing job `i`: the components' jobs, then the audits'.
    pub fn job(&self, i: usize) -> Option<Job<'_>> {
        match *self.jobs.get(i)? {
            JobRef::Part(c, t) => match &self.components.get(c)?.part {
                Part::Weights(m) => m.job(t),
                Part::File(source) => Some(whole(source, Conversion::none(1, "file"))),
            },
            JobRef::Audit(a) => {
                let audit = self.audits.get(a)?;
                let source = self.audit_source(audit)?;
                let conversion = if audit.blob.len() == 64 {
                    Conversion::none(1, "blob")
                } else {
                    Conversion::git_blob(source.len())
                };
                Some(whole(source, conversion))
            }
        }
    }

    /// The number of hashing jobs.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Every file read, once: each component's files, then the indexes.
    pub fn sources(&self) -> Vec<&Source> {
        let mut s: Vec<&Source> = self.components.iter().flat_map(Component::sources).collect();
        s.extend(self.indexes.iter());
        s
    }

    /// Writes the skeleton from the jobs' digests.
    pub fn write_skeleton(&self, data: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let digests = self.component_digests(data)?;
        let records: Vec<(Kind, &[u8], Sha256Digest)> =
            self.components.iter().zip(digests).map(|(c, d)| (c.kind, c.name.as_slice(), d)).collect();
        sink(&skeleton(&records));
        Ok(())
    }

    /// Writes the model's `--json` entry.
    pub fn write_json(&self, w: &mut JsonWriter<'_>, path: &Path, digest: &Digest) -> io::Result<()> {
        let digests = self.component_digests(digest.tensor_sha256()).map_err(io::Error::other)?;
        w.begin_object()?;
        w.str_field("path", &path.to_string_lossy())?;
        w.str_field("format", "directory")?;
        w.str_field("spec", "directory-skeleton-v1")?;
        w.str_field("label", &digest.label())?;
        w.key("components")?;
        w.begin_array()?;
        let mut order: Vec<(&Component, Sha256Digest)> = self.components.iter().zip(digests).collect();
        order.sort_by(|a, b| (a.0.kind.bytes(), &a.0.name).cmp(&(b.0.kind.bytes(), &b.0.name)));
        for (c, d) in order {
            w.begin_object()?;
            w.str_field("kind", c.kind.text())?;
            w.name_field("name", &c.name)?;
            w.str_field("digest", &hex::encode(d))?;
            w.key("files")?;
            w.begin_array()?;
            for f in &c.files {
                w.begin_object()?;
                w.name_field("path", f)?;
                w.end_object()?;
            }
            w.end_array()?;
            w.end_object()?;
        }
        w.end_array()?;
        if !self.audits.is_empty() {
            w.field("blobs_verified", self.audits.len())?;
        }
        if !self.unaudited.is_empty() {
            w.key("blobs_unverified")?;
            w.begin_array()?;
            for p in &self.unaudited {
                w.begin_object()?;
                w.name_field("path", p.as_os_str().as_bytes())?;
                w.end_object()?;
            }
            w.end_array()?;
        }
        if !self.incomplete.is_empty() {
            w.key("incomplete_blobs")?;
            w.begin_array()?;
            for p in &self.incomplete {
                w.str(&p.to_string_lossy())?;
            }
            w.end_array()?;
        }
        crate::format::end_entry(w, &self.sources())
    }
}

/// A whole file as one job.
fn whole(source: &Source, conversion: Conversion) -> Job<'_> {
    Job {
        source,
        start: 0,
        len: source.len(),
        conversion,
        subject: Subject::Key(format!("file {}", source.path().display()).into_bytes()),
        gather: None,
    }
}

/// Opens the GGUF model of `files` (one file, or a complete shard set in
/// shard order) as contract §3.2 reads it: a set of two or more joined by
/// its `split.*` keys, which must agree with its names; one file by the
/// single-file rule (`split.count` above 1 is an error).
/// A `P.bin`, `P.pt` or `P.pth` not named as `transformers` names a
/// checkpoint (contract revision 3, rule 3): a `PTCH` component when the
/// PyTorch contract accepts its bytes, else a `FILE` saying why; a Git LFS
/// pointer, or a file that could not be read, is an error.
fn open_candidate(name: Vec<u8>, source: Source, opts: &OpenOptions) -> Result<Component> {
    lfs_pointer(&[&source])?;
    let files = vec![name.clone()];
    match pytorch::Model::from_candidate(source, *opts) {
        Ok(m) => {
            Ok(Component { kind: kind_of(&Pytorch)?, name, files, part: Part::Weights(AnyModel::new(m)), note: None })
        }
        Err(failed) => {
            let (source, e) = *failed;
            if matches!(e.kind(), ErrorKind::Io(_)) {
                return Err(e);
            }
            let note = format!("not a checkpoint pytorch-skeleton-v1 accepts, so its bytes: {}", e.kind());
            Ok(Component { kind: Kind::FILE, name, files, part: Part::File(Box::new(source)), note: Some(note) })
        }
    }
}

fn open_gguf(
    name: &[u8],
    files: &[Vec<u8>],
    open: &dyn Fn(&[u8]) -> Result<Source>,
    opts: &OpenOptions,
    dir: &Path,
) -> Result<gguf::Model> {
    let mut opened: Vec<Source> = Vec::with_capacity(files.len());
    for f in files {
        opened.push(open(f)?);
    }
    lfs_pointer(&opened.iter().collect::<Vec<_>>())?;
    let mut rest: HashMap<Vec<u8>, Source> =
        opened.drain(1..).map(|s| (s.path().file_name().unwrap_or_default().as_bytes().to_vec(), s)).collect();
    let first = opened.pop().ok_or_else(|| Error::internal("a GGUF model of no file"))?;
    let mut take = |sibling: &Path| -> Result<Source> {
        let n = sibling.file_name().unwrap_or_default().as_bytes();
        rest.remove(n).ok_or_else(|| Error::from(io::Error::from(io::ErrorKind::NotFound)).in_file(sibling))
    };
    let join = OpenOptions { join_shards: true, ..*opts };
    let model = gguf::Model::from_source_with(first, join, Some(&mut take))?;
    if model.shards().len() != files.len() {
        let what = format!(
            "{}: its {} files are named as a set, but split.count in its first shard is {}",
            crate::text::escape_bytes(name),
            files.len(),
            model.shards().len()
        );
        return Err(Error::schema(what).in_file(dir));
    }
    Ok(model)
}
