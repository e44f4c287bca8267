//! A PyTorch checkpoint against a safetensors model, tensor by tensor:
//! their labels differ by format, so `diff` compares what both contracts
//! hash alike (each tensor's name, dtype, shape and elements digest), and
//! names the tensors one side lacks whose elements are the other's (tied
//! weights a conversion dropped). The comparison is the formats' shared
//! one (`crate::tensors_diff`); here, a checkpoint's tensors as its rows.

pub use crate::tensors_diff::{TensorRow, TensorsDiff, safetensors_rows};

use crate::hash::Digest;
use crate::pytorch::Model;

/// A checkpoint's distinct tensors as rows (a tied tensor under its first key).
pub(crate) fn pytorch_rows(m: &Model, d: &Digest) -> Vec<TensorRow> {
    let tree = m.tree();
    tree.tensors
        .iter()
        .zip(d.tensor_sha256())
        .filter_map(|(leaf, sha)| {
            let t = tree.tensor(leaf)?;
            Some(TensorRow {
                name: leaf.path.clone(),
                dtype: t.dtype.name.into(),
                shape: t.size.clone(),
                sha256: hex::encode(sha),
            })
        })
        .collect()
}
