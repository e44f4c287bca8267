//! The provenance error kinds: keys and signatures of a statement, private
//! keys that sign.
//!
//! Carried by the core's [`ErrorKind::Provenance`](crate::ErrorKind::Provenance) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};

/// Why a statement, signature or key was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProvenanceErrorKind {
    /// A public key that could not be read as one (a signature that does
    /// not verify is [`ProvenanceErrorKind::SignatureFailed`]).
    #[error("signature: {0}")]
    Signature(String),
    /// A signed statement none of whose signatures verifies with the keys
    /// given (or a bare statement where a signature was required).
    #[error("signature: FAILED: {0}")]
    SignatureFailed(String),
    /// A statement given to `verify` with no public key to check its
    /// signature and no explicit choice to check the subjects alone: a
    /// pass must never look signed when nothing about the signer is known.
    #[error("signature: no public key was given to check it, so nothing was verified")]
    SignatureRequired,
    /// A private key `sign` cannot use: not a key file it reads, a kind or
    /// curve it does not sign with, a wrong password, no password to be had.
    #[error("private key: {0}")]
    PrivateKey(String),
}

impl LayerError for ProvenanceErrorKind {}

impl From<ProvenanceErrorKind> for ErrorKind {
    fn from(kind: ProvenanceErrorKind) -> Self {
        ErrorKind::Provenance(LayerKind::new(kind))
    }
}

impl From<ProvenanceErrorKind> for Error {
    fn from(kind: ProvenanceErrorKind) -> Self {
        Error::new(kind)
    }
}
