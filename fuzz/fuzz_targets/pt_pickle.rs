//! Fuzz target: the PyTorch pickle interpreter and tree checks on arbitrary
//! bytes (a `data.pkl`).
//!
//! `gguf_digest_formats::pytorch::parse_pickle` must return Ok or a typed error for
//! every input, in bounded time and memory: a panic, an abort, an
//! out-of-memory or a timeout is a finding. An accepted tree must write a
//! skeleton (its tensors' digests zero), twice alike.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let tree = match gguf_digest_formats::pytorch::parse_pickle(data) {
        Ok(t) => t,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            assert!(e.path().is_none(), "a pure parse named a file: {e}");
            return;
        }
    };
    let digests = vec![[0u8; 32]; tree.tensors.len()];
    let mut a = Vec::new();
    tree.write(&digests, &mut |b| a.extend_from_slice(b)).expect("an accepted tree writes its value");
    let mut b = Vec::new();
    tree.write(&digests, &mut |x| b.extend_from_slice(x)).expect("twice");
    assert_eq!(a, b, "the value is written alike twice");
    assert!(tree.values <= gguf_digest_formats::pytorch::tree::MAX_VALUES);
    for leaf in &tree.tensors {
        let t = tree.tensor(leaf).expect("a leaf is a tensor");
        assert_eq!(t.size.len(), t.stride.len());
    }
});
