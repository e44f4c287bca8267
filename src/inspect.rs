//! `gguf-digest inspect`: what is in a model, and what a user should know
//! about it. Labels the model, then hands it to its format's section
//! (`gguf::inspect`); every section shows leaves through `render`.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::path::Path;

use serde_json::Value as Json;

use crate::error::Result;
use crate::gguf;
use crate::input::label_paths;
use crate::ollama;
use crate::safetensors;
use crate::schedule::BatchOptions;

/// How much of a model `inspect` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InspectOptions {
    /// Bytes of a string shown before it is elided (its length is shown).
    pub width: usize,
    /// Array elements shown per KV, nested elements included.
    pub items: usize,
    /// Tensors listed, in file order; `None` lists all of them.
    pub limit: Option<usize>,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions { width: 64, items: 8, limit: None }
    }
}

/// The inspection of a model, by format.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Inspection {
    /// A GGUF model.
    Gguf(gguf::inspect::Inspection),
    /// A safetensors model.
    Safetensors(safetensors::inspect::Inspection),
    /// An Ollama model.
    Ollama(ollama::inspect::Inspection),
}

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        match self {
            Inspection::Gguf(i) => i.text(),
            Inspection::Safetensors(i) => i.text(),
            Inspection::Ollama(i) => i.text(),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> Json {
        match self {
            Inspection::Gguf(i) => i.to_json(),
            Inspection::Safetensors(i) => i.to_json(),
            Inspection::Ollama(i) => i.to_json(),
        }
    }
}

/// Opens and labels a model (its tensors hashed on `pool`) and inspects it.
pub fn inspect_path(
    path: &Path,
    open: &BatchOptions,
    pool: &rayon::ThreadPool,
    opts: &InspectOptions,
) -> Result<Inspection> {
    let [labelled] = label_paths([path.to_path_buf()], open, pool);
    let (model, digest) = labelled?;
    let any = model.as_any();
    if let Some(m) = any.downcast_ref::<gguf::Model>() {
        return gguf::inspect::inspect(m, &digest, opts).map(Inspection::Gguf);
    }
    if let Some(m) = any.downcast_ref::<ollama::Model>() {
        return ollama::inspect::inspect(m, &digest, opts).map(Inspection::Ollama);
    }
    if let Some(m) = any.downcast_ref::<safetensors::Model>() {
        return Ok(Inspection::Safetensors(safetensors::inspect::inspect(m, &digest, opts)));
    }
    Err(std::io::Error::other("inspect knows no section for this model's format").into())
}
