//! The PyTorch error kinds: the zip archive, the pickle read as data, the
//! globals it may name, and the tensors it builds (docs/SPEC.md Part V).
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};
use crate::text::escape_bytes;

/// Why a PyTorch checkpoint was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PytorchErrorKind {
    /// A zip archive that is not one every zip reader reads alike.
    #[error("zip archive: {0}")]
    Zip(String),
    /// A TorchScript archive (`torch.jit.save`), not a checkpoint.
    #[error(
        "a TorchScript archive (it holds '{}'), not a checkpoint: loading it runs the code it holds",
        escape_bytes(.0.as_bytes())
    )]
    TorchScript(String),
    /// A pickle this reader does not accept as data.
    #[error("pickle: {0}")]
    Pickle(String),
    /// A `GLOBAL` outside the accepted list: what loading would run.
    #[error("pickle names '{}.{}', which is not accepted: loading the file would import and call `{}.{}`", escape_bytes(.module.as_bytes()), escape_bytes(.name.as_bytes()), escape_bytes(.module.as_bytes()), escape_bytes(.name.as_bytes()))]
    RefusedGlobal {
        /// The module line.
        module: String,
        /// The name line.
        name: String,
    },
    /// A checkpoint whose values or tensors the contract refuses.
    #[error("{0}")]
    Checkpoint(String),
}

impl LayerError for PytorchErrorKind {}

impl From<PytorchErrorKind> for ErrorKind {
    fn from(kind: PytorchErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<PytorchErrorKind> for Error {
    fn from(kind: PytorchErrorKind) -> Self {
        Error::new(kind)
    }
}
