//! Azure Blob Storage through Azurite, Microsoft's emulator (npm
//! `azurite`, installed by .ci/run), objects uploaded by the
//! `azure-storage-blob` client (in the venv of scripts/setup-python.sh);
//! the tool reaches it with object_store's own emulator settings
//! (`AZURE_STORAGE_USE_EMULATOR`, `AZURITE_BLOB_STORAGE_URL`): every
//! model's label equals its label on disk; a prefix ending in `/` gets the
//! directory label of the same files; an object overwritten mid-read is
//! refused.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::py::in_ci;
use crate::common::{Dir, gguf_digest_bin, text};
use crate::models::{assert_labels_as_on_disk, models, uploads};
use crate::servers::{Faults, Proxy, free_port, tool};

/// Azurite's well-known account and key (public: every emulator has them).
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// The venv's Python, when it has azure-storage-blob.
fn python() -> Option<PathBuf> {
    let venv = std::env::var_os("GGUF_DIGEST_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/gguf-digest/venv")))?;
    let python = venv.join("bin/python");
    let ok = Command::new(&python).args(["-c", "import azure.storage.blob"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!in_ci(), "azure-storage-blob is missing from the venv, and CI=true: run scripts/setup-python.sh");
        println!("SKIPPED: azure-storage-blob is not in the venv (scripts/setup-python.sh installs it)");
        return None;
    }
    Some(python)
}

struct Azurite {
    child: Child,
    port: u16,
    python: PathBuf,
    _dir: tempfile::TempDir,
}

impl Azurite {
    fn start() -> Option<Azurite> {
        let azurite = tool("azurite-blob")?;
        let python = python()?;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(azurite)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string(), "--location"])
            .arg(dir.path())
            // The client may speak a newer API version than the emulator
            // knows; `--loose` ignores headers it does not support; no
            // telemetry (it would reach for Microsoft's hosts).
            .args(["--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(30), "azurite did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Azurite { child, port, python, _dir: dir })
    }

    /// Uploads each file of `files` (key, local path) into `container`.
    fn upload(&self, container: &str, files: &[(String, PathBuf)]) {
        upload(&self.python, self.port, container, files);
    }

    /// The command with object_store's emulator settings, reaching
    /// Azurite (or a proxy in front of it) on `port`.
    fn gguf_digest(&self, port: u16) -> Command {
        let mut c = Command::new(gguf_digest_bin());
        c.env("AZURE_STORAGE_USE_EMULATOR", "true")
            .env("AZURITE_BLOB_STORAGE_URL", format!("http://127.0.0.1:{port}"))
            .arg("--allow-http");
        c
    }
}

fn upload(python: &Path, port: u16, container: &str, files: &[(String, PathBuf)]) {
    let script = r#"
import sys
from azure.core.exceptions import ResourceExistsError
from azure.storage.blob import BlobServiceClient
port, account, key, container, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
service = BlobServiceClient(f"http://127.0.0.1:{port}/{account}", credential={"account_name": account, "account_key": key})
try:
    service.create_container(container)
except ResourceExistsError:
    pass
for name, path in zip(pairs[::2], pairs[1::2]):
    with open(path, "rb") as f:
        service.get_blob_client(container, name).upload_blob(f.read(), overwrite=True)
"#;
    let mut c = Command::new(python);
    c.args(["-c", script, &port.to_string(), ACCOUNT, KEY, container]);
    for (k, p) in files {
        c.arg(k).arg(p);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "azure-storage-blob upload: {}", text(&out.stderr));
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_model_and_a_prefix_in_azure_have_their_labels_on_disk() {
    let Some(azurite) = Azurite::start() else { return };
    let up = uploads();
    azurite.upload("models", &up.files);
    // Credentials are never printed, even in an error.
    assert_labels_as_on_disk(&up, "az://models/", Some(KEY), || azurite.gguf_digest(azurite.port));
}

#[test]
fn an_azure_object_overwritten_mid_read_is_refused() {
    let Some(azurite) = Azurite::start() else { return };
    let d = Dir::new();
    let bytes = &models()[0].1;
    let path = d.write("m.gguf", bytes);
    azurite.upload("replaced", &[("m.gguf".into(), path.clone())]);
    let mut other = bytes.clone();
    other.push(0);
    let other_path = d.write("other.gguf", &other);
    let faults = Arc::new(Faults::default());
    let (python, port) = (azurite.python.clone(), azurite.port);
    // Before the second GET (the metadata was the first): a new version.
    *faults.hook.lock().unwrap() =
        Some((2, Box::new(move || upload(&python, port, "replaced", &[("m.gguf".into(), other_path)]))));
    let proxy = Proxy::start(azurite.port, Arc::clone(&faults));
    let out = azurite.gguf_digest(proxy.port).args(["-j", "1", "az://replaced/m.gguf"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("replaced while it was read") && err.contains("az://replaced/m.gguf"), "{err}");
}
