//! Provenance: labels as in-toto statements that signing tools sign, and
//! their verification (issue #16). A statement names each model as a
//! subject whose `sha256` digest is its label (the label *is* a SHA-256: of
//! the model's skeleton), with a predicate saying how to reproduce it.
//!
//! - `statement`: building a statement from labelled models;
//! - `envelope`: reading what a signing tool hands back (a bare statement,
//!   a DSSE envelope, a Sigstore bundle holding one) and DSSE's
//!   pre-authentication encoding;
//! - `keys`: public keys (Ed25519, ECDSA P-256 and P-384) and signature
//!   checks, with RustCrypto's crates: nothing hand-written;
//! - `private_keys`, `cosign_key`, `password`: the keys `sign` signs with
//!   (PKCS#8, encrypted PKCS#8, cosign's key files) and their passwords;
//! - `bundle`: writing a Sigstore bundle of a DSSE envelope;
//! - `sign`: a statement signed into a bundle, written whole or not at all;
//! - `oms_sign`: an OpenSSF model signature of a directory (`sign --format oms`);
//! - `subjects`: a statement's subjects, and where each may be looked for
//!   (never outside the root);
//! - `verify`: a signed statement checked and its subjects located, ready
//!   to be relabelled.
//!
//! See docs/adr/0017-provenance.md, docs/adr/0026-signing.md and docs/statement-predicate.schema.json.

pub mod bundle;
pub mod cosign_key;
pub mod envelope;
mod error;
pub mod keys;
pub mod oms;
pub mod oms_sign;
pub mod password;
pub mod private_keys;
pub mod sign;
pub mod statement;
pub mod subjects;
pub mod verify;

pub use error::ProvenanceErrorKind;

/// The in-toto statement type.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// This project's predicate type.
pub const PREDICATE_TYPE: &str = "https://gguf-digest.dev/label/v1";

/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// JSON nesting allowed in a statement, envelope or bundle.
pub const MAX_DEPTH: usize = 64;

/// The most bytes of a statement, envelope or bundle read.
pub const MAX_STATEMENT: u64 = 16 << 20;

/// The bytes of the statement, envelope or bundle at `path`: at most
/// [`MAX_STATEMENT`] are read, and a larger file is refused as too large
/// (an I/O error of kind `FileTooLarge`: the file is there and readable,
/// but more than this reader takes).
pub(crate) fn read_limited(path: &std::path::Path) -> crate::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_STATEMENT.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_STATEMENT {
        let e = std::io::Error::new(std::io::ErrorKind::FileTooLarge, format!("larger than {MAX_STATEMENT} bytes"));
        return Err(e.into());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_past_the_limit_is_too_large_and_one_at_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(MAX_STATEMENT).unwrap();
        assert_eq!(read_limited(&path).unwrap().len() as u64, MAX_STATEMENT);
        file.set_len(MAX_STATEMENT + 1).unwrap();
        let e = read_limited(&path).unwrap_err();
        assert!(
            matches!(e.kind(), crate::error::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::FileTooLarge),
            "{e:?}"
        );
        assert_eq!(e.to_string(), format!("larger than {MAX_STATEMENT} bytes"));
        let e = read_limited(&dir.path().join("none.json")).unwrap_err();
        assert!(e.is_not_found(), "{e}");
    }
}
