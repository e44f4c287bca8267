//! The skeleton's `value(root)` (docs/SPEC.md P7), written from a checked
//! tree, each tensor by its elements' digest.

use sha2::{Digest as _, Sha256};

use super::{MAX_DEPTH, Tree, int_value, str_value, u64_value};
use crate::error::{Error, Result};
use crate::hash::Sha256Digest;
use crate::pytorch::pickle::{Dict, Obj, ObjId};

impl Tree {
    /// Writes `value(root)` to `sink`, each tensor's elements digest taken
    /// from `digests` (in [`Tree::tensors`] order).
    pub fn write(&self, digests: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.write_value(self.root, digests, sink, 0)
    }

    fn write_value(
        &self,
        id: ObjId,
        digests: &[Sha256Digest],
        sink: &mut dyn FnMut(&[u8]),
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH.saturating_add(2) {
            return Err(Error::internal("a tree deeper than it was checked to be"));
        }
        let obj = self.objs.get(id).ok_or_else(|| Error::internal("an object out of range"))?;
        match obj {
            Obj::None => sink(&[0x00]),
            Obj::Bool(b) => sink(&[if *b { 0x02 } else { 0x01 }]),
            Obj::Int(i) => sink(&int_value(&i.minimal_le())),
            Obj::Float(bits) => {
                sink(&[0x04]);
                sink(&bits.to_le_bytes());
            }
            Obj::Complex(re, im) => {
                sink(&[0x05]);
                sink(&re.to_le_bytes());
                sink(&im.to_le_bytes());
            }
            Obj::Str(s) => sink(&str_value(s)),
            Obj::Bytes(b) => {
                sink(&[0x07]);
                sink(&Sha256::digest(b));
            }
            Obj::Tuple(items) | Obj::List(items) => {
                sink(&[if matches!(obj, Obj::Tuple(_)) { 0x08 } else { 0x09 }]);
                sink(&(items.len() as u64).to_le_bytes());
                for &i in items {
                    self.write_value(i, digests, sink, depth.saturating_add(1))?;
                }
            }
            Obj::Set(_) => {
                let items = self.set_items.get(&id).ok_or_else(|| Error::internal("a set not sorted"))?;
                sink(&[0x0A]);
                sink(&(items.len() as u64).to_le_bytes());
                for i in items {
                    sink(i);
                }
            }
            Obj::Dict(d) => {
                let attrs = self.attrs(d.attrs);
                if attrs.is_some() {
                    sink(&[0x0C]);
                }
                self.write_mapping(d, digests, sink, depth)?;
                if let Some(a) = attrs {
                    self.write_value(a, digests, sink, depth.saturating_add(1))?;
                }
            }
            Obj::Tensor(t) => {
                let no = *self.tensor_no.get(&id).ok_or_else(|| Error::internal("a tensor not listed"))?;
                let digest = digests.get(no).ok_or_else(|| Error::internal("a tensor without its digest"))?;
                let attrs = self.attrs(t.attrs);
                if attrs.is_some() {
                    sink(&[0x0E]);
                }
                sink(&[0x0D]);
                sink(&(t.dtype.name.len() as u32).to_le_bytes());
                sink(t.dtype.name.as_bytes());
                sink(&(t.size.len() as u32).to_le_bytes());
                for s in &t.size {
                    sink(&s.to_le_bytes());
                }
                sink(digest);
                if let Some(a) = attrs {
                    self.write_value(a, digests, sink, depth.saturating_add(1))?;
                }
            }
            Obj::Dtype(d) => {
                sink(&[0x0F]);
                sink(&Sha256::digest(d.name.as_bytes()));
            }
            Obj::Device(ty, index) => {
                sink(&[0x10]);
                sink(&str_value(ty));
                match index {
                    Some(i) => sink(&u64_value(*i)),
                    None => sink(&[0x00]),
                }
            }
            Obj::Global(_) | Obj::Storage(_) => return Err(Error::internal("a value of no kind left in the tree")),
        }
        Ok(())
    }

    fn write_mapping(
        &self,
        d: &Dict,
        digests: &[Sha256Digest],
        sink: &mut dyn FnMut(&[u8]),
        depth: usize,
    ) -> Result<()> {
        sink(&[0x0B]);
        sink(&(d.entries.len() as u64).to_le_bytes());
        for &(k, v) in &d.entries {
            sink(&self.key_value(k)?);
            self.write_value(v, digests, sink, depth.saturating_add(1))?;
        }
        Ok(())
    }
}
