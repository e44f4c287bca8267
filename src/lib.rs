//! One content-addressed label for every layout of a GGUF model.
//!
//! The label is the SHA-256 of a *canonical skeleton* of the model (see
//! `docs/SPEC.md`): KVs and tensors sorted by their raw bytes, every string,
//! array payload and tensor's data replaced by its SHA-256, and tensor
//! offsets recomputed. Tensor order, KV order, padding, gaps, byte order,
//! GGUF version 2 or 3, and the split into shards do not change it; any
//! change of a metadata value or of a weight byte does.
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
//! The path of the data: [`Source`] (an open file) → [`parse()`] (bytes to
//! [`GgufFile`]) → [`Model`] (one file or joined shards, sorted) →
//! [`Digest`] (tensor data hashed, skeleton built, label).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod batch;
mod bytes;
pub mod check;
pub mod diff;
mod error;
mod ggml_type;
mod hash;
pub mod inspect;
mod map_guard;
mod model;
pub mod output;
mod parse;
mod shards;
mod skeleton;
mod source;
mod value;

pub use batch::{BatchOptions, digest_paths};
pub use bytes::{ByteOrder, escape_bytes};
pub use error::{Error, ErrorKind, Result, Subject};
pub use ggml_type::{GgmlType, Swap, TABLE as GGML_TYPES};
pub use hash::{CHUNK, Digest, MIN_MAPPED, PieceSizes, WINDOW, hash_tensor};
pub use model::{Model, ModelKv, ModelTensor, OpenOptions, Shard};
pub use parse::{
    ALIGNMENT_KEY, DEFAULT_ALIGNMENT, GgufFile, Kv, MAX_DIMS, SPLIT_PREFIX, Shape, TensorInfo, align_up, parse,
    tensor_nbytes,
};
pub use shards::ShardName;
pub use skeleton::skeleton_bytes;
pub use source::{MAX_READ_METADATA, ReadMode, Source};
pub use value::{ArrayValue, MAX_ARRAY_DEPTH, Sha256Digest, StringValue, Value, ValueType, canonical_payload};
