//! Fuzz target: the safetensors header parser on arbitrary bytes.
//!
//! `gguf_digest_formats::safetensors::parse` must return Ok or a typed error for
//! every input: a panic, an abort, an out-of-memory or a timeout is a
//! finding. Built with debug assertions (`cargo fuzz run -a`), so an integer
//! overflow is a panic too.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let f = match gguf_digest_formats::safetensors::parse(data) {
        Ok(f) => f,
        Err(e) => {
            // Every rejection says what is wrong, and a pure parse names no file.
            assert!(!e.detail().is_empty(), "an error without a message");
            assert!(e.path().is_none(), "a pure parse named a file: {e}");
            return;
        }
    };
    // What parsing promises about a file it accepts (contract §3).
    let len = data.len() as u64;
    assert_eq!(f.file_len, len);
    assert_eq!(f.data_start, 8 + f.header_len, "data starts right after the header");
    assert!(f.header_len <= gguf_digest_formats::safetensors::MAX_HEADER);
    assert!(f.data_start <= len, "accepted a header that runs past the file");
    // The tensors tile the data region exactly: no hole, no overlap, nothing after.
    let mut ranges: Vec<(u64, u64)> = f.tensors.iter().map(|t| (t.begin, t.end)).collect();
    ranges.sort_unstable();
    let mut next = 0u64;
    for (begin, end) in ranges {
        assert_eq!(begin, next, "accepted a hole or an overlap");
        next = end;
    }
    assert_eq!(next, len - f.data_start, "accepted bytes that belong to no tensor");
    let mut names = HashSet::new();
    for t in &f.tensors {
        assert_eq!(t.end - t.begin, t.nbytes, "accepted a range that does not hold the tensor");
        assert_eq!(t.dtype.nbytes(&t.shape).ok(), Some(t.nbytes));
        assert!(names.insert(t.name.as_str()), "accepted a tensor name twice");
        assert!(t.name != "__metadata__", "took __metadata__ for a tensor");
    }
});
