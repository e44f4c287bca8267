//! Fuzz target: the ONNX wire reader (docs/SPEC.md Part VI, X2 to X5) on
//! arbitrary bytes, the whole input read as one model file.
//!
//! `gguf_digest_formats::onnx::parse` must return Ok or an error with a message for
//! every input. An accepted model's tensors must have a known dtype, their
//! `raw_data` must lie inside the input and hold exactly their element
//! bytes, external data must name a plain relative location, and the
//! skeleton, written twice from the same tree and elements' digests, must
//! be the same bytes, starting with the magic.
#![no_main]

use gguf_digest_formats::onnx::skeleton::Writer;
use gguf_digest_formats::onnx::tensor::{Data, is_plain_relative};
use libfuzzer_sys::fuzz_target;

fn skeleton(p: &gguf_digest_formats::onnx::read::Parsed) -> Vec<u8> {
    let mut out = Vec::new();
    let elements = |i: usize| [i as u8; 32];
    let mut sink = |b: &[u8]| out.extend_from_slice(b);
    Writer { tensors: &p.tensors, elements: &elements, sink: &mut sink }.model(&p.model);
    out
}

fuzz_target!(|data: &[u8]| {
    let p = match gguf_digest_formats::onnx::parse(data) {
        Ok(p) => p,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            return;
        }
    };
    let len = data.len() as u64;
    for t in &p.tensors {
        assert!(gguf_digest_formats::onnx::tensor::DTYPES.contains(t.dtype), "an unknown dtype accepted");
        match &t.data {
            Data::Raw { start, len: n } => {
                assert!(start + n <= len, "raw_data outside the file");
                assert_eq!(*n, t.nbytes, "raw_data of another length");
            }
            Data::External(e) => assert!(is_plain_relative(&e.location), "an external location that leads out"),
            Data::Empty => assert_eq!(t.n, 0, "elements and no data"),
            Data::Typed(_) => {}
        }
    }
    let a = skeleton(&p);
    assert!(a.starts_with(b"ONNX\x01\0\0\0"));
    assert_eq!(a, skeleton(&p), "the skeleton is not a function of the tree");
});
