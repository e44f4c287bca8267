//! What a new user meets in the first hour (issue 23, item 17): `ollama:`
//! without a store says where it looked, `inspect` says "Warnings: none"
//! for every format, counts agree with their nouns, and a long name keeps
//! the columns of a table aligned. (Standard input without a FILE, --help
//! and `-j 0` are in tests/cli.rs; `--check`'s "label line" in its twin
//! tests against GNU.)
mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::*;

fn run(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(gguf_digest_bin());
    cmd.args(args).current_dir(dir).stdin(Stdio::null()).env_remove("OLLAMA_MODELS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("runs gguf-digest")
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
