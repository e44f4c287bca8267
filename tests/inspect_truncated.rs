//! `inspect` of a file it cannot label (cut off, or malformed partway)
//! prints what it could read of it, then the error, and exits 2.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::st::{St, StTensor};
use common::*;

fn inspect(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(gguf_digest_bin());
    cmd.arg("inspect").args(args).current_dir(dir).stdin(Stdio::null());
    cmd.output().expect("runs gguf-digest")
}

fn model() -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("cut model"))
        .kv("llama.block_count", Val::U32(2))
        .tensor(Tensor::filled("blk.0.w", &[64, 4], 0, 1))
        .tensor(Tensor::filled("blk.1.w", &[64, 4], 0, 2))
}

#[test]
fn a_gguf_file_cut_in_its_data_shows_all_its_metadata_then_the_error() {
    let d = Dir::new();
    let bytes = model().build();
    d.write("cut.gguf", &bytes[..bytes.len() - 100]);
    let o = inspect(&d.path(""), &["cut.gguf"]);
    assert_eq!(o.status.code(), Some(2));
    let out = text(&o.stdout);
    assert!(out.starts_with("file        cut.gguf\n"), "{out}");
    assert!(out.contains("\nKVs         3\n") && out.contains("\ntensors     2\n"), "{out}");
    assert!(out.contains("label       none: the file could not be labelled (the error follows)\n"), "{out}");
    assert!(out.contains("general.name          STRING  'cut model'"), "{out}");
    assert!(out.contains("blk.1.w  [64, 4]  F32"), "{out}");
    let e = text(&o.stderr);
    assert!(e.starts_with("gguf-digest: cut.gguf: byte ") && e.contains("tensor 'blk.1.w'"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn a_gguf_file_cut_in_its_metadata_shows_the_kvs_before_the_cut() {
    let d = Dir::new();
    let bytes = model().build();
    // Inside the third KV's value: the header and the first two KVs are whole.
    let third = bytes.windows(17).position(|w| w == b"llama.block_count").unwrap();
    d.write("cut.gguf", &bytes[..third + 17 + 4 + 2]);
    let o = inspect(&d.path(""), &["cut.gguf"]);
    assert_eq!(o.status.code(), Some(2));
    let out = text(&o.stdout);
    assert!(out.contains("\nKVs         2 of 3 read\n"), "{out}");
    assert!(out.contains("\ntensors     0 of 2 read\n"), "{out}");
    assert!(out.contains("general.name          STRING  'cut model'"), "{out}");
    assert!(!out.contains("block_count"), "{out}");
    assert!(text(&o.stderr).starts_with("gguf-digest: cut.gguf: byte "), "{}", text(&o.stderr));
}

#[test]
fn a_safetensors_file_cut_in_its_data_shows_its_header_then_the_error() {
    let d = Dir::new();
    let bytes = St::new().meta("k", "v").tensor(StTensor::filled("a", "F32", &[4], 1)).build();
    d.write("cut.safetensors", &bytes[..bytes.len() - 4]);
    let o = inspect(&d.path(""), &["cut.safetensors"]);
    assert_eq!(o.status.code(), Some(2));
    let out = text(&o.stdout);
    assert!(out.starts_with("file        cut.safetensors\n"), "{out}");
    assert!(out.contains("\nMetadata (1 key):\n  key  value\n  k    'v'\n"), "{out}");
    assert!(out.contains("  a     F32    [4]       16  [0, 16]\n"), "{out}");
    assert!(text(&o.stderr).contains("reach past the data region"), "{}", text(&o.stderr));
    // Cut inside the header: only what its length says.
    d.write("cut.safetensors", &bytes[..20]);
    let o = inspect(&d.path(""), &["cut.safetensors"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("declared; could not be read whole"), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("file ends inside the JSON header"), "{}", text(&o.stderr));
}

#[test]
fn nothing_is_shown_where_nothing_of_the_named_file_was_read() {
    let d = Dir::new();
    let bytes = model().build();
    d.write("junk.gguf", b"GGUX\x03\0\0\0\0\0\0\0");
    std::fs::create_dir(d.path("dir")).unwrap();
    d.write("dir/cut.gguf", &bytes[..bytes.len() - 100]);
    d.write("cut.gguf", &bytes[..bytes.len() - 100]);
    // Bad magic; a file not found; a directory's model (the labelling chose
    // that file); --json (a partial document could pass for a whole one).
    for args in [&["junk.gguf"][..], &["missing.gguf"], &["dir"], &["--json", "cut.gguf"]] {
        let o = inspect(&d.path(""), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: {}", text(&o.stdout));
        assert_eq!(text(&o.stderr).lines().count(), 1, "{args:?}: {}", text(&o.stderr));
    }
}
