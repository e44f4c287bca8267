//! The safetensors skeleton (docs/SPEC.md, "Safetensors"): magic `SFTN`,
//! the metadata groups once each in digest order, then one record per
//! tensor in name order carrying its group's digest.

use sha2::{Digest as _, Sha256};

use crate::hash::Sha256Digest;
use crate::safetensors::model::Model;

/// The skeleton's magic: a safetensors label never equals a GGUF one.
pub const MAGIC: &[u8; 4] = b"SFTN";
/// The skeleton version.
pub const SKELETON_VERSION: u32 = 1;

/// Hands the skeleton of `model`, given the data digest of each of its
/// tensors in [`Model::tensors`] order, to `sink` a record at a time.
pub fn write_skeleton(model: &Model, tensor_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) {
    let mut s = Vec::with_capacity(256);
    s.extend_from_slice(MAGIC);
    s.extend_from_slice(&SKELETON_VERSION.to_le_bytes());
    s.extend_from_slice(&(model.tensors().len() as u64).to_le_bytes());
    s.extend_from_slice(&(model.groups().len() as u64).to_le_bytes());
    sink(&s);
    for g in model.groups() {
        sink(&g.bytes);
    }
    for (t, sha) in model.tensors().iter().zip(tensor_sha256) {
        s.clear();
        let e = &t.entry;
        s.extend_from_slice(&Sha256::digest(e.name.as_bytes()));
        s.extend_from_slice(&(e.dtype.name.len() as u32).to_le_bytes());
        s.extend_from_slice(e.dtype.name.as_bytes());
        s.extend_from_slice(&(e.shape.len() as u32).to_le_bytes());
        for d in &e.shape {
            s.extend_from_slice(&d.to_le_bytes());
        }
        s.extend_from_slice(&t.offset.to_le_bytes());
        s.extend_from_slice(sha);
        s.extend_from_slice(&model.group_of(t).map(|g| g.digest).unwrap_or_default());
        sink(&s);
    }
}

/// The skeleton bytes of `model`, whole, given the data digest of each of
/// its tensors in [`Model::tensors`] order.
pub fn skeleton_bytes(model: &Model, tensor_sha256: &[Sha256Digest]) -> Vec<u8> {
    let mut out = Vec::new();
    write_skeleton(model, tensor_sha256, &mut |piece| out.extend_from_slice(piece));
    out
}
