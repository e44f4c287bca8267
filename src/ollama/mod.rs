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

/// The store root of a manifest given by path, if the path lies where a
/// store keeps its manifests: as written, it ends in a component
/// `manifests` followed by four names (host, namespace, model, tag; none
/// `..`, and `.` components are no level, as `Path::components` drops
/// them), and the directory holding that `manifests` (the root; the
/// current directory when the path starts at `manifests`) holds a
/// directory `blobs`. Where it lies decides, not its bytes: Ollama reads
/// any file there as a manifest, and a pretty-printed one opens with
/// whitespace. The path is not resolved (no link is followed to decide).
pub fn root_of_manifest(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let parts: Vec<Component<'_>> = path.components().collect();
    let at = parts.len().checked_sub(5)?;
    let (head, tail) = parts.split_at(at);
    let [Component::Normal(manifests), rest @ ..] = tail else { return None };
    if *manifests != "manifests" || !rest.iter().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let root: PathBuf = head.iter().collect();
    root.join("blobs").is_dir().then_some(root)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_lies_four_names_below_manifests_beside_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        std::fs::create_dir_all(root.join("blobs")).unwrap();
        let at = |p: &str| root_of_manifest(&root.join(p));
        assert_eq!(at("manifests/h/n/m/t"), Some(root.clone()));
        assert_eq!(at("manifests/h/./n/m/t"), Some(root.clone()), "`.` is no level");
        for not in ["manifests/h/n/t", "manifests/h/n/m/t/u", "x/h/n/m/t", "manifests/h/n/../t", "manifests/h/n/m/.."] {
            assert_eq!(at(not), None, "{not}");
        }
        std::fs::remove_dir(root.join("blobs")).unwrap();
        std::fs::write(root.join("blobs"), b"").unwrap();
        assert_eq!(at("manifests/h/n/m/t"), None, "blobs must be a directory");
    }
}
