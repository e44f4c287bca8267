//! A PyTorch checkpoint file opened: its layout (zip or legacy), its tree,
//! where each storage's bytes lie, and one hashing job per distinct tensor
//! (a plain range for a contiguous little-endian tensor alone in its
//! storage, a gather otherwise).

use crate::pytorch::PytorchErrorKind;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::pickle::{self, Ids, Obj, Options};
use super::tree::Tree;
use super::zip::{self, Archive};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::OpenOptions;
use crate::hash::{Algorithm, Conversion, Digest, Gather, Job, PieceSizes, Swap};
use crate::source::{MAX_READ_METADATA, Source, Step};

/// The legacy format's magic number, as its first pickle's `LONG1` bytes.
pub const LEGACY_MAGIC: [u8; 10] = [0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];

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
    start: u64,
    len: u64,
    conversion: Conversion,
    gather: Option<Arc<Gather>>,
}

/// One opened checkpoint file.
#[derive(Debug)]
pub struct Model {
    source: Source,
    layout: Layout,
    tree: Tree,
    placed: Vec<Placed>,
    big_endian: bool,
    facts: PickleFacts,
    jobs: Vec<JobSpec>,
    pub(crate) pieces: PieceSizes,
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
            return Err(checkpoint_err(
                "a PyTorch checkpoint cannot be read from standard input: a zip archive is read from its end; name the file instead",
            ));
        }
        let name = source.path().file_name().map(|n| n.as_encoded_bytes().to_vec()).unwrap_or_default();
        if name.ends_with(b".index.json") {
            return Err(checkpoint_err(
                "a PyTorch checkpoint's index: shard sets are not labelled by this version yet (docs/adr/0034)",
            ));
        }
        if opts.join_shards && is_later_or_first_shard(&name) {
            return Err(checkpoint_err(
                "a shard of a PyTorch checkpoint: shard sets are not labelled by this version yet (docs/adr/0034); \
                 --no-join labels this file alone",
            ));
        }
        let head = source.head(512)?;
        let (layout, pickle, placed, big_endian) = if is_zip(&head) {
            read_zip(&source)?
        } else if is_legacy(&head) {
            read_legacy(&source)?
        } else if head.starts_with(LFS) {
            return Err(Error::new(ErrorKind::LfsPointer));
        } else if head.get(257..262) == Some(b"ustar") {
            return Err(checkpoint_err(
                "a checkpoint in the older tar format (PyTorch before 1.6's first format), which this label does not read",
            ));
        } else if head.is_empty() {
            return Err(Error::new(ErrorKind::Empty));
        } else {
            return Err(checkpoint_err("not a PyTorch checkpoint: neither a zip archive nor the legacy format").at(0));
        };
        let facts = PickleFacts {
            protocol: pickle.protocol,
            globals: pickle.globals.iter().cloned().collect(),
            opcodes: pickle.opcodes,
            requires_grad: pickle.requires_grad,
        };
        let tree = Tree::new(pickle)?;
        let mut placed = placed;
        let jobs = jobs(&tree, &mut placed, big_endian)?;
        Ok(Model { source, layout, tree, placed, big_endian, facts, jobs, pieces: opts.pieces })
    }

    /// The open file.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.source.path()
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
            source: &self.source,
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
        placed.push(Placed { start: r.data, len: r.size, users: 0 });
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
        *slot = Some(Placed { start, len: s.nbytes(), users: 0 });
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

/// Whether a file name is `P-NNNNN-of-MMMMM.bin` with `MMMMM > 1` (a shard of a set).
fn is_later_or_first_shard(name: &[u8]) -> bool {
    let Some(stem) = name.strip_suffix(b".bin") else { return false };
    let Some(tail) = stem.len().checked_sub(15).and_then(|i| stem.get(i..)) else { return false };
    let digits = |b: &[u8]| b.len() == 5 && b.iter().all(u8::is_ascii_digit);
    let (no, of, count) =
        (tail.get(1..6).unwrap_or(&[]), tail.get(6..10).unwrap_or(&[]), tail.get(10..).unwrap_or(&[]));
    tail.first() == Some(&b'-')
        && digits(no)
        && of == b"-of-"
        && digits(count)
        && count != b"00001"
        && no <= count
        && no != b"00000"
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
fn jobs(tree: &Tree, placed: &mut [Placed], big_endian: bool) -> Result<Vec<JobSpec>> {
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
        } else if big_endian && d.word > 1 {
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
            out.push(JobSpec { start: p.start, len: 0, conversion, gather: None });
            continue;
        }
        let mut last = t.offset;
        for (s, st) in t.size.iter().zip(&t.stride) {
            last = last.saturating_add(s.saturating_sub(1).saturating_mul(*st));
        }
        let span = last.saturating_sub(t.offset).saturating_add(1).saturating_mul(d.size);
        if is_contiguous(&t.size, &t.stride) && p.users == 1 {
            out.push(JobSpec { start: first, len: numel.saturating_mul(d.size), conversion, gather: None });
        } else {
            let g = Gather { elem: d.size, offset: 0, size: t.size.clone(), stride: t.stride.clone() };
            out.push(JobSpec { start: first, len: span, conversion, gather: Some(Arc::new(g)) });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_and_contiguity() {
        assert!(is_later_or_first_shard(b"pytorch_model-00001-of-00002.bin"));
        assert!(is_later_or_first_shard(b"x-00002-of-00002.bin"));
        assert!(!is_later_or_first_shard(b"x-00001-of-00001.bin"));
        assert!(!is_later_or_first_shard(b"x-00003-of-00002.bin"));
        assert!(!is_later_or_first_shard(b"x-0001-of-00002.bin"));
        assert!(!is_later_or_first_shard(b"pytorch_model.bin"));
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(is_contiguous(&[1, 3], &[7, 1]));
        assert!(is_contiguous(&[], &[]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(!is_contiguous(&[2, 3], &[0, 1]));
    }
}
