//! A PyTorch checkpoint file opened: its layout (zip or legacy), its tree,
//! where each storage's bytes lie, and one hashing job per distinct tensor
//! (a plain range for a contiguous little-endian tensor alone in its
//! storage, a gather otherwise).
//!
//! `layout` reads a file as the zip archive or the legacy format and
//! places its storages; `sets` joins shards (by their names or an index)
//! into one model; `jobs` makes one hashing job per distinct tensor.

mod jobs;
mod layout;
mod sets;

use crate::pytorch::PytorchErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use self::jobs::jobs;
use self::layout::read_layout;
use super::pickle;
use super::shards::{self, ShardName};
use super::tree::Tree;
use super::zip::Archive;
use crate::error::{Error, Result, Subject};
use crate::format::OpenOptions;
use crate::hash::{Conversion, Digest, Gather, Job, PieceSizes};
use crate::source::{MAX_READ_METADATA, Source};

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
