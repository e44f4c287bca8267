//! The keyless Sigstore method, entirely through `sigstore-verify`
//! (sigstore-rust): the certificate chained to Fulcio's CA in the trust
//! root at the time the log entry or signed timestamp proves, its SCT, the
//! Rekor entry's signed inclusion (promise or checkpoint), the identity and
//! issuer, and the DSSE signature; all offline, from the bundle and the
//! trust root (shipped: Sigstore's public-good one; or `--trusted-root`).

use crate::provenance::ProvenanceErrorKind;
use sigstore_verify::trust_root::{SIGSTORE_PRODUCTION_TRUSTED_ROOT, TrustedRoot};
use sigstore_verify::types::{Bundle, Sha256Hash};
use sigstore_verify::{VerificationPolicy, Verifier};

use crate::error::{Error, Result};

/// Verifies `bundle_json` keylessly; `root_digest` is the statement's
/// subject digest (the artifact the envelope must name).
pub fn verify(
    bundle_json: &[u8],
    root_digest: [u8; 32],
    identity: &str,
    issuer: &str,
    trusted_root: Option<&str>,
) -> Result<String> {
    let root_text = trusted_root.unwrap_or(SIGSTORE_PRODUCTION_TRUSTED_ROOT);
    let root = TrustedRoot::from_json(root_text).map_err(|e| Error::schema(format!("the trusted root: {e}")))?;
    let text = std::str::from_utf8(bundle_json).map_err(|_| Error::schema("the bundle is not UTF-8"))?;
    let bundle = Bundle::from_json(text).map_err(|e| Error::schema(format!("Sigstore bundle: {e}")))?;
    let verifier = Verifier::new(&root).map_err(|e| Error::schema(format!("the trusted root: {e}")))?;
    let mut policy = VerificationPolicy::new(identity, issuer);
    // A private Sigstore (a trust root the user gives) may run no
    // certificate transparency log: its certificates carry no SCT to check.
    // The public-good root lists its CT logs, so SCTs are checked there.
    if root.ctlogs.is_empty() {
        policy = policy.skip_sct();
    }
    match verifier.verify(Sha256Hash::new(root_digest), &bundle, &policy) {
        Ok(_) => Ok(format!("keyless {identity} ({issuer})")),
        Err(e) => Err(refusal(e)),
    }
}

/// A bad signature is a failed check (exit 1); everything else (identity,
/// issuer, chain, validity, log) is a refusal naming what did not hold.
fn refusal(e: sigstore_verify::Error) -> Error {
    match e {
        sigstore_verify::Error::SignatureInvalid(why) => Error::new(ProvenanceErrorKind::SignatureFailed(why)),
        other => Error::schema(format!("keyless verification: {other}")),
    }
}
