//! The PyTorch section of `diff`: two checkpoints compared leaf by leaf,
//! by key path (the formats' shared [`LeafDiff`]).

use std::collections::BTreeMap;

use super::model::Model;
use super::tree::LeafValue;
use crate::hash::Digest;
use crate::render::DiffOptions;
use crate::tensors_diff::{LeafDiff, LeafStyle};

/// How a checkpoints' diff is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct PytorchLeaves;

impl LeafStyle for PytorchLeaves {
    const FORMAT: &'static str = "pytorch";
    const NONE_DIFFER: &'static str = "every leaf is the same: a mapping's attributes or a set differ";
    const ESCAPE: bool = true;
}

/// What differs between two checkpoints: key paths only in the first
/// (`removed`), only in the second (`added`), and in both with other leaves
/// (`changed`).
pub type Diff = LeafDiff<PytorchLeaves>;

fn shown(v: &LeafValue) -> String {
    match v {
        LeafValue::Tensor { dtype, shape, sha256 } => format!("{dtype} {shape:?} sha256 {}", hex::encode(sha256)),
        LeafValue::Value { kind, text } => format!("{kind} {text}"),
    }
}

/// Compares two labelled checkpoints leaf by leaf.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, _opts: &DiffOptions) -> Diff {
    let la: BTreeMap<String, LeafValue> = a.tree().leaves(da.tensor_sha256()).into_iter().collect();
    let lb: BTreeMap<String, LeafValue> = b.tree().leaves(db.tensor_sha256()).into_iter().collect();
    LeafDiff::new(da, db, &la, &lb, shown)
}
