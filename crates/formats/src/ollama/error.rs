//! The Ollama error kinds: a model's name, a model or a store not there.
//! (A damaged store is the core's
//! [`ErrorKind::DamagedStore`](crate::ErrorKind::DamagedStore): the
//! Hugging Face cache and a directory report it too.)
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};
use crate::text::escape_bytes;

/// Why an Ollama model name was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OllamaErrorKind {
    /// An Ollama model name that is malformed or could leave the store.
    #[error("Ollama model name '{}' is not valid: {why}", escape_bytes(.name.as_bytes()))]
    OllamaName {
        /// The name as given.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// The store holds no manifest for the model named.
    #[error("no such model in the store (no manifest {})", .manifest.display())]
    NoSuchModel {
        /// Where its manifest would be.
        manifest: std::path::PathBuf,
    },
    /// No store was found to look in: where it was looked for, or why
    /// nowhere could be.
    #[error("{0}")]
    NoStore(String),
}

impl LayerError for OllamaErrorKind {}

impl From<OllamaErrorKind> for ErrorKind {
    fn from(kind: OllamaErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<OllamaErrorKind> for Error {
    fn from(kind: OllamaErrorKind) -> Self {
        Error::new(kind)
    }
}
