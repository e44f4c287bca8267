//! `gguf-digest diff`: two models compared leaf by leaf. Labels both (their
//! tensors hashed together), then hands them to their format's section
//! (`gguf::diff`); every section shows leaves through `render`.
//!
//! The skeleton is a Merkle structure: a label differs exactly when a leaf
//! differs, so a section walks the two sorted leaf lists side by side, using
//! the digests labelling computed.

use std::path::Path;

use serde_json::Value as JsonValue;

use crate::directory::{self, Directory};
use crate::error::{Error, ErrorKind, Result};
use crate::format::Description;
use crate::formats::{AnyModel, Format};
use crate::gguf::{self, Gguf};
use crate::hash::Digest;
use crate::input::label_paths;
use crate::ollama::{self, Ollama};
use crate::pytorch::{self, Pytorch};
use crate::safetensors::{self, Safetensors};
use crate::schedule::BatchOptions;

pub use crate::render::DiffOptions;

/// The differences between two models, by format.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Diff {
    /// Two GGUF models.
    Gguf(gguf::diff::Diff),
    /// Two safetensors models.
    Safetensors(safetensors::diff::Diff),
    /// Two PyTorch checkpoints.
    Pytorch(pytorch::diff::Diff),
    /// Two Ollama models, or an Ollama model and a GGUF or safetensors model.
    Ollama(ollama::diff::Diff),
    /// Two directories, component by component.
    Directory(directory::diff::Diff),
    /// A PyTorch checkpoint and a safetensors model, tensor by tensor.
    Tensors(TensorsDiff),
}

/// A tensor as two formats compare: its name (key path), dtype, shape and
/// the digest of its elements (both contracts hash elements alike).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TensorRow {
    /// Its name.
    pub name: String,
    /// Its dtype's name (`F32`).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The SHA-256 of its elements, hex.
    pub sha256: String,
}

/// A PyTorch checkpoint against a safetensors model: which tensors are
/// identical, which differ, and which one side lacks (tied weights a
/// conversion dropped: their elements are another tensor's).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorsDiff {
    /// What each side is, in words.
    pub formats: (&'static str, &'static str),
    /// Tensors with one name, dtype, shape and elements on both sides.
    pub identical: usize,
    /// Names on both sides whose dtype, shape or elements differ.
    pub changed: Vec<(TensorRow, TensorRow)>,
    /// Only in the first, with the second's tensor of the same elements (if any).
    pub only_a: Vec<(TensorRow, Option<String>)>,
    /// Only in the second, with the first's tensor of the same elements (if any).
    pub only_b: Vec<(TensorRow, Option<String>)>,
}

impl TensorsDiff {
    fn new(formats: (&'static str, &'static str), a: Vec<TensorRow>, b: Vec<TensorRow>) -> TensorsDiff {
        let by_name = |v: &[TensorRow]| -> std::collections::BTreeMap<String, TensorRow> {
            v.iter().map(|t| (t.name.clone(), t.clone())).collect()
        };
        let (ma, mb) = (by_name(&a), by_name(&b));
        let same_elements = |t: &TensorRow, other: &[TensorRow]| {
            other
                .iter()
                .find(|o| o.sha256 == t.sha256 && o.dtype == t.dtype && o.shape == t.shape)
                .map(|o| o.name.clone())
        };
        let mut d = TensorsDiff { formats, identical: 0, changed: Vec::new(), only_a: Vec::new(), only_b: Vec::new() };
        for (n, ta) in &ma {
            match mb.get(n) {
                Some(tb) if tb == ta => d.identical = d.identical.saturating_add(1),
                Some(tb) => d.changed.push((ta.clone(), tb.clone())),
                None => d.only_a.push((ta.clone(), same_elements(ta, &b))),
            }
        }
        for (n, tb) in &mb {
            if !ma.contains_key(n) {
                d.only_b.push((tb.clone(), same_elements(tb, &a)));
            }
        }
        d
    }

    /// Whether every tensor of both sides is identical (the labels still
    /// differ: their magics and metadata do).
    pub fn tensors_identical(&self) -> bool {
        self.changed.is_empty() && self.only_a.is_empty() && self.only_b.is_empty()
    }

    /// The text report.
    pub fn text(&self) -> String {
        let esc = |s: &str| crate::text::escape_bytes(s.as_bytes());
        let mut s = format!(
            "{} against {}: labels differ by format; tensors compared by name, dtype, shape and elements\n",
            self.formats.0, self.formats.1
        );
        s.push_str(&format!("  {} tensors identical\n", self.identical));
        for (t, same) in &self.only_a {
            match same {
                Some(o) => s.push_str(&format!("  - {} (only in the first; its elements are the second's '{}': a tied weight the conversion dropped)\n", esc(&t.name), esc(o))),
                None => s.push_str(&format!("  - {} (only in the first)\n", esc(&t.name))),
            }
        }
        for (t, same) in &self.only_b {
            match same {
                Some(o) => s.push_str(&format!(
                    "  + {} (only in the second; its elements are the first's '{}')\n",
                    esc(&t.name),
                    esc(o)
                )),
                None => s.push_str(&format!("  + {} (only in the second)\n", esc(&t.name))),
            }
        }
        for (x, y) in &self.changed {
            s.push_str(&format!(
                "  ~ {}: {} {:?} {} -> {} {:?} {}\n",
                esc(&x.name),
                x.dtype,
                x.shape,
                x.sha256,
                y.dtype,
                y.shape,
                y.sha256
            ));
        }
        let dropped_only =
            self.changed.is_empty() && self.only_b.is_empty() && self.only_a.iter().all(|(_, o)| o.is_some());
        if self.tensors_identical() {
            s.push_str("  every tensor is identical\n");
        } else if dropped_only {
            s.push_str("  every other tensor is identical\n");
        }
        s
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        let row =
            |t: &TensorRow| serde_json::json!({"name": t.name, "dtype": t.dtype, "shape": t.shape, "sha256": t.sha256});
        serde_json::json!({
            "formats": [self.formats.0, self.formats.1],
            "labels_equal": false,
            "tensors_identical": self.tensors_identical(),
            "identical": self.identical,
            "changed": self.changed.iter().map(|(a, b)| serde_json::json!({"a": row(a), "b": row(b)})).collect::<Vec<_>>(),
            "only_a": self.only_a.iter().map(|(t, o)| serde_json::json!({"tensor": row(t), "same_elements_as": o})).collect::<Vec<_>>(),
            "only_b": self.only_b.iter().map(|(t, o)| serde_json::json!({"tensor": row(t), "same_elements_as": o})).collect::<Vec<_>>(),
        })
    }
}

/// A checkpoint's distinct tensors as rows (a tied tensor under its first key).
fn pytorch_rows(m: &pytorch::Model, d: &Digest) -> Vec<TensorRow> {
    let tree = m.tree();
    tree.tensors
        .iter()
        .zip(d.tensor_sha256())
        .filter_map(|(leaf, sha)| {
            let t = tree.tensor(leaf)?;
            Some(TensorRow {
                name: leaf.path.clone(),
                dtype: t.dtype.name.into(),
                shape: t.size.clone(),
                sha256: hex::encode(sha),
            })
        })
        .collect()
}

/// A safetensors model's tensors as rows.
fn safetensors_rows(m: &safetensors::Model, d: &Digest) -> Vec<TensorRow> {
    m.tensors()
        .iter()
        .zip(d.tensor_sha256())
        .map(|(t, sha)| TensorRow {
            name: t.entry.name.clone(),
            dtype: t.entry.dtype.name.into(),
            shape: t.entry.shape.clone(),
            sha256: hex::encode(sha),
        })
        .collect()
}

impl Diff {
    /// True when both labels are equal (and so no leaf differs).
    pub fn labels_equal(&self) -> bool {
        match self {
            Diff::Gguf(d) => d.labels_equal(),
            Diff::Safetensors(d) => d.labels_equal(),
            Diff::Pytorch(d) => d.labels_equal(),
            Diff::Ollama(d) => d.labels_equal(),
            Diff::Directory(d) => d.labels_equal(),
            Diff::Tensors(_) => false,
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        match self {
            Diff::Gguf(d) => d.text(),
            Diff::Safetensors(d) => d.text(),
            Diff::Pytorch(d) => d.text(),
            Diff::Ollama(d) => d.text(),
            Diff::Directory(d) => d.text(),
            Diff::Tensors(d) => d.text(),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        match self {
            Diff::Gguf(d) => d.to_json(),
            Diff::Safetensors(d) => d.to_json(),
            Diff::Pytorch(d) => d.to_json(),
            Diff::Ollama(d) => d.to_json(),
            Diff::Directory(d) => d.to_json(),
            Diff::Tensors(d) => d.to_json(),
        }
    }
}

/// Opens and labels both models (their tensors hashed together on `pool`)
/// and compares them.
pub fn diff_paths(
    a: &Path,
    b: &Path,
    open: &BatchOptions,
    pool: &rayon::ThreadPool,
    opts: &DiffOptions,
) -> Result<Diff> {
    let [ra, rb] = label_paths([a.to_path_buf(), b.to_path_buf()], open, pool);
    let (ma, da) = ra?;
    let (mb, db) = rb?;
    Ok(match (&ma, &mb) {
        (AnyModel::Gguf(a), AnyModel::Gguf(b)) => Diff::Gguf(Gguf::diff(a, &da, b, &db, opts)?),
        (AnyModel::Safetensors(a), AnyModel::Safetensors(b)) => {
            Diff::Safetensors(Safetensors::diff(a, &da, b, &db, opts)?)
        }
        (AnyModel::Pytorch(a), AnyModel::Pytorch(b)) => Diff::Pytorch(Pytorch::diff(a, &da, b, &db, opts)?),
        (AnyModel::Pytorch(x), AnyModel::Safetensors(y)) => Diff::Tensors(TensorsDiff::new(
            (Format::Pytorch.what(), Format::Safetensors.what()),
            pytorch_rows(x, &da),
            safetensors_rows(y, &db),
        )),
        (AnyModel::Safetensors(x), AnyModel::Pytorch(y)) => Diff::Tensors(TensorsDiff::new(
            (Format::Safetensors.what(), Format::Pytorch.what()),
            safetensors_rows(x, &da),
            pytorch_rows(y, &db),
        )),
        (AnyModel::Ollama(a), AnyModel::Ollama(b)) => Diff::Ollama(Ollama::diff(a, &da, b, &db, opts)?),
        (AnyModel::Directory(a), AnyModel::Directory(b)) => Diff::Directory(Directory::diff(a, &da, b, &db, opts)?),
        (AnyModel::Ollama(x), other) => match file_model(other, &db) {
            Some(f) => Diff::Ollama(ollama::diff::diff_with_file(x, &da, f, true, opts)?),
            None => return Err(different_formats(&ma, &mb)),
        },
        (other, AnyModel::Ollama(y)) => match file_model(other, &da) {
            Some(f) => Diff::Ollama(ollama::diff::diff_with_file(y, &db, f, false, opts)?),
            None => return Err(different_formats(&ma, &mb)),
        },
        _ => return Err(different_formats(&ma, &mb)),
    })
}

/// A GGUF or safetensors model, as an Ollama model's weights are compared with it.
fn file_model<'a>(m: &'a AnyModel, d: &'a Digest) -> Option<ollama::diff::FileModel<'a>> {
    match m {
        AnyModel::Gguf(f) => Some(ollama::diff::FileModel::Gguf(f, d)),
        AnyModel::Safetensors(f) => Some(ollama::diff::FileModel::Safetensors(f, d)),
        AnyModel::Pytorch(_) | AnyModel::Ollama(_) | AnyModel::Directory(_) => None,
    }
}

/// The error of a diff across formats that cannot be compared.
fn different_formats(a: &AnyModel, b: &AnyModel) -> Error {
    Error::new(ErrorKind::DifferentFormats { a: a.format().what(), b: b.format().what() })
}
