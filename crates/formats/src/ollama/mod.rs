//! Ollama models: a manifest in a store naming content-addressed blobs.
//! `name` resolves `ollama:NAME` references and digests to paths inside the
//! store (and nowhere else); `manifest` reads a manifest; `config` gives the
//! config's content digest; `model` turns layers into components, using the
//! GGUF and safetensors labels through their public faces. The core reaches
//! it only through [`Labelled`](crate::format::Labelled).

pub mod config;
pub mod diff;
mod error;
pub mod inspect;
mod json;
pub mod manifest;
mod model;
pub mod name;
pub mod served;

pub use error::OllamaErrorKind;

pub use json::write_model_json;
pub use model::{BlobFile, Component, ComponentKind, Model, ModelDigests, WholeBlob, skeleton_of};
pub use name::{ModelName, SCHEME, store_root};

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::facts::Facts;
use crate::format::{self, AnyModel, DiffSection, FileFormat, OpenOptions, Section, Side, diff_same};
use crate::hash::Digest;
use crate::render::{DiffOptions, InspectOptions};
use crate::source::Source;

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

/// A store's models, and the entries of its `manifests/` that are none.
#[derive(Debug, Default)]
pub struct Listing {
    /// Every manifest, as `ollama:host/namespace/model:tag`, sorted.
    pub models: Vec<String>,
    /// Each entry that is no manifest (an error naming it, saying why),
    /// in path order: to be reported, as Ollama's listing skips them.
    pub strays: Vec<crate::Error>,
}

/// The levels below `manifests/`, each checked as Ollama checks a name's
/// part (`isValidPart`, types/model/name.go).
const LEVELS: [&str; 4] = ["host", "namespace", "model", "tag"];

/// Whether `part` is a valid `kind` part of an Ollama name, as Ollama's
/// `isValidPart` says: 1 to 80 bytes (a host up to 350); a letter, digit
/// or `_` first; then also `-` and `.` (not in a namespace) and `:` (only
/// in a host). So every listed reference reads back as the path it came
/// from (a `:` in a tag would not).
fn valid_part(kind: &str, part: &str) -> bool {
    let max = if kind == "host" { 350 } else { 80 };
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let rest_ok = |b: u8| word(b) || b == b'-' || (b == b'.' && kind != "namespace") || (b == b':' && kind == "host");
    let bytes = part.as_bytes();
    (1..=max).contains(&bytes.len())
        && bytes.first().is_some_and(|&b| word(b))
        && bytes.iter().skip(1).all(|&b| rest_ok(b))
}

/// Every model in the store at `root`: each file four levels below
/// `manifests/` (`<host>/<namespace>/<model>/<tag>`) whose parts are a
/// valid Ollama name, as Ollama's own listing (`manifest.Manifests`: a glob
/// of `manifests/*/*/*/*`) finds them. Every other entry is a stray,
/// reported rather than ending the listing: a file or an unreadable
/// directory above the tag level, a directory or other non-file at it, a
/// name Ollama would not list. Hidden entries (`.`-prefixed: editors' and
/// tools' files) are passed over in silence. Links are followed, as the
/// listing always did, inside the store only (a link out of it is a
/// stray). Only `manifests/` itself unreadable is an error.
pub fn every_model(root: &Path) -> Result<Listing> {
    let manifests = PathBuf::from("manifests");
    let mut listing = Listing::default();
    // Listed through descriptors opened beneath the store: a directory
    // linked out of it is refused (a stray), never listed.
    let store = crate::source::Root::open(root).map_err(|e| match e.raw_os_error() {
        Some(n) => crate::Error::from(std::io::Error::from_raw_os_error(n)).in_file(&root.join(&manifests)),
        None => e,
    })?;
    let mut dirs: Vec<(PathBuf, Vec<String>)> = vec![(manifests, Vec::new())];
    while let Some((dir, parts)) = dirs.pop() {
        let names = match store.entries(&dir) {
            Ok(names) => names,
            Err(e) if parts.is_empty() => return Err(e.in_file(&root.join(&dir))),
            Err(e) => {
                listing.strays.push(stray(&root.join(&dir), format!("cannot be read ({})", e.detail())));
                continue;
            }
        };
        for name in names {
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let rel = dir.join(&name);
            let path = root.join(&rel);
            let level = LEVELS.get(parts.len()).copied().unwrap_or("tag");
            let strayed = |why: String| stray(&path, why);
            let Some(part) = name.to_str().filter(|n| valid_part(level, n)) else {
                listing.strays.push(strayed(format!("'{}' is no valid {level} of an Ollama name", escape(&name))));
                continue;
            };
            // Links inside the store followed, as Ollama's os.Stat follows them.
            let kind = match store.file_type(&rel) {
                Ok(kind) => kind,
                Err(e) => {
                    listing.strays.push(strayed(format!("cannot be read ({})", e.detail())));
                    continue;
                }
            };
            let is_dir = kind == rustix::fs::FileType::Directory;
            match (level, is_dir) {
                ("tag", false) if kind == rustix::fs::FileType::RegularFile => {
                    let [host, namespace, model] = parts.as_slice() else { continue };
                    listing.models.push(format!("{SCHEME}{host}/{namespace}/{model}:{part}"));
                }
                ("tag", true) => listing.strays.push(strayed("a directory where a manifest (a tag) belongs".into())),
                ("tag", false) => listing.strays.push(strayed("not a regular file".into())),
                (_, true) => {
                    let mut deeper = parts.clone();
                    deeper.push(part.to_string());
                    dirs.push((rel, deeper));
                }
                (_, false) => listing.strays.push(strayed(format!(
                    "a file where a {level} directory belongs (manifests/<host>/<namespace>/<model>/<tag>)"
                ))),
            }
        }
    }
    listing.models.sort();
    listing.strays.sort_by(|a, b| a.path().cmp(&b.path()));
    Ok(listing)
}

/// An entry of `manifests/` that is no manifest.
fn stray(path: &Path, why: String) -> crate::Error {
    let what = format!("not a manifest: {why}");
    crate::Error::new(crate::ErrorKind::DamagedStore(what)).in_file(path)
}

fn escape(name: &std::ffi::OsStr) -> String {
    crate::text::escape_bytes(name.as_encoded_bytes())
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
}

/// An Ollama manifest given by path, as the registry lists it (its
/// [`FileFormat`]): claimed by where it lies in a store. An `ollama:NAME`
/// reference is an input, not a file: the input layer opens it
/// ([`open_reference`]).
#[derive(Debug, Clone, Copy)]
pub struct Ollama;

impl FileFormat for Ollama {
    fn what(&self) -> &'static str {
        "an Ollama model"
    }

    fn extensions(&self) -> &'static [&'static str] {
        // A manifest has no extension of its own: where it lies tells.
        &[]
    }

    fn claims_bytes(&self, _: &[u8]) -> bool {
        false
    }

    fn claims_path(&self, path: &Path) -> bool {
        root_of_manifest(path).is_some()
    }

    fn open(&self, source: Source, opts: OpenOptions) -> Result<AnyModel> {
        // A manifest given by path: its blobs are opened beneath the store,
        // four levels above its own directory.
        let path = source.path().to_path_buf();
        let root = root_of_manifest(&path).ok_or_else(|| crate::Error::internal("a manifest outside a store"))?;
        let store = source.root_above(4, &root)?;
        drop(source);
        Model::open_in(&path.to_string_lossy(), &store, &path, opts).map(AnyModel::new)
    }

    fn approximate_bytes(&self, _: &Path) -> Option<u64> {
        // A manifest's own size; an `ollama:` reference's is the input
        // layer's ([`manifest_bytes`]).
        None
    }

    fn component_kind(&self) -> Option<crate::format::DirectoryKind> {
        // A manifest in a directory is a file of it.
        None
    }

    fn directory_rule(&self) -> Option<&'static dyn crate::format::directory_rule::DirectoryRule> {
        None
    }
}

impl format::Opened for Model {
    fn what(&self) -> &'static str {
        Ollama.what()
    }

    fn inspect(&self, digest: &Digest, opts: &InspectOptions) -> Result<Box<dyn Section>> {
        Ok(Box::new(inspect::inspect(self, digest, opts)?))
    }

    /// Two Ollama models, or an Ollama model and the GGUF or safetensors
    /// model its served weights are compared with (either side), alone or
    /// as a directory's one weights component.
    fn diff(
        &self,
        mine: &Digest,
        other: &AnyModel,
        theirs: &Digest,
        side: Side,
        opts: &DiffOptions,
    ) -> Option<Result<Box<dyn DiffSection>>> {
        if other.downcast_ref::<Model>().is_some() {
            return diff_same(self, mine, other, theirs, side, |a, da, b, db| diff::diff(a, da, b, db, opts));
        }
        let first = side == Side::First;
        let d = if let Some(g) = other.downcast_ref::<crate::gguf::Model>() {
            diff::diff_with_file(self, mine, diff::FileModel::Gguf(g, theirs), first, opts)
        } else if let Some(st) = other.downcast_ref::<crate::safetensors::Model>() {
            diff::diff_with_file(self, mine, diff::FileModel::Safetensors(st, theirs), first, opts)
        } else {
            // A directory: its one weights component.
            diff::diff_with_directory(self, mine, other.downcast_ref::<crate::directory::Model>()?, theirs, first, opts)
        };
        Some(d.map(|d| Box::new(d) as Box<dyn DiffSection>))
    }

    /// The first weights file is the model (later ones: projectors,
    /// adapters), then the tensor blobs, then the config's family and file
    /// type where the weights did not say.
    fn facts(&self, facts: &mut Facts) -> Result<()> {
        if let Some(g) = self.gguf(0) {
            format::Opened::facts(g, facts)?;
        }
        if let Some(st) = self.tensors() {
            format::Opened::facts(st, facts)?;
        }
        let config = self.config_content();
        if facts.architecture.is_none() {
            facts.architecture = config.get("model_family").and_then(|v| v.as_str()).map(str::to_owned);
        }
        if facts.file_type.is_none() {
            facts.file_type = config.get("file_type").and_then(|v| v.as_str()).map(str::to_owned);
        }
        Ok(())
    }

    fn shard_alone_names_model(&self) -> bool {
        false
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

// The sections answer through their own inherent methods.
crate::format::sections!(inspect::Inspection, diff::Diff);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_not_in_the_store_is_said_so_not_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let manifests = dir.path().join("manifests");
        std::fs::create_dir(&manifests).unwrap();
        // A store without the manifest, and no store at all.
        for root in [dir.path().to_path_buf(), dir.path().join("nowhere")] {
            let manifest = root.join("manifests/registry.ollama.ai/library/nope/latest");
            let e = Model::open("ollama:nope", &root, &manifest, OpenOptions::default()).unwrap_err();
            assert!(
                matches!(e.kind().of::<OllamaErrorKind>(), Some(OllamaErrorKind::NoSuchModel { manifest: m }) if *m == manifest),
                "{e}"
            );
            assert!(e.to_string().contains("no such model in the store (no manifest "), "{e}");
            assert!(!e.is_not_found(), "{e}");
        }
    }

    #[test]
    fn name_parts_are_valid_as_ollama_says() {
        for (kind, part) in [("host", "localhost:11434"), ("host", "a.b"), ("namespace", "_x-1"), ("tag", "q4_K.M")] {
            assert!(valid_part(kind, part), "{kind} {part}");
        }
        let long = "a".repeat(81);
        for (kind, part) in [
            ("tag", ""),
            ("tag", "-x"),
            ("tag", ".x"),
            ("tag", "a:b"),
            ("tag", "latest~"),
            ("tag", "a b"),
            ("namespace", "a.b"),
            ("model", long.as_str()),
            ("model", "é"),
        ] {
            assert!(!valid_part(kind, part), "{kind} {part}");
        }
        assert!(valid_part("host", &"h".repeat(350)) && !valid_part("host", &"h".repeat(351)));
    }

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
