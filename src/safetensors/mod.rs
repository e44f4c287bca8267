//! Safetensors: one file, a sharded checkpoint with or without its index,
//! or the files an index lists. `header` parses one file (pure: a function
//! of its first bytes); `index` reads an index; `model` joins files into a
//! logical model with its metadata groups; `skeleton` builds the canonical
//! skeleton (docs/SPEC.md, "Safetensors"). The core reaches it only through
//! [`Labelled`].

pub mod diff;
mod dtype;
mod header;
mod index;
pub mod inspect;
mod json;
mod model;
mod names;
pub mod partial;
mod skeleton;

use std::any::Any;
use std::path::Path;

use crate::format::Labelled;
use crate::hash::{Digest, Job, Sha256Digest};
use crate::source::Source;

pub use dtype::{DTYPES, Dtype};
pub use header::{MAX_DEPTH, MAX_HEADER, SafetensorsFile, TensorEntry, parse};
pub(crate) use index::read_index_from;
pub use index::{Index, parse_index, read_index};
pub use json::write_model_json;
pub use model::{Group, IndexInfo, Model, ModelTensor, StFile, is_index_name};
pub use names::{INDEX_SUFFIX, ShardName, plain_name_in};
pub use skeleton::{skeleton_bytes, write_skeleton};

/// Whether a file's first bytes look like a safetensors header: a length
/// no larger than the limit, then JSON opening with `{` (possibly after
/// whitespace).
pub fn sniff(head: &[u8]) -> bool {
    let (Some(len), Some(first)) = (head.get(..8), head.get(8)) else {
        return false;
    };
    let mut n = [0u8; 8];
    n.copy_from_slice(len);
    u64::from_le_bytes(n) <= MAX_HEADER && matches!(first, b'{' | b' ' | b'\t' | b'\r' | b'\n')
}

impl Labelled for Model {
    fn job_count(&self) -> usize {
        self.tensors().len()
    }

    fn job(&self, i: usize) -> Option<Job<'_>> {
        Model::job(self, self.tensors().get(i)?)
    }

    fn sources(&self) -> Vec<&Source> {
        self.files().iter().map(|f| &f.source).collect()
    }

    fn write_skeleton(&self, data_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> crate::Result<()> {
        write_skeleton(self, data_sha256, sink);
        Ok(())
    }

    fn write_json(&self, w: &mut crate::output::JsonWriter<'_>, path: &Path, digest: &Digest) -> std::io::Result<()> {
        write_model_json(w, path, self, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("safetensors", "safetensors-skeleton-v1")
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
