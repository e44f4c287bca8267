//! The provenance kinds of [`ErrorKind`](super::ErrorKind): keys and
//! signatures of a statement, private keys that sign.
//!
//! Written here, not in `provenance/`: it imports the error, so the
//! error may not import it. The messages call the
//! helpers in scope where the enum is written (`kind.rs`).

/// Appends the provenance kinds to those handed in, and hands them all on to
/// the next macro named (see `kind.rs`).
macro_rules! provenance_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// A public key that could not be read as one (a signature that does
            /// not verify is [`ErrorKind::SignatureFailed`]).
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
    };
}
pub(super) use provenance_kinds;
