//! What a new user meets in the first hour (issue 23, item 17): `ollama:`
//! without a store says where it looked, `inspect` says "Warnings: none"
//! for every format, counts agree with their nouns, and a long name keeps
//! the columns of a table aligned. (Standard input without a FILE, --help
//! and `-j 0` are in tests/cli/gguf_cli.rs; `--check`'s "label line" in its twin
//! tests against GNU.)
use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::st::{St, StTensor};
use common::*;

fn run(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(gguf_digest_bin());
    cmd.args(args).current_dir(dir).stdin(Stdio::null()).env_remove("OLLAMA_MODELS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("runs gguf-digest")
}

fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let o = run(dir, args, &[]);
    assert!(o.status.code().is_some_and(|c| c < 2), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn ollama_without_a_store_says_no_store_was_found_and_where() {
    let d = Dir::new();
    let o = run(&d.path(""), &["ollama:"], &[("HOME", &d.path(""))]);
    assert_eq!(o.status.code(), Some(2));
    let root = d.path(".ollama/models");
    let want = format!(
        "gguf-digest: 'ollama:': no Ollama store found: {} has no manifests directory (the default store, \
         ~/.ollama/models; OLLAMA_MODELS names another)\n",
        root.display()
    );
    assert_eq!(text(&o.stderr), want);
    let o = run(&d.path(""), &["ollama:"], &[("OLLAMA_MODELS", &d.path("elsewhere"))]);
    assert!(
        text(&o.stderr).ends_with("/elsewhere has no manifests directory (the store OLLAMA_MODELS names)\n"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn inspect_says_warnings_none_for_every_format() {
    let d = Dir::new();
    d.write("m.safetensors", &St::new().tensor(StTensor::filled("a", "F32", &[2], 1)).build());
    d.write(
        "m.gguf",
        &Gguf::new().kv("general.architecture", Val::str("llama")).tensor(Tensor::filled("w", &[8], 0, 1)).build(),
    );
    for file in ["m.safetensors", "m.gguf"] {
        let out = stdout_of(&d.path(""), &["inspect", file]);
        assert!(out.ends_with("\nWarnings: none\n"), "{file}: {out}");
    }
}

#[test]
fn counts_agree_with_their_nouns() {
    let d = Dir::new();
    // One metadata group of one key, one file behind an index.
    // (a shard's header holds `format: pt`, as the writer of a sharded
    // checkpoint writes it)
    let st = St::new().tensor(StTensor::filled("a", "F32", &[2], 1));
    let (files, index) = st.sharded("model", &[1]);
    d.write(&files[0].0, &files[0].1);
    d.write("model.safetensors.index.json", index.as_bytes());
    let out = stdout_of(&d.path(""), &["inspect", "model.safetensors.index.json"]);
    assert!(out.contains("model.safetensors.index.json (1 file)\n"), "{out}");
    assert!(out.contains("\nmetadata    1 group\n"), "{out}");
    assert!(out.contains("\nMetadata group 1 (1 key):\n"), "{out}");
    // One byte: a string, a tensor's data.
    d.write(
        "one.gguf",
        &Gguf::new().kv("general.name", Val::str("x")).tensor(Tensor::filled("a", &[1], 24, 1)).build(),
    );
    let out = stdout_of(&d.path(""), &["inspect", "one.gguf"]);
    assert!(out.contains("\ntensors     1 (1 byte of data)\n"), "{out}");
    d.write(
        "two.gguf",
        &Gguf::new().kv("general.name", Val::str("y")).tensor(Tensor::filled("a", &[1], 24, 1)).build(),
    );
    let out = stdout_of(&d.path(""), &["diff", "one.gguf", "two.gguf"]);
    assert!(out.contains("STRING 'x' (1 byte, sha256 "), "{out}");
    // One metadata key differs.
    d.write("a.safetensors", &St::new().meta("k", "v").tensor(StTensor::filled("a", "F32", &[2], 1)).build());
    d.write("b.safetensors", &St::new().meta("k", "w").tensor(StTensor::filled("a", "F32", &[2], 1)).build());
    let out = stdout_of(&d.path(""), &["diff", "a.safetensors", "b.safetensors"]);
    assert!(out.contains("metadata keys: 1 differs;"), "{out}");
}

#[test]
fn a_long_name_keeps_the_columns_of_a_table() {
    let d = Dir::new();
    let long = format!("blk.0.{}.weight", "a_long_part".repeat(6));
    let g = Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .tensor(Tensor::filled(&long, &[8], 0, 1))
        .tensor(Tensor::filled("t", &[8, 2], 0, 2));
    d.write("m.gguf", &g.build());
    let out = stdout_of(&d.path(""), &["inspect", "m.gguf"]);
    let lines: Vec<&str> =
        out.lines().skip_while(|l| !l.starts_with("Tensors (")).skip(1).take_while(|l| !l.is_empty()).collect();
    let heading = lines[0];
    // The long name on a line of its own; every row's later columns under their headings.
    assert_eq!(lines[1], format!("  {long}"));
    for row in &lines[2..] {
        assert_eq!(row.find("F32").map(|i| i + 3), heading.find("type").map(|i| i + 3), "{out}");
        assert_eq!(row.find(" [").map(|i| i + 1), heading.find("dims"), "{out}");
    }
}
