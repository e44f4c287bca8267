//! An Ollama model's entry in the `--json` document: every component with
//! its media type, name, kind, content digest (the GGUF or safetensors label
//! for weights) and the layers it came from.

use std::path::Path;

use serde_json::{Value as Json, json};

use crate::hash::Digest;
use crate::ollama::model::{ComponentKind, Model};

/// The JSON entry of one labelled Ollama model.
pub fn model_json(path: &Path, model: &Model, digest: &Digest) -> Json {
    let digests = model.component_digests(digest.tensor_sha256()).unwrap_or_default();
    let layers = &model.manifest().layers;
    let components: Vec<Json> = model
        .components()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let kind = match c.kind {
                ComponentKind::Gguf(_) => "gguf",
                ComponentKind::Tensors => "safetensors",
                ComponentKind::Config => "config",
                ComponentKind::Blob => "blob",
            };
            let from: Vec<Json> = if c.kind == ComponentKind::Config {
                vec![json!({ "digest": model.manifest().config.digest, "size": model.manifest().config.size })]
            } else {
                c.layers
                    .iter()
                    .filter_map(|&l| layers.get(l))
                    .map(|l| json!({ "digest": l.digest, "size": l.size, "name": l.name }))
                    .collect()
            };
            json!({
                "media_type": c.media_type,
                "name": c.name,
                "kind": kind,
                "digest": digests.get(i).map(hex::encode),
                "layers": from,
            })
        })
        .collect();
    json!({
        "path": path.to_string_lossy(),
        "format": "ollama",
        "spec": "ollama-skeleton-v1",
        "label": digest.label(),
        "manifest": model.manifest_path().to_string_lossy(),
        "store": model.root().to_string_lossy(),
        "components": components,
    })
}
