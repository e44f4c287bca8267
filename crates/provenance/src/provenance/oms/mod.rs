//! OpenSSF Model Signing (model_signing 1.1, predicate
//! `https://model_signing/signature/v1.0`): a Sigstore bundle holding a DSSE
//! envelope of a statement whose resources are the digests of every file,
//! or of every shard of every file, of a model directory
//! (docs/adr/0027-openssf-model-signing.md).
//!
//! - `bundle`: the bundle read strictly (one signature, the material);
//! - `manifest`: the signed statement read strictly (names, shards, root
//!   digest, the `gguf_digest` member);
//! - `ec`: the key method's keys and signatures (P-256, P-384, P-521);
//! - `certificate`: the certificate method (a chain to the user's CA,
//!   checked at the leaf's notBefore as model_signing does);
//! - `keyless`: the Sigstore method, through `sigstore-verify`;
//! - `check`: the model recomputed and compared, file by file;
//! - `relayout`: the directory label a `gguf-digest sign --format oms`
//!   signature also signs, computed again when the files differ.
//!
//! [`verify_signature`] checks the signature before the statement is read
//! as a manifest; [`check::locate_all`] refuses names that lead out before
//! any file is opened.

pub mod bundle;
pub mod certificate;
pub mod check;
pub mod ec;
pub mod keyless;
pub mod manifest;
pub mod relayout;

use crate::provenance::ProvenanceErrorKind;
use std::path::Path;

use crate::error::{Error, Result};
use crate::provenance::{PAYLOAD_TYPE, envelope, read_limited};

pub use bundle::is_model_signing;

/// How the signer is to be known.
#[derive(Debug, Clone, Copy)]
pub enum Method<'a> {
    /// The signature verifies with one of these keys (`--key`).
    Key(&'a [ec::EcKey]),
    /// The bundle's signing certificate chains to one of these PEM CA
    /// certificates (`--certificate-chain`).
    Certificate(&'a [u8]),
    /// Sigstore keyless: a Fulcio certificate for `identity` from
    /// `issuer`, logged or timestamped, under the trust root (the
    /// public-good one shipped with the tool when `None`).
    Keyless {
        /// The certificate's identity (its SAN), exactly.
        identity: &'a str,
        /// The OIDC issuer, exactly.
        issuer: &'a str,
        /// A `trusted_root.json`'s text.
        trusted_root: Option<&'a str>,
    },
}

/// A bundle whose signature held, and the manifest it signs.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The manifest.
    pub manifest: manifest::Manifest,
    /// Who signed it, for the report (`key P-256`, the certificate's subject).
    pub signer: String,
}

fn failed<T>(why: impl Into<String>) -> Result<T> {
    Err(Error::new(ProvenanceErrorKind::SignatureFailed(why.into())))
}

/// Reads the bundle at `file` and checks its signature with `method`;
/// only then is its statement read as a manifest. Errors name the file.
pub fn verify_signature(file: &Path, method: Method<'_>) -> Result<Verified> {
    verify_bytes(&read_limited(file).map_err(|e| e.in_file(file))?, method).map_err(|e| e.in_file(file))
}

/// [`verify_signature`] of a bundle's bytes.
pub fn verify_bytes(bytes: &[u8], method: Method<'_>) -> Result<Verified> {
    let b = bundle::read(bytes)?;
    let pae = envelope::pae(PAYLOAD_TYPE, &b.payload);
    let signer = match method {
        Method::Key(keys) => {
            if keys.is_empty() {
                return Err(Error::new(ProvenanceErrorKind::SignatureRequired));
            }
            let bundle::Material::PublicKey { hint } = &b.material else {
                return Err(Error::schema(
                    "the bundle carries a certificate, not a key: verify it with --certificate-chain or --identity/--issuer",
                ));
            };
            // model_signing's rule: a hint that names another key is a
            // mismatch, whatever the signature.
            let candidates: Vec<&ec::EcKey> =
                keys.iter().filter(|k| hint.as_ref().is_none_or(|h| k.hint().as_ref() == Some(h))).collect();
            if candidates.is_empty() {
                return failed("the bundle's key hint names another public key than the one given");
            }
            let mut verified = None;
            for k in &candidates {
                if k.check(&pae, &b.signature)? == ec::Check::Verified {
                    verified = Some(k);
                    break;
                }
            }
            match verified {
                Some(k) => format!("key ECDSA {}", k.curve()),
                None => return failed("the DSSE signature does not verify with the given key"),
            }
        }
        Method::Certificate(pem) => {
            let bundle::Material::Certificates(certs) = &b.material else {
                return Err(Error::schema("the bundle names a key, not a certificate: verify it with --key"));
            };
            certificate::verify(certs, pem, &pae, &b.signature)?
        }
        Method::Keyless { identity, issuer, trusted_root } => {
            let bundle::Material::Certificates(_) = &b.material else {
                return Err(Error::schema("the bundle names a key, not a certificate: verify it with --key"));
            };
            if !b.has_log_or_timestamp {
                return Err(Error::schema(
                    "the bundle has no transparency-log entry and no signed timestamp: it is not a keyless Sigstore signature (a certificate-method one? give --certificate-chain)",
                ));
            }
            let root_digest = manifest::subject_digest(&b.payload)?;
            keyless::verify(bytes, root_digest, identity, issuer, trusted_root)?
        }
    };
    Ok(Verified { manifest: manifest::read(&b.payload)?, signer })
}

/// Whether the file at `path` is a model_signing bundle (read up to the
/// size a bundle may have; a larger or unreadable file is not one, and the
/// path that reads it says why).
pub fn is_model_signing_file(path: &Path) -> bool {
    read_limited(path).is_ok_and(|b| is_model_signing(&b))
}

/// Reads at most this much of a key, certificate chain or trust root file.
const MAX_MATERIAL: u64 = 4 << 20;

/// Reads a key, certificate chain or trust root file (at most 4 MiB);
/// errors name it.
pub fn read_material(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read as _;
    let mut out = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_MATERIAL).read_to_end(&mut out))
        .map_err(|e| Error::from(e).in_file(path))?;
    Ok(out)
}

/// Reads a PEM public key file of one of model_signing's curves.
pub fn read_key(path: &Path) -> Result<ec::EcKey> {
    let text = read_material(path)?;
    ec::EcKey::from_pem(&String::from_utf8_lossy(&text)).map_err(|e| e.in_file(path))
}
