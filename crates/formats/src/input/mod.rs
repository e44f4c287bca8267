//! What an argument names, which format reads it, and labelling arguments.
//!
//! An argument is a file, a directory, standard input (`-`) or a store
//! reference (`ollama:NAME`, `hf:ORG/NAME[@REV]`): the variants of [`Input`]. A file is
//! opened once and sniffed by its first bytes (an index file by its name,
//! an Ollama manifest by where it lies in a store);
//! the format that claims it parses the same open file (`formats`, the
//! one list of them). A directory is labelled whole ([`directory::Model`]).
//!
//! What an argument leads to is opened beneath a root (docs/adr/0020): a
//! directory's entries beneath the directory (a Hugging Face snapshot's
//! beneath its repository folder), a file's shards and index files beneath
//! its directory ([`Source::beside`]), a statement's subjects beneath
//! `verify`'s root ([`open_model_beneath`]).

pub mod remote;
mod shard_sets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::directory;
use crate::error::{Error, Result};
use crate::format::{AnyModel, FileFormat, OpenOptions};
use crate::formats;
use crate::hash::Digest;
use crate::hf;
use crate::ollama;
use crate::schedule::{BatchOptions, schedule, schedule_all};
use crate::source::{Last, Root, Source};

pub use remote::RemoteUrl;
pub use shard_sets::{Named, NamedModels};

/// What a command-line argument names: parsed once ([`Input::from_arg`]),
/// then carried by the schedule to the opener (`open_input`) and shown
/// in errors as given ([`Input::as_path`]). Directories, standard input and
/// store references are inputs, not file formats: only a `File` is handed
/// to the registry of formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A file on disk.
    File(PathBuf),
    /// A directory on disk: labelled as a whole (docs/adr/0023).
    Directory(PathBuf),
    /// `ollama:NAME`: a model in the Ollama store.
    Ollama(String),
    /// `hf:ORG/NAME[@REV]`: a snapshot in the Hugging Face cache, labelled
    /// as its directory is.
    Hf(String),
    /// `-`: standard input, read once, front to back (GGUF or safetensors).
    Stdin,
    /// `s3://`, `gs://`, `az://`, `https://`, `http://`: an object, or a
    /// prefix ending in `/` (a directory), read by ranges through the
    /// registered opener (docs/adr/0044).
    Url(RemoteUrl),
}

impl Input {
    /// The input an argument names.
    pub fn from_arg(arg: &Path) -> Input {
        Input::by_spelling(arg).unwrap_or_else(|| {
            if arg.is_dir() { Input::Directory(arg.to_path_buf()) } else { Input::File(arg.to_path_buf()) }
        })
    }

    /// The input `arg` names by its spelling alone, the file system not
    /// looked at: `-` (standard input), `ollama:…`, `hf:…`, a URL; `None`
    /// for a path. The one place these spellings are told apart.
    pub fn by_spelling(arg: &Path) -> Option<Input> {
        // As sha256sum: `-` is standard input (`./-` is the file).
        if arg.as_os_str() == "-" {
            return Some(Input::Stdin);
        }
        // The prefix wins over a file of that name (`./ollama:x` is the file).
        let s = arg.to_str()?;
        if s.starts_with(ollama::SCHEME) {
            return Some(Input::Ollama(s.to_string()));
        }
        if s.starts_with(hf::SCHEME) {
            return Some(Input::Hf(s.to_string()));
        }
        RemoteUrl::parse(s).map(Input::Url)
    }

    /// Whether `arg` is a store reference (`ollama:…`, `hf:…`) or a URL:
    /// a name looked up elsewhere, never a path beneath a root.
    pub fn is_store_reference(arg: &Path) -> bool {
        matches!(Input::by_spelling(arg), Some(Input::Ollama(_) | Input::Hf(_) | Input::Url(_)))
    }

    /// The argument as it was given (what errors and output name).
    pub fn as_path(&self) -> &Path {
        match self {
            Input::File(p) | Input::Directory(p) => p,
            Input::Ollama(s) | Input::Hf(s) => Path::new(s),
            Input::Stdin => Path::new("-"),
            // Without credentials or query: what every message shows.
            Input::Url(u) => u.shown(),
        }
    }
}

impl AsRef<Path> for Input {
    fn as_ref(&self) -> &Path {
        self.as_path()
    }
}

/// Bytes read from the start of a file to tell its format.
const SNIFF_BYTES: u64 = 9;

/// Opens and parses the model at `path`, in whichever format it is.
pub fn open_model(path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
    open_input(&Input::from_arg(path), opts)
}

/// Opens and parses the model an input names: a directory (or a Hugging
/// Face snapshot) whole, an Ollama model in its store, a file or standard
/// input through the registry of formats.
pub fn open_input(input: &Input, opts: &OpenOptions) -> Result<AnyModel> {
    match input {
        Input::Ollama(reference) => Ok(AnyModel::new(ollama::open_reference(reference, *opts)?)),
        Input::Directory(dir) => Ok(AnyModel::new(directory::Model::open(dir, opts)?)),
        Input::Hf(reference) => {
            let snapshot = hf::resolve(reference)?;
            Ok(AnyModel::new(directory::Model::open(&snapshot.shown, opts)?))
        }
        Input::Stdin => {
            let source = Source::stdin()?;
            let format = formats::of_bytes(&source.head(SNIFF_BYTES)?);
            read_as(source, format, opts)
        }
        Input::File(path) => open_source(Source::open(path, opts.read_mode)?, opts),
        Input::Url(url) => match remote::open(url, opts.read_mode)? {
            remote::Remote::Object(source) => open_source(*source, opts),
            remote::Remote::Prefix(place) => Ok(AnyModel::new(directory::Model::open_place(&place, opts)?)),
            remote::Remote::Model(model) => Ok(model),
        },
    }
}

/// Opens the model at `rel` beneath `root`, named `shown` (a statement's
/// subject under `verify`'s root): a file, or a directory's one model.
/// Everything it leads to (its shards, an index's files, the directory's
/// entries, a store's blobs) is opened beneath the same root.
pub fn open_model_beneath(root: &Arc<Root>, rel: &Path, shown: &Path, opts: &OpenOptions) -> Result<AnyModel> {
    if root.file_type(rel).is_ok_and(|t| t == rustix::fs::FileType::Directory) {
        return Ok(AnyModel::new(directory::Model::open_beneath(root, rel, shown, opts)?));
    }
    open_source(Source::open_beneath(root, rel, shown, opts.read_mode, Last::Follow)?, opts)
}

/// The model an open file holds: a file some format claims by its name or
/// place (an index, a manifest in a store), else by its first bytes, else
/// by its extension.
fn open_source(source: Source, opts: &OpenOptions) -> Result<AnyModel> {
    let path = source.path().to_path_buf();
    if let Some(format) = formats::of_path(&path) {
        return format.open(source, *opts);
    }
    let head = source.head(SNIFF_BYTES)?;
    read_as(source, formats::of_bytes(&head).or_else(|| formats::of_extension(&path)), opts)
}

/// The model an opened source holds, read as `format`. A source no format
/// claims is read as the registry's fallback ([`formats::FALLBACK`]).
fn read_as(source: Source, format: Option<&dyn FileFormat>, opts: &OpenOptions) -> Result<AnyModel> {
    format.unwrap_or(formats::FALLBACK).open(source, *opts)
}

/// The arguments with `ollama:` alone expanded to every model in the store
/// (`ollama:host/namespace/model:tag`, sorted) and `hf:` alone to every
/// snapshot a ref names in the Hugging Face cache (`hf::every_snapshot`);
/// every other argument as it is. Beside them, each entry of the store or
/// cache that is no model (an error naming it): the listing goes on past
/// it, the caller reports it.
pub fn expand_arguments(args: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Error>)> {
    let mut out = Vec::with_capacity(args.len());
    let mut strays = Vec::new();
    for a in args {
        if a.as_os_str() == ollama::SCHEME {
            let listing =
                store_with_manifests().and_then(|root| ollama::every_model(&root)).map_err(|e| e.for_argument(a))?;
            out.extend(listing.models.into_iter().map(PathBuf::from));
            strays.extend(listing.strays);
        } else if a.as_os_str() == hf::SCHEME {
            let listing = hf::cache_root().and_then(|c| hf::every_snapshot(&c)).map_err(|e| e.for_argument(a))?;
            out.extend(listing.models.into_iter().map(PathBuf::from));
            strays.extend(listing.strays);
        } else {
            out.push(a.clone());
        }
    }
    Ok((out, strays))
}

/// The Ollama store's root, if it holds a `manifests` directory; else an
/// error that says no store was found, and where it was looked for.
fn store_with_manifests() -> Result<PathBuf> {
    let named = std::env::var_os("OLLAMA_MODELS").is_some_and(|r| !r.is_empty());
    with_manifests(ollama::store_root()?, named)
}

/// `root` if it holds a `manifests` directory; `named`: the variable named it.
fn with_manifests(root: PathBuf, named: bool) -> Result<PathBuf> {
    if root.join("manifests").is_dir() {
        return Ok(root);
    }
    let which = if named {
        "the store OLLAMA_MODELS names"
    } else {
        "the default store, ~/.ollama/models; OLLAMA_MODELS names another"
    };
    let root = crate::text::escape_name(root.as_os_str().as_encoded_bytes());
    let what = format!("no Ollama store found: {root} has no manifests directory ({which})");
    Err(Error::new(ollama::OllamaErrorKind::NoStore(what)))
}

/// About how many bytes labelling `path` reads: the sizes of every file of
/// the model it names (shard siblings, the files of an index, the model in
/// a directory). For a progress bar's length; 0 where nothing can be seen.
pub fn approximate_bytes(path: &Path) -> u64 {
    match Input::from_arg(path) {
        Input::Hf(r) => hf::resolve(&r).map_or(0, |s| approximate_bytes(&s.shown)),
        Input::Ollama(r) => ollama::manifest_bytes(&r).unwrap_or(0),
        Input::Directory(d) => directory::approximate_bytes(&d).unwrap_or(0),
        Input::Url(u) => remote::approximate_bytes(&u),
        Input::File(_) | Input::Stdin => {
            formats::approximate_bytes(path).unwrap_or_else(|| crate::format::file_size(path))
        }
    }
}

/// Labels every path on `pool` (all tensors of all files scheduled
/// together), calling `emit(i, result)` for the i-th path in order, as soon
/// as it and all before it are finished.
pub fn digest_paths(
    paths: &[PathBuf],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
    emit: impl FnMut(usize, Result<(AnyModel, Digest)>),
) {
    let inputs: Vec<Input> = paths.iter().map(|p| Input::from_arg(p)).collect();
    schedule(&inputs, opts, pool, &open_input, emit);
}

/// Labels a fixed number of paths together on `pool` and returns every
/// result, in order.
pub fn label_paths<const N: usize>(
    paths: [PathBuf; N],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> [Result<(AnyModel, Digest)>; N] {
    let inputs = paths.map(|p| Input::from_arg(&p));
    let mut all = schedule_all(&inputs, opts, pool, &open_input).into_iter();
    std::array::from_fn(|_| all.next().unwrap_or_else(|| Err(Error::internal("a path was not labelled"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_without_manifests_is_no_store() {
        let dir = tempfile::tempdir().unwrap();
        for named in [true, false] {
            let e = with_manifests(dir.path().to_path_buf(), named).unwrap_err();
            assert!(
                matches!(e.kind().of::<ollama::OllamaErrorKind>(), Some(ollama::OllamaErrorKind::NoStore(_))),
                "{e}"
            );
            assert!(e.to_string().starts_with("no Ollama store found: "), "{e}");
            assert!(!e.is_not_found());
        }
        std::fs::create_dir(dir.path().join("manifests")).unwrap();
        assert_eq!(with_manifests(dir.path().to_path_buf(), true).unwrap(), dir.path());
    }

    #[test]
    fn an_argument_is_told_apart_by_its_spelling_once_and_shown_as_given() {
        let spelled = |a: &str| Input::by_spelling(Path::new(a));
        assert_eq!(spelled("-"), Some(Input::Stdin));
        assert_eq!(spelled("ollama:llama3"), Some(Input::Ollama("ollama:llama3".into())));
        assert_eq!(spelled("hf:org/name@main"), Some(Input::Hf("hf:org/name@main".into())));
        // A path that merely holds a prefix, and `./-`, are files.
        for path in ["./ollama:x", "./-", "m.gguf", "d/hf:x", ""] {
            assert_eq!(spelled(path), None, "{path:?}");
        }
        assert!(Input::is_store_reference(Path::new("ollama:x")));
        assert!(Input::is_store_reference(Path::new("hf:")));
        assert!(!Input::is_store_reference(Path::new("-")));
        assert!(!Input::is_store_reference(Path::new("m.gguf")));
        for arg in ["-", "ollama:x", "hf:o/n", "no/such/file.gguf"] {
            assert_eq!(Input::from_arg(Path::new(arg)).as_path(), Path::new(arg));
        }
        let dir = std::env::temp_dir();
        assert_eq!(Input::from_arg(&dir), Input::Directory(dir.clone()));
        assert_eq!(Input::from_arg(&dir).as_ref(), dir.as_path());
    }
}
