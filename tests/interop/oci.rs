//! Interop for `oci://` inputs (docs/adr/0046-oci-registries.md): Debian's
//! `docker-registry` (the CNCF distribution registry) started by each test
//! on a free loopback port with a temporary storage directory (once behind
//! `htpasswd` basic auth), models pushed with the `oras` package through
//! `scripts/interop/oci_push.py` in the layouts Ollama, ModelPack and
//! Docker Model Runner write (the Ollama store itself written by
//! `ollama_store.py`), and each label compared with the label of the same
//! bytes on disk: the store (`ollama:`), the directory, the GGUF file.
//! A blob changed in the registry's storage is refused; a missing tag is
//! an error naming it.
//!
//! The token flow is tests/interop/oci_token.rs.
use crate::common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::py::{Py, describe, in_ci, prerequisites};
use common::{Gguf, Tensor, Val, gguf_digest_bin, write_set};

pub(crate) const WHAT: &str = "the OCI registry interop tests (tests/interop/oci.rs)";
const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// A registry process, killed when dropped.
pub(crate) struct Registry {
    child: Child,
    port: u16,
    /// Its config, its access log (and its storage, unless another registry's).
    dir: tempfile::TempDir,
    storage: PathBuf,
}

/// How a registry asks for credentials.
pub(crate) enum Auth<'a> {
    /// None: anonymous pulls and pushes.
    Anonymous,
    /// `htpasswd` basic auth for one user.
    Basic(&'a str, &'a str),
    /// `auth: token:`: tokens from the token service on this port,
    /// verified by the registry against this certificate bundle.
    Token(u16, &'a Path),
}

impl Registry {
    /// Starts a registry, behind basic auth for `user` when given; `None`
    /// (the test skips) without Debian's docker-registry outside CI.
    pub(crate) fn start(user: Option<(&str, &str)>) -> Option<Registry> {
        Registry::start_with(user.map_or(Auth::Anonymous, |(u, p)| Auth::Basic(u, p)), None)
    }

    /// Starts a registry asking for `auth`, on the storage directory
    /// `storage` (another registry's) or a new one.
    pub(crate) fn start_with(auth: Auth<'_>, storage: Option<PathBuf>) -> Option<Registry> {
        if !Path::new(REGISTRY_BIN).exists() {
            assert!(!in_ci(), "{REGISTRY_BIN} is missing: .ci/run installs docker-registry");
            eprintln!("skipping {WHAT}: no {REGISTRY_BIN} (apt-get install docker-registry)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let storage = storage.unwrap_or_else(|| dir.path().join("storage"));
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: false\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            storage.display()
        );
        match auth {
            Auth::Anonymous => {}
            Auth::Basic(u, p) => {
                let out = Command::new("htpasswd").args(["-Bbn", u, p]).output().expect("runs htpasswd (apache2-utils)");
                assert!(out.status.success(), "{}", describe("htpasswd", &out));
                std::fs::write(dir.path().join("htpasswd"), &out.stdout).unwrap();
                config.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: gguf-digest-test\n    path: {}\n",
                    dir.path().join("htpasswd").display()
                ));
            }
            Auth::Token(port, bundle) => config.push_str(&format!(
                "auth:\n  token:\n    realm: https://127.0.0.1:{port}/token\n    service: {TOKEN_SERVICE}\n    issuer: {TOKEN_ISSUER}\n    rootcertbundle: {}\n",
                bundle.display()
            )),
        }
        let cfg = dir.path().join("config.yml");
        std::fs::write(&cfg, config).unwrap();
        // Its access log, for the bytes each blob was served (`served`).
        let log = std::fs::File::create(dir.path().join("access.log")).unwrap();
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starts docker-registry");
        let registry = Registry { child, port, dir, storage };
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(t.elapsed() < Duration::from_secs(20), "the registry did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(registry)
    }

    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn storage(&self) -> PathBuf {
        self.storage.clone()
    }

    /// The bytes the registry sent in answers to GETs of the blob
    /// `digest`, from its access log (the combined format: the request in
    /// quotes, then the status and the body's length).
    fn served(&self, digest: &str) -> u64 {
        let log = std::fs::read_to_string(self.dir.path().join("access.log")).unwrap();
        let blob = format!("/blobs/{digest} ");
        log.lines()
            .filter(|l| l.contains("\"GET ") && l.contains(&blob))
            .map(|l| {
                let after = l.split('"').nth(2).unwrap_or_default();
                after.split_whitespace().nth(1).and_then(|n| n.parse::<u64>().ok()).unwrap_or(0)
            })
            .sum()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn gd(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(gguf_digest_bin());
    c.args(args).stdin(Stdio::null());
    // No user's Docker config: each test names its own.
    c.env("DOCKER_CONFIG", "/nonexistent-docker-config");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs gguf-digest")
}

pub(crate) fn label_of(args: &[&str], env: &[(&str, &Path)]) -> String {
    let out = gd(args, env);
    assert!(out.status.success(), "{}", describe(&format!("gguf-digest {args:?}"), &out));
    String::from_utf8_lossy(&out.stdout).split("  ").next().unwrap_or_default().to_string()
}

fn oci(args: &[&str]) -> String {
    let mut all = vec!["--allow-http"];
    all.extend_from_slice(args);
    label_of(&all, &[])
}

pub(crate) fn push(py: &Py, what: &str, reg: &Registry, reference: &str, args: &[&str]) -> serde_json::Value {
    let host = reg.host();
    let mut all = vec![what, "--registry", &host, "--ref", reference];
    all.extend_from_slice(args);
    py.run("oci_push.py", &all)
}

pub(crate) fn tiny() -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("tiny"))
        .tensor(Tensor::filled("token_embd.weight", &[64, 8], 0, 1))
        .tensor(Tensor::filled("blk.0.attn_q.weight", &[64, 64], 1, 2))
        .tensor(Tensor::filled("output.weight", &[64, 8], 0, 3))
}

#[test]
fn oci_ollama_model_has_the_stores_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let model = dir.write("tiny.gguf", &tiny().build());
    let root = dir.path("models");
    let info = py.run(
        "ollama_store.py",
        &[
            "gguf",
            "--root",
            root.to_str().unwrap(),
            "--name",
            "tiny",
            "--model",
            model.to_str().unwrap(),
            "--rewrite",
            "none",
            "--template",
            "{{ .Prompt }}",
            "--license",
            "MIT",
        ],
    );
    let manifest = info["manifest"].as_str().unwrap().to_string();
    push(py, "ollama", &reg, "library/tiny:latest", &["--store", root.to_str().unwrap(), "--manifest", &manifest]);
    let want = label_of(&["ollama:tiny"], &[("OLLAMA_MODELS", &root)]);
    assert_eq!(oci(&[&format!("oci://{}/library/tiny:latest", reg.host())]), want);
    // By the manifest's digest too, and with no tag (latest).
    let digest = common::hex(&common::sha(&std::fs::read(&manifest).unwrap()));
    assert_eq!(oci(&[&format!("oci://{}/library/tiny@sha256:{digest}", reg.host())]), want);
    assert_eq!(oci(&[&format!("oci://{}/library/tiny", reg.host())]), want);
}

#[test]
fn oci_modelpack_artifact_has_the_directory_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let model = dir.path("model");
    std::fs::create_dir_all(model.join("docs")).unwrap();
    std::fs::write(model.join("model.gguf"), tiny().build()).unwrap();
    std::fs::write(model.join("config.json"), br#"{"architectures": ["LlamaForCausalLM"]}"#).unwrap();
    std::fs::write(model.join("docs").join("README.md"), b"# tiny\n").unwrap();
    let want = label_of(&[model.to_str().unwrap()], &[]);
    for (tag, annotation) in [("cncf", "cncf"), ("cnai", "cnai")] {
        push(
            py,
            "modelpack",
            &reg,
            &format!("pack/tiny:{tag}"),
            &["--dir", model.to_str().unwrap(), "--annotation", annotation],
        );
        assert_eq!(oci(&[&format!("oci://{}/pack/tiny:{tag}", reg.host())]), want, "{annotation} annotations");
    }
}

#[test]
fn oci_docker_model_has_its_ggufs_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let g = tiny();
    let file = dir.write("tiny.gguf", &g.build());
    let license = dir.write("LICENSE", b"MIT\n");
    push(py, "dmr", &reg, "ai/tiny:q", &["--gguf", file.to_str().unwrap(), "--license", license.to_str().unwrap()]);
    let want = label_of(&[file.to_str().unwrap()], &[]);
    assert_eq!(want, g.expected_label());
    assert_eq!(oci(&[&format!("oci://{}/ai/tiny:q", reg.host())]), want);
    // A shard set, one layer per shard, named as newer versions name them.
    let shards = write_set(&dir, "tiny", &g.split(&[1, 2]));
    let names: Vec<&str> = shards.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec!["--named", "--gguf"];
    args.extend(names.iter());
    push(py, "dmr", &reg, "ai/tiny:shards", &args);
    assert_eq!(oci(&[&format!("oci://{}/ai/tiny:shards", reg.host())]), want, "a shard set joins to one label");
}

#[test]
fn oci_tampered_blob_and_missing_tag_are_refused() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let file = dir.write("tiny.gguf", &tiny().build());
    let pushed = push(py, "dmr", &reg, "ai/tiny:q", &["--gguf", file.to_str().unwrap()]);
    let missing = format!("oci://{}/ai/tiny:nope", reg.host());
    let out = gd(&["--allow-http", &missing], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("missing tag", &out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&missing) && err.contains("not in the registry"), "{err}");
    // One byte of the GGUF blob changed in the registry's storage: refused.
    let blob = pushed["layers"][0].as_str().unwrap();
    py.run("oci_push.py", &["tamper", "--storage", reg.storage().to_str().unwrap(), "--digest", blob]);
    let out = gd(&["--allow-http", &format!("oci://{}/ai/tiny:q", reg.host())], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("tampered", &out));
    assert!(out.stdout.is_empty(), "no label for a tampered blob: {}", describe("tampered", &out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the ones its digest names") && err.contains(blob), "{err}");
}

#[test]
fn oci_weights_blob_is_read_once_for_the_label_and_its_digest() {
    // Tensors of several MiB hashed by two threads: the blob's SHA-256 is
    // taken from the label's own pieces (docs/adr/0046), so the registry
    // sends the weights about once (the metadata's first read overlaps the
    // first tensor), not twice as when the digest read the blob again.
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let mut g = Gguf::new().kv("general.architecture", Val::str("llama")).kv("general.name", Val::str("once"));
    g = g.tensor(Tensor::filled("token_embd.weight", &[1024, 4096], 0, 1));
    for i in 0..6u8 {
        g = g.tensor(Tensor::filled(&format!("blk.{i}.ffn_up.weight"), &[1024, 1024 + 256 * u64::from(i)], 0, i));
        g = g.tensor(Tensor::filled(&format!("blk.{i}.attn_norm.weight"), &[1024], 0, i));
    }
    g = g.tensor(Tensor::filled("output.weight", &[1024, 2048], 0, 9));
    let bytes = g.build();
    let file = dir.write("once.gguf", &bytes);
    let pushed = push(py, "dmr", &reg, "ai/once:f32", &["--gguf", file.to_str().unwrap()]);
    let blob = pushed["layers"][0].as_str().unwrap();
    let reference = format!("oci://{}/ai/once:f32", reg.host());
    assert_eq!(oci(&["-j", "2", &reference]), g.expected_label());
    let size = bytes.len() as u64;
    let served = reg.served(blob);
    assert!(served >= size && served <= size + (1 << 20), "{served} bytes served of a {size}-byte blob");
    // Tampered in the middle of a tensor: the label's bytes are not the
    // digest's, refused.
    py.run("oci_push.py", &["tamper", "--storage", reg.storage().to_str().unwrap(), "--digest", blob]);
    let out = gd(&["--allow-http", "-j", "2", &reference], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("tampered", &out));
    assert!(out.stdout.is_empty(), "no label for a tampered blob: {}", describe("tampered", &out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the ones its digest names") && err.contains(blob), "{err}");
}

#[test]
fn oci_basic_auth_from_docker_config_only() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(Some(("alice", "s3cret-pw"))) else { return };
    let dir = common::Dir::new();
    let file = dir.write("tiny.gguf", &tiny().build());
    let host = reg.host();
    let args = ["--registry", &host, "--ref", "ai/tiny:q", "--user", "alice", "--password", "s3cret-pw"];
    let mut all = vec!["dmr"];
    all.extend_from_slice(&args);
    all.extend_from_slice(&["--gguf", file.to_str().unwrap()]);
    py.run("oci_push.py", &all);
    let arg = format!("oci://{host}/ai/tiny:q");
    // Anonymous: refused, and the message says where credentials come from.
    let out = gd(&["--allow-http", &arg], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("anonymous", &out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refused access"), "{}", describe("anonymous", &out));
    // A helper is named, never run.
    let cfg = dir.path("docker");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("config.json"), br#"{"credsStore": "gguf-digest-test-never-run"}"#).unwrap();
    let out = gd(&["--allow-http", &arg], &[("DOCKER_CONFIG", &cfg)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("docker-credential-gguf-digest-test-never-run") && err.contains("does not run"), "{err}");
    // With auths: the label, and the password nowhere in the output.
    let auth = format!(r#"{{"auths": {{"{host}": {{"username": "alice", "password": "s3cret-pw"}}}}}}"#);
    std::fs::write(cfg.join("config.json"), auth).unwrap();
    let out = gd(&["--allow-http", "--json", &arg], &[("DOCKER_CONFIG", &cfg)]);
    assert!(out.status.success(), "{}", describe("with auths", &out));
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!all.contains("s3cret-pw"), "{all}");
    let want = label_of(&[file.to_str().unwrap()], &[]);
    assert_eq!(label_of(&["--allow-http", &arg], &[("DOCKER_CONFIG", &cfg)]), want);
}

/// The progress bar of an `oci://` model (`GGUF_DIGEST_PROGRESS=1`, plain
/// lines): its length is the manifest's layer sizes the model reads (an
/// Ollama model's every layer, a Docker model's GGUF), known once the
/// manifest is read, and the bar is full once labelled.
#[test]
fn oci_progress_bar_is_the_manifest_s_sizes() {
    use common::progress::{bar_lines, shown_bytes};
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let model = dir.write("m.gguf", &tiny().build());
    let root = dir.path("models");
    let info = py.run(
        "ollama_store.py",
        &["gguf", "--root", root.to_str().unwrap(), "--name", "m", "--model", model.to_str().unwrap()],
    );
    let manifest = info["manifest"].as_str().unwrap().to_string();
    push(py, "ollama", &reg, "library/m:latest", &["--store", root.to_str().unwrap(), "--manifest", &manifest]);
    let layers: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let ollama: u64 = layers["layers"].as_array().unwrap().iter().map(|l| l["size"].as_u64().unwrap()).sum();
    let license = dir.write("LICENSE", b"MIT\n");
    push(py, "dmr", &reg, "ai/m:q", &["--gguf", model.to_str().unwrap(), "--license", license.to_str().unwrap()]);
    let gguf = std::fs::metadata(&model).unwrap().len();
    let on = [("GGUF_DIGEST_PROGRESS", Path::new("1"))];
    for (reference, size) in [("library/m:latest", ollama), ("ai/m:q", gguf)] {
        let out = gd(&["--allow-http", &format!("oci://{}/{reference}", reg.host())], &on);
        assert!(out.status.success(), "{}", describe(reference, &out));
        let err = String::from_utf8_lossy(&out.stderr);
        let total = shown_bytes(size);
        assert_eq!(bar_lines(&err).last(), Some(&(total.clone(), total)), "{reference}: {err}");
    }
}

/// The token registry's `service` and `issuer` (the token server signs for
/// these; the registry accepts no other).
pub(crate) const TOKEN_SERVICE: &str = "gguf-digest-test-registry";
pub(crate) const TOKEN_ISSUER: &str = "gguf-digest-test-token-server";

/// A model directory with a file whose path is longer than a ustar name
/// (100 bytes: a PAX `path` record or a GNU long name in a tar) and an
/// empty file.
fn tar_model(dir: &common::Dir) -> PathBuf {
    let model = dir.path("model");
    let deep = model.join("docs").join("d".repeat(60));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(model.join("model.gguf"), tiny().build()).unwrap();
    std::fs::write(model.join("config.json"), br#"{"architectures": ["LlamaForCausalLM"]}"#).unwrap();
    std::fs::write(model.join("NOTICE"), b"").unwrap();
    std::fs::write(deep.join(format!("{}.md", "r".repeat(60))), b"# tiny\n").unwrap();
    model
}

#[test]
fn oci_modelpack_tar_layers_have_the_directory_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let model = tar_model(&dir);
    let want = label_of(&[model.to_str().unwrap()], &[]);
    // modctl's tar layers (PAX and GNU tars, both annotations and media
    // type spellings), and raw and tar layers in one artifact.
    for (tag, pack, format, annotation) in
        [("pax", "tar", "pax", "cncf"), ("gnu", "tar", "gnu", "cnai"), ("mixed", "mixed", "pax", "cncf")]
    {
        push(
            py,
            "modelpack",
            &reg,
            &format!("pack/tar:{tag}"),
            &["--dir", model.to_str().unwrap(), "--annotation", annotation, "--pack", pack, "--tar-format", format],
        );
        assert_eq!(oci(&[&format!("oci://{}/pack/tar:{tag}", reg.host())]), want, "{tag}");
    }
}

#[test]
fn oci_modelpack_bad_tar_layers_are_refused() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some(reg) = Registry::start(None) else { return };
    let dir = common::Dir::new();
    let model = tar_model(&dir);
    let refused = |tag: &str| -> String {
        let out = gd(&["--allow-http", &format!("oci://{}/pack/bad:{tag}", reg.host())], &[]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(tag, &out));
        assert!(out.stdout.is_empty(), "no label: {}", describe(tag, &out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let dir_arg = model.to_str().unwrap();
    for bad in ["symlink", "past-end"] {
        push(py, "modelpack", &reg, &format!("pack/bad:{bad}"), &["--dir", dir_arg, "--pack", "tar", "--bad", bad]);
    }
    // The first tar layer of a non-empty file is config.json's (NOTICE is empty).
    let err = refused("symlink");
    assert!(err.contains("\"config.json.link\"") && err.contains("symbolic link"), "{err}");
    let err = refused("past-end");
    assert!(err.contains("\"config.json\"") && err.contains("runs past the blob's end"), "{err}");
    // One byte of the weights' tar blob changed in the registry's storage.
    let pushed = push(py, "modelpack", &reg, "pack/bad:tampered", &["--dir", dir_arg, "--pack", "tar"]);
    let layers = pushed["layers"].as_array().unwrap();
    for blob in layers.iter().take(2).map(|b| b.as_str().unwrap()) {
        py.run("oci_push.py", &["tamper", "--storage", reg.storage().to_str().unwrap(), "--digest", blob]);
    }
    let err = refused("tampered");
    assert!(err.contains("not the ones its digest names"), "{err}");
}
