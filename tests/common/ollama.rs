//! Test-only Ollama store writer: blobs named by their SHA-256, manifests
//! under `manifests/<host>/<namespace>/<model>/<tag>`, written the way
//! Ollama lays out its store. Shares no code with the library.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use super::{hex, sha};

pub const MODEL: &str = "application/vnd.ollama.image.model";
pub const TEMPLATE: &str = "application/vnd.ollama.image.template";
pub const SYSTEM: &str = "application/vnd.ollama.image.system";
pub const PARAMS: &str = "application/vnd.ollama.image.params";
pub const LICENSE: &str = "application/vnd.ollama.image.license";
pub const PROJECTOR: &str = "application/vnd.ollama.image.projector";
pub const ADAPTER: &str = "application/vnd.ollama.image.adapter";
pub const DRAFT: &str = "application/vnd.ollama.image.draft";
pub const TENSOR: &str = "application/vnd.ollama.image.tensor";
pub const CONFIG: &str = "application/vnd.docker.container.image.v1+json";

/// A layer as written into a manifest.
#[derive(Clone, Debug)]
pub struct Layer {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    pub name: Option<String>,
}

impl Layer {
    pub fn json(&self) -> String {
        let name = self.name.as_ref().map(|n| format!(r#", "name": "{n}""#)).unwrap_or_default();
        format!(r#"{{"mediaType": "{}", "digest": "{}", "size": {}{name}}}"#, self.media_type, self.digest, self.size)
    }
}

/// A store rooted in a directory.
pub struct Store {
    pub root: PathBuf,
}

impl Store {
    pub fn new(root: &Path) -> Store {
        std::fs::create_dir_all(root.join("blobs")).unwrap();
        std::fs::create_dir_all(root.join("manifests")).unwrap();
        Store { root: root.to_path_buf() }
    }

    /// Writes a blob and returns its layer.
    pub fn blob(&self, media_type: &str, bytes: &[u8]) -> Layer {
        let h = hex(&sha(bytes));
        std::fs::write(self.root.join("blobs").join(format!("sha256-{h}")), bytes).unwrap();
        Layer { media_type: media_type.into(), digest: format!("sha256:{h}"), size: bytes.len() as u64, name: None }
    }

    pub fn named(&self, media_type: &str, bytes: &[u8], name: &str) -> Layer {
        Layer { name: Some(name.into()), ..self.blob(media_type, bytes) }
    }

    pub fn blob_path(&self, l: &Layer) -> PathBuf {
        self.root.join("blobs").join(format!("sha256-{}", l.digest.trim_start_matches("sha256:")))
    }

    /// The manifest text of a config and layers.
    pub fn manifest_text(config: &Layer, layers: &[Layer]) -> String {
        let list: Vec<String> = layers.iter().map(Layer::json).collect();
        format!(
            r#"{{"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json", "config": {}, "layers": [{}]}}"#,
            config.json(),
            list.join(", ")
        )
    }

    /// Writes a manifest for `name` (`model` or `ns/model:tag`, defaults filled).
    pub fn manifest(&self, name: &str, config: &Layer, layers: &[Layer]) -> PathBuf {
        self.raw_manifest(name, Store::manifest_text(config, layers).as_bytes())
    }

    pub fn raw_manifest(&self, name: &str, text: &[u8]) -> PathBuf {
        let (path, tag) = name.rsplit_once(':').unwrap_or((name, "latest"));
        let parts: Vec<&str> = path.split('/').collect();
        let (host, ns, model) = match parts.as_slice() {
            [m] => ("registry.ollama.ai", "library", *m),
            [n, m] => ("registry.ollama.ai", *n, *m),
            [h, n, m] => (*h, *n, *m),
            _ => panic!("bad test name"),
        };
        let dir = self.root.join("manifests").join(host).join(ns).join(model);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(tag);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A config blob as Ollama writes one for a GGUF model, plus `extra`
    /// members (JSON text without braces, or empty).
    pub fn config(&self, extra: &str) -> Layer {
        let sep = if extra.is_empty() { "" } else { ", " };
        let text = format!(
            r#"{{"model_format": "gguf", "model_family": "llama", "model_families": ["llama"], "model_type": "135M",
               "file_type": "Q4_1", "architecture": "amd64", "os": "linux",
               "rootfs": {{"type": "layers", "diff_ids": []}}{sep}{extra}}}"#
        );
        self.blob(CONFIG, text.as_bytes())
    }
}
