//! An Ollama model: its manifest's layers turned into components (GGUF
//! weights by their GGUF label, all tensor blobs by one safetensors label,
//! the config by its content, every other layer by its bytes), and the
//! hashing jobs that compute them (docs/SPEC.md, Part III).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest as _, Sha256};

use crate::error::{Error, ErrorKind, Result, SYMBOLIC_LINK, Subject};
use crate::format::OpenOptions;
use crate::gguf;
use crate::hash::{Conversion, Digest, Job, Sha256Digest};
use crate::json::parse_strict;
use crate::ollama::config::{content, content_digest};
use crate::ollama::manifest::{
    GGUF_MEDIA_TYPES, Layer, MAX_DEPTH, MAX_MANIFEST, Manifest, TENSOR_MEDIA_TYPE, parse_manifest,
};
use crate::ollama::name::blob_rel;
use crate::safetensors;
use crate::source::{Last, ReadMode, Root, Source};

/// How a component's content digest is computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentKind {
    /// GGUF weights: the GGUF label of [`Model::gguf`]`(i)`.
    Gguf(usize),
    /// All tensor blobs: the safetensors label of [`Model::tensors`].
    Tensors,
    /// The config: its content, canonically encoded.
    Config,
    /// Any other layer: the SHA-256 of its blob.
    Blob,
}

/// One component of the label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// Its media type.
    pub media_type: String,
    /// The layer's name, or empty.
    pub name: String,
    /// How its digest is computed.
    pub kind: ComponentKind,
    /// The manifest layers it came from (indices into `layers`; the config
    /// has none).
    pub layers: Vec<usize>,
}

/// A job of the model: where in which sub-model.
#[derive(Debug, Clone, Copy)]
enum JobRef {
    /// Tensor `t` of GGUF sub-model `g`.
    Gguf(usize, usize),
    /// Tensor `t` of the safetensors sub-model.
    Tensor(usize),
    /// The whole blob `b` of [`Model::blobs`].
    Blob(usize),
}

/// A blob hashed whole: a non-weights layer, or (with `--verify-blobs`) a
/// weights blob audited against its digest.
#[derive(Debug)]
pub struct WholeBlob {
    /// Where its bytes are read from.
    pub file: BlobFile,
    /// Its layer (index into the manifest's layers).
    pub layer: usize,
}

/// Where a blob hashed whole is read from. A weights blob is audited
/// through the very file its weights are labelled from, never a second
/// open (which could find another file there, and would hold a second
/// descriptor and map per blob).
#[derive(Debug)]
pub enum BlobFile {
    /// A layer that is only hashed (template, license, …), opened for it.
    Own(Box<Source>),
    /// The file of GGUF weights sub-model `i`.
    Gguf(usize),
    /// File `i` of the tensor blobs' safetensors model.
    Tensor(usize),
}

/// What a labelled model's jobs give, beyond its label.
#[derive(Debug)]
pub struct ModelDigests {
    /// Each GGUF weights sub-model's digest, by [`ComponentKind::Gguf`] index.
    pub ggufs: Vec<Digest>,
    /// The tensor blobs' safetensors digest.
    pub tensors: Option<Digest>,
    /// Each component's content digest, in [`Model::components`] order.
    pub components: Vec<Sha256Digest>,
}

/// An opened Ollama model.
#[derive(Debug)]
pub struct Model {
    reference: String,
    root: PathBuf,
    manifest_path: PathBuf,
    manifest: Manifest,
    components: Vec<Component>,
    ggufs: Vec<gguf::Model>,
    tensors: Option<safetensors::Model>,
    config: Sha256Digest,
    config_content: crate::json::Json,
    blobs: Vec<WholeBlob>,
    jobs: Vec<JobRef>,
    opts: OpenOptions,
}

fn damaged(what: String) -> Error {
    Error::new(ErrorKind::DamagedStore(what))
}

/// Opens the blob of `layer` beneath the store: a regular file of exactly
/// the layer's size, never itself a symbolic link (`O_NOFOLLOW`), and never
/// reached through one that leads out of the store (`blobs` linked
/// elsewhere): the open refuses both, so nothing put in place between a
/// check and the open can lead out.
fn open_blob(store: &Arc<Root>, layer: &Layer, mode: ReadMode) -> Result<Source> {
    let rel = blob_rel(&layer.digest)?;
    let path = store.path().join(&rel);
    let source = Source::open_beneath(store, &rel, &path, mode, Last::NoFollow).map_err(|e| {
        let refused = match e.kind() {
            _ if e.is_not_found() => format!("the blob of layer {} is missing: {}", layer.digest, path.display()),
            ErrorKind::NotRegularFile(SYMBOLIC_LINK) => {
                format!("the blob {} is a symbolic link; blobs must be regular files", path.display())
            }
            ErrorKind::NotRegularFile(_) => format!("the blob {} is not a regular file", path.display()),
            _ if e.raw_os_error() == Some(libc::EISDIR) => format!("the blob {} is not a regular file", path.display()),
            _ => return e,
        };
        damaged(refused)
    })?;
    if source.len() != layer.size {
        return Err(damaged(format!(
            "the blob {} has {} bytes, but its layer says {}",
            path.display(),
            source.len(),
            layer.size
        )));
    }
    Ok(source)
}

/// The error for a manifest that is not in the store.
fn no_such_model(manifest_path: &Path) -> Error {
    Error::new(crate::ollama::OllamaErrorKind::NoSuchModel { manifest: manifest_path.to_path_buf() })
}

/// Reads a small open file whole, refusing more than `limit` bytes before
/// reading.
fn read_small(source: &Source, limit: u64) -> Result<Vec<u8>> {
    if source.len() > limit {
        return Err(Error::new(ErrorKind::HeaderTooLarge { declared: source.len(), limit }).in_file(source.path()));
    }
    source.head(source.len())
}

impl Model {
    /// Opens the model whose manifest is at `manifest_path` in the store at
    /// `root`; `reference` names it in messages. The manifest and every blob
    /// are opened beneath the store (docs/adr/0020).
    pub fn open(reference: &str, root: &Path, manifest_path: &Path, opts: OpenOptions) -> Result<Model> {
        let store = Root::open(root).map_err(|e| {
            let e = if e.is_not_found() { no_such_model(manifest_path) } else { e };
            e.in_file(Path::new(reference))
        })?;
        Model::open_in(reference, &store, manifest_path, opts)
    }

    /// [`Model::open`] in a store already open (`manifest_path` lies in it).
    pub(crate) fn open_in(
        reference: &str,
        store: &Arc<Root>,
        manifest_path: &Path,
        opts: OpenOptions,
    ) -> Result<Model> {
        let located = |e: Error| if e.path().is_some() { e } else { e.in_file(Path::new(reference)) };
        Model::open_inner(reference, store, manifest_path, opts).map_err(located)
    }

    fn open_inner(reference: &str, store: &Arc<Root>, manifest_path: &Path, opts: OpenOptions) -> Result<Model> {
        let rel =
            manifest_path.strip_prefix(store.path()).map_err(|_| Error::internal("a manifest outside its store"))?;
        let manifest_file = Source::open_beneath(store, rel, manifest_path, opts.read_mode, Last::NoFollow);
        let manifest_file = manifest_file.map_err(|e| {
            if e.is_not_found() {
                no_such_model(manifest_path)
            } else if matches!(e.kind(), ErrorKind::NotRegularFile(SYMBOLIC_LINK)) {
                damaged(format!("the manifest {} is a symbolic link", manifest_path.display()))
            } else {
                e
            }
        })?;
        let text = read_small(&manifest_file, MAX_MANIFEST)?;
        let mode = opts.read_mode;
        Model::build(reference, store.path(), manifest_path, &text, &mut |layer| open_blob(store, layer, mode), opts)
    }

    /// The model of a manifest's text whose blobs `open_blob` opens (an
    /// OCI registry's, for an `oci://` input: docs/adr/0046): the label an
    /// Ollama store holding the same manifest and blobs gives. `place`
    /// names the manifest (and the model's root) in messages and output.
    /// A source whose length is not its layer's size is refused; checking
    /// a blob's bytes against its digest is the opener's.
    pub fn from_blobs(
        reference: &str,
        place: &Path,
        manifest_text: &[u8],
        open_blob: &mut dyn FnMut(&Layer) -> Result<Source>,
        opts: OpenOptions,
    ) -> Result<Model> {
        let mut sized = |layer: &Layer| -> Result<Source> {
            let source = open_blob(layer)?;
            if source.len() != layer.size {
                return Err(damaged(format!(
                    "the blob {} has {} bytes, but its layer says {}",
                    layer.digest,
                    source.len(),
                    layer.size
                )));
            }
            Ok(source)
        };
        Model::build(reference, place, place, manifest_text, &mut sized, opts)
            .map_err(|e| if e.path().is_some() { e } else { e.in_file(Path::new(reference)) })
    }

    /// The model of a manifest's text, each blob opened by `open_blob`.
    fn build(
        reference: &str,
        root: &Path,
        manifest_path: &Path,
        text: &[u8],
        open_blob: &mut dyn FnMut(&Layer) -> Result<Source>,
        opts: OpenOptions,
    ) -> Result<Model> {
        let manifest = parse_manifest(text).map_err(|e| e.in_file(manifest_path))?;

        // The config: read whole, checked against its digest, pruned.
        let config_file = open_blob(&manifest.config)?;
        let config_path = config_file.path().to_path_buf();
        let config_bytes = read_small(&config_file, MAX_MANIFEST)?;
        let sha: Sha256Digest = Sha256::digest(&config_bytes).into();
        if hex::encode(sha) != manifest.config.hex {
            return Err(damaged(format!("the config blob's SHA-256 is {}, not its digest", hex::encode(sha))));
        }
        let config_json = parse_strict(&config_bytes, MAX_DEPTH).map_err(|e| Error::from(e).in_file(&config_path))?;
        let config_content = content(&config_json).map_err(|e| e.in_file(&config_path))?;
        let config = content_digest(&config_content);

        let mut components = vec![Component {
            media_type: manifest.config.media_type.clone(),
            name: String::new(),
            kind: ComponentKind::Config,
            layers: Vec::new(),
        }];
        let mut ggufs = Vec::new();
        let mut tensor_files = Vec::new();
        let mut tensor_layers = Vec::new();
        let mut blobs = Vec::new();
        let single = OpenOptions { join_shards: false, ..opts };
        for (i, layer) in manifest.layers.iter().enumerate() {
            let source = open_blob(layer)?;
            let about = |e: Error| e.about(Subject::Key(format!("layer #{i} ({})", layer.media_type).into_bytes()));
            if layer.media_type == TENSOR_MEDIA_TYPE {
                if opts.verify_blobs {
                    blobs.push(WholeBlob { file: BlobFile::Tensor(tensor_files.len()), layer: i });
                }
                tensor_files.push(source);
                tensor_layers.push(i);
                continue;
            }
            let path = source.path().to_path_buf();
            let is_gguf = GGUF_MEDIA_TYPES.contains(&layer.media_type.as_str()) && source.head(4)? == b"GGUF";
            let kind = if is_gguf {
                let m = gguf::Model::from_source(source, single).map_err(about)?;
                let split = m.shards().first().and_then(|s| s.file.split_value(b"split.count")).unwrap_or(0);
                if split > 1 {
                    return Err(about(damaged(format!(
                        "the blob {} is one shard of a split GGUF model (split.count {split}); a blob must hold a whole model",
                        path.display()
                    ))));
                }
                if opts.verify_blobs {
                    blobs.push(WholeBlob { file: BlobFile::Gguf(ggufs.len()), layer: i });
                }
                ggufs.push(m);
                ComponentKind::Gguf(ggufs.len().saturating_sub(1))
            } else {
                blobs.push(WholeBlob { file: BlobFile::Own(Box::new(source)), layer: i });
                ComponentKind::Blob
            };
            components.push(Component {
                media_type: layer.media_type.clone(),
                name: layer.name.clone(),
                kind,
                layers: vec![i],
            });
        }
        let tensors = if tensor_files.is_empty() {
            None
        } else {
            components.push(Component {
                media_type: TENSOR_MEDIA_TYPE.to_string(),
                name: String::new(),
                kind: ComponentKind::Tensors,
                layers: tensor_layers,
            });
            Some(safetensors::Model::from_sources(tensor_files, single)?)
        };
        let mut jobs = Vec::new();
        for (g, m) in ggufs.iter().enumerate() {
            jobs.extend((0..m.tensors().len()).map(|t| JobRef::Gguf(g, t)));
        }
        if let Some(st) = &tensors {
            jobs.extend((0..st.tensors().len()).map(JobRef::Tensor));
        }
        jobs.extend((0..blobs.len()).map(JobRef::Blob));
        Ok(Model {
            reference: reference.to_string(),
            root: root.to_path_buf(),
            manifest_path: manifest_path.to_path_buf(),
            manifest,
            components,
            ggufs,
            tensors,
            config,
            config_content,
            blobs,
            jobs,
            opts,
        })
    }

    /// The reference the model was opened by.
    pub fn reference(&self) -> &str {
        &self.reference
    }

    /// The store root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The manifest's path.
    pub fn manifest_path(&self) -> &Path {
        &self.manifest_path
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The components, in manifest order (the config first).
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// GGUF weights sub-model `i`.
    pub fn gguf(&self, i: usize) -> Option<&gguf::Model> {
        self.ggufs.get(i)
    }

    /// The safetensors model of all tensor blobs, if any.
    pub fn tensors(&self) -> Option<&safetensors::Model> {
        self.tensors.as_ref()
    }

    /// The blobs hashed whole.
    pub fn blobs(&self) -> &[WholeBlob] {
        &self.blobs
    }

    /// The open file a blob hashed whole is read from.
    pub fn blob_source<'a>(&'a self, blob: &'a WholeBlob) -> Option<&'a Source> {
        match blob.file {
            BlobFile::Own(ref source) => Some(source),
            BlobFile::Gguf(g) => self.ggufs.get(g)?.shards().first().map(|sh| &sh.source),
            BlobFile::Tensor(f) => self.tensors.as_ref()?.files().get(f).map(|f| &f.source),
        }
    }

    /// The config's content: derived members dropped, zero values pruned.
    pub fn config_content(&self) -> &crate::json::Json {
        &self.config_content
    }

    /// The digests of the weights sub-models, from the jobs' digests (in job
    /// order): each GGUF model's, then the tensor blobs' safetensors model's.
    fn sub_digests(&self, data: &[Sha256Digest]) -> (Vec<Digest>, Option<Digest>) {
        let mut next = 0usize;
        let mut take = |n: usize| -> Vec<Sha256Digest> {
            let start = next;
            next = next.saturating_add(n);
            data.get(start..next).unwrap_or(&[]).to_vec()
        };
        let ggufs = self
            .ggufs
            .iter()
            .map(|m| {
                let d = take(m.tensors().len());
                let mut hasher = Sha256::new();
                gguf::write_skeleton(m, &d, &mut |piece| hasher.update(piece));
                Digest::from_label(hasher.finalize().into(), d)
            })
            .collect();
        let tensors = self.tensors.as_ref().map(|st| {
            let d = take(st.tensors().len());
            let mut hasher = Sha256::new();
            safetensors::write_skeleton(st, &d, &mut |piece| hasher.update(piece));
            Digest::from_label(hasher.finalize().into(), d)
        });
        (ggufs, tensors)
    }

    /// Hashes every job on the current rayon pool and finishes the model.
    pub fn digest(&self) -> Result<Digest> {
        crate::schedule::digest(self, &self.opts.pieces)
    }

    /// Each component's content digest, given the jobs' digests (in job
    /// order); checks every blob hashed whole against its layer's digest.
    pub fn component_digests(&self, data: &[Sha256Digest]) -> Result<Vec<Sha256Digest>> {
        Ok(self.digests(data)?.components)
    }

    /// Everything the jobs' digests (in job order) give: each weights
    /// sub-model's digest and each component's, computed once.
    pub fn digests(&self, data: &[Sha256Digest]) -> Result<ModelDigests> {
        let (ggufs, tensors) = self.sub_digests(data);
        let gguf_labels: Vec<Sha256Digest> = ggufs.iter().map(|d| *d.label_bytes()).collect();
        let tensors_label = tensors.as_ref().map(|d| *d.label_bytes());
        // Whole blobs are the last jobs.
        let blob_data = data.get(self.jobs.len().saturating_sub(self.blobs.len())..).unwrap_or(&[]);
        let mut blob_digest = std::collections::HashMap::new();
        for (b, d) in self.blobs.iter().zip(blob_data) {
            let layer = self.manifest.layers.get(b.layer);
            let want = layer.map(|l| l.hex.as_str()).unwrap_or("");
            if hex::encode(d) != want {
                let path = self.blob_source(b).map(|s| s.path().display().to_string()).unwrap_or_default();
                let what = format!("the blob {path} has SHA-256 {}, not its layer's digest", hex::encode(d));
                return Err(damaged(what));
            }
            blob_digest.insert(b.layer, *d);
        }
        let components = self
            .components
            .iter()
            .map(|c| match c.kind {
                ComponentKind::Config => Ok(self.config),
                ComponentKind::Gguf(i) => gguf_labels.get(i).copied().ok_or_else(|| damaged("no GGUF label".into())),
                ComponentKind::Tensors => tensors_label.ok_or_else(|| damaged("no tensor label".into())),
                ComponentKind::Blob => c
                    .layers
                    .first()
                    .and_then(|l| blob_digest.get(l))
                    .copied()
                    .ok_or_else(|| damaged("a blob was not hashed".into())),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ModelDigests { ggufs, tensors, components })
    }
}

impl Model {
    /// The hashing job `i` (GGUF tensors, then tensor blobs, then whole blobs).
    pub fn job(&self, i: usize) -> Option<Job<'_>> {
        match *self.jobs.get(i)? {
            JobRef::Gguf(g, t) => {
                let m = self.ggufs.get(g)?;
                m.job(m.tensors().get(t)?)
            }
            JobRef::Tensor(t) => {
                let st = self.tensors.as_ref()?;
                st.job(st.tensors().get(t)?)
            }
            JobRef::Blob(b) => {
                let source = self.blob_source(self.blobs.get(b)?)?;
                Some(Job {
                    source,
                    start: 0,
                    len: source.len(),
                    conversion: Conversion::none(1, "blob"),
                    subject: Subject::Key(format!("blob {}", source.path().display()).into_bytes()),
                    gather: None,
                })
            }
        }
    }

    /// The number of hashing jobs.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Every file read, once: GGUF weights, tensor blobs, the other blobs
    /// (an audited weights blob is its weights' file).
    pub fn sources(&self) -> Vec<&Source> {
        let mut s: Vec<&Source> = self.ggufs.iter().flat_map(|m| m.shards().iter().map(|sh| &sh.source)).collect();
        if let Some(st) = &self.tensors {
            s.extend(st.files().iter().map(|f| &f.source));
        }
        s.extend(self.blobs.iter().filter_map(|b| match &b.file {
            BlobFile::Own(source) => Some(source.as_ref()),
            BlobFile::Gguf(_) | BlobFile::Tensor(_) => None,
        }));
        s
    }

    /// The skeleton from the jobs' digests.
    pub fn skeleton(&self, data_sha256: &[Sha256Digest]) -> Result<Vec<u8>> {
        let digests = self.component_digests(data_sha256)?;
        Ok(skeleton_of(&self.components, &digests))
    }
}

/// The skeleton of components with their digests (docs/SPEC.md, Part III).
pub fn skeleton_of(components: &[Component], digests: &[Sha256Digest]) -> Vec<u8> {
    let mut records: Vec<(&[u8], &[u8], &Sha256Digest)> =
        components.iter().zip(digests).map(|(c, d)| (c.media_type.as_bytes(), c.name.as_bytes(), d)).collect();
    records.sort();
    let mut s = Vec::with_capacity(records.len().saturating_mul(96).saturating_add(16));
    s.extend_from_slice(b"OLMA");
    s.extend_from_slice(&1u32.to_le_bytes());
    s.extend_from_slice(&(records.len() as u64).to_le_bytes());
    for (media, name, d) in records {
        s.extend_from_slice(&Sha256::digest(media));
        s.extend_from_slice(&Sha256::digest(name));
        s.extend_from_slice(d);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(root: &Path, bytes: &[u8]) -> String {
        let hex = hex::encode(Sha256::digest(bytes));
        std::fs::write(root.join("blobs").join(format!("sha256-{hex}")), bytes).unwrap();
        format!(r#"{{"mediaType": "MT", "digest": "sha256:{hex}", "size": {}}}"#, bytes.len())
    }

    #[test]
    fn a_model_from_blobs_is_the_stores_model() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("blobs")).unwrap();
        std::fs::create_dir_all(root.join("manifests/h/n/m")).unwrap();
        let config = blob(root, br#"{"model_format":"gguf","rootfs":{"type":"layers","diff_ids":[]}}"#)
            .replace("MT", "application/vnd.docker.container.image.v1+json");
        let template = blob(root, b"{{ .Prompt }}").replace("MT", "application/vnd.ollama.image.template");
        let text = format!(r#"{{"schemaVersion": 2, "config": {config}, "layers": [{template}]}}"#);
        let manifest = root.join("manifests/h/n/m/t");
        std::fs::write(&manifest, &text).unwrap();
        let opts = OpenOptions::default();
        let stored = Model::open("m", root, &manifest, opts).unwrap().digest().unwrap();
        let by_path = |l: &Layer| Source::open(&root.join("blobs").join(format!("sha256-{}", l.hex)), ReadMode::Pread);
        let held =
            Model::from_blobs("oci://h/n/m:t", Path::new("oci://h/n/m:t"), text.as_bytes(), &mut { by_path }, opts)
                .unwrap()
                .digest()
                .unwrap();
        assert_eq!(held.label(), stored.label());
        // A blob of another length than its layer's is refused.
        let short = text.replace(r#""size": 13"#, r#""size": 12"#);
        let e = Model::from_blobs("r", Path::new("r"), short.as_bytes(), &mut { by_path }, opts).unwrap_err();
        assert!(e.to_string().contains("has 13 bytes, but its layer says 12"), "{e}");
        assert_eq!(e.path(), Some(Path::new("r")));
    }
}
