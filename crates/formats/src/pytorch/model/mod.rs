//! A PyTorch checkpoint file opened: its layout (zip or legacy), its tree,
//! where each storage's bytes lie, and one hashing job per distinct tensor
//! (a plain range for a contiguous little-endian tensor alone in its
//! storage, a gather otherwise).

use crate::pytorch::PytorchErrorKind;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::pickle::{self, Dict, DictKind, Ids, Obj, Options};
use super::shards::{self, Index, ShardName};
use super::tree::Tree;
use super::zip::{self, Archive};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::OpenOptions;
use crate::hash::{Algorithm, Conversion, Digest, Gather, Job, PieceSizes, Swap};
use crate::source::{Beside, MAX_READ_METADATA, Source, Step};

/// The legacy format's magic number, as its first pickle's `LONG1` bytes.
pub const LEGACY_MAGIC: [u8; 10] = [0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];

/// The most bytes of a checkpoint read from standard input: it is held in
/// memory whole (the metadata bound, [`MAX_READ_METADATA`]).
pub const MAX_STREAM: u64 = MAX_READ_METADATA;

/// How the checkpoint is laid out.
#[derive(Debug, Clone)]
pub enum Layout {
    /// `torch.save`'s zip archive.
    Zip(Archive),
    /// The legacy format: pickles, then storages.
    Legacy,
}

/// Where a storage's bytes lie in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The file offset of its first byte.
    pub start: u64,
    /// Its bytes.
    pub len: u64,
    /// How many distinct tensors read it.
    pub users: u64,
    /// Which of the model's files holds it.
    pub file: usize,
    /// Whether its file's storages are big-endian.
    pub big_endian: bool,
}

/// What the pickle was.
#[derive(Debug, Clone)]
pub struct PickleFacts {
    /// The highest `PROTO`.
    pub protocol: u8,
    /// Every global named.
    pub globals: Vec<String>,
    /// Opcodes read.
    pub opcodes: u64,
    /// Calls that set `requires_grad`.
    pub requires_grad: u64,
}

/// A tensor's hashing job, computed once.
#[derive(Debug, Clone)]
struct JobSpec {
    file: usize,
    start: u64,
    len: u64,
    conversion: Conversion,
    gather: Option<Arc<Gather>>,
}

/// One opened checkpoint: a file, or a shard set whose root is the union
/// of its shards' mappings (SPEC P8).
#[derive(Debug)]
pub struct Model {
    source: Source,
    /// A shard set's other files, in the order opened.
    more: Vec<Source>,
    layout: Layout,
    tree: Tree,
    placed: Vec<Placed>,
    big_endian: bool,
    facts: PickleFacts,
    jobs: Vec<JobSpec>,
    index: Option<IndexInfo>,
    pub(crate) pieces: PieceSizes,
}

/// The index a shard set was read through.
#[derive(Debug, Clone)]
pub struct IndexInfo {
    /// Its path.
    pub path: PathBuf,
    /// Its `metadata.total_size`, when an integer (derived: never content).
    pub total_size: Option<u64>,
}

/// One file of a checkpoint, read and its tree checked.
#[derive(Debug)]
struct Part {
    source: Source,
    layout: Layout,
    tree: Tree,
    placed: Vec<Placed>,
    big_endian: bool,
    facts: PickleFacts,
}

/// Whether `head` begins a zip archive.
pub fn is_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06")
}

/// Whether `head` begins the legacy format (`PROTO 2`, `LONG1` of 10 bytes).
pub fn is_legacy(head: &[u8]) -> bool {
    head.starts_with(&[0x80, 0x02, 0x8A, 0x0A])
}

const LFS: &[u8] = b"version https://git-lfs.github.com/spec/v1";

fn checkpoint_err(msg: impl Into<String>) -> Error {
    Error::new(PytorchErrorKind::Checkpoint(msg.into()))
}

impl Model {
    /// Opens the checkpoint an open file holds.
    pub fn from_source(source: Source, opts: OpenOptions) -> Result<Model> {
        let path = source.path().to_path_buf();
        Model::open(source, opts).map_err(|e| e.in_file(&path))
    }

    fn open(source: Source, opts: OpenOptions) -> Result<Model> {
        if source.is_stream() {
            // A zip archive is read from its end (its central directory):
            // the stream is held whole, up to MAX_STREAM, and then read as
            // a file of those bytes. A legacy file is held the same way.
            let held = source.head(MAX_STREAM.saturating_add(1))?;
            if held.len() as u64 > MAX_STREAM {
                return Err(checkpoint_err(format!(
                    "standard input holds more than {MAX_STREAM} bytes: a PyTorch checkpoint read from standard input \
                     is held in memory whole (a zip archive is read from its end), up to {MAX_STREAM} bytes; \
                     name the file instead"
                ))
                .at(MAX_STREAM));
            }
            return Model::single(read_part(source)?, opts);
        }
        let path = source.path().to_path_buf();
        let name = path.file_name().unwrap_or_default();
        if shards::is_index_name(name) {
            return Model::open_index(source, None, opts);
        }
        if let (true, Some(shard)) = (opts.join_shards, ShardName::parse(name)) {
            let beside = source.beside()?;
            let index_name = shard.index_name();
            if beside.holds_file(&index_name) {
                drop(source);
                let index = beside.open(&index_name, opts.read_mode)?;
                return Model::open_index(index, Some(&path), opts);
            }
            return Model::open_shard_set(source, &beside, &shard, opts);
        }
        Model::single(read_part(source)?, opts)
    }

    fn single(part: Part, opts: OpenOptions) -> Result<Model> {
        let Part { source, layout, tree, mut placed, big_endian, facts } = part;
        let jobs = jobs(&tree, &mut placed)?;
        Ok(Model {
            source,
            more: Vec::new(),
            layout,
            tree,
            placed,
            big_endian,
            facts,
            jobs,
            index: None,
            pieces: opts.pieces,
        })
    }

    /// The set whose first shard `first` is, its siblings opened beside it
    /// (a later shard is refused naming the first, as for the other formats).
    fn open_shard_set(first: Source, beside: &Beside, name: &ShardName, opts: OpenOptions) -> Result<Model> {
        if name.no != 1 {
            let first_path = beside.path_of(&name.sibling(1));
            let kind = ErrorKind::NotFirstShard { no: name.no, count: name.count, first: first_path };
            return Err(Error::new(kind).in_file(first.path()));
        }
        let path = first.path().to_path_buf();
        let mut parts = vec![read_part(first)?];
        for no in 2..=name.count {
            let sibling = name.sibling(no);
            let source = match beside.open(&sibling, opts.read_mode) {
                Ok(s) => s,
                Err(e) if e.is_not_found() => {
                    let kind = ErrorKind::MissingShard { no, count: name.count, path: beside.path_of(&sibling) };
                    return Err(Error::new(kind).in_file(&path));
                }
                Err(e) => return Err(e),
            };
            parts.push(read_part(source)?);
        }
        Model::join(parts, None, opts)
    }

    /// A model of files already open (a directory's walk opened them):
    /// one checkpoint, or with `set` the shard set they are, in any order.
    pub fn from_files(sources: Vec<Source>, set: bool, opts: OpenOptions) -> Result<Model> {
        let mut parts = Vec::with_capacity(sources.len());
        for s in sources {
            parts.push(read_part(s)?);
        }
        match (set, parts.len()) {
            (false, 1) => Model::single(parts.remove(0), opts),
            (false, _) => Err(Error::internal("several files that are not a shard set")),
            (true, _) => Model::join(parts, None, opts),
        }
    }

    /// A file that is a checkpoint if the contract accepts its bytes (a
    /// directory's `P.bin`, `P.pt`, `P.pth`), else the error saying why,
    /// with the file handed back to be hashed as bytes.
    pub fn from_candidate(source: Source, opts: OpenOptions) -> std::result::Result<Model, Box<(Source, Error)>> {
        let path = source.path().to_path_buf();
        let read = match read_layout(&source) {
            Ok(r) => r,
            Err(e) => return Err(Box::new((source, e.in_file(&path)))),
        };
        let (layout, pickle, mut placed, big_endian) = read;
        let facts = facts_of(&pickle);
        let tree = match Tree::new(pickle) {
            Ok(t) => t,
            Err(e) => return Err(Box::new((source, e.in_file(&path)))),
        };
        let jobs = match jobs(&tree, &mut placed) {
            Ok(j) => j,
            Err(e) => return Err(Box::new((source, e.in_file(&path)))),
        };
        Ok(Model {
            source,
            more: Vec::new(),
            layout,
            tree,
            placed,
            big_endian,
            facts,
            jobs,
            index: None,
            pieces: opts.pieces,
        })
    }

    /// Reads a checkpoint's index (`P.bin.index.json`), bounded as a
    /// safetensors index is.
    pub fn read_index(index_file: &Source) -> Result<Index> {
        let located = |e: Error| e.in_file(index_file.path());
        if index_file.len() > shards::MAX_INDEX {
            let msg = format!(
                "an index of {} bytes (at most {} are read, as for a safetensors index)",
                index_file.len(),
                shards::MAX_INDEX
            );
            return Err(located(Error::schema(msg).at(0)));
        }
        shards::parse_index(&index_file.head(index_file.len())?).map_err(located)
    }

    /// The model of an index (`given`: the shard named, which it must list).
    fn open_index(index_file: Source, given: Option<&Path>, opts: OpenOptions) -> Result<Model> {
        let index_path = index_file.path().to_path_buf();
        let index = Model::read_index(&index_file)?;
        let beside = index_file.beside()?;
        drop(index_file);
        Model::from_index(&index_path, index, given, opts, &mut |name| beside.open(name, opts.read_mode))
    }

    /// The model of an index already read (`index_path` names it), its
    /// files opened by `open` from their plain names (a directory's walk
    /// hands the files it resolved, each opened once).
    pub fn from_index(
        index_path: &Path,
        index: Index,
        given: Option<&Path>,
        opts: OpenOptions,
        open: &mut dyn FnMut(&OsStr) -> Result<Source>,
    ) -> Result<Model> {
        if let Some(given) = given {
            let listed = given.file_name().and_then(|n| n.to_str()).is_some_and(|n| index.files.iter().any(|f| f == n));
            if !listed {
                let what = format!(
                    "{} does not list this file",
                    crate::text::escape_bytes(index_path.as_os_str().as_encoded_bytes())
                );
                return Err(checkpoint_err(what).in_file(given));
            }
        }
        let mut parts = Vec::with_capacity(index.files.len());
        for name in &index.files {
            let source = open(OsStr::new(name)).map_err(|e| e.in_file(index_path))?;
            parts.push(read_part(source)?);
        }
        Model::join(parts, Some((index_path.to_path_buf(), index)), opts)
    }

    /// Shards joined into one model: each root a mapping of string keys
    /// without attributes, no key in two shards, the index (if any)
    /// listing exactly each key with the file that holds it; the root is
    /// their union.
    fn join(parts: Vec<Part>, index: Option<(PathBuf, Index)>, opts: OpenOptions) -> Result<Model> {
        let mut owner: HashMap<Box<[u8]>, usize> = HashMap::new();
        for (i, part) in parts.iter().enumerate() {
            let path = part.source.path();
            let keys = root_keys(&part.tree).map_err(|e| e.in_file(path))?;
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            for key in keys {
                if let Some((_, wm)) = &index {
                    let listed = std::str::from_utf8(key).ok().and_then(|k| wm.weight_map.get(k));
                    if listed.map(String::as_str) != Some(file_name) {
                        let what = match listed {
                            Some(other) => {
                                format!("the index lists this key in {}", crate::text::escape_bytes(other.as_bytes()))
                            }
                            None => "the index does not list this key".to_string(),
                        };
                        return Err(shards::mismatch(what, key).in_file(path));
                    }
                }
                if let Some(&other) = owner.get(key) {
                    let other = parts.get(other).map(|o| o.source.path().to_path_buf()).unwrap_or_default();
                    let e = Error::new(ErrorKind::TensorInTwoShards { other });
                    return Err(e.about(Subject::Key(key.to_vec())).in_file(path));
                }
                owner.insert(key.into(), i);
            }
        }
        if let Some((index_path, wm)) = &index {
            for (key, file) in &wm.weight_map {
                let held =
                    owner.get(key.as_bytes()).and_then(|&i| parts.get(i)).and_then(|p| p.source.path().file_name());
                if held != Some(OsStr::new(file)) {
                    let what = format!(
                        "the index lists this key in {}, which does not hold it",
                        crate::text::escape_bytes(file.as_bytes())
                    );
                    return Err(shards::mismatch(what, key.as_bytes()).in_file(index_path));
                }
            }
        }
        let shown =
            index.as_ref().map(|(p, _)| p.clone()).or_else(|| parts.first().map(|p| p.source.path().to_path_buf()));
        let (mut sources, layout, tree, mut placed, big_endian, facts) = union(parts).map_err(|e| match &shown {
            Some(p) => e.in_file(p),
            None => e,
        })?;
        let jobs = jobs(&tree, &mut placed)?;
        let index = index.map(|(path, i)| IndexInfo { path, total_size: i.total_size });
        if sources.is_empty() {
            return Err(Error::internal("a shard set of no file"));
        }
        let source = sources.remove(0);
        Ok(Model { source, more: sources, layout, tree, placed, big_endian, facts, jobs, index, pieces: opts.pieces })
    }

    /// The open file (a shard set's first).
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Every open file, in the order opened.
    pub fn sources(&self) -> Vec<&Source> {
        std::iter::once(&self.source).chain(&self.more).collect()
    }

    /// The index the set was read through.
    pub fn index(&self) -> Option<&IndexInfo> {
        self.index.as_ref()
    }

    /// The path that names the model: its index, else its (first) file.
    pub fn path(&self) -> &Path {
        self.index.as_ref().map_or_else(|| self.source().path(), |i| i.path.as_path())
    }

    /// Zip or legacy.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The checked tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Where each storage lies.
    pub fn placed(&self) -> &[Placed] {
        &self.placed
    }

    /// Whether the storages are big-endian.
    pub fn big_endian(&self) -> bool {
        self.big_endian
    }

    /// What the pickle was.
    pub fn facts(&self) -> &PickleFacts {
        &self.facts
    }

    /// The number of hashing jobs (distinct tensors).
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Job `i`.
    pub fn job(&self, i: usize) -> Option<Job<'_>> {
        let spec = self.jobs.get(i)?;
        let leaf = self.tree.tensors.get(i)?;
        Some(Job {
            source: match spec.file.checked_sub(1) {
                None => &self.source,
                Some(i) => self.more.get(i)?,
            },
            start: spec.start,
            len: spec.len,
            conversion: spec.conversion,
            subject: Subject::Tensor(leaf.path.as_bytes().to_vec()),
            gather: spec.gather.clone(),
        })
    }

    /// Whether tensor `i` is hashed through a gather (a view, a shared or big-endian storage).
    pub fn is_gathered(&self, i: usize) -> bool {
        self.jobs.get(i).is_some_and(|j| j.gather.is_some())
    }

    /// Hashes every tensor and builds the label.
    pub fn digest(&self) -> Result<Digest> {
        crate::schedule::digest(self, &self.pieces)
    }
}

/// Reads one file: its layout, its pickle's tree checked, its storages
/// placed. Every error names the file.
fn read_part(source: Source) -> Result<Part> {
    let path = source.path().to_path_buf();
    let (layout, pickle, placed, big_endian) = read_layout(&source).map_err(|e| e.in_file(&path))?;
    let facts = facts_of(&pickle);
    let tree = Tree::new(pickle).map_err(|e| e.in_file(&path))?;
    Ok(Part { source, layout, tree, placed, big_endian, facts })
}

fn facts_of(pickle: &pickle::Pickle) -> PickleFacts {
    PickleFacts {
        protocol: pickle.protocol,
        globals: pickle.globals.iter().cloned().collect(),
        opcodes: pickle.opcodes,
        requires_grad: pickle.requires_grad,
    }
}

fn read_layout(source: &Source) -> Result<Read> {
    let head = source.head(512)?;
    if is_zip(&head) {
        read_zip(source)
    } else if is_legacy(&head) {
        read_legacy(source)
    } else if head.starts_with(LFS) {
        Err(Error::new(ErrorKind::LfsPointer))
    } else if head.get(257..262) == Some(b"ustar") {
        Err(checkpoint_err(
            "a checkpoint in the older tar format (PyTorch before 1.6's first format), which this label does not read",
        ))
    } else if head.is_empty() {
        Err(Error::new(ErrorKind::Empty))
    } else {
        Err(checkpoint_err("not a PyTorch checkpoint: neither a zip archive nor the legacy format").at(0))
    }
}

/// The keys of a shard's root: it must be a mapping of string keys
/// without attributes (SPEC P8).
fn root_keys(tree: &Tree) -> Result<Vec<&[u8]>> {
    let refuse = |what: &str| {
        checkpoint_err(format!(
            "a shard's root is {what}: each shard of a set holds a mapping of string keys without attributes (docs/SPEC.md P8)"
        ))
    };
    let Some(Obj::Dict(d)) = tree.objs.get(tree.root) else {
        return Err(refuse(tree.objs.get(tree.root).map_or("nothing", Obj::what)));
    };
    let attrs = d.attrs.and_then(|a| tree.objs.get(a));
    if matches!(attrs, Some(Obj::Dict(a)) if !a.entries.is_empty()) {
        return Err(refuse("a mapping with attributes"));
    }
    d.entries
        .iter()
        .map(|&(k, _)| match tree.objs.get(k) {
            Some(Obj::Str(s)) => Ok(&**s),
            other => Err(refuse(&format!("a mapping with a key that is {}", other.map_or("nothing", Obj::what)))),
        })
        .collect()
}

/// An object of one file's arena moved into the union's: its object and
/// storage indices shifted.
fn shifted(obj: Obj, objs: usize, storages: usize) -> Result<Obj> {
    let o = |id: usize| id.checked_add(objs).ok_or_else(|| Error::internal("objects beyond usize"));
    let all = |ids: Vec<usize>| ids.into_iter().map(o).collect::<Result<Vec<_>>>();
    Ok(match obj {
        Obj::Tuple(items) => Obj::Tuple(all(items)?),
        Obj::List(items) => Obj::List(all(items)?),
        Obj::Set(items) => Obj::Set(all(items)?),
        Obj::Dict(d) => Obj::Dict(Dict {
            entries: d.entries.into_iter().map(|(k, v)| Ok((o(k)?, o(v)?))).collect::<Result<Vec<_>>>()?,
            kind: d.kind,
            attrs: d.attrs.map(o).transpose()?,
        }),
        Obj::Storage(s) => {
            Obj::Storage(s.checked_add(storages).ok_or_else(|| Error::internal("storages beyond usize"))?)
        }
        Obj::Tensor(mut t) => {
            t.storage = t.storage.checked_add(storages).ok_or_else(|| Error::internal("storages beyond usize"))?;
            t.attrs = t.attrs.map(o).transpose()?;
            Obj::Tensor(t)
        }
        other => other,
    })
}

type Union = (Vec<Source>, Layout, Tree, Vec<Placed>, bool, PickleFacts);

/// The shards' trees as one: their arenas end to end and a plain mapping
/// of every shard root's entries, checked again as one tree (its bounds
/// are the whole model's).
fn union(parts: Vec<Part>) -> Result<Union> {
    let mut objs: Vec<Obj> = Vec::new();
    let mut storages = Vec::new();
    let mut placed = Vec::new();
    let mut entries = Vec::new();
    let mut sources = Vec::with_capacity(parts.len());
    let mut layout = None;
    let mut big = false;
    let (mut protocol, mut globals, mut opcodes, mut requires_grad) = (0u8, BTreeSet::new(), 0u64, 0u64);
    for (file, part) in parts.into_iter().enumerate() {
        let Part { source, layout: l, tree, placed: p, big_endian, facts } = part;
        let (base, sbase) = (objs.len(), storages.len());
        let root = tree.root;
        if let Some(Obj::Dict(d)) = tree.objs.get(root) {
            for &(k, v) in &d.entries {
                let k = k.checked_add(base).ok_or_else(|| Error::internal("objects beyond usize"))?;
                let v = v.checked_add(base).ok_or_else(|| Error::internal("objects beyond usize"))?;
                entries.push((k, v));
            }
        }
        for obj in tree.objs {
            objs.push(shifted(obj, base, sbase)?);
        }
        storages.extend(tree.storages);
        placed.extend(p.into_iter().map(|p| Placed { file, big_endian, ..p }));
        layout.get_or_insert(l);
        big |= big_endian;
        protocol = protocol.max(facts.protocol);
        globals.extend(facts.globals);
        opcodes = opcodes.saturating_add(facts.opcodes);
        requires_grad = requires_grad.saturating_add(facts.requires_grad);
        sources.push(source);
    }
    let root = objs.len();
    objs.push(Obj::Dict(Dict { entries, kind: DictKind::Plain, attrs: None }));
    let facts = PickleFacts { protocol, globals: globals.iter().cloned().collect(), opcodes, requires_grad };
    let pickle = pickle::Pickle { objs, root, storages, end: 0, protocol, globals, opcodes, requires_grad };
    let tree = Tree::new(pickle)?;
    let layout = layout.ok_or_else(|| Error::internal("a shard set of no file"))?;
    Ok((sources, layout, tree, placed, big, facts))
}

/// Reads `len` bytes at `offset` of `source`, bounded by what metadata may hold.
fn read_at(source: &Source, offset: u64, len: u64) -> Result<Vec<u8>> {
    if len > MAX_READ_METADATA {
        return Err(
            crate::source::metadata_too_big(len, usize::try_from(MAX_READ_METADATA).unwrap_or(usize::MAX)).at(offset)
        );
    }
    let end = offset.checked_add(len);
    if end.is_none_or(|e| e > source.len()) {
        return Err(Error::new(ErrorKind::Truncated {
            what: "zip archive",
            needed: len,
            available: source.len().saturating_sub(offset),
        })
        .at(offset));
    }
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
    source.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

type Read = (Layout, pickle::Pickle, Vec<Placed>, bool);

fn step_err(s: Step) -> Error {
    match s {
        Step::Fail(e) => e,
        Step::NeedMore(_) => Error::internal("a whole record asked for more bytes"),
    }
}

fn read_zip(source: &Source) -> Result<Read> {
    let archive = zip::read_archive(source.len(), &mut |o, l| read_at(source, o, l))?;
    let pkl = archive
        .get(b"data.pkl")
        .ok_or_else(|| Error::new(PytorchErrorKind::Zip("no 'data.pkl' record in the archive's folder".into())))?;
    let bytes = read_at(source, pkl.data, pkl.size)?;
    let pickle = pickle::read(&bytes, 0, Options { base: pkl.data, more_in_file: false, file_len: 0, ids: Ids::Zip })
        .map_err(step_err)?;
    if pickle.end != bytes.len() {
        return Err(Error::new(PytorchErrorKind::Pickle(format!(
            "{} bytes after STOP in data.pkl",
            bytes.len().saturating_sub(pickle.end)
        )))
        .at(pkl.data.saturating_add(pickle.end as u64)));
    }
    let big_endian = match archive.get(b"byteorder") {
        None => false,
        Some(r) if r.size > 16 => {
            return Err(
                Error::new(PytorchErrorKind::Zip("a 'byteorder' record of more than 16 bytes".into())).at(r.data)
            );
        }
        Some(r) => match &read_at(source, r.data, r.size)?[..] {
            b"little" => false,
            b"big" => true,
            other => {
                return Err(Error::new(PytorchErrorKind::Zip(format!(
                    "a 'byteorder' record holding '{}' (little or big expected)",
                    crate::text::escape_bytes(other)
                )))
                .at(r.data));
            }
        },
    };
    let mut placed = Vec::with_capacity(pickle.storages.len());
    for s in &pickle.storages {
        let mut name = b"data/".to_vec();
        name.extend_from_slice(&s.key);
        let shown = crate::text::escape_bytes(&s.key);
        let r = archive.get(&name).ok_or_else(|| {
            Error::new(PytorchErrorKind::Checkpoint(format!(
                "storage '{shown}' has no record 'data/{shown}' in the archive"
            )))
            .at(s.at)
        })?;
        if r.size != s.nbytes() {
            return Err(Error::new(PytorchErrorKind::Checkpoint(format!(
                "storage '{shown}' is named as {} × {} ({} bytes) and its record holds {} bytes",
                s.numel,
                s.class.name(),
                s.nbytes(),
                r.size
            )))
            .at(s.at));
        }
        placed.push(Placed { start: r.data, len: r.size, users: 0, file: 0, big_endian });
    }
    Ok((Layout::Zip(archive), pickle, placed, big_endian))
}

/// The legacy format's five pickles, read from a prefix of the file.
#[derive(Debug)]
struct LegacyHead {
    root: pickle::Pickle,
    keys: Vec<Box<[u8]>>,
    end: u64,
}

fn legacy_prefix(bytes: &[u8], len: u64) -> std::result::Result<(LegacyHead, u64), Step> {
    let more = (bytes.len() as u64) < len;
    let opts = |ids| Options { base: 0, more_in_file: more, file_len: len, ids };
    let mut pos = 0usize;
    let mut next = |ids: Ids| -> std::result::Result<pickle::Pickle, Step> {
        let p = pickle::read(bytes, pos, opts(ids))?;
        pos = p.end;
        Ok(p)
    };
    let fail = |at: usize, m: &str| Step::Fail(checkpoint_err(m).at(at as u64));
    let magic = next(Ids::None)?;
    if !matches!(magic.objs.get(magic.root), Some(Obj::Int(i)) if *i == pickle::Int::from_le(&LEGACY_MAGIC)) {
        return Err(fail(0, "the legacy format's first pickle is not its magic number"));
    }
    let at = magic.end;
    let version = next(Ids::None)?;
    if !matches!(version.objs.get(version.root), Some(Obj::Int(pickle::Int::Small(1001)))) {
        return Err(fail(at, "the legacy format's protocol version is not 1001"));
    }
    let at = version.end;
    let sys = next(Ids::None)?;
    if !matches!(sys.objs.get(sys.root), Some(Obj::Dict(_))) {
        return Err(fail(at, "the legacy format's sys_info is not a mapping"));
    }
    let root = next(Ids::Legacy)?;
    let at = root.end;
    let list = next(Ids::None)?;
    let keys = match list.objs.get(list.root) {
        Some(Obj::List(items)) => items
            .iter()
            .map(|&i| match list.objs.get(i) {
                Some(Obj::Str(s)) => Ok(s.clone()),
                _ => Err(fail(at, "the legacy format's storage key list holds something other than strings")),
            })
            .collect::<std::result::Result<Vec<_>, _>>()?,
        _ => return Err(fail(at, "the legacy format's fifth pickle is not a list of storage keys")),
    };
    let end = list.end as u64;
    Ok((LegacyHead { root, keys, end }, end))
}

fn read_legacy(source: &Source) -> Result<Read> {
    let head = source.parse(legacy_prefix)?;
    let pickle = head.root;
    let index: HashMap<&[u8], usize> = pickle.storages.iter().enumerate().map(|(i, s)| (&*s.key, i)).collect();
    let mut placed: Vec<Option<Placed>> = vec![None; pickle.storages.len()];
    let mut pos = head.end;
    for key in &head.keys {
        let shown = crate::text::escape_bytes(key);
        let i = *index.get(&**key).ok_or_else(|| {
            checkpoint_err(format!(
                "the storage key list names '{shown}', which no tensor uses (torch.load would fail)"
            ))
            .at(pos)
        })?;
        let s = pickle.storages.get(i).ok_or_else(|| Error::internal("storage out of range"))?;
        let count = read_at(source, pos, 8).map_err(|_| {
            Error::new(ErrorKind::Truncated {
                what: "legacy storage count",
                needed: 8,
                available: source.len().saturating_sub(pos),
            })
            .at(pos)
        })?;
        let mut n = [0u8; 8];
        n.copy_from_slice(count.get(..8).unwrap_or(&[0; 8]));
        let n = i64::from_le_bytes(n);
        if u64::try_from(n).ok() != Some(s.numel) {
            return Err(
                checkpoint_err(format!("storage '{shown}' holds {n} elements where its id says {}", s.numel)).at(pos)
            );
        }
        let start = pos.saturating_add(8);
        let end = start.checked_add(s.nbytes()).filter(|&e| e <= source.len()).ok_or_else(|| {
            Error::new(ErrorKind::Truncated {
                what: "legacy storage",
                needed: s.nbytes(),
                available: source.len().saturating_sub(start),
            })
            .at(start)
            .about(Subject::Key(key.to_vec()))
        })?;
        let slot = placed.get_mut(i).ok_or_else(|| Error::internal("storage out of range"))?;
        if slot.is_some() {
            return Err(checkpoint_err(format!("the storage key list names '{shown}' twice")).at(pos));
        }
        *slot = Some(Placed { start, len: s.nbytes(), users: 0, file: 0, big_endian: false });
        pos = end;
    }
    if pos != source.len() {
        return Err(
            checkpoint_err(format!("{} bytes after the last storage", source.len().saturating_sub(pos))).at(pos)
        );
    }
    let placed = placed
        .into_iter()
        .zip(&pickle.storages)
        .map(|(p, s)| {
            p.ok_or_else(|| {
                checkpoint_err(format!(
                    "storage '{}' is used and not in the storage key list",
                    crate::text::escape_bytes(&s.key)
                ))
                .at(s.at)
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((Layout::Legacy, pickle, placed, false))
}

/// Whether a view of `size`/`stride` reads its elements in order, with no gap.
fn is_contiguous(size: &[u64], stride: &[u64]) -> bool {
    let mut expected = 1u64;
    for (s, t) in size.iter().zip(stride).rev() {
        if *s != 1 && *t != expected {
            return false;
        }
        expected = expected.saturating_mul(*s);
    }
    true
}

/// One job per distinct tensor (the tree's order).
fn jobs(tree: &Tree, placed: &mut [Placed]) -> Result<Vec<JobSpec>> {
    for leaf in &tree.tensors {
        if let Some(p) = tree.tensor(leaf).and_then(|t| placed.get_mut(t.storage)) {
            p.users = p.users.saturating_add(1);
        }
    }
    let mut out = Vec::with_capacity(tree.tensors.len());
    for leaf in &tree.tensors {
        let t = tree.tensor(leaf).ok_or_else(|| Error::internal("a leaf that is no tensor"))?;
        let p = placed.get(t.storage).ok_or_else(|| Error::internal("storage out of range"))?;
        let d = t.dtype;
        let swap = if d.is_bool() {
            Swap::Bool
        } else if p.big_endian && d.word > 1 {
            Swap::Words(usize::try_from(d.word).unwrap_or(1))
        } else {
            Swap::None
        };
        let conversion = Conversion { block: d.size, swap, type_name: d.name, digest: Algorithm::Sha256 };
        let numel = t.numel();
        let first = t.offset.checked_mul(d.size).and_then(|o| o.checked_add(p.start));
        let Some(first) = first else {
            return Err(Error::internal("a checked tensor's offset overflows"));
        };
        if numel == 0 {
            out.push(JobSpec { file: p.file, start: p.start, len: 0, conversion, gather: None });
            continue;
        }
        let mut last = t.offset;
        for (s, st) in t.size.iter().zip(&t.stride) {
            last = last.saturating_add(s.saturating_sub(1).saturating_mul(*st));
        }
        let span = last.saturating_sub(t.offset).saturating_add(1).saturating_mul(d.size);
        if is_contiguous(&t.size, &t.stride) && p.users == 1 {
            out.push(JobSpec {
                file: p.file,
                start: first,
                len: numel.saturating_mul(d.size),
                conversion,
                gather: None,
            });
        } else {
            let g = Gather { elem: d.size, offset: 0, size: t.size.clone(), stride: t.stride.clone() };
            out.push(JobSpec { file: p.file, start: first, len: span, conversion, gather: Some(Arc::new(g)) });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity() {
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(is_contiguous(&[1, 3], &[7, 1]));
        assert!(is_contiguous(&[], &[]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(!is_contiguous(&[2, 3], &[0, 1]));
    }
}
