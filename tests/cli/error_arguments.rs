//! Every error names the argument the user gave beside the file it is
//! about: `gguf-digest: ARG: FILE: byte N, SUBJECT: what`, the argument
//! left out when it is the file itself (docs/adr/0008-errors.md).
use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::ollama::{MODEL, Store, TEMPLATE};
use common::*;
use serde_json::Value as JsonValue;

fn run(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(gguf_digest_bin());
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("runs gguf-digest")
}

fn model(seed: u8) -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.seed", Val::U8(seed))
        .tensor(Tensor::filled("w", &[8, 2], 0, seed))
        .tensor(Tensor::filled("v", &[8], 0, seed))
}

#[test]
fn a_tampered_blob_names_each_model_that_uses_it() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let template = store.blob(TEMPLATE, b"{{ .Prompt }}");
    for (name, seed) in [("a", 1), ("b", 2)] {
        store.manifest(name, &store.config(""), &[store.blob(MODEL, &model(seed).build()), template.clone()]);
    }
    std::fs::write(store.blob_path(&template), b"{{ .Prompt }!").unwrap();
    let o = run(&d.path(""), &["ollama:"], &[("OLLAMA_MODELS", &store.root)]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 2, "{e}");
    for (line, name) in lines.iter().zip(["a", "b"]) {
        let named = format!("gguf-digest: 'ollama:registry.ollama.ai/library/{name}:latest': the blob ");
        assert!(line.starts_with(&named), "{line}");
        assert!(line.contains("not its layer's digest"), "{line}");
    }
    // One model by its name: named as given.
    let o = run(&d.path(""), &["ollama:a"], &[("OLLAMA_MODELS", &store.root)]);
    assert!(text(&o.stderr).starts_with("gguf-digest: 'ollama:a': the blob "), "{}", text(&o.stderr));
}

#[test]
fn a_file_an_index_lists_is_named_with_the_index() {
    let d = Dir::new();
    std::fs::create_dir(d.path("sub")).unwrap();
    let st = common::st::St::new()
        .tensor(common::st::StTensor::filled("a", "F32", &[2], 1))
        .tensor(common::st::StTensor::filled("b", "F32", &[2], 2));
    let (files, index) = st.sharded("model", &[1, 1]);
    for (name, bytes) in &files {
        d.write(&format!("sub/{name}"), bytes);
    }
    d.write("sub/model.safetensors.index.json", index.as_bytes());
    std::fs::remove_file(d.path(&format!("sub/{}", files[1].0))).unwrap();
    let o = run(&d.path(""), &["sub/model.safetensors.index.json"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("gguf-digest: sub/model.safetensors.index.json: sub/{}: No such file or directory\n", files[1].0)
    );
}

#[test]
fn a_broken_later_shard_is_named_with_the_first() {
    let d = Dir::new();
    let paths = write_set(&d, "m", &model(1).split(&[1, 1]));
    let second = std::fs::read(&paths[1]).unwrap();
    std::fs::write(&paths[1], &second[..second.len() - 1]).unwrap();
    let o = run(&d.path(""), &["m-00001-of-00002.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(e.starts_with("gguf-digest: m-00001-of-00002.gguf: m-00002-of-00002.gguf: "), "{e}");
    assert!(e.contains("lies outside the file"), "{e}");
}

#[test]
fn a_directory_is_named_with_its_model() {
    let d = Dir::new();
    std::fs::create_dir(d.path("dir")).unwrap();
    d.write("dir/m.gguf", b"GGUX\x03\0\0\0");
    let o = run(&d.path(""), &["dir"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "gguf-digest: dir: dir/m.gguf: byte 0: not a GGUF file: magic is 47475558, expected 47475546 (\"GGUF\")\n"
    );
    // The same in --json's error entry, and in --check.
    let o = run(&d.path(""), &["--json", "dir"], &[]);
    let doc: JsonValue = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["files"][0]["path"], "dir");
    assert!(doc["files"][0]["error"].as_str().unwrap().starts_with("dir: dir/m.gguf: byte 0: "), "{doc}");
    d.write("sums", format!("{}  dir\n", "0".repeat(64)).as_bytes());
    let o = run(&d.path(""), &["-c", "sums"], &[]);
    assert!(text(&o.stderr).starts_with("gguf-digest: dir: dir/m.gguf: byte 0: "), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "dir: FAILED open or read\n");
}

#[test]
fn a_file_given_itself_is_named_once() {
    let d = Dir::new();
    d.write("m.gguf", b"GGUX\x03\0\0\0");
    let o = run(&d.path(""), &["m.gguf"], &[]);
    assert_eq!(
        text(&o.stderr),
        "gguf-digest: m.gguf: byte 0: not a GGUF file: magic is 47475558, expected 47475546 (\"GGUF\")\n"
    );
    let o = run(&d.path(""), &["./m.gguf", "missing.gguf"], &[]);
    assert!(text(&o.stderr).starts_with("gguf-digest: ./m.gguf: byte 0: "), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).ends_with("\ngguf-digest: missing.gguf: No such file or directory\n"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn inspect_and_diff_name_the_argument() {
    let d = Dir::new();
    std::fs::create_dir(d.path("dir")).unwrap();
    d.write("dir/m.gguf", b"GGUX\x03\0\0\0");
    d.write("ok.gguf", &model(1).build());
    let o = run(&d.path(""), &["inspect", "dir"], &[]);
    assert!(text(&o.stderr).starts_with("gguf-digest: dir: dir/m.gguf: byte 0: "), "{}", text(&o.stderr));
    let o = run(&d.path(""), &["diff", "ok.gguf", "dir"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("gguf-digest: dir: dir/m.gguf: byte 0: "), "{}", text(&o.stderr));
}
