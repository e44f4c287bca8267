//! Streaming tensor data into SHA-256, and the finished [`Digest`] of a model.
//!
//! Each tensor is one SHA-256 stream, fed in pieces whose sizes are
//! [`PieceSizes`]. By default its bytes are hashed where they lie in the
//! file's guarded map, a window at a time (faulted in with one call, dropped
//! from the process after): no copy, so hashing runs at the SHA-NI rate, and
//! memory stays at about a window per thread. Short tensors, and all of them
//! with `--no-mmap`, are read with `pread` a chunk at a time into one
//! bounded buffer. A truncation is an error either way (a guarded fault or a
//! short read), never SIGBUS.
//!
//! Big-endian data is converted to little-endian in a buffer before it is
//! hashed, and a conversion works on whole blocks only. So every piece this
//! module cuts is a whole number of blocks: a chunk is whole blocks, a
//! window is whole chunks, and a tensor is whole blocks (the parser checks
//! it). A piece that is not is a bug, and the conversion returns an error
//! for it instead of leaving its tail unconverted. See docs/adr/0003 and
//! docs/adr/0005.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use sha2::{Digest as _, Sha256};

use crate::bytes::ByteOrder;
use crate::error::{Error, Result, Subject};
use crate::model::Model;
use crate::parse::{GgufFile, TensorInfo};
use crate::skeleton::skeleton_bytes;
use crate::source::{MappedRange, Source};
use crate::value::Sha256Digest;

/// Bytes read per `pread` by default: large enough that syscalls cost
/// nothing next to hashing, small enough to stay in the core's L2 cache.
pub const CHUNK: u64 = 256 * 1024;

/// Bytes of a mapped tensor faulted in and dropped at a time by default:
/// one madvise call each way per window keeps system time small, and the
/// resident set stays at about a window per thread.
pub const WINDOW: u64 = 8 << 20;

/// Tensors shorter than this are read, not mapped, by default: for a few
/// KiB, copying costs less than the `madvise` calls that bring a mapped
/// range in and drop it again (a drop flushes the TLB of every core running
/// another hashing thread).
pub const MIN_MAPPED: u64 = 64 << 10;

/// The sizes of the pieces tensor data is cut into on its way into SHA-256.
///
/// They decide speed and memory only, never a digest: every size is rounded
/// to whole blocks of the tensor's type before use. Tests shrink them to a
/// few hundred bytes so that small tensors cross every boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PieceSizes {
    /// Bytes of a mapped tensor faulted in, hashed and dropped at a time.
    pub window: u64,
    /// Bytes read per `pread`, and converted per buffer for big-endian data.
    pub chunk: u64,
    /// Tensors shorter than this are read with `pread`, not mapped.
    pub min_mapped: u64,
}

impl Default for PieceSizes {
    fn default() -> Self {
        PieceSizes { window: WINDOW, chunk: CHUNK, min_mapped: MIN_MAPPED }
    }
}

/// The piece sizes for one tensor, in bytes: `chunk` is a whole number of
/// blocks (at least one), `window` a whole number of chunks (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    chunk: usize,
    window: usize,
}

impl PieceSizes {
    /// The plan for data made of `block`-byte blocks.
    fn plan(&self, block: u64) -> Plan {
        let block = usize::try_from(block.max(1)).unwrap_or(usize::MAX);
        let whole = |size: u64, unit: usize| {
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            size.checked_div(unit).unwrap_or(0).max(1).saturating_mul(unit)
        };
        let chunk = whole(self.chunk, block);
        Plan { chunk, window: whole(self.window, chunk) }
    }
}

/// Hashes the `nbytes` data bytes of `t` in `file`, converted to
/// little-endian when the file is big-endian, in pieces of `pieces`.
/// `progress` is called with each piece's size after it is hashed.
pub fn hash_tensor(
    source: &Source,
    file: &GgufFile,
    t: &TensorInfo,
    pieces: &PieceSizes,
    progress: &dyn Fn(u64),
) -> Result<Sha256Digest> {
    let located = |e: Error| e.about(Subject::Tensor(t.name.clone()));
    let start = file.data_position(t);
    let plan = pieces.plan(t.ggml_type.type_size);
    if let Some(range) = source.map_range(start, t.nbytes, pieces.min_mapped).map_err(located)? {
        return hash_mapped(&range, source.path(), file.byte_order, t, plan, progress).map_err(located);
    }
    hash_read(source, start, file.byte_order, t, plan, progress).map_err(located)
}

/// Streams a mapped range: little-endian data is hashed where it lies, with
/// no copy; big-endian data goes through a chunk-sized buffer.
fn hash_mapped(
    range: &MappedRange,
    path: &std::path::Path,
    order: ByteOrder,
    t: &TensorInfo,
    plan: Plan,
    progress: &dyn Fn(u64),
) -> Result<Sha256Digest> {
    let mut hasher = Sha256::new();
    let mut swapped = Vec::new();
    let mut done = 0usize;
    for window in range.bytes().chunks(plan.window) {
        range.populate(done, window.len());
        let start = done;
        for part in window.chunks(plan.chunk) {
            if order == ByteOrder::Big {
                swapped.clear();
                swapped.extend_from_slice(part);
                t.ggml_type.big_to_little(&mut swapped)?;
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

/// Streams a range with `pread` into one chunk-sized buffer.
fn hash_read(
    source: &Source,
    start: u64,
    order: ByteOrder,
    t: &TensorInfo,
    plan: Plan,
    progress: &dyn Fn(u64),
) -> Result<Sha256Digest> {
    let chunk = plan.chunk as u64;
    let mut buf = vec![0u8; usize::try_from(chunk.min(t.nbytes)).unwrap_or(0)];
    let mut hasher = Sha256::new();
    let mut done = 0u64;
    while done < t.nbytes {
        let n = chunk.min(t.nbytes.saturating_sub(done));
        let part = buf.get_mut(..usize::try_from(n).unwrap_or(0)).unwrap_or(&mut []);
        source.read_exact_at(part, start.saturating_add(done))?;
        if order == ByteOrder::Big {
            t.ggml_type.big_to_little(part)?;
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

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_whole_blocks_and_windows_whole_chunks() {
        let sizes = [0, 1, 2, 17, 33, 34, 35, 143, 144, 145, 210, 1000, 4096, CHUNK, WINDOW, u64::MAX];
        for block in [1, 2, 4, 8, 17, 18, 34, 36, 54, 144, 210, 292] {
            for chunk in sizes {
                for window in sizes {
                    let p = PieceSizes { window, chunk, min_mapped: 0 }.plan(block);
                    let b = block as usize;
                    assert!(p.chunk >= b && p.chunk % b == 0, "block {block}, chunk {chunk}: {p:?}");
                    assert!(p.window >= p.chunk && p.window % p.chunk == 0, "block {block}, window {window}: {p:?}");
                    // Never more than asked for, unless one block (or chunk) is more.
                    assert!(p.chunk as u64 <= chunk.max(block), "{p:?}");
                    assert!(p.window as u64 <= window.max(p.chunk as u64), "{p:?}");
                }
            }
        }
    }

    #[test]
    fn default_sizes_for_little_endian_bytes_are_unchanged() {
        // Block 1 (and 4) divides both defaults: the plan is the defaults.
        for block in [1, 2, 4] {
            let p = PieceSizes::default().plan(block);
            assert_eq!((p.chunk as u64, p.window as u64), (CHUNK, WINDOW));
        }
    }
}
