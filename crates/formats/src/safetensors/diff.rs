//! The safetensors section of `gguf-digest diff`: two safetensors models
//! leaf by leaf. A tensor leaf is its name, dtype, shape, data digest and
//! the metadata group it carries; a metadata leaf is a key with its values.
//! Which file holds a tensor is layout, shown only beside a difference.
//!
//! Every tensor carries the digest of its file's metadata group (SPEC S3),
//! so a change of metadata alone changes every tensor leaf of that group.
//! A group that changed as a whole (the tensors carrying it in A are the
//! ones carrying the new group in B) is said once, as the group, with how
//! many tensors carry it and whether their data changed; only a tensor
//! that changed in itself, or moved to a file of other metadata, is listed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde_json::{Value as JsonValue, json};

use crate::hash::{Digest, Sha256Digest};
use crate::output::JSON_FORMAT;
use crate::render::DiffOptions;
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

/// A metadata group that changed as a whole: the tensors (of both models)
/// that carry `a` in A are exactly those that carry `b` in B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDiff {
    /// The group's digest in A.
    pub a: Sha256Digest,
    /// Its digest in B.
    pub b: Sha256Digest,
    /// How many tensors carry it.
    pub tensors: usize,
    /// Whether all of them carry it: the whole model's metadata changed.
    pub all: bool,
    /// Whether every one of them has the same dtype, shape and data in both.
    pub data_unchanged: bool,
    /// The files holding them in A.
    pub files_a: BTreeSet<PathBuf>,
    /// The files holding them in B.
    pub files_b: BTreeSet<PathBuf>,
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
    /// Metadata groups that changed as a whole.
    pub groups: Vec<GroupDiff>,
    /// Tensors that differ in themselves (dtype, shape, data), are added or
    /// removed, or moved to a group other than their group's successor.
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
    let same_data = |x: &TensorSide, y: &TensorSide| (x.dtype, &x.shape, x.sha256) == (y.dtype, &y.shape, y.sha256);
    let both: Vec<(&TensorSide, &TensorSide)> = ta.iter().filter_map(|(n, x)| Some((x, tb.get(n)?))).collect();
    let groups = whole_groups(&both, same_data);
    let whole = |x: &TensorSide, y: &TensorSide| groups.iter().any(|g| (g.a, g.b) == (x.group, y.group));
    let names: BTreeSet<&String> = ta.keys().chain(tb.keys()).collect();
    let tensors = names
        .into_iter()
        .filter_map(|n| {
            let (x, y) = (ta.get(n), tb.get(n));
            let differs = match (x, y) {
                (Some(x), Some(y)) => !same_data(x, y) || (x.group != y.group && !whole(x, y)),
                _ => true,
            };
            differs.then(|| TensorDiff { name: n.clone(), a: x.cloned(), b: y.cloned() })
        })
        .collect();
    Diff { a: side_of(a, da), b: side_of(b, db), metadata, groups, tensors, width: opts.width }
}

/// The metadata groups that changed as a whole, from the tensors in both
/// models (A's side, B's side): each pair of groups (`ga` in A, `gb` in B,
/// `ga ≠ gb`) whose tensors are all the tensors carrying `ga` in A and all
/// those carrying `gb` in B, in order of the digests.
fn whole_groups(
    both: &[(&TensorSide, &TensorSide)],
    same_data: impl Fn(&TensorSide, &TensorSide) -> bool,
) -> Vec<GroupDiff> {
    let mut carried: [BTreeMap<Sha256Digest, usize>; 2] = Default::default();
    let mut pairs: BTreeMap<(Sha256Digest, Sha256Digest), GroupDiff> = BTreeMap::new();
    for (x, y) in both {
        for (counts, g) in carried.iter_mut().zip([x.group, y.group]) {
            let n = counts.entry(g).or_default();
            *n = n.saturating_add(1);
        }
        if x.group == y.group {
            continue;
        }
        let pair = pairs.entry((x.group, y.group)).or_insert_with(|| GroupDiff {
            a: x.group,
            b: y.group,
            tensors: 0,
            all: false,
            data_unchanged: true,
            files_a: BTreeSet::new(),
            files_b: BTreeSet::new(),
        });
        pair.tensors = pair.tensors.saturating_add(1);
        pair.data_unchanged &= same_data(x, y);
        pair.files_a.insert(x.file.clone());
        pair.files_b.insert(y.file.clone());
    }
    let [in_a, in_b] = carried;
    pairs
        .into_values()
        .filter(|g| in_a.get(&g.a) == Some(&g.tensors) && in_b.get(&g.b) == Some(&g.tensors))
        .map(|g| GroupDiff { all: g.tensors == both.len(), ..g })
        .collect()
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
        let carried = self.groups.iter().fold(0usize, |n, g| n.saturating_add(g.tensors));
        let carried = if carried > 0 { format!(" ({carried} tensors)") } else { String::new() };
        let keys = self.metadata.len();
        let differ = if keys == 1 { "differs" } else { "differ" };
        format!(
            "labels differ; metadata keys: {keys} {differ}; metadata groups: {} changed{carried}; tensors: {changed} \
             changed, {added} added, {removed} removed",
            self.groups.len()
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
        for g in &self.groups {
            let count = match (g.all, g.tensors) {
                (_, 1) => "1 tensor".to_string(),
                (true, n) => format!("all {n} tensors"),
                (false, n) => format!("{n} tensors"),
            };
            let files = match (only(&g.files_a), only(&g.files_b)) {
                (Some(x), Some(y)) => format!("in {} and {}", path_text(x), path_text(y)),
                _ => format!("in {} and {} files", g.files_a.len(), g.files_b.len()),
            };
            let data = if g.data_unchanged { ", whose data, dtypes and shapes are unchanged" } else { "" };
            let (a, b) = (short_digest(&g.a), short_digest(&g.b));
            writeln!(out, "~ metadata group {a} → {b}: carried by {count} ({files}){data}")?;
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
                    let whole = self.groups.iter().any(|g| (g.a, g.b) == (x.group, y.group));
                    if x.group != y.group && !whole {
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
    pub fn to_json(&self) -> JsonValue {
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
            "metadata_groups": self.groups.iter().map(|g| json!({
                "a": hex::encode(g.a),
                "b": hex::encode(g.b),
                "tensors": g.tensors,
                "data_unchanged": g.data_unchanged,
                "files_a": g.files_a.iter().map(|f| path_text(f)).collect::<Vec<_>>(),
                "files_b": g.files_b.iter().map(|f| path_text(f)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "tensors": self.tensors.iter().map(|t| json!({"name": t.name, "a": tensor(&t.a), "b": tensor(&t.b)})).collect::<Vec<_>>(),
            "summary": self.summary(),
        })
    }
}

/// The one element of a set of one.
fn only(set: &BTreeSet<PathBuf>) -> Option<&PathBuf> {
    let mut it = set.iter();
    match (it.next(), it.next()) {
        (Some(x), None) => Some(x),
        _ => None,
    }
}
