//! `inspect` and `diff` of directories (#25 item 4): inspect lists every
//! component with its kind, name, digest, files and size and shows each
//! weights component's own inspection; diff names every component added,
//! removed or changed, goes into a changed weights component leaf by leaf,
//! and names the members of a changed JSON file; a directory against a
//! file is refused as two formats.

use crate::common;

use std::path::Path;

use common::st::*;
use common::tree::{self, Files};
use common::*;
use serde_json::Value as JsonValue;

fn weights(seed: u8) -> St {
    St::new().meta("format", "pt").tensor(StTensor::filled("a", "F32", &[4, 2], seed)).tensor(StTensor::filled(
        "b",
        "U8",
        &[5],
        2,
    ))
}

fn files() -> Files {
    vec![
        ("config.json".into(), br#"{"hidden_size": 8, "architectures": ["BertModel"]}"#.to_vec()),
        ("tokenizer_config.json".into(), br#"{"model_max_length": 512}"#.to_vec()),
        ("1_Pooling/config.json".into(), br#"{"pooling_mode_mean_tokens": true}"#.to_vec()),
        ("vocab.txt".into(), b"[PAD]\n[UNK]\n".to_vec()),
        ("README.md".into(), b"# m\n".to_vec()),
        ("model.safetensors".into(), weights(1).build()),
    ]
}

fn set(files: &mut Files, name: &str, bytes: &[u8]) {
    match files.iter_mut().find(|(n, _)| n == name) {
        Some(f) => f.1 = bytes.to_vec(),
        None => files.push((name.into(), bytes.to_vec())),
    }
}

fn gd(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = gd_in(dir, args);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

#[test]
fn inspect_lists_every_component_and_the_weights_inside() {
    let d = Dir::new();
    tree::plain(&d.path("m"), &files());
    let label = gd(&d.path(""), &["m"]).1;
    let (code, out, err) = gd(&d.path(""), &["inspect", "m"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("directory   m\nformat      directory (directory-skeleton-v1)\n"), "{out}");
    assert!(out.contains(&format!("label       {}", &label[..64])), "{out}");
    assert!(out.contains("in 6 components (1 SFTN, 5 FILE)"), "{out}");
    for row in ["FILE  1_Pooling/config.json", "FILE  vocab.txt", "SFTN  model"] {
        assert!(out.contains(row), "{row}: {out}");
    }
    assert!(out.contains("== SFTN model: safetensors weights =="), "the weights' own inspection: {out}");

    let (code, json, _) = gd(&d.path(""), &["inspect", "--json", "m"]);
    assert_eq!(code, Some(0));
    let v: JsonValue = serde_json::from_str(&json).unwrap();
    assert_eq!(v["model_format"], "directory");
    assert_eq!(v["label"], &label[..64]);
    let components = v["components"].as_array().unwrap();
    assert_eq!(components.len(), 6);
    let model = components.iter().find(|c| c["kind"] == "SFTN").unwrap();
    assert_eq!(model["name"], "model");
    assert_eq!(model["digest"], weights(1).expected_label());
    assert_eq!(model["files"][0]["path"], "model.safetensors");
    assert_eq!(model["size"], weights(1).build().len());
    let vocab = components.iter().find(|c| c["name"] == "vocab.txt").unwrap();
    assert_eq!(vocab["digest"], hex(&sha(b"[PAD]\n[UNK]\n")));
    assert_eq!(v["weights"][0]["inspection"]["label"], weights(1).expected_label());
}

#[test]
fn diff_names_every_component_and_the_json_members_that_changed() {
    let d = Dir::new();
    tree::plain(&d.path("a"), &files());
    let mut b = files();
    set(&mut b, "tokenizer_config.json", br#"{"model_max_length": 512, "chat_template": "{{ messages }}"}"#);
    set(&mut b, "1_Pooling/config.json", br#"{"pooling_mode_mean_tokens": false}"#);
    set(&mut b, "vocab.txt", b"[PAD]\n[UNK]\n[CLS]\n");
    set(&mut b, "generation_config.json", b"{}");
    b.retain(|(n, _)| n != "README.md");
    set(&mut b, "model.safetensors", &weights(9).build());
    tree::plain(&d.path("b"), &b);

    let (code, out, err) = gd(&d.path(""), &["diff", "a", "b"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains("\n1 the same; 6 differ:\n"), "{out}");
    assert!(out.contains("~ FILE 1_Pooling/config.json  "), "{out}");
    assert!(out.contains("    pooling_mode_mean_tokens: true → false\n"), "{out}");
    assert!(out.contains("    chat_template: added '{{ messages }}'\n"), "{out}");
    assert!(out.contains("- FILE README.md  "), "{out}");
    assert!(out.contains("+ FILE generation_config.json  "), "{out}");
    assert!(out.contains("~ FILE vocab.txt  ") && out.contains("    bytes differ\n"), "{out}");
    assert!(out.contains("~ SFTN model  "), "{out}");
    // The weights' own diff, leaf by leaf, names the tensor.
    let sftn = &out[out.find("~ SFTN model").unwrap()..];
    assert!(sftn.lines().skip(1).any(|l| l.starts_with("    ") && l.contains('a')), "{sftn}");

    let (code, json, _) = gd(&d.path(""), &["diff", "--json", "a", "b"]);
    assert_eq!(code, Some(1));
    let v: JsonValue = serde_json::from_str(&json).unwrap();
    assert_eq!(v["labels_equal"], false);
    assert_eq!(v["same"], 1);
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 6);
    let pooling = changes.iter().find(|c| c["name"] == "1_Pooling/config.json").unwrap();
    assert_eq!(
        pooling["members"][0],
        serde_json::json!({"member": "pooling_mode_mean_tokens", "change": "changed", "a": "true", "b": "false"})
    );
    assert_eq!(pooling["a"]["kind"], "FILE");
    let added = changes.iter().find(|c| c["change"] == "added").unwrap();
    assert_eq!(added["b"]["name"], "generation_config.json");
    assert_eq!(added["b"]["files"][0]["path"], "generation_config.json");
    let model = changes.iter().find(|c| c["kind"] == "SFTN").unwrap();
    assert!(model["weights"].is_object(), "{model}");
}

#[test]
fn a_json_file_written_differently_and_many_members_changed_are_said_so() {
    let d = Dir::new();
    let mut a = files();
    let many: String = (0..40).map(|i| format!("\"k{i}\": {i}")).collect::<Vec<_>>().join(", ");
    set(&mut a, "generation_config.json", format!("{{{many}}}").as_bytes());
    tree::plain(&d.path("a"), &a);
    let mut b = a.clone();
    // The same members and values, spaced and ordered otherwise.
    set(&mut b, "config.json", b"{\n  \"architectures\": [\"BertModel\"],\n  \"hidden_size\": 8\n}\n");
    let changed: String = (0..40).map(|i| format!("\"k{i}\": {}", i + 1)).collect::<Vec<_>>().join(", ");
    set(&mut b, "generation_config.json", format!("{{{changed}}}").as_bytes());
    tree::plain(&d.path("b"), &b);
    let (code, out, err) = gd(&d.path(""), &["diff", "a", "b"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        out.contains("~ FILE config.json  ") && out.contains("    the same members and values, written differently\n"),
        "{out}"
    );
    // At most 32 members named, the rest counted.
    assert!(out.contains("    k0: 0 → 1\n") && out.contains("    … and 8 more\n"), "{out}");
    assert!(!out.contains("    k39:"), "{out}");
}

#[test]
fn the_same_directory_in_two_layouts_has_no_difference() {
    let d = Dir::new();
    tree::plain(&d.path("a"), &files());
    tree::git_tree(&d.path("g"), &files());
    let (code, out, err) = gd(&d.path(""), &["diff", "a", "g"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("\nThe labels are equal: every component is the same.\n"), "{out}");
}

#[test]
fn a_directory_against_a_file_is_two_formats() {
    let d = Dir::new();
    tree::plain(&d.path("a"), &files());
    let (code, _, err) = gd(&d.path(""), &["diff", "a", "a/model.safetensors"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("a directory") && err.contains("a safetensors model"), "{err}");
}
