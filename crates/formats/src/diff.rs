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
use crate::format::{DiffSection, Side};
use crate::input::label_paths;
use crate::schedule::BatchOptions;

pub use crate::render::DiffOptions;

/// The differences between two models: the section of the format (or
/// container) that compared them.
#[derive(Debug)]
pub struct Diff(Box<dyn DiffSection>);

impl Diff {
    /// True when both labels are equal (and so no leaf differs).
    pub fn labels_equal(&self) -> bool {
        self.0.labels_equal()
    }

    /// The text report.
    pub fn text(&self) -> String {
        self.0.text()
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        self.0.to_json()
    }
}

/// Opens and labels both models (their tensors hashed together on `pool`)
/// and compares them: A is asked first, then B the other way round (an
/// Ollama model compares itself with a file on either side); two models
/// neither can compare are refused as different formats.
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
    let section = ma.diff(&da, &mb, &db, Side::First, opts).or_else(|| mb.diff(&db, &ma, &da, Side::Second, opts));
    match section {
        Some(d) => Ok(Diff(d?)),
        None => Err(Error::new(ErrorKind::DifferentFormats { a: ma.what(), b: mb.what() })),
    }
}
