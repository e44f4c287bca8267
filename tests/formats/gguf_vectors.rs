//! The spec's example vectors, carried in `tests/data/vectors` (copied from
//! the shared spec so the crate tests itself without the outside tree).
//!
//! Expected labels and skeletons come from `vectors.json` alone, which was
//! produced independently of this crate: nothing here is derived from the
//! library's own output.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::path::PathBuf;

use gguf_digest::ErrorKind;
use gguf_digest::gguf::Model;
use serde_json::Value as JsonValue;
use sha2::{Digest, Sha256};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/vectors")
}

fn vectors() -> JsonValue {
    let text = std::fs::read_to_string(dir().join("vectors.json")).expect("vectors.json");
    serde_json::from_str(&text).expect("vectors.json parses")
}

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex in vectors.json")
}

#[test]
fn every_vector_file_is_present() {
    let v = vectors();
    let files = v["files"].as_object().expect("files");
    // Guards the loops below against silently running over nothing.
    assert_eq!(files.len(), 7);
    for name in files.keys() {
        assert!(dir().join(name).is_file(), "{name} missing from tests/data/vectors");
    }
}

#[test]
fn labels_match_vectors_json() {
    let v = vectors();
    let mut checked = 0;
    for (name, entry) in v["files"].as_object().expect("files") {
        let Some(want) = entry["label"].as_str() else {
            assert_eq!(entry["expect"], "error", "{name}: neither label nor error");
            continue;
        };
        let path = dir().join(name);
        let got = Model::open(&path).and_then(|m| m.label()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, want, "{name}");
        if let Some(same) = entry["same_as"].as_str() {
            assert_eq!(Some(want), v["files"][same]["label"].as_str(), "{name} vs {same}");
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn second_shard_alone_names_the_first() {
    let v = vectors();
    assert_eq!(v["files"]["e_split-00002-of-00002.gguf"]["expect"], "error");
    let path = dir().join("e_split-00002-of-00002.gguf");
    let e = Model::open(&path).and_then(|m| m.label()).expect_err("a later shard alone is an error");
    assert!(matches!(e.kind(), ErrorKind::NotFirstShard { no: 2, count: 2, .. }), "{e:?}");
    let first = dir().join("e_split-00001-of-00002.gguf");
    let msg = e.to_string();
    assert!(msg.contains(&first.display().to_string()), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
}

#[test]
fn skeletons_match_vectors_json_hex() {
    let v = vectors();
    for name in ["a_empty.gguf", "b_all_types.gguf"] {
        let want = &v["skeletons"][name];
        let bytes = unhex(want["hex"].as_str().expect("hex"));
        assert_eq!(bytes.len() as u64, want["bytes"].as_u64().expect("bytes"), "{name}");
        let got = Model::open(dir().join(name)).expect("opens").skeleton().expect("skeleton");
        assert_eq!(hex::encode(&got), hex::encode(&bytes), "{name}");
        // The label is the hash of exactly these bytes.
        let label = hex::encode(Sha256::digest(&bytes));
        assert_eq!(Some(label.as_str()), v["files"][name]["label"].as_str(), "{name}");
    }
}

/// Entry by entry, so that a mismatch says which KV or tensor is off, and
/// the breakdown's own hashed bytes are checked against their digests.
#[test]
fn skeleton_b_matches_breakdown_entry_by_entry() {
    let v = vectors();
    let name = "b_all_types.gguf";
    let got = Model::open(dir().join(name)).expect("opens").skeleton().expect("skeleton");
    let breakdown = v["skeletons"][name]["breakdown"].as_array().expect("breakdown");
    let mut end = 0;
    for entry in breakdown {
        let what = entry["what"].as_str().unwrap_or("?");
        let offset = entry["offset"].as_u64().expect("offset") as usize;
        let length = entry["length"].as_u64().expect("length") as usize;
        assert_eq!(offset, end, "{what}: entries are contiguous");
        let want: Vec<u8> = match entry["hex"].as_str() {
            Some(h) => unhex(h),
            None => entry["parts"]
                .as_array()
                .expect("parts")
                .iter()
                .flat_map(|p| unhex(p[1].as_str().expect("part hex")))
                .collect(),
        };
        assert_eq!(want.len(), length, "{what}");
        assert_eq!(hex::encode(&got[offset..offset + length]), hex::encode(&want), "{what}");
        if let Some(h) = entry["hashed_bytes_hex"].as_str() {
            let digest = Sha256::digest(unhex(h));
            assert!(want.windows(32).any(|w| w == digest.as_slice()), "{what}: H(hashed bytes) not in entry");
        }
        end = offset + length;
    }
    assert_eq!(end, got.len());
}
