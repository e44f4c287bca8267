//! The object a pickle built, walked as the label's tree (docs/SPEC.md P7):
//! every value checked to be of a kind the contract encodes, mappings
//! sorted by encoded key, sets sorted, cycles, depth and size bounded, the
//! distinct tensors listed with the key path where they are first reached;
//! and the skeleton's `value(root)` written from it.
//!
//! `walk` checks and sorts (the bounds, cycles, keys, sets); `write` writes
//! `value(root)`; `leaves` lists the leaves shown by key path.

mod leaves;
mod walk;
mod write;

pub use leaves::LeafValue;

use crate::pytorch::PytorchErrorKind;
use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result, Subject};
use crate::pytorch::pickle::{Obj, ObjId, Pickle, StorageUse, Tensor};

/// The deepest a container may be nested (the root container is level 1).
pub const MAX_DEPTH: usize = 1000;

/// The most values the tree may hold, a shared object counted each time it
/// is reached.
pub const MAX_VALUES: u64 = 1 << 26;

/// Bytes of tensor elements allowed beyond 16 × the storages' bytes.
pub const WORK_SLACK: u64 = 1 << 20;

/// A distinct tensor of the tree.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// Its object.
    pub obj: ObjId,
    /// The key path where it is first reached (keys and indices joined by `.`).
    pub path: String,
}

/// A checked tree: the pickle's objects with mappings sorted, and what the
/// skeleton and the jobs need.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The pickle's objects (mappings' entries sorted by encoded key).
    pub objs: Vec<Obj>,
    /// The root.
    pub root: ObjId,
    /// The storages the pickle names.
    pub storages: Vec<StorageUse>,
    /// The distinct tensors, in the order first reached (the jobs' order).
    pub tensors: Vec<Leaf>,
    tensor_no: HashMap<ObjId, usize>,
    set_items: HashMap<ObjId, Vec<Vec<u8>>>,
    /// Values counted, each shared object each time it is reached.
    pub values: u64,
    /// Times a tensor already listed was reached again (tied weights).
    pub tied: u64,
}

fn err(msg: impl Into<String>, path: &str) -> Error {
    let e = Error::new(PytorchErrorKind::Checkpoint(msg.into()));
    if path.is_empty() { e } else { e.about(Subject::Key(path.as_bytes().to_vec())) }
}

/// `0x06 || H(s)`.
fn str_value(s: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(33);
    v.push(0x06);
    v.extend_from_slice(&Sha256::digest(s));
    v
}

fn int_value(minimal: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(minimal.len().saturating_add(5));
    v.push(0x03);
    v.extend_from_slice(&(minimal.len() as u32).to_le_bytes());
    v.extend_from_slice(minimal);
    v
}

/// `value(int)` of a `u64`.
fn u64_value(i: u64) -> Vec<u8> {
    let mut b = i.to_le_bytes().to_vec();
    b.push(0);
    int_value(&crate::pytorch::pickle::Int::from_le(&b).minimal_le())
}
impl Tree {
    /// Checks and sorts the tree of a pickle.
    pub fn new(pickle: Pickle) -> Result<Tree> {
        let Pickle { mut objs, root, storages, .. } = pickle;
        let n = objs.len();
        let mut w = walk::Walk {
            objs: &mut objs,
            on_path: vec![false; n],
            sorted: vec![false; n],
            tensors: Vec::new(),
            tensor_no: HashMap::new(),
            set_items: HashMap::new(),
            values: 0,
            tied: 0,
        };
        w.walk(root, 0, "")?;
        let walk::Walk { tensors, tensor_no, set_items, values, tied, .. } = w;
        let tree = Tree { objs, root, storages, tensors, tensor_no, set_items, values, tied };
        tree.check_work()?;
        Ok(tree)
    }

    /// The tensor object of a leaf.
    pub fn tensor(&self, leaf: &Leaf) -> Option<&Tensor> {
        match self.objs.get(leaf.obj)? {
            Obj::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The work bound (P5): distinct tensors' bytes ≤ 16 × storages' bytes + 1 MiB.
    fn check_work(&self) -> Result<()> {
        let storage_bytes = self.storages.iter().fold(0u64, |a, s| a.saturating_add(s.nbytes()));
        let bound = storage_bytes.saturating_mul(16).saturating_add(WORK_SLACK);
        let mut total = 0u64;
        for leaf in &self.tensors {
            let nbytes = self.tensor(leaf).map_or(0, Tensor::nbytes);
            total = total.saturating_add(nbytes);
            if total > bound {
                return Err(err(
                    format!(
                        "the tensors read {total} bytes or more from {storage_bytes} bytes of storage (at most 16 × the storages + 1 MiB: \
                         an expanded view asks for more hashing than the file holds; save it contiguous)"
                    ),
                    &leaf.path,
                )
                .about(Subject::Tensor(leaf.path.as_bytes().to_vec())));
            }
        }
        Ok(())
    }
}

impl Tree {
    /// The attributes object when it is a non-empty mapping.
    fn attrs(&self, a: Option<ObjId>) -> Option<ObjId> {
        a.filter(|&a| matches!(self.objs.get(a), Some(Obj::Dict(d)) if !d.entries.is_empty()))
    }

    fn key_value(&self, k: ObjId) -> Result<Vec<u8>> {
        match self.objs.get(k) {
            Some(Obj::Str(s)) => Ok(str_value(s)),
            Some(Obj::Int(i)) => Ok(int_value(&i.minimal_le())),
            _ => Err(Error::internal("a key of no kind")),
        }
    }

    /// The text of a key, for paths.
    pub fn key_text(&self, k: ObjId) -> String {
        key_text(self.objs.get(k))
    }
}

fn key_text(o: Option<&Obj>) -> String {
    match o {
        Some(Obj::Str(s)) => String::from_utf8_lossy(s).into_owned(),
        Some(Obj::Int(i)) => match i {
            crate::pytorch::pickle::Int::Small(v) => v.to_string(),
            crate::pytorch::pickle::Int::Big(_) => "<big int>".into(),
        },
        _ => "?".into(),
    }
}

fn join(path: &str, part: &str) -> String {
    if path.is_empty() { part.to_string() } else { format!("{path}.{part}") }
}
