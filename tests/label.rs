//! Labels of files built by the test writer.
mod common;

use common::*;
use gguf_digest::Model;

fn label_of(bytes: &[u8]) -> String {
    let d = Dir::new();
    let p = d.write("m.gguf", bytes);
    Model::open(&p).expect("labels").label().expect("hashes")
}

#[test]
fn writer_smoke_every_type_le_and_be() {
    let g = rich_model(&ALL_TYPES);
    assert_eq!(label_of(&g.build()), g.expected_label());
    let mut be = rich_model(&BE_TYPES);
    assert_eq!(label_of(&be.build()), be.expected_label());
    be.big_endian = true;
    assert_eq!(label_of(&be.build()), be.expected_label());
}
