//! `gguf-digest diff`: two models compared leaf by leaf. Labels both (their
//! tensors hashed together), then hands them to their format's section
//! (`gguf::diff`); every section shows leaves through `render`.
//!
//! The skeleton is a Merkle structure: a label differs exactly when a leaf
//! differs, so a section walks the two sorted leaf lists side by side, using
//! the digests labelling computed.

use std::path::Path;

use serde_json::Value as JsonValue;

use crate::directory::{self, Directory};
use crate::error::{Error, ErrorKind, Result};
use crate::format::Description;
use crate::formats::AnyModel;
use crate::gguf::{self, Gguf};
use crate::hash::Digest;
use crate::input::label_paths;
use crate::ollama::{self, Ollama};
use crate::pytorch::{self, Pytorch};
use crate::safetensors::{self, Safetensors};
use crate::schedule::BatchOptions;

pub use crate::render::DiffOptions;

/// The differences between two models, by format.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Diff {
    /// Two GGUF models.
    Gguf(gguf::diff::Diff),
    /// Two safetensors models.
    Safetensors(safetensors::diff::Diff),
    /// Two PyTorch checkpoints.
    Pytorch(pytorch::diff::Diff),
    /// Two Ollama models, or an Ollama model and a GGUF or safetensors model.
    Ollama(ollama::diff::Diff),
    /// Two directories, component by component.
    Directory(directory::diff::Diff),
}

impl Diff {
    /// True when both labels are equal (and so no leaf differs).
    pub fn labels_equal(&self) -> bool {
        match self {
            Diff::Gguf(d) => d.labels_equal(),
            Diff::Safetensors(d) => d.labels_equal(),
            Diff::Pytorch(d) => d.labels_equal(),
            Diff::Ollama(d) => d.labels_equal(),
            Diff::Directory(d) => d.labels_equal(),
        }
    }

    /// The text report.
    pub fn text(&self) -> String {
        match self {
            Diff::Gguf(d) => d.text(),
            Diff::Safetensors(d) => d.text(),
            Diff::Pytorch(d) => d.text(),
            Diff::Ollama(d) => d.text(),
            Diff::Directory(d) => d.text(),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        match self {
            Diff::Gguf(d) => d.to_json(),
            Diff::Safetensors(d) => d.to_json(),
            Diff::Pytorch(d) => d.to_json(),
            Diff::Ollama(d) => d.to_json(),
            Diff::Directory(d) => d.to_json(),
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
    Ok(match (&ma, &mb) {
        (AnyModel::Gguf(a), AnyModel::Gguf(b)) => Diff::Gguf(Gguf::diff(a, &da, b, &db, opts)?),
        (AnyModel::Safetensors(a), AnyModel::Safetensors(b)) => {
            Diff::Safetensors(Safetensors::diff(a, &da, b, &db, opts)?)
        }
        (AnyModel::Pytorch(a), AnyModel::Pytorch(b)) => Diff::Pytorch(Pytorch::diff(a, &da, b, &db, opts)?),
        (AnyModel::Ollama(a), AnyModel::Ollama(b)) => Diff::Ollama(Ollama::diff(a, &da, b, &db, opts)?),
        (AnyModel::Directory(a), AnyModel::Directory(b)) => Diff::Directory(Directory::diff(a, &da, b, &db, opts)?),
        (AnyModel::Ollama(x), other) => match file_model(other, &db) {
            Some(f) => Diff::Ollama(ollama::diff::diff_with_file(x, &da, f, true, opts)?),
            None => return Err(different_formats(&ma, &mb)),
        },
        (other, AnyModel::Ollama(y)) => match file_model(other, &da) {
            Some(f) => Diff::Ollama(ollama::diff::diff_with_file(y, &db, f, false, opts)?),
            None => return Err(different_formats(&ma, &mb)),
        },
        _ => return Err(different_formats(&ma, &mb)),
    })
}

/// A GGUF or safetensors model, as an Ollama model's weights are compared with it.
fn file_model<'a>(m: &'a AnyModel, d: &'a Digest) -> Option<ollama::diff::FileModel<'a>> {
    match m {
        AnyModel::Gguf(f) => Some(ollama::diff::FileModel::Gguf(f, d)),
        AnyModel::Safetensors(f) => Some(ollama::diff::FileModel::Safetensors(f, d)),
        AnyModel::Pytorch(_) | AnyModel::Ollama(_) | AnyModel::Directory(_) => None,
    }
}

/// The error of a diff across formats that cannot be compared.
fn different_formats(a: &AnyModel, b: &AnyModel) -> Error {
    Error::new(ErrorKind::DifferentFormats { a: a.format().what(), b: b.format().what() })
}
