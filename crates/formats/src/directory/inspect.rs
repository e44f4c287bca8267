//! The directory section of `gguf-digest inspect`: every component with its
//! kind, name, digest, files and size, then each weights component's own
//! inspection (its format's section) below.

use std::fmt::{self, Write as _};

use serde_json::{Map, Value as JsonValue, json};

use crate::directory::model::{Component, Model, Part};
use crate::directory::skeleton::Kind;
use crate::error::Result;
use crate::format::Section;
use crate::hash::Digest;
use crate::output::{JSON_FORMAT, put_name};
use crate::render::{InspectOptions, count, path_text, short_digest, table};
use crate::text::escape_bytes;

/// A component as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentRow {
    /// `SFTN`, `GGUF` or `FILE`.
    pub kind: &'static str,
    /// `d/P` for weights, the relative path for a file (raw bytes).
    pub name: Vec<u8>,
    /// Its digest: a weights label, or a file's SHA-256.
    pub digest: [u8; 32],
    /// Its files' relative paths (an index first).
    pub files: Vec<Vec<u8>>,
    /// The bytes of the files it is hashed from.
    pub size: u64,
    /// Why a file that could have been weights by its name is a `FILE`.
    pub note: Option<String>,
}

/// A weights component's own inspection: its format's section.
#[derive(Debug)]
pub struct Weights {
    /// The component's kind (its format's, in the registry).
    pub kind: Kind,
    /// What its format's `inspect` shows of it.
    pub inspection: Box<dyn Section>,
}

/// Everything `inspect` shows about a directory.
#[derive(Debug)]
pub struct Inspection {
    /// The directory as given.
    pub path: String,
    /// The label.
    pub label: String,
    /// Every component, in skeleton order (kind, then name).
    pub components: Vec<ComponentRow>,
    /// Each weights component's inspection, by name, in the same order.
    pub weights: Vec<(Vec<u8>, Weights)>,
    /// What the model warns of (partial downloads in a snapshot's blobs).
    pub warnings: Vec<String>,
}

impl ComponentRow {
    /// The row of component `c`, whose own digest is `d`.
    pub(crate) fn of(c: &Component, d: &Digest) -> ComponentRow {
        ComponentRow {
            kind: c.kind.text(),
            name: c.name.clone(),
            digest: *d.label_bytes(),
            files: c.files.clone(),
            size: c.sources().iter().fold(0u64, |t, s| t.saturating_add(s.len())),
            note: c.note.clone(),
        }
    }
}

/// Inspects a directory whose jobs were hashed into `digest`.
pub fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> Result<Inspection> {
    let subs = model.sub_digests(digest.tensor_sha256())?;
    let mut components = Vec::new();
    let mut weights = Vec::new();
    for (c, d) in model.components().iter().zip(&subs) {
        components.push(ComponentRow::of(c, d));
        if let Part::Weights(m) = &c.part {
            weights.push((c.name.clone(), Weights { kind: c.kind, inspection: m.inspect(d, opts)? }));
        }
    }
    // Skeleton order: the order a diff of two labels walks.
    let order = |r: &ComponentRow| (r.kind, r.name.clone());
    components.sort_by_key(order);
    weights.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Inspection {
        path: path_text(model.path()),
        label: digest.label(),
        components,
        weights,
        warnings: model.warnings(),
    })
}

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        let bytes = self.components.iter().fold(0u64, |t, c| t.saturating_add(c.size));
        for (k, v) in [
            ("directory", self.path.clone()),
            ("format", "directory (directory-skeleton-v1)".to_string()),
            ("label", self.label.clone()),
            ("files", format!("{} in {}", count(bytes, "byte", "bytes"), count_components(&self.components))),
        ] {
            writeln!(out, "{k:<12}{v}")?;
        }
        for w in &self.warnings {
            writeln!(out, "warning     {w}")?;
        }
        writeln!(out, "\nComponents ({}):", self.components.len())?;
        let rows: Vec<Vec<String>> = self
            .components
            .iter()
            .map(|c| {
                let files = match c.files.as_slice() {
                    [one] if *one == c.name => String::new(),
                    [one] => escape_bytes(one),
                    many => count(many.len() as u64, "file", "files"),
                };
                vec![c.kind.to_string(), escape_bytes(&c.name), short_digest(&c.digest), c.size.to_string(), files]
            })
            .collect();
        table(out, &["kind", "name", "digest", "bytes", "files"], &[false, false, false, true, false], &rows)?;
        for c in &self.components {
            if let Some(note) = &c.note {
                writeln!(out, "note: {} {}: {note}", c.kind, escape_bytes(&c.name))?;
            }
        }
        for (name, w) in &self.weights {
            writeln!(out, "\n== {} {}: {} ==", w.kind.text(), escape_bytes(name), w.kind.words)?;
            out.push_str(&w.inspection.text());
        }
        Ok(())
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        json!({
            "format": JSON_FORMAT,
            "model_format": "directory",
            "spec": "directory-skeleton-v1",
            "path": self.path,
            "label": self.label,
            "warnings": self.warnings,
            "components": self.components.iter().map(component_json).collect::<Vec<_>>(),
            "weights": self.weights.iter().map(|(n, w)| {
                let mut o = Map::new();
                o.insert("kind".into(), json!(w.kind.text()));
                put_name(&mut o, "name", n);
                o.insert("inspection".into(), w.inspection.to_json());
                JsonValue::Object(o)
            }).collect::<Vec<_>>(),
        })
    }
}

/// A component in JSON: kind, name, digest, files and size (names that are
/// not UTF-8 with their bytes in hex beside, as every name in the output).
pub(crate) fn component_json(c: &ComponentRow) -> JsonValue {
    let mut o = Map::new();
    o.insert("kind".into(), json!(c.kind));
    put_name(&mut o, "name", &c.name);
    o.insert("digest".into(), json!(hex::encode(c.digest)));
    let files = c.files.iter().map(|f| {
        let mut file = Map::new();
        put_name(&mut file, "path", f);
        JsonValue::Object(file)
    });
    o.insert("files".into(), JsonValue::Array(files.collect()));
    o.insert("size".into(), json!(c.size));
    if let Some(note) = &c.note {
        o.insert("note".into(), json!(note));
    }
    JsonValue::Object(o)
}

/// `12 components (1 SFTN, 11 FILE)`: each kind present, in reverse
/// byte order (weights before `FILE`, whatever formats the registry holds).
fn count_components(rows: &[ComponentRow]) -> String {
    let mut by: std::collections::BTreeMap<std::cmp::Reverse<&str>, usize> = std::collections::BTreeMap::new();
    for r in rows {
        let n = by.entry(std::cmp::Reverse(r.kind)).or_insert(0);
        *n = n.saturating_add(1);
    }
    let parts: Vec<String> = by.iter().map(|(k, n)| format!("{n} {}", k.0)).collect();
    format!("{} ({})", count(rows.len() as u64, "component", "components"), parts.join(", "))
}
