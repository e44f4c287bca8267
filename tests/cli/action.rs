//! The GitHub Action (action.yml) run the way the runner runs it: a
//! composite action's step gets no `INPUT_*` variables, only the `env:`
//! its step maps from `${{ inputs.* }}`; so the test reads that mapping
//! and the step's `run:` line from action.yml itself, fills in the inputs,
//! points `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT` at files and runs the
//! line with bash, then checks the exit status, the summary table and the
//! `verdict` output.
use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

use super::sign_statement::{envelope, fixture, openssl, pae, write_json};

/// The repository root: the action's own checkout (`GITHUB_ACTION_PATH`).
fn action_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The step of action.yml with `id: run`: its `env:` mapping (variable to
/// the input it takes) and its `run:` line.
fn run_step() -> (BTreeMap<String, String>, String) {
    let yml = std::fs::read_to_string(action_path().join("action.yml")).unwrap();
    let step = yml.split("\n    - ").find(|s| s.contains("\n      id: run\n")).expect("a step with id: run");
    let mut env = BTreeMap::new();
    let mut run = None;
    let mut in_env = false;
    for line in step.lines() {
        if line == "      env:" {
            in_env = true;
            continue;
        }
        if in_env && line.starts_with("        ") {
            let (var, value) = line.trim().split_once(": ").expect("VAR: value");
            let input = value.strip_prefix("${{ inputs.").and_then(|v| v.strip_suffix(" }}")).expect("an input");
            env.insert(var.to_string(), input.to_string());
            continue;
        }
        in_env = false;
        if let Some(r) = line.strip_prefix("      run: ") {
            run = Some(r.to_string());
        }
    }
    (env, run.expect("a run: line"))
}

/// What one run of the step left.
struct Ran {
    code: Option<i32>,
    summary: String,
    output: String,
    stdout: String,
}

/// Runs the step in `dir` with `inputs` (the others empty, as a workflow
/// that does not give them).
fn run_action(dir: &Path, inputs: &[(&str, &str)]) -> Ran {
    let (mapping, run) = run_step();
    let summary = dir.join("summary.md");
    let output = dir.join("output.txt");
    let _ = std::fs::remove_file(&summary);
    let _ = std::fs::remove_file(&output);
    let mut cmd = Command::new("bash");
    cmd.args(["-e", "-c", &run]).current_dir(dir);
    for (var, input) in &mapping {
        let value = inputs.iter().find(|(name, _)| name == input).map_or("", |(_, v)| v);
        cmd.env(var, value);
    }
    cmd.env("GITHUB_ACTION_PATH", action_path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .env("RUNNER_TOOL_CACHE", dir.join("tool-cache"))
        .env_remove("GGUF_DIGEST_CACHE")
        .env("GGUF_DIGEST", gguf_digest_bin());
    let o = cmd.output().expect("bash runs the step");
    Ran {
        code: o.status.code(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        output: std::fs::read_to_string(&output).unwrap_or_default(),
        stdout: text(&o.stdout),
    }
}

#[test]
fn the_step_maps_every_input_it_reads() {
    let (mapping, run) = run_step();
    assert_eq!(run, r#"python3 "$GITHUB_ACTION_PATH/scripts/action/run.py""#);
    // Every GD_ variable the script reads is mapped, from a declared input.
    let script = std::fs::read_to_string(action_path().join("scripts/action/run.py")).unwrap();
    let mut read: Vec<&str> = script
        .match_indices("\"GD_")
        .filter_map(|(i, _)| script.get(i + 1..).and_then(|rest| rest.split('"').next()))
        .collect();
    read.sort_unstable();
    read.dedup();
    assert_eq!(read, mapping.keys().map(String::as_str).collect::<Vec<_>>());
    let yml = std::fs::read_to_string(action_path().join("action.yml")).unwrap();
    for input in mapping.values() {
        assert!(yml.contains(&format!("\n  {input}:\n    description: ")), "input {input} is declared");
    }
}

#[test]
fn a_sums_file_passes_then_fails_after_a_byte_changes() {
    let d = Dir::new();
    let g = rich_model(&[0, 8]);
    d.write("m|odel.gguf", &g.build());
    let o = gd_in(&d.path(""), &["m|odel.gguf"]);
    d.write("models.sums", &o.stdout);
    let label = g.expected_label();

    let r = run_action(&d.path(""), &[("sums", "models.sums")]);
    assert_eq!(r.code, Some(0), "{}", r.summary);
    assert_eq!(r.stdout, "m|odel.gguf: OK\n", "the log shows the tool's own output");
    assert!(r.summary.starts_with("### gguf-digest: every model holds\n"), "{}", r.summary);
    assert!(
        r.summary.contains(&format!("| `m\\|odel.gguf` | `{label}` | ✅ OK | `models.sums` |")),
        "a row per model, a | in a name escaped: {}",
        r.summary
    );
    assert_eq!(r.output, "verdict=ok\n");

    flip_last_byte(&d.path("m|odel.gguf"));
    let r = run_action(&d.path(""), &[("sums", "models.sums")]);
    assert_eq!(r.code, Some(1), "{}", r.summary);
    assert!(r.summary.contains("| ❌ FAILED |"), "{}", r.summary);
    assert!(r.summary.starts_with("### gguf-digest: a model differs\n"), "{}", r.summary);
    assert_eq!(r.output, "verdict=failed\n");

    std::fs::remove_file(d.path("m|odel.gguf")).unwrap();
    let r = run_action(&d.path(""), &[("sums", "models.sums")]);
    assert_eq!(r.code, Some(1), "a missing model fails the job: {}", r.summary);
    assert!(r.summary.contains("| ❌ FAILED open or read |"), "{}", r.summary);
    assert!(r.summary.contains("<details><summary>Messages</summary>"), "the tool's messages are shown: {}", r.summary);
}

#[test]
fn a_missing_sums_file_is_an_error_the_summary_names() {
    let d = Dir::new();
    let r = run_action(&d.path(""), &[("sums", "missing.sums")]);
    assert_eq!(r.code, Some(2), "{}", r.summary);
    assert!(r.summary.starts_with("### gguf-digest: an error\n"), "{}", r.summary);
    assert!(r.summary.contains("missing.sums: No such file or directory"), "{}", r.summary);
    assert_eq!(r.output, "verdict=error\n");
}

#[test]
fn nothing_to_check_is_an_error() {
    let d = Dir::new();
    let r = run_action(&d.path(""), &[]);
    assert_eq!(r.code, Some(2));
    assert!(r.summary.contains("nothing to check"), "{}", r.summary);
    assert_eq!(r.output, "verdict=error\n");
}

#[test]
fn models_are_labelled_and_an_unreadable_one_is_an_error() {
    let d = Dir::new();
    let g = rich_model(&[0]);
    d.write("a.gguf", &g.build());
    let r = run_action(&d.path(""), &[("models", "a.gguf\n")]);
    assert_eq!(r.code, Some(0), "{}", r.summary);
    assert!(r.summary.contains(&format!("| `a.gguf` | `{}` | ✅ labelled | `models` |", g.expected_label())));
    d.write("b.gguf", b"not a model");
    let r = run_action(&d.path(""), &[("models", "a.gguf b.gguf")]);
    assert_eq!(r.code, Some(2), "{}", r.summary);
    assert!(r.summary.contains("b.gguf"), "the error names the file: {}", r.summary);
    assert_eq!(r.output, "verdict=error\n");
}

#[test]
fn a_signed_statement_is_verified_with_its_key() {
    let (d, s, _) = fixture();
    let dir = &d.path("");
    let Some(_) = openssl(dir, &["genpkey", "-algorithm", "ed25519", "-out", "ed.key"]) else { return };
    openssl(dir, &["pkey", "-in", "ed.key", "-pubout", "-out", "ed.pub"]);
    openssl(dir, &["genpkey", "-algorithm", "ed25519", "-out", "other.key"]);
    openssl(dir, &["pkey", "-in", "other.key", "-pubout", "-out", "other.pub"]);
    let payload = serde_json::to_vec(&s).unwrap();
    d.write("pae.bin", &pae(&payload));
    let sig = openssl(dir, &["pkeyutl", "-sign", "-inkey", "ed.key", "-rawin", "-in", "pae.bin"]).unwrap();
    write_json(&d, "models.dsse.json", &envelope(&payload, &sig));
    let label = s["subject"][0]["digest"]["sha256"].as_str().unwrap().to_string();

    let r = run_action(dir, &[("statement", "models.dsse.json"), ("key", "ed.pub")]);
    assert_eq!(r.code, Some(0), "{}", r.summary);
    assert!(
        r.summary.contains(&format!("| `models/m.gguf` | `{label}` | ✅ OK | `models.dsse.json` |")),
        "{}",
        r.summary
    );
    assert!(r.summary.contains("| `w.safetensors` |"), "{}", r.summary);

    let r = run_action(dir, &[("statement", "models.dsse.json"), ("key", "other.pub")]);
    assert_eq!(r.code, Some(1), "another key's signature fails: {}", r.summary);

    // Without a key the tool refuses, unless told not to check; then the
    // summary says the signature was not checked.
    let r = run_action(dir, &[("statement", "models.dsse.json")]);
    assert_eq!(r.code, Some(2), "{}", r.summary);
    let r = run_action(dir, &[("statement", "models.dsse.json"), ("no-signature", "true")]);
    assert_eq!(r.code, Some(0), "{}", r.summary);
    assert!(r.summary.contains("⚠️ OK (signature NOT CHECKED)"), "{}", r.summary);
}

/// Issue #31, item 14: the build is cached under the digest of the sources
/// it is built from, not the ref the workflow names (`v1` moves to a new
/// release; the old binary kept running). The key changes with a source
/// file, not with a file the build does not read.
#[test]
fn the_build_is_cached_under_the_digest_of_its_sources() {
    let yml = std::fs::read_to_string(action_path().join("action.yml")).unwrap();
    let cache = yml.split("\n    - ").find(|s| s.contains("uses: actions/cache@")).expect("a cache step");
    assert!(cache.contains("key: gguf-digest-${{ runner.os }}-${{ runner.arch }}-${{ steps.source.outputs.digest }}"));
    assert!(!yml.contains("action_ref"), "nothing is keyed on the ref");
    let source = yml.split("\n    - ").find(|s| s.contains("\n      id: source\n")).expect("a step with id: source");
    assert!(
        source.contains(r#"run: python3 "$GITHUB_ACTION_PATH/scripts/action/run.py" --source-digest "$GITHUB_ACTION_PATH" >> "$GITHUB_OUTPUT""#),
        "{source}"
    );
    let digest = |dir: &Path| {
        let o = Command::new("python3")
            .arg(action_path().join("scripts/action/run.py"))
            .args(["--source-digest", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let d = Dir::new();
    std::fs::create_dir_all(d.path("src/cli")).unwrap();
    d.write("Cargo.toml", b"[package]\nname = \"x\"\n");
    d.write("Cargo.lock", b"version = 4\n");
    d.write("src/main.rs", b"fn main() {}\n");
    d.write("src/cli/mod.rs", b"// v1.0.0\n");
    let first = digest(&d.path(""));
    assert!(first.starts_with("digest=") && first.trim_end().len() == "digest=".len() + 64, "{first}");
    d.write("README.md", b"# not built\n");
    assert_eq!(digest(&d.path("")), first, "a file cargo does not build from");
    d.write("src/cli/mod.rs", b"// v1.0.1\n");
    let second = digest(&d.path(""));
    assert_ne!(second, first, "a new release's source");
    // The layer crates the command is built from (docs/adr/0043).
    std::fs::create_dir_all(d.path("crates/core/src")).unwrap();
    d.write("crates/core/src/hash.rs", b"// v1.0.1\n");
    let third = digest(&d.path(""));
    assert_ne!(third, second, "a layer crate's source");
    d.write("crates/core/src/hash.rs", b"// v1.0.2\n");
    assert_ne!(digest(&d.path("")), third, "a layer crate's change");
}

/// Issue #31, item 14: a `models` word that begins with `-` is a model's
/// name, never an option of the tool.
#[test]
fn a_model_whose_name_begins_with_a_dash_is_labelled() {
    let d = Dir::new();
    let g = rich_model(&[0]);
    d.write("-q.gguf", &g.build());
    d.write("--version", &g.build());
    let r = run_action(&d.path(""), &[("models", "-q.gguf --version")]);
    assert_eq!(r.code, Some(0), "{}", r.summary);
    for name in ["-q.gguf", "--version"] {
        assert!(
            r.summary.contains(&format!("| `{name}` | `{}` | ✅ labelled | `models` |", g.expected_label())),
            "{}",
            r.summary
        );
    }
    // And a sums file whose name begins with `-`.
    let o = gd_in(&d.path(""), &["--", "-q.gguf"]);
    d.write("-m.sums", &o.stdout);
    let r = run_action(&d.path(""), &[("sums", "-m.sums")]);
    assert_eq!(r.code, Some(0), "{}", r.summary);
    assert!(r.summary.contains("| `-q.gguf` |") && r.summary.contains("✅ OK"), "{}", r.summary);
}

/// Issue #31, item 14: an OpenSSF model signature's row is each file's
/// verdict (its subject is the model as a whole, whose row once said "not
/// checked"), a file it does not list among them.
#[test]
fn an_oms_signature_shows_each_files_verdict() {
    use super::sign_oms::{PAYLOAD_TYPE, bundle, hint, key, public_pem, sign};
    use sha2::{Digest as _, Sha256};
    let d = Dir::new();
    std::fs::create_dir_all(d.path("model")).unwrap();
    d.write("model/a.bin", &[7u8; 100]);
    d.write("model/b.txt", b"b\n");
    d.write("key.pub", public_pem(&key()).as_bytes());
    let (a, b) = (hex::encode(Sha256::digest([7u8; 100])), hex::encode(Sha256::digest(b"b\n")));
    let mut root = Sha256::new();
    root.update(Sha256::digest([7u8; 100]));
    root.update(Sha256::digest(b"b\n"));
    let payload = format!(
        r#"{{"_type":"https://in-toto.io/Statement/v1","subject":[{{"name":"model","digest":{{"sha256":"{}"}}}}],"predicateType":"https://model_signing/signature/v1.0","predicate":{{"serialization":{{"method":"files","hash_type":"sha256","allow_symlinks":false,"ignore_paths":["model.sig"]}},"resources":[{{"name":"a.bin","algorithm":"sha256","digest":"{a}"}},{{"name":"b.txt","algorithm":"sha256","digest":"{b}"}}]}}}}"#,
        hex::encode(root.finalize())
    );
    let sig = sign(&key(), PAYLOAD_TYPE, payload.as_bytes());
    d.write("model.sig", bundle(PAYLOAD_TYPE, payload.as_bytes(), &[sig], &hint()).as_bytes());
    let inputs = [("statement", "model.sig"), ("key", "key.pub"), ("root", "model")];
    let r = run_action(&d.path(""), &inputs);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.summary);
    assert!(r.summary.contains(&format!("| `a.bin` | `{a}` | ✅ OK | `model.sig` |")), "{}", r.summary);
    assert!(r.summary.contains(&format!("| `b.txt` | `{b}` | ✅ OK | `model.sig` |")), "{}", r.summary);
    assert!(!r.summary.contains("not checked"), "{}", r.summary);

    d.write("model/b.txt", b"c\n");
    d.write("model/extra.txt", b"x\n");
    let r = run_action(&d.path(""), &inputs);
    assert_eq!(r.code, Some(1), "{}", r.summary);
    assert!(r.summary.contains(&format!("| `b.txt` | `{b}` | ❌ FAILED |")), "{}", r.summary);
    assert!(r.summary.contains("| `extra.txt` | `` | ❌ FAILED (unexpected"), "{}", r.summary);
    assert!(r.summary.contains("| `a.bin` |") && r.summary.contains("✅ OK"), "{}", r.summary);
}

/// With `cache: true` the step keeps the verified-leaf cache in the
/// folder action.yml restores between runs, and the summary says what came
/// from it: the first run read the model, the next took it from the cache.
#[test]
// Only a leased file is cached: not on the portable read path (ADR 0033).
#[cfg(not(feature = "portable"))]
fn with_the_cache_the_summary_says_what_came_from_it() {
    let d = Dir::new();
    d.write("m.gguf", &rich_model(&[0, 8]).build());
    let o = gd_in(&d.path(""), &["m.gguf"]);
    d.write("models.sums", &o.stdout);
    // Older than the racy margin, so the first run may store it.
    std::thread::sleep(std::time::Duration::from_millis(120));
    let run = |cache: &str| {
        let mut inputs = vec![("sums", "models.sums")];
        inputs.push(("cache", cache));
        run_action(&d.path(""), &inputs)
    };
    let r = run("true");
    assert_eq!(r.code, Some(0), "{}", r.summary);
    assert!(
        r.summary.contains("Verified-leaf cache: 0 of 1 files taken from the cache, 1 read in this run."),
        "{}",
        r.summary
    );
    assert!(d.path("tool-cache/gguf-digest-leaves/leaves-v1").exists(), "kept where action.yml restores it from");
    let r = run("true");
    assert!(
        r.summary.contains("Verified-leaf cache: 1 of 1 files taken from the cache, 0 read in this run."),
        "{}",
        r.summary
    );
    assert!(!r.summary.contains("<details>"), "the cache's lines are not messages: {}", r.summary);
    let r = run("false");
    assert!(!r.summary.contains("Verified-leaf cache"), "{}", r.summary);
}
