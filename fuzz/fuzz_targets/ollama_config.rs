//! Fuzz target: the Ollama config reader on arbitrary bytes, as
//! `ollama::Model::open` reads a config blob: strict JSON
//! (`json::parse_strict` at the manifest's depth), then
//! `ollama::config::content` (derived members dropped, zero values pruned)
//! and `content_digest` (the canonical encoding `J`, hashed).
//!
//! Oracles, besides no panic (debug assertions on: no overflow), abort,
//! out-of-memory or timeout: the content holds no derived member, and
//! `capabilities` only when the config declared `capabilities_explicit`;
//! no object member is a zero value, at any depth; pruning again changes
//! nothing; and the digest does not depend on the order members were
//! written in.
#![no_main]

use gguf_digest_core::json::{Json, parse_strict};
use gguf_digest_formats::ollama::config::{DERIVED, content, content_digest, encode};
use gguf_digest_formats::ollama::manifest::{MAX_DEPTH, MAX_MANIFEST};
use libfuzzer_sys::fuzz_target;
use sha2::{Digest as _, Sha256};

fuzz_target!(|data: &[u8]| {
    // The model reads at most MAX_MANIFEST bytes of a config blob.
    if data.len() as u64 > MAX_MANIFEST {
        return;
    }
    let Ok(config) = parse_strict(data, MAX_DEPTH) else { return };
    let c = match content(&config) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            return;
        }
    };
    let members = c.as_object().expect("the content is not an object");
    let explicit = matches!(config.get("capabilities_explicit"), Some(Json::Bool(true)));
    for (k, _) in members {
        assert!(!DERIVED.contains(&k.as_str()), "derived member {k:?} kept");
        assert!(explicit || k != "capabilities", "capabilities kept without capabilities_explicit");
    }
    check_pruned(&c);
    // The digest is H(J(content)).
    let mut j = Vec::new();
    encode(&c, &mut j);
    let digest = content_digest(&c);
    assert_eq!(<[u8; 32]>::from(Sha256::digest(&j)), digest);
    // Pruning leaves nothing to prune. (Kept capabilities are the exception:
    // capabilities_explicit kept them and, being derived, is gone, so a
    // second pass would drop them.)
    if c.get("capabilities").is_none() {
        assert_eq!(content(&c).ok().as_ref(), Some(&c), "pruning the content again changed it");
    }
    // Member order is layout, not content.
    let reversed = reverse_members(&config);
    let again = content(&reversed).expect("refused the same config with its members reversed");
    assert_eq!(content_digest(&again), digest, "the digest depends on member order");
});

/// A zero value, as Go's `omitempty` sees it, once pruned.
fn zero(v: &Json) -> bool {
    match v {
        Json::Null | Json::Bool(false) | Json::Uint(0) => true,
        Json::Number(_, t) => t.split(['e', 'E']).next().unwrap_or("").bytes().all(|b| b"0-+.".contains(&b)),
        Json::Str(s) => s.is_empty(),
        Json::Array(a) => a.is_empty(),
        Json::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// No object member, at any depth, is a zero value (array elements may be).
fn check_pruned(v: &Json) {
    match v {
        Json::Object(m) => {
            for (k, e) in m {
                assert!(!zero(e), "member {k:?} is a zero value after pruning: {e:?}");
                check_pruned(e);
            }
        }
        Json::Array(a) => a.iter().for_each(check_pruned),
        _ => {}
    }
}

/// The same value with every object's members in reverse order.
fn reverse_members(v: &Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(m.iter().rev().map(|(k, e)| (k.clone(), reverse_members(e))).collect()),
        Json::Array(a) => Json::Array(a.iter().map(reverse_members).collect()),
        other => other.clone(),
    }
}
