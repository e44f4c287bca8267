//! `gguf-digest inspect`: what is in a model, and what a user should know
//! about it. Labels the model, then hands it to its format's section
//! (`gguf::inspect`); every section shows leaves through `render`.

use std::path::Path;

use serde_json::Value as JsonValue;

use crate::directory::{self, Directory};
use crate::error::{Error, Result};
use crate::format::Description;
use crate::formats::{AnyModel, Format};
use crate::gguf::{self, Gguf};
use crate::input::{Input, label_paths};
use crate::ollama::{self, Ollama};
use crate::pytorch::{self, Pytorch};
use crate::safetensors::{self, Safetensors};
use crate::schedule::BatchOptions;
use crate::source::{ReadMode, Source};

pub use crate::render::InspectOptions;

/// The inspection of a model, by format.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Inspection {
    /// A GGUF model.
    Gguf(gguf::inspect::Inspection),
    /// A safetensors model.
    Safetensors(safetensors::inspect::Inspection),
    /// A PyTorch checkpoint.
    Pytorch(pytorch::inspect::Inspection),
    /// An Ollama model.
    Ollama(ollama::inspect::Inspection),
    /// A directory.
    Directory(directory::inspect::Inspection),
}

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        match self {
            Inspection::Gguf(i) => i.text(),
            Inspection::Safetensors(i) => i.text(),
            Inspection::Pytorch(i) => i.text(),
            Inspection::Ollama(i) => i.text(),
            Inspection::Directory(i) => i.text(),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        match self {
            Inspection::Gguf(i) => i.to_json(),
            Inspection::Safetensors(i) => i.to_json(),
            Inspection::Pytorch(i) => i.to_json(),
            Inspection::Ollama(i) => i.to_json(),
            Inspection::Directory(i) => i.to_json(),
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
    Ok(match &model {
        AnyModel::Gguf(m) => Inspection::Gguf(Gguf::inspect(m, &digest, opts)?),
        AnyModel::Safetensors(m) => Inspection::Safetensors(Safetensors::inspect(m, &digest, opts)?),
        AnyModel::Pytorch(m) => Inspection::Pytorch(Pytorch::inspect(m, &digest, opts)?),
        AnyModel::Ollama(m) => Inspection::Ollama(Ollama::inspect(m, &digest, opts)?),
        AnyModel::Directory(m) => Inspection::Directory(Directory::inspect(m, &digest, opts)?),
    })
}

/// What `inspect` could read of a file it could not label, shown before
/// the error: the header, and the metadata and tensors read before the
/// first that could not be, with no label.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Partial {
    /// A GGUF file.
    Gguf(gguf::partial::Partial),
    /// A safetensors file.
    Safetensors(safetensors::partial::Partial),
}

impl Partial {
    /// The text report.
    pub fn text(&self) -> String {
        match self {
            Partial::Gguf(p) => p.text(),
            Partial::Safetensors(p) => p.text(),
        }
    }
}

/// What could be read of `path` when [`inspect_path`] failed on it with
/// `error`. Only of the very file the user named (not a directory, an
/// index, an `ollama:` reference or standard input, whose files the
/// labelling chose and opened under its own rules), and only when the error
/// is about a place in it (a byte offset): a missing shard or a file that
/// cannot be opened shows nothing. `None` too when nothing could be read.
pub fn what_could_be_read(path: &Path, error: &Error, opts: &InspectOptions) -> Option<Partial> {
    let named_file = matches!(Input::from_arg(path), Input::File(_)) && Format::of_path(path).is_none();
    let about_it = error.offset().is_some() && error.path().is_none_or(|p| p == path);
    if !named_file || !about_it || error.argument_beside_path().is_some() {
        return None;
    }
    let source = Source::open(path, ReadMode::Pread).ok()?;
    let head = source.head(SNIFF_BYTES).ok()?;
    match Format::of_bytes(&head) {
        Some(Format::Gguf) => gguf::partial::partial(source, opts.width, opts.items, opts.limit).map(Partial::Gguf),
        Some(Format::Safetensors) => {
            safetensors::partial::partial(&source, opts.width, opts.limit).map(Partial::Safetensors)
        }
        Some(Format::Pytorch | Format::Ollama | Format::Directory) | None => None,
    }
}

/// Bytes enough to tell the formats apart.
const SNIFF_BYTES: u64 = 9;
