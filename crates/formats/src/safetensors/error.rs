//! The safetensors error kinds: dtypes, tensor sizes and tiling, and an
//! index and the files it names.
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};
use crate::text::escape_bytes;

/// Why a safetensors file or index was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SafetensorsErrorKind {
    /// A safetensors dtype not in the table.
    #[error("unknown dtype '{}'", escape_bytes(.0.as_bytes()))]
    UnknownDtype(String),
    /// A tensor whose shape has no byte size, or whose data range does not hold it.
    #[error("{0}")]
    TensorSize(String),
    /// Tensor data ranges that do not tile the data region exactly.
    #[error("tensor data does not tile the data region: {0}")]
    Tiling(String),
    /// An index and the files it names disagree.
    #[error("{0}")]
    IndexMismatch(String),
    /// A metadata key with one value in a file's header and another in the index.
    #[error("metadata key has one value in the file's __metadata__ and another in the index")]
    MetadataConflict,
    /// A file name read from an input that is not a plain name in its directory.
    #[error("file name '{}' {why}: only a plain file name in the index's directory is accepted", escape_bytes(.name.as_bytes()))]
    NotPlainName {
        /// The name as read.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

impl LayerError for SafetensorsErrorKind {}

impl From<SafetensorsErrorKind> for ErrorKind {
    fn from(kind: SafetensorsErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<SafetensorsErrorKind> for Error {
    fn from(kind: SafetensorsErrorKind) -> Self {
        Error::new(kind)
    }
}
