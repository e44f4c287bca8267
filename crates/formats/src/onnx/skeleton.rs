//! The ONNX skeleton (SPEC Part VI, X3): `"ONNX" || LE_u32(1) ||
//! enc(ModelProto)`, every message its content fields in ascending field
//! number, tensors by X3.2 with their elements' digests. Handed to a sink
//! a piece at a time; the sorted lists' duplicate keys are refused when
//! the model is read (`read::check_sorted`), so writing cannot fail on input.

use sha2::{Digest as _, Sha256};

use super::read::sorted;
use super::schema::{Field, M, Order, Ty};
use super::tensor::Tensor;
use super::wire::{Msg, Slot, Val};
use crate::hash::Sha256Digest;

/// The skeleton's magic.
pub const MAGIC: &[u8; 4] = b"ONNX";

fn h(bytes: &[u8]) -> Sha256Digest {
    Sha256::digest(bytes).into()
}

/// Writes skeletons: the tensors and their elements' digests at hand.
pub struct Writer<'a> {
    /// Every tensor of the model.
    pub tensors: &'a [Tensor],
    /// Each tensor's elements digest, by its index.
    pub elements: &'a dyn Fn(usize) -> Sha256Digest,
    /// Where the bytes go.
    pub sink: &'a mut dyn FnMut(&[u8]),
}

impl Writer<'_> {
    /// The whole skeleton of `model`.
    pub fn model(&mut self, model: &Msg) {
        (self.sink)(MAGIC);
        (self.sink)(&1u32.to_le_bytes());
        self.msg(model);
    }

    fn put(&mut self, b: &[u8]) {
        (self.sink)(b);
    }

    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }

    /// One message's encoding alone (`diff` compares attributes by it).
    pub fn message(&mut self, m: &Msg) {
        self.msg(m);
    }

    fn msg(&mut self, m: &Msg) {
        if m.m == M::Sparse {
            return self.sparse(m);
        }
        let fields = m.m.fields();
        let mut done: Vec<&'static str> = Vec::new();
        for (f, slot) in fields.iter().zip(&m.slots) {
            if let Some(group) = f.oneof {
                if done.contains(&group) {
                    continue;
                }
                done.push(group);
                let member =
                    fields.iter().zip(&m.slots).find(|(g, s)| g.oneof == Some(group) && !matches!(s, Slot::Absent));
                match member {
                    Some((g, Slot::One(v, _))) => {
                        self.put(&g.num.to_le_bytes());
                        self.val(g, Some(v));
                    }
                    _ => self.put(&0u32.to_le_bytes()),
                }
                continue;
            }
            match (f.rep, slot) {
                (true, Slot::Many(vals)) => {
                    let (items, _) = sorted(vals, f.order, self.tensors);
                    self.u64(items.len() as u64);
                    for v in items {
                        self.val(f, Some(v));
                    }
                }
                (true, _) => self.u64(0),
                (false, Slot::One(v, _)) => {
                    if matches!(f.ty, Ty::Msg(_)) {
                        self.put(&[1]);
                    }
                    self.val(f, Some(v));
                }
                (false, _) => {
                    if matches!(f.ty, Ty::Msg(_)) {
                        self.put(&[0]);
                    } else {
                        self.val(f, None);
                    }
                }
            }
        }
    }

    /// One value of field `f` (a scalar's default when `None`).
    fn val(&mut self, f: &Field, v: Option<&Val>) {
        match (f.ty, v) {
            (_, Some(Val::M(m))) => self.msg(m),
            (_, Some(Val::T(i))) => self.tensor(*i),
            (Ty::Bytes, Some(Val::S(s))) => self.put(&h(s)),
            (Ty::Bytes, _) => self.put(&h(b"")),
            (Ty::Float, Some(Val::F(bits))) => self.put(&bits.to_le_bytes()),
            (Ty::Float, _) => self.put(&[0; 4]),
            (Ty::Uint64 | Ty::Double, Some(Val::U(u))) => self.u64(*u),
            (_, Some(Val::I(i))) => self.put(&i.to_le_bytes()),
            _ => self.u64(0),
        }
    }

    /// X3.2: a tensor.
    fn tensor(&mut self, i: usize) {
        let Some(t) = self.tensors.get(i) else { return };
        self.put(&h(&t.name));
        self.put(&(t.dtype.name.len() as u32).to_le_bytes());
        self.put(t.dtype.name.as_bytes());
        self.u64(t.dims.len() as u64);
        for &d in &t.dims {
            self.u64(d);
        }
        self.put(&h(&t.doc));
        let (items, _) = sorted(&t.meta, Order::By(&[1]), self.tensors);
        self.u64(items.len() as u64);
        for v in items {
            if let Val::M(m) = v {
                self.msg(m);
            }
        }
        let digest = (self.elements)(i);
        self.put(&digest);
    }

    /// X3.2: a sparse tensor.
    fn sparse(&mut self, m: &Msg) {
        for num in [1, 2] {
            if let Some(i) = m.msg_tensor(num) {
                self.tensor(i);
            }
        }
        let dims = m.many(3);
        self.u64(dims.len() as u64);
        for d in dims {
            if let Val::I(d) = d {
                self.u64(*d as u64);
            }
        }
    }
}
