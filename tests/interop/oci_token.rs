//! Interop for the OCI token flow (docs/adr/0046-oci-registries.md,
//! "Credentials"): the registry of tests/interop/oci.rs in `auth: token:`
//! mode, on the storage of a plain one the models were pushed to,
//! verifying every token's signature against a certificate made here; the
//! tokens come from `scripts/interop/oci_token_server.py` over HTTPS (a
//! public repository, a private one for the credentials of a Docker
//! config, bad answers on demand).

use crate::common;
use crate::oci::{Auth, Registry, TOKEN_ISSUER, TOKEN_SERVICE, WHAT, gd, label_of, push, tiny};

use base64::Engine as _;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use common::py::{Py, describe, in_ci, prerequisites};
use common::{Gguf, Tensor, Val};

/// The repository anyone may pull, the one only `TOKEN_USER` may.
const PUBLIC: &str = "public/models";
const PRIVATE: &str = "private/models";
const TOKEN_USER: (&str, &str) = ("alice", "t0ken-s3cret-pw");

/// `scripts/interop/oci_token_server.py` over HTTPS (a certificate of an
/// authority made here with openssl), signing its tokens with the key of
/// a self-signed certificate made here: the registry's `rootcertbundle`.
/// Killed when dropped.
struct TokenServer {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl TokenServer {
    /// `None` (the test skips) without openssl outside CI.
    fn start(py: &Py) -> Option<TokenServer> {
        if Command::new("openssl").arg("version").output().is_err() {
            assert!(!in_ci(), "openssl is missing: .ci/run installs it");
            eprintln!("skipping {WHAT}: no openssl");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl").args(args).current_dir(dir.path()).output().unwrap();
            assert!(out.status.success(), "{}", describe(&format!("openssl {args:?}"), &out));
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2"];
        openssl(
            &[&["req", "-x509"][..], &ec, &["-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=test CA"]].concat(),
        );
        openssl(
            &[&["req"][..], &ec[..5], &["-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=127.0.0.1"]].concat(),
        );
        std::fs::write(dir.path().join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "tls.pem",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        let subj = "/CN=gguf-digest test token signer";
        openssl(
            &[&["req", "-x509"][..], &ec, &["-keyout", "signing.key", "-out", "signing.pem", "-subj", subj]].concat(),
        );
        let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
        let err = std::fs::File::create(dir.path().join("server.err")).unwrap();
        let mut child = common::py::command(&py.python, &common::py::scripts().join("oci_token_server.py"))
            .args(["--tls-cert", &p("tls.pem"), "--tls-key", &p("tls.key")])
            .args(["--sign-cert", &p("signing.pem"), "--sign-key", &p("signing.key")])
            .args(["--issuer", TOKEN_ISSUER, "--service", TOKEN_SERVICE, "--public", PUBLIC, "--private", PRIVATE])
            .args(["--user", TOKEN_USER.0, "--password", TOKEN_USER.1])
            .args(["--mode-file", &p("mode"), "--log", &p("requests.jsonl")])
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .expect("starts oci_token_server.py");
        let mut line = String::new();
        use std::io::BufRead as _;
        let _ = std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
        let mut server = TokenServer { child, port: 0, dir };
        let port = serde_json::from_str::<serde_json::Value>(&line).ok().and_then(|v| v["port"].as_u64());
        let Some(port) = port else {
            panic!(
                "oci_token_server.py: {line:?} {}",
                std::fs::read_to_string(server.dir.path().join("server.err")).unwrap()
            );
        };
        server.port = u16::try_from(port).unwrap();
        Some(server)
    }

    /// The authority of the server's TLS certificate (for `--ca-file`).
    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// How the server answers from now on (oci_token_server.py's modes).
    fn set_mode(&self, mode: &str) {
        std::fs::write(self.dir.path().join("mode"), mode).unwrap();
    }

    /// The requests it logged (path, service, scopes, user), and forgets them.
    fn take_requests(&self) -> Vec<serde_json::Value> {
        let log = self.dir.path().join("requests.jsonl");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

impl Drop for TokenServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A plain registry to push to, a token server, and a registry in
/// `auth: token:` mode serving the plain one's storage directory (pushing
/// through the token flow is not what is tested: oras need not do it).
fn token_registries(py: &Py) -> Option<(Registry, TokenServer, Registry)> {
    let plain = Registry::start(None)?;
    let tokens = TokenServer::start(py)?;
    let guarded =
        Registry::start_with(Auth::Token(tokens.port, &tokens.dir.path().join("signing.pem")), Some(plain.storage()))?;
    Some((plain, tokens, guarded))
}

/// gguf-digest on `arg` trusting the token server's authority.
fn gd_token(tokens: &TokenServer, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let ca = tokens.ca();
    let mut all = vec!["--allow-http", "--ca-file", ca.to_str().unwrap()];
    all.extend_from_slice(args);
    gd(&all, env)
}

fn label_token(tokens: &TokenServer, arg: &str, env: &[(&str, &Path)]) -> String {
    let out = gd_token(tokens, &[arg], env);
    assert!(out.status.success(), "{}", describe(&format!("gguf-digest {arg}"), &out));
    String::from_utf8_lossy(&out.stdout).split("  ").next().unwrap_or_default().to_string()
}

#[test]
fn oci_token_flow_anonymous_pulls_have_the_labels_on_disk() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some((plain, tokens, reg)) = token_registries(py) else { return };
    let dir = common::Dir::new();
    let g = tiny();
    let file = dir.write("tiny.gguf", &g.build());
    // Ollama: the store's own manifest and blobs.
    let root = dir.path("models");
    let m = file.to_str().unwrap();
    let store = ["gguf", "--root", root.to_str().unwrap(), "--name", "tiny", "--model", m, "--rewrite", "none"];
    let info = py.run("ollama_store.py", &[&store[..], &["--template", "{{ .Prompt }}"]].concat());
    let manifest = info["manifest"].as_str().unwrap().to_string();
    let r = root.to_str().unwrap();
    push(py, "ollama", &plain, &format!("{PUBLIC}:ollama"), &["--store", r, "--manifest", &manifest]);
    // ModelPack: a directory.
    let pack = dir.path("pack");
    std::fs::create_dir_all(&pack).unwrap();
    std::fs::write(pack.join("model.gguf"), g.build()).unwrap();
    std::fs::write(pack.join("README.md"), b"# tiny\n").unwrap();
    push(py, "modelpack", &plain, &format!("{PUBLIC}:pack"), &["--dir", pack.to_str().unwrap()]);
    // Docker Model Runner: the GGUF.
    push(py, "dmr", &plain, &format!("{PUBLIC}:dmr"), &["--gguf", m]);
    let host = reg.host();
    let on_disk = [
        ("ollama", label_of(&["ollama:tiny"], &[("OLLAMA_MODELS", &root)])),
        ("pack", label_of(&[pack.to_str().unwrap()], &[])),
        ("dmr", g.expected_label()),
    ];
    for (tag, want) in &on_disk {
        assert_eq!(&label_token(&tokens, &format!("oci://{host}/{PUBLIC}:{tag}"), &[]), want, "{tag}");
    }
    // The registry asked for a token, the token service was asked for the
    // distribution spec's scope and the registry's service, anonymously.
    let asked = tokens.take_requests();
    assert!(!asked.is_empty(), "the token flow was used");
    for r in &asked {
        assert_eq!(r["path"], "/token", "{r}");
        assert_eq!(r["service"], serde_json::json!([TOKEN_SERVICE]), "{r}");
        assert_eq!(r["scope"], serde_json::json!([format!("repository:{PUBLIC}:pull")]), "{r}");
        assert!(r["user"].is_null(), "anonymous: {r}");
    }
    // The token under either name the spec allows.
    for mode in ["access-token-only", "token-only"] {
        tokens.set_mode(mode);
        assert_eq!(label_token(&tokens, &format!("oci://{host}/{PUBLIC}:dmr"), &[]), on_disk[2].1, "{mode}");
    }
    // Without the token server's authority, its TLS is refused: no label.
    let out = gd(&["--allow-http", &format!("oci://{host}/{PUBLIC}:dmr")], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("untrusted token server", &out));
    assert!(out.stdout.is_empty(), "{}", describe("untrusted token server", &out));
}

#[test]
fn oci_token_flow_private_repository_takes_docker_config_credentials() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some((plain, tokens, reg)) = token_registries(py) else { return };
    let dir = common::Dir::new();
    let g = Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("private"))
        .tensor(Tensor::filled("token_embd.weight", &[64, 8], 0, 7));
    let file = dir.write("private.gguf", &g.build());
    push(py, "dmr", &plain, &format!("{PRIVATE}:q"), &["--gguf", file.to_str().unwrap()]);
    let host = reg.host();
    let arg = format!("oci://{host}/{PRIVATE}:q");
    let (user, password) = TOKEN_USER;
    let mut outputs = Vec::new();
    // Anonymous: the token grants nothing; the registry refuses it.
    let out = gd_token(&tokens, &[&arg], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("anonymous", &out));
    assert!(out.stdout.is_empty(), "{}", describe("anonymous", &out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    for want in [host.as_str(), "refused access", "401 Unauthorized", "anonymously", PRIVATE] {
        assert!(err.contains(want), "{want:?} in {err}");
    }
    outputs.push(out);
    // DOCKER_CONFIG's auths (username and password): the label.
    let cfg = dir.path("docker");
    std::fs::create_dir_all(&cfg).unwrap();
    let auth = format!(r#"{{"auths": {{"{host}": {{"username": "{user}", "password": "{password}"}}}}}}"#);
    std::fs::write(cfg.join("config.json"), auth).unwrap();
    let out = gd_token(&tokens, &["--json", &arg], &[("DOCKER_CONFIG", &cfg)]);
    assert!(out.status.success(), "{}", describe("DOCKER_CONFIG", &out));
    outputs.push(out);
    assert_eq!(label_token(&tokens, &arg, &[("DOCKER_CONFIG", &cfg)]), g.expected_label());
    // ~/.docker/config.json (HOME, no DOCKER_CONFIG), `auth` as Docker writes it.
    let home = dir.path("home");
    std::fs::create_dir_all(home.join(".docker")).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    std::fs::write(
        home.join(".docker/config.json"),
        format!(r#"{{"auths": {{"http://{host}": {{"auth": "{b64}"}}}}}}"#),
    )
    .unwrap();
    let no_config = Path::new("");
    assert_eq!(label_token(&tokens, &arg, &[("DOCKER_CONFIG", no_config), ("HOME", &home)]), g.expected_label());
    let asked = tokens.take_requests();
    assert!(asked.iter().any(|r| r["user"] == user && r["accepted"] == true), "{asked:?}");
    assert!(asked.iter().all(|r| r["scope"] == serde_json::json!([format!("repository:{PRIVATE}:pull")])), "{asked:?}");
    // A wrong password: the token service's 401, said so.
    let wrong = format!(r#"{{"auths": {{"{host}": {{"username": "{user}", "password": "not-{password}"}}}}}}"#);
    std::fs::write(cfg.join("config.json"), wrong).unwrap();
    let out = gd_token(&tokens, &[&arg], &[("DOCKER_CONFIG", &cfg)]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("wrong password", &out));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("token service") && err.contains("401") && err.contains(&host), "{err}");
    outputs.push(out);
    // The credentials appear in no output.
    for out in &outputs {
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!all.contains(password) && !all.contains(&b64), "{all}");
    }
}

#[test]
fn oci_token_flow_bad_tokens_are_errors_never_labels() {
    let Some(py) = prerequisites(WHAT) else { return };
    let Some((plain, tokens, reg)) = token_registries(py) else { return };
    let dir = common::Dir::new();
    let file = dir.write("tiny.gguf", &tiny().build());
    push(py, "dmr", &plain, &format!("{PUBLIC}:q"), &["--gguf", file.to_str().unwrap()]);
    let host = reg.host();
    let arg = format!("oci://{host}/{PUBLIC}:q");
    assert_eq!(label_token(&tokens, &arg, &[]), tiny().expected_label(), "the good token first");
    // A repository the token service grants nobody: its token is refused.
    let other = format!("oci://{host}/other/models:q");
    let out = gd_token(&tokens, &[&other], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe("other", &out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("grants no pull of other/models (insufficient_scope)"), "{err}");
    // What the token service answers, and what the message must say.
    for (mode, says) in [
        ("refuse", "answered HTTP 401"),
        ("not-json", "not JSON"),
        ("no-token", "holds no token"),
        ("not-a-jwt", "invalid_token"),
        ("bad-signature", "invalid_token"),
        ("expired", "invalid_token"),
    ] {
        tokens.set_mode(mode);
        let out = gd_token(&tokens, &[&arg], &[]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(mode, &out));
        assert!(out.stdout.is_empty(), "no label: {}", describe(mode, &out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&host) && err.contains("refused access") && err.contains(says), "{mode}: {err}");
    }
}
