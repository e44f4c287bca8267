//! `sign --format oms` and `verify` of an OpenSSF model signature where the
//! model lies: an S3 prefix in moto's server (docs/adr/0052-oms-of-urls.md).
//! The bundle of a prefix is byte for byte the bundle of the same files in
//! a local directory of the prefix's last name; it verifies against the
//! prefix and the local copy (and with model_signing, when the venv has
//! it); a changed, extra or missing object fails it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{Dir, gd_in, rich_model, text};
use crate::s3::Moto;
use crate::servers::tool;

/// The files of the model (relative names) and their bytes.
fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("m.gguf", rich_model(&[0, 8]).build()),
        ("config.json", b"{\"a\": 1}".to_vec()),
        ("sub/notes.txt", b"notes".to_vec()),
        ("a-b/c.txt", b"path order".to_vec()),
    ]
}

/// A P-256 key pair made by openssl in `dir`: `p.key`, `p.pub`.
fn key_pair(dir: &Path) -> Option<()> {
    let openssl = tool("openssl")?;
    let run = |args: &[&str]| {
        let o = Command::new(&openssl).current_dir(dir).args(args).output().unwrap();
        assert!(o.status.success(), "openssl {args:?}: {}", text(&o.stderr));
    };
    run(&["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "p.key"]);
    run(&["pkey", "-in", "p.key", "-pubout", "-out", "p.pub"]);
    Some(())
}

/// Uploads `files` below `model/` in `bucket`, from copies written in `d`.
fn upload(moto: &Moto, d: &Dir, bucket: &str, files: &[(&str, Vec<u8>)]) {
    let up: Vec<(String, PathBuf)> = files
        .iter()
        .map(|(name, bytes)| {
            (format!("model/{name}"), d.write(&format!("up-{bucket}-{}", name.replace('/', "_")), bytes))
        })
        .collect();
    moto.upload(bucket, &up);
}

/// Runs the subcommand `args[0]` with moto's endpoint and credentials,
/// `--allow-http` after the subcommand.
fn run(moto: &Moto, dir: &Path, args: &[&str]) -> Output {
    Command::new(crate::common::gguf_digest_bin())
        .current_dir(dir)
        .env("AWS_ENDPOINT", format!("http://127.0.0.1:{}", moto.port))
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing-secret")
        .env("AWS_REGION", "us-east-1")
        .arg(args[0])
        .arg("--allow-http")
        .args(&args[1..])
        .output()
        .unwrap()
}

/// The venv's `model_signing`, when it is there.
fn model_signing() -> Option<PathBuf> {
    let venv = std::env::var_os("GGUF_DIGEST_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/gguf-digest/venv")))?;
    Some(venv.join("bin/model_signing")).filter(|b| b.is_file())
}

#[test]
fn a_prefix_is_signed_as_its_files_on_disk_and_verified_where_it_lies() {
    let Some(moto) = Moto::start() else { return };
    let d = Dir::new();
    let dir = &d.path("");
    let Some(()) = key_pair(dir) else { return };
    let files = files();
    for (name, bytes) in &files {
        std::fs::create_dir_all(dir.join("model").join(name).parent().unwrap()).unwrap();
        d.write(&format!("model/{name}"), bytes);
    }
    upload(&moto, &d, "models", &files);

    // The same bundle, byte for byte, from the prefix and from disk.
    let local = gd_in(dir, &["sign", "--format", "oms", "--key", "p.key", "--out", "local.sig", "model"]);
    assert_eq!(local.status.code(), Some(0), "{}", text(&local.stderr));
    let o = run(&moto, dir, &["sign", "--format", "oms", "--key", "p.key", "--out", "s3.sig", "s3://models/model/"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let bundle = std::fs::read(dir.join("s3.sig")).unwrap();
    assert_eq!(bundle, std::fs::read(dir.join("local.sig")).unwrap(), "the prefix's bundle is the directory's");

    // Verified against the prefix and against the local directory.
    let o = run(&moto, dir, &["verify", "--key", "p.pub", "--root", "s3://models/model/", "s3.sig"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let out = text(&o.stdout);
    for (name, _) in &files {
        assert!(out.contains(&format!("{name}: OK")), "{out}");
    }
    let o = gd_in(dir, &["verify", "--key", "p.pub", "--root", "model", "s3.sig"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    if let Some(ms) = model_signing() {
        let o = Command::new(ms)
            .current_dir(dir)
            .args(["verify", "key", "model", "--signature", "s3.sig", "--public_key", "p.pub"])
            .env_remove("PYTHONPATH")
            .output()
            .unwrap();
        assert!(o.status.success(), "model_signing: {}{}", text(&o.stdout), text(&o.stderr));
    }

    // A changed object fails, an extra one is unexpected, a missing one missing.
    let mut changed = files.clone();
    changed[1].1 = b"{\"a\": 2}".to_vec();
    upload(&moto, &d, "changed", &changed);
    let o = run(&moto, dir, &["verify", "--key", "p.pub", "--root", "s3://changed/model/", "s3.sig"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("config.json: FAILED"), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("m.gguf: OK"), "{}", text(&o.stdout));

    let mut extra = files.clone();
    extra.push(("sub/evil.py", b"print(1)".to_vec()));
    upload(&moto, &d, "extra", &extra);
    let o = run(&moto, dir, &["verify", "--key", "p.pub", "--root", "s3://extra/model/", "s3.sig"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("sub/evil.py: FAILED (unexpected"), "{}", text(&o.stdout));

    upload(&moto, &d, "missing", &files[..3]);
    let o = run(&moto, dir, &["verify", "--key", "p.pub", "--root", "s3://missing/model/", "s3.sig"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("a-b/c.txt: FAILED (missing)"), "{}", text(&o.stdout));

    // A single object is not a model directory: refused, nothing written.
    let o =
        run(&moto, dir, &["sign", "--format", "oms", "--key", "p.key", "--out", "x.sig", "s3://models/model/m.gguf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("a prefix ending in `/`"), "{}", text(&o.stderr));
    assert!(!dir.join("x.sig").exists());
}

#[test]
fn credentials_are_never_printed() {
    let Some(moto) = Moto::start() else { return };
    let d = Dir::new();
    let dir = &d.path("");
    let Some(()) = key_pair(dir) else { return };
    upload(&moto, &d, "creds", &files());
    // Signing and verifying a prefix that does not exist, with a URL that
    // holds credentials: errors name the place, never the secret.
    for args in [
        &["sign", "--format", "oms", "--key", "p.key", "s3://user:hunter2@creds/nothing/"][..],
        &["sign", "--format", "oms", "--key", "p.key", "s3://creds/model/"][..],
    ] {
        let o = run(&moto, dir, args);
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(!all.contains("hunter2") && !all.contains("testing-secret"), "{all}");
    }
    let o = run(&moto, dir, &["sign", "--format", "oms", "--key", "p.key", "--out", "c.sig", "s3://creds/model/"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(&moto, dir, &["verify", "--key", "p.pub", "--root", "s3://user:hunter2@creds/model/", "c.sig"]);
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert!(!all.contains("hunter2") && !all.contains("testing-secret"), "{all}");
}

#[test]
fn objects_replaced_while_a_prefix_is_signed_never_give_a_signature_of_two_versions() {
    let Some(moto) = Moto::start() else { return };
    let d = Dir::new();
    let dir = &d.path("");
    let Some(()) = key_pair(dir) else { return };
    let old = files();
    let mut new = old.clone();
    new[1].1 = b"{\"a\": 2}".to_vec();
    new[2].1 = b"other notes".to_vec();
    // The bundles of either version whole, from disk.
    let mut whole = Vec::new();
    for (v, version) in [&old, &new].into_iter().enumerate() {
        for (name, bytes) in version.iter() {
            let at = dir.join(format!("v{v}/model/{name}"));
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(&at, bytes).unwrap();
        }
        let o = gd_in(&dir.join(format!("v{v}")), &["sign", "--format", "oms", "--key", "../p.key", "model"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        whole.push(o.stdout);
    }
    let news: Vec<(String, PathBuf)> =
        new.iter().map(|(name, _)| (format!("model/{name}"), dir.join(format!("v1/model/{name}")))).collect();
    let (mut refused, mut signed) = (0, 0);
    // The new version uploaded before the 2nd, 3rd, ... GET (the 1st is the listing).
    for (at, bucket) in [(2, "race2"), (3, "race3"), (4, "race4"), (5, "race5")] {
        upload(&moto, &d, bucket, &old);
        let faults = std::sync::Arc::new(crate::servers::Faults::default());
        let (python, port, news, bucket_name) = (moto.python(), moto.port, news.clone(), bucket.to_string());
        *faults.hook.lock().unwrap() =
            Some((at, Box::new(move || crate::s3::upload(&python, port, &bucket_name, &news))));
        let proxy = crate::servers::Proxy::start(moto.port, std::sync::Arc::clone(&faults));
        let o = Command::new(crate::common::gguf_digest_bin())
            .current_dir(dir)
            .env("AWS_ENDPOINT", format!("http://127.0.0.1:{}", proxy.port))
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing-secret")
            .env("AWS_REGION", "us-east-1")
            .args(["sign", "--allow-http", "-j", "1", "--format", "oms", "--key", "p.key"])
            .arg(format!("s3://{bucket}/model/"))
            .output()
            .unwrap();
        match o.status.code() {
            Some(0) => {
                signed += 1;
                assert!(whole.contains(&o.stdout), "hook at GET {at}: a signature of neither version whole");
            }
            Some(2) => {
                refused += 1;
                assert!(text(&o.stderr).contains("replaced while it was read"), "{}", text(&o.stderr));
            }
            c => panic!("hook at GET {at}: exit {c:?}: {}", text(&o.stderr)),
        }
    }
    assert!(refused > 0, "no replacement was caught mid-read ({signed} signed): the test proved nothing");
}
