//! Fuzz target: the safetensors index reader on arbitrary bytes.
//!
//! `gguf_digest_formats::safetensors::parse_index(bytes, "d")` must return Ok or a
//! typed error for every input (a panic, an abort, an out-of-memory or a
//! timeout is a finding), and an index it accepts must never name a file
//! outside its directory.
#![no_main]

use std::collections::BTreeSet;
use std::path::{Component, Path};

use gguf_digest_formats::safetensors::{parse_index, plain_name_in};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = Path::new("d");
    let index = match parse_index(data, dir) {
        Ok(i) => i,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            return;
        }
    };
    // The files are the distinct weight_map values, sorted.
    let values: BTreeSet<&str> = index.weight_map.values().map(String::as_str).collect();
    let files: Vec<&str> = index.files.iter().map(String::as_str).collect();
    assert_eq!(files, values.into_iter().collect::<Vec<_>>(), "files are not the distinct weight_map values");
    // Each one is a plain name: joined to the directory, it stays one level in it.
    for name in &index.files {
        let path = plain_name_in(dir, name).unwrap_or_else(|e| panic!("accepted a name that is not plain: {e}"));
        assert_eq!(path.parent(), Some(dir), "{name:?} leaves the directory");
        let parts: Vec<Component> = path.components().collect();
        assert_eq!(parts.len(), 2, "{name:?} is not one plain component");
        assert!(matches!(parts[1], Component::Normal(_)), "{name:?} is not a normal component");
        assert!(!name.contains(['/', '\\', '\0']), "{name:?}");
    }
    // Derived members (contract §5, revision 2) are kept apart, never metadata.
    for derived in gguf_digest_formats::safetensors::DERIVED {
        assert!(!index.metadata.contains_key(derived), "{derived} is derived, kept apart");
    }
});
