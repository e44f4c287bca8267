//! What the `diff` sections of several formats share: two models of one
//! format compared leaf by leaf by path ([`LeafDiff`], the ONNX and PyTorch
//! sections), and two models of different formats compared tensor by
//! tensor ([`TensorsDiff`]: a PyTorch checkpoint or an ONNX model against a
//! safetensors model). Their labels differ by format, so the second compares
//! what the contracts hash alike: each tensor's name, dtype (the safetensors
//! table's names, which Parts VI and VII use), shape and elements digest.
//! Reaches safetensors only through its public face
//! (`safetensors::Model::tensors`).

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde_json::{Value as JsonValue, json};

use crate::format::{DiffSection, Section};
use crate::hash::Digest;
use crate::safetensors;

/// How a format's [`LeafDiff`] is shown.
pub trait LeafStyle {
    /// The `format` member of its JSON.
    const FORMAT: &'static str;
    /// Said when the labels differ but no compared leaf does.
    const NONE_DIFFER: &'static str;
    /// Whether a path and its values are escaped when shown as text (false:
    /// the format escaped them when it made its leaves).
    const ESCAPE: bool;
}

/// What differs between two models of one format, leaf by leaf by path.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafDiff<S> {
    /// The two labels.
    pub labels: (String, String),
    /// Paths only in the first.
    pub removed: Vec<String>,
    /// Paths only in the second.
    pub added: Vec<String>,
    /// Paths in both whose leaves differ, with both sides as text.
    pub changed: Vec<(String, String, String)>,
    style: PhantomData<S>,
}

impl<S: LeafStyle> LeafDiff<S> {
    /// Compares two models' leaves (path → value), `show` giving a changed
    /// value as text.
    pub fn new<V: PartialEq>(
        da: &Digest,
        db: &Digest,
        la: &BTreeMap<String, V>,
        lb: &BTreeMap<String, V>,
        show: impl Fn(&V) -> String,
    ) -> LeafDiff<S> {
        let removed = la.keys().filter(|k| !lb.contains_key(*k)).cloned().collect();
        let added = lb.keys().filter(|k| !la.contains_key(*k)).cloned().collect();
        let changed = la
            .iter()
            .filter_map(|(k, va)| {
                let vb = lb.get(k)?;
                (va != vb).then(|| (k.clone(), show(va), show(vb)))
            })
            .collect();
        LeafDiff { labels: (da.label(), db.label()), removed, added, changed, style: PhantomData }
    }

    /// Whether the labels are equal.
    pub fn labels_equal(&self) -> bool {
        self.labels.0 == self.labels.1
    }

    /// The text report.
    pub fn text(&self) -> String {
        if self.labels_equal() {
            return format!("same label {}\n", self.labels.0);
        }
        let esc = |p: &str| if S::ESCAPE { crate::text::escape_bytes(p.as_bytes()).to_string() } else { p.to_string() };
        let mut s = format!("labels differ: {} {}\n", self.labels.0, self.labels.1);
        for p in &self.removed {
            s.push_str(&format!("  - {}\n", esc(p)));
        }
        for p in &self.added {
            s.push_str(&format!("  + {}\n", esc(p)));
        }
        for (p, x, y) in &self.changed {
            s.push_str(&format!("  ~ {}: {} -> {}\n", esc(p), esc(x), esc(y)));
        }
        if self.removed.is_empty() && self.added.is_empty() && self.changed.is_empty() {
            s.push_str(&format!("  ({})\n", S::NONE_DIFFER));
        }
        s
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        json!({
            "format": S::FORMAT,
            "labels_equal": self.labels_equal(),
            "labels": [self.labels.0, self.labels.1],
            "removed": self.removed,
            "added": self.added,
            "changed": self.changed.iter().map(|(p, a, b)| json!({"path": p, "a": a, "b": b})).collect::<Vec<_>>(),
        })
    }
}

/// A tensor as two formats compare: its name, dtype, shape and the digest
/// of its elements (every contract hashes elements alike).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TensorRow {
    /// Its name (a PyTorch key path; an ONNX name not in UTF-8 escaped).
    pub name: String,
    /// Its dtype's name (`F32`).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// The SHA-256 of its elements, hex.
    pub sha256: String,
}

/// Two models of different formats, tensor by tensor: which tensors are
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
    /// Compares two models' rows, `mine` being the model asked and `side`
    /// which of the two it is; `formats` are (mine, theirs) in words.
    pub fn sided(
        side: crate::format::Side,
        formats: (&'static str, &'static str),
        mine: Vec<TensorRow>,
        theirs: Vec<TensorRow>,
    ) -> TensorsDiff {
        match side {
            crate::format::Side::First => TensorsDiff::new(formats, mine, theirs),
            crate::format::Side::Second => TensorsDiff::new((formats.1, formats.0), theirs, mine),
        }
    }

    /// Compares the first model's rows `a` with the second's `b`.
    pub fn new(formats: (&'static str, &'static str), a: Vec<TensorRow>, b: Vec<TensorRow>) -> TensorsDiff {
        let by_name = |v: &[TensorRow]| -> BTreeMap<String, TensorRow> {
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
        let row = |t: &TensorRow| json!({"name": t.name, "dtype": t.dtype, "shape": t.shape, "sha256": t.sha256});
        json!({
            "formats": [self.formats.0, self.formats.1],
            "labels_equal": false,
            "tensors_identical": self.tensors_identical(),
            "identical": self.identical,
            "changed": self.changed.iter().map(|(a, b)| json!({"a": row(a), "b": row(b)})).collect::<Vec<_>>(),
            "only_a": self.only_a.iter().map(|(t, o)| json!({"tensor": row(t), "same_elements_as": o})).collect::<Vec<_>>(),
            "only_b": self.only_b.iter().map(|(t, o)| json!({"tensor": row(t), "same_elements_as": o})).collect::<Vec<_>>(),
        })
    }
}

/// A safetensors model's tensors as rows.
pub fn safetensors_rows(m: &safetensors::Model, d: &Digest) -> Vec<TensorRow> {
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

impl Section for TensorsDiff {
    fn text(&self) -> String {
        TensorsDiff::text(self)
    }

    fn to_json(&self) -> JsonValue {
        TensorsDiff::to_json(self)
    }
}

impl DiffSection for TensorsDiff {
    fn labels_equal(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, dtype: &str, shape: &[u64], sha: &str) -> TensorRow {
        TensorRow { name: name.into(), dtype: dtype.into(), shape: shape.to_vec(), sha256: sha.into() }
    }

    #[test]
    fn tensors_are_compared_by_name_dtype_shape_and_elements() {
        let a = vec![row("w", "F32", &[2], "aa"), row("b", "F32", &[2], "bb"), row("tied", "F32", &[2], "aa")];
        let b = vec![row("w", "F32", &[2], "aa"), row("b", "F16", &[2], "bb"), row("new", "I8", &[1], "cc")];
        let d = TensorsDiff::new(("A", "B"), a.clone(), b.clone());
        assert_eq!(d.identical, 1);
        assert_eq!(d.changed, vec![(a[1].clone(), b[1].clone())]);
        assert_eq!(d.only_a, vec![(a[2].clone(), Some("w".to_string()))]);
        assert_eq!(d.only_b, vec![(b[2].clone(), None)]);
        assert!(!d.tensors_identical());
        // Asked from the second side, the same report.
        assert_eq!(TensorsDiff::sided(crate::format::Side::Second, ("B", "A"), b, a), d);
    }
}
