//! Streaming tensor data into SHA-256, and the finished [`Digest`] of a model.
//!
//! Tensor data is read with `pread` into one bounded buffer per tensor, so
//! memory stays flat whatever the model's size, no mapped page piles up in
//! the process, and a file truncated while it is read gives a short read (an
//! error) instead of SIGBUS. Big-endian data is converted to little-endian
//! in that buffer, whole blocks at a time, before it is hashed.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use sha2::{Digest as _, Sha256};

use crate::bytes::ByteOrder;
use crate::error::{Error, Result, Subject};
use crate::model::Model;
use crate::parse::{GgufFile, TensorInfo};
use crate::skeleton::skeleton_bytes;
use crate::source::Source;
use crate::value::Sha256Digest;

/// Bytes read per `pread`: large enough that syscalls cost nothing next to
/// hashing, small enough to stay in the core's L2 cache.
pub const CHUNK: u64 = 256 * 1024;

/// Hashes the `nbytes` data bytes of `t` in `file`, converted to
/// little-endian when the file is big-endian. `progress` is called with
/// each chunk's size after it is hashed.
pub fn hash_tensor(source: &Source, file: &GgufFile, t: &TensorInfo, progress: &dyn Fn(u64)) -> Result<Sha256Digest> {
    let located = |e: Error| e.about(Subject::Tensor(t.name.clone()));
    // Whole blocks per chunk, so big-endian conversion never splits a block.
    let block = t.ggml_type.type_size.max(1);
    let chunk = CHUNK.checked_div(block).unwrap_or(1).max(1).saturating_mul(block);
    let mut buf = vec![0u8; usize::try_from(chunk.min(t.nbytes)).unwrap_or(0)];
    let mut hasher = Sha256::new();
    let start = file.data_position(t);
    let mut done = 0u64;
    while done < t.nbytes {
        let n = chunk.min(t.nbytes.saturating_sub(done));
        let part = buf.get_mut(..usize::try_from(n).unwrap_or(0)).unwrap_or(&mut []);
        source.read_exact_at(part, start.saturating_add(done)).map_err(located)?;
        if file.byte_order == ByteOrder::Big {
            t.ggml_type.big_to_little(part);
        }
        hasher.update(&*part);
        done = done.saturating_add(n);
        progress(n);
    }
    Ok(hasher.finalize().into())
}

/// A model's skeleton and label, with the data digest of every tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    skeleton: Vec<u8>,
    label: Sha256Digest,
    tensor_sha256: Vec<Sha256Digest>,
}

impl Digest {
    /// Builds the skeleton of `model` from its tensors' data digests (in
    /// [`Model::tensors`] order) and hashes it.
    pub fn new(model: &Model, tensor_sha256: Vec<Sha256Digest>) -> Digest {
        let skeleton = skeleton_bytes(model, &tensor_sha256);
        let label = Sha256::digest(&skeleton).into();
        Digest { skeleton, label, tensor_sha256 }
    }

    /// The canonical skeleton bytes (spec §2).
    pub fn skeleton(&self) -> &[u8] {
        &self.skeleton
    }

    /// The label as 64 lowercase hex digits (spec §1).
    pub fn label(&self) -> String {
        hex::encode(self.label)
    }

    /// The label's 32 bytes.
    pub fn label_bytes(&self) -> &Sha256Digest {
        &self.label
    }

    /// The SHA-256 of each tensor's data, in [`Model::tensors`] order.
    pub fn tensor_sha256(&self) -> &[Sha256Digest] {
        &self.tensor_sha256
    }
}
