//! The canonical skeleton (spec §2): a fixed-size record per KV and per
//! tensor, in sorted order, with every payload replaced by its digest.

use sha2::{Digest as _, Sha256};

use crate::gguf::model::Model;
use crate::hash::Sha256Digest;

/// The skeleton's magic, `GGUF`.
pub const MAGIC: &[u8; 4] = b"GGUF";
/// The version the skeleton always declares.
pub const SKELETON_VERSION: u32 = 3;

/// Hands the skeleton of `model`, given the data digest of each of its
/// tensors in [`Model::tensors`] order, to `sink` a record at a time.
pub fn write_skeleton(model: &Model, tensor_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) {
    // One record at a time, in a buffer reused: a KV at most 32+4+44 bytes,
    // a tensor at most 32+4+32+4+8+32.
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&SKELETON_VERSION.to_le_bytes());
    out.extend_from_slice(&(model.tensors().len() as u64).to_le_bytes());
    out.extend_from_slice(&(model.kvs().len() as u64).to_le_bytes());
    out.extend_from_slice(&model.alignment().to_le_bytes());
    sink(&out);
    for m in model.kvs() {
        out.clear();
        out.extend_from_slice(&Sha256::digest(&m.kv.key));
        out.extend_from_slice(&m.kv.value.value_type().id().to_le_bytes());
        m.kv.value.write_canonical(&mut out);
        sink(&out);
    }
    for (t, data) in model.tensors().iter().zip(tensor_sha256) {
        out.clear();
        let shape = t.info.shape();
        out.extend_from_slice(&Sha256::digest(&t.info.name));
        out.extend_from_slice(&(shape.dims().len() as u32).to_le_bytes());
        for d in shape.dims() {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&t.info.ggml_type.id.to_le_bytes());
        out.extend_from_slice(&t.offset.to_le_bytes());
        out.extend_from_slice(data);
        sink(&out);
    }
}

/// The skeleton bytes of `model`, whole, given the data digest of each of
/// its tensors in [`Model::tensors`] order.
pub fn skeleton_bytes(model: &Model, tensor_sha256: &[Sha256Digest]) -> Vec<u8> {
    let mut out = Vec::new();
    write_skeleton(model, tensor_sha256, &mut |piece| out.extend_from_slice(piece));
    out
}

impl Model {
    /// The skeleton bytes (hashes every tensor).
    pub fn skeleton(&self) -> crate::error::Result<Vec<u8>> {
        let digest = self.digest()?;
        Ok(skeleton_bytes(self, digest.tensor_sha256()))
    }
}
