//! `sign` through the real binary: bundles that `verify --key` accepts for
//! keys of every kind openssl makes (Ed25519, P-256, P-384; plain PKCS#8,
//! encrypted PKCS#8 with PBKDF2 and with scrypt) and for a cosign key file
//! built here from its format; the payload byte for byte what `statement`
//! prints; the same bundle twice; and every refusal (exit 2, nothing
//! written): a wrong or missing password, another curve, a damaged PEM, a
//! model that cannot be labelled. `--format oms` of a directory.
use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use base64::Engine as _;
use common::*;
use serde_json::Value as Json;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Runs openssl in `dir`; None (test skipped) when it is missing, outside CI.
fn openssl(dir: &Path, args: &[&str]) -> Option<()> {
    match Command::new("openssl").args(args).current_dir(dir).output() {
        Ok(o) if o.status.success() => Some(()),
        Ok(o) => panic!("openssl {args:?}: {}", text(&o.stderr)),
        Err(_) if !py::in_ci() => {
            eprintln!("SKIPPED: openssl not found");
            None
        }
        Err(e) => panic!("openssl is needed under CI: {e}"),
    }
}

/// A private key `name.key` (mode 600) and its public key `name.pub`.
fn key_pair(dir: &Path, name: &str, algorithm: &[&str]) -> Option<()> {
    let key = format!("{name}.key");
    let mut args = vec!["genpkey"];
    args.extend_from_slice(algorithm);
    args.extend_from_slice(&["-out", &key]);
    openssl(dir, &args)?;
    openssl(dir, &["pkey", "-in", &key, "-pubout", "-out", &format!("{name}.pub")])?;
    chmod(&dir.join(&key), 0o600);
    Some(())
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const ED25519: &[&str] = &["-algorithm", "ed25519"];
const P256: &[&str] = &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"];
const P384: &[&str] = &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"];

/// Runs the binary in `dir` with these password variables (and no other).
fn gd_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(gguf_digest_bin());
    c.args(args).current_dir(dir).env_remove("GGUF_DIGEST_PASSWORD").env_remove("COSIGN_PASSWORD");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("runs gguf-digest")
}

/// A folder with a GGUF model and a safetensors model.
fn models() -> Dir {
    let d = Dir::new();
    d.write("m.gguf", &rich_model(&[0, 8]).build());
    let st = st::St::new().tensor(st::StTensor::filled("w", "F32", &[4, 4], 1));
    d.write("w.safetensors", &st.build());
    d
}

/// The payload of a bundle, after checking its shape.
fn payload_of(bundle: &[u8]) -> Vec<u8> {
    let b: Json = serde_json::from_slice(bundle).unwrap();
    assert_eq!(b["mediaType"], "application/vnd.dev.sigstore.bundle.v0.3+json");
    assert!(b["verificationMaterial"]["publicKey"]["hint"].is_string(), "{b}");
    assert_eq!(b["verificationMaterial"]["tlogEntries"], serde_json::json!([]));
    assert_eq!(b["dsseEnvelope"]["payloadType"], "application/vnd.in-toto+json");
    assert_eq!(b["dsseEnvelope"]["signatures"].as_array().unwrap().len(), 1);
    B64.decode(b["dsseEnvelope"]["payload"].as_str().unwrap()).unwrap()
}

#[test]
fn a_bundle_of_the_statement_verify_accepts_for_every_key_kind() {
    let d = models();
    let dir = &d.path("");
    let statement = gd_in(dir, &["statement", "m.gguf", "w.safetensors"]);
    assert_eq!(statement.status.code(), Some(0));
    for (name, alg) in [("ed", ED25519), ("p256", P256), ("p384", P384)] {
        let Some(()) = key_pair(dir, name, alg) else { return };
        let key = format!("{name}.key");
        let o = gd_env(dir, &["sign", "--key", &key, "m.gguf", "w.safetensors"], &[]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "{name}: {}", text(&o.stderr));
        // The very statement `statement` prints.
        assert_eq!(payload_of(&o.stdout), statement.stdout, "{name}");
        // Deterministic: Ed25519, and ECDSA with RFC 6979 nonces.
        let again = gd_env(dir, &["sign", "--key", &key, "m.gguf", "w.safetensors"], &[]);
        assert_eq!(again.stdout, o.stdout, "{name}");
        let out = format!("{name}.sigstore.json");
        let o = gd_env(dir, &["sign", "--key", &key, "--out", &out, "m.gguf", "w.safetensors"], &[]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty());
        let v = gd_in(dir, &["verify", "--key", &format!("{name}.pub"), &out]);
        assert_eq!(v.status.code(), Some(0), "{name}: {}", text(&v.stderr));
        assert_eq!(text(&v.stdout), "m.gguf: OK\nw.safetensors: OK\n");
        // Another key of the same kind does not verify it.
        key_pair(dir, &format!("{name}2"), alg);
        let v = gd_in(dir, &["verify", "--key", &format!("{name}2.pub"), &out]);
        assert_eq!(v.status.code(), Some(1), "{name}");
    }
}

#[test]
fn encrypted_pkcs8_keys_take_their_password_from_the_environment_only() {
    let d = models();
    let dir = &d.path("");
    let Some(()) = key_pair(dir, "p", P256) else { return };
    openssl(
        dir,
        &["pkcs8", "-topk8", "-in", "p.key", "-v2", "aes-256-cbc", "-passout", "pass:hunter2", "-out", "pbkdf2.key"],
    );
    openssl(dir, &["pkcs8", "-topk8", "-in", "p.key", "-scrypt", "-passout", "pass:hunter2", "-out", "scrypt.key"]);
    for key in ["pbkdf2.key", "scrypt.key"] {
        assert!(std::fs::read_to_string(dir.join(key)).unwrap().starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
        let o =
            gd_env(dir, &["sign", "--key", key, "--out", "s.json", "m.gguf"], &[("GGUF_DIGEST_PASSWORD", "hunter2")]);
        assert_eq!(o.status.code(), Some(0), "{key}: {}", text(&o.stderr));
        // An encrypted key may be readable by others: no warning.
        assert!(o.stderr.is_empty(), "{key}: {}", text(&o.stderr));
        let v = gd_in(dir, &["verify", "--key", "p.pub", "s.json"]);
        assert_eq!(v.status.code(), Some(0), "{key}: {}", text(&v.stderr));
        std::fs::remove_file(dir.join("s.json")).unwrap();
        let o = gd_env(dir, &["sign", "--key", key, "--out", "s.json", "m.gguf"], &[("GGUF_DIGEST_PASSWORD", "wrong")]);
        assert_eq!(o.status.code(), Some(2), "{key}");
        assert!(text(&o.stderr).contains("wrong password"), "{key}: {}", text(&o.stderr));
        assert!(!dir.join("s.json").exists());
        // No variable and no terminal: it says where a password comes from.
        let o = gd_env(dir, &["sign", "--key", key, "m.gguf"], &[("COSIGN_PASSWORD", "hunter2")]);
        assert_eq!(o.status.code(), Some(2), "{key}");
        assert!(text(&o.stderr).contains("set GGUF_DIGEST_PASSWORD"), "{}", text(&o.stderr));
        assert!(o.stdout.is_empty());
    }
    // There is no flag for it.
    let o = gd_env(dir, &["sign", "--key", "pbkdf2.key", "--password", "hunter2", "m.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

/// cosign's key file format (sigstore/cosign, go-securesystemslib's
/// `encrypted`): scrypt N=32768 r=8 p=1 over a 32-byte salt, NaCl secretbox
/// of the PKCS#8 DER, in JSON, in PEM.
fn cosign_key_file(pkcs8_pem: &str, password: &[u8]) -> String {
    use crypto_secretbox::aead::{Aead as _, KeyInit as _};
    let (_, der) = pkcs8::der::pem::decode_vec(pkcs8_pem.as_bytes()).unwrap();
    let (salt, nonce) = ([0x5au8; 32], [0xa5u8; 24]);
    let mut key = [0u8; 32];
    scrypt::scrypt(password, &salt, &scrypt::Params::new(15, 8, 1, 32).unwrap(), &mut key).unwrap();
    let sealed = crypto_secretbox::XSalsa20Poly1305::new(&key.into()).encrypt(&nonce.into(), der.as_slice()).unwrap();
    let json = serde_json::json!({
        "kdf": {"name": "scrypt", "params": {"N": 32768, "r": 8, "p": 1}, "salt": B64.encode(salt)},
        "cipher": {"name": "nacl/secretbox", "nonce": B64.encode(nonce)},
        "ciphertext": B64.encode(sealed),
    });
    pkcs8::der::pem::encode_string("ENCRYPTED SIGSTORE PRIVATE KEY", pkcs8::LineEnding::LF, json.to_string().as_bytes())
        .unwrap()
}

#[test]
fn cosign_key_files_open_with_cosign_password() {
    let d = models();
    let dir = &d.path("");
    let Some(()) = key_pair(dir, "p", P256) else { return };
    let plain = std::fs::read_to_string(dir.join("p.key")).unwrap();
    d.write("cosign.key", cosign_key_file(&plain, b"cosign pw").as_bytes());
    for var in ["COSIGN_PASSWORD", "GGUF_DIGEST_PASSWORD"] {
        let o = gd_env(dir, &["sign", "--key", "cosign.key", "--out", "s.json", "m.gguf"], &[(var, "cosign pw")]);
        assert_eq!(o.status.code(), Some(0), "{var}: {}", text(&o.stderr));
        let v = gd_in(dir, &["verify", "--key", "p.pub", "s.json"]);
        assert_eq!(v.status.code(), Some(0), "{}", text(&v.stderr));
    }
    let o = gd_env(dir, &["sign", "--key", "cosign.key", "m.gguf"], &[("COSIGN_PASSWORD", "nope")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("wrong password"), "{}", text(&o.stderr));
    let o = gd_env(dir, &["sign", "--key", "cosign.key", "m.gguf"], &[]);
    assert!(text(&o.stderr).contains("set GGUF_DIGEST_PASSWORD or COSIGN_PASSWORD"), "{}", text(&o.stderr));
}

#[test]
fn a_model_that_cannot_be_labelled_gets_no_signature() {
    let d = models();
    let dir = &d.path("");
    let Some(()) = key_pair(dir, "ed", ED25519) else { return };
    let o = gd_env(dir, &["sign", "--key", "ed.key", "--out", "s.json", "m.gguf", "missing.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("missing.gguf"), "{}", text(&o.stderr));
    assert!(!dir.join("s.json").exists());
    let names: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 4, "no partial file left: {names:?}");
    let o = gd_env(dir, &["sign", "--key", "ed.key", "m.gguf", "missing.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    // A truncated model too.
    let bytes = std::fs::read(dir.join("m.gguf")).unwrap();
    d.write("cut.gguf", &bytes[..bytes.len() - 1]);
    let o = gd_env(dir, &["sign", "--key", "ed.key", "--out", "s.json", "cut.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.join("s.json").exists());
}

#[test]
fn keys_it_cannot_use_are_refused_by_name() {
    let d = models();
    let dir = &d.path("");
    let Some(()) = key_pair(dir, "p521", &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"]) else {
        return;
    };
    let o = gd_env(dir, &["sign", "--key", "p521.key", "--out", "s.json", "m.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("an ECDSA key over P-521: not a curve this tool signs with"),
        "{}",
        text(&o.stderr)
    );
    assert!(!dir.join("s.json").exists());
    d.write("bad.key", b"-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n");
    let o = gd_env(dir, &["sign", "--key", "bad.key", "m.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("bad.key") && text(&o.stderr).contains("not a PEM private key"),
        "{}",
        text(&o.stderr)
    );
    let o = gd_env(dir, &["sign", "--key", "p521.pub", "m.gguf"], &[]);
    assert!(text(&o.stderr).contains("this is a public key"), "{}", text(&o.stderr));
    let o = gd_env(dir, &["sign", "--key", "none.key", "m.gguf"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn an_unencrypted_key_others_can_read_is_warned_of() {
    let d = models();
    let dir = &d.path("");
    let Some(()) = key_pair(dir, "ed", ED25519) else { return };
    chmod(&dir.join("ed.key"), 0o644);
    let o = gd_env(dir, &["sign", "--key", "ed.key", "m.gguf"], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stderr).contains("UNPROTECTED PRIVATE KEY FILE! Permissions 0644"), "{}", text(&o.stderr));
    chmod(&dir.join("ed.key"), 0o600);
    let o = gd_env(dir, &["sign", "--key", "ed.key", "m.gguf"], &[]);
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
}

#[test]
fn an_oms_signature_of_a_directory_carries_its_labels() {
    let d = Dir::new();
    let dir = &d.path("");
    std::fs::create_dir_all(dir.join("model/sub")).unwrap();
    d.write("model/m.gguf", &rich_model(&[0, 8]).build());
    d.write("model/config.json", b"{}");
    d.write("model/sub/notes.txt", b"notes");
    let Some(()) = key_pair(dir, "p", P256) else { return };
    key_pair(dir, "ed", ED25519);
    // The labels before the signature is written into the directory.
    let label = gd_in(dir, &["model"]);
    let o = gd_env(dir, &["sign", "--format", "oms", "--key", "p.key", "--out", "model/model.sig", "model"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let bundle = std::fs::read(dir.join("model/model.sig")).unwrap();
    let b: Json = serde_json::from_slice(&bundle).unwrap();
    // model_signing's hint: hex SHA-256 of the PEM public key.
    let pem = std::fs::read(dir.join("p.pub")).unwrap();
    use sha2::Digest as _;
    assert_eq!(b["verificationMaterial"]["publicKey"]["hint"], hex::encode(sha2::Sha256::digest(&pem)));
    let s: Json = serde_json::from_slice(&payload_of(&bundle)).unwrap();
    assert_eq!(s["predicateType"], "https://model_signing/signature/v1.0");
    assert_eq!(s["subject"][0]["name"], "model");
    let names: Vec<&str> =
        s["predicate"]["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["config.json", "m.gguf", "sub/notes.txt"], "the signature itself is left out");
    assert!(s["predicate"]["serialization"]["ignore_paths"].as_array().unwrap().contains(&Json::from("model.sig")));
    let g = &s["predicate"]["gguf_digest"];
    assert_eq!(g["label"], text(&label.stdout).split(' ').next().unwrap(), "the directory's label");
    let m = gd_in(dir, &["model/m.gguf"]);
    assert_eq!(
        g["components"],
        serde_json::json!([{"kind": "GGUF", "name": "m", "label": text(&m.stdout).split(' ').next().unwrap()}])
    );
    // Signing again into the same place inside the directory: refused, the
    // old signature would enter the directory label.
    let o = gd_env(dir, &["sign", "--format", "oms", "--key", "p.key", "--out", "model/model.sig", "model"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("remove it first"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(dir.join("model/model.sig")).unwrap(), bundle, "left as it was");
    // Ed25519 is refused (model_signing has none), and so is more than one directory.
    let o = gd_env(dir, &["sign", "--format", "oms", "--key", "ed.key", "--out", "x.sig", "model"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("ECDSA key"), "{}", text(&o.stderr));
    assert!(!dir.join("x.sig").exists());
    let o = gd_env(dir, &["sign", "--format", "oms", "--key", "p.key", "model", "model"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn on_a_terminal_the_password_is_asked_for() {
    let d = models();
    let dir = &d.path("");
    let Some(()) = key_pair(dir, "p", P256) else { return };
    openssl(
        dir,
        &["pkcs8", "-topk8", "-in", "p.key", "-v2", "aes-256-cbc", "-passout", "pass:hunter2", "-out", "e.key"],
    );
    // util-linux's script runs the command on a pseudo-terminal, its input
    // from ours. (What the terminal echoes before the prompt turns echo off
    // depends on timing, so only the outcome is checked.)
    let command = format!("{} sign --key e.key --out s.json m.gguf", gguf_digest_bin());
    let mut child = match Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(dir)
        .env_remove("GGUF_DIGEST_PASSWORD")
        .env_remove("COSIGN_PASSWORD")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) if !py::in_ci() => return eprintln!("SKIPPED: util-linux script not found"),
        Err(e) => panic!("script is needed under CI: {e}"),
    };
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(b"hunter2\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("Password for e.key: "), "{}", text(&o.stdout));
    let v = gd_in(dir, &["verify", "--key", "p.pub", "s.json"]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v.stderr));
}
