//! `gguf-digest inspect`: what is in a model, and what a user should know
//! about it. Labels the model, then hands it to its format's section
//! (`gguf::inspect`); every section shows leaves through `render`.

use std::path::Path;

use serde_json::Value as JsonValue;

use crate::error::{Error, Result};
use crate::format::Section;
use crate::formats;
use crate::input::{Input, label_paths};
use crate::schedule::BatchOptions;
use crate::source::{ReadMode, Source};

pub use crate::render::InspectOptions;

/// The inspection of a model: its format's section.
#[derive(Debug)]
pub struct Inspection(Box<dyn Section>);

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        self.0.text()
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        self.0.to_json()
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
    Ok(Inspection(model.inspect(&digest, opts)?))
}

/// What `inspect` could read of a file it could not label, shown before
/// the error: the header, and the metadata and tensors read before the
/// first that could not be, with no label.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial(String);

impl Partial {
    /// The text report.
    pub fn text(&self) -> String {
        self.0.clone()
    }
}

/// What could be read of `path` when [`inspect_path`] failed on it with
/// `error`. Only of the very file the user named (not a directory, an
/// index, an `ollama:` reference or standard input, whose files the
/// labelling chose and opened under its own rules), and only when the error
/// is about a place in it (a byte offset): a missing shard or a file that
/// cannot be opened shows nothing. `None` too when nothing could be read.
pub fn what_could_be_read(path: &Path, error: &Error, opts: &InspectOptions) -> Option<Partial> {
    let named_file = matches!(Input::from_arg(path), Input::File(_)) && formats::of_path(path).is_none();
    let about_it = error.offset().is_some() && error.path().is_none_or(|p| p == path);
    if !named_file || !about_it || error.argument_beside_path().is_some() {
        return None;
    }
    let source = Source::open(path, ReadMode::Pread).ok()?;
    let head = source.head(SNIFF_BYTES).ok()?;
    formats::of_bytes(&head)?.partial(source, opts).map(Partial)
}

/// Bytes enough to tell the formats apart.
const SNIFF_BYTES: u64 = 9;
