//! Fuzz target: an OpenSSF model signature on arbitrary bytes: the bundle
//! reader (`oms::bundle::read`), the signed statement's reader
//! (`oms::manifest::read`, on the bytes themselves and on the bundle's
//! payload), and the key method's check of the signature with a P-256 key.
//!
//! Oracles, besides no panic (debug assertions on: no overflow), abort,
//! out-of-memory or timeout: a bundle read has exactly one signature and
//! came from strict JSON; a manifest read names no resource twice, every
//! name is one `locate` could look for (relative, no `..`), shards are
//! within their size and in order of start and end, and the subject's
//! digest is the digest of the resource digests.
#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use gguf_digest_core::json::parse_strict;
use gguf_digest_provenance::provenance::oms::{Method, bundle, ec::EcKey, manifest, verify_bytes};
use gguf_digest_provenance::provenance::{MAX_DEPTH, PAYLOAD_TYPE, envelope};
use libfuzzer_sys::fuzz_target;

fn key() -> &'static [EcKey; 1] {
    static KEY: OnceLock<[EcKey; 1]> = OnceLock::new();
    KEY.get_or_init(|| {
        let p256 = "-----BEGIN PUBLIC KEY-----\n\
            MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEsX42h3m4cjcGxXoySzwcO55KefKY\n\
            AhYGE4OhTcF9fFrYKUoF1zXysCZ38nK3WWAzmKGQTFXIK3KWt3tt1Vd4TA==\n\
            -----END PUBLIC KEY-----\n";
        [EcKey::from_pem(p256).expect("P-256 key")]
    })
}

fuzz_target!(|data: &[u8]| {
    check_manifest(data);
    let Ok(b) = bundle::read(data) else { return };
    assert!(parse_strict(data, MAX_DEPTH).is_ok(), "a bundle from text the JSON reader refuses");
    let message = envelope::pae(PAYLOAD_TYPE, &b.payload);
    let _ = key()[0].check(&message, &b.signature);
    // The whole path of the key method: an error or a manifest, no panic.
    if let Ok(v) = verify_bytes(data, Method::Key(key())) {
        assert_eq!(Some(&v.manifest), manifest::read(&b.payload).ok().as_ref());
    }
    check_manifest(&b.payload);
});

fn check_manifest(bytes: &[u8]) {
    let Ok(m) = manifest::read(bytes) else { return };
    let mut seen = HashSet::new();
    for r in &m.resources {
        assert!(seen.insert((r.path.clone(), r.range)), "a resource named twice: {}", r.path);
        assert!(manifest::unsafe_name(&r.path).is_none(), "a name that may leave the model: {:?}", r.path);
        if let (Some((start, end)), manifest::Method::Shards(size)) = (r.range, m.serialization.method) {
            assert!(start < end && end - start <= size && start % size == 0, "{:?}", r.range);
        }
    }
    let subject = manifest::subject_digest(bytes).expect("a manifest read has its subject");
    let mut h = <sha2::Sha256 as sha2::Digest>::new();
    for r in &m.resources {
        sha2::Digest::update(&mut h, r.digest);
    }
    assert_eq!(<[u8; 32]>::from(sha2::Digest::finalize(h)), subject, "the root digest is not the resources'");
}
