//! The tree's leaves as shown by key path (`--json`, `inspect`, `diff`):
//! a tensor by dtype, shape and digest, any other value as short text.

use sha2::{Digest as _, Sha256};

use super::{MAX_DEPTH, MAX_VALUES, Tree, join};
use crate::hash::Sha256Digest;
use crate::pytorch::pickle::{Int, Obj, ObjId};

/// A leaf of the tree as shown (`--json`, `inspect`, `diff`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafValue {
    /// A tensor.
    Tensor {
        /// Its dtype's name.
        dtype: &'static str,
        /// Its shape.
        shape: Vec<u64>,
        /// The digest of its elements.
        sha256: Sha256Digest,
    },
    /// Any other value: its kind and its text (a string's digest when it
    /// is long; an empty container as `[]`, `()` or `{}`).
    Value {
        /// `int`, `str`, `float`, …
        kind: &'static str,
        /// The value, as text.
        text: String,
    },
}

/// Strings longer than this are shown by their digest.
const SHOWN: usize = 200;

impl Tree {
    /// Every leaf by key path, in the skeleton's order.
    pub fn leaves(&self, digests: &[Sha256Digest]) -> Vec<(String, LeafValue)> {
        let mut out = Vec::new();
        self.leaves_of(self.root, String::new(), digests, &mut out, 0);
        out
    }

    fn leaves_of(
        &self,
        id: ObjId,
        path: String,
        digests: &[Sha256Digest],
        out: &mut Vec<(String, LeafValue)>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH.saturating_add(2) || out.len() as u64 > MAX_VALUES {
            return;
        }
        let value = |kind, text: String| LeafValue::Value { kind, text };
        let Some(o) = self.objs.get(id) else { return };
        let leaf = match o {
            Obj::None => value("none", "None".into()),
            Obj::Bool(b) => value("bool", if *b { "True" } else { "False" }.into()),
            Obj::Int(i) => value(
                "int",
                match i {
                    Int::Small(v) => v.to_string(),
                    Int::Big(b) => format!("0x{} (two's complement, little-endian)", hex::encode(b)),
                },
            ),
            Obj::Float(b) => value("float", format!("{:?}", f64::from_bits(*b))),
            Obj::Complex(re, im) => value("complex", format!("({:?}+{:?}j)", f64::from_bits(*re), f64::from_bits(*im))),
            Obj::Str(s) if s.len() <= SHOWN => value("str", crate::text::escape_bytes(s)),
            Obj::Str(s) => value("str", format!("{} bytes, sha256 {}", s.len(), hex::encode(Sha256::digest(s)))),
            Obj::Bytes(b) => value("bytes", format!("{} bytes, sha256 {}", b.len(), hex::encode(Sha256::digest(b)))),
            Obj::Dtype(d) => value("dtype", d.name.into()),
            Obj::Device(ty, i) => value(
                "device",
                match i {
                    Some(i) => format!("{}:{i}", crate::text::escape_bytes(ty)),
                    None => crate::text::escape_bytes(ty),
                },
            ),
            Obj::Tensor(t) => {
                let no = self.tensor_no.get(&id).copied().unwrap_or(usize::MAX);
                let sha256 = digests.get(no).copied().unwrap_or([0; 32]);
                out.push((path.clone(), LeafValue::Tensor { dtype: t.dtype.name, shape: t.size.clone(), sha256 }));
                if let Some(a) = self.attrs(t.attrs) {
                    self.leaves_of(a, join(&path, "@attributes"), digests, out, depth.saturating_add(1));
                }
                return;
            }
            Obj::Tuple(items) | Obj::List(items) if !items.is_empty() => {
                for (i, &item) in items.iter().enumerate() {
                    self.leaves_of(item, join(&path, &i.to_string()), digests, out, depth.saturating_add(1));
                }
                return;
            }
            Obj::Tuple(_) => value("tuple", "()".into()),
            Obj::List(_) => value("list", "[]".into()),
            Obj::Set(_) => {
                let n = self.set_items.get(&id).map_or(0, Vec::len);
                let mut h = Sha256::new();
                for i in self.set_items.get(&id).into_iter().flatten() {
                    h.update(i);
                }
                value("set", format!("{n} items, sha256 {}", hex::encode(h.finalize())))
            }
            Obj::Dict(d) => {
                if d.entries.is_empty() {
                    out.push((path.clone(), value("mapping", "{}".into())));
                }
                for &(k, v) in &d.entries {
                    self.leaves_of(v, join(&path, &self.key_text(k)), digests, out, depth.saturating_add(1));
                }
                if let Some(a) = self.attrs(d.attrs) {
                    self.leaves_of(a, join(&path, "@attributes"), digests, out, depth.saturating_add(1));
                }
                return;
            }
            Obj::Global(_) | Obj::Storage(_) => return,
        };
        out.push((path, leaf));
    }
}
