//! GGUF: everything that knows GGUF bytes. The cursor reads integers in a
//! file's byte order; `parse` turns a file's bytes into a [`GgufFile`] (pure,
//! no I/O); `model` joins one file or the shards of a split model into a
//! logical [`Model`], sorted; `skeleton` builds the canonical skeleton
//! (docs/SPEC.md). The core reaches it only through [`Labelled`] and its
//! [`FileFormat`], [`Gguf`].

mod arrays;
mod cursor;
pub mod diff;
mod dir_rule;
mod error;
mod facts;
mod ggml_type;
pub mod inspect;
mod json;
mod model;
mod name;
mod parse;
pub mod partial;
mod shard;
mod shards;
mod skeleton;
mod tensors;
mod value;
pub mod warnings;

pub use error::GgufErrorKind;

use std::path::{Path, PathBuf};

use crate::facts::Facts;
use crate::format::{
    self, AnyModel, DiffSection, DirectoryKind, FileFormat, Labelled, OpenOptions, Section, Side, diff_same, file_size,
};
use crate::hash::{Digest, Job, Sha256Digest};
use crate::render::{DiffOptions, InspectOptions};
use crate::source::Source;

pub use arrays::{ElementDifference, first_difference, show_value};
pub use cursor::ByteOrder;
pub use ggml_type::{GgmlType, TABLE as GGML_TYPES};
pub use json::{value_json, write_model_json};
pub use model::{Model, ModelKv, Shard};
pub use name::Name;
pub use parse::{
    ALIGNMENT_KEY, DEFAULT_ALIGNMENT, GgufFile, Kv, MAX_DIMS, SPLIT_PREFIX, Shape, StoredDims, TensorInfo, align_up,
    parse, tensor_nbytes,
};
pub use shards::ShardName;
pub use skeleton::{skeleton_bytes, write_skeleton};
pub use tensors::{ModelTensor, TensorIter, Tensors};
pub use value::{ArrayValue, MAX_ARRAY_DEPTH, StringValue, Value, ValueType, canonical_payload};

impl Labelled for Model {
    fn job_count(&self) -> usize {
        self.tensors().len()
    }

    fn job(&self, i: usize) -> Option<Job<'_>> {
        Model::job(self, self.tensors().get(i)?)
    }

    fn sources(&self) -> Vec<&Source> {
        self.shards().iter().map(|s| &s.source).collect()
    }

    fn write_skeleton(&self, data_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> crate::Result<()> {
        write_skeleton(self, data_sha256, sink);
        Ok(())
    }

    fn write_json(&self, w: &mut crate::output::JsonWriter<'_>, path: &Path, digest: &Digest) -> std::io::Result<()> {
        write_model_json(w, path, self, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("gguf", "canonical-skeleton-v1")
    }
}

/// The GGUF format, as the registry lists it (its [`FileFormat`]).
#[derive(Debug, Clone, Copy)]
pub struct Gguf;

impl FileFormat for Gguf {
    fn what(&self) -> &'static str {
        "a GGUF model"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["gguf"]
    }

    fn claims_bytes(&self, head: &[u8]) -> bool {
        head.starts_with(b"GGUF")
    }

    fn open(&self, source: Source, opts: OpenOptions) -> crate::Result<AnyModel> {
        Model::from_source(source, opts).map(AnyModel::new)
    }

    fn first_shard_of(&self, later: &Path) -> Option<PathBuf> {
        ShardName::parse(later).filter(|n| n.no > 1).map(|n| n.sibling(1))
    }

    fn approximate_bytes(&self, path: &Path) -> Option<u64> {
        let name = ShardName::parse(path).filter(|n| n.no == 1)?;
        Some((1..=name.count).fold(0u64, |t, no| t.saturating_add(file_size(&name.sibling(no)))))
    }

    fn partial(&self, source: Source, opts: &InspectOptions) -> Option<String> {
        partial::partial(source, opts.width, opts.items, opts.limit).map(|p| p.text())
    }

    fn component_kind(&self) -> Option<DirectoryKind> {
        Some(DirectoryKind { bytes: b"GGUF", words: "GGUF weights" })
    }

    fn directory_rule(&self) -> Option<&'static dyn crate::format::directory_rule::DirectoryRule> {
        Some(&dir_rule::Rule)
    }
}

impl format::Opened for Model {
    fn what(&self) -> &'static str {
        Gguf.what()
    }

    fn inspect(&self, digest: &Digest, opts: &InspectOptions) -> crate::Result<Box<dyn Section>> {
        Ok(Box::new(inspect::inspect(self, digest, opts)?))
    }

    fn diff(
        &self,
        mine: &Digest,
        other: &AnyModel,
        theirs: &Digest,
        side: Side,
        opts: &DiffOptions,
    ) -> Option<crate::Result<Box<dyn DiffSection>>> {
        diff_same(self, mine, other, theirs, side, |a, da, b, db| diff::diff(a, da, b, db, opts))
    }

    fn facts(&self, facts: &mut Facts) -> crate::Result<()> {
        facts::facts(self, facts)
    }

    fn shard_alone_names_model(&self) -> bool {
        // A later shard alone is refused: it is not the first.
        false
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

// The sections answer through their own inherent methods.
crate::format::sections!(inspect::Inspection, diff::Diff);
