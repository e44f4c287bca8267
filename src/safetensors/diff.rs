//! The safetensors section of `gguf-digest diff`: two safetensors models
//! leaf by leaf. A tensor leaf is its name, dtype, shape, data digest and
//! the metadata group it carries; a metadata leaf is a key with its values.
//! Which file holds a tensor is layout, shown only beside a difference.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde_json::{Value as Json, json};

use crate::diff::DiffOptions;
use crate::hash::{Digest, Sha256Digest};
use crate::output::JSON_FORMAT;
use crate::render::{Shown, dims_text, path_text, short_digest};
use crate::safetensors::model::Model;
use crate::text::escape_bytes;

/// One side of a tensor difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSide {
    /// Its dtype.
    pub dtype: &'static str,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The SHA-256 of its data.
    pub sha256: Sha256Digest,
    /// The digest of the metadata group it carries.
    pub group: Sha256Digest,
    /// The file holding it.
    pub file: PathBuf,
}

/// A tensor that differs, was added or was removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDiff {
    /// Its name.
    pub name: String,
    /// In A.
    pub a: Option<TensorSide>,
    /// In B.
    pub b: Option<TensorSide>,
}

/// A metadata key whose values differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataDiff {
    /// The key.
    pub key: String,
    /// Its values in A (one per group holding it).
    pub a: BTreeSet<String>,
    /// Its values in B.
    pub b: BTreeSet<String>,
}

/// The differences between two safetensors models.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// (path, label, files) of A.
    pub a: (PathBuf, String, usize),
    /// (path, label, files) of B.
    pub b: (PathBuf, String, usize),
    /// Metadata keys that differ.
    pub metadata: Vec<MetadataDiff>,
    /// Tensors that differ.
    pub tensors: Vec<TensorDiff>,
    width: usize,
}

fn side_of(m: &Model, digest: &Digest) -> (PathBuf, String, usize) {
    let path = m.index().map(|i| i.path.clone()).or_else(|| m.files().first().map(|f| f.path().to_path_buf()));
    (path.unwrap_or_default(), digest.label(), m.files().len())
}

fn key_values(m: &Model) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for g in m.groups() {
        for (k, v) in &g.map {
            out.entry(k.clone()).or_default().insert(v.clone());
        }
    }
    out
}

/// Compares two labelled safetensors models leaf by leaf.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, opts: &DiffOptions) -> Diff {
    let (ka, kb) = (key_values(a), key_values(b));
    let keys: BTreeSet<&String> = ka.keys().chain(kb.keys()).collect();
    let metadata = keys
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (ka.get(k).cloned().unwrap_or_default(), kb.get(k).cloned().unwrap_or_default());
            (x != y).then(|| MetadataDiff { key: k.clone(), a: x, b: y })
        })
        .collect();
    let sides = |m: &Model, d: &Digest| -> BTreeMap<String, TensorSide> {
        m.tensors()
            .iter()
            .zip(d.tensor_sha256())
            .map(|(t, sha)| {
                let side = TensorSide {
                    dtype: t.entry.dtype.name,
                    shape: t.entry.shape.clone(),
                    sha256: *sha,
                    group: m.group_of(t).map(|g| g.digest).unwrap_or_default(),
                    file: m.files().get(t.file).map(|f| f.path().to_path_buf()).unwrap_or_default(),
                };
                (t.entry.name.clone(), side)
            })
            .collect()
    };
    let (ta, tb) = (sides(a, da), sides(b, db));
    let names: BTreeSet<&String> = ta.keys().chain(tb.keys()).collect();
    let same = |x: &TensorSide, y: &TensorSide| {
        (x.dtype, &x.shape, x.sha256, x.group) == (y.dtype, &y.shape, y.sha256, y.group)
    };
    let tensors = names
        .into_iter()
        .filter_map(|n| {
            let (x, y) = (ta.get(n), tb.get(n));
            let differs = match (x, y) {
                (Some(x), Some(y)) => !same(x, y),
                _ => true,
            };
            differs.then(|| TensorDiff { name: n.clone(), a: x.cloned(), b: y.cloned() })
        })
        .collect();
    Diff { a: side_of(a, da), b: side_of(b, db), metadata, tensors, width: opts.width }
}

impl Diff {
    /// True when both labels are equal (and so no leaf differs).
    pub fn labels_equal(&self) -> bool {
        self.a.1 == self.b.1
    }

    fn values(&self, v: &BTreeSet<String>) -> String {
        if v.is_empty() {
            return "(absent)".to_string();
        }
        let shown: Vec<String> = v
            .iter()
            .map(|s| {
                let mut cut = self.width.min(s.len());
                while !s.is_char_boundary(cut) {
                    cut = cut.saturating_sub(1);
                }
                Shown::Str { prefix: s.as_bytes().get(..cut).unwrap_or_default().to_vec(), len: s.len() as u64 }
                    .to_string()
            })
            .collect();
        shown.join(" | ")
    }

    /// The one-line summary printed last.
    pub fn summary(&self) -> String {
        if self.labels_equal() {
            return format!("labels equal: {}", self.a.1);
        }
        let (mut changed, mut added, mut removed) = (0usize, 0usize, 0usize);
        for t in &self.tensors {
            match (&t.a, &t.b) {
                (Some(_), Some(_)) => changed = changed.saturating_add(1),
                (None, Some(_)) => added = added.saturating_add(1),
                _ => removed = removed.saturating_add(1),
            }
        }
        let keys = self.metadata.len();
        let differ = if keys == 1 { "differs" } else { "differ" };
        format!(
            "labels differ; metadata keys: {keys} {differ}; tensors: {changed} changed, {added} added, {removed} removed"
        )
    }

    /// The text report: the two labels, one line per difference, the summary.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        for (name, (path, label, files)) in [("a", &self.a), ("b", &self.b)] {
            let files = if *files > 1 { format!(" ({files} files)") } else { String::new() };
            writeln!(out, "{name}  {label}  {}{files}", path_text(path))?;
        }
        for m in &self.metadata {
            let key = escape_bytes(m.key.as_bytes());
            writeln!(out, "~ metadata {key}: {} → {}", self.values(&m.a), self.values(&m.b))?;
        }
        for t in &self.tensors {
            let name = escape_bytes(t.name.as_bytes());
            match (&t.a, &t.b) {
                (Some(x), Some(y)) => {
                    let mut parts = Vec::new();
                    if x.dtype != y.dtype {
                        parts.push(format!("dtype {} → {}", x.dtype, y.dtype));
                    }
                    if x.shape != y.shape {
                        parts.push(format!("shape {} → {}", dims_text(&x.shape), dims_text(&y.shape)));
                    }
                    if x.sha256 != y.sha256 {
                        parts.push(format!("data sha256 {} → {}", short_digest(&x.sha256), short_digest(&y.sha256)));
                    }
                    if x.group != y.group {
                        parts.push("its file's metadata differs".to_string());
                    }
                    let files = format!("in {} and {}", path_text(&x.file), path_text(&y.file));
                    writeln!(out, "~ tensor {name}: {} ({files})", parts.join("; "))?;
                }
                (Some(s), None) | (None, Some(s)) => {
                    let sign = if t.a.is_some() { '-' } else { '+' };
                    writeln!(
                        out,
                        "{sign} tensor {name}: {} {}, sha256 {} (in {})",
                        s.dtype,
                        dims_text(&s.shape),
                        short_digest(&s.sha256),
                        path_text(&s.file)
                    )?;
                }
                (None, None) => {}
            }
        }
        writeln!(out, "{}", self.summary())
    }

    /// The JSON document (the same content as [`Diff::text`]).
    pub fn to_json(&self) -> Json {
        let side = |(path, label, files): &(PathBuf, String, usize)| json!({ "path": path_text(path), "label": label, "files": files });
        let tensor = |s: &Option<TensorSide>| {
            s.as_ref().map(|s| {
                json!({
                    "dtype": s.dtype,
                    "shape": s.shape,
                    "sha256": hex::encode(s.sha256),
                    "metadata_group": hex::encode(s.group),
                    "file": path_text(&s.file),
                })
            })
        };
        json!({
            "format": JSON_FORMAT,
            "model_format": "safetensors",
            "a": side(&self.a),
            "b": side(&self.b),
            "labels_equal": self.labels_equal(),
            "metadata": self.metadata.iter().map(|m| json!({"key": m.key, "a": m.a, "b": m.b})).collect::<Vec<_>>(),
            "tensors": self.tensors.iter().map(|t| json!({"name": t.name, "a": tensor(&t.a), "b": tensor(&t.b)})).collect::<Vec<_>>(),
            "summary": self.summary(),
        })
    }
}
