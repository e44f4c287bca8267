//! The PyTorch section of `diff`: two checkpoints compared leaf by leaf,
//! by key path.

use std::collections::BTreeMap;

use serde_json::{Value as JsonValue, json};

use super::model::Model;
use super::tree::LeafValue;
use crate::hash::Digest;
use crate::render::DiffOptions;

/// What differs between two checkpoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The two labels.
    pub labels: (String, String),
    /// Key paths only in the first.
    pub removed: Vec<String>,
    /// Key paths only in the second.
    pub added: Vec<String>,
    /// Key paths in both whose leaves differ, with both sides as text.
    pub changed: Vec<(String, String, String)>,
}

fn shown(v: &LeafValue) -> String {
    match v {
        LeafValue::Tensor { dtype, shape, sha256 } => format!("{dtype} {shape:?} sha256 {}", hex::encode(sha256)),
        LeafValue::Value { kind, text } => format!("{kind} {text}"),
    }
}

/// Compares two labelled checkpoints leaf by leaf.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, _opts: &DiffOptions) -> Diff {
    let la: BTreeMap<String, LeafValue> = a.tree().leaves(da.tensor_sha256()).into_iter().collect();
    let lb: BTreeMap<String, LeafValue> = b.tree().leaves(db.tensor_sha256()).into_iter().collect();
    let removed = la.keys().filter(|k| !lb.contains_key(*k)).cloned().collect();
    let added = lb.keys().filter(|k| !la.contains_key(*k)).cloned().collect();
    let changed = la
        .iter()
        .filter_map(|(k, va)| {
            let vb = lb.get(k)?;
            (va != vb).then(|| (k.clone(), shown(va), shown(vb)))
        })
        .collect();
    Diff { labels: (da.label(), db.label()), removed, added, changed }
}

impl Diff {
    /// Whether the labels are equal.
    pub fn labels_equal(&self) -> bool {
        self.labels.0 == self.labels.1
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if self.labels_equal() {
            s.push_str(&format!("same label {}\n", self.labels.0));
            return s;
        }
        s.push_str(&format!("labels differ: {} {}\n", self.labels.0, self.labels.1));
        let esc = |p: &str| crate::text::escape_bytes(p.as_bytes());
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
            s.push_str("  (every leaf is the same: a mapping's attributes or a set differ)\n");
        }
        s
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        json!({
            "format": "pytorch",
            "labels_equal": self.labels_equal(),
            "labels": [self.labels.0, self.labels.1],
            "removed": self.removed,
            "added": self.added,
            "changed": self.changed.iter().map(|(p, a, b)| json!({"path": p, "a": a, "b": b})).collect::<Vec<_>>(),
        })
    }
}
