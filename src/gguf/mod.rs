//! GGUF: everything that knows GGUF bytes. The cursor reads integers in a
//! file's byte order; `parse` turns a file's bytes into a [`GgufFile`] (pure,
//! no I/O); `model` joins one file or the shards of a split model into a
//! logical [`Model`], sorted; `skeleton` builds the canonical skeleton
//! (docs/SPEC.md). The core reaches it only through [`Labelled`].

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

use std::any::Any;
use std::path::Path;

use crate::format::Labelled;
use crate::hash::{Digest, Job, Sha256Digest};
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

    fn as_any(&self) -> &dyn Any {
        self
    }
}
