//! Public keys and signature checks: Ed25519, ECDSA P-256 with SHA-256
//! and P-384 with SHA-384 (the hashes cosign, sigstore-go and
//! `model_signing` pair with those curves), read from PEM
//! (SubjectPublicKeyInfo), checked with RustCrypto's and dalek's crates.

use crate::provenance::ProvenanceErrorKind;
use ed25519_dalek::pkcs8::DecodePublicKey as _;

use crate::error::{Error, Result};

/// A public key that signatures are checked with.
#[derive(Debug, Clone)]
pub enum PublicKey {
    /// Ed25519: 64-byte signatures over the message itself.
    Ed25519(ed25519_dalek::VerifyingKey),
    /// ECDSA over P-256 with SHA-256: DER (or raw 64-byte) signatures.
    P256(p256::ecdsa::VerifyingKey),
    /// ECDSA over P-384 with SHA-384: DER (or raw 96-byte) signatures.
    P384(p384::ecdsa::VerifyingKey),
}

impl PublicKey {
    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) of either kind.
    pub fn from_pem(text: &str) -> Result<PublicKey> {
        if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_pem(text) {
            return Ok(PublicKey::Ed25519(k));
        }
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_pem(text) {
            return Ok(PublicKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_pem(text) {
            return Ok(PublicKey::P384(k));
        }
        Err(Error::new(ProvenanceErrorKind::Signature(
            "not a PEM public key of a supported kind (Ed25519, ECDSA P-256, ECDSA P-384)".to_string(),
        )))
    }

    /// Reads a PEM public key file (at most 64 KiB); errors name the file.
    pub fn from_pem_file(path: &std::path::Path) -> Result<PublicKey> {
        use std::io::Read as _;
        let located = |e: Error| e.in_file(path);
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(64 << 10).read_to_string(&mut text))
            .map_err(|e| located(e.into()))?;
        PublicKey::from_pem(&text).map_err(located)
    }

    /// The key's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            PublicKey::Ed25519(_) => "Ed25519",
            PublicKey::P256(_) => "ECDSA P-256",
            PublicKey::P384(_) => "ECDSA P-384",
        }
    }

    /// True when `sig` is this key's signature of `message`.
    pub fn verifies(&self, message: &[u8], sig: &[u8]) -> bool {
        match self {
            PublicKey::Ed25519(k) => {
                ed25519_dalek::Signature::from_slice(sig).is_ok_and(|s| k.verify_strict(message, &s).is_ok())
            }
            PublicKey::P256(k) => {
                use p256::ecdsa::signature::Verifier as _;
                let s = p256::ecdsa::Signature::from_der(sig).or_else(|_| p256::ecdsa::Signature::from_slice(sig));
                s.is_ok_and(|s| k.verify(message, &s).is_ok())
            }
            PublicKey::P384(k) => {
                use p384::ecdsa::signature::Verifier as _;
                let s = p384::ecdsa::Signature::from_der(sig).or_else(|_| p384::ecdsa::Signature::from_slice(sig));
                s.is_ok_and(|s| k.verify(message, &s).is_ok())
            }
        }
    }
}
