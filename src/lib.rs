//! One content-addressed label for every layout of a GGUF, safetensors,
//! directory or Ollama model.
//!
//! The label is the SHA-256 of a *canonical skeleton* of the model, one per
//! format (see `docs/SPEC.md`). For GGUF: KVs and tensors sorted by their
//! raw bytes, every string, array payload and tensor's data replaced by its
//! SHA-256, and tensor offsets recomputed. Tensor order, KV order, padding,
//! gaps, byte order, GGUF version 2 or 3, and the split into shards do not
//! change it; any change of a metadata value or of a weight byte does.
//! safetensors and Ollama skeletons follow the same idea over their own
//! headers, shards and blobs.
//!
//! ```no_run
//! let model = gguf_digest::Model::open("model.gguf")?;
//! let digest = model.digest()?;
//! println!("{}  model.gguf", digest.label());
//! for (t, sha) in model.tensors().iter().zip(digest.tensor_sha256()) {
//!     println!("{} {}", String::from_utf8_lossy(&t.info.name), hex::encode(sha));
//! }
//! # Ok::<(), gguf_digest::Error>(())
//! ```
//!
//! The path of the data (ARCHITECTURE.md has the map): an argument is
//! opened as a [`Source`] and sniffed (`input`); its format parses it
//! ([`parse()`] for GGUF: bytes to [`GgufFile`]) and joins its files into a
//! model ([`Model`]) that hands the core one hashing [`Job`] per tensor
//! ([`Labelled`]); the core hashes them (`hash`, `schedule`) and the format
//! builds the skeleton, whose SHA-256 is the label ([`Digest`]).

#![deny(unsafe_op_in_unsafe_fn)]
// Unit tests build inputs byte by byte and index what they read back: a
// panic there is a failed test. The lib's own build keeps the Cargo.toml lints.
#![cfg_attr(test, allow(clippy::arithmetic_side_effects, clippy::indexing_slicing))]

// The layers are crates (docs/adr/0043-workspace-crates.md): the core
// (crates/core), the formats (crates/formats), provenance
// (crates/provenance, feature `provenance`). This crate is their public
// face: the modules and items below, under the paths they always had.
pub use gguf_digest_core::{cache, check, facts, json, output, render};
pub use gguf_digest_formats::{diff, directory, gguf, hf, inspect, ollama, onnx, pytorch, safetensors};
#[cfg(feature = "provenance")]
pub use gguf_digest_provenance::{bom, provenance};

// The layers' inner modules, for the command's own use.
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use gguf_digest_core::{error, format, hash, pipeline, schedule, source, text};
#[cfg_attr(not(feature = "cli"), allow(unused_imports))]
pub(crate) use gguf_digest_formats::{formats, input};

/// The README's code blocks, compiled as doc tests so its library example
/// stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// The command (flags, exit codes, the progress bar), for the binary and the
// Python wheel's `gguf-digest`; the only user of clap and indicatif.
#[cfg(feature = "cli")]
pub mod cli;

pub use error::{AsError, Error, ErrorKind, Hint, LayerError, LayerKind, Result, SYMBOLIC_LINK, Subject};
pub use format::{
    AnyModel, DiffSection, FileFormat, Labelled, OpenOptions, Opened, Section, Side, diff_same, end_entry, finish,
    hash_order, run_job,
};
pub use formats::{FORMATS, sniff};
pub use hash::{
    Algorithm, CHUNK, Conversion, Digest, Job, MIN_MAPPED, PieceSizes, ProgressCallback, READ_CHUNKS, Sha256Digest,
    Swap, WINDOW, hash_job,
};
pub use input::{
    Input, Named, NamedModels, approximate_bytes, digest_paths, expand_arguments, label_paths, open_model,
};
pub use pipeline::{DirectReads, hash_front_to_back, hash_front_to_back_with, reads_front_to_back};
pub use schedule::{BatchOptions, Opener, attach_cache, digest, schedule, schedule_all};
pub use schedule::{MAX_THREADS, hashing_pool};
pub use source::{Beside, Last, MAX_READ_METADATA, ReadMode, Root, Source, UNKNOWN_LEN, raise_open_file_limit};
pub use text::escape_bytes;

// GGUF's public face, at the crate root as before the formats had folders.
pub use gguf::{
    ALIGNMENT_KEY, ArrayValue, ByteOrder, DEFAULT_ALIGNMENT, GGML_TYPES, GgmlType, GgufFile, Kv, MAX_ARRAY_DEPTH,
    MAX_DIMS, Model, ModelKv, ModelTensor, SPLIT_PREFIX, Shape, Shard, ShardName, StringValue, TensorInfo, Value,
    ValueType, align_up, canonical_payload, parse, skeleton_bytes, tensor_nbytes,
};
