//! Fuzz target: the metadata parser on arbitrary bytes.
//!
//! `gguf_digest::gguf::parse` must return Ok or a typed error for every input: a
//! panic, an abort, an out-of-memory or a timeout is a finding. Built with
//! debug assertions (`cargo fuzz run -a` in docs/FUZZING.md), so an integer
//! overflow in the parser is a panic too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = gguf_digest::gguf::parse(data) {
        // What parsing promises about a file it accepts (spec §3): every
        // tensor's data lies inside the file, with no overflow on the way.
        for t in &f.tensors {
            let end = f.data_start.checked_add(t.stored_offset).and_then(|s| s.checked_add(t.nbytes));
            assert!(end.is_some_and(|e| e <= data.len() as u64), "accepted a tensor outside the file");
            assert!(t.stored_dims.len() <= gguf_digest_formats::gguf::MAX_DIMS as usize);
        }
        assert!(f.alignment.is_power_of_two());
        assert!(f.tensor_info_end <= data.len() as u64);
    }
});
