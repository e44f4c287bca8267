//! Fuzz target: the Ollama manifest reader on arbitrary bytes.
//!
//! `gguf_digest_formats::ollama::manifest::parse_manifest` must return Ok or a typed
//! error for every input (a panic, an abort, an out-of-memory or a timeout
//! is a finding; built with debug assertions, so an integer overflow is a
//! panic too), and a manifest it accepts must say exactly what its JSON says:
//! one layer per element of `layers`, in order, each digest reduced to the
//! 64 lowercase hex digits a blob's file name is made of (so that no digest
//! can name a path outside the store's `blobs/`).
#![no_main]

use gguf_digest_core::json::{Json, parse_strict};
use gguf_digest_formats::ollama::manifest::{Layer, MAX_DEPTH, MAX_MANIFEST, parse_manifest};
use gguf_digest_formats::ollama::name::digest_hex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let m = match parse_manifest(data) {
        Ok(m) => m,
        Err(e) => {
            // Every rejection says what is wrong, and a pure parse names no file.
            assert!(!e.detail().is_empty(), "an error without a message");
            assert!(e.path().is_none(), "a pure parse named a file: {e}");
            return;
        }
    };
    assert!(data.len() as u64 <= MAX_MANIFEST, "accepted a manifest over the size limit");
    // The manifest was strict JSON; the layers are its `layers`, in order.
    let json = parse_strict(data, MAX_DEPTH).unwrap_or_else(|e| panic!("accepted text the JSON reader refuses: {e}"));
    assert_eq!(json.get("schemaVersion"), Some(&Json::Uint(2)), "accepted a schemaVersion other than 2");
    let listed = json.get("layers").and_then(Json::as_array).expect("accepted a manifest without a layers array");
    assert_eq!(listed.len(), m.layers.len(), "layers lost or added");
    let config = json.get("config").expect("accepted a manifest without a config");
    check_layer(&m.config, config);
    for (layer, written) in m.layers.iter().zip(listed) {
        check_layer(layer, written);
    }
    // What a progress bar sums (ollama::manifest_bytes) cannot overflow.
    let _ = m.layers.iter().chain([&m.config]).fold(0u64, |t, l| t.saturating_add(l.size));
});

/// A layer holds what its JSON object says, and its hex is a plain file name part.
fn check_layer(layer: &Layer, written: &Json) {
    assert_eq!(written.get("mediaType").and_then(Json::as_str), Some(layer.media_type.as_str()));
    assert_eq!(written.get("digest").and_then(Json::as_str), Some(layer.digest.as_str()));
    assert_eq!(written.get("size").and_then(Json::as_u64), Some(layer.size));
    assert_eq!(written.get("name").and_then(Json::as_str).unwrap_or_default(), layer.name);
    assert_eq!(layer.hex.len(), 64, "a digest's hex is not 64 digits: {:?}", layer.hex);
    assert!(layer.hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')), "hex not lowercase: {:?}", layer.hex);
    assert_eq!(digest_hex(&layer.digest).ok().as_deref(), Some(layer.hex.as_str()));
    assert!(layer.digest.get(7..).is_some_and(|h| h.eq_ignore_ascii_case(&layer.hex)));
}
