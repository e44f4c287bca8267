//! PyTorch checkpoints (`torch.save`): a zip archive or the legacy format,
//! whose pickle is read as data by an interpreter of the contract's opcodes
//! and globals only (docs/SPEC.md Part V, docs/adr/0034). `zip` reads the
//! archive by its central directory; `pickle` interprets a pickle into an
//! arena of objects; `tree` checks and sorts the tree and writes
//! `value(root)`; `model` opens a file, places its storages and makes one
//! hashing job per distinct tensor. Pure but for `model`, which reads
//! through its `Source`. The core reaches it only through [`Labelled`] and
//! its [`Description`], [`Pytorch`].

pub mod diff;
pub mod dtype;
pub mod inspect;
mod json;
mod model;
pub mod pickle;
pub mod tree;
pub mod zip;

use std::path::{Path, PathBuf};

use crate::format::{Description, Labelled, OpenOptions};
use crate::hash::{Digest, Job, Sha256Digest};
use crate::render::{DiffOptions, InspectOptions};
use crate::source::Source;

pub use model::{LEGACY_MAGIC, Layout, Model, PickleFacts, Placed, is_legacy, is_zip};

/// The skeleton's magic.
pub const MAGIC: &[u8; 4] = b"PTCH";

/// Whether a file's first bytes are a zip archive's or the legacy format's.
pub fn sniff(head: &[u8]) -> bool {
    is_zip(head) || is_legacy(head)
}

/// Whether a name is one `transformers` gives a checkpoint, whatever its bytes.
pub fn is_checkpoint_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("pytorch_model") && (name.ends_with(".bin") || name.ends_with(".bin.index.json"))
}

impl Labelled for Model {
    fn job_count(&self) -> usize {
        Model::job_count(self)
    }

    fn job(&self, i: usize) -> Option<Job<'_>> {
        Model::job(self, i)
    }

    fn sources(&self) -> Vec<&Source> {
        vec![self.source()]
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

/// The PyTorch checkpoint format, as the core knows it (its [`Description`]).
#[derive(Debug, Clone, Copy)]
pub struct Pytorch;

impl Description for Pytorch {
    type Model = Model;
    type Inspection = inspect::Inspection;
    type Diff = diff::Diff;

    const WHAT: &'static str = "a PyTorch checkpoint";
    const EXTENSIONS: &'static [&'static str] = &["pt", "pth", "ckpt"];

    fn claims_bytes(head: &[u8]) -> bool {
        sniff(head)
    }

    fn claims_path(path: &Path) -> bool {
        is_checkpoint_name(path)
    }

    fn from_source(source: Source, opts: OpenOptions) -> crate::Result<Model> {
        Model::from_source(source, opts)
    }

    fn first_shard_of(_later: &Path) -> Option<PathBuf> {
        None
    }

    fn shard_alone_names_model(_model: &Model) -> bool {
        false
    }

    fn approximate_bytes(_path: &Path) -> Option<u64> {
        None
    }

    fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> crate::Result<inspect::Inspection> {
        Ok(inspect::inspect(model, digest, opts))
    }

    fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, opts: &DiffOptions) -> crate::Result<diff::Diff> {
        Ok(diff::diff(a, da, b, db, opts))
    }
}

/// Reads a zip checkpoint's `data.pkl` bytes as data and checks its tree
/// (pure: what fuzzing and tests call; storages are not looked up).
pub fn parse_pickle(bytes: &[u8]) -> crate::Result<tree::Tree> {
    let opts = pickle::Options { base: 0, more_in_file: false, ids: pickle::Ids::Zip };
    let p = pickle::read(bytes, 0, opts).map_err(|s| match s {
        crate::source::Step::Fail(e) => e,
        crate::source::Step::NeedMore(_) => crate::Error::internal("a whole pickle asked for more bytes"),
    })?;
    if p.end != bytes.len() {
        let kind = crate::ErrorKind::Pickle(format!("{} bytes after STOP", bytes.len().saturating_sub(p.end)));
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
