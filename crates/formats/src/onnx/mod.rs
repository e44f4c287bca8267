//! ONNX models (docs/SPEC.md Part VI, docs/adr/0038, docs/adr/0040): a
//! `.onnx` file with the external data files it names. `schema` is the
//! table of `onnx-ml.proto`'s messages the contract reads; `wire` reads
//! protobuf records; `read` reads the whole file into a tree by the tables;
//! `tensor` checks a `TensorProto` and where its elements lie; `skeleton`
//! writes `enc`; `model` opens the file and its external files and makes
//! one hashing job per tensor held in a file. Pure but for `model`. The
//! core reaches it only through [`Labelled`] and its [`FileFormat`],
//! [`Onnx`], listed in `formats::FORMATS`.

pub mod diff;
mod dir_rule;
mod error;
pub mod inspect;
mod json;
mod model;
pub mod read;
pub mod schema;
pub mod skeleton;
pub mod tensor;
pub mod wire;

use std::path::Path;

use crate::facts::Facts;
use crate::format::{self, AnyModel, DiffSection, DirectoryKind, FileFormat, Labelled, OpenOptions, Section, Side};
use crate::hash::{Digest, Job, Sha256Digest};
use crate::render::{DiffOptions, InspectOptions};
use crate::source::Source;

pub use error::OnnxErrorKind;
pub use model::Model;
pub use skeleton::MAGIC;

/// The tags a `ModelProto`'s first field after `ir_version` may have (fields
/// 2 to 8, 14, 20, 25, 26 as their first tag byte).
const SECOND_TAGS: &[u8] = &[0x12, 0x1a, 0x22, 0x28, 0x32, 0x3a, 0x42, 0x72, 0xa2, 0xca, 0xd2];

/// Whether a file's first bytes look like a `ModelProto` as every writer
/// starts one: `ir_version` (field 1) of 3 to 13, then another field.
pub fn sniff(head: &[u8]) -> bool {
    matches!(head, [0x08, 3..=13, next, ..] if SECOND_TAGS.contains(next))
}

/// Reads `bytes` as a whole model file (pure: what fuzzing and tests call;
/// external data is named, not opened).
pub fn parse(bytes: &[u8]) -> crate::Result<read::Parsed> {
    read::parse(bytes)
}

impl Labelled for Model {
    fn job_count(&self) -> usize {
        Model::job_count(self)
    }

    fn job(&self, i: usize) -> Option<Job<'_>> {
        Model::job(self, i)
    }

    fn sources(&self) -> Vec<&Source> {
        let mut v = vec![self.source()];
        v.extend(self.externals());
        v
    }

    fn write_skeleton(&self, data_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> crate::Result<()> {
        Model::write_skeleton(self, data_sha256, sink);
        Ok(())
    }

    fn write_json(&self, w: &mut crate::output::JsonWriter<'_>, path: &Path, digest: &Digest) -> std::io::Result<()> {
        json::write_model_json(w, path, self, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("onnx", "onnx-skeleton-v1")
    }
}

/// The ONNX format, as the registry lists it (its [`FileFormat`]).
#[derive(Debug, Clone, Copy)]
pub struct Onnx;

impl FileFormat for Onnx {
    fn what(&self) -> &'static str {
        "an ONNX model"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["onnx"]
    }

    fn claims_bytes(&self, head: &[u8]) -> bool {
        sniff(head)
    }

    fn open(&self, source: Source, opts: OpenOptions) -> crate::Result<AnyModel> {
        Model::from_source(source, opts).map(AnyModel::new)
    }

    fn partial(&self, _source: Source, _opts: &InspectOptions) -> Option<String> {
        None
    }

    fn component_kind(&self) -> Option<DirectoryKind> {
        Some(DirectoryKind { bytes: b"ONNX", words: "ONNX model" })
    }

    fn directory_rule(&self) -> Option<&'static dyn crate::format::directory_rule::DirectoryRule> {
        Some(&dir_rule::Rule)
    }
}

impl format::Opened for Model {
    fn what(&self) -> &'static str {
        Onnx.what()
    }

    fn inspect(&self, digest: &Digest, opts: &InspectOptions) -> crate::Result<Box<dyn Section>> {
        Ok(Box::new(inspect::inspect(self, digest, opts)))
    }

    fn diff(
        &self,
        mine: &Digest,
        other: &AnyModel,
        theirs: &Digest,
        side: Side,
        opts: &DiffOptions,
    ) -> Option<crate::Result<Box<dyn DiffSection>>> {
        diff::against(self, mine, other, theirs, side, opts)
    }

    /// The initializers' dtypes.
    fn facts(&self, facts: &mut Facts) -> crate::Result<()> {
        for t in self.tensors() {
            facts.count_tensor_type(t.dtype.name);
        }
        Ok(())
    }

    fn shard_alone_names_model(&self) -> bool {
        false
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

// The sections answer through their own inherent methods.
crate::format::sections!(inspect::Inspection, diff::Diff);

#[cfg(test)]
mod model_bytes;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod face_tests {
    use super::*;

    #[test]
    fn sniffs_a_model_proto_start() {
        assert!(sniff(&[0x08, 0x08, 0x3a]));
        assert!(sniff(&[0x08, 0x03, 0x12]));
        assert!(!sniff(&[0x08, 0x02, 0x12]));
        assert!(!sniff(&[0x08, 0x0e, 0x12]));
        assert!(!sniff(&[0x08, 0x08, 0x09]));
        assert!(!sniff(b"GGUF"));
    }
}
