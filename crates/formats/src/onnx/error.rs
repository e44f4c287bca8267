//! The ONNX error kind (docs/SPEC.md Part VI).
//!
//! One kind: every refusal of the wire, the schema, a tensor or its
//! external data says what in its message, which begins with the field path
//! (`graph.initializer[0].dims`); the byte offset and the tensor are set on
//! the [`Error`] itself. Carried by the core's
//! [`ErrorKind::Format`](crate::ErrorKind::Format) and read back with
//! [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};

/// Why an ONNX model was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OnnxErrorKind {
    /// An ONNX model the contract refuses: its field path, then why.
    #[error("{0}")]
    Onnx(String),
}

impl LayerError for OnnxErrorKind {}

impl From<OnnxErrorKind> for ErrorKind {
    fn from(kind: OnnxErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<OnnxErrorKind> for Error {
    fn from(kind: OnnxErrorKind) -> Self {
        Error::new(kind)
    }
}
