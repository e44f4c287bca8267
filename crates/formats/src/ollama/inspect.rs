//! The Ollama section of `gguf-digest inspect`: the components with their
//! digests and layers, the config's content, then each weights component's
//! own inspection (GGUF or safetensors).

use std::fmt::{self, Write as _};

use serde_json::{Value as JsonValue, json};

use crate::error::Result;
use crate::gguf;
use crate::hash::Digest;
use crate::json::Json as Config;
use crate::ollama::model::{ComponentKind, Model};
use crate::output::JSON_FORMAT;
use crate::render::InspectOptions;
use crate::render::{count, path_text, short_digest, table};
use crate::safetensors;
use crate::text::{escape_bytes, escape_name};

/// A component as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct ComponentRow {
    /// Media type.
    pub media_type: String,
    /// Layer name, or empty.
    pub name: String,
    /// `gguf`, `safetensors`, `config` or `blob`.
    pub kind: &'static str,
    /// Content digest.
    pub digest: [u8; 32],
    /// The layers' digests and sizes.
    pub layers: Vec<(String, u64)>,
}

/// Everything `inspect` shows about an Ollama model.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The reference given.
    pub reference: String,
    /// The manifest's path.
    pub manifest: String,
    /// The label.
    pub label: String,
    /// The components in manifest order.
    pub components: Vec<ComponentRow>,
    /// The config's content (derived members and zero values dropped).
    pub config: Config,
    /// Each GGUF weights component's inspection, with its media type.
    pub ggufs: Vec<(String, gguf::inspect::Inspection)>,
    /// The tensor blobs' inspection.
    pub tensors: Option<safetensors::inspect::Inspection>,
}

fn kind_name(k: &ComponentKind) -> &'static str {
    match k {
        ComponentKind::Gguf(_) => "gguf",
        ComponentKind::Tensors => "safetensors",
        ComponentKind::Config => "config",
        ComponentKind::Blob => "blob",
    }
}

/// Inspects an Ollama model whose jobs were hashed into `digest`.
pub fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> Result<Inspection> {
    let all = model.digests(digest.tensor_sha256())?;
    let digests = &all.components;
    let layers = &model.manifest().layers;
    let config_layer = &model.manifest().config;
    let components = model
        .components()
        .iter()
        .zip(digests)
        .map(|(c, d)| ComponentRow {
            media_type: c.media_type.clone(),
            name: c.name.clone(),
            kind: kind_name(&c.kind),
            digest: *d,
            layers: if c.kind == ComponentKind::Config {
                vec![(config_layer.digest.clone(), config_layer.size)]
            } else {
                c.layers.iter().filter_map(|&l| layers.get(l)).map(|l| (l.digest.clone(), l.size)).collect()
            },
        })
        .collect();
    let (gguf_digests, tensor_digest) = (&all.ggufs, &all.tensors);
    let mut ggufs = Vec::new();
    for c in model.components() {
        if let ComponentKind::Gguf(i) = c.kind {
            if let (Some(m), Some(d)) = (model.gguf(i), gguf_digests.get(i)) {
                ggufs.push((c.media_type.clone(), gguf::inspect::inspect(m, d, opts)?));
            }
        }
    }
    let tensors = match (model.tensors(), &tensor_digest) {
        (Some(st), Some(d)) => Some(safetensors::inspect::inspect(st, d, opts)),
        _ => None,
    };
    Ok(Inspection {
        reference: model.reference().to_string(),
        manifest: path_text(model.manifest_path()),
        label: digest.label(),
        components,
        config: model.config_content().clone(),
        ggufs,
        tensors,
    })
}

/// A config value as one line of text.
pub(crate) fn config_text(v: &Config) -> String {
    match v {
        Config::Null => "null".into(),
        Config::Bool(b) => b.to_string(),
        Config::Uint(u) => u.to_string(),
        Config::Number(_, t) => t.clone(),
        Config::Str(s) => format!("'{}'", escape_bytes(s.as_bytes())),
        Config::Array(a) => format!("[{}]", a.iter().map(config_text).collect::<Vec<_>>().join(", ")),
        Config::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", escape_bytes(k.as_bytes()), config_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A config value as JSON.
pub(crate) fn config_json(v: &Config) -> JsonValue {
    match v {
        Config::Null => JsonValue::Null,
        Config::Bool(b) => json!(b),
        Config::Uint(u) => json!(u),
        Config::Number(_, t) => json!(t),
        Config::Str(s) => json!(s),
        Config::Array(a) => JsonValue::Array(a.iter().map(config_json).collect()),
        Config::Object(m) => JsonValue::Object(m.iter().map(|(k, v)| (k.clone(), config_json(v))).collect()),
    }
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
        for (k, v) in [
            ("model", escape_bytes(self.reference.as_bytes())),
            ("manifest", self.manifest.clone()),
            ("format", "ollama".to_string()),
            ("label", self.label.clone()),
        ] {
            writeln!(out, "{k:<12}{v}")?;
        }
        writeln!(out, "\nComponents ({}):", self.components.len())?;
        let rows: Vec<Vec<String>> = self
            .components
            .iter()
            .map(|c| {
                let layers = match c.layers.as_slice() {
                    [(d, size)] => format!("{d} ({})", count(*size, "byte", "bytes")),
                    many => format!("{} layers", many.len()),
                };
                vec![
                    escape_name(c.media_type.as_bytes()),
                    escape_bytes(c.name.as_bytes()),
                    c.kind.to_string(),
                    short_digest(&c.digest),
                    layers,
                ]
            })
            .collect();
        table(out, &["media type", "name", "kind", "digest", "from"], &[false; 5], &rows)?;
        let members = self.config.as_object().unwrap_or(&[]);
        let n = count(members.len() as u64, "member", "members");
        writeln!(out, "\nConfig content ({n}; derived and zero-valued ones are not content):")?;
        let rows: Vec<Vec<String>> =
            members.iter().map(|(k, v)| vec![escape_bytes(k.as_bytes()), config_text(v)]).collect();
        table(out, &["member", "value"], &[false, false], &rows)?;
        for (media, i) in &self.ggufs {
            writeln!(out, "\n== {media}: GGUF weights ==")?;
            out.push_str(&i.text());
        }
        if let Some(t) = &self.tensors {
            writeln!(out, "\n== application/vnd.ollama.image.tensor: safetensors weights ==")?;
            out.push_str(&t.text());
        }
        Ok(())
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        json!({
            "format": JSON_FORMAT,
            "model_format": "ollama",
            "reference": self.reference,
            "manifest": self.manifest,
            "label": self.label,
            "components": self.components.iter().map(|c| json!({
                "media_type": c.media_type,
                "name": c.name,
                "kind": c.kind,
                "digest": hex::encode(c.digest),
                "layers": c.layers.iter().map(|(d, s)| json!({"digest": d, "size": s})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "config": config_json(&self.config),
            "weights": self.ggufs.iter().map(|(m, i)| json!({"media_type": m, "inspection": i.to_json()}))
                .chain(self.tensors.iter().map(|t| json!({"media_type": "application/vnd.ollama.image.tensor", "inspection": t.to_json()})))
                .collect::<Vec<_>>(),
        })
    }
}
