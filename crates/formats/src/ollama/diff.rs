//! The Ollama section of `gguf-digest diff`. Two Ollama models are compared
//! component by component: weights down to the GGUF key or tensor (or the
//! safetensors leaf), the config down to the member, other layers by digest.
//! An Ollama model and a GGUF file: the model's GGUF weights against the
//! file, leaf by leaf; the other components are named, not compared.

use crate::directory::DirectoryErrorKind;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde_json::{Value as JsonValue, json};

use crate::error::Result;
use crate::gguf;
use crate::hash::{Digest, Sha256Digest};
use crate::json::Json as Config;
use crate::ollama::inspect::config_text;
use crate::ollama::model::{ComponentKind, Model};
use crate::ollama::served;
use crate::output::JSON_FORMAT;
use crate::render::DiffOptions;
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
    /// One side is a model file (GGUF or safetensors), compared with the
    /// weights Ollama serves for the other.
    pub against_file: Option<served::Against>,
    /// Components that differ (Ollama against Ollama), or the model's
    /// components that are not weights, which a file cannot have (against a
    /// file).
    pub components: Vec<ComponentDiff>,
    /// Config members that differ.
    pub config: Vec<MemberDiff>,
    /// GGUF weights compared leaf by leaf, by media type.
    pub weights: Vec<(String, gguf::diff::Diff)>,
    /// Tensor blobs compared leaf by leaf.
    pub tensors: Option<safetensors::diff::Diff>,
    /// Against a file: the model's weights layers the file does not account for.
    pub unaccounted: Vec<Unaccounted>,
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
        against_file: None,
        components,
        config,
        weights,
        tensors,
        unaccounted: Vec::new(),
    })
}

/// The model file an Ollama model is compared with, labelled.
#[derive(Debug, Clone, Copy)]
pub enum FileModel<'a> {
    /// A GGUF file: compared with the last `model` layer, the one Ollama serves.
    Gguf(&'a gguf::Model, &'a Digest),
    /// A safetensors model: compared with the tensor blobs.
    Safetensors(&'a safetensors::Model, &'a Digest),
}

/// A weights layer of the model that the file does not account for: an
/// adapter, a projector, a draft, an earlier `model` layer, or weights of
/// the other kind (docs/adr/0019).
#[derive(Debug, Clone, PartialEq)]
pub struct Unaccounted {
    /// Media type.
    pub media_type: String,
    /// Layer name, or empty.
    pub name: String,
    /// Its first manifest layer.
    pub layer: usize,
    /// Its content digest.
    pub digest: Sha256Digest,
    /// Why it matters, in words.
    pub why: &'static str,
}

fn why_unaccounted(media_type: &str, against: served::Against) -> &'static str {
    match (served::kind_word(media_type), against) {
        ("adapter", _) => "Ollama applies it to the weights it serves",
        ("projector", _) => "Ollama loads it beside the weights it serves",
        ("draft", _) => "Ollama loads it as the draft model",
        ("model", served::Against::Gguf) => "an earlier model layer: Ollama serves the last one",
        ("model", served::Against::Safetensors) => "GGUF weights beside the tensor blobs",
        _ => "tensor blobs beside the GGUF weights",
    }
}

/// Compares the weights Ollama serves for a model (as its `GetModel` picks
/// them: the last `model` layer, or the tensor blobs) with a GGUF or
/// safetensors model; `ollama_first` says which side the Ollama model is
/// on. Every other weights layer is a difference the file does not account
/// for.
pub fn diff_with_file(
    model: &Model,
    dm: &Digest,
    file: FileModel<'_>,
    ollama_first: bool,
    opts: &DiffOptions,
) -> Result<Diff> {
    let all = model.digests(dm.tensor_sha256())?;
    let against = match file {
        FileModel::Gguf(..) => served::Against::Gguf,
        FileModel::Safetensors(..) => served::Against::Safetensors,
    };
    let picked = served::served(model.components(), against);
    let main = picked.main.and_then(|i| model.components().get(i));
    let mut weights = Vec::new();
    let mut tensors = None;
    match (file, main.map(|c| &c.kind)) {
        (FileModel::Gguf(f, df), Some(ComponentKind::Gguf(i))) => {
            if let (Some(m), Some(d)) = (model.gguf(*i), all.ggufs.get(*i)) {
                let w = if ollama_first {
                    gguf::diff::diff(m, d, f, df, opts)?
                } else {
                    gguf::diff::diff(f, df, m, d, opts)?
                };
                weights.push((served::MODEL_MEDIA_TYPE.to_string(), w));
            }
        }
        (FileModel::Safetensors(f, df), Some(ComponentKind::Tensors)) => {
            if let (Some(m), Some(d)) = (model.tensors(), &all.tensors) {
                tensors = Some(if ollama_first {
                    safetensors::diff::diff(m, d, f, df, opts)
                } else {
                    safetensors::diff::diff(f, df, m, d, opts)
                });
            }
        }
        _ => {}
    }
    let component = |i: &usize| model.components().get(*i).zip(all.components.get(*i));
    let unaccounted = picked
        .extra
        .iter()
        .filter_map(component)
        .map(|(c, d)| Unaccounted {
            media_type: c.media_type.clone(),
            name: c.name.clone(),
            layer: c.layers.first().copied().unwrap_or(0),
            digest: *d,
            why: why_unaccounted(&c.media_type, against),
        })
        .collect();
    let others = model
        .components()
        .iter()
        .zip(&all.components)
        .filter(|(c, _)| main.is_none_or(|m| !std::ptr::eq(m, *c)) && !served::is_weights(c))
        .map(|(c, d)| ComponentDiff {
            media_type: c.media_type.clone(),
            name: c.name.clone(),
            a: ollama_first.then_some(*d),
            b: (!ollama_first).then_some(*d),
        })
        .collect();
    let side_m = (model.reference().to_string(), dm.label());
    let side_f = match file {
        FileModel::Gguf(f, df) => {
            (f.shards().first().map(|s| s.path().display().to_string()).unwrap_or_default(), df.label())
        }
        FileModel::Safetensors(f, df) => {
            let path = f.index().map(|i| i.path.clone()).or_else(|| f.files().first().map(|x| x.path().to_path_buf()));
            (path.unwrap_or_default().display().to_string(), df.label())
        }
    };
    let (a, b) = if ollama_first { (side_m, side_f) } else { (side_f, side_m) };
    Ok(Diff {
        a,
        b,
        against_file: Some(against),
        components: others,
        config: Vec::new(),
        weights,
        tensors,
        unaccounted,
    })
}

impl Diff {
    /// Ollama against Ollama: the labels are equal. Against a file: the
    /// weights Ollama serves are the file, and no other weights layer is
    /// there (its other components are not compared: a file has none).
    pub fn labels_equal(&self) -> bool {
        match self.against_file {
            Some(_) => self.served_weights_equal() == Some(true) && self.unaccounted.is_empty(),
            None => self.a.1 == self.b.1,
        }
    }

    /// Against a file: whether the served weights equal it (`None`: the
    /// model has no weights of the file's kind to compare).
    fn served_weights_equal(&self) -> Option<bool> {
        match self.against_file {
            Some(served::Against::Gguf) => self.weights.first().map(|(_, w)| w.labels_equal()),
            Some(served::Against::Safetensors) => self.tensors.as_ref().map(safetensors::diff::Diff::labels_equal),
            None => None,
        }
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
        if let Some(against) = self.against_file {
            return self.write_against_file(out, against);
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

    fn write_against_file(&self, out: &mut String, against: served::Against) -> fmt::Result {
        let (kind, what) = match against {
            served::Against::Gguf => ("GGUF", "GGUF weights"),
            served::Against::Safetensors => ("safetensors", "tensor blobs"),
        };
        let report = match against {
            served::Against::Gguf => self.weights.first().map(|(_, w)| (w.labels_equal(), w.a.label.clone(), w.text())),
            served::Against::Safetensors => self.tensors.as_ref().map(|t| (t.labels_equal(), t.a.1.clone(), t.text())),
        };
        match report {
            None if against == served::Against::Gguf => {
                writeln!(out, "the Ollama model has no GGUF model weights to compare with the file")?;
            }
            None => writeln!(out, "the Ollama model has no {what} to compare with the {kind} model")?,
            Some((true, label, _)) => writeln!(out, "= weights: the model's {what} are the file's (label {label})")?,
            Some((false, _, text)) => {
                writeln!(out, "~ weights: the model's {what} differ from the file:")?;
                for line in text.lines().skip(2) {
                    writeln!(out, "    {line}")?;
                }
            }
        }
        for u in &self.unaccounted {
            let name =
                if u.name.is_empty() { String::new() } else { format!(" '{}'", escape_bytes(u.name.as_bytes())) };
            let digest = short_digest(&u.digest);
            let word = escape_name(served::kind_word(&u.media_type).as_bytes());
            writeln!(out, "+ weights not in the file: {word}{name} (layer #{}) {digest}: {}", u.layer, u.why)?;
        }
        if !self.components.is_empty() {
            let names: Vec<String> = self
                .components
                .iter()
                .map(|c| {
                    let kind = escape_name(served::kind_word(&c.media_type).as_bytes());
                    if c.name.is_empty() { kind } else { format!("{kind} '{}'", escape_bytes(c.name.as_bytes())) }
                })
                .collect();
            writeln!(out, "  not compared (the file has none): {}", names.join(", "))?;
        }
        let verdict = if self.labels_equal() { "weights identical" } else { "weights differ" };
        writeln!(out, "{verdict}")
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        let d = |x: &Option<Sha256Digest>| x.map(hex::encode);
        let mut doc = json!({
            "format": JSON_FORMAT,
            "model_format": "ollama",
            "a": {"ref": self.a.0, "label": self.a.1},
            "b": {"ref": self.b.0, "label": self.b.1},
            "against_file": self.against_file.is_some(),
            "labels_equal": self.labels_equal(),
            "components": self.components.iter().map(|c| json!({
                "media_type": c.media_type, "name": c.name, "a": d(&c.a), "b": d(&c.b),
            })).collect::<Vec<_>>(),
            "config": self.config.iter().map(|m| json!({"member": m.path, "a": m.a, "b": m.b})).collect::<Vec<_>>(),
            "weights": self.weights.iter().map(|(m, w)| json!({"media_type": m, "diff": w.to_json()})).collect::<Vec<_>>(),
            "tensors": self.tensors.as_ref().map(safetensors::diff::Diff::to_json),
        });
        if self.against_file.is_some() {
            if let Some(doc) = doc.as_object_mut() {
                let unaccounted = self.unaccounted.iter().map(|u| {
                    json!({
                        "media_type": u.media_type, "name": u.name, "layer": u.layer,
                        "digest": hex::encode(u.digest), "why": u.why,
                    })
                });
                doc.insert("unaccounted_weights".into(), JsonValue::Array(unaccounted.collect()));
            }
        }
        doc
    }
}

/// Compares an Ollama model with the one weights component of a directory
/// (`ollama_first`: which side the Ollama model is on) that it can compare
/// itself with (GGUF or safetensors); with none or several, an error naming
/// them and the commands that compare each (which one is meant is not
/// guessed).
pub fn diff_with_directory(
    model: &Model,
    dm: &Digest,
    dir: &crate::directory::Model,
    dd: &Digest,
    ollama_first: bool,
    opts: &DiffOptions,
) -> Result<Diff> {
    use crate::directory::model::{Component, Part};
    let subs = dir.sub_digests(dd.tensor_sha256())?;
    let comparable = |c: &Component| match &c.part {
        Part::Weights(m) => {
            m.downcast_ref::<gguf::Model>().is_some() || m.downcast_ref::<safetensors::Model>().is_some()
        }
        Part::File(_) => false,
    };
    let weights: Vec<(&Component, Digest)> = dir.components().iter().zip(subs).filter(|(c, _)| comparable(c)).collect();
    if let [(c, d)] = weights.as_slice() {
        if let Part::Weights(m) = &c.part {
            let file = match m.downcast_ref::<gguf::Model>() {
                Some(g) => FileModel::Gguf(g, d),
                None => match m.downcast_ref::<safetensors::Model>() {
                    Some(st) => FileModel::Safetensors(st, d),
                    None => return Err(crate::Error::internal("a weights component Ollama cannot compare")),
                },
            };
            return diff_with_file(model, dm, file, ollama_first, opts);
        }
    }
    let shown = |p: &std::path::Path| escape_name(p.as_os_str().as_encoded_bytes());
    // The two arguments as given: the Ollama model's reference, the directory.
    let reference = std::path::Path::new(model.reference());
    let (args, side) = if ollama_first { ([reference, dir.path()], 1) } else { ([dir.path(), reference], 0) };
    let commands: Vec<String> = weights
        .iter()
        .filter_map(|(c, _)| c.files.first().map(|f| (c, f)))
        .map(|(c, f)| {
            use std::os::unix::ffi::OsStrExt;
            let file = dir.path().join(std::ffi::OsStr::from_bytes(f));
            let mut pair = args.map(shown);
            if let Some(slot) = pair.get_mut(side) {
                *slot = shown(&file);
            }
            let [a, b] = pair;
            format!("{} {} ({}): gguf-digest diff {a} {b}", c.kind.text(), escape_bytes(&c.name), shown(&file))
        })
        .collect();
    let dir_shown = shown(dir.path());
    let what = if commands.is_empty() {
        format!(
            "{dir_shown} holds no weights component (no safetensors or GGUF model) to compare with the Ollama model"
        )
    } else {
        format!(
            "{dir_shown} holds {} weights components, and which one the Ollama model is meant to be is not guessed; \
             compare one: {}",
            commands.len(),
            commands.join("; ")
        )
    };
    Err(crate::Error::new(DirectoryErrorKind::DirectoryWeightsToCompare(what)))
}
