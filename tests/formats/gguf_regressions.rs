//! Regression tests for what the mutation test (tests/mutation/gguf_mutation.rs) and the
//! fuzzers (fuzz/, docs/FUZZING.md) found: each test is the smallest input
//! that showed the bug, with where it was found and what was wrong.
//!
//! Findings that need the counting allocator live in tests/mutation/gguf_mutation.rs
//! (`hostile_zero_filled_tensor_infos`); those that need a process, a FIFO
//! or a racing writer live in tests/cli/faults.rs.
use crate::common;

use common::*;
use gguf_digest::gguf::{ByteOrder, Value, parse};
use gguf_digest_formats::gguf::canonical_payload;
use sha2::{Digest as _, Sha256};

/// The stored payload bytes and canonical payload of the only KV of `g`, an array.
fn payloads(g: &Gguf) -> (Vec<u8>, Vec<u8>, [u8; 32], ByteOrder) {
    let bytes = g.build();
    let f = parse(&bytes).expect("valid file");
    let Value::Array(a) = &f.kvs[0].value else { panic!("not an array") };
    let stored = bytes[a.file_offset as usize..(a.file_offset + a.file_len) as usize].to_vec();
    let canonical = canonical_payload(&stored, f.byte_order, a.elem_type, a.count).expect("valid payload");
    (stored, canonical, a.sha256, f.byte_order)
}

/// Found by the payload oracle of tests/mutation/gguf_mutation.rs and by the `payloads`
/// fuzz target on their first little-endian array: `canonical_payload`
/// reversed every 2-, 4- and 8-byte element of a *little-endian* array (the
/// re-encoder always swapped words, which is right only for big-endian
/// input), so inspect/diff would show and compare wrong values. The label
/// was not affected (the parser hashes little-endian payloads in place).
#[test]
fn canonical_payload_keeps_little_endian_numbers() {
    let arrays = [
        Val::Arr(2, vec![Val::U16(0x0102), Val::U16(0xfffe)]),
        Val::Arr(3, vec![Val::I16(-2)]),
        Val::Arr(4, vec![Val::U32(0x0102_0304)]),
        Val::Arr(5, vec![Val::I32(-70000)]),
        Val::Arr(6, vec![Val::F32(1.5), Val::F32(-0.25)]),
        Val::Arr(10, vec![Val::U64(0x0102_0304_0506_0708)]),
        Val::Arr(11, vec![Val::I64(-(1 << 40))]),
        Val::Arr(12, vec![Val::F64(0.1)]),
        // Numbers inside nested arrays too.
        Val::Arr(9, vec![Val::Arr(4, vec![Val::U32(7), Val::U32(8)])]),
    ];
    for v in arrays {
        let g = Gguf::new().kv("a", v.clone());
        let (stored, canonical, sha, order) = payloads(&g);
        assert_eq!(order, ByteOrder::Little);
        // Spec §2: for a little-endian input the payload is its bytes in the file, unchanged.
        assert_eq!(canonical, stored, "{v:?}");
        assert_eq!(<[u8; 32]>::from(Sha256::digest(&canonical)), sha, "{v:?}");

        // The big-endian file of the same model has the same canonical payload.
        let mut be = g.clone();
        be.big_endian = true;
        let (_, canonical_be, sha_be, order) = payloads(&be);
        assert_eq!(order, ByteOrder::Big);
        assert_eq!(canonical_be, stored, "{v:?} big-endian");
        assert_eq!(sha_be, sha, "{v:?} big-endian");
    }
}
