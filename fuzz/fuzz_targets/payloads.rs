//! Fuzz target: the parser, then `canonical_payload` of every array it accepted.
//!
//! An accepted array's stored payload must re-walk without error, and its
//! canonical payload must hash to the digest the parser streamed while
//! parsing (two code paths over the same bytes that must agree: spec §2).
//! For a little-endian file the canonical payload is the stored bytes.
#![no_main]

use gguf_digest::gguf::{ByteOrder, Value};
use gguf_digest_formats::gguf::canonical_payload;
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

fuzz_target!(|data: &[u8]| {
    let Ok(f) = gguf_digest::gguf::parse(data) else { return };
    for kv in &f.kvs {
        let Value::Array(a) = &kv.value else { continue };
        let start = a.file_offset as usize;
        let stored = &data[start..start + a.file_len as usize];
        let payload = match canonical_payload(stored, f.byte_order, a.elem_type, a.count) {
            Ok(p) => p,
            Err(e) => panic!("parse accepted an array that canonical_payload rejects: {e}"),
        };
        if f.byte_order == ByteOrder::Little {
            assert!(payload == stored, "little-endian canonical payload differs from the stored bytes");
        }
        let sha: [u8; 32] = Sha256::digest(&payload).into();
        assert_eq!(sha, a.sha256, "canonical payload does not hash to the parser's digest");
    }
});
