//! Streaming tensor data into SHA-256, and the finished [`Digest`] of a model.
//!
//! Each tensor is one SHA-256 stream. By default its bytes are hashed where
//! they lie in the file's guarded map, 8 MiB windows at a time (faulted in
//! with one call, dropped from the process after): no copy, so hashing runs
//! at the SHA-NI rate, and memory stays at about a window per thread.
//! Tensors under 64 KiB, and all of them with `--no-mmap`, are read with
//! `pread` into one bounded buffer. A truncation is an error either way (a
//! guarded fault or a short read), never SIGBUS. Big-endian data is
//! converted to little-endian whole blocks at a time, in a buffer, before it
//! is hashed. See docs/adr/0003.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use sha2::{Digest as _, Sha256};

use crate::bytes::ByteOrder;
use crate::error::{Error, Result, Subject};
use crate::model::Model;
use crate::parse::{GgufFile, TensorInfo};
use crate::skeleton::skeleton_bytes;
use crate::source::{MappedRange, Source};
use crate::value::Sha256Digest;

/// Bytes read per `pread`: large enough that syscalls cost nothing next to
/// hashing, small enough to stay in the core's L2 cache.
pub const CHUNK: u64 = 256 * 1024;

/// Hashes the `nbytes` data bytes of `t` in `file`, converted to
/// little-endian when the file is big-endian. `progress` is called with
/// each chunk's size after it is hashed.
pub fn hash_tensor(source: &Source, file: &GgufFile, t: &TensorInfo, progress: &dyn Fn(u64)) -> Result<Sha256Digest> {
    let located = |e: Error| e.about(Subject::Tensor(t.name.clone()));
    let start = file.data_position(t);
    if let Some(range) = source.map_range(start, t.nbytes).map_err(located)? {
        return hash_mapped(&range, source.path(), file.byte_order, t, progress).map_err(located);
    }
    hash_read(source, start, file.byte_order, t, progress).map_err(located)
}

/// Bytes per chunk: whole blocks, so big-endian conversion never splits one.
fn chunk_size(t: &TensorInfo) -> u64 {
    let block = t.ggml_type.type_size.max(1);
    CHUNK.checked_div(block).unwrap_or(1).max(1).saturating_mul(block)
}

/// Mapped data is faulted in and dropped a window at a time: one madvise
/// call each way per window keeps system time small, and the resident set
/// stays at about a window per thread.
const WINDOW: usize = 8 << 20;

/// Streams a mapped range: little-endian data is hashed where it lies, with
/// no copy; big-endian data goes through a chunk-sized buffer.
fn hash_mapped(
    range: &MappedRange,
    path: &std::path::Path,
    order: ByteOrder,
    t: &TensorInfo,
    progress: &dyn Fn(u64),
) -> Result<Sha256Digest> {
    let chunk = usize::try_from(chunk_size(t)).unwrap_or(usize::MAX);
    let mut hasher = Sha256::new();
    let mut swapped = Vec::new();
    let mut done = 0usize;
    for window in range.bytes().chunks(WINDOW) {
        range.populate(done, window.len());
        let start = done;
        for part in window.chunks(chunk) {
            if order == ByteOrder::Big {
                swapped.clear();
                swapped.extend_from_slice(part);
                t.ggml_type.big_to_little(&mut swapped);
                hasher.update(&swapped);
            } else {
                hasher.update(part);
            }
            progress(part.len() as u64);
        }
        done = done.saturating_add(window.len());
        range.release(start, done);
        // A truncated file reads as zeros from here on: stop, not hash them.
        range.check(path)?;
    }
    Ok(hasher.finalize().into())
}

/// Streams a range with `pread` into one bounded buffer (`--no-mmap`).
fn hash_read(
    source: &Source,
    start: u64,
    order: ByteOrder,
    t: &TensorInfo,
    progress: &dyn Fn(u64),
) -> Result<Sha256Digest> {
    let chunk = chunk_size(t);
    let mut buf = vec![0u8; usize::try_from(chunk.min(t.nbytes)).unwrap_or(0)];
    let mut hasher = Sha256::new();
    let mut done = 0u64;
    while done < t.nbytes {
        let n = chunk.min(t.nbytes.saturating_sub(done));
        let part = buf.get_mut(..usize::try_from(n).unwrap_or(0)).unwrap_or(&mut []);
        source.read_exact_at(part, start.saturating_add(done))?;
        if order == ByteOrder::Big {
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
