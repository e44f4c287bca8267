//! An Ollama model's entry in the `--json` document: every component with
//! its media type, name, kind, content digest (the GGUF or safetensors label
//! for weights) and the layers it came from.

use std::io;
use std::path::Path;

use crate::hash::Digest;
use crate::ollama::model::{ComponentKind, Model};
use crate::output::JsonWriter;

/// Writes the JSON entry of one labelled Ollama model, a component and a
/// layer at a time.
pub fn write_model_json(w: &mut JsonWriter<'_>, path: &Path, model: &Model, digest: &Digest) -> io::Result<()> {
    let digests = model.component_digests(digest.tensor_sha256()).unwrap_or_default();
    let manifest = model.manifest();
    w.begin_object()?;
    w.str_field("path", &path.to_string_lossy())?;
    w.str_field("format", "ollama")?;
    w.str_field("spec", "ollama-skeleton-v1")?;
    w.str_field("label", &digest.label())?;
    w.str_field("manifest", &model.manifest_path().to_string_lossy())?;
    w.str_field("store", &model.root().to_string_lossy())?;
    w.key("components")?;
    w.begin_array()?;
    for (i, c) in model.components().iter().enumerate() {
        let kind = match c.kind {
            ComponentKind::Gguf(_) => "gguf",
            ComponentKind::Tensors => "safetensors",
            ComponentKind::Config => "config",
            ComponentKind::Blob => "blob",
        };
        w.begin_object()?;
        w.str_field("media_type", &c.media_type)?;
        w.str_field("name", &c.name)?;
        w.str_field("kind", kind)?;
        w.field("digest", digests.get(i).map(hex::encode))?;
        w.key("layers")?;
        w.begin_array()?;
        if c.kind == ComponentKind::Config {
            w.begin_object()?;
            w.str_field("digest", &manifest.config.digest)?;
            w.field("size", manifest.config.size)?;
            w.end_object()?;
        } else {
            for l in c.layers.iter().filter_map(|&l| manifest.layers.get(l)) {
                w.begin_object()?;
                w.str_field("digest", &l.digest)?;
                w.field("size", l.size)?;
                w.str_field("name", &l.name)?;
                w.end_object()?;
            }
        }
        w.end_array()?;
        w.end_object()?;
    }
    w.end_array()?;
    crate::format::end_entry(w, &crate::format::Labelled::sources(model))
}
