//! OpenSSF model signatures of `oci://` artifacts (docs/adr/0052-oms-of-urls.md):
//! a CNCF ModelPack artifact pushed by `oras` (scripts/interop/oci_push.py)
//! to Debian's `docker-registry` is signed where it lies, byte for byte the
//! bundle of the same files in a local directory named like the
//! repository's last component; the real `model_signing` verifies that
//! bundle against the local copy, and `verify --root oci://…` checks it
//! against the artifact (a changed, extra or missing file fails it, a blob
//! whose bytes are not its digest's is refused, never signed). Ollama and
//! Docker Model Runner artifacts are refused, saying why; credentials are
//! never printed.
use crate::common;
use crate::oci::{Registry, gd, push, tiny};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::py::{Py, describe, prerequisites};
use common::text;

const WHAT: &str = "the OCI model signature interop tests (tests/interop/oci_oms.rs)";

/// The artifact's files (relative names) and their bytes.
fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("model.gguf", tiny().build()),
        ("config.json", br#"{"architectures": ["LlamaForCausalLM"]}"#.to_vec()),
        ("docs/README.md", b"# tiny\n".to_vec()),
        ("a-b/c.txt", b"path order".to_vec()),
    ]
}

/// Writes `files` into the directory `dir` (made here).
fn write_dir(dir: &Path, files: &[(&str, Vec<u8>)]) -> PathBuf {
    for (name, bytes) in files {
        let at = dir.join(name);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, bytes).unwrap();
    }
    dir.to_path_buf()
}

/// A P-256 key pair made by openssl in `dir`: (private, public).
fn key_pair(dir: &Path) -> (PathBuf, PathBuf) {
    for args in [
        &["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "p.key"][..],
        &["ec", "-in", "p.key", "-pubout", "-out", "p.pub"][..],
    ] {
        let o = Command::new("openssl").args(args).current_dir(dir).output().expect("runs openssl");
        assert!(o.status.success(), "openssl {args:?}: {}", text(&o.stderr));
    }
    (dir.join("p.key"), dir.join("p.pub"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `gguf-digest sign --allow-http --format oms --key KEY --out OUT MODEL`.
fn sign(key: &Path, out: &Path, model: &str, env: &[(&str, &Path)]) -> Output {
    gd(&["sign", "--allow-http", "--format", "oms", "--key", s(key), "--out", s(out), model], env)
}

/// `gguf-digest verify --allow-http --key PUB --root ROOT SIG`.
fn verify(public: &Path, root: &str, sig: &Path, env: &[(&str, &Path)]) -> Output {
    gd(&["verify", "--allow-http", "--key", s(public), "--root", root, s(sig)], env)
}

/// Pushes `files` as a ModelPack artifact `pack/tiny:TAG` (from a copy in `work/TAG/tiny`).
fn push_pack(py: &Py, reg: &Registry, work: &Path, tag: &str, files: &[(&str, Vec<u8>)]) -> String {
    let dir = write_dir(&work.join(tag).join("tiny"), files);
    push(py, "modelpack", reg, &format!("pack/tiny:{tag}"), &["--dir", s(&dir)]);
    format!("oci://{}/pack/tiny:{tag}", reg.host())
}

#[test]
fn oci_oms_modelpack_is_signed_as_its_files_on_disk_and_verified_where_it_lies() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let d = common::Dir::new();
    let work = d.path("");
    let (key, public) = key_pair(&work);
    let files = files();
    let local = write_dir(&work.join("tiny"), &files);
    let artifact = push_pack(py, &reg, &work, "v1", &files);

    // The same bundle, byte for byte, from the artifact and from disk.
    let o = gd(&["sign", "--format", "oms", "--key", s(&key), "--out", s(&work.join("local.sig")), s(&local)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe("sign the directory", &o));
    let sig = work.join("oci.sig");
    let o = sign(&key, &sig, &artifact, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe("sign the artifact", &o));
    let bundle = std::fs::read(&sig).unwrap();
    assert_eq!(bundle, std::fs::read(work.join("local.sig")).unwrap(), "the artifact's bundle is the directory's");

    // Verified against the artifact, and by model_signing against the local copy.
    let o = verify(&public, &artifact, &sig, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe("verify the artifact", &o));
    for (name, _) in &files {
        assert!(text(&o.stdout).contains(&format!("{name}: OK")), "{}", text(&o.stdout));
    }
    let ms = py.run("oms.py", &["verify-key", s(&local), s(&public), s(&sig)]);
    assert_eq!(ms["ok"], true, "model_signing verifies the artifact's bundle against the local copy: {ms}");
    // And model_signing's own signature of the local copy (cut in shards of
    // 4 KiB) verifies against the artifact, each shard read by ranges.
    let ms_sig = work.join("ms.sig");
    py.run("oms.py", &["sign-key", s(&local), s(&key), s(&ms_sig), "--shards", "4096"]);
    let o = verify(&public, &artifact, &ms_sig, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe("verify model_signing's shards", &o));

    // A changed file fails, an extra one is unexpected, a missing one missing.
    let mut changed = files.clone();
    changed[1].1 = br#"{"architectures": ["Other"]}"#.to_vec();
    let o = verify(&public, &push_pack(py, &reg, &work, "changed", &changed), &sig, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe("changed", &o));
    assert!(text(&o.stdout).contains("config.json: FAILED"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("model.gguf: OK"), "{}", text(&o.stdout));
    let mut extra = files.clone();
    extra.push(("sub/evil.py", b"print(1)".to_vec()));
    let o = verify(&public, &push_pack(py, &reg, &work, "extra", &extra), &sig, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe("extra", &o));
    assert!(text(&o.stdout).contains("sub/evil.py: FAILED (unexpected"), "{}", text(&o.stdout));
    let o = verify(&public, &push_pack(py, &reg, &work, "missing", &files[..3]), &sig, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe("missing", &o));
    assert!(text(&o.stdout).contains("a-b/c.txt: FAILED (missing)"), "{}", text(&o.stdout));

    // The weights blob changed in the registry's storage: the registry now
    // serves bytes that are not its digest's. Never signed; verify fails.
    let blob = format!("sha256:{}", common::hex(&common::sha(&files[0].1)));
    py.run("oci_push.py", &["tamper", "--storage", s(&reg.storage()), "--digest", &blob]);
    let tampered = work.join("tampered.sig");
    let o = sign(&key, &tampered, &artifact, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe("sign a tampered blob", &o));
    assert!(!tampered.exists(), "nothing is written for a blob that is not its digest's");
    let err = text(&o.stderr);
    assert!(err.contains("not the ones its digest names") && err.contains(&blob), "{err}");
    let o = verify(&public, &artifact, &sig, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", describe("verify a tampered blob", &o));
    assert!(text(&o.stdout).contains("model.gguf: FAILED"), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("not the ones its digest names"), "{}", text(&o.stderr));
}

#[test]
fn oci_oms_ollama_and_docker_models_are_refused_saying_why() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let d = common::Dir::new();
    let work = d.path("");
    let (key, public) = key_pair(&work);
    let model = d.write("tiny.gguf", &tiny().build());
    let root = d.path("models");
    let info = py.run("ollama_store.py", &["gguf", "--root", s(&root), "--name", "tiny", "--model", s(&model)]);
    let manifest = info["manifest"].as_str().unwrap().to_string();
    push(py, "ollama", &reg, "library/tiny:latest", &["--store", s(&root), "--manifest", &manifest]);
    push(py, "dmr", &reg, "ai/tiny:q", &["--gguf", s(&model)]);
    // A signature to verify with: the local directory's.
    let local = write_dir(&work.join("tiny"), &files());
    let sig = work.join("local.sig");
    let o = gd(&["sign", "--format", "oms", "--key", s(&key), "--out", s(&sig), s(&local)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe("sign the directory", &o));
    for (reference, says) in [
        ("library/tiny:latest", "holds an Ollama model, which is no directory of files"),
        ("ai/tiny:q", "holds a Docker Model Runner model, which is no directory of files"),
    ] {
        let url = format!("oci://{}/{reference}", reg.host());
        let out = work.join("refused.sig");
        let o = sign(&key, &out, &url, &[]);
        assert_eq!(o.status.code(), Some(2), "{}", describe(reference, &o));
        let err = text(&o.stderr);
        assert!(err.contains(&url) && err.contains(says) && err.contains("sign its label instead"), "{err}");
        assert!(!out.exists(), "{reference}: nothing is written");
        let o = verify(&public, &url, &sig, &[]);
        assert_eq!(o.status.code(), Some(2), "{}", describe(reference, &o));
        assert!(text(&o.stderr).contains(says), "{}", text(&o.stderr));
    }
}

#[test]
fn oci_oms_credentials_are_never_printed() {
    let Some(py) = prerequisites(WHAT) else { return };
    let (user, password) = ("alice", "s3cret-oms-pw");
    let Some(reg) = Registry::start(Some((user, password))) else { return };
    let d = common::Dir::new();
    let work = d.path("");
    let (key, public) = key_pair(&work);
    let files = files();
    let local = write_dir(&work.join("tiny"), &files);
    let host = reg.host();
    py.run(
        "oci_push.py",
        &["modelpack", "--registry", &host, "--ref", "pack/tiny:v1", "--user", user, "--password", password]
            .into_iter()
            .chain(["--dir", s(&local)])
            .collect::<Vec<_>>(),
    );
    let cfg = d.path("docker");
    std::fs::create_dir_all(&cfg).unwrap();
    let auth = format!(r#"{{"auths": {{"{host}": {{"username": "{user}", "password": "{password}"}}}}}}"#);
    std::fs::write(cfg.join("config.json"), auth).unwrap();
    let env = [("DOCKER_CONFIG", cfg.as_path())];
    let artifact = format!("oci://{host}/pack/tiny:v1");
    let mut outputs = Vec::new();
    // With the Docker config's credentials: signed, the directory's bundle, verified.
    let sig = work.join("oci.sig");
    let o = sign(&key, &sig, &artifact, &env);
    assert_eq!(o.status.code(), Some(0), "{}", describe("sign", &o));
    outputs.push(o);
    let o = gd(&["sign", "--format", "oms", "--key", s(&key), "--out", s(&work.join("local.sig")), s(&local)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", describe("sign the directory", &o));
    assert_eq!(std::fs::read(&sig).unwrap(), std::fs::read(work.join("local.sig")).unwrap());
    let o = verify(&public, &artifact, &sig, &env);
    assert_eq!(o.status.code(), Some(0), "{}", describe("verify", &o));
    outputs.push(o);
    // Without them, and with them in the URL or for a missing tag: errors
    // that name the artifact, never the password.
    let in_url = format!("oci://{user}:{password}@{host}/pack/tiny:v1");
    let missing = format!("oci://{host}/pack/tiny:nope");
    for (model, env) in [(&artifact, &[][..]), (&in_url, &[][..]), (&missing, &env[..])] {
        let o = sign(&key, &work.join("no.sig"), model, env);
        assert_eq!(o.status.code(), Some(2), "{}", describe(model, &o));
        outputs.push(o);
        let o = verify(&public, model, &sig, env);
        assert_ne!(o.status.code(), Some(0), "{}", describe(model, &o));
        outputs.push(o);
    }
    assert!(!work.join("no.sig").exists());
    for o in &outputs {
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(!all.contains(password), "{all}");
    }
}
