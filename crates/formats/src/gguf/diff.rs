//! The GGUF section of `gguf-digest diff`: two GGUF models leaf by leaf.
//!
//! The skeleton is a Merkle structure: a label differs exactly when the
//! alignment, a KV leaf (key, type, canonical value) or a tensor leaf (name,
//! canonical dims, type, data digest) differs. So the diff walks the two
//! sorted leaf lists side by side, using the digests labelling computed;
//! only string prefixes and the array elements up to a first difference are
//! read again, to show them.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde_json::{Map, Value as JsonValue, json};

use crate::error::Result;
use crate::gguf::arrays::{ElementDifference, first_difference, show_value};
use crate::gguf::ggml_type::GgmlType;
use crate::gguf::json::value_json;
use crate::gguf::model::{Model, ModelKv, ModelTensor, shard_of};
use crate::gguf::value::Value;
use crate::hash::{Digest, Sha256Digest};
use crate::output::JSON_FORMAT;
use crate::render::DiffOptions;
use crate::render::{Shown, count, dims_text, path_text, short_digest};
use crate::text::escape_bytes;

/// One of the two models compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// The path given.
    pub path: PathBuf,
    /// How many files the model was read from.
    pub shards: usize,
    /// Its label.
    pub label: String,
    /// Its effective alignment.
    pub alignment: u64,
    /// KVs in its label.
    pub kv_count: usize,
    /// Its tensors.
    pub tensor_count: usize,
}

/// Whether a leaf was added, removed or changed from A to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// In both, different.
    Changed,
}

impl Change {
    /// `added`, `removed` or `changed`.
    pub fn name(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
        }
    }

    /// `+`, `-` or `~`: the first column of a text line.
    pub fn sign(self) -> char {
        match self {
            Change::Added => '+',
            Change::Removed => '-',
            Change::Changed => '~',
        }
    }
}

/// A KV value on one side.
#[derive(Debug, Clone, PartialEq)]
pub struct KvSide {
    /// The value as parsed (type, scalars, lengths, digests).
    pub value: Value,
    /// The value as shown: a string's prefix, an array's first elements.
    pub shown: Shown,
}

/// A KV that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct KvDiff {
    /// The key.
    pub key: Vec<u8>,
    /// The value in A, if A has the key.
    pub a: Option<KvSide>,
    /// The value in B, if B has the key.
    pub b: Option<KvSide>,
    /// For two arrays of one element type: where they first differ.
    pub first_difference: Option<ElementDifference>,
}

impl KvDiff {
    /// Added, removed or changed.
    pub fn change(&self) -> Change {
        change_of(self.a.is_some(), self.b.is_some())
    }
}

/// A tensor leaf on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSide {
    /// Canonical dims.
    pub dims: Vec<u64>,
    /// The ggml type.
    pub ggml_type: &'static GgmlType,
    /// Data bytes.
    pub nbytes: u64,
    /// SHA-256 of the data.
    pub sha256: Sha256Digest,
}

/// A tensor that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDiff {
    /// The name.
    pub name: Vec<u8>,
    /// The tensor in A, if A has it.
    pub a: Option<TensorSide>,
    /// The tensor in B, if B has it.
    pub b: Option<TensorSide>,
}

impl TensorDiff {
    /// Added, removed or changed.
    pub fn change(&self) -> Change {
        change_of(self.a.is_some(), self.b.is_some())
    }

    /// For a changed tensor, which of `data`, `dims` and `type` differ.
    pub fn changed_parts(&self) -> Vec<&'static str> {
        let (Some(a), Some(b)) = (&self.a, &self.b) else { return Vec::new() };
        let mut parts = Vec::new();
        if a.sha256 != b.sha256 {
            parts.push("data");
        }
        if a.dims != b.dims {
            parts.push("dims");
        }
        if a.ggml_type.id != b.ggml_type.id {
            parts.push("type");
        }
        parts
    }
}

fn change_of(a: bool, b: bool) -> Change {
    match (a, b) {
        (true, true) => Change::Changed,
        (false, _) => Change::Added,
        (true, false) => Change::Removed,
    }
}

/// The differences between two models.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The first model.
    pub a: Side,
    /// The second model.
    pub b: Side,
    /// The KVs that differ, by key.
    pub kvs: Vec<KvDiff>,
    /// The tensors that differ, by name.
    pub tensors: Vec<TensorDiff>,
    /// Removed and added tensors with the same dims, type and data:
    /// `(name in A, name in B)`.
    pub possibly_renamed: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Walks two sorted lists side by side, pairing equal keys.
fn merge<'x, T>(a: &'x [T], b: &'x [T], key: impl Fn(&T) -> &[u8]) -> Vec<(Option<&'x T>, Option<&'x T>)> {
    let (mut ia, mut ib) = (a.iter().peekable(), b.iter().peekable());
    let mut out = Vec::new();
    loop {
        let order = match (ia.peek(), ib.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(x), Some(y)) => key(x).cmp(key(y)),
        };
        out.push(match order {
            Ordering::Less => (ia.next(), None),
            Ordering::Greater => (None, ib.next()),
            Ordering::Equal => (ia.next(), ib.next()),
        });
    }
    out
}

fn side(model: &Model, digest: &Digest) -> Side {
    Side {
        path: model.shards().first().map(|s| s.path().to_path_buf()).unwrap_or_default(),
        shards: model.shards().len(),
        label: digest.label(),
        alignment: model.alignment(),
        kv_count: model.kvs().len(),
        tensor_count: model.tensors().len(),
    }
}

fn tensor_side(t: &ModelTensor, sha: &Sha256Digest) -> TensorSide {
    TensorSide {
        dims: t.info.shape().dims().to_vec(),
        ggml_type: t.info.ggml_type,
        nbytes: t.info.nbytes,
        sha256: *sha,
    }
}

/// Compares two labelled models leaf by leaf.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, opts: &DiffOptions) -> Result<Diff> {
    let kv_side = |model: &Model, m: &ModelKv| -> Result<KvSide> {
        let shown = show_value(shard_of(model, m.shard)?, &m.kv.value, opts.width, opts.items)?;
        Ok(KvSide { value: m.kv.value.clone(), shown })
    };
    let mut kvs = Vec::new();
    for pair in merge(a.kvs(), b.kvs(), |m| &m.kv.key) {
        match pair {
            (Some(x), Some(y)) => {
                let (vx, vy) = (&x.kv.value, &y.kv.value);
                if vx.value_type() == vy.value_type() && vx.canonical_bytes() == vy.canonical_bytes() {
                    continue;
                }
                let first_difference = match (vx, vy) {
                    (Value::Array(ax), Value::Array(ay)) => first_difference(
                        (shard_of(a, x.shard)?, ax),
                        (shard_of(b, y.shard)?, ay),
                        opts.width,
                        opts.items,
                    )?,
                    _ => None,
                };
                kvs.push(KvDiff {
                    key: x.kv.key.clone(),
                    a: Some(kv_side(a, x)?),
                    b: Some(kv_side(b, y)?),
                    first_difference,
                });
            }
            (x, y) => {
                let key = x.or(y).map(|m| m.kv.key.clone()).unwrap_or_default();
                let a = x.map(|m| kv_side(a, m)).transpose()?;
                let b = y.map(|m| kv_side(b, m)).transpose()?;
                kvs.push(KvDiff { key, a, b, first_difference: None });
            }
        }
    }

    // Tensors and their digests, in the same (sorted) order.
    let ta: Vec<(ModelTensor<'_>, &Sha256Digest)> = a.tensors().iter().zip(da.tensor_sha256()).collect();
    let tb: Vec<(ModelTensor<'_>, &Sha256Digest)> = b.tensors().iter().zip(db.tensor_sha256()).collect();
    let mut tensors = Vec::new();
    for pair in merge(&ta, &tb, |(t, _)| &t.info.name) {
        let name = pair.0.or(pair.1).map(|(t, _)| t.info.name.to_vec()).unwrap_or_default();
        let sa = pair.0.map(|&(t, sha)| tensor_side(&t, sha));
        let sb = pair.1.map(|&(t, sha)| tensor_side(&t, sha));
        if sa != sb {
            tensors.push(TensorDiff { name, a: sa, b: sb });
        }
    }

    // A removed and an added tensor with the same leaf apart from the name.
    let mut possibly_renamed = Vec::new();
    let mut taken = vec![false; tensors.len()];
    for removed in tensors.iter().filter(|t| t.change() == Change::Removed) {
        let found = tensors.iter().enumerate().find(|(i, added)| {
            added.change() == Change::Added && !taken.get(*i).copied().unwrap_or(true) && added.b == removed.a
        });
        if let Some((i, added)) = found {
            if let Some(t) = taken.get_mut(i) {
                *t = true;
            }
            possibly_renamed.push((removed.name.clone(), added.name.clone()));
        }
    }

    Ok(Diff { a: side(a, da), b: side(b, db), kvs, tensors, possibly_renamed })
}

/// Counts of added, removed and changed leaves.
fn counts(changes: impl Iterator<Item = Change>) -> [usize; 3] {
    let mut n = [0usize; 3];
    for c in changes {
        let i = match c {
            Change::Changed => 0,
            Change::Added => 1,
            Change::Removed => 2,
        };
        if let Some(slot) = n.get_mut(i) {
            *slot = (*slot).saturating_add(1);
        }
    }
    n
}

/// One KV value in a diff line: type, then the value (strings with length
/// and digest, shown only when whole; arrays with element type, count and
/// digest, and their first elements when `elements`).
fn kv_text(s: &KvSide, elements: bool) -> String {
    let ty = s.value.value_type().name();
    match (&s.value, &s.shown) {
        (Value::String(v), Shown::Str { prefix, len }) => {
            let sha = short_digest(&v.sha256);
            if (prefix.len() as u64) == *len {
                format!("{ty} '{}' ({}, sha256 {sha})", escape_bytes(prefix), count(*len, "byte", "bytes"))
            } else {
                format!("{ty} of {}, sha256 {sha}", count(*len, "byte", "bytes"))
            }
        }
        (Value::Array(v), shown) if elements => format!("{ty} {shown}, sha256 {}", short_digest(&v.sha256)),
        (Value::Array(v), _) => format!("{ty} {}[{}], sha256 {}", v.elem_type.name(), v.count, short_digest(&v.sha256)),
        (_, shown) => format!("{ty} {shown}"),
    }
}

fn tensor_text(t: &TensorSide) -> String {
    format!("{} {}, {} bytes, sha256 {}", dims_text(&t.dims), t.ggml_type.name, t.nbytes, short_digest(&t.sha256))
}

fn opt_shown(s: &Option<Shown>) -> String {
    s.as_ref().map_or_else(|| "(none)".to_string(), Shown::to_string)
}

impl Diff {
    /// True when both labels are equal (and so no leaf differs).
    pub fn labels_equal(&self) -> bool {
        self.a.label == self.b.label
    }

    /// The alignments `(A, B)` when they differ.
    pub fn alignment_change(&self) -> Option<(u64, u64)> {
        (self.a.alignment != self.b.alignment).then_some((self.a.alignment, self.b.alignment))
    }

    /// The one-line summary printed last.
    pub fn summary(&self) -> String {
        if self.labels_equal() {
            return format!("labels equal: {}", self.a.label);
        }
        let mut parts = Vec::new();
        let mut group = |what: &str, n: [usize; 3]| {
            let [changed, added, removed] = n;
            let mut p = Vec::new();
            for (k, word) in [(changed, "changed"), (added, "added"), (removed, "removed")] {
                if k > 0 {
                    p.push(format!("{k} {word}"));
                }
            }
            if !p.is_empty() {
                parts.push(format!("{what}: {}", p.join(", ")));
            }
        };
        group("KVs", counts(self.kvs.iter().map(KvDiff::change)));
        group("tensors", counts(self.tensors.iter().map(TensorDiff::change)));
        if let Some((x, y)) = self.alignment_change() {
            parts.push(format!("alignment: {x} → {y}"));
        }
        if parts.is_empty() { "labels differ".to_string() } else { format!("labels differ; {}", parts.join("; ")) }
    }

    /// The text report: the two labels, one line per difference, the summary.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        for (name, s) in [("a", &self.a), ("b", &self.b)] {
            let shards = if s.shards > 1 { format!(" ({} shards)", s.shards) } else { String::new() };
            writeln!(out, "{name}  {}  {}{shards}", s.label, path_text(&s.path))?;
        }
        if let Some((x, y)) = self.alignment_change() {
            writeln!(out, "~ alignment: {x} → {y}")?;
        }
        for k in &self.kvs {
            let key = escape_bytes(&k.key);
            let c = k.change();
            match (&k.a, &k.b) {
                (Some(x), Some(y)) => {
                    write!(out, "~ kv {key}: {} → {}", kv_text(x, false), kv_text(y, false))?;
                    if let Some(d) = &k.first_difference {
                        write!(
                            out,
                            "; first difference at element {}: {} → {}",
                            d.index,
                            opt_shown(&d.a),
                            opt_shown(&d.b)
                        )?;
                    }
                    writeln!(out)?;
                }
                (Some(s), None) | (None, Some(s)) => writeln!(out, "{} kv {key}: {}", c.sign(), kv_text(s, true))?,
                (None, None) => {}
            }
        }
        for t in &self.tensors {
            let name = escape_bytes(&t.name);
            match (&t.a, &t.b) {
                (Some(x), Some(y)) => {
                    let mut parts = Vec::new();
                    for part in t.changed_parts() {
                        parts.push(match part {
                            "data" => format!("data sha256 {} → {}", short_digest(&x.sha256), short_digest(&y.sha256)),
                            "dims" => format!("dims {} → {}", dims_text(&x.dims), dims_text(&y.dims)),
                            _ => format!("type {} → {}", x.ggml_type.name, y.ggml_type.name),
                        });
                    }
                    writeln!(out, "~ tensor {name}: {}", parts.join("; "))?;
                }
                (Some(s), None) | (None, Some(s)) => {
                    writeln!(out, "{} tensor {name}: {}", t.change().sign(), tensor_text(s))?;
                }
                (None, None) => {}
            }
        }
        for (from, to) in &self.possibly_renamed {
            writeln!(out, "  possibly renamed: tensor {} → {}", escape_bytes(from), escape_bytes(to))?;
        }
        writeln!(out, "{}", self.summary())
    }

    /// The JSON document (the same content as [`Diff::text`]).
    pub fn to_json(&self) -> JsonValue {
        let side_json = |s: &Side| {
            json!({
                "path": path_text(&s.path),
                "shards": s.shards,
                "label": s.label,
                "alignment": s.alignment,
                "kv_count": s.kv_count,
                "tensor_count": s.tensor_count,
            })
        };
        let kv_json = |s: &Option<KvSide>| match s {
            None => JsonValue::Null,
            Some(s) => {
                let mut o = Map::new();
                o.insert("type".into(), json!(s.value.value_type().name()));
                o.extend(value_json(&s.value));
                match &s.shown {
                    Shown::Str { prefix, len } if (prefix.len() as u64) == *len => {
                        crate::output::put_name(&mut o, "value", prefix)
                    }
                    Shown::Array { elements, .. } => {
                        o.insert("elements".into(), json!(elements.iter().map(Shown::to_json).collect::<Vec<_>>()));
                    }
                    _ => {}
                }
                JsonValue::Object(o)
            }
        };
        let opt_json = |s: &Option<Shown>| s.as_ref().map_or(JsonValue::Null, Shown::to_json);
        let kvs: Vec<JsonValue> = self
            .kvs
            .iter()
            .map(|k| {
                let mut o = Map::new();
                crate::output::put_name(&mut o, "key", &k.key);
                o.insert("change".into(), json!(k.change().name()));
                o.insert("a".into(), kv_json(&k.a));
                o.insert("b".into(), kv_json(&k.b));
                if let Some(d) = &k.first_difference {
                    o.insert(
                        "first_difference".into(),
                        json!({ "index": d.index, "a": opt_json(&d.a), "b": opt_json(&d.b) }),
                    );
                }
                JsonValue::Object(o)
            })
            .collect();
        let tensor_json = |t: &Option<TensorSide>| match t {
            None => JsonValue::Null,
            Some(t) => json!({
                "dims": t.dims,
                "type": t.ggml_type.name,
                "type_id": t.ggml_type.id,
                "nbytes": t.nbytes,
                "sha256": hex::encode(t.sha256),
            }),
        };
        let tensors: Vec<JsonValue> = self
            .tensors
            .iter()
            .map(|t| {
                let mut o = Map::new();
                crate::output::put_name(&mut o, "name", &t.name);
                o.insert("change".into(), json!(t.change().name()));
                o.insert("a".into(), tensor_json(&t.a));
                o.insert("b".into(), tensor_json(&t.b));
                if t.change() == Change::Changed {
                    o.insert("changed".into(), json!(t.changed_parts()));
                }
                JsonValue::Object(o)
            })
            .collect();
        let renamed: Vec<JsonValue> = self
            .possibly_renamed
            .iter()
            .map(|(from, to)| {
                let mut o = Map::new();
                crate::output::put_name(&mut o, "from", from);
                crate::output::put_name(&mut o, "to", to);
                JsonValue::Object(o)
            })
            .collect();
        json!({
            "format": JSON_FORMAT,
            "tool": concat!("gguf-digest ", env!("CARGO_PKG_VERSION")),
            "a": side_json(&self.a),
            "b": side_json(&self.b),
            "labels_equal": self.labels_equal(),
            "alignment": self.alignment_change().map(|(x, y)| json!({ "a": x, "b": y })),
            "kvs": kvs,
            "tensors": tensors,
            "possibly_renamed": renamed,
            "summary": self.summary(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_pairs_equal_keys() {
        let a: Vec<&[u8]> = vec![b"a", b"c", b"d"];
        let b: Vec<&[u8]> = vec![b"b", b"c"];
        let m = merge(&a, &b, |x| x);
        let shape: Vec<(bool, bool)> = m.iter().map(|(x, y)| (x.is_some(), y.is_some())).collect();
        assert_eq!(shape, vec![(true, false), (false, true), (true, true), (true, false)]);
    }
}
