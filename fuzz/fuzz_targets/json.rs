//! Fuzz target: the strict JSON reader on arbitrary bytes.
//!
//! `gguf_digest_core::json::parse_strict` must return Ok or a `JsonError` for
//! every input: a panic, an abort, a stack overflow, an out-of-memory or a
//! timeout is a finding. Built with debug assertions (`cargo fuzz run -a`),
//! so an integer overflow is a panic too.
#![no_main]

use std::collections::HashSet;

use gguf_digest_core::json::{Json, parse_strict};
use libfuzzer_sys::fuzz_target;

/// The depth safetensors headers are read with.
const MAX_DEPTH: usize = 64;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = parse_strict(data, MAX_DEPTH) {
        // What the reader promises about text it accepts: it was UTF-8, and
        // the value has no key twice in one object and no more levels than allowed.
        assert!(std::str::from_utf8(data).is_ok(), "accepted text that is not UTF-8");
        check(&v, 0);
    }
});

/// Walks the value; recursion is bounded because accepted values are at most MAX_DEPTH deep.
fn check(v: &Json, depth: usize) {
    match v {
        Json::Array(a) => {
            assert!(depth < MAX_DEPTH, "accepted a container deeper than {MAX_DEPTH} levels");
            a.iter().for_each(|e| check(e, depth + 1));
        }
        Json::Object(m) => {
            assert!(depth < MAX_DEPTH, "accepted a container deeper than {MAX_DEPTH} levels");
            let mut keys = HashSet::new();
            for (k, e) in m {
                assert!(keys.insert(k.as_str()), "accepted an object with the key {k:?} twice");
                check(e, depth + 1);
            }
        }
        _ => {}
    }
}
