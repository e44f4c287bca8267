//! A PyTorch checkpoint against a safetensors model, tensor by tensor:
//! their labels differ by format, so `diff` compares what both contracts
//! hash alike (each tensor's name, dtype, shape and elements digest), and
//! names the tensors one side lacks whose elements are the other's (tied
//! weights a conversion dropped). Uses safetensors only through its public
//! face (`safetensors::Model::tensors`), as Ollama uses the formats it holds.

use serde_json::Value as JsonValue;

use crate::format::{DiffSection, Section};
use crate::hash::Digest;
use crate::pytorch::Model;
use crate::safetensors;

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
    pub(crate) fn new(formats: (&'static str, &'static str), a: Vec<TensorRow>, b: Vec<TensorRow>) -> TensorsDiff {
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
pub(crate) fn pytorch_rows(m: &Model, d: &Digest) -> Vec<TensorRow> {
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
pub(crate) fn safetensors_rows(m: &safetensors::Model, d: &Digest) -> Vec<TensorRow> {
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
