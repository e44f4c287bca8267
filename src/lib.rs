//! One content-addressed label for every layout of a GGUF, safetensors,
//! PyTorch, directory or Ollama model.
//!
//! The label is the SHA-256 of a *canonical skeleton* of the model, one per
//! format (see `docs/SPEC.md`). For GGUF: KVs and tensors sorted by their
//! raw bytes, every string, array payload and tensor's data replaced by its
//! SHA-256, and tensor offsets recomputed. Tensor order, KV order, padding,
//! gaps, byte order, GGUF version 2 or 3, and the split into shards do not
//! change it; any change of a metadata value or of a weight byte does.
//! safetensors, PyTorch and Ollama skeletons follow the same idea over their
//! own headers, shards and blobs.
//!
//! # The front
//!
//! What this crate offers is listed here and nowhere else (the layer crates
//! it is built from, `gguf-digest-core`, `gguf-digest-formats` and
//! `gguf-digest-provenance`, make no promise to a direct user;
//! `docs/public-api.txt` lists every public path, checked in CI):
//!
//! - **open** a model of any format, from any argument the command takes
//!   (a file, a shard set's first shard, an index, a directory, `-`,
//!   `ollama:NAME`, `hf:ORG/NAME`): [`open_model`] or [`Input`] and
//!   [`open_input`], giving an [`AnyModel`];
//! - **label** it: [`digest`] hashes one model's tensors on the current
//!   rayon pool; [`digest_paths`] and [`label_paths`] label many together on
//!   a [`hashing_pool`], largest first ([`BatchOptions`]). The [`Digest`]
//!   holds the label, the skeleton's and every tensor's SHA-256;
//! - its **skeleton** bytes ([`Labelled::skeleton`]) and its **leaves**, the
//!   command's `--json` entry ([`Labelled::json_text`]);
//! - **inspect** it and **diff** two ([`inspect`], [`diff`]), as text or JSON;
//! - **check** a sums list as `gguf-digest -c` does ([`check`]);
//! - with the feature `provenance`, **make and verify** an in-toto
//!   statement ([`provenance`]);
//! - one format's own items, after [`AnyModel::downcast_ref`]: [`gguf`],
//!   [`safetensors`], [`pytorch`], [`ollama`], [`directory`];
//! - errors: one [`Error`] (kind, file, byte offset, key or tensor).
//!
//! # Example
//!
//! Any model, here a GGUF file with one key written on the spot:
//!
//! ```
//! use gguf_digest::{Labelled, OpenOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("gguf-digest-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("model.gguf");
//! # let mut gguf = b"GGUF".to_vec();
//! # gguf.extend(3u32.to_le_bytes()); // version
//! # gguf.extend(0u64.to_le_bytes()); // tensors
//! # gguf.extend(1u64.to_le_bytes()); // KVs
//! # gguf.extend(12u64.to_le_bytes());
//! # gguf.extend(b"general.name");
//! # gguf.extend(8u32.to_le_bytes()); // a string
//! # gguf.extend(4u64.to_le_bytes());
//! # gguf.extend(b"tiny");
//! # std::fs::write(&path, &gguf)?;
//! let opts = OpenOptions::default();
//! let model = gguf_digest::open_model(&path, &opts)?;
//! let digest = gguf_digest::digest(model.labelled(), &opts.pieces)?;
//! println!("{}  {}", digest.label(), path.display()); // a sums line
//!
//! // The skeleton whose SHA-256 is the label, and the `--json` entry.
//! let skeleton = model.skeleton(digest.tensor_sha256())?;
//! let leaves: serde_json::Value = serde_json::from_str(&model.json_text(&path, &digest)?)?;
//! assert_eq!(leaves["label"], digest.label());
//! assert!(!skeleton.is_empty());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! The path of the data (ARCHITECTURE.md has the map): an argument is
//! parsed once as an [`Input`]; the registry of formats recognises and
//! opens it as an [`AnyModel`], which hands the core one hashing job per
//! tensor ([`Labelled`]); the core hashes them and the format builds the
//! skeleton, whose SHA-256 is the label ([`Digest`]).

#![deny(unsafe_op_in_unsafe_fn)]
// Unit tests build inputs byte by byte and index what they read back: a
// panic there is a failed test. The lib's own build keeps the Cargo.toml lints.
#![cfg_attr(test, allow(clippy::arithmetic_side_effects, clippy::indexing_slicing))]

// The layers are crates (docs/adr/0043-workspace-crates.md): the core
// (crates/core), the formats (crates/formats), provenance
// (crates/provenance, feature `provenance`). This crate is their public
// face (docs/adr/0042-public-front.md): each `pub use` below is one
// deliberate item, every other item of the layers stays out of it
// (`pub(crate)`, for the command alone). Python, the tests and fuzz/ reach
// the layer crates directly for the rest.

/// The README's code blocks, compiled as doc tests so its library example
/// stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// The command (flags, exit codes, the progress bar), for the binary and the
// Python wheel's `gguf-digest`; the only user of clap and indicatif.
#[cfg(feature = "cli")]
pub mod cli;

// ---- Errors ----

pub use gguf_digest_core::error::{Error, ErrorKind, Result, Subject};
// A format's or provenance's own kinds, read with `ErrorKind::of::<K>()`
// (each layer's `K` is in its module below: `gguf::GgufErrorKind`, ...).
pub use gguf_digest_core::error::{Hint, LayerError, LayerKind};

// ---- Opening a model ----

/// ```
/// use gguf_digest::Input;
/// use std::path::Path;
/// assert_eq!(Input::from_arg(Path::new("hf:org/name@main")), Input::Hf("hf:org/name@main".into()));
/// assert_eq!(Input::from_arg(Path::new("-")), Input::Stdin);
/// ```
pub use gguf_digest_formats::input::Input;
/// ```
/// use gguf_digest::{Input, RemoteUrl};
/// use std::path::Path;
/// let Input::Url(url) = Input::from_arg(Path::new("https://user:pw@host/m.gguf?sig=x")) else { panic!() };
/// assert_eq!(url.shown(), Path::new("https://host/m.gguf"));
/// ```
pub use gguf_digest_formats::input::RemoteUrl;
/// ```no_run
/// // A file, a first shard, an index, a directory, `-`, `ollama:NAME` or `hf:ORG/NAME`.
/// let model = gguf_digest::open_model("ollama:llama3".as_ref(), &Default::default())?;
/// println!("{}", model.what());
/// # Ok::<(), gguf_digest::Error>(())
/// ```
pub use gguf_digest_formats::input::open_model;
pub use gguf_digest_formats::input::{expand_arguments, open_input};

pub use gguf_digest_core::format::{AnyModel, DiffSection, Labelled, OpenOptions, Opened, Section, Side};
pub use gguf_digest_core::source::ReadMode;

// ---- Labelling ----

/// ```no_run
/// use gguf_digest::OpenOptions;
/// let opts = OpenOptions::default();
/// let model = gguf_digest::open_model("model.safetensors".as_ref(), &opts)?;
/// let digest = gguf_digest::digest(model.labelled(), &opts.pieces)?;
/// println!("{}", digest.label());
/// # Ok::<(), gguf_digest::Error>(())
/// ```
pub use gguf_digest_core::schedule::digest;
/// ```no_run
/// use std::path::PathBuf;
/// let pool = gguf_digest::hashing_pool(0)?; // the threads rayon's variables ask for, else one a core
/// let paths = [PathBuf::from("a.gguf"), PathBuf::from("ollama:llama3")];
/// gguf_digest::digest_paths(&paths, &Default::default(), &pool, |i, result| match result {
///     Ok((_model, digest)) => println!("{}  {}", digest.label(), paths[i].display()),
///     Err(e) => eprintln!("{e}"),
/// });
/// # Ok::<(), gguf_digest::Error>(())
/// ```
pub use gguf_digest_formats::input::digest_paths;
pub use gguf_digest_formats::input::label_paths;

pub use gguf_digest_core::hash::{Digest, PieceSizes, Sha256Digest};
pub use gguf_digest_core::schedule::{BatchOptions, MAX_THREADS, hashing_pool};

// ---- Inspecting, comparing, checking ----

/// `gguf-digest inspect`: one model's header, metadata and tensors, as text
/// or JSON.
///
/// ```no_run
/// use gguf_digest::inspect::{InspectOptions, inspect_path};
/// let pool = gguf_digest::hashing_pool(0)?;
/// let inspection = inspect_path("model.gguf".as_ref(), &Default::default(), &pool, &InspectOptions::default())?;
/// print!("{}", inspection.text());
/// let json: serde_json::Value = inspection.to_json();
/// # let _ = json;
/// # Ok::<(), gguf_digest::Error>(())
/// ```
pub mod inspect {
    pub use gguf_digest_formats::inspect::{InspectOptions, Inspection, Partial, inspect_path, what_could_be_read};
}

/// `gguf-digest diff`: what differs between two models, as text or JSON.
///
/// ```no_run
/// use gguf_digest::diff::{DiffOptions, diff_paths};
/// let pool = gguf_digest::hashing_pool(0)?;
/// let d = diff_paths("a.gguf".as_ref(), "b.gguf".as_ref(), &Default::default(), &pool, &DiffOptions::default())?;
/// if !d.labels_equal() {
///     print!("{}", d.text());
/// }
/// # Ok::<(), gguf_digest::Error>(())
/// ```
pub mod diff {
    pub use gguf_digest_formats::diff::{Diff, DiffOptions, diff_paths};
}

/// `gguf-digest -c`: a sums list read with GNU's rules, each entry relabelled
/// and given its verdict.
///
/// ```no_run
/// use gguf_digest::check::{CheckOptions, Checked, Verdict, read_list, verify_list};
/// let list = read_list(&mut std::io::BufReader::new(std::fs::File::open("models.sums")?), false)?;
/// let pool = gguf_digest::hashing_pool(0)?;
/// let opts = CheckOptions::default();
/// let summary = verify_list(
///     &list,
///     &opts,
///     |paths, emit| {
///         gguf_digest::digest_paths(paths, &Default::default(), &pool, |i, r| emit(i, r.map(|(_, d)| d.label())))
///     },
///     |line| {
///         if let Checked::Entry { path, verdict, .. } = line {
///             let ok = matches!(verdict, Verdict::Matched);
///             println!("{}: {}", String::from_utf8_lossy(path), if ok { "OK" } else { "FAILED" });
///         }
///     },
/// );
/// assert!(summary.passed(&opts));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod check {
    pub use gguf_digest_core::check::{
        CheckOptions, CheckSummary, Checked, Line, ListReader, MISFORMATTED_LINE, NO_ENTRIES, Verdict, read_list,
        verify_list,
    };
}

/// The verified-leaf cache (`--cache`, docs/adr/0033), attached to a run
/// through [`BatchOptions::cache`](crate::BatchOptions).
pub mod cache {
    #[cfg_attr(not(feature = "cli"), allow(unused_imports))]
    pub(crate) use gguf_digest_core::cache::*;
    pub use gguf_digest_core::cache::{Cache, enabled_by_env};
}

// ---- One format's own items ----

/// GGUF's own items: the pure parser ([`parse`](gguf::parse): bytes to a
/// [`GgufFile`](gguf::GgufFile)) and a model's keys and tensors.
///
/// ```no_run
/// let model = gguf_digest::gguf::Model::open("model.gguf")?; // shards joined
/// let digest = model.digest()?;
/// for (t, sha) in model.tensors().iter().zip(digest.tensor_sha256()) {
///     println!("{} {}", String::from_utf8_lossy(&t.info.name), hex::encode(sha));
/// }
/// # Ok::<(), gguf_digest::Error>(())
/// ```
pub mod gguf {
    pub use gguf_digest_formats::gguf::{
        ArrayValue, ByteOrder, GgmlType, GgufErrorKind, GgufFile, Kv, Model, ModelKv, ModelTensor, Shape, Shard,
        StringValue, TensorInfo, TensorIter, Tensors, Value, ValueType, parse, skeleton_bytes,
    };
}

/// safetensors: a model (one file, or an index and its shards), for
/// [`AnyModel::downcast_ref`](crate::AnyModel::downcast_ref).
pub mod safetensors {
    pub use gguf_digest_formats::safetensors::{Model, SafetensorsErrorKind};
}

/// PyTorch checkpoints: a model, for [`AnyModel::downcast_ref`](crate::AnyModel::downcast_ref).
pub mod pytorch {
    pub use gguf_digest_formats::pytorch::{Model, PytorchErrorKind};
}

/// An ONNX model with its external data, for
/// [`AnyModel::downcast_ref`](crate::AnyModel::downcast_ref).
pub mod onnx {
    pub use gguf_digest_formats::onnx::{Model, OnnxErrorKind};
}

/// A model an Ollama store serves, for [`AnyModel::downcast_ref`](crate::AnyModel::downcast_ref).
pub mod ollama {
    pub use gguf_digest_formats::ollama::{Model, OllamaErrorKind};
}

/// A model directory (a Hugging Face snapshot among them), labelled whole,
/// for [`AnyModel::downcast_ref`](crate::AnyModel::downcast_ref).
pub mod directory {
    pub use gguf_digest_formats::directory::{DirectoryErrorKind, Model};
}

/// `hf:ORG/NAME[@REVISION]` references to the Hugging Face cache: their
/// errors' kinds.
pub mod hf {
    pub use gguf_digest_formats::hf::HfErrorKind;
}

// ---- URL inputs ----

/// URL inputs (`s3://`, `gs://`, `az://`, `https://`; `http://` when
/// allowed), read by ranges through `object_store` (feature `remote`,
/// docs/adr/0044-remote-inputs.md): call [`remote::register`] once, then
/// every function that takes an argument takes a URL too.
///
/// ```no_run
/// gguf_digest::remote::register(gguf_digest::remote::RemoteOptions::default())?;
/// let model = gguf_digest::open_model("s3://bucket/models/m.gguf".as_ref(), &Default::default())?;
/// # Ok::<(), gguf_digest::Error>(())
/// ```
#[cfg(feature = "remote")]
pub mod remote {
    pub use gguf_digest_formats::input::remote::hide_credentials;
    pub use gguf_digest_remote::{CONNECTIONS, PART, RemoteOptions, register};
}

// ---- Provenance ----

/// In-toto statements of labels, and their verification (feature
/// `provenance`).
///
/// Making one, as `gguf-digest statement` prints it:
///
/// ```no_run
/// use gguf_digest::provenance::{StatementSubject, statement_text};
/// use gguf_digest::OpenOptions;
/// let opts = OpenOptions::default();
/// let path = std::path::Path::new("model.gguf");
/// let model = gguf_digest::open_model(path, &opts)?;
/// let digest = gguf_digest::digest(model.labelled(), &opts.pieces)?;
/// let subjects: [StatementSubject<'_>; 1] = [(path, model.labelled(), &digest)];
/// println!("{}", statement_text(&subjects, false)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Verifying a signed one (a DSSE envelope or a Sigstore bundle), then
/// relabelling its subjects, as `gguf-digest verify` does:
///
/// ```no_run
/// use gguf_digest::provenance::{PublicKey, Signature, claims};
/// let keys = [PublicKey::from_pem_file("models.pub".as_ref())?];
/// let claimed = claims("models.intoto.json".as_ref(), None, Signature::Keys(&keys))?;
/// let opts = gguf_digest::OpenOptions::default();
/// for (subject, path) in claimed.subjects.iter().zip(&claimed.paths) {
///     let model = claimed.open(path, &opts)?; // never outside the root
///     let label = gguf_digest::digest(model.labelled(), &opts.pieces)?.label();
///     println!("{}: {}", subject.name, if label == subject.label { "OK" } else { "FAILED" });
/// }
/// # Ok::<(), gguf_digest::Error>(())
/// ```
#[cfg(feature = "provenance")]
pub mod provenance {
    pub use gguf_digest_provenance::provenance::ProvenanceErrorKind;
    pub use gguf_digest_provenance::provenance::keys::PublicKey;
    pub use gguf_digest_provenance::provenance::statement::{Subject as StatementSubject, statement_text};
    pub use gguf_digest_provenance::provenance::subjects::Subject as ClaimedSubject;
    pub use gguf_digest_provenance::provenance::verify::{Claims, Signature, claims};
    pub use gguf_digest_provenance::provenance::{PREDICATE_TYPE, STATEMENT_TYPE};
    // The rest (signing, OpenSSF model signatures, keys' files), for the command.
    #[cfg_attr(not(feature = "cli"), allow(unused_imports))]
    pub(crate) use gguf_digest_provenance::provenance::*;
}

// What the command uses beyond the front (src/cli/ names them `crate::X`).
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use gguf_digest_core::schedule::{Opener, schedule, schedule_all};
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use gguf_digest_core::{output, source::raise_open_file_limit, text};
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use gguf_digest_formats::input::{NamedModels, approximate_bytes};
#[cfg(feature = "provenance")]
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use gguf_digest_provenance::bom;
