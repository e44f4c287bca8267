//! Safetensors: one file, a sharded checkpoint with or without its index,
//! or the files an index lists. `header` parses one file (pure: a function
//! of its first bytes); `index` reads an index; `model` joins files into a
//! logical model with its metadata groups; `skeleton` builds the canonical
//! skeleton (docs/SPEC.md, "Safetensors"). The core reaches it only through
//! [`Labelled`] and its [`FileFormat`], [`Safetensors`].

pub mod diff;
mod dir_rule;
mod dtype;
mod error;
mod header;
mod index;
pub mod inspect;
mod json;
mod model;
mod names;
pub mod partial;
mod skeleton;

pub use error::SafetensorsErrorKind;

use std::path::{Path, PathBuf};

use crate::facts::Facts;
use crate::format::{
    self, AnyModel, DiffSection, DirectoryKind, FileFormat, Labelled, OpenOptions, Section, Side, diff_same, file_size,
};
use crate::hash::{Digest, Job, Sha256Digest};
use crate::render::{DiffOptions, InspectOptions};
use crate::source::Source;

pub use dtype::{DTYPES, Dtype};
pub use header::{MAX_DEPTH, MAX_HEADER, SafetensorsFile, TensorEntry, parse};
pub(crate) use index::read_index_from;
pub use index::{DERIVED, Declared, Index, parse_index, read_index};
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
}

/// The safetensors format, as the registry lists it (its [`FileFormat`]).
#[derive(Debug, Clone, Copy)]
pub struct Safetensors;

impl FileFormat for Safetensors {
    fn what(&self) -> &'static str {
        "a safetensors model"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["safetensors"]
    }

    fn claims_bytes(&self, head: &[u8]) -> bool {
        sniff(head)
    }

    fn claims_path(&self, path: &Path) -> bool {
        is_index_name(path)
    }

    fn open(&self, source: Source, opts: OpenOptions) -> crate::Result<AnyModel> {
        Model::from_source(source, opts).map(AnyModel::new)
    }

    fn first_shard_of(&self, later: &Path) -> Option<PathBuf> {
        ShardName::parse(later).filter(|n| n.no > 1).map(|n| n.sibling(1))
    }

    fn approximate_bytes(&self, path: &Path) -> Option<u64> {
        let sum = |paths: &mut dyn Iterator<Item = PathBuf>| paths.fold(0u64, |t, p| t.saturating_add(file_size(&p)));
        if is_index_name(path) {
            let dir = path.parent().unwrap_or(Path::new(""));
            let files = read_index(path, crate::source::ReadMode::Pread).map(|i| i.files).unwrap_or_default();
            return Some(sum(&mut files.iter().filter_map(|f| plain_name_in(dir, f).ok())));
        }
        let name = ShardName::parse(path)?;
        let index = name.index_path();
        if index.is_file() {
            return self.approximate_bytes(&index);
        }
        Some(sum(&mut (1..=name.count).map(|no| name.sibling(no))))
    }

    fn partial(&self, source: Source, opts: &InspectOptions) -> Option<String> {
        partial::partial(&source, opts.width, opts.limit).map(|p| p.text())
    }

    fn component_kind(&self) -> Option<DirectoryKind> {
        Some(DirectoryKind { bytes: b"SFTN", words: "safetensors weights" })
    }

    fn directory_rule(&self) -> Option<&'static dyn crate::format::directory_rule::DirectoryRule> {
        Some(&dir_rule::Rule)
    }
}

impl format::Opened for Model {
    fn what(&self) -> &'static str {
        Safetensors.what()
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
        diff_same(self, mine, other, theirs, side, |a, da, b, db| Ok(diff::diff(a, da, b, db, opts)))
    }

    /// Every group's `__metadata__` (the first to name a key wins) and the
    /// tensors' dtypes.
    fn facts(&self, facts: &mut Facts) -> crate::Result<()> {
        for g in self.groups() {
            for (k, v) in &g.map {
                facts.metadata.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        for t in self.tensors() {
            facts.count_tensor_type(t.entry.dtype.name);
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
