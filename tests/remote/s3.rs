//! S3 through moto's server mode (PyPI `moto[server]`, in the venv of
//! scripts/setup-python.sh), objects uploaded by boto3: every model's
//! label equals its label on disk; a prefix ending in `/` gets the
//! directory label of the same files; an object overwritten mid-read is
//! refused.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use crate::common::py::in_ci;
use crate::common::{Dir, gguf_digest_bin, text};
use crate::models::{assert_labels_as_on_disk, models, uploads};
use crate::servers::{Faults, Proxy, free_port};

/// The venv's Python, when it has moto and boto3.
fn python() -> Option<PathBuf> {
    let venv = std::env::var_os("GGUF_DIGEST_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/gguf-digest/venv")))?;
    let python = venv.join("bin/python");
    let ok = Command::new(&python).args(["-c", "import moto, boto3"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!in_ci(), "moto[server] and boto3 are missing from the venv, and CI=true: run scripts/setup-python.sh");
        println!("SKIPPED: moto[server] and boto3 are not in the venv (scripts/setup-python.sh installs them)");
        return None;
    }
    Some(python)
}

/// moto's server, stopped when dropped (also the progress tests' S3).
pub(crate) struct Moto {
    child: Child,
    pub(crate) port: u16,
    python: PathBuf,
}

impl Moto {
    pub(crate) fn start() -> Option<Moto> {
        let python = python()?;
        let port = free_port();
        let child = Command::new(&python)
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < std::time::Duration::from_secs(30), "moto did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Some(Moto { child, port, python })
    }

    /// Uploads each file of `files` (key, local path) with boto3 into `bucket`.
    pub(crate) fn upload(&self, bucket: &str, files: &[(String, PathBuf)]) {
        upload(&self.python, self.port, bucket, files);
    }

    /// The command with moto's endpoint and test credentials.
    pub(crate) fn gguf_digest(&self, endpoint_port: u16) -> Command {
        let mut c = Command::new(gguf_digest_bin());
        c.env("AWS_ENDPOINT", format!("http://127.0.0.1:{endpoint_port}"))
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing-secret")
            .env("AWS_REGION", "us-east-1")
            .arg("--allow-http");
        c
    }
}

fn upload(python: &Path, port: u16, bucket: &str, files: &[(String, PathBuf)]) {
    let script = r#"
import sys, boto3
port, bucket, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="testing",
                  aws_secret_access_key="testing-secret", region_name="us-east-1")
try:
    s3.create_bucket(Bucket=bucket)
except s3.exceptions.BucketAlreadyOwnedByYou:
    pass
for key, path in zip(pairs[::2], pairs[1::2]):
    with open(path, "rb") as f:
        s3.put_object(Bucket=bucket, Key=key, Body=f.read())
"#;
    let mut c = Command::new(python);
    c.args(["-c", script, &port.to_string(), bucket]);
    for (k, p) in files {
        c.arg(k).arg(p);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "boto3 upload: {}", text(&out.stderr));
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_model_and_a_prefix_in_s3_have_their_labels_on_disk() {
    let Some(moto) = Moto::start() else { return };
    let up = uploads();
    moto.upload("models", &up.files);
    // Credentials are never printed, even in an error.
    assert_labels_as_on_disk(&up, "s3://models/", Some("testing-secret"), || moto.gguf_digest(moto.port));
}

#[test]
fn an_object_overwritten_mid_read_is_refused() {
    let Some(moto) = Moto::start() else { return };
    let d = Dir::new();
    let bytes = &models()[0].1;
    let path = d.write("m.gguf", bytes);
    moto.upload("replaced", &[("m.gguf".into(), path.clone())]);
    let mut other = bytes.clone();
    other.push(0);
    let other_path = d.write("other.gguf", &other);
    let faults = Arc::new(Faults::default());
    let (python, port) = (moto.python.clone(), moto.port);
    // Before the second GET (the metadata was the first): a new version.
    *faults.hook.lock().unwrap() =
        Some((2, Box::new(move || upload(&python, port, "replaced", &[("m.gguf".into(), other_path)]))));
    let proxy = Proxy::start(moto.port, Arc::clone(&faults));
    let out = moto.gguf_digest(proxy.port).args(["-j", "1", "s3://replaced/m.gguf"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("replaced while it was read") && err.contains("s3://replaced/m.gguf"), "{err}");
}
