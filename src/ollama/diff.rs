//! The Ollama section of `gguf-digest diff`. Two Ollama models are compared
//! component by component: weights down to the GGUF key or tensor (or the
//! safetensors leaf), the config down to the member, other layers by digest.
//! An Ollama model and a GGUF file: the model's GGUF weights against the
//! file, leaf by leaf; the other components are named, not compared.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde_json::{Value as Json, json};

use crate::diff::DiffOptions;
use crate::error::Result;
use crate::gguf;
use crate::hash::{Digest, Sha256Digest};
use crate::json::Json as Config;
use crate::ollama::inspect::config_text;
use crate::ollama::model::{ComponentKind, Model};
use crate::output::JSON_FORMAT;
use crate::render::short_digest;
use crate::safetensors;
use crate::text::{escape_bytes, escape_name};

/// A component present on one side or both whose digest differs.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentDiff {
    /// Media type.
    pub media_type: String,
    /// Layer name, or empty.
    pub name: String,
    /// Its digest in A.
    pub a: Option<Sha256Digest>,
    /// Its digest in B.
    pub b: Option<Sha256Digest>,
}

/// A config member that differs: its dotted path and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberDiff {
    /// `a.b.c`.
    pub path: String,
    /// In A, as text.
    pub a: Option<String>,
    /// In B, as text.
    pub b: Option<String>,
}

/// The differences between an Ollama model and another model.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// (reference, label) of A and B.
    pub a: (String, String),
    /// B.
    pub b: (String, String),
    /// B is a GGUF file, compared with A's GGUF weights (or the other way).
    pub against_file: bool,
    /// Components that differ (Ollama against Ollama), or A's components the
    /// file does not have (against a file).
    pub components: Vec<ComponentDiff>,
    /// Config members that differ.
    pub config: Vec<MemberDiff>,
    /// GGUF weights compared leaf by leaf, by media type.
    pub weights: Vec<(String, gguf::diff::Diff)>,
    /// Tensor blobs compared leaf by leaf.
    pub tensors: Option<safetensors::diff::Diff>,
}

type Keyed = BTreeMap<(String, String, usize), (Sha256Digest, ComponentKind)>;

fn keyed(m: &Model, digests: &[Sha256Digest]) -> Keyed {
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut out = Keyed::new();
    for (c, d) in m.components().iter().zip(digests) {
        let n = seen.entry((c.media_type.clone(), c.name.clone())).or_insert(0);
        out.insert((c.media_type.clone(), c.name.clone(), *n), (*d, c.kind.clone()));
        *n = n.saturating_add(1);
    }
    out
}

/// Leaves of a config object as dotted paths.
fn flatten(prefix: &str, v: &Config, out: &mut BTreeMap<String, String>) {
    match v.as_object() {
        Some(members) if !members.is_empty() => {
            for (k, v) in members {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&path, v, out);
            }
        }
        _ => {
            out.insert(prefix.to_string(), config_text(v));
        }
    }
}

fn config_diff(a: &Config, b: &Config) -> Vec<MemberDiff> {
    let (mut fa, mut fb) = (BTreeMap::new(), BTreeMap::new());
    flatten("", a, &mut fa);
    flatten("", b, &mut fb);
    fa.remove("");
    fb.remove("");
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| MemberDiff { path: k.clone(), a: fa.get(k).cloned(), b: fb.get(k).cloned() })
        .collect()
}

/// Compares two labelled Ollama models component by component.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, opts: &DiffOptions) -> Result<Diff> {
    let (all_a, all_b) = (a.digests(da.tensor_sha256())?, b.digests(db.tensor_sha256())?);
    let (ca, cb) = (&all_a.components, &all_b.components);
    let (ka, kb) = (keyed(a, ca), keyed(b, cb));
    let (ga, ta) = (&all_a.ggufs, &all_a.tensors);
    let (gb, tb) = (&all_b.ggufs, &all_b.tensors);
    let mut components = Vec::new();
    let mut weights = Vec::new();
    let mut tensors = None;
    let mut config = Vec::new();
    let keys: std::collections::BTreeSet<&(String, String, usize)> = ka.keys().chain(kb.keys()).collect();
    for key in keys {
        let (x, y) = (ka.get(key), kb.get(key));
        if x.map(|v| v.0) == y.map(|v| v.0) {
            continue;
        }
        components.push(ComponentDiff {
            media_type: key.0.clone(),
            name: key.1.clone(),
            a: x.map(|v| v.0),
            b: y.map(|v| v.0),
        });
        match (x.map(|v| &v.1), y.map(|v| &v.1)) {
            (Some(ComponentKind::Gguf(i)), Some(ComponentKind::Gguf(j))) => {
                if let (Some(ma), Some(mb), Some(dx), Some(dy)) = (a.gguf(*i), b.gguf(*j), ga.get(*i), gb.get(*j)) {
                    weights.push((key.0.clone(), gguf::diff::diff(ma, dx, mb, dy, opts)?));
                }
            }
            (Some(ComponentKind::Tensors), Some(ComponentKind::Tensors)) => {
                if let (Some(sa), Some(sb), Some(dx), Some(dy)) = (a.tensors(), b.tensors(), &ta, &tb) {
                    tensors = Some(safetensors::diff::diff(sa, dx, sb, dy, opts));
                }
            }
            (Some(ComponentKind::Config), Some(ComponentKind::Config)) => {
                config = config_diff(a.config_content(), b.config_content());
            }
            _ => {}
        }
    }
    Ok(Diff {
        a: (a.reference().to_string(), da.label()),
        b: (b.reference().to_string(), db.label()),
        against_file: false,
        components,
        config,
        weights,
        tensors,
    })
}

/// Compares an Ollama model's GGUF weights (`application/vnd.ollama.image.model`)
/// with a GGUF file; `ollama_first` says which side the model is on.
pub fn diff_with_file(
    model: &Model,
    dm: &Digest,
    file: &gguf::Model,
    df: &Digest,
    ollama_first: bool,
    opts: &DiffOptions,
) -> Result<Diff> {
    let all = model.digests(dm.tensor_sha256())?;
    let (digests, ggufs) = (&all.components, &all.ggufs);
    let main = model
        .components()
        .iter()
        .find(|c| c.media_type == "application/vnd.ollama.image.model" && matches!(c.kind, ComponentKind::Gguf(_)));
    let mut weights = Vec::new();
    if let Some(ComponentKind::Gguf(i)) = main.map(|c| &c.kind) {
        if let (Some(m), Some(d)) = (model.gguf(*i), ggufs.get(*i)) {
            let w = if ollama_first {
                gguf::diff::diff(m, d, file, df, opts)?
            } else {
                gguf::diff::diff(file, df, m, d, opts)?
            };
            weights.push(("application/vnd.ollama.image.model".to_string(), w));
        }
    }
    let others = model
        .components()
        .iter()
        .zip(digests)
        .filter(|(c, _)| main.is_none_or(|m| !std::ptr::eq(m, *c)))
        .map(|(c, d)| ComponentDiff {
            media_type: c.media_type.clone(),
            name: c.name.clone(),
            a: ollama_first.then_some(*d),
            b: (!ollama_first).then_some(*d),
        })
        .collect();
    let side_m = (model.reference().to_string(), dm.label());
    let side_f = (file.shards().first().map(|s| s.path().display().to_string()).unwrap_or_default(), df.label());
    let (a, b) = if ollama_first { (side_m, side_f) } else { (side_f, side_m) };
    Ok(Diff { a, b, against_file: true, components: others, config: Vec::new(), weights, tensors: None })
}

impl Diff {
    /// Ollama against Ollama: the labels are equal. Against a file: the
    /// model's GGUF weights are the file (its other components are not
    /// compared: a file has none).
    pub fn labels_equal(&self) -> bool {
        if self.against_file {
            return self.weights.first().is_some_and(|(_, w)| w.labels_equal());
        }
        self.a.1 == self.b.1
    }

    /// The text report.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        writeln!(out, "a  {}  {}", self.a.1, escape_bytes(self.a.0.as_bytes()))?;
        writeln!(out, "b  {}  {}", self.b.1, escape_bytes(self.b.0.as_bytes()))?;
        let digest = |d: &Option<Sha256Digest>| d.as_ref().map_or("(absent)".to_string(), short_digest);
        if self.against_file {
            match self.weights.first() {
                None => writeln!(out, "the Ollama model has no GGUF model weights to compare with the file")?,
                Some((_, w)) if w.labels_equal() => {
                    writeln!(out, "= weights: the model's GGUF weights are the file's (label {})", w.a.label)?;
                }
                Some((_, w)) => {
                    writeln!(out, "~ weights: the model's GGUF weights differ from the file:")?;
                    for line in w.text().lines().skip(2) {
                        writeln!(out, "    {line}")?;
                    }
                }
            }
            if !self.components.is_empty() {
                let names: Vec<String> = self
                    .components
                    .iter()
                    .map(|c| {
                        let kind = c
                            .media_type
                            .strip_prefix("application/vnd.ollama.image.")
                            .unwrap_or(if c.media_type.contains("container.image") { "config" } else { &c.media_type });
                        let kind = escape_name(kind.as_bytes());
                        if c.name.is_empty() { kind } else { format!("{kind} '{}'", escape_bytes(c.name.as_bytes())) }
                    })
                    .collect();
                writeln!(out, "  not compared (the file has none): {}", names.join(", "))?;
            }
            let verdict = if self.labels_equal() { "weights identical" } else { "weights differ" };
            return writeln!(out, "{verdict}");
        }
        for c in &self.components {
            let media_type = escape_name(c.media_type.as_bytes());
            let what = if c.name.is_empty() {
                media_type
            } else {
                format!("{media_type} '{}'", escape_bytes(c.name.as_bytes()))
            };
            let sign = match (c.a, c.b) {
                (Some(_), Some(_)) => '~',
                (None, _) => '+',
                (_, None) => '-',
            };
            writeln!(out, "{sign} component {what}: {} → {}", digest(&c.a), digest(&c.b))?;
        }
        for m in &self.config {
            let v = |s: &Option<String>| s.clone().unwrap_or_else(|| "(absent)".into());
            writeln!(out, "    ~ config {}: {} → {}", escape_bytes(m.path.as_bytes()), v(&m.a), v(&m.b))?;
        }
        for (media, w) in &self.weights {
            writeln!(out, "    in {media}:")?;
            for line in w.text().lines().skip(2) {
                writeln!(out, "      {line}")?;
            }
        }
        if let Some(t) = &self.tensors {
            writeln!(out, "    in application/vnd.ollama.image.tensor:")?;
            for line in t.text().lines().skip(2) {
                writeln!(out, "      {line}")?;
            }
        }
        if self.labels_equal() {
            writeln!(out, "labels equal: {}", self.a.1)
        } else {
            let only_text = self.weights.iter().all(|(_, w)| w.labels_equal()) && self.tensors.is_none();
            let note = if only_text && !self.components.is_empty() { " (weights identical)" } else { "" };
            let n = self.components.len();
            let differ = if n == 1 { "differs" } else { "differ" };
            writeln!(out, "labels differ; components: {n} {differ}{note}")
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> Json {
        let d = |x: &Option<Sha256Digest>| x.map(hex::encode);
        json!({
            "format": JSON_FORMAT,
            "model_format": "ollama",
            "a": {"ref": self.a.0, "label": self.a.1},
            "b": {"ref": self.b.0, "label": self.b.1},
            "against_file": self.against_file,
            "labels_equal": self.labels_equal(),
            "components": self.components.iter().map(|c| json!({
                "media_type": c.media_type, "name": c.name, "a": d(&c.a), "b": d(&c.b),
            })).collect::<Vec<_>>(),
            "config": self.config.iter().map(|m| json!({"member": m.path, "a": m.a, "b": m.b})).collect::<Vec<_>>(),
            "weights": self.weights.iter().map(|(m, w)| json!({"media_type": m, "diff": w.to_json()})).collect::<Vec<_>>(),
            "tensors": self.tensors.as_ref().map(safetensors::diff::Diff::to_json),
        })
    }
}
