//! The directory error kinds: what the walk of a directory refuses, and
//! what `diff` will not guess. (A Git LFS pointer where weights should be
//! is the core's [`ErrorKind::LfsPointer`](crate::ErrorKind::LfsPointer):
//! a PyTorch file reports it too.)
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};

/// Why a directory was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DirectoryErrorKind {
    /// An entry of a directory that its label refuses (directory
    /// contract §2: a link dangling, in a loop, to or through a
    /// directory; no file at all).
    #[error("{0}")]
    DirectoryEntry(String),
    /// `diff` of an Ollama model and a directory that holds no weights
    /// component, or more than one: which one to compare is not
    /// guessed (the message names them and the commands that would).
    #[error("{0}")]
    DirectoryWeightsToCompare(String),
}

impl LayerError for DirectoryErrorKind {}

impl From<DirectoryErrorKind> for ErrorKind {
    fn from(kind: DirectoryErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<DirectoryErrorKind> for Error {
    fn from(kind: DirectoryErrorKind) -> Self {
        Error::new(kind)
    }
}
