//! GGUF: everything that knows GGUF bytes. The cursor reads integers in a
//! file's byte order; `parse` turns a file's bytes into a [`GgufFile`] (pure,
//! no I/O); `model` joins one file or the shards of a split model into a
//! logical [`Model`], sorted; `skeleton` builds the canonical skeleton
//! (docs/SPEC.md). The core reaches it only through [`Labelled`] and its
//! [`Description`], [`Gguf`].

mod arrays;
mod cursor;
pub mod diff;
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

use std::path::{Path, PathBuf};

use crate::format::{Description, Labelled, OpenOptions, file_size};
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

/// The GGUF format, as the core knows it (its [`Description`]).
#[derive(Debug, Clone, Copy)]
pub struct Gguf;

impl Description for Gguf {
    type Model = Model;
    type Inspection = inspect::Inspection;
    type Diff = diff::Diff;

    const WHAT: &'static str = "a GGUF model";
    const EXTENSIONS: &'static [&'static str] = &["gguf"];

    fn claims_bytes(head: &[u8]) -> bool {
        head.starts_with(b"GGUF")
    }

    fn claims_path(_: &Path) -> bool {
        false
    }

    fn from_source(source: Source, opts: OpenOptions) -> crate::Result<Model> {
        Model::from_source(source, opts)
    }

    fn first_shard_of(later: &Path) -> Option<PathBuf> {
        ShardName::parse(later).filter(|n| n.no > 1).map(|n| n.sibling(1))
    }

    fn shard_alone_names_model(_: &Model) -> bool {
        // A later shard alone is refused: it is not the first.
        false
    }

    fn approximate_bytes(path: &Path) -> Option<u64> {
        let name = ShardName::parse(path).filter(|n| n.no == 1)?;
        Some((1..=name.count).fold(0u64, |t, no| t.saturating_add(file_size(&name.sibling(no)))))
    }

    fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> crate::Result<inspect::Inspection> {
        inspect::inspect(model, digest, opts)
    }

    fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, opts: &DiffOptions) -> crate::Result<diff::Diff> {
        diff::diff(a, da, b, db, opts)
    }
}
