//! One hashing job per distinct tensor: a plain range for a contiguous
//! tensor alone in its storage, a `Gather` otherwise (a view, a shared or
//! big-endian storage).

use std::sync::Arc;

use super::{JobSpec, Placed};
use crate::error::{Error, Result};
use crate::hash::{Algorithm, Conversion, Gather, Swap};
use crate::pytorch::tree::Tree;

/// Whether a view of `size`/`stride` reads its elements in order, with no gap.
fn is_contiguous(size: &[u64], stride: &[u64]) -> bool {
    let mut expected = 1u64;
    for (s, t) in size.iter().zip(stride).rev() {
        if *s != 1 && *t != expected {
            return false;
        }
        expected = expected.saturating_mul(*s);
    }
    true
}

/// One job per distinct tensor (the tree's order).
pub(super) fn jobs(tree: &Tree, placed: &mut [Placed]) -> Result<Vec<JobSpec>> {
    for leaf in &tree.tensors {
        if let Some(p) = tree.tensor(leaf).and_then(|t| placed.get_mut(t.storage)) {
            p.users = p.users.saturating_add(1);
        }
    }
    let mut out = Vec::with_capacity(tree.tensors.len());
    for leaf in &tree.tensors {
        let t = tree.tensor(leaf).ok_or_else(|| Error::internal("a leaf that is no tensor"))?;
        let p = placed.get(t.storage).ok_or_else(|| Error::internal("storage out of range"))?;
        let d = t.dtype;
        let swap = if d.is_bool() {
            Swap::Bool
        } else if p.big_endian && d.word > 1 {
            Swap::Words(usize::try_from(d.word).unwrap_or(1))
        } else {
            Swap::None
        };
        let conversion = Conversion { block: d.size, swap, type_name: d.name, digest: Algorithm::Sha256 };
        let numel = t.numel();
        let first = t.offset.checked_mul(d.size).and_then(|o| o.checked_add(p.start));
        let Some(first) = first else {
            return Err(Error::internal("a checked tensor's offset overflows"));
        };
        if numel == 0 {
            out.push(JobSpec { file: p.file, start: p.start, len: 0, conversion, gather: None });
            continue;
        }
        let mut last = t.offset;
        for (s, st) in t.size.iter().zip(&t.stride) {
            last = last.saturating_add(s.saturating_sub(1).saturating_mul(*st));
        }
        let span = last.saturating_sub(t.offset).saturating_add(1).saturating_mul(d.size);
        if is_contiguous(&t.size, &t.stride) && p.users == 1 {
            out.push(JobSpec {
                file: p.file,
                start: first,
                len: numel.saturating_mul(d.size),
                conversion,
                gather: None,
            });
        } else {
            let g = Gather { elem: d.size, offset: 0, size: t.size.clone(), stride: t.stride.clone() };
            out.push(JobSpec { file: p.file, start: first, len: span, conversion, gather: Some(Arc::new(g)) });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity() {
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(is_contiguous(&[1, 3], &[7, 1]));
        assert!(is_contiguous(&[], &[]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(!is_contiguous(&[2, 3], &[0, 1]));
    }
}
