//! The keys model_signing signs with: ECDSA over P-256, P-384 or P-521,
//! each with the SHA-2 of its size (SHA-256, SHA-384, SHA-512), signatures
//! DER-encoded; and its key hint, the hex SHA-256 of the PEM public key.
//! RustCrypto's curve crates do the arithmetic.

use crate::provenance::ProvenanceErrorKind;
use p256::pkcs8::{DecodePublicKey as _, EncodePublicKey as _, LineEnding};
use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result};

/// A public key of one of the three curves.
#[derive(Debug, Clone)]
pub enum EcKey {
    /// P-256, signatures with SHA-256.
    P256(p256::ecdsa::VerifyingKey),
    /// P-384, signatures with SHA-384.
    P384(p384::ecdsa::VerifyingKey),
    /// P-521, signatures with SHA-512.
    P521(p521::PublicKey),
}

/// What a signature check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The signature is the key's over the message.
    Verified,
    /// A well-formed signature of this curve that does not verify.
    Failed,
}

impl EcKey {
    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) of one of the curves.
    pub fn from_pem(text: &str) -> Result<EcKey> {
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_pem(text) {
            return Ok(EcKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_pem(text) {
            return Ok(EcKey::P384(k));
        }
        if let Ok(k) = p521::PublicKey::from_public_key_pem(text) {
            return Ok(EcKey::P521(k));
        }
        Err(Error::new(ProvenanceErrorKind::Signature(
            "not a PEM public key of a curve model_signing signs with (ECDSA P-256, P-384, P-521)".to_string(),
        )))
    }

    /// Reads a DER SubjectPublicKeyInfo (a certificate's key).
    pub fn from_spki_der(der: &[u8]) -> Result<EcKey> {
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_der(der) {
            return Ok(EcKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_der(der) {
            return Ok(EcKey::P384(k));
        }
        if let Ok(k) = p521::PublicKey::from_public_key_der(der) {
            return Ok(EcKey::P521(k));
        }
        Err(Error::schema("the signing certificate's key is not ECDSA P-256, P-384 or P-521"))
    }

    /// The curve's name, for messages.
    pub fn curve(&self) -> &'static str {
        match self {
            EcKey::P256(_) => "P-256",
            EcKey::P384(_) => "P-384",
            EcKey::P521(_) => "P-521",
        }
    }

    /// model_signing's hint: the hex SHA-256 of the key's PEM
    /// SubjectPublicKeyInfo as `cryptography` writes it (64-column base64,
    /// `\n` line ends).
    pub fn hint(&self) -> Option<String> {
        let pem = match self {
            EcKey::P256(k) => k.to_public_key_pem(LineEnding::LF).ok()?,
            EcKey::P384(k) => k.to_public_key_pem(LineEnding::LF).ok()?,
            EcKey::P521(k) => k.to_public_key_pem(LineEnding::LF).ok()?,
        };
        Some(hex::encode(Sha256::digest(pem.as_bytes())))
    }

    /// Checks a DER signature of `message`. A signature that is not DER, or
    /// whose numbers are too large for this key's curve (another curve's
    /// signature), is refused: an error, not a failed check.
    pub fn check(&self, message: &[u8], der: &[u8]) -> Result<Check> {
        use p256::ecdsa::signature::Verifier as _;
        let verified = match self {
            EcKey::P256(k) => p256::ecdsa::Signature::from_der(der).ok().map(|s| k.verify(message, &s).is_ok()),
            EcKey::P384(k) => p384::ecdsa::Signature::from_der(der).ok().map(|s| k.verify(message, &s).is_ok()),
            EcKey::P521(k) => {
                let key = p521::ecdsa::VerifyingKey::from_sec1_bytes(&k.to_sec1_bytes())
                    .map_err(|_| Error::schema("a P-521 key that is not a curve point"))?;
                p521::ecdsa::Signature::from_der(der).ok().map(|s| key.verify(message, &s).is_ok())
            }
        };
        match verified {
            Some(true) => Ok(Check::Verified),
            Some(false) => Ok(Check::Failed),
            None => Err(Error::schema(match signature_curve(der) {
                Some(other) => format!(
                    "the signature is an ECDSA {other} signature, and the key is {}: a key of another curve",
                    self.curve()
                ),
                None => "the signature is not a DER-encoded ECDSA signature".to_string(),
            })),
        }
    }
}

/// The smallest curve whose signatures `der` could be, if it is one.
fn signature_curve(der: &[u8]) -> Option<&'static str> {
    if p256::ecdsa::Signature::from_der(der).is_ok() {
        Some("P-256")
    } else if p384::ecdsa::Signature::from_der(der).is_ok() {
        Some("P-384")
    } else if p521::ecdsa::Signature::from_der(der).is_ok() {
        Some("P-521")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer as _;

    #[test]
    fn each_curve_verifies_with_its_hash_and_refuses_another_curves_signature() {
        let k256 = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
        let k384 = p384::ecdsa::SigningKey::from_slice(&[7; 48]).unwrap();
        let pem256 = k256.verifying_key().to_public_key_pem(LineEnding::LF).unwrap();
        let pem384 = k384.verifying_key().to_public_key_pem(LineEnding::LF).unwrap();
        let (e256, e384) = (EcKey::from_pem(&pem256).unwrap(), EcKey::from_pem(&pem384).unwrap());
        assert_eq!((e256.curve(), e384.curve()), ("P-256", "P-384"));
        assert_eq!(e256.hint().unwrap(), hex::encode(Sha256::digest(pem256.as_bytes())));
        let s256: p256::ecdsa::Signature = k256.sign(b"m");
        let s384: p384::ecdsa::Signature = k384.sign(b"m");
        let (d256, d384) = (s256.to_der().as_bytes().to_vec(), s384.to_der().as_bytes().to_vec());
        assert_eq!(e256.check(b"m", &d256).unwrap(), Check::Verified);
        assert_eq!(e256.check(b"n", &d256).unwrap(), Check::Failed);
        assert_eq!(e384.check(b"m", &d384).unwrap(), Check::Verified);
        // A P-384 signature's numbers do not fit P-256.
        let e = e256.check(b"m", &d384).unwrap_err().to_string();
        assert!(e.contains("another curve"), "{e}");
        assert!(e256.check(b"m", &[0x30, 0x02, 0x01]).unwrap_err().to_string().contains("not a DER"));
        assert!(EcKey::from_pem("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n").is_err());
    }
}
