//! `sign` against what nobody here wrote:
//!
//! - keys made by PyPI's `cryptography` (Ed25519, P-256, P-384; PKCS#8 and
//!   encrypted PKCS#8) and by `openssl` sign bundles that PyPI's
//!   `sigstore-models` parses strictly (unknown members refused) and whose
//!   DSSE signature `cryptography` verifies independently;
//! - `model_signing verify key` (PyPI `model-signing` 1.1.1) accepts what
//!   `sign --format oms` writes for a directory (Git entries below its top
//!   included: content, as for `model_signing`), with P-256 and P-384 keys
//!   from both, and refuses a copy with a byte flipped, a nested
//!   `.git/config` changed, a file added or a file removed.
//!
//! Without the venv (scripts/setup-python.sh) the tests say SKIPPED; under
//! CI=true they fail instead.
use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::py::{Py, describe, prerequisites};
use common::*;
use serde_json::Value as Json;

const WHAT: &str = "the signing interop tests (tests/interop/sign_bundle.rs)";

fn gd_pw(dir: &Path, args: &[&str], password: Option<&str>) -> Output {
    let mut c = Command::new(gguf_digest_bin());
    c.args(args).current_dir(dir).env_remove("GGUF_DIGEST_PASSWORD").env_remove("COSIGN_PASSWORD");
    if let Some(p) = password {
        c.env("GGUF_DIGEST_PASSWORD", p);
    }
    c.output().expect("runs gguf-digest")
}

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl is needed with the venv");
    assert!(o.status.success(), "openssl {args:?}: {}", text(&o.stderr));
}

fn chmod_600(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Keys by `cryptography` (NAME.key, NAME.enc.key, NAME.pub) and by
/// openssl (ossl-NAME.key, ossl-NAME.pub), in `dir`.
fn keys(py: &Py, dir: &Path) -> Vec<(String, String, Option<&'static str>)> {
    py.run("sign_check.py", &["keys", dir.to_str().unwrap(), "pw"]);
    let mut all = Vec::new();
    for name in ["ed25519", "p256", "p384"] {
        chmod_600(&dir.join(format!("{name}.key")));
        all.push((format!("{name}.key"), format!("{name}.pub"), None));
        all.push((format!("{name}.enc.key"), format!("{name}.pub"), Some("pw")));
    }
    for (name, alg) in [("p256", "P-256"), ("p384", "P-384")] {
        let key = format!("ossl-{name}.key");
        openssl(dir, &["genpkey", "-algorithm", "EC", "-pkeyopt", &format!("ec_paramgen_curve:{alg}"), "-out", &key]);
        openssl(dir, &["pkey", "-in", &key, "-pubout", "-out", &format!("ossl-{name}.pub")]);
        chmod_600(&dir.join(&key));
        all.push((key.clone(), format!("ossl-{name}.pub"), None));
        let scrypt = format!("ossl-{name}.scrypt.key");
        openssl(dir, &["pkcs8", "-topk8", "-in", &key, "-scrypt", "-passout", "pass:pw", "-out", &scrypt]);
        all.push((scrypt, format!("ossl-{name}.pub"), Some("pw")));
    }
    all
}

#[test]
fn sigstore_models_parses_every_bundle_and_cryptography_verifies_its_signature() {
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let dir = d.path("");
    d.write("m.gguf", &rich_model(&[0, 8]).build());
    d.write("w.safetensors", &st::St::new().tensor(st::StTensor::filled("w", "BF16", &[8, 3], 2)).build());
    let statement = gd_in(&dir, &["statement", "m.gguf", "w.safetensors"]);
    let statement: Json = serde_json::from_slice(&statement.stdout).unwrap();
    for (key, public, password) in keys(py, &dir) {
        let o = gd_pw(&dir, &["sign", "--key", &key, "--out", "b.json", "m.gguf", "w.safetensors"], password);
        assert_eq!(o.status.code(), Some(0), "{}", describe(&key, &o));
        let r = py.run(
            "sign_check.py",
            &["bundle", dir.join("b.json").to_str().unwrap(), &dir.join(&public).to_string_lossy()],
        );
        assert_eq!(r["verified"], true, "{key}");
        assert_eq!(r["payload"], statement, "{key}");
        let v = gd_in(&dir, &["verify", "--key", &public, "b.json"]);
        assert_eq!(v.status.code(), Some(0), "{}", describe(&key, &v));
    }
}

fn model_signing(py: &Py, dir: &Path, model: &str, sig: &str, public: &str) -> Output {
    let bin = py.python.parent().unwrap().join("model_signing");
    let args = ["verify", "key", model, "--signature", sig, "--public_key", public];
    Command::new(bin).args(args).current_dir(dir).env_remove("PYTHONPATH").output().expect("runs model_signing")
}

fn copy_dir(from: &Path, to: &Path) {
    let o = Command::new("cp").arg("-R").arg(from).arg(to).output().unwrap();
    assert!(o.status.success());
}

#[test]
fn model_signing_accepts_an_oms_signature_and_refuses_tampered_copies() {
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let dir = d.path("");
    std::fs::create_dir_all(dir.join("model/sub")).unwrap();
    d.write("model/model.gguf", &rich_model(&[0, 8]).build());
    let st = st::St::new().tensor(st::StTensor::filled("w", "F32", &[4, 4], 1));
    d.write("model/model.safetensors", &st.build());
    d.write("model/config.json", b"{\"a\": 1}");
    d.write("model/sub/README.md", b"# a model\n");
    d.write("model/.gitattributes", b"*.gguf filter=lfs\n");
    // Git entries below the top are content for model_signing (it ignores
    // them at the top only) and, since the directory contract's revision 2,
    // for the walk too: signed as resources, so model_signing verifies.
    std::fs::create_dir_all(dir.join("model/sub/.git")).unwrap();
    std::fs::create_dir_all(dir.join("model/sub/.github/workflows")).unwrap();
    d.write("model/sub/.git/config", b"[core]\n\tfsmonitor = ./hook\n");
    d.write("model/sub/.gitignore", b"*.tmp\n");
    d.write("model/sub/.github/workflows/ci.yml", b"on: push\n");
    let keys: Vec<_> = keys(py, &dir).into_iter().filter(|(k, _, _)| !k.starts_with("ed25519")).collect();
    for (key, public, password) in &keys {
        // Outside the directory, and inside it (then left out of the manifest).
        for sig in ["model.sig", "model/model.sig"] {
            let o = gd_pw(&dir, &["sign", "--format", "oms", "--key", key, "--out", sig, "model"], *password);
            assert_eq!(o.status.code(), Some(0), "{}", describe(key, &o));
            let v = model_signing(py, &dir, "model", sig, public);
            assert!(v.status.success(), "{key} {sig}: {}", describe("model_signing", &v));
            std::fs::remove_file(dir.join(sig)).unwrap();
        }
    }
    let (key, public, password) = &keys[0];
    let o = gd_pw(&dir, &["sign", "--format", "oms", "--key", key, "--out", "model.sig", "model"], *password);
    assert_eq!(o.status.code(), Some(0), "{}", describe(key, &o));
    type Change<'a> = (&'a str, &'a dyn Fn(&Path));
    let tampered: [Change<'_>; 4] = [
        ("a byte flipped", &|m: &Path| flip_last_byte(&m.join("model.gguf"))),
        ("a nested .git/config changed", &|m: &Path| std::fs::write(m.join("sub/.git/config"), b"[core]\n").unwrap()),
        ("a file added", &|m: &Path| std::fs::write(m.join("sub/extra.txt"), b"x").unwrap()),
        ("a file removed", &|m: &Path| std::fs::remove_file(m.join("config.json")).unwrap()),
    ];
    for (what, change) in tampered {
        let copy = dir.join("copy");
        let _ = std::fs::remove_dir_all(&copy);
        copy_dir(&dir.join("model"), &copy);
        let v = model_signing(py, &dir, "copy", "model.sig", public);
        assert!(v.status.success(), "an unchanged copy: {}", describe("model_signing", &v));
        change(&copy);
        let v = model_signing(py, &dir, "copy", "model.sig", public);
        assert!(!v.status.success(), "{what}: {}", describe("model_signing", &v));
    }
}
