//! `bom` through the real binary: the CycloneDX document's content for
//! GGUF (one file, a shard set), safetensors, Ollama and directory inputs,
//! its determinism under SOURCE_DATE_EPOCH, and every refusal (exit 2,
//! nothing written). tests/interop/bom.rs validates the documents
//! against the CycloneDX 1.6 schema.
use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::Value as JsonValue;

/// `gguf-digest bom ARGS` in `dir`, the timestamp fixed, the store `ollama`.
pub(crate) fn bom_in(dir: &Path, args: &[&str], ollama: Option<&Path>) -> Output {
    let mut c = Command::new(gguf_digest_bin());
    c.arg("bom").args(args).current_dir(dir).env("SOURCE_DATE_EPOCH", "1700000000");
    match ollama {
        Some(root) => c.env("OLLAMA_MODELS", root),
        None => c.env_remove("OLLAMA_MODELS"),
    };
    c.output().unwrap()
}

fn doc(o: &Output) -> JsonValue {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn prop<'a>(c: &'a JsonValue, name: &str) -> Option<&'a str> {
    c["properties"].as_array()?.iter().find(|p| p["name"] == name)?["value"].as_str()
}

/// A GGUF model that says what it is, as llama.cpp's converter writes it.
pub(crate) fn described_gguf() -> Gguf {
    rich_model(&[0, 8])
        .kv("general.license", Val::str("apache-2.0"))
        .kv("general.organization", Val::str("Example Org"))
        .kv("general.version", Val::str("v2"))
        .kv("general.size_label", Val::str("1K"))
        .kv("general.file_type", Val::U32(15))
        .kv("general.base_model.count", Val::U32(1))
        .kv("general.base_model.0.name", Val::str("Base One"))
        .kv("general.base_model.0.organization", Val::str("Upstream"))
        .kv("general.base_model.0.repo_url", Val::str("https://huggingface.co/upstream/base-one"))
        .kv("general.dataset.count", Val::U32(1))
        .kv("general.dataset.0.name", Val::str("Web Text"))
}

#[test]
fn a_gguf_model_is_a_component_with_its_label_metadata_and_file_hash() {
    let d = Dir::new();
    let g = described_gguf();
    let bytes = g.build();
    d.write("m.gguf", &bytes);
    let b = doc(&bom_in(&d.path(""), &["m.gguf"], None));
    assert_eq!(b["bomFormat"], "CycloneDX");
    assert_eq!(b["specVersion"], "1.6");
    assert_eq!(b["version"], 1);
    assert_eq!(b["metadata"]["timestamp"], "2023-11-14T22:13:20Z");
    assert_eq!(b["metadata"]["tools"]["components"][0]["name"], "gguf-digest");
    let m = &b["components"][0];
    assert_eq!(m["type"], "machine-learning-model");
    assert_eq!(m["name"], "rich");
    assert_eq!(m["version"], "v2");
    assert_eq!(m["supplier"]["name"], "Example Org");
    assert_eq!(m["licenses"][0]["license"]["name"], "apache-2.0");
    assert_eq!(prop(m, "gguf-digest:label"), Some(g.expected_label().as_str()));
    assert_eq!(prop(m, "gguf-digest:format"), Some("gguf"));
    assert_eq!(prop(m, "gguf-digest:contract"), Some("canonical-skeleton-v1"));
    assert_eq!(prop(m, "gguf-digest:reference"), Some("m.gguf"));
    assert_eq!(prop(m, "gguf-digest:quantization"), Some("Q4_K_M"));
    assert_eq!(prop(m, "gguf-digest:size-label"), Some("1K"));
    assert_eq!(prop(m, "gguf-digest:tensor-type:F32"), Some("1"));
    assert_eq!(prop(m, "gguf-digest:tensor-type:Q8_0"), Some("1"));
    let base = &m["pedigree"]["ancestors"][0];
    assert_eq!(base["name"], "Base One");
    assert_eq!(base["supplier"]["name"], "Upstream");
    assert_eq!(base["externalReferences"][0]["url"], "https://huggingface.co/upstream/base-one");
    let params = &m["modelCard"]["modelParameters"];
    assert_eq!(params["architectureFamily"], "llama");
    assert_eq!(params["datasets"][0], serde_json::json!({"type": "dataset", "name": "Web Text"}));
    let files = m["components"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["type"], "file");
    assert_eq!(files[0]["name"], "m.gguf");
    assert_eq!(files[0]["hashes"][0]["alg"], "SHA-256");
    assert_eq!(files[0]["hashes"][0]["content"], hex(&sha(&bytes)));
    assert_eq!(prop(&files[0], "gguf-digest:size"), Some(bytes.len().to_string().as_str()));
}

#[test]
fn shards_safetensors_and_a_directory_are_one_component_each() {
    let d = Dir::new();
    let g = rich_model(&[0, 0, 8]);
    let shards = g.split(&[1, 2]);
    let paths = write_set(&d, "s", &shards);
    let st = st::St::new().meta("format", "pt").tensor(st::StTensor::filled("w", "BF16", &[2, 2], 1));
    let st_bytes = st.build();
    d.write("w.safetensors", &st_bytes);
    std::fs::create_dir_all(d.path("dir")).unwrap();
    let only = described_gguf();
    d.write("dir/only.gguf", &only.build());
    let first = paths[0].file_name().unwrap().to_str().unwrap().to_owned();
    // Every shard named: one component for the set, as the labelling does.
    let second = paths[1].file_name().unwrap().to_str().unwrap().to_owned();
    let b = doc(&bom_in(&d.path(""), &[&first, &second, "w.safetensors", "dir"], None));
    let c = b["components"].as_array().unwrap();
    assert_eq!(c.len(), 3, "{b}");
    assert_eq!(prop(&c[0], "gguf-digest:label"), Some(g.expected_label().as_str()));
    let files: Vec<&str> = c[0]["components"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(files, [first.as_str(), second.as_str()]);
    for (f, p) in c[0]["components"].as_array().unwrap().iter().zip(&paths) {
        assert_eq!(f["hashes"][0]["content"], hex(&sha(&std::fs::read(p).unwrap())));
    }
    assert_eq!(prop(&c[1], "gguf-digest:format"), Some("safetensors"));
    assert_eq!(prop(&c[1], "gguf-digest:label"), Some(st.expected_label().as_str()));
    assert_eq!(prop(&c[1], "gguf-digest:safetensors:metadata:format"), Some("pt"));
    assert_eq!(prop(&c[1], "gguf-digest:tensor-type:BF16"), Some("1"));
    assert_eq!(c[1]["components"][0]["hashes"][0]["content"], hex(&sha(&st_bytes)));
    assert_eq!(c[1]["name"], "w.safetensors", "no general.name: named as given");
    // A directory is one model with the directory label (ADR 0023), its
    // GGUF's facts, and every file of it hashed.
    let dir_label = text(&gd_in(&d.path(""), &["dir"]).stdout)[..64].to_string();
    assert_eq!(prop(&c[2], "gguf-digest:label"), Some(dir_label.as_str()));
    assert_eq!(prop(&c[2], "gguf-digest:format"), Some("directory"));
    assert_eq!(prop(&c[2], "gguf-digest:reference"), Some("dir"));
    assert_eq!(c[2]["components"][0]["hashes"][0]["content"], hex(&sha(&only.build())));
    let refs: Vec<&str> = c.iter().map(|m| m["bom-ref"].as_str().unwrap()).collect();
    assert_eq!(refs, ["model-1", "model-2", "model-3"]);
}

#[test]
fn an_ollama_model_lists_its_blobs_with_their_digests() {
    let d = Dir::new();
    let store = ollama::Store::new(&d.path("store"));
    let g = described_gguf();
    let weights = store.blob(ollama::MODEL, &g.build());
    let license = store.blob(ollama::LICENSE, b"Apache License 2.0");
    let config = store.config("");
    store.manifest("tiny", &config, &[weights.clone(), license.clone()]);
    let b = doc(&bom_in(&d.path(""), &["ollama:tiny"], Some(&store.root)));
    let m = &b["components"][0];
    assert_eq!(prop(m, "gguf-digest:format"), Some("ollama"));
    assert_eq!(prop(m, "gguf-digest:reference"), Some("ollama:tiny"));
    assert_eq!(m["name"], "rich", "the weights' general.name");
    assert_eq!(m["modelCard"]["modelParameters"]["architectureFamily"], "llama");
    let hashes: Vec<String> = m["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("sha256:{}", f["hashes"][0]["content"].as_str().unwrap()))
        .collect();
    // Each blob's SHA-256 is the digest the store names it by.
    assert!(hashes.contains(&weights.digest), "{hashes:?}");
    assert!(hashes.contains(&license.digest), "{hashes:?}");
}

#[test]
fn the_same_models_give_the_same_bom() {
    let d = Dir::new();
    let bytes = described_gguf().build();
    d.write("a.gguf", &bytes);
    d.write("b.gguf", &bytes);
    d.write("other.gguf", &rich_model(&[0]).build());
    let a = bom_in(&d.path(""), &["a.gguf"], None);
    assert_eq!(a.stdout, bom_in(&d.path(""), &["a.gguf"], None).stdout, "byte for byte");
    let (a, b) = (doc(&a), doc(&bom_in(&d.path(""), &["b.gguf"], None)));
    assert_eq!(a["serialNumber"], b["serialNumber"], "the serial number is the labels', not the names'");
    let serial = a["serialNumber"].as_str().unwrap();
    assert!(serial.starts_with("urn:uuid:") && serial.len() == 45, "{serial}");
    let other = doc(&bom_in(&d.path(""), &["other.gguf"], None));
    assert_ne!(other["serialNumber"], a["serialNumber"]);
}

#[test]
fn out_writes_the_file_and_only_a_whole_bom() {
    let d = Dir::new();
    d.write("m.gguf", &described_gguf().build());
    let o = bom_in(&d.path(""), &["--out", "bom.json", "m.gguf"], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let written: JsonValue = serde_json::from_slice(&std::fs::read(d.path("bom.json")).unwrap()).unwrap();
    assert_eq!(written["components"][0]["name"], "rich");
    // A model that cannot be labelled: exit 2, nothing written, the old file kept.
    let o = bom_in(&d.path(""), &["--out", "bom.json", "m.gguf", "missing.gguf"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("missing.gguf"), "{}", text(&o.stderr));
    let kept: JsonValue = serde_json::from_slice(&std::fs::read(d.path("bom.json")).unwrap()).unwrap();
    assert_eq!(kept, written);
    let o = bom_in(&d.path(""), &["--out", "new.json", "missing.gguf"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(!d.path("new.json").exists());
    let names: Vec<_> = std::fs::read_dir(d.path("")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no partial file left: {names:?}");
    // A directory where the file should go: exit 2, said why.
    std::fs::create_dir_all(d.path("taken")).unwrap();
    let o = bom_in(&d.path(""), &["--out", "taken", "m.gguf"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("bom: 'taken'") || text(&o.stderr).contains("bom: taken"), "{}", text(&o.stderr));
}

#[test]
fn refusals_exit_2_and_print_nothing() {
    let d = Dir::new();
    d.write("m.gguf", &described_gguf().build());
    d.write("bad.gguf", b"GGUF\x03\0\0\0");
    for (args, says) in [
        (&["-"][..], "standard input"),
        (&["m.gguf", "bad.gguf"][..], "bad.gguf"),
        (&["m.gguf", "ollama:absent"][..], "absent"),
    ] {
        let o = bom_in(&d.path(""), args, Some(&d.path("no-store")));
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(text(&o.stderr).contains(says), "{args:?}: {}", text(&o.stderr));
    }
    let o = Command::new(gguf_digest_bin())
        .args(["bom", "m.gguf"])
        .current_dir(d.path(""))
        .env("SOURCE_DATE_EPOCH", "yesterday")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("SOURCE_DATE_EPOCH"), "{}", text(&o.stderr));
    // No model at all is a usage error.
    let o = Command::new(gguf_digest_bin()).arg("bom").current_dir(d.path("")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn format_spdx_writes_an_ai_package_per_model_with_its_files() {
    let d = Dir::new();
    let g = described_gguf();
    let bytes = g.build();
    d.write("m.gguf", &bytes);
    let b = doc(&bom_in(&d.path(""), &["--format", "spdx", "m.gguf"], None));
    assert_eq!(b["@context"], "https://spdx.org/rdf/3.0.1/spdx-context.jsonld");
    let graph = b["@graph"].as_array().unwrap();
    let of = |t: &str| graph.iter().filter(|e| e["type"] == t).collect::<Vec<_>>();
    let pkg = of("ai_AIPackage")[0];
    assert_eq!(pkg["name"], "rich");
    assert_eq!(pkg["software_packageVersion"], "v2");
    assert_eq!(pkg["externalIdentifier"][0]["identifier"], format!("sha256:{}", g.expected_label()));
    assert_eq!(pkg["ai_typeOfModel"][0], "llama");
    let file = of("software_File")[0];
    assert_eq!(file["verifiedUsing"][0]["hashValue"], hex(&sha(&bytes)));
    let contains = of("Relationship").into_iter().find(|r| r["relationshipType"] == "contains").unwrap();
    assert_eq!((&contains["from"], &contains["to"][0]), (&pkg["spdxId"], &file["spdxId"]));
    let base = of("ai_AIPackage").into_iter().find(|p| p["name"] == "Base One").unwrap();
    let ancestor = of("Relationship").into_iter().find(|r| r["relationshipType"] == "ancestorOf").unwrap();
    assert_eq!((&ancestor["from"], &ancestor["to"][0]), (&base["spdxId"], &pkg["spdxId"]));
    assert_eq!(of("CreationInfo")[0]["created"], "2023-11-14T22:13:20Z");
    // Not a format it writes: a usage error.
    let o = bom_in(&d.path(""), &["--format", "xml", "m.gguf"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}
