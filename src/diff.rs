//! `gguf-digest diff`: two models compared leaf by leaf. Labels both (their
//! tensors hashed together), then hands them to their format's section
//! (`gguf::diff`); every section shows leaves through `render`.
//!
//! The skeleton is a Merkle structure: a label differs exactly when a leaf
//! differs, so a section walks the two sorted leaf lists side by side, using
//! the digests labelling computed.

use std::path::Path;

use serde_json::Value as JsonValue;

use crate::error::{Error, ErrorKind, Result};
use crate::gguf;
use crate::input::label_paths;
use crate::ollama;
use crate::safetensors;
use crate::schedule::BatchOptions;

/// How much of a changed value `diff` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    /// Strings up to this many bytes are shown; longer ones by length and digest only.
    pub width: usize,
    /// Array elements shown for an added or removed array KV.
    pub items: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions { width: 64, items: 8 }
    }
}

/// The differences between two models, by format.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Diff {
    /// Two GGUF models.
    Gguf(gguf::diff::Diff),
    /// Two safetensors models.
    Safetensors(safetensors::diff::Diff),
    /// Two Ollama models, or an Ollama model and a GGUF or safetensors model.
    Ollama(ollama::diff::Diff),
}

impl Diff {
    /// True when both labels are equal (and so no leaf differs).
    pub fn labels_equal(&self) -> bool {
        match self {
            Diff::Gguf(d) => d.labels_equal(),
            Diff::Safetensors(d) => d.labels_equal(),
            Diff::Ollama(d) => d.labels_equal(),
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        match self {
            Diff::Gguf(d) => d.text(),
            Diff::Safetensors(d) => d.text(),
            Diff::Ollama(d) => d.text(),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        match self {
            Diff::Gguf(d) => d.to_json(),
            Diff::Safetensors(d) => d.to_json(),
            Diff::Ollama(d) => d.to_json(),
        }
    }
}

/// Opens and labels both models (their tensors hashed together on `pool`)
/// and compares them.
pub fn diff_paths(
    a: &Path,
    b: &Path,
    open: &BatchOptions,
    pool: &rayon::ThreadPool,
    opts: &DiffOptions,
) -> Result<Diff> {
    let [ra, rb] = label_paths([a.to_path_buf(), b.to_path_buf()], open, pool);
    let (ma, da) = ra?;
    let (mb, db) = rb?;
    let (a, b) = (ma.as_any(), mb.as_any());
    if let (Some(a), Some(b)) = (a.downcast_ref::<gguf::Model>(), b.downcast_ref::<gguf::Model>()) {
        return gguf::diff::diff(a, &da, b, &db, opts).map(Diff::Gguf);
    }
    let (oa, ob) = (a.downcast_ref::<ollama::Model>(), b.downcast_ref::<ollama::Model>());
    match (oa, ob) {
        (Some(x), Some(y)) => return ollama::diff::diff(x, &da, y, &db, opts).map(Diff::Ollama),
        (Some(x), None) => {
            if let Some(f) = file_model(b, &db) {
                return ollama::diff::diff_with_file(x, &da, f, true, opts).map(Diff::Ollama);
            }
        }
        (None, Some(y)) => {
            if let Some(f) = file_model(a, &da) {
                return ollama::diff::diff_with_file(y, &db, f, false, opts).map(Diff::Ollama);
            }
        }
        (None, None) => {}
    }
    if let (Some(a), Some(b)) = (a.downcast_ref::<safetensors::Model>(), b.downcast_ref::<safetensors::Model>()) {
        return Ok(Diff::Safetensors(safetensors::diff::diff(a, &da, b, &db, opts)));
    }
    Err(Error::new(ErrorKind::DifferentFormats { a: format_of(a), b: format_of(b) }))
}

/// A GGUF or safetensors model, as an Ollama model's weights are compared with it.
fn file_model<'a>(m: &'a dyn std::any::Any, d: &'a crate::hash::Digest) -> Option<ollama::diff::FileModel<'a>> {
    if let Some(f) = m.downcast_ref::<gguf::Model>() {
        return Some(ollama::diff::FileModel::Gguf(f, d));
    }
    m.downcast_ref::<safetensors::Model>().map(|f| ollama::diff::FileModel::Safetensors(f, d))
}

/// What a model is, in words, for the message of a diff across formats.
fn format_of(m: &dyn std::any::Any) -> &'static str {
    if m.is::<gguf::Model>() {
        "a GGUF model"
    } else if m.is::<safetensors::Model>() {
        "a safetensors model"
    } else if m.is::<ollama::Model>() {
        "an Ollama model"
    } else {
        "a model of another format"
    }
}
