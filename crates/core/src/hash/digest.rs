//! A model's finished [`Digest`]: its label and its jobs' digests.

use sha2::{Digest as _, Sha256};

use super::Sha256Digest;
use crate::error::Result;

/// A model's label, with the data digest of every job. The skeleton is
/// not kept: it is hashed as the format writes it (a model of a million
/// tensors has a skeleton of ~100 MB), and written again on request
/// (`Labelled::skeleton`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    label: Sha256Digest,
    tensor_sha256: Vec<Sha256Digest>,
}

impl Digest {
    /// The digest of a skeleton that `write` hands, a piece at a time, to
    /// the sink it is given; `tensor_sha256` are the jobs' digests (in the
    /// format's tensor order) it was written from.
    pub fn of_skeleton(
        tensor_sha256: Vec<Sha256Digest>,
        write: impl FnOnce(&[Sha256Digest], &mut dyn FnMut(&[u8])) -> Result<()>,
    ) -> Result<Digest> {
        let mut hasher = Sha256::new();
        write(&tensor_sha256, &mut |piece| hasher.update(piece))?;
        Ok(Digest { label: hasher.finalize().into(), tensor_sha256 })
    }

    /// The digest of a skeleton already hashed into `label`.
    pub fn from_label(label: Sha256Digest, tensor_sha256: Vec<Sha256Digest>) -> Digest {
        Digest { label, tensor_sha256 }
    }

    /// The label as 64 lowercase hex digits.
    pub fn label(&self) -> String {
        hex::encode(self.label)
    }

    /// The label's 32 bytes.
    pub fn label_bytes(&self) -> &Sha256Digest {
        &self.label
    }

    /// The SHA-256 of each tensor's data, in the model's tensor order.
    pub fn tensor_sha256(&self) -> &[Sha256Digest] {
        &self.tensor_sha256
    }
}
