//! Writing a Sigstore bundle (protobuf-specs `Bundle`, media type v0.3, in
//! its canonical protobuf JSON: camelCase members) holding one DSSE
//! envelope and, as verification material, the hint of the public key
//! that signed it: what cosign (`verify-blob-attestation
//! --new-bundle-format --key`), sigstore-go, sigstore-python's models and
//! `model_signing` read. A key-signed bundle has no transparency-log entry
//! and no timestamp: it is signed offline (docs/adr/0026-signing.md).

use base64::Engine as _;
use serde_json::json;

use crate::provenance::envelope::pae;
use crate::provenance::private_keys::SigningKey;

/// The media type of a v0.3 bundle.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// A bundle of `payload` (of DSSE type `payload_type`) signed by `key`
/// over DSSE's pre-authentication encoding, naming the key by `hint`:
/// compact JSON with a final newline. Only the members the specification
/// defines are written (`model_signing` refuses any other), with
/// `tlogEntries` empty as `model_signing` writes it, and the signature's
/// `keyid` empty as cosign writes it.
pub fn write(payload: &[u8], payload_type: &str, key: &SigningKey, hint: &str) -> Vec<u8> {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let sig = key.sign(&pae(payload_type, payload));
    let bundle = json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {
            "publicKey": { "hint": hint },
            "tlogEntries": [],
        },
        "dsseEnvelope": {
            "payload": b64(payload),
            "payloadType": payload_type,
            "signatures": [{ "sig": b64(&sig), "keyid": "" }],
        },
    });
    let mut out = bundle.to_string().into_bytes();
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::envelope::{Signed, read};
    use crate::provenance::{PAYLOAD_TYPE, private_keys::SigningKey};

    #[test]
    fn the_envelope_reader_reads_it_back_and_the_signature_holds() {
        let key = SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[5; 32]));
        let bytes = write(b"{\"_type\":1}\n", PAYLOAD_TYPE, &key, "h");
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.starts_with(r#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"h"},"tlogEntries":[]},"dsseEnvelope":{"payload":""#), "{text}");
        let Signed::Dsse { payload, signatures, from_bundle } = read(&bytes).unwrap() else { panic!() };
        assert!(from_bundle);
        assert_eq!(payload, b"{\"_type\":1}\n");
        assert_eq!(signatures.len(), 1);
        assert!(key.public_key().verifies(&pae(PAYLOAD_TYPE, &payload), &signatures[0].sig));
        // Deterministic: the same bytes again.
        assert_eq!(write(b"{\"_type\":1}\n", PAYLOAD_TYPE, &key, "h"), bytes);
    }
}
