//! OpenSSF model signatures made by the real `model-signing` 1.1.1 (PyPI,
//! through scripts/interop/oms.py): `gguf-digest verify` accepts what it
//! signs with a key (P-256, P-384) and with a certificate (a root →
//! intermediate → leaf chain `openssl` makes here), `files` and `shards`
//! serialization, ignored paths; and rejects every tampered copy (a byte
//! flipped, a file added, a file removed, a shard re-cut), as
//! `model_signing verify` does. Skipped without the venv unless CI=true.
use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::py::{Py, prerequisites};
use common::*;

const WHAT: &str = "the OpenSSF model signing interop tests (tests/interop/sign_oms.rs)";

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl").args(args).current_dir(dir).output().expect("runs openssl");
    assert!(o.status.success(), "openssl {args:?}: {}", text(&o.stderr));
}

/// An EC key pair of `curve` (`prime256v1`, `secp384r1`): (private, public).
fn key_pair(dir: &Path, name: &str, curve: &str) -> (PathBuf, PathBuf) {
    let (k, p) = (format!("{name}.key"), format!("{name}.pub"));
    openssl(dir, &["ecparam", "-name", curve, "-genkey", "-noout", "-out", &k]);
    openssl(dir, &["ec", "-in", &k, "-pubout", "-out", &p]);
    (dir.join(k), dir.join(p))
}

/// A model directory: weights of 3 MB (several shards of 1 MB), a small
/// file in a subdirectory, an empty file, a README the signer ignores and
/// git's files.
fn model(root: &Path) -> PathBuf {
    let m = root.join("model");
    std::fs::create_dir_all(m.join("sub")).unwrap();
    std::fs::create_dir_all(m.join(".git")).unwrap();
    let mut rng = common::harness::Rng::new(26);
    let weights: Vec<u8> = (0..3_000_123).map(|_| rng.below(256) as u8).collect();
    std::fs::write(m.join("w-00001-of-00002.bin"), &weights[..2_000_000]).unwrap();
    std::fs::write(m.join("w-00002-of-00002.bin"), &weights[2_000_000..]).unwrap();
    std::fs::write(m.join("sub/config.json"), b"{\"a\": 1}\n").unwrap();
    std::fs::write(m.join("empty"), b"").unwrap();
    std::fs::write(m.join("README.md"), b"# a model\n").unwrap();
    std::fs::write(m.join(".git/HEAD"), b"ref: refs/heads/main\n").unwrap();
    m
}

fn sign(py: &Py, args: &[&str]) {
    let out = common::py::command(&py.python, &common::py::scripts().join("oms.py")).args(args).output().unwrap();
    assert!(out.status.success(), "oms.py {args:?}: {}", text(&out.stderr));
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    let st = Command::new("cp").arg("-r").arg(from).arg(to).status().unwrap();
    assert!(st.success());
}

/// `verify SIG --root DIR` with `method`: (exit code, stdout, stderr).
fn verify(sig: &Path, dir: &Path, method: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["verify", s(sig), "--root", s(dir)];
    args.extend_from_slice(method);
    let o = gd_in(Path::new("/"), &args);
    (o.status.code(), text(&o.stdout), text(&o.stderr))
}

/// What is done to a copy, how, and the line that must say it.
type Tamper<'a> = (&'a str, &'a dyn Fn(&Path), &'a str);

/// Every tampered copy of `model` fails with exit 1 and the file named.
fn tampered_copies_fail(work: &Path, model: &Path, sig: &Path, method: &[&str], sharded: bool) {
    let cases: [Tamper<'_>; 4] = [
        (
            "a byte flipped",
            &|m: &Path| {
                let p = m.join("w-00002-of-00002.bin");
                let mut b = std::fs::read(&p).unwrap();
                b[500_000] ^= 1;
                std::fs::write(&p, b).unwrap();
            },
            "w-00002-of-00002.bin: FAILED",
        ),
        (
            "a file added",
            &|m: &Path| std::fs::write(m.join("sub/extra.txt"), b"x").unwrap(),
            "sub/extra.txt: FAILED (unexpected",
        ),
        (
            "a file removed",
            &|m: &Path| std::fs::remove_file(m.join("sub/config.json")).unwrap(),
            "sub/config.json: FAILED (missing)",
        ),
        (
            "the shards re-cut",
            &|m: &Path| {
                let (a, b) = (m.join("w-00001-of-00002.bin"), m.join("w-00002-of-00002.bin"));
                let (mut x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
                let tail = x.split_off(1_500_000);
                std::fs::write(&a, x).unwrap();
                std::fs::write(&b, [tail, y].concat()).unwrap();
            },
            "w-00001-of-00002.bin: FAILED",
        ),
    ];
    for (i, (what, change, line)) in cases.iter().enumerate() {
        let copy = work.join(format!("copy{i}-{sharded}"));
        copy_dir(model, &copy);
        change(&copy);
        let (code, out, err) = verify(sig, &copy, method);
        assert_eq!(code, Some(1), "{what}: {out}{err}");
        assert!(out.contains(line), "{what}: {out}");
        assert!(err.contains("did NOT match"), "{what}: {err}");
    }
}

#[test]
fn model_signing_key_signatures_files_and_shards_verify_and_tampered_copies_fail() {
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let work = d.path("");
    let m = model(&work);
    for (curve, shards) in [("prime256v1", None), ("secp384r1", Some("1000000"))] {
        let (key, public) = key_pair(&work, curve, curve);
        let sig = work.join(format!("{curve}.sig"));
        let mut args = vec!["sign-key", s(&m), s(&key), s(&sig), "--ignore", "README.md"];
        if let Some(n) = shards {
            args.extend_from_slice(&["--shards", n]);
        }
        sign(py, &args);
        let method = ["--key", s(&public)];
        let (code, out, err) = verify(&sig, &m, &method);
        assert_eq!(code, Some(0), "{curve}: {out}{err}");
        for f in ["w-00001-of-00002.bin: OK", "w-00002-of-00002.bin: OK", "sub/config.json: OK"] {
            assert!(out.contains(f), "{curve}: {out}");
        }
        assert!(!out.contains("README") && !out.contains(".git"), "ignored files are not reported: {out}");
        // The empty file is a resource of `files`, and has no shard.
        assert_eq!(out.contains("empty: OK"), shards.is_none(), "{out}");
        tampered_copies_fail(&work, &m, &sig, &method, shards.is_some());
        // Another key: refused before a file is read.
        let (_, other) = key_pair(&work, &format!("other-{curve}"), curve);
        let (code, _, err) = verify(&sig, &m, &["--key", s(&other)]);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains("signature: FAILED"), "{err}");
    }
}

#[test]
fn model_signing_certificate_signatures_chain_to_the_given_root_only() {
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let work = d.path("");
    let m = model(&work);
    let ext = |name: &str, body: &str| std::fs::write(work.join(name), body).unwrap();
    ext("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n");
    ext(
        "leaf.ext",
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n",
    );
    for (name, curve) in
        [("root", "secp384r1"), ("int", "prime256v1"), ("leaf", "prime256v1"), ("stranger", "prime256v1")]
    {
        key_pair(&work, name, curve);
    }
    for root in ["root", "stranger"] {
        openssl(
            &work,
            &["req", "-x509", "-new", "-key", &format!("{root}.key"), "-subj", &format!("/CN={root}"), "-days", "30"]
                .into_iter()
                .chain(["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
                .chain(["-out", &format!("{root}.pem")])
                .collect::<Vec<_>>(),
        );
    }
    let issue = |name: &str, by: &str, ext: &str| {
        openssl(
            &work,
            &[
                "req",
                "-new",
                "-key",
                &format!("{name}.key"),
                "-subj",
                &format!("/CN={name}"),
                "-out",
                &format!("{name}.csr"),
            ],
        );
        openssl(
            &work,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{by}.pem"),
                "-CAkey",
                &format!("{by}.key"),
            ]
            .into_iter()
            .chain(["-CAcreateserial", "-days", "10", "-extfile", ext, "-out", &format!("{name}.pem")])
            .collect::<Vec<_>>(),
        );
    };
    issue("int", "root", "ca.ext");
    issue("leaf", "int", "leaf.ext");
    let sig = work.join("cert.sig");
    let p = |n: &str| work.join(n);
    sign(
        py,
        &["sign-cert", s(&m), s(&p("leaf.key")), s(&p("leaf.pem")), s(&p("int.pem")), s(&sig), "--ignore", "README.md"],
    );
    let root = p("root.pem");
    let method = ["--certificate-chain", s(&root)];
    let (code, out, err) = verify(&sig, &m, &method);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("signature OK (certificate CN=leaf)"), "{out}");
    tampered_copies_fail(&work, &m, &sig, &method, false);
    // Another CA: refused (exit 2), nothing read.
    let (code, out, err) = verify(&sig, &m, &["--certificate-chain", s(&p("stranger.pem"))]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("does not chain to the given CA"), "{err}");
    assert!(!out.contains("OK"), "{out}");
    // A certificate bundle is not verified with a key.
    let (code, _, err) = verify(&sig, &m, &["--key", s(&p("leaf.pub"))]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("carries a certificate"), "{err}");
}

#[test]
fn model_signing_accepts_nothing_that_gguf_digest_refuses_to_open() {
    // A signed name leading out through a link: model_signing 1.1.1 reads
    // it with --ignore_unsigned_files; gguf-digest refuses before opening.
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let work = d.path("");
    let m = work.join("m");
    std::fs::create_dir_all(m.join("in")).unwrap();
    std::fs::write(m.join("in/f"), b"inside").unwrap();
    let (key, public) = key_pair(&work, "k", "prime256v1");
    let sig = work.join("k.sig");
    sign(py, &["sign-key", s(&m), s(&key), s(&sig)]);
    std::fs::remove_dir_all(m.join("in")).unwrap();
    std::fs::create_dir_all(work.join("outside")).unwrap();
    std::fs::write(work.join("outside/f"), b"inside").unwrap();
    std::os::unix::fs::symlink(work.join("outside"), m.join("in")).unwrap();
    let (code, out, err) = verify(&sig, &m, &["--key", s(&public)]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("leads outside the root through a symbolic link"), "{err}");
}

/// `model_signing verify key` (its CLI) of `model` against `sig`: whether it
/// passed, and what it said.
fn model_signing_verify(py: &Py, model: &Path, sig: &Path, public: &Path, extra: &[&str]) -> (bool, String) {
    let bin = py.python.parent().unwrap().join("model_signing");
    let mut args = vec!["verify", "key", s(model), "--signature", s(sig), "--public_key", s(public)];
    args.extend_from_slice(extra);
    let o = Command::new(bin).args(args).env_remove("PYTHONPATH").output().expect("runs model_signing");
    (o.status.success(), format!("{}{}", text(&o.stdout), text(&o.stderr)))
}

#[test]
fn model_signing_and_gguf_digest_agree_on_a_link_to_the_signature_and_ignore_paths_outside() {
    // Issue #31 items 4 and 5: a hard link to the signature inside the
    // model is a file like any other, and an ignore path that is not below
    // the model ignores nothing: both verifiers report the file.
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let work = d.path("");
    let m = work.join("m");
    std::fs::create_dir_all(m.join("sub")).unwrap();
    std::fs::write(m.join("a.txt"), b"a\n").unwrap();
    std::fs::write(m.join("sub/b.txt"), b"b\n").unwrap();
    let (key, public) = key_pair(&work, "k", "prime256v1");
    let method = ["--key", s(&public)];
    let sig = work.join("k.sig");
    sign(py, &["sign-key", s(&m), s(&key), s(&sig)]);
    let (ok, said) = model_signing_verify(py, &m, &sig, &public, &[]);
    assert!(ok, "{said}");
    let (code, out, err) = verify(&sig, &m, &method);
    assert_eq!(code, Some(0), "{out}{err}");
    std::fs::hard_link(&sig, m.join("chat_template.jinja")).unwrap();
    let (ok, said) = model_signing_verify(py, &m, &sig, &public, &[]);
    assert!(!ok && said.contains("chat_template.jinja"), "{said}");
    let (code, out, err) = verify(&sig, &m, &method);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("chat_template.jinja: FAILED (unexpected"), "{out}");
    std::fs::remove_file(m.join("chat_template.jinja")).unwrap();

    for outside in ["/evil.py", "../m/evil.py"] {
        let sig = work.join("evil.sig");
        sign(py, &["sign-key", s(&m), s(&key), s(&sig), "--signed-ignore", outside]);
        let (ok, said) = model_signing_verify(py, &m, &sig, &public, &[]);
        assert!(ok, "{outside}: {said}");
        let (code, out, err) = verify(&sig, &m, &method);
        assert_eq!(code, Some(0), "{outside}: {out}{err}");
        assert!(err.contains(&format!("ignore path {outside} is not below the model directory")), "{err}");
        std::fs::write(m.join("evil.py"), b"import os\n").unwrap();
        let (ok, said) = model_signing_verify(py, &m, &sig, &public, &[]);
        assert!(!ok && said.contains("evil.py"), "{outside}: {said}");
        let (code, out, err) = verify(&sig, &m, &method);
        assert_eq!(code, Some(1), "{outside}: {out}{err}");
        assert!(out.contains("evil.py: FAILED (unexpected"), "{outside}: {out}");
        std::fs::remove_file(m.join("evil.py")).unwrap();
    }
}

#[test]
fn a_hugging_face_snapshot_signed_by_either_verifies_in_both() {
    // Issue #31 item 9: a snapshot's files are links into its repository's
    // blobs/; model_signing signs it with allow_symlinks, `sign --format
    // oms` too, and each verifier accepts both signatures.
    let Some(py) = prerequisites(WHAT) else { return };
    let d = Dir::new();
    let work = d.path("");
    let files: tree::Files = vec![
        ("config.json".into(), b"{\"a\": 1}\n".to_vec()),
        ("m.gguf".into(), rich_model(&[0]).build()),
        ("sub/notes.txt".into(), b"notes\n".to_vec()),
    ];
    let snap = tree::snapshot(&work.join("hub"), "n", &files, false);
    let (key, public) = key_pair(&work, "k", "prime256v1");
    let method = ["--key", s(&public)];
    let theirs = work.join("theirs.sig");
    sign(py, &["sign-key", s(&snap), s(&key), s(&theirs), "--allow-symlinks"]);
    let ours = work.join("ours.sig");
    let o = gd_in(&work, &["sign", "--format", "oms", "--key", s(&key), "--out", s(&ours), s(&snap)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for sig in [&theirs, &ours] {
        let (ok, said) = model_signing_verify(py, &snap, sig, &public, &["--allow_symlinks"]);
        assert!(ok, "{}: {said}", sig.display());
        let (code, out, err) = verify(sig, &snap, &method);
        assert_eq!(code, Some(0), "{}: {out}{err}", sig.display());
        assert!(out.contains("sub/notes.txt: OK") && out.contains("m.gguf: OK"), "{out}");
    }
    // A blob changed beneath the snapshot: both name the file.
    std::fs::write(tree::blob_of(&snap, "sub/notes.txt"), b"other\n").unwrap();
    for sig in [&theirs, &ours] {
        let (ok, said) = model_signing_verify(py, &snap, sig, &public, &["--allow_symlinks"]);
        assert!(!ok && said.contains("sub/notes.txt"), "{said}");
        let (code, out, err) = verify(sig, &snap, &method);
        assert_eq!(code, Some(1), "{out}{err}");
        assert!(out.contains("sub/notes.txt: FAILED"), "{out}");
    }
}
