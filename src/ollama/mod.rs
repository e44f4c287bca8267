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

pub use json::write_model_json;
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
    let manifest = parsed.resolve(&root).map_err(|e| e.in_file(Path::new(reference)))?;
    Model::open(reference, &root, &manifest, opts)
}

/// The bytes of every layer a reference's manifest names, read from the
/// manifest alone (no blob is opened): a progress bar's length.
pub fn manifest_bytes(reference: &str) -> Result<u64> {
    manifest_bytes_in(&store_root()?, reference)
}

/// [`manifest_bytes`] in the store at `root`.
pub fn manifest_bytes_in(root: &Path, reference: &str) -> Result<u64> {
    let name = reference.strip_prefix(SCHEME).unwrap_or(reference);
    let path = ModelName::parse(name)?.resolve(root)?;
    // Not through a link, as the model's own open (model.rs) refuses one.
    let source = crate::source::Source::open_no_follow(&path, crate::source::ReadMode::Pread)?;
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
    let dir = root.join("manifests");
    let list = |p: &Path| -> Result<Vec<(String, PathBuf)>> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(p).map_err(|e| crate::Error::from(e).in_file(p))? {
            let e = e.map_err(|e| crate::Error::from(e).in_file(p))?;
            if let Some(n) = e.file_name().to_str().filter(|n| !n.starts_with('.')) {
                v.push((n.to_string(), e.path()));
            }
        }
        Ok(v)
    };
    for (host, hp) in list(&dir)? {
        for (ns, np) in list(&hp)? {
            for (model, mp) in list(&np)? {
                for (tag, tp) in list(&mp)? {
                    if tp.is_file() {
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

    fn write_skeleton(&self, data_sha256: &[crate::hash::Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        sink(&Model::skeleton(self, data_sha256)?);
        Ok(())
    }

    fn write_json(
        &self,
        w: &mut crate::output::JsonWriter<'_>,
        path: &Path,
        digest: &crate::hash::Digest,
    ) -> std::io::Result<()> {
        write_model_json(w, path, self, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        ("ollama", "ollama-skeleton-v1")
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
