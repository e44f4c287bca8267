//! `gguf-digest bom` judged by CycloneDX's own library: every BOM the
//! binary writes here, of GGUF (the real SmolLM2 among them, a shard set,
//! metadata meant to be awkward), safetensors (the real all-MiniLM-L6-v2,
//! an index), an Ollama store, a directory and an `hf:` snapshot, and all
//! of them at once, is valid CycloneDX 1.6 for cyclonedx-python-lib's
//! strict JSON validator, run with the network shut
//! (scripts/interop/cyclonedx_validate.py).
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value as JsonValue;

const WHAT: &str = "AI-BOM interop (cyclonedx-python-lib)";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// Writes `gguf-digest bom ARGS` (run in `dir`) to `dir/<name>.cdx.json`.
fn bom(dir: &Path, name: &str, args: &[&str], env: &[(&str, &Path)]) -> PathBuf {
    let out = dir.join(format!("{name}.cdx.json"));
    let mut c = Command::new(gguf_digest_bin());
    c.arg("bom").arg("--out").arg(&out).args(args).current_dir(dir).env("SOURCE_DATE_EPOCH", "1764100000");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "bom {name}: {}", text(&o.stderr));
    out
}

/// A GGUF model whose metadata is awkward to put in JSON: quotes, control
/// characters, a bidirectional override, a base model whose "URL" is not
/// one, a license no SPDX list holds.
fn awkward_gguf() -> Gguf {
    let mut g = rich_model(&[0, 8]);
    set_kv(&mut g, "general.name", Val::str("\"odd\" \u{1b}[31mname\u{202e}\t✓"));
    g.kv("general.license", Val::str("other: see LICENSE <and> \"this\""))
        .kv("general.file_type", Val::U32(7))
        .kv("general.base_model.count", Val::U32(2))
        .kv("general.base_model.0.name", Val::str("Base"))
        .kv("general.base_model.0.repo_url", Val::str("javascript:alert(1)"))
        .kv("general.base_model.1.organization", Val::str("Org"))
        .kv("general.base_model.1.repo_url", Val::str("https://huggingface.co/org/base-2"))
        .kv("general.dataset.count", Val::U32(1))
        .kv("general.dataset.0.name", Val::str(""))
}

#[test]
fn every_bom_is_valid_cyclonedx_1_6() {
    let Some(py) = py::prerequisites(WHAT) else { return };
    let d = Dir::new();
    let work = d.path("");
    let smollm2 = py.path("model");
    let minilm = py.path("st_model");

    // GGUF: one file, awkward metadata, a shard set, the real model.
    d.write("awkward.gguf", &awkward_gguf().build());
    let shards = write_set(&d, "set", &rich_model(&[0, 0, 8]).split(&[1, 2]));
    let first = shards[0].file_name().unwrap().to_str().unwrap().to_owned();
    // safetensors: metadata, an index of shards, the real model.
    let st = st::St::new()
        .meta("format", "pt")
        .meta("note", "a \"quoted\" value")
        .tensor(st::StTensor::filled("a", "F32", &[4], 1))
        .tensor(st::StTensor::filled("b", "BF16", &[2, 2], 2));
    d.write("w.safetensors", &st.build());
    let (files, index) = st.sharded("model", &[1, 1]);
    for (n, b) in &files {
        d.write(n, b);
    }
    d.write("model.safetensors.index.json", index.as_bytes());
    // Ollama: GGUF weights, a license, a template, its config.
    let store = ollama::Store::new(&d.path("store"));
    let weights = store.blob(ollama::MODEL, &awkward_gguf().build());
    let license = store.blob(ollama::LICENSE, b"Apache License 2.0");
    let template = store.blob(ollama::TEMPLATE, b"{{ .Prompt }}");
    store.manifest("tiny:1b", &store.config(""), &[weights, license, template]);
    // A directory of one model, and the same as an hf: snapshot.
    std::fs::create_dir_all(d.path("dir")).unwrap();
    d.write("dir/only.safetensors", &st.build());
    let repo = d.path("hub/models--o--n");
    let blob = hex(&sha(&st.build()));
    for sub in ["blobs", "refs", &format!("snapshots/{COMMIT}")] {
        std::fs::create_dir_all(repo.join(sub)).unwrap();
    }
    std::os::unix::fs::symlink(
        format!("../../blobs/{blob}"),
        repo.join("snapshots").join(COMMIT).join("model.safetensors"),
    )
    .unwrap();
    d.write(&format!("hub/models--o--n/blobs/{blob}"), &st.build());
    d.write("hub/models--o--n/refs/main", COMMIT.as_bytes());

    let env: &[(&str, &Path)] = &[("OLLAMA_MODELS", &store.root), ("HF_HUB_CACHE", &d.path("hub"))];
    let (smollm2, minilm) = (smollm2.to_str().unwrap(), minilm.to_str().unwrap());
    let boms = [
        bom(&work, "smollm2", &[smollm2], env),
        bom(&work, "awkward", &["awkward.gguf"], env),
        bom(&work, "shards", &[&first], env),
        bom(&work, "minilm", &[minilm], env),
        bom(&work, "safetensors", &["w.safetensors"], env),
        bom(&work, "index", &["model.safetensors.index.json"], env),
        bom(&work, "ollama", &["ollama:tiny:1b"], env),
        bom(&work, "directory", &["dir"], env),
        bom(&work, "hf", &["hf:o/n"], env),
        bom(
            &work,
            "all",
            &[
                smollm2,
                "awkward.gguf",
                &first,
                minilm,
                "model.safetensors.index.json",
                "ollama:tiny:1b",
                "dir",
                "hf:o/n",
            ],
            env,
        ),
    ];
    let args: Vec<&str> = boms.iter().map(|p| p.to_str().unwrap()).collect();
    let verdict = py.run("cyclonedx_validate.py", &args);
    assert_eq!(verdict["invalid"], serde_json::json!({}), "{verdict:#}");
    assert_eq!(verdict["valid"].as_array().unwrap().len(), boms.len());

    // What the real models' BOMs say.
    let read = |p: &Path| -> JsonValue { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    let s = read(&boms[0]);
    let m = &s["components"][0];
    assert_eq!(m["modelCard"]["modelParameters"]["architectureFamily"], "llama");
    assert_eq!(m["licenses"][0]["license"]["name"], "apache-2.0");
    let real = std::fs::read(smollm2).unwrap();
    assert_eq!(m["components"][0]["hashes"][0]["content"], hex(&sha(&real)), "the file's SHA-256");
    let props = m["properties"].as_array().unwrap();
    assert!(props.iter().any(|p| p["name"] == "gguf-digest:quantization" && p["value"] == "Q4_1"), "{m:#}");
    let all = read(&boms[9]);
    assert_eq!(all["components"].as_array().unwrap().len(), 8);
    // The awkward name is kept as text, its control characters escaped by JSON.
    assert_eq!(read(&boms[1])["components"][0]["name"], "\"odd\" \u{1b}[31mname\u{202e}\t✓");
}

/// The validator is no rubber stamp: a BOM with a member CycloneDX does not
/// have, or without a component's name, is refused.
#[test]
fn the_validator_refuses_what_the_schema_does_not_allow() {
    let Some(py) = py::prerequisites(WHAT) else { return };
    let d = Dir::new();
    d.write("m.gguf", &rich_model(&[0]).build());
    let good = bom(&d.path(""), "m", &["m.gguf"], &[]);
    let mut doc: JsonValue = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    doc["components"][0]["modelCard"]["modelParameters"]["quantization"] = "Q4_1".into();
    let extra = d.write("extra.json", &serde_json::to_vec(&doc).unwrap());
    doc["components"][0]["modelCard"]["modelParameters"].as_object_mut().unwrap().remove("quantization");
    doc["components"][0].as_object_mut().unwrap().remove("name");
    let unnamed = d.write("unnamed.json", &serde_json::to_vec(&doc).unwrap());
    let verdict =
        py.run("cyclonedx_validate.py", &[good.to_str().unwrap(), extra.to_str().unwrap(), unnamed.to_str().unwrap()]);
    assert_eq!(verdict["valid"], serde_json::json!([good.to_str().unwrap()]), "{verdict:#}");
    assert_eq!(verdict["invalid"].as_object().unwrap().len(), 2, "{verdict:#}");
}
