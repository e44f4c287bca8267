//! ONNX models in a directory through the binary (directory contract
//! revision 3 §3 rule 4, docs/SPEC.md Part VI X8, docs/adr/0047): each
//! `P.onnx` is an `ONNX` component with the external data files it names,
//! one label wherever its elements lie (inline, one external file, a file
//! per tensor, an `onnx/` folder as Hugging Face repositories have), its
//! `--json` components, `inspect` and `diff` (a changed model goes on into
//! ONNX's own diff), and every refusal naming the directory and the file.
//!
//! The models are written record by record here (as tests/cli/onnx_cli.rs
//! writes them: SPEC X10's worked example), so the `ONNX` component's
//! digest is SPEC's worked label, not one the binary printed.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::Path;

use common::onnx::{int, s, value_info};
use common::tree::{expected_label, file_component, weights_component};
use common::{Dir, gd_in, text};
use serde_json::Value as JsonValue;

/// SPEC X10's second worked example's label (the model `w` below).
const WORKED_W: &str = "e8dd38d6e7341d5c5f8e40b8d849c33e069a6e43f35e32da354b94ca2cbcbb4e";

/// `w`'s elements: F32 [2] = 1.0, 2.0.
const W: [u8; 8] = [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40];

/// `v`'s elements: F32 [2] = 3.0, 4.0.
const V: [u8; 8] = [0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40];

const CONFIG: &[u8] = br#"{"model_type":"bert"}"#;

/// Where a tensor's elements lie.
#[derive(Clone, Copy)]
enum At<'a> {
    /// `raw_data`.
    Inline(&'a [u8]),
    /// An external file at an offset.
    File(&'a str, u64),
}

/// An F32 [2] initializer named `name`.
fn tensor(name: &str, at: At<'_>) -> Vec<u8> {
    let data = match at {
        At::Inline(bytes) => s(9, bytes),
        At::File(location, offset) => {
            let entry = |k: &str, v: &str| s(13, &[s(1, k.as_bytes()), s(2, v.as_bytes())].concat());
            [entry("location", location), entry("offset", &offset.to_string()), entry("length", "8"), int(14, 1)]
                .concat()
        }
    };
    [int(1, 2), int(2, 1), s(8, name.as_bytes()), data].concat()
}

/// SPEC X10's model (`Identity` from x to y) with `tensors` as its
/// initializers.
fn model(tensors: &[Vec<u8>]) -> Vec<u8> {
    let node = [s(1, b"x"), s(2, b"y"), s(4, b"Identity")].concat();
    let mut graph = [s(1, &node), s(2, b"g")].concat();
    for t in tensors {
        graph.extend(s(5, t));
    }
    graph.extend([s(11, &value_info("x")), s(12, &value_info("y"))].concat());
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}

fn gd(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = gd_in(dir, args);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// The label of a directory of `config.json` and the one-tensor model
/// named `name`.
fn expected(name: &str) -> String {
    expected_label(&[file_component("config.json", CONFIG), weights_component(b"ONNX", name, WORKED_W)])
}

#[test]
fn an_onnx_model_is_one_component_wherever_its_elements_lie() {
    let d = Dir::new();
    // Inline.
    std::fs::create_dir_all(d.path("inline")).unwrap();
    d.write("inline/config.json", CONFIG);
    d.write("inline/model.onnx", &model(&[tensor("w", At::Inline(&W))]));
    // The same model saved with its weights in one external file, at an
    // offset, with bytes around them that are not content.
    std::fs::create_dir_all(d.path("external")).unwrap();
    d.write("external/config.json", CONFIG);
    d.write("external/model.onnx", &model(&[tensor("w", At::File("model.onnx_data", 4))]));
    d.write("external/model.onnx_data", &[b"junk".as_slice(), &W, b"more"].concat());
    // In an `onnx/` folder, its data below it, as Hugging Face repositories
    // lay it out (and named like a PyTorch candidate: it is the model's).
    std::fs::create_dir_all(d.path("hub/onnx/weights")).unwrap();
    d.write("hub/config.json", CONFIG);
    d.write("hub/onnx/model.onnx", &model(&[tensor("w", At::File("weights/w.bin", 0))]));
    d.write("hub/onnx/weights/w.bin", &W);
    let (code, out, err) = gd(&d.path(""), &["inline", "external", "hub"]);
    assert_eq!(code, Some(0), "{err}");
    let (one, hub) = (expected("model.onnx"), expected("onnx/model.onnx"));
    assert_eq!(out, format!("{one}  inline\n{one}  external\n{hub}  hub\n"));
    // The ONNX digest is the model's own label, as the file alone prints it.
    assert_eq!(gd(&d.path(""), &["external/model.onnx"]).1, format!("{WORKED_W}  external/model.onnx\n"));

    // Moving the external data back into the file relabels the same.
    d.write("external/model.onnx", &model(&[tensor("w", At::Inline(&W))]));
    std::fs::remove_file(d.path("external/model.onnx_data")).unwrap();
    assert_eq!(gd(&d.path(""), &["external"]).1, format!("{one}  external\n"));

    // A changed element in the external file changes the label; bytes of
    // it outside every range do not.
    d.write("hub/onnx/weights/w.bin", &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x41]);
    assert_ne!(gd(&d.path(""), &["hub"]).1, format!("{hub}  hub\n"));
}

#[test]
fn a_file_per_tensor_is_the_same_model_as_inline() {
    let d = Dir::new();
    std::fs::create_dir_all(d.path("a")).unwrap();
    std::fs::create_dir_all(d.path("b")).unwrap();
    d.write("a/m.onnx", &model(&[tensor("w", At::Inline(&W)), tensor("v", At::Inline(&V))]));
    d.write("b/m.onnx", &model(&[tensor("w", At::File("w", 0)), tensor("v", At::File("v", 0))]));
    d.write("b/w", &W);
    d.write("b/v", &V);
    let (code, out, err) = gd(&d.path(""), &["a/m.onnx", "a", "b"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let label = lines[0].split_whitespace().next().unwrap();
    let want = expected_label(&[weights_component(b"ONNX", "m.onnx", label)]);
    assert_eq!(lines[1..], [format!("{want}  a"), format!("{want}  b")]);
    // Two files in one component.
    let (_, json, _) = gd(&d.path(""), &["--json", "b"]);
    let j: JsonValue = serde_json::from_str(&json).unwrap();
    let c = &j["files"][0]["components"];
    assert_eq!(c.as_array().map(Vec::len), Some(1), "{c}");
    assert_eq!(c[0]["kind"], "ONNX");
    assert_eq!(c[0]["name"], "m.onnx");
    assert_eq!(c[0]["files"], serde_json::json!([{"path": "m.onnx"}, {"path": "w"}, {"path": "v"}]));
}

#[test]
fn json_inspect_and_diff_show_the_onnx_component() {
    let d = Dir::new();
    for side in ["a", "b"] {
        std::fs::create_dir_all(d.path(&format!("{side}/onnx"))).unwrap();
        d.write(&format!("{side}/config.json"), CONFIG);
        d.write(&format!("{side}/onnx/model.onnx"), &model(&[tensor("w", At::File("model.onnx_data", 0))]));
        d.write(&format!("{side}/onnx/model.onnx_data"), &W);
    }
    let (code, json, err) = gd(&d.path(""), &["--json", "a"]);
    assert_eq!(code, Some(0), "{err}");
    let j: JsonValue = serde_json::from_str(&json).unwrap();
    let e = &j["files"][0];
    assert_eq!(e["label"], expected("onnx/model.onnx").as_str());
    let onnx = e["components"].as_array().unwrap().iter().find(|c| c["kind"] == "ONNX").unwrap().clone();
    assert_eq!(onnx["name"], "onnx/model.onnx");
    assert_eq!(onnx["digest"], WORKED_W);
    assert_eq!(onnx["files"], serde_json::json!([{"path": "onnx/model.onnx"}, {"path": "onnx/model.onnx_data"}]));

    let (code, out, err) = gd(&d.path(""), &["inspect", "a"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("2 components (1 ONNX, 1 FILE)"), "{out}");
    assert!(out.contains("== ONNX onnx/model.onnx: ONNX model =="), "{out}");
    assert!(out.contains("onnx/model.onnx"), "{out}");

    // One element changed: the directory's diff names the component and
    // goes on into ONNX's own diff, which names the initializer.
    d.write("b/onnx/model.onnx_data", &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x41]);
    let (code, out, err) = gd(&d.path(""), &["diff", "a", "b"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains("ONNX onnx/model.onnx"), "{out}");
    assert!(out.contains("initializer 'w'"), "{out}");
}

/// `gguf-digest DIR` fails with exit 2 naming the directory and `why`.
fn refused(d: &Dir, dir: &str, why: &str) {
    let (code, out, err) = gd(&d.path(""), &[dir]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains(dir) && err.contains(why), "{why}: {err}");
}

#[test]
fn what_a_directory_refuses_of_its_onnx_models() {
    let d = Dir::new();
    let at = |dir: &str, name: &str, bytes: &[u8]| {
        std::fs::create_dir_all(d.path(dir)).unwrap();
        d.write(&format!("{dir}/{name}"), bytes);
    };
    // A name the contract refuses: the model is an error naming it.
    at("up", "m.onnx", &model(&[tensor("w", At::File("../w.bin", 0))]));
    refused(&d, "up", "'../w.bin'");
    // A missing file.
    at("missing", "m.onnx", &model(&[tensor("w", At::File("gone.bin", 0))]));
    refused(&d, "missing", "m.onnx: its external data names gone.bin, which is not a file of the directory");
    // A file named by two models.
    at("two", "a.onnx", &model(&[tensor("w", At::File("w.bin", 0))]));
    at("two", "b.onnx", &model(&[tensor("w", At::File("w.bin", 0))]));
    at("two", "w.bin", &W);
    refused(&d, "two", "two: w.bin: is named by two models, a.onnx and b.onnx");
    // A link out of the directory's tree: the walk refuses it.
    at("out", "m.onnx", &model(&[tensor("w", At::File("w.bin", 0))]));
    d.write("w.bin", &W);
    symlink(d.path("w.bin"), d.path("out/w.bin")).unwrap();
    refused(&d, "out", "w.bin");
    // A file of a skipped entry is no file of the directory.
    at("skipped/.cache", "w.bin", &W);
    at("skipped", "m.onnx", &model(&[tensor("w", At::File(".cache/w.bin", 0))]));
    refused(&d, "skipped", "its external data names .cache/w.bin, which is not a file of the directory");
    // A model's file named as another's data.
    at("nested", "a.onnx", &model(&[tensor("w", At::File("b.onnx", 0))]));
    at("nested", "b.onnx", &model(&[tensor("w", At::Inline(&W))]));
    refused(&d, "nested", "nested: b.onnx: is named by a.onnx, but is a model of its own");
    // Another directory's file cannot be reached.
    at("side/d", "m.onnx", &model(&[tensor("w", At::File("w.bin", 0))]));
    at("side", "w.bin", &W);
    refused(&d, "side", "not a file of the directory");
    // A Git LFS pointer where the model should be.
    at("lfs", "m.onnx", b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n");
    refused(&d, "lfs", "Git LFS");
}
