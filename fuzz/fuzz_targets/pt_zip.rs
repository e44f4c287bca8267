//! Fuzz target: the zip reader of PyTorch checkpoints on arbitrary bytes.
//!
//! `gguf_digest_formats::pytorch::parse_archive` must return Ok or a typed error for
//! every input; an accepted archive's records must lie inside the file,
//! after their local headers, without overlapping, with distinct names in
//! one folder.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let a = match gguf_digest_formats::pytorch::parse_archive(data) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            return;
        }
    };
    let len = data.len() as u64;
    let mut names = HashSet::new();
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for r in &a.records {
        assert!(names.insert(r.name.clone()), "a name accepted twice");
        assert!(
            r.name.starts_with(&a.folder) && r.name.get(a.folder.len()) == Some(&b'/'),
            "a record outside the folder"
        );
        assert!(r.header + 30 <= r.data && r.data + r.size <= len, "a record outside the file");
        spans.push((r.header, r.data + r.size));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        assert!(w[0].1 <= w[1].0, "overlapping records accepted");
    }
});
