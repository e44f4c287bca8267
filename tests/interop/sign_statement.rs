//! Provenance against what nobody here wrote:
//!
//! - PyPI's `in-toto-attestation` validates every statement the tool
//!   prints (GGUF, a shard set, safetensors, SmolLM2, all-MiniLM-L6-v2,
//!   with and without leaves), and `jsonschema` validates each predicate
//!   against docs/statement-predicate.schema.json;
//! - PyPI's `securesystemslib` signs a statement as DSSE envelopes with an
//!   Ed25519 and an ECDSA P-256 key it generates: `verify --key` accepts
//!   them, and refuses them (exit 1) after a byte of the payload or the
//!   signature changes, with the other key, and reports FAILED after a byte
//!   of a model changes;
//! - Debian's `minisign` signs and verifies a sums file (the README's
//!   signed-sums recipe), and `gguf-digest -c` checks it.
//!
//! Without the venv (scripts/setup-python.sh) or minisign, the tests say
//! SKIPPED; under CI=true they fail instead.
use crate::common;

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use common::py::{Py, describe, in_ci, prerequisites};
use common::*;
use serde_json::Value as JsonValue;

const WHAT: &str = "the provenance interop tests (tests/interop/sign_statement.rs)";

fn schema() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/statement-predicate.schema.json").to_string_lossy().into_owned()
}

/// A folder of models: a GGUF file, a three-shard GGUF set, a safetensors
/// file, and the two real models of the venv.
fn models(py: &'static Py) -> (Dir, Vec<&'static str>) {
    let d = Dir::new();
    d.write("m.gguf", &rich_model(&[0, 1, 8, 14]).build());
    let g = rich_model(&[0, 8, 30]);
    let n = g.tensors.len();
    write_set(&d, "set", &g.split(&[1, n - 2, 1]));
    let st = st::St::new().meta("format", "pt").tensor(st::StTensor::filled("w", "BF16", &[8, 3], 2));
    d.write("w.safetensors", &st.build());
    // Copied, not symlinked: `verify` refuses a symlink that leads out of
    // its root, as it should. Not hard-linked either: a link changes the
    // shared inode's ctime, and the file-changed guard rightly fails a test
    // hashing the same model in another thread at that moment.
    for (from, to) in [(py.path("model"), "smollm2.gguf"), (py.path("st_model"), "minilm.safetensors")] {
        std::fs::copy(from, d.path(to)).unwrap();
    }
    let names = vec!["m.gguf", "set-00001-of-00003.gguf", "w.safetensors", "smollm2.gguf", "minilm.safetensors"];
    (d, names)
}

#[test]
fn in_toto_attestation_validates_every_statement_and_the_schema_every_predicate() {
    let Some(py) = prerequisites(WHAT) else { return };
    let (d, names) = models(py);
    let dir = d.path("");
    for leaves in [false, true] {
        for subset in [&names[..1], &names[1..2], &names[2..3], &names[..]] {
            let mut args = vec!["statement"];
            if leaves {
                args.push("--leaves");
            }
            args.extend_from_slice(subset);
            let o = gd_in(&dir, &args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
            let path = d.write("s.json", &o.stdout);
            let r = py.run("provenance.py", &["validate", path.to_str().unwrap(), &schema()]);
            assert_eq!(r["ok"], true, "{args:?}");
            assert_eq!(r["subjects"], subset.len() as u64, "{args:?}");
        }
    }
}

fn flip_base64(env: &mut JsonValue, field: &str, byte: usize) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let slot = if field == "payload" { &mut env["payload"] } else { &mut env["signatures"][0]["sig"] };
    let mut raw = b64.decode(slot.as_str().unwrap()).unwrap();
    let i = byte.min(raw.len() - 1);
    raw[i] ^= 1;
    *slot = JsonValue::String(b64.encode(raw));
}

#[test]
fn securesystemslib_envelopes_are_accepted_with_their_key_and_refused_when_changed() {
    let Some(py) = prerequisites(WHAT) else { return };
    let (d, names) = models(py);
    let dir = d.path("");
    let o = gd_in(&dir, &[&["statement"][..], &names[..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let statement = d.write("s.json", &o.stdout);
    py.run("provenance.py", &["sign", statement.to_str().unwrap(), dir.to_str().unwrap()]);
    let all_ok: String = names.iter().map(|n| format!("{n}: OK\n")).collect();
    for (env, key, other) in [("ed25519.json", "ed25519.pub", "ecdsa.pub"), ("ecdsa.json", "ecdsa.pub", "ed25519.pub")]
    {
        let o = gd_in(&dir, &["verify", "--key", key, env]);
        assert_eq!(o.status.code(), Some(0), "{}", describe(env, &o));
        assert_eq!(text(&o.stdout), all_ok);
        assert!(!text(&o.stderr).contains("no signature was checked"), "{}", text(&o.stderr));
        // The other key: refused before any subject.
        let o = gd_in(&dir, &["verify", "--key", other, env]);
        assert_eq!(o.status.code(), Some(1), "{env} with {other}");
        assert!(text(&o.stderr).contains("signature: FAILED") && o.stdout.is_empty(), "{}", describe(env, &o));
        // A byte of the payload, or of the signature, changed.
        let original: JsonValue = serde_json::from_slice(&std::fs::read(dir.join(env)).unwrap()).unwrap();
        for (field, byte) in [("payload", 40), ("payload", usize::MAX), ("sig", 5), ("sig", usize::MAX)] {
            let mut changed = original.clone();
            flip_base64(&mut changed, field, byte);
            d.write("changed.json", &serde_json::to_vec(&changed).unwrap());
            let o = gd_in(&dir, &["verify", "--key", key, "changed.json"]);
            assert_eq!(o.status.code(), Some(1), "{env}: {field} byte {byte}");
            assert!(text(&o.stderr).contains("signature: FAILED") && o.stdout.is_empty(), "{}", describe(env, &o));
        }
    }
    // A byte of a model changed: the signature holds, that subject fails.
    flip_last_byte(&dir.join("w.safetensors"));
    let o = gd_in(&dir, &["verify", "--key", "ecdsa.pub", "ecdsa.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", describe("changed model", &o));
    assert!(text(&o.stdout).contains("w.safetensors: FAILED\n"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("smollm2.gguf: OK\n"), "{}", text(&o.stdout));
}

/// The README's signed-sums recipe, with Debian's minisign.
#[test]
fn minisign_signs_a_sums_file_and_check_verifies_it() {
    let found = Command::new("minisign").arg("-v").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(!in_ci(), "minisign is needed under CI (.ci/run installs Debian's package)");
        eprintln!("SKIPPED: minisign not found (apt-get install minisign)");
        return;
    }
    let d = Dir::new();
    let dir = d.path("");
    d.write("a.gguf", &rich_model(&[0, 8]).build());
    d.write("b.safetensors", &st::St::new().tensor(st::StTensor::filled("w", "F16", &[5], 1)).build());
    let run = |cmd: &str, args: &[&str]| {
        let o = Command::new(cmd).args(args).current_dir(&dir).output().unwrap();
        (o.status.code(), text(&o.stdout) + &text(&o.stderr))
    };
    // On the trusted machine: a key pair (no password: -W), the sums, the signature.
    assert_eq!(run("minisign", &["-G", "-W", "-p", "models.pub", "-s", "models.key"]).0, Some(0));
    let o = gd_in(&dir, &["a.gguf", "b.safetensors"]);
    assert_eq!(o.status.code(), Some(0));
    d.write("models.sums", &o.stdout);
    assert_eq!(run("minisign", &["-S", "-s", "models.key", "-m", "models.sums"]).0, Some(0));
    // In CI: the signature, then the labels.
    let (code, out) = run("minisign", &["-V", "-p", "models.pub", "-m", "models.sums"]);
    assert_eq!(code, Some(0), "{out}");
    let o = gd_in(&dir, &["-c", "models.sums"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "a.gguf: OK\nb.safetensors: OK\n");
    // A changed sums file fails minisign; a changed model fails the check.
    let mut sums = std::fs::read(dir.join("models.sums")).unwrap();
    sums[0] = if sums[0] == b'0' { b'1' } else { b'0' };
    d.write("tampered.sums", &sums);
    std::fs::copy(dir.join("models.sums.minisig"), dir.join("tampered.sums.minisig")).unwrap();
    assert_eq!(run("minisign", &["-V", "-p", "models.pub", "-m", "tampered.sums"]).0, Some(1));
    flip_last_byte(&dir.join("b.safetensors"));
    let (code, _) = run("minisign", &["-V", "-p", "models.pub", "-m", "models.sums"]);
    assert_eq!(code, Some(0), "the sums file itself is unchanged");
    let o = gd_in(&dir, &["-c", "models.sums"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stdout), "a.gguf: OK\nb.safetensors: FAILED\n");
}

/// The README's signing recipe, run as written: its `sh` block is cut out
/// of README.md and run by bash in a folder of models, with the binary
/// first on PATH (openssl makes the key, `gguf-digest sign` signs).
#[test]
fn readme_signing_recipe_runs_as_written() {
    let Some(py) = prerequisites(WHAT) else { return };
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let marker = "(readme_signing_recipe_runs_as_written). -->\n```sh\n";
    let start = readme.find(marker).expect("the README marks its signing recipe") + marker.len();
    let script = &readme[start..start + readme[start..].find("```\n").expect("the block ends")];
    let d = Dir::new();
    std::fs::create_dir_all(d.path("models")).unwrap();
    d.write("models/a.gguf", &rich_model(&[0, 8]).build());
    d.write("models/b.gguf", &rich_model(&[1]).build());
    let bin_dir = Path::new(&gguf_digest_bin()).parent().unwrap().to_path_buf();
    let py_dir = py.python.parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        [bin_dir, py_dir].into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(d.path(""))
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", describe("the README recipe", &o));
    assert_eq!(text(&o.stdout), "models/a.gguf: OK\nmodels/b.gguf: OK\n");
    // No warning: the recipe's key is not readable by others.
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    // The bundle it wrote is refused once a model changes.
    flip_last_byte(&d.path("models/b.gguf"));
    let o = gd_in(&d.path(""), &["verify", "--key", "models.pub", "models.sigstore.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stdout), "models/a.gguf: OK\nmodels/b.gguf: FAILED\n");
}
