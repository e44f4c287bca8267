//! Fuzz target: reading what `verify` is handed, on arbitrary bytes: a bare
//! in-toto statement, a DSSE envelope or a Sigstore bundle
//! (`provenance::envelope::read`), then, as `verify` does, the statement
//! inside it (`subjects::of_statement` or `subjects::read_payload`) and a
//! check of every signature against an Ed25519 and a P-256 key.
//!
//! Oracles, besides no panic (debug assertions on: no overflow), abort,
//! out-of-memory or timeout: the shape read is the one the JSON has; an
//! envelope written back (standard base64) reads as the same envelope; the
//! pre-authentication encoding is DSSE v1's.
#![no_main]

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use gguf_digest_core::json::parse_strict;
use gguf_digest_provenance::provenance::envelope::{Signed, pae, read};
use gguf_digest_provenance::provenance::keys::PublicKey;
use gguf_digest_provenance::provenance::{MAX_DEPTH, PAYLOAD_TYPE, subjects};
use libfuzzer_sys::fuzz_target;

/// Two fixed public keys, one of each kind `verify --key` takes.
fn keys() -> &'static [PublicKey; 2] {
    static KEYS: OnceLock<[PublicKey; 2]> = OnceLock::new();
    KEYS.get_or_init(|| {
        let ed = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGL57nQDNp4NbcqzMk7CnDVOAvNFpMni+GcAUw/pwYJI=\n-----END PUBLIC KEY-----\n";
        let p256 = "-----BEGIN PUBLIC KEY-----\n\
            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEsX42h3m4cjcGxXoySzwcO55KefKY\n\
            AhYGE4OhTcF9fFrYKUoF1zXysCZ38nK3WWAzmKGQTFXIK3KWt3tt1Vd4TA==\n\
            -----END PUBLIC KEY-----\n";
        [PublicKey::from_pem(ed).expect("Ed25519 key"), PublicKey::from_pem(p256).expect("P-256 key")]
    })
}

fuzz_target!(|data: &[u8]| {
    let signed = match read(data) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            assert!(e.path().is_none(), "a pure read named a file: {e}");
            return;
        }
    };
    let json = parse_strict(data, MAX_DEPTH).unwrap_or_else(|e| panic!("accepted text the JSON reader refuses: {e}"));
    match &signed {
        Signed::Bare(statement) => {
            assert_eq!(statement, &json, "a bare statement is not the text read");
            assert!(json.get("_type").is_some() && json.get("dsseEnvelope").is_none());
            assert!(json.get("payloadType").is_none() && json.get("payload").is_none());
            let _ = subjects::of_statement(statement).map(|s| check_subjects(&s));
        }
        Signed::Dsse { payload, signatures, from_bundle } => {
            assert_eq!(*from_bundle, json.get("dsseEnvelope").is_some(), "bundle or envelope told wrong");
            let message = pae(PAYLOAD_TYPE, payload);
            let head = format!("DSSEv1 {} {PAYLOAD_TYPE} {} ", PAYLOAD_TYPE.len(), payload.len());
            assert!(message.starts_with(head.as_bytes()) && message.ends_with(payload));
            assert_eq!(message.len(), head.len() + payload.len());
            for s in signatures {
                for k in keys() {
                    let _ = k.verifies(&message, &s.sig);
                }
            }
            // Written back with standard base64, it reads the same.
            let sigs: Vec<String> = signatures
                .iter()
                .map(|s| {
                    let keyid = serde_json::to_string(&s.keyid).expect("a string");
                    format!(r#"{{"keyid":{keyid},"sig":"{}"}}"#, STANDARD.encode(&s.sig))
                })
                .collect();
            let text = format!(
                r#"{{"payloadType":"{PAYLOAD_TYPE}","payload":"{}","signatures":[{}]}}"#,
                STANDARD.encode(payload),
                sigs.join(",")
            );
            match read(text.as_bytes()) {
                Ok(Signed::Dsse { payload: p, signatures: s, from_bundle: false }) => {
                    assert!(&p == payload && &s == signatures, "an envelope written back reads differently");
                }
                other => panic!("an envelope written back does not read as one: {other:?}"),
            }
            let _ = subjects::read_payload(payload).map(|s| check_subjects(&s));
        }
    }
});

/// What a statement's reader promises about the subjects it returns.
fn check_subjects(list: &[subjects::Subject]) {
    assert!(!list.is_empty(), "accepted a statement without subjects");
    for s in list {
        assert_eq!(s.label.len(), 64, "a label that is not 64 digits: {:?}", s.label);
        assert!(s.label.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')), "{:?}", s.label);
    }
}
