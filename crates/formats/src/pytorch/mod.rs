//! PyTorch checkpoints (`torch.save`): a zip archive or the legacy format,
//! whose pickle is read as data by an interpreter of the contract's opcodes
//! and globals only (docs/SPEC.md Part V, docs/adr/0034). `zip` reads the
//! archive by its central directory; `pickle` interprets a pickle into an
//! arena of objects; `tree` checks and sorts the tree and writes
//! `value(root)`; `model` opens a file, places its storages and makes one
//! hashing job per distinct tensor. Pure but for `model`, which reads
//! through its `Source`. The core reaches it only through [`Labelled`] and
//! its [`FileFormat`], [`Pytorch`], listed in `formats::FORMATS`.

pub mod diff;
mod dir_rule;
pub mod dtype;
mod error;
pub mod inspect;
mod json;
mod model;
pub mod pickle;
pub mod shards;
pub mod tensors;
pub mod tree;
pub mod zip;

pub use error::PytorchErrorKind;

use std::path::{Path, PathBuf};

use crate::facts::Facts;
use crate::format::{
    self, AnyModel, DiffSection, DirectoryKind, FileFormat, Labelled, OpenOptions, Section, Side, diff_same,
};
use crate::hash::{Digest, Job, Sha256Digest};
use crate::render::{DiffOptions, InspectOptions};
use crate::source::Source;

pub use model::{IndexInfo, LEGACY_MAGIC, Layout, MAX_STREAM, Model, PickleFacts, Placed, is_legacy, is_zip};

/// The skeleton's magic.
pub const MAGIC: &[u8; 4] = b"PTCH";

/// Whether a file's first bytes are a zip archive's or the legacy format's.
pub fn sniff(head: &[u8]) -> bool {
    is_zip(head) || is_legacy(head)
}

/// Whether a name is one `transformers` gives a checkpoint
/// (`pytorch_model*.bin`), or a checkpoint's index (`*.bin.index.json`),
/// whatever its bytes.
pub fn is_checkpoint_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    (name.starts_with("pytorch_model") && name.ends_with(".bin")) || name.ends_with(shards::INDEX_SUFFIX)
}

impl Labelled for Model {
    fn job_count(&self) -> usize {
        Model::job_count(self)
    }

    fn job(&self, i: usize) -> Option<Job<'_>> {
        Model::job(self, i)
    }

    fn sources(&self) -> Vec<&Source> {
        Model::sources(self)
    }

    fn write_skeleton(&self, data_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> crate::Result<()> {
        sink(MAGIC);
        sink(&1u32.to_le_bytes());
        self.tree().write(data_sha256, sink)
    }

    fn write_json(&self, w: &mut crate::output::JsonWriter<'_>, path: &Path, digest: &Digest) -> std::io::Result<()> {
        json::write_model_json(w, path, self, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("pytorch", "pytorch-skeleton-v1")
    }
}

/// The PyTorch checkpoint format, as the registry lists it (its [`FileFormat`]).
#[derive(Debug, Clone, Copy)]
pub struct Pytorch;

impl FileFormat for Pytorch {
    fn what(&self) -> &'static str {
        "a PyTorch checkpoint"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["pt", "pth", "ckpt"]
    }

    fn claims_bytes(&self, head: &[u8]) -> bool {
        sniff(head)
    }

    fn claims_path(&self, path: &Path) -> bool {
        is_checkpoint_name(path)
    }

    fn open(&self, source: Source, opts: OpenOptions) -> crate::Result<AnyModel> {
        Model::from_source(source, opts).map(AnyModel::new)
    }

    fn first_shard_of(&self, later: &Path) -> Option<PathBuf> {
        let name = shards::ShardName::parse(later.file_name()?).filter(|n| n.no > 1)?;
        Some(later.with_file_name(name.sibling(1)))
    }

    fn component_kind(&self) -> Option<DirectoryKind> {
        Some(DirectoryKind { bytes: b"PTCH", words: "PyTorch checkpoint" })
    }

    fn directory_rule(&self) -> Option<&'static dyn crate::format::directory_rule::DirectoryRule> {
        Some(&dir_rule::Rule)
    }
}

impl format::Opened for Model {
    fn what(&self) -> &'static str {
        Pytorch.what()
    }

    fn inspect(&self, digest: &Digest, opts: &InspectOptions) -> crate::Result<Box<dyn Section>> {
        Ok(Box::new(inspect::inspect(self, digest, opts)))
    }

    /// Against a checkpoint leaf by key path; against a safetensors model
    /// tensor by tensor ([`tensors::TensorsDiff`]).
    fn diff(
        &self,
        mine: &Digest,
        other: &AnyModel,
        theirs: &Digest,
        side: Side,
        opts: &DiffOptions,
    ) -> Option<crate::Result<Box<dyn DiffSection>>> {
        if let Some(st) = other.downcast_ref::<crate::safetensors::Model>() {
            let (me, them) = (tensors::pytorch_rows(self, mine), tensors::safetensors_rows(st, theirs));
            let (p, s) = (Pytorch.what(), other.what());
            let d = match side {
                Side::First => tensors::TensorsDiff::new((p, s), me, them),
                Side::Second => tensors::TensorsDiff::new((s, p), them, me),
            };
            return Some(Ok(Box::new(d)));
        }
        diff_same(self, mine, other, theirs, side, |a, da, b, db| Ok(diff::diff(a, da, b, db, opts)))
    }

    /// The tensors' dtypes.
    fn facts(&self, facts: &mut Facts) -> crate::Result<()> {
        let tree = self.tree();
        for leaf in &tree.tensors {
            if let Some(t) = tree.tensor(leaf) {
                facts.count_tensor_type(t.dtype.name);
            }
        }
        Ok(())
    }

    fn shard_alone_names_model(&self) -> bool {
        // Through an index, a shard alone opens the same index; without
        // one, a later shard alone is refused by its name.
        self.index().is_some()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

// The sections answer through their own inherent methods.
crate::format::sections!(inspect::Inspection, diff::Diff);

/// Reads a zip checkpoint's `data.pkl` bytes as data and checks its tree
/// (pure: what fuzzing and tests call; storages are not looked up).
pub fn parse_pickle(bytes: &[u8]) -> crate::Result<tree::Tree> {
    let opts = pickle::Options { base: 0, more_in_file: false, file_len: 0, ids: pickle::Ids::Zip };
    let p = pickle::read(bytes, 0, opts).map_err(|s| match s {
        crate::source::Step::Fail(e) => e,
        crate::source::Step::NeedMore(_) => crate::Error::internal("a whole pickle asked for more bytes"),
    })?;
    if p.end != bytes.len() {
        let kind = PytorchErrorKind::Pickle(format!("{} bytes after STOP", bytes.len().saturating_sub(p.end)));
        return Err(crate::Error::new(kind).at(p.end as u64));
    }
    tree::Tree::new(p)
}

/// Reads the zip archive that `bytes` are (pure: the central directory and
/// every local header checked; what fuzzing and tests call).
pub fn parse_archive(bytes: &[u8]) -> crate::Result<zip::Archive> {
    let len = bytes.len() as u64;
    zip::read_archive(len, &mut |offset, n| {
        let range = usize::try_from(offset).ok().zip(usize::try_from(n).ok());
        range.and_then(|(o, n)| bytes.get(o..o.checked_add(n)?)).map(<[u8]>::to_vec).ok_or_else(|| {
            crate::Error::new(crate::ErrorKind::Truncated {
                what: "zip archive",
                needed: n,
                available: len.saturating_sub(offset),
            })
            .at(offset)
        })
    })
}
