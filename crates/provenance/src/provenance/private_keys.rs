//! Private keys `sign` signs with: Ed25519, ECDSA P-256 and P-384, read
//! from PEM as PKCS#8 (`PRIVATE KEY`), SEC1 (`EC PRIVATE KEY`), encrypted
//! PKCS#8 (`ENCRYPTED PRIVATE KEY`: PBES2 with PBKDF2 or scrypt, as
//! `openssl pkcs8 -topk8` writes it) or cosign's encrypted key files
//! (`cosign_key`). The password is asked for only when the file is
//! encrypted, through a callback (docs/adr/0026-signing.md).
//!
//! Signatures are deterministic: Ed25519 by definition, ECDSA with RFC 6979
//! nonces (RustCrypto's signers), so one key signs one statement to one
//! bundle, byte for byte.

use crate::provenance::ProvenanceErrorKind;
use pkcs8::der::Decode as _;
use pkcs8::{DecodePrivateKey as _, EncodePublicKey as _, ObjectIdentifier};
use sha2::Digest as _;
use zeroize::Zeroizing;

use crate::error::{Error, Result};
use crate::provenance::cosign_key;
use crate::provenance::keys::PublicKey;

/// The most bytes of a key file read.
pub const MAX_KEY_FILE: u64 = 64 << 10;

const ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// Named curves, for saying which one a key is on when it is refused.
const CURVES: [(&str, &str); 5] = [
    ("1.2.840.10045.3.1.7", "P-256"),
    ("1.3.132.0.34", "P-384"),
    ("1.3.132.0.35", "P-521"),
    ("1.3.132.0.10", "secp256k1"),
    ("1.3.36.3.3.2.8.1.1.7", "brainpoolP256r1"),
];

/// A key that signs.
#[derive(Clone)]
pub enum SigningKey {
    /// Ed25519 (RFC 8032): 64-byte signatures of the message itself.
    Ed25519(ed25519_dalek::SigningKey),
    /// ECDSA over P-256 with SHA-256; DER signatures.
    P256(p256::ecdsa::SigningKey),
    /// ECDSA over P-384 with SHA-384; DER signatures.
    P384(p384::ecdsa::SigningKey),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        write!(f, "SigningKey({})", self.kind())
    }
}

/// What kind of encrypted key file a password is asked for: cosign's
/// files also take `COSIGN_PASSWORD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encrypted {
    /// PKCS#8 `ENCRYPTED PRIVATE KEY` (openssl, Python's cryptography).
    Pkcs8,
    /// cosign's `ENCRYPTED SIGSTORE PRIVATE KEY`.
    Cosign,
}

/// Where a password comes from: called once, only for an encrypted file.
pub type PasswordSource<'a> = &'a mut dyn FnMut(Encrypted) -> Result<Zeroizing<String>>;

fn bad(what: impl Into<String>) -> Error {
    Error::new(ProvenanceErrorKind::PrivateKey(what.into()))
}

const KINDS: &str = "Ed25519, ECDSA P-256 or P-384";

impl SigningKey {
    /// Reads a PEM private key; `password` is asked only if it is
    /// encrypted.
    pub fn from_pem(text: &[u8], password: PasswordSource<'_>) -> Result<SigningKey> {
        let (label, der) = pkcs8::der::pem::decode_vec(text).map_err(|e| {
            let legacy = if text.windows(9).any(|w| w == b"Proc-Type") {
                " (an OpenSSL legacy encrypted PEM: convert it with `openssl pkcs8 -topk8`)"
            } else {
                ""
            };
            bad(format!("not a PEM private key: {e}{legacy}"))
        })?;
        let der = Zeroizing::new(der);
        match label {
            "PRIVATE KEY" => from_pkcs8(&der),
            "EC PRIVATE KEY" => from_sec1(&der),
            "ENCRYPTED PRIVATE KEY" => {
                let info = pkcs8::EncryptedPrivateKeyInfo::from_der(&der)
                    .map_err(|e| bad(format!("not an encrypted PKCS#8 key: {e}")))?;
                check_costs(&info)?;
                let pw = password(Encrypted::Pkcs8)?;
                let plain = info.decrypt(pw.as_bytes()).map_err(|_| {
                    bad("wrong password (or a damaged file): the encrypted PKCS#8 key does not decrypt")
                })?;
                from_pkcs8(plain.as_bytes())
            }
            l if cosign_key::PEM_LABELS.contains(&l) => {
                let pw = password(Encrypted::Cosign)?;
                from_pkcs8(&cosign_key::decrypt(&der, pw.as_bytes())?)
            }
            "PUBLIC KEY" => Err(bad("this is a public key; sign takes the private key (verify takes this one)")),
            other => Err(bad(format!("a PEM \"{other}\" is not a private key this tool reads ({KINDS})"))),
        }
    }

    /// The key's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            SigningKey::Ed25519(_) => "Ed25519",
            SigningKey::P256(_) => "ECDSA P-256",
            SigningKey::P384(_) => "ECDSA P-384",
        }
    }

    /// The signature of `message`: Ed25519's 64 bytes, or ECDSA's DER
    /// (SHA-256 for P-256, SHA-384 for P-384, RFC 6979 nonces).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            SigningKey::Ed25519(k) => ed25519_dalek::Signer::sign(k, message).to_bytes().to_vec(),
            SigningKey::P256(k) => {
                let s: p256::ecdsa::Signature = p256::ecdsa::signature::Signer::sign(k, message);
                s.to_der().as_bytes().to_vec()
            }
            SigningKey::P384(k) => {
                let s: p384::ecdsa::Signature = p384::ecdsa::signature::Signer::sign(k, message);
                s.to_der().as_bytes().to_vec()
            }
        }
    }

    /// The public key, as `verify --key` takes it.
    pub fn public_key(&self) -> PublicKey {
        match self {
            SigningKey::Ed25519(k) => PublicKey::Ed25519(k.verifying_key()),
            SigningKey::P256(k) => PublicKey::P256(*k.verifying_key()),
            SigningKey::P384(k) => PublicKey::P384(*k.verifying_key()),
        }
    }

    /// The public key as DER SubjectPublicKeyInfo.
    pub fn public_key_der(&self) -> Result<Vec<u8>> {
        let doc = match self {
            SigningKey::Ed25519(k) => k.verifying_key().to_public_key_der(),
            SigningKey::P256(k) => k.verifying_key().to_public_key_der(),
            SigningKey::P384(k) => k.verifying_key().to_public_key_der(),
        };
        doc.map(|d| d.into_vec()).map_err(|e| Error::internal(&format!("encoding a public key: {e}")))
    }

    /// The public key as PEM, as openssl and Python's cryptography write it
    /// (`-----BEGIN PUBLIC KEY-----`, 64-column base64, LF line ends).
    pub fn public_key_pem(&self) -> Result<String> {
        let der = self.public_key_der()?;
        pkcs8::der::pem::encode_string("PUBLIC KEY", pkcs8::LineEnding::LF, &der)
            .map_err(|e| Error::internal(&format!("encoding a public key: {e}")))
    }

    /// cosign's key hint (sigstore-go, `cosign sign-blob --new-bundle-format`):
    /// standard base64 of the SHA-256 of the DER public key.
    pub fn cosign_hint(&self) -> Result<String> {
        use base64::Engine as _;
        let digest = sha2::Sha256::digest(self.public_key_der()?);
        Ok(base64::engine::general_purpose::STANDARD.encode(digest))
    }

    /// `model_signing`'s key hint: hex SHA-256 of the PEM public key (its
    /// verifier refuses any other).
    pub fn model_signing_hint(&self) -> Result<String> {
        Ok(hex::encode(sha2::Sha256::digest(self.public_key_pem()?.as_bytes())))
    }
}

/// Refuses PBES2 parameters that would cost more than a key file should
/// (a hostile file can ask scrypt for gigabytes): scrypt at most 2^20·8
/// blocks, PBKDF2 at most ten million rounds.
fn check_costs(info: &pkcs8::EncryptedPrivateKeyInfo<'_>) -> Result<()> {
    let Some(pbes2) = info.encryption_algorithm.pbes2() else {
        return Err(bad("the encrypted key is not PBES2 (openssl pkcs8 -topk8 -v2 aes-256-cbc writes it)"));
    };
    if let Some(s) = pbes2.kdf.scrypt() {
        let memory = 128u64.saturating_mul(s.cost_parameter).saturating_mul(u64::from(s.block_size));
        if memory > 1 << 30 || s.parallelization > 16 {
            return Err(bad(format!(
                "scrypt parameters N={} r={} p={} ask for more than 1 GiB or 16 lanes",
                s.cost_parameter, s.block_size, s.parallelization
            )));
        }
    }
    if let Some(p) = pbes2.kdf.pbkdf2() {
        if p.iteration_count > 10_000_000 {
            return Err(bad(format!("PBKDF2 with {} iterations (at most ten million)", p.iteration_count)));
        }
    }
    Ok(())
}

fn curve_name(oid: &ObjectIdentifier) -> String {
    let text = oid.to_string();
    CURVES.iter().find(|(o, _)| *o == text).map_or(text, |(_, n)| (*n).to_string())
}

/// A PKCS#8 PrivateKeyInfo of a kind this signs with, or an error naming
/// the kind or curve it is.
fn from_pkcs8(der: &[u8]) -> Result<SigningKey> {
    let info = pkcs8::PrivateKeyInfo::from_der(der).map_err(|e| bad(format!("not a PKCS#8 private key: {e}")))?;
    let alg = info.algorithm.oid;
    let decode = |e: pkcs8::Error| bad(format!("a damaged key: {e}"));
    if alg == ED25519 {
        return ed25519_dalek::SigningKey::from_pkcs8_der(der).map(SigningKey::Ed25519).map_err(decode);
    }
    if alg == EC_PUBLIC_KEY {
        let curve = info.algorithm.parameters_oid().map_err(|_| bad("an EC key that names no curve"))?;
        return match curve_name(&curve).as_str() {
            "P-256" => p256::ecdsa::SigningKey::from_pkcs8_der(der).map(SigningKey::P256).map_err(decode),
            "P-384" => p384::ecdsa::SigningKey::from_pkcs8_der(der).map(SigningKey::P384).map_err(decode),
            other => Err(bad(format!("an ECDSA key over {other}: not a curve this tool signs with ({KINDS})"))),
        };
    }
    let kind = if alg == RSA { "an RSA key".to_string() } else { format!("a key of algorithm {alg}") };
    Err(bad(format!("{kind}: not a kind this tool signs with ({KINDS})")))
}

/// A SEC1 `EC PRIVATE KEY` (what `openssl ecparam -genkey` writes): the
/// curve crates check the curve it names.
fn from_sec1(der: &[u8]) -> Result<SigningKey> {
    if let Ok(k) = p256::SecretKey::from_sec1_der(der) {
        return Ok(SigningKey::P256(k.into()));
    }
    if let Ok(k) = p384::SecretKey::from_sec1_der(der) {
        return Ok(SigningKey::P384(k.into()));
    }
    Err(bad(format!("a SEC1 EC private key that is damaged or not on a curve this tool signs with ({KINDS})")))
}

/// A key file as read: the key, and a warning when the file holds an
/// unencrypted key that other users may read (ssh's rule; it is a warning,
/// not a refusal).
#[derive(Debug)]
pub struct KeyFile {
    /// The key.
    pub key: SigningKey,
    /// Set when the file is unencrypted and readable by group or others.
    pub warning: Option<String>,
}

/// Reads a private key file (at most [`MAX_KEY_FILE`] bytes); errors name
/// the file.
pub fn read_key_file(path: &std::path::Path, password: PasswordSource<'_>) -> Result<KeyFile> {
    use std::io::Read as _;
    use std::os::unix::fs::PermissionsExt as _;
    let located = |e: Error| e.in_file(path);
    let file = std::fs::File::open(path).map_err(|e| located(e.into()))?;
    let mode = file.metadata().map_err(|e| located(e.into()))?.permissions().mode();
    let mut text = Zeroizing::new(Vec::new());
    file.take(MAX_KEY_FILE.saturating_add(1)).read_to_end(&mut text).map_err(|e| located(e.into()))?;
    if text.len() as u64 > MAX_KEY_FILE {
        return Err(located(bad(format!("larger than {MAX_KEY_FILE} bytes: not a key file"))));
    }
    let encrypted = text.windows(9).any(|w| w == b"ENCRYPTED");
    let key = SigningKey::from_pem(&text, password).map_err(located)?;
    let warning = (!encrypted && mode & 0o077 != 0).then(|| {
        format!(
            "WARNING: UNPROTECTED PRIVATE KEY FILE! Permissions {:04o} for '{}' are too open: other users can \
             read this unencrypted key (chmod 600 it, or encrypt it)",
            mode & 0o7777,
            path.display()
        )
    });
    Ok(KeyFile { key, warning })
}

#[cfg(test)]
#[path = "private_keys_tests.rs"]
mod tests;
