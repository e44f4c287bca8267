//! One file of a GGUF model, opened and parsed: what a [`Model`] joins.
//! On its own so that the model and its tensor views both use it without
//! importing each other.
//!
//! [`Model`]: crate::gguf::Model

use std::path::Path;

use crate::error::Result;
use crate::gguf::parse::{GgufFile, parse_prefix};
use crate::source::Source;

/// One file of a model, opened and parsed.
#[derive(Debug)]
pub struct Shard {
    /// The open file.
    pub source: Source,
    /// What its metadata says.
    pub file: GgufFile,
}

impl Shard {
    pub(crate) fn from_source(source: Source) -> Result<Shard> {
        // The metadata ends where the data starts.
        let file = source.parse(|bytes, len| {
            parse_prefix(bytes, len).map(|f| {
                let end = f.data_start;
                (f, end)
            })
        })?;
        Ok(Shard { source, file })
    }

    /// The path the shard was opened by.
    pub fn path(&self) -> &Path {
        self.source.path()
    }
}
