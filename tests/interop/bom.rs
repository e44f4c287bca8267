//! `gguf-digest bom` judged by the formats' own libraries: every BOM the
//! binary writes here, of GGUF (the real SmolLM2 among them, a shard set,
//! metadata meant to be awkward), safetensors (the real all-MiniLM-L6-v2,
//! an index), an Ollama store, a directory and an `hf:` snapshot, and all
//! of them at once, is valid CycloneDX 1.6 for cyclonedx-python-lib's
//! strict JSON validator, and with `--format spdx` valid SPDX 3.0.1 for
//! spdx-python-model, each run with the network shut
//! (scripts/interop/bom_validate.py).
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value as JsonValue;

const WHAT: &str = "AI-BOM interop (cyclonedx-python-lib)";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// Writes `gguf-digest bom --format FORMAT ARGS` (run in `dir`) to
/// `dir/<name>.<format>.json`.
fn bom_as(format: &str, dir: &Path, name: &str, args: &[&str], env: &[(&str, &Path)]) -> PathBuf {
    let out = dir.join(format!("{name}.{format}.json"));
    let mut c = Command::new(gguf_digest_bin());
    c.args(["bom", "--format", format])
        .arg("--out")
        .arg(&out)
        .args(args)
        .current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1764100000");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "bom {name}: {}", text(&o.stderr));
    out
}

fn bom(dir: &Path, name: &str, args: &[&str], env: &[(&str, &Path)]) -> PathBuf {
    bom_as("cyclonedx", dir, name, args, env)
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

/// The inputs of every kind, laid out in `d`; the arguments naming them
/// (with the environment they need), each with a name for its BOM.
struct Inputs {
    cases: Vec<(&'static str, Vec<String>)>,
    store: PathBuf,
    hub: PathBuf,
}

fn inputs(py: &'static py::Py, d: &Dir) -> Inputs {
    let smollm2 = py.path("model");
    let minilm = py.path("st_model");

    // GGUF: one file, awkward metadata, a shard set, the real model.
    d.write("awkward.gguf", &awkward_gguf().build());
    let shards = write_set(d, "set", &rich_model(&[0, 0, 8]).split(&[1, 2]));
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

    let (smollm2, minilm) = (smollm2.to_str().unwrap().to_owned(), minilm.to_str().unwrap().to_owned());
    let one = |a: &str| vec![a.to_owned()];
    let all =
        [&smollm2, "awkward.gguf", &first, &minilm, "model.safetensors.index.json", "ollama:tiny:1b", "dir", "hf:o/n"];
    let cases = vec![
        ("smollm2", one(&smollm2)),
        ("awkward", one("awkward.gguf")),
        ("shards", one(&first)),
        ("minilm", one(&minilm)),
        ("safetensors", one("w.safetensors")),
        ("index", one("model.safetensors.index.json")),
        ("ollama", one("ollama:tiny:1b")),
        ("directory", one("dir")),
        ("hf", one("hf:o/n")),
        ("all", all.iter().map(|a| a.to_string()).collect()),
    ];
    Inputs { cases, store: store.root.clone(), hub: d.path("hub") }
}

/// Every case's BOM in `format`, written in `d`.
fn boms(format: &str, d: &Dir, inputs: &Inputs) -> Vec<PathBuf> {
    let env: &[(&str, &Path)] = &[("OLLAMA_MODELS", &inputs.store), ("HF_HUB_CACHE", &inputs.hub)];
    inputs
        .cases
        .iter()
        .map(|(name, args)| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            bom_as(format, &d.path(""), name, &args, env)
        })
        .collect()
}

fn validate(py: &py::Py, format: &str, boms: &[PathBuf]) {
    let mut args = vec![format];
    args.extend(boms.iter().map(|p| p.to_str().unwrap()));
    let verdict = py.run("bom_validate.py", &args);
    assert_eq!(verdict["invalid"], serde_json::json!({}), "{verdict:#}");
    assert_eq!(verdict["valid"].as_array().unwrap().len(), boms.len());
}

#[test]
fn every_bom_is_valid_cyclonedx_1_6() {
    let Some(py) = py::prerequisites(WHAT) else { return };
    let d = Dir::new();
    let inputs = inputs(py, &d);
    let boms = boms("cyclonedx", &d, &inputs);
    validate(py, "cyclonedx", &boms);
    let smollm2 = py.path("model");
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
    let verdict = py.run(
        "bom_validate.py",
        &["cyclonedx", good.to_str().unwrap(), extra.to_str().unwrap(), unnamed.to_str().unwrap()],
    );
    assert_eq!(verdict["valid"], serde_json::json!([good.to_str().unwrap()]), "{verdict:#}");
    assert_eq!(verdict["invalid"].as_object().unwrap().len(), 2, "{verdict:#}");

    // SPDX: a property the model lacks, a reference to nothing, a required one gone.
    let good = bom_as("spdx", &d.path(""), "m", &["m.gguf"], &[]);
    let doc: JsonValue = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    let edit = |name: &str, f: &dyn Fn(&mut JsonValue)| {
        let mut doc = doc.clone();
        for el in doc["@graph"].as_array_mut().unwrap() {
            if el["type"] == "software_File" {
                f(el);
            }
        }
        d.write(name, &serde_json::to_vec(&doc).unwrap())
    };
    let bad = [
        edit("extra.spdx.json", &|el| el["quantization"] = "Q4_1".into()),
        edit("nowhere.spdx.json", &|el| el["creationInfo"] = "urn:uuid:0#nowhere".into()),
        edit("nameless.spdx.json", &|el| drop(el.as_object_mut().unwrap().remove("creationInfo"))),
    ];
    let mut args = vec!["spdx", good.to_str().unwrap()];
    args.extend(bad.iter().map(|p| p.to_str().unwrap()));
    let verdict = py.run("bom_validate.py", &args);
    assert_eq!(verdict["valid"], serde_json::json!([good.to_str().unwrap()]), "{verdict:#}");
    assert_eq!(verdict["invalid"].as_object().unwrap().len(), 3, "{verdict:#}");
}

#[test]
fn every_spdx_bom_is_valid_spdx_3_0_1() {
    let Some(py) = py::prerequisites(WHAT) else { return };
    let d = Dir::new();
    let inputs = inputs(py, &d);
    let boms = boms("spdx", &d, &inputs);
    validate(py, "spdx", &boms);
    // The real model's package: its label, and its file's SHA-256.
    let doc: JsonValue = serde_json::from_slice(&std::fs::read(&boms[0]).unwrap()).unwrap();
    let graph = doc["@graph"].as_array().unwrap();
    let pkg = graph.iter().find(|e| e["type"] == "ai_AIPackage").unwrap();
    let label = gd_in(&d.path(""), &[py.path("model").to_str().unwrap()]);
    let label = text(&label.stdout)[..64].to_owned();
    assert_eq!(pkg["externalIdentifier"][0]["identifier"], format!("sha256:{label}"));
    let file = graph.iter().find(|e| e["type"] == "software_File").unwrap();
    assert_eq!(file["verifiedUsing"][0]["hashValue"], hex(&sha(&std::fs::read(py.path("model")).unwrap())));
}
