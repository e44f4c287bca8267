//! Ollama models: a manifest in a store naming content-addressed blobs.
//! `name` resolves `ollama:NAME` references and digests to paths inside the
//! store (and nowhere else); `manifest` reads a manifest; `config` gives the
//! config's content digest; `model` turns layers into components, using the
//! GGUF and safetensors labels through their public faces. The core reaches
//! it only through [`Labelled`](crate::format::Labelled).

pub mod config;
pub mod diff;
pub mod inspect;
mod json;
pub mod manifest;
mod model;
pub mod name;

pub use json::model_json;
pub use model::{BlobFile, Component, ComponentKind, Model, ModelDigests, WholeBlob, skeleton_of};
pub use name::{ModelName, SCHEME, store_root};

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::format::OpenOptions;

/// Opens the model an `ollama:NAME` reference names, in the store.
pub fn open_reference(reference: &str, opts: OpenOptions) -> Result<Model> {
    let name = reference.strip_prefix(SCHEME).unwrap_or(reference);
    let parsed = ModelName::parse(name).map_err(|e| e.in_file(Path::new(reference)))?;
    let root = store_root()?;
    let Ok(store) = crate::source::Root::open(&root) else {
        // No store there: the model's own open says what is missing.
        return Model::open(reference, &root, &parsed.manifest_path(&root), opts);
    };
    let manifest = parsed.resolve(&store).map_err(|e| e.in_file(Path::new(reference)))?;
    Model::open_in(reference, &store, &manifest, opts)
}

/// The bytes of every layer a reference's manifest names, read from the
/// manifest alone (no blob is opened): a progress bar's length.
pub fn manifest_bytes(reference: &str) -> Result<u64> {
    manifest_bytes_in(&store_root()?, reference)
}

/// [`manifest_bytes`] in the store at `root`.
pub fn manifest_bytes_in(root: &Path, reference: &str) -> Result<u64> {
    let name = reference.strip_prefix(SCHEME).unwrap_or(reference);
    let store = crate::source::Root::open(root)?;
    let path = ModelName::parse(name)?.resolve(&store)?;
    let rel = path.strip_prefix(root).map_err(|_| crate::Error::internal("a manifest outside its store"))?;
    // Beneath the store and not through a link, as the model's own open
    // (model.rs) opens it.
    let (mode, last) = (crate::source::ReadMode::Pread, crate::source::Last::NoFollow);
    let source = crate::source::Source::open_beneath(&store, rel, &path, mode, last)?;
    if source.len() > manifest::MAX_MANIFEST {
        return Ok(0);
    }
    let m = manifest::parse_manifest(&source.head(source.len())?)?;
    Ok(m.layers.iter().chain([&m.config]).fold(0u64, |t, l| t.saturating_add(l.size)))
}

/// The store root of a manifest given by path (`<root>/manifests/<host>/
/// <namespace>/<model>/<tag>`), if it lies in a store.
pub fn root_of_manifest(path: &Path) -> Option<PathBuf> {
    let manifests = path.ancestors().nth(4)?;
    (manifests.file_name()? == "manifests").then(|| manifests.parent().map(Path::to_path_buf))?
}

/// Every model in the store at `root`, as `ollama:host/namespace/model:tag`
/// references, sorted.
pub fn every_model(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let dir = PathBuf::from("manifests");
    // Listed through descriptors opened beneath the store: a directory
    // linked out of it is refused, never listed.
    let store = crate::source::Root::open(root).map_err(|e| match e.raw_os_error() {
        Some(n) => crate::Error::from(std::io::Error::from_raw_os_error(n)).in_file(&root.join(&dir)),
        None => e,
    })?;
    let list = |p: &Path| -> Result<Vec<(String, PathBuf)>> {
        let mut v = Vec::new();
        for n in store.entries(p).map_err(|e| e.in_file(&root.join(p)))? {
            if let Some(n) = n.to_str().filter(|n| !n.starts_with('.')) {
                v.push((n.to_string(), p.join(n)));
            }
        }
        Ok(v)
    };
    for (host, hp) in list(&dir)? {
        for (ns, np) in list(&hp)? {
            for (model, mp) in list(&np)? {
                for (tag, tp) in list(&mp)? {
                    if store.file_type(&tp).is_ok_and(|t| t == rustix::fs::FileType::RegularFile) {
                        out.push(format!("{SCHEME}{host}/{ns}/{model}:{tag}"));
                    }
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

impl crate::format::Labelled for Model {
    fn job_count(&self) -> usize {
        Model::job_count(self)
    }

    fn job(&self, i: usize) -> Option<crate::hash::Job<'_>> {
        Model::job(self, i)
    }

    fn sources(&self) -> Vec<&crate::source::Source> {
        Model::sources(self)
    }

    fn skeleton(&self, data_sha256: &[crate::hash::Sha256Digest]) -> Result<Vec<u8>> {
        Model::skeleton(self, data_sha256)
    }

    fn json(&self, path: &Path, digest: &crate::hash::Digest) -> serde_json::Value {
        model_json(path, self, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("ollama", "ollama-skeleton-v1")
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
