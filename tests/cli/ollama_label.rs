//! Ollama models in test stores built the way Ollama lays them out
//! (`common::ollama`): the label's invariances, its components (GGUF weights
//! by their GGUF label, tensor blobs by one safetensors label), the config
//! rules, `--verify-blobs`, every refusal of bad input with its exit code,
//! and that nothing outside the store is opened.
use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::ollama::*;
use common::st::{St, StTensor};
use common::*;
use serde_json::Value as JsonValue;

fn gd(store: &Store, args: &[&str]) -> Output {
    Command::new(gguf_digest_bin())
        .args(args)
        .env("OLLAMA_MODELS", &store.root)
        .stdin(Stdio::null())
        .output()
        .expect("runs gguf-digest")
}

fn label(store: &Store, reference: &str) -> String {
    let out = gd(store, &[reference]);
    assert_eq!(out.status.code(), Some(0), "{reference}: {}", text(&out.stderr));
    let t = text(&out.stdout);
    let (l, rest) = t.split_once("  ").expect("a sums line");
    assert_eq!(rest, format!("{reference}\n"));
    l.to_string()
}

fn components(store: &Store, reference: &str) -> Vec<JsonValue> {
    let out = gd(store, &["--json", reference]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    doc["files"][0]["components"].as_array().unwrap().clone()
}

/// An error: exit 2, nothing on stdout, one stderr line holding `says`.
fn refused(store: &Store, reference: &str, says: &str) {
    let out = gd(store, &[reference]);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{reference} must be refused ({says}): {e}");
    assert!(out.stdout.is_empty());
    assert!(e.contains(says), "{reference}: expected {says:?} in: {e}");
    assert!(e.starts_with("gguf-digest: "), "{e}");
}

fn gguf_model() -> Gguf {
    rich_model(&[0, 1, 8])
}

/// A GGUF model as Ollama stores it: written again in another KV and
/// tensor order (Ollama re-sorts both), split.* keys dropped.
fn ollama_rewrite(g: &Gguf) -> Gguf {
    let mut r = g.clone();
    r.kvs.reverse();
    r.info_order = Some((0..g.tensors.len()).rev().collect());
    r.data_order = Some((0..g.tensors.len()).rev().collect());
    r
}

fn simple(store: &Store, name: &str, g: &Gguf, extra_config: &str, template: &[u8]) -> Vec<Layer> {
    let layers = vec![store.blob(MODEL, &ollama_rewrite(g).build()), store.blob(TEMPLATE, template)];
    store.manifest(name, &store.config(extra_config), &layers);
    layers
}

#[test]
fn the_model_component_is_the_gguf_label_of_the_file_it_was_created_from() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let g = gguf_model();
    simple(&store, "m", &g, "", b"{{ .Prompt }}");
    let c = components(&store, "ollama:m");
    let model = c.iter().find(|c| c["media_type"] == MODEL).unwrap();
    assert_eq!(model["kind"], "gguf");
    assert_eq!(model["digest"], g.expected_label().as_str());
    // Created from the shards of a split model: Ollama merges them into one blob.
    let merged = Gguf { kvs: g.kvs.clone(), tensors: g.tensors.clone(), ..Gguf::default() };
    simple(&store, "from-shards", &merged.merged(), "", b"{{ .Prompt }}");
    assert_eq!(label(&store, "ollama:from-shards"), label(&store, "ollama:m"), "split.* keys are not content");
    // The label is every way of naming the model.
    let want = label(&store, "ollama:m");
    for r in ["ollama:m:latest", "ollama:library/m", "ollama:registry.ollama.ai/library/m:latest"] {
        assert_eq!(label(&store, r), want, "{r}");
    }
    let manifest = store.root.join("manifests/registry.ollama.ai/library/m/latest");
    assert_eq!(text(&gd(&store, &[manifest.to_str().unwrap()]).stdout).split("  ").next().unwrap(), want);
}

#[test]
fn layout_is_not_content_but_every_steering_text_is() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let g = gguf_model();
    let layers = simple(&store, "a", &g, r#""renderer": "r", "generation_defaults": {"temperature": 0.7}"#, b"T");
    let want = label(&store, "ollama:a");
    // Layer order, manifest spacing, derived config members, zero values: not content.
    let config = store.blob(
        CONFIG,
        br#"{"generation_defaults": {"top_k": 0, "temperature": 0.7}, "os": "darwin", "model_format": "gguf",
            "renderer": "r", "capabilities": ["completion"], "parser": "", "context_length": 131072}"#,
    );
    let mut reversed = layers.clone();
    reversed.reverse();
    store.manifest("b", &config, &reversed);
    assert_eq!(label(&store, "ollama:b"), want);
    // Each of these is content.
    let variants: [(&str, Vec<Layer>, Layer); 6] = [
        ("template", vec![layers[0].clone(), store.blob(TEMPLATE, b"T2")], store.config(r#""renderer": "r", "generation_defaults": {"temperature": 0.7}"#)),
        ("system", vec![layers[0].clone(), layers[1].clone(), store.blob(SYSTEM, b"be brief")], store.config(r#""renderer": "r", "generation_defaults": {"temperature": 0.7}"#)),
        ("sampler", layers.clone(), store.config(r#""renderer": "r", "generation_defaults": {"temperature": 0.8}"#)),
        ("renderer", layers.clone(), store.config(r#""renderer": "r2", "generation_defaults": {"temperature": 0.7}"#)),
        ("declared capabilities", layers.clone(), store.config(r#""renderer": "r", "generation_defaults": {"temperature": 0.7}, "capabilities": ["tools"], "capabilities_explicit": true"#)),
        ("a later Ollama's member", layers.clone(), store.config(r#""renderer": "r", "generation_defaults": {"temperature": 0.7}, "newthing": 1"#)),
    ];
    for (what, ls, cfg) in variants {
        store.manifest("v", &cfg, &ls);
        assert_ne!(label(&store, "ollama:v"), want, "{what} must change the label");
    }
    // Two license layers: both enter.
    let lic = store.blob(LICENSE, b"MIT");
    store.manifest("l1", &store.config(""), &[layers[0].clone(), lic.clone()]);
    store.manifest("l2", &store.config(""), &[layers[0].clone(), lic.clone(), lic]);
    assert_ne!(label(&store, "ollama:l1"), label(&store, "ollama:l2"));
}

#[test]
fn projector_adapter_draft_and_tensor_blobs() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let (g, p, a, dr) = (gguf_model(), rich_model(&[0]), rich_model(&[1]), rich_model(&[8, 0]));
    let layers = vec![
        store.blob(MODEL, &g.build()),
        store.blob(PROJECTOR, &p.build()),
        store.blob(ADAPTER, &a.build()),
        store.blob(DRAFT, &dr.build()),
        store.blob(ADAPTER, b"not a gguf file"),
    ];
    store.manifest("multi", &store.config(""), &layers);
    let c = components(&store, "ollama:multi");
    let by = |mt: &str| c.iter().filter(|x| x["media_type"] == mt).cloned().collect::<Vec<_>>();
    assert_eq!(by(PROJECTOR)[0]["digest"], p.expected_label().as_str());
    assert_eq!(by(DRAFT)[0]["digest"], dr.expected_label().as_str());
    let adapters = by(ADAPTER);
    assert_eq!(adapters.len(), 2);
    assert!(adapters.iter().any(|x| x["digest"] == a.expected_label().as_str() && x["kind"] == "gguf"));
    assert!(adapters.iter().any(|x| x["kind"] == "blob" && x["digest"] == hex(&sha(b"not a gguf file")).as_str()));

    // Tensor blobs: one safetensors component, the label of the same files.
    let q4 = St::new()
        .meta("quant_type", "int4")
        .meta("group_size", "32")
        .tensor(StTensor::filled("w.q", "U8", &[64, 16], 1))
        .tensor(StTensor::filled("w.q.scale", "BF16", &[64, 2], 2))
        .tensor(StTensor::filled("w.q.bias", "BF16", &[64, 2], 3));
    let q8 = St::new()
        .meta("quant_type", "int8")
        .tensor(StTensor::filled("v.q", "I8", &[32, 32], 4))
        .tensor(StTensor::filled("v.q.scale", "F16", &[32], 5));
    let experts = St::new().tensor(StTensor::filled("experts.0.w", "BF16", &[8, 8], 6)).tensor(StTensor::filled(
        "experts.1.w",
        "BF16",
        &[8, 8],
        7,
    ));
    let plain = St::new().tensor(StTensor::filled("norm", "F32", &[8], 8));
    let files = [q4, q8, experts, plain];
    let tl: Vec<Layer> =
        files.iter().zip(["w.q", "v.q", "experts", "norm"]).map(|(f, n)| store.named(TENSOR, &f.build(), n)).collect();
    let cfg_json = store.blob("application/vnd.ollama.image.json", br#"{"architectures": ["X"]}"#);
    let mut all = tl.clone();
    all.push(cfg_json);
    let st_manifest = store.manifest("st", &store.config(""), &all);
    let want = St::expected_skeleton_of(
        &files.iter().map(|f| (f.metadata.clone().unwrap_or_default(), f.tensors.clone())).collect::<Vec<_>>(),
    );
    let c = components(&store, "ollama:st");
    let t: Vec<&JsonValue> = c.iter().filter(|x| x["media_type"] == TENSOR).collect();
    assert_eq!(t.len(), 1, "all tensor blobs are one component");
    assert_eq!(t[0]["digest"], hex(&sha(&want)).as_str());
    assert_eq!(t[0]["name"], "");
    assert_eq!(t[0]["layers"].as_array().unwrap().len(), 4);
    // Tensor layer names are not content.
    let renamed: Vec<Layer> = tl.iter().map(|l| Layer { name: Some("x".into()), ..l.clone() }).collect();
    store.manifest("st2", &store.config(""), &[renamed, vec![all[4].clone()]].concat());
    let st_label = label(&store, "ollama:st");
    assert_eq!(label(&store, "ollama:st2"), st_label);

    // --verify-blobs audits each tensor blob through the file it is labelled
    // from: no blob is opened twice, and a changed byte is found.
    let out = gd(&store, &["--verify-blobs", "ollama:st"]);
    assert_eq!(text(&out.stdout), format!("{st_label}  ollama:st\n"), "{}", text(&out.stderr));
    let opts = gguf_digest::OpenOptions { verify_blobs: true, ..Default::default() };
    let m = gguf_digest::ollama::Model::open("ollama:st", &d.path("models"), &st_manifest, opts).unwrap();
    assert_eq!(m.blobs().len(), 5, "four tensor blobs audited, and the JSON blob");
    let paths: Vec<_> = m.sources().iter().map(|s| s.path().to_path_buf()).collect();
    let distinct: std::collections::HashSet<_> = paths.iter().collect();
    assert_eq!(distinct.len(), paths.len(), "a blob opened twice: {paths:?}");
    assert_eq!(paths.len(), 5);
    drop(m);
    flip_last_byte(&store.blob_path(&tl[3]));
    let out = gd(&store, &["--verify-blobs", "ollama:st"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not its layer's digest"), "{}", text(&out.stderr));
}

#[test]
fn verify_blobs_audits_weights_blobs() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let layers = simple(&store, "m", &gguf_model(), "", b"T");
    let want = label(&store, "ollama:m");
    let out = gd(&store, &["--verify-blobs", "ollama:m"]);
    assert_eq!(text(&out.stdout), format!("{want}  ollama:m\n"), "the same label");
    // A weights blob whose bytes changed (same size, still a GGUF): the label
    // changes without the audit; with it, the store is damaged.
    let p = store.blob_path(&layers[0]);
    let mut bytes = std::fs::read(&p).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    std::fs::write(&p, &bytes).unwrap();
    assert_ne!(label(&store, "ollama:m"), want);
    let out = gd(&store, &["--verify-blobs", "ollama:m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not its layer's digest"), "{}", text(&out.stderr));
}

#[test]
fn every_bad_input_is_refused_and_nothing_outside_the_store_is_opened() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let g = gguf_model();
    let layers = simple(&store, "good", &g, "", b"T");
    // Names.
    for (name, says) in [
        ("ollama:", "no such"),
        ("ollama:../etc", "is . or .."),
        ("ollama:a/../x", "is . or .."),
        ("ollama:m:..", "is . or .."),
        ("ollama:a\\b", "holds /"),
        ("ollama:/abs", "is empty"),
        ("ollama:a/b/c/d", "more than three"),
        ("ollama:nope", "no such model"),
    ] {
        if name == "ollama:" {
            continue; // 'ollama:' alone lists the store; tested below
        }
        refused(&store, name, says);
    }
    // A file outside the store that a `..` would reach is never opened.
    std::fs::write(d.path("secret"), b"{}").unwrap();
    refused(&store, "ollama:../../secret", "is . or ..");

    let cfg = store.config("");
    let hexd = "a".repeat(64);
    let bad_digest = Layer { digest: format!("sha256:{}", &hexd[1..]), ..layers[1].clone() };
    store.manifest("bad-digest", &cfg, &[layers[0].clone(), bad_digest]);
    refused(&store, "ollama:bad-digest", "is not sha256: and 64 hex digits");
    let traversal = Layer { digest: "sha256:../../../../secret".into(), ..layers[1].clone() };
    store.manifest("traversal", &cfg, &[traversal]);
    refused(&store, "ollama:traversal", "is not sha256: and 64 hex digits");
    let missing = Layer { digest: format!("sha256:{hexd}"), ..layers[1].clone() };
    store.manifest("missing", &cfg, &[missing]);
    refused(&store, "ollama:missing", "is missing");
    let wrong_size = Layer { size: layers[1].size + 1, ..layers[1].clone() };
    store.manifest("size", &cfg, &[wrong_size]);
    refused(&store, "ollama:size", "but its layer says");
    // A blob that is a directory, and one that is a symlink out of the store.
    let dir_blob = store.blob(TEMPLATE, b"D");
    std::fs::remove_file(store.blob_path(&dir_blob)).unwrap();
    std::fs::create_dir(store.blob_path(&dir_blob)).unwrap();
    store.manifest("dirblob", &cfg, &[Layer { size: 4096, ..dir_blob }]);
    refused(&store, "ollama:dirblob", "not a regular file");
    // A FIFO blob: refused at once, not waited on for a writer.
    let fifo_blob = store.blob(TEMPLATE, b"FIFO");
    std::fs::remove_file(store.blob_path(&fifo_blob)).unwrap();
    mkfifo(&store.blob_path(&fifo_blob));
    store.manifest("fifoblob", &cfg, &[Layer { size: 0, ..fifo_blob }]);
    refused(&store, "ollama:fifoblob", "is not a regular file");
    let link = store.blob(TEMPLATE, b"LINK");
    std::fs::remove_file(store.blob_path(&link)).unwrap();
    std::fs::write(d.path("outside"), b"LINK").unwrap();
    std::os::unix::fs::symlink(d.path("outside"), store.blob_path(&link)).unwrap();
    store.manifest("symlink", &cfg, &[link]);
    refused(&store, "ollama:symlink", "symbolic link");
    // A blob whose bytes are not its digest.
    let t = store.blob(TEMPLATE, b"ORIGINAL");
    std::fs::write(store.blob_path(&t), b"TAMPERED").unwrap();
    store.manifest("tampered", &cfg, &[t]);
    refused(&store, "ollama:tampered", "not its layer's digest");
    // Manifests.
    store.raw_manifest("huge", &vec![b' '; (16 << 20) + 1]);
    refused(&store, "ollama:huge", "at most 16777216 bytes");
    store.raw_manifest(
        "dup",
        format!(r#"{{"schemaVersion": 2, "schemaVersion": 2, "config": {}, "layers": []}}"#, cfg.json()).as_bytes(),
    );
    refused(&store, "ollama:dup", "repeated key");
    store.raw_manifest("deep", format!("{}{}", "[".repeat(70), "]".repeat(70)).as_bytes());
    refused(&store, "ollama:deep", "nested deeper than 64");
    store.raw_manifest("schema", br#"{"schemaVersion": 1, "layers": []}"#);
    refused(&store, "ollama:schema", "schemaVersion must be 2");
    // Config members of the wrong type, and a config that is not its digest.
    for (n, extra) in [("r0", r#""renderer": 0"#), ("p1", r#""parser": ["x"]"#), ("q1", r#""requires": {}"#)] {
        store.manifest(n, &store.config(extra), &layers);
        refused(&store, &format!("ollama:{n}"), "must be a string or null");
    }
    // (A config of its own: blobs are shared by content, and this one is damaged.)
    let c = store.config(r#""tampered": "yes""#);
    std::fs::write(store.blob_path(&c), b"{}                                                                                                                                                                                                                                                                                        ").unwrap();
    let c2 = Layer { size: std::fs::metadata(store.blob_path(&c)).unwrap().len(), ..c };
    store.manifest("cfg", &c2, &layers);
    refused(&store, "ollama:cfg", "not its digest");
    // A GGUF blob that is one shard of a split model.
    let shard = store.blob(MODEL, &g.split(&[1, 2])[0].build());
    store.manifest("shard", &cfg, &[shard]);
    refused(&store, "ollama:shard", "split GGUF model");
    // Other arguments are still labelled.
    let out = gd(&store, &["ollama:nope", "ollama:good"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).ends_with("  ollama:good\n"));
}

#[test]
fn every_model_of_a_store_and_check() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    simple(&store, "a", &gguf_model(), "", b"A");
    simple(&store, "me/b:v1", &gguf_model(), "", b"B");
    let out = gd(&store, &["ollama:"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let refs: Vec<&str> = t.lines().map(|l| l.split_once("  ").unwrap().1).collect();
    assert_eq!(refs, ["ollama:registry.ollama.ai/library/a:latest", "ollama:registry.ollama.ai/me/b:v1"]);
    std::fs::write(d.path("models.sums"), &out.stdout).unwrap();
    let out = gd(&store, &["-c", d.path("models.sums").to_str().unwrap()]);
    assert_eq!(text(&out.stdout), format!("{}: OK\n{}: OK\n", refs[0], refs[1]));
    // An empty store has no models: nothing to print, success.
    let empty = Store::new(&d.path("empty"));
    let out = gd(&empty, &["ollama:"]);
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0));
}

#[test]
fn inspect_and_diff() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let g = gguf_model();
    simple(&store, "a", &g, r#""renderer": "r""#, b"T1");
    simple(&store, "b", &g, r#""renderer": "r2""#, b"T2");
    let approved = d.write("approved.gguf", &g.build());
    let out = gd(&store, &["inspect", "ollama:a"]);
    let t = text(&out.stdout);
    assert!(t.contains("format      ollama") && t.contains("GGUF weights") && t.contains("renderer"), "{t}");
    let out = gd(&store, &["diff", "ollama:a", approved.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("weights identical"));
    let mut other = g.clone();
    other.tensors[0].data[0] ^= 1;
    let changed = d.write("changed.gguf", &other.build());
    let out = gd(&store, &["diff", "ollama:a", changed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("~ tensor blk.0.w: data sha256"), "{}", text(&out.stdout));
    let out = gd(&store, &["diff", "ollama:a", "ollama:b"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(t.contains("~ config renderer: 'r' → 'r2'") && t.contains("(weights identical)"), "{t}");
    let _ = Path::new("");
}

/// One model can be a file per tensor, all open at once: the binary raises
/// its soft limit on open files to the hard one, so a model of more blobs
/// than a low soft limit still labels.
#[test]
fn more_blobs_than_a_low_open_file_limit() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let mut layers = Vec::new();
    let mut files = Vec::new();
    for i in 0..300u16 {
        let f = St::new().tensor(StTensor::filled(&format!("t{i}"), "U8", &[4], i as u8));
        layers.push(store.named(TENSOR, &f.build(), &format!("t{i}")));
        files.push((Vec::new(), f.tensors.clone()));
    }
    store.manifest("many", &store.config(""), &layers);
    let want = hex(&sha(&St::expected_skeleton_of(&files)));
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -Sn 128 && exec {} --json ollama:many", gguf_digest_bin()))
        .env("OLLAMA_MODELS", &store.root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let c = doc["files"][0]["components"].as_array().unwrap();
    assert_eq!(c.iter().find(|x| x["media_type"] == TENSOR).unwrap()["digest"], want.as_str());
}

/// Names are found as Ollama's server finds them: ignoring case when the
/// path as written does not exist; two entries that differ only in case
/// are an error listing both.
#[test]
fn names_are_looked_up_ignoring_case_as_ollama_does() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    simple(&store, "Me/SmolLM2:Q4", &gguf_model(), "", b"T");
    let want = label(&store, "ollama:Me/SmolLM2:Q4");
    assert_eq!(label(&store, "ollama:me/smollm2:q4"), want);
    assert_eq!(label(&store, "ollama:ME/SMOLLM2:q4"), want);
    simple(&store, "me/smollm2:q4", &gguf_model(), "", b"other");
    assert_eq!(label(&store, "ollama:me/smollm2:q4"), label(&store, "ollama:me/smollm2:q4"), "the exact path wins");
    refused(&store, "ollama:ME/smollm2:q4", "differ only in case");
}

/// The progress bar's length comes from the manifest alone: every layer's
/// size and the config's, no blob opened (a missing one does not matter).
#[test]
fn the_progress_bar_is_sized_from_the_manifest() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let layers = simple(&store, "m", &gguf_model(), "", b"T");
    let config_size = std::fs::read(store.root.join("manifests/registry.ollama.ai/library/m/latest")).unwrap();
    let cfg: JsonValue = serde_json::from_slice(&config_size).unwrap();
    let want = layers.iter().map(|l| l.size).sum::<u64>() + cfg["config"]["size"].as_u64().unwrap();
    std::fs::remove_file(store.blob_path(&layers[0])).unwrap();
    assert_eq!(gguf_digest_formats::ollama::manifest_bytes_in(&store.root, "ollama:m").unwrap(), want);
    assert!(gguf_digest_formats::ollama::manifest_bytes_in(&store.root, "ollama:nope").is_err());
}

/// The config blob and the manifest file have rules of their own: a config
/// over 16 MiB or not JSON, and a manifest that is a symbolic link, are
/// refused (exit 2, naming what is wrong).
#[test]
fn config_and_manifest_files_are_checked() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let model = store.blob(MODEL, &gguf_model().build());
    let huge = store.blob(CONFIG, &vec![b' '; (16 << 20) + 1]);
    store.manifest("huge-config", &huge, std::slice::from_ref(&model));
    refused(&store, "ollama:huge-config", "at most 16777216 bytes");
    let not_json = store.blob(CONFIG, b"{\"a\": ");
    store.manifest("bad-config", &not_json, std::slice::from_ref(&model));
    refused(&store, "ollama:bad-config", "invalid JSON");
    let list = store.blob(CONFIG, b"[]");
    store.manifest("list-config", &list, std::slice::from_ref(&model));
    refused(&store, "ollama:list-config", "not an object");
    // A manifest that links elsewhere (here to a good one outside the store).
    let good = store.manifest("good", &store.config(""), &[model]);
    let outside = d.path("outside-manifest");
    std::fs::copy(&good, &outside).unwrap();
    let linked = good.with_file_name("linked");
    std::os::unix::fs::symlink(&outside, &linked).unwrap();
    refused(&store, "ollama:good:linked", "is a symbolic link");
    // Nor does the progress bar's length follow it.
    let e = gguf_digest_formats::ollama::manifest_bytes_in(&store.root, "ollama:good:linked").unwrap_err();
    assert!(matches!(e.kind(), gguf_digest::ErrorKind::NotRegularFile(gguf_digest_core::error::SYMBOLIC_LINK)), "{e}");
    assert!(gguf_digest_formats::ollama::manifest_bytes_in(&store.root, "ollama:good").unwrap() > 0);
}

/// `diff ollama:M approved.gguf` compares what Ollama serves: the *last*
/// model layer (its `GetModel` lets each model layer replace the one
/// before), and every adapter, projector or draft it loads besides. A
/// manifest that names the approved file first and other weights after it
/// must not pass as "weights identical" (docs/adr/0019).
#[test]
fn diff_against_a_file_compares_what_ollama_serves() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let g = gguf_model();
    let approved = d.write("approved.gguf", &g.build());
    let mut other = g.clone();
    other.tensors[0].data[0] ^= 1;
    let approved_blob = store.blob(MODEL, &ollama_rewrite(&g).build());
    let other_blob = store.blob(MODEL, &ollama_rewrite(&other).build());
    let template = store.blob(TEMPLATE, b"{{ .Prompt }}");
    let lora = store.blob(ADAPTER, &rich_model(&[1]).build());
    let proj = store.blob(PROJECTOR, &rich_model(&[0, 0]).build());
    let cfg = store.config("");
    store.manifest("ok", &cfg, &[approved_blob.clone(), template.clone()]);
    store.manifest("second", &cfg, &[approved_blob.clone(), template.clone(), other_blob.clone()]);
    store.manifest("first", &cfg, &[other_blob.clone(), template.clone(), approved_blob.clone()]);
    store.manifest("lora", &cfg, &[approved_blob.clone(), template.clone(), lora]);
    store.manifest("vision", &cfg, &[approved_blob.clone(), proj, template.clone()]);
    let file = approved.to_str().unwrap();

    let out = gd(&store, &["diff", "ollama:ok", file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).ends_with("weights identical\n"), "{}", text(&out.stdout));

    // Ollama serves the second model layer: the weights differ, by a tensor.
    let out = gd(&store, &["diff", "ollama:second", file]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("~ tensor blk.0.w: data sha256"), "{t}");
    assert!(t.contains("+ weights not in the file: model (layer #0)"), "{t}");
    assert!(t.ends_with("weights differ\n"), "{t}");

    // The served (last) model layer is the approved file, but an earlier
    // one is still weights the file does not account for.
    let out = gd(&store, &["diff", "ollama:first", file]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("= weights: the model's GGUF weights are the file's"), "{t}");
    assert!(t.contains("model (layer #0)") && t.contains("Ollama serves the last one"), "{t}");

    for (name, word, layer) in [("lora", "adapter", 2), ("vision", "projector", 1)] {
        let out = gd(&store, &["diff", &format!("ollama:{name}"), file]);
        let t = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{name}: {t}");
        assert!(t.contains(&format!("+ weights not in the file: {word} (layer #{layer})")), "{name}: {t}");
        assert!(t.ends_with("weights differ\n"), "{t}");
        // The file on the left: the same verdict.
        let out = gd(&store, &["diff", file, &format!("ollama:{name}")]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out.stdout));
        // And in JSON, named.
        let out = gd(&store, &["diff", "--json", &format!("ollama:{name}"), file]);
        let doc: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["labels_equal"], false);
        let u = doc["unaccounted_weights"].as_array().unwrap();
        assert_eq!(u.len(), 1, "{doc}");
        assert_eq!(u[0]["media_type"], format!("application/vnd.ollama.image.{word}"));
        assert_eq!(u[0]["layer"], layer);
    }
}

/// A tensor-blob model's weights component has exactly the safetensors
/// label of the model it was created from, so `diff` compares them leaf by
/// leaf, as for GGUF, instead of refusing "different formats".
#[test]
fn diff_of_tensor_blobs_against_a_safetensors_model() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let files = [
        St::new().meta("format", "pt").tensor(StTensor::filled("a.w", "BF16", &[4, 4], 1)),
        St::new().tensor(StTensor::filled("b.w", "F32", &[8], 2)),
    ];
    let layers: Vec<Layer> =
        files.iter().zip(["a.w", "b.w"]).map(|(f, n)| store.named(TENSOR, &f.build(), n)).collect();
    store.manifest("st", &store.config(""), &layers);
    let dir = d.path("checkpoint");
    std::fs::create_dir_all(&dir).unwrap();
    let one = St::new()
        .meta("format", "pt")
        .tensor(StTensor::filled("a.w", "BF16", &[4, 4], 1))
        .tensor(StTensor::filled("b.w", "F32", &[8], 2));
    // The model's two blobs carry different metadata groups, so the same
    // tensors in one file are another model; as two files they are the same.
    std::fs::write(dir.join("model-00001-of-00002.safetensors"), files[0].build()).unwrap();
    std::fs::write(dir.join("model-00002-of-00002.safetensors"), files[1].build()).unwrap();
    let single = d.write("one.safetensors", &one.build());
    let shard = dir.join("model-00001-of-00002.safetensors");
    let out = gd(&store, &["diff", "ollama:st", shard.to_str().unwrap()]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{t}{}", text(&out.stderr));
    assert!(
        t.contains("= weights: the model's tensor blobs are the file's") && t.ends_with("weights identical\n"),
        "{t}"
    );
    let out = gd(&store, &["diff", single.to_str().unwrap(), "ollama:st"]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}{}", text(&out.stderr));
    assert!(t.contains("~ weights: the model's tensor blobs differ from the file:"), "{t}");
    // A GGUF model has no tensor blobs to compare.
    simple(&store, "g", &gguf_model(), "", b"T");
    let out = gd(&store, &["diff", "ollama:g", shard.to_str().unwrap()]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("the Ollama model has no tensor blobs to compare with the safetensors model"), "{t}");
    assert!(t.contains("+ weights not in the file: model (layer #0)"), "{t}");
}

/// `diff ollama:M DIR` where DIR holds one safetensors model compares the
/// model with that weights component (issue #31, item 15), instead of
/// refusing "different formats"; with two weights components, or none, it
/// names them and the exact commands that compare each.
#[test]
fn diff_of_an_ollama_model_against_a_directory_compares_its_weights_component() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let st = St::new().meta("format", "pt").tensor(StTensor::filled("a.w", "BF16", &[4, 4], 1));
    let layer = store.named(TENSOR, &st.build(), "a.w");
    store.manifest("st", &store.config(""), &[layer]);
    let dir = d.path("checkpoint");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.safetensors"), st.build()).unwrap();
    std::fs::write(dir.join("config.json"), b"{}").unwrap();
    let dir_arg = dir.to_str().unwrap();
    for args in [["diff", "ollama:st", dir_arg], ["diff", dir_arg, "ollama:st"]] {
        let out = gd(&store, &args);
        let t = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {t}{}", text(&out.stderr));
        assert!(t.contains("the model's tensor blobs are the file's") && t.ends_with("weights identical\n"), "{t}");
    }
    // Changed weights in the directory: a real leaf-by-leaf difference.
    let other = St::new().meta("format", "pt").tensor(StTensor::filled("a.w", "BF16", &[4, 4], 2));
    std::fs::write(dir.join("model.safetensors"), other.build()).unwrap();
    let out = gd(&store, &["diff", "ollama:st", dir_arg]);
    let t = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{t}{}", text(&out.stderr));
    assert!(t.contains("~ weights: the model's tensor blobs differ from the file:"), "{t}");
    // Two weights components: which one is not guessed.
    std::fs::write(dir.join("extra.safetensors"), st.build()).unwrap();
    let out = gd(&store, &["diff", "ollama:st", dir_arg]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds 2 weights components"), "{err}");
    for name in ["model", "extra"] {
        let want = format!(
            "SFTN {name} ({dir_arg}/{name}.safetensors): gguf-digest diff ollama:st {dir_arg}/{name}.safetensors"
        );
        assert!(err.contains(&want), "{want}\n{err}");
    }
    // None: said so.
    for name in ["extra", "model"] {
        std::fs::remove_file(dir.join(format!("{name}.safetensors"))).unwrap();
    }
    let out = gd(&store, &["diff", dir_arg, "ollama:st"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds no weights component"), "{err}");
}

/// The contracts' numbers: `-0` is no integer (a layer's `size`,
/// `schemaVersion`), and a number that overflows a 64-bit float (`1e400`)
/// is refused anywhere (a config member, an ignored manifest member), as
/// Go's encoding/json refuses it; `1e-400` underflows to 0 and stands.
#[test]
fn minus_zero_is_no_integer_and_1e400_no_number() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let model = store.blob(MODEL, &gguf_model().build());
    let cfg = store.config("");
    let layer = model.json();
    let minus_zero = layer.replace(&format!(r#""size": {}"#, model.size), r#""size": -0"#);
    assert_ne!(minus_zero, layer);
    for (name, text, says) in [
        (
            "size",
            format!(r#"{{"schemaVersion": 2, "config": {}, "layers": [{minus_zero}]}}"#, cfg.json()),
            "size must be an integer",
        ),
        (
            "schema",
            format!(r#"{{"schemaVersion": -0, "config": {}, "layers": [{layer}]}}"#, cfg.json()),
            "schemaVersion must be 2, found -0",
        ),
        (
            "big",
            format!(r#"{{"schemaVersion": 2, "x": 1e400, "config": {}, "layers": [{layer}]}}"#, cfg.json()),
            "out of range",
        ),
    ] {
        store.raw_manifest(name, text.as_bytes());
        refused(&store, &format!("ollama:{name}"), says);
    }
    store.manifest("big-config", &store.config(r#""extra": [1e400]"#), std::slice::from_ref(&model));
    refused(&store, "ollama:big-config", "out of range");
    store.manifest("tiny", &store.config(r#""extra": 1e-400"#), std::slice::from_ref(&model));
    store.manifest("zero", &store.config(r#""extra": 0e400"#), std::slice::from_ref(&model));
    store.manifest("none", &cfg, std::slice::from_ref(&model));
    let none = label(&store, "ollama:none");
    assert_ne!(label(&store, "ollama:tiny"), none, "1e-400 is not a zero value");
    assert_eq!(label(&store, "ollama:zero"), none, "0e400 is a zero value");
}

/// A manifest given by path is known by where it lies in a store
/// (`<root>/manifests/<host>/<namespace>/<model>/<tag>`, with `<root>/blobs`
/// a directory), not by its first bytes: a pretty-printed manifest opens
/// with whitespace, and labels as its `ollama:` name does.
#[test]
fn a_manifest_is_known_by_where_it_lies() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let layers = simple(&store, "m", &gguf_model(), "", b"T");
    let want = label(&store, "ollama:m");
    let cfg = store.config("");
    let pretty = format!(
        "\n\t {{\n  \"schemaVersion\": 2,\n  \"config\": {},\n  \"layers\": [\n    {}\n  ]\n}}\n",
        cfg.json(),
        layers.iter().map(Layer::json).collect::<Vec<_>>().join(",\n    ")
    );
    let path = store.raw_manifest("pretty", pretty.as_bytes());
    assert_eq!(label(&store, "ollama:pretty"), want);
    let by_path = |cwd: &Path, arg: &str| {
        let out =
            Command::new(gguf_digest_bin()).arg(arg).current_dir(cwd).env_remove("OLLAMA_MODELS").output().unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let arg = path.to_str().unwrap();
    assert_eq!(by_path(d.dir.path(), arg), (Some(0), format!("{want}  {arg}\n"), String::new()));
    // Relative to the store's root, and with `.` components (which are no level).
    for arg in
        ["manifests/registry.ollama.ai/library/pretty/latest", "./manifests/registry.ollama.ai/./library/pretty/latest"]
    {
        assert_eq!(by_path(&store.root, arg), (Some(0), format!("{want}  {arg}\n"), String::new()), "{arg}");
    }
    // Not in a store (no blobs/ beside manifests/): a file like any other.
    let elsewhere = d.path("copy/manifests/h/n/m");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(&path, elsewhere.join("t")).unwrap();
    let (code, _, err) = by_path(d.dir.path(), "copy/manifests/h/n/m/t");
    assert_eq!(code, Some(2));
    assert!(err.contains("not a GGUF file"), "{err}");
    // In a store, whatever the bytes: a GGUF file there is a bad manifest.
    let gguf = store.raw_manifest("gguf", &gguf_model().build());
    let (code, _, err) = by_path(d.dir.path(), gguf.to_str().unwrap());
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid JSON"), "{err}");
}

/// `ollama:` alone labels every manifest of the store and reports each
/// entry that is none (Ollama's own listing skips them), exit 2 at the end;
/// hidden entries are passed over in silence.
#[test]
fn every_model_of_a_store_with_stray_entries() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    simple(&store, "a", &gguf_model(), "", b"A");
    simple(&store, "me/b:v1", &gguf_model(), "", b"B");
    let m = store.root.join("manifests");
    std::fs::create_dir_all(m.join("x")).unwrap();
    std::fs::write(m.join("x/latest"), b"{}").unwrap();
    std::fs::write(m.join("README"), b"").unwrap();
    std::fs::create_dir_all(m.join("registry.ollama.ai/library/a/sub")).unwrap();
    std::fs::write(m.join("registry.ollama.ai/library/a/latest~"), b"{}").unwrap();
    std::fs::write(m.join("registry.ollama.ai/library/a/.latest.swp"), b"").unwrap();
    std::fs::create_dir_all(m.join(".git/objects/aa/bb")).unwrap();
    let out = gd(&store, &["ollama:"]);
    let refs: Vec<String> = text(&out.stdout).lines().map(|l| l.split_once("  ").unwrap().1.to_string()).collect();
    assert_eq!(refs, ["ollama:registry.ollama.ai/library/a:latest", "ollama:registry.ollama.ai/me/b:v1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let m = m.display();
    for stray in ["README", "x/latest", "registry.ollama.ai/library/a/latest~", "registry.ollama.ai/library/a/sub"] {
        assert!(err.contains(&format!("gguf-digest: {m}/{stray}: not a manifest")), "{stray}: {err}");
    }
    assert_eq!(err.lines().count(), 4, "{err}");
    assert!(!err.contains(".git") && !err.contains(".swp"), "{err}");
    // The same in the JSON document.
    let out = gd(&store, &["--json", "ollama:"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).unwrap();
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.iter().filter(|f| f.get("error").is_some()).count(), 4, "{doc}");
    assert_eq!(files.iter().filter(|f| f.get("label").is_some()).count(), 2, "{doc}");
}
