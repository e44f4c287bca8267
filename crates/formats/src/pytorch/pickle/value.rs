//! What a pickle builds: objects in an arena (`Obj`, shared by index),
//! integers of any width, mappings, storages and tensors.

use super::globals::{Global, StorageClass};
use crate::pytorch::dtype::Dtype;

/// An object's index in [`Pickle::objs`](super::Pickle::objs).
pub type ObjId = usize;

/// An integer: an `i64` when it fits, else its minimal two's complement
/// bytes, little-endian.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Int {
    /// Fits 64 bits.
    Small(i64),
    /// Does not: its minimal two's complement bytes, little-endian.
    Big(Box<[u8]>),
}

impl Int {
    /// The integer of little-endian two's complement bytes.
    pub fn from_le(bytes: &[u8]) -> Int {
        let min = minimal(bytes);
        if min.len() <= 8 {
            let fill = if min.last().is_some_and(|b| b & 0x80 != 0) { 0xFF } else { 0 };
            let mut b = [fill; 8];
            for (o, v) in b.iter_mut().zip(min) {
                *o = *v;
            }
            Int::Small(i64::from_le_bytes(b))
        } else {
            Int::Big(min.into())
        }
    }

    /// Its minimal two's complement bytes, little-endian (0 is none).
    pub fn minimal_le(&self) -> Vec<u8> {
        match self {
            Int::Small(v) => minimal(&v.to_le_bytes()).to_vec(),
            Int::Big(b) => b.to_vec(),
        }
    }

    /// The value as a `u64`, when it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Int::Small(v) => u64::try_from(*v).ok(),
            Int::Big(_) => None,
        }
    }
}

/// The shortest prefix of little-endian two's complement `bytes` with the
/// same value.
fn minimal(bytes: &[u8]) -> &[u8] {
    let mut n = bytes.len();
    while let Some(top) = n.checked_sub(1).and_then(|i| bytes.get(i)) {
        let below = n.checked_sub(2).and_then(|i| bytes.get(i));
        let redundant = match (top, below) {
            (0x00, None) => true,
            (0x00, Some(b)) => b & 0x80 == 0,
            (0xFF, Some(b)) => b & 0x80 != 0,
            _ => false,
        };
        if !redundant {
            break;
        }
        n = n.saturating_sub(1);
    }
    bytes.get(..n).unwrap_or(&[])
}

/// A mapping's kind: not content, but `BUILD` applies only to an `OrderedDict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictKind {
    /// `EMPTY_DICT`.
    Plain,
    /// `collections.OrderedDict`.
    Ordered,
    /// `collections.Counter`.
    Counter,
}

/// A mapping under construction or built.
#[derive(Debug, Clone)]
pub struct Dict {
    /// Its entries, as set (sorted by encoded key when the tree is walked).
    pub entries: Vec<(ObjId, ObjId)>,
    /// Which constructor made it.
    pub kind: DictKind,
    /// The state a `BUILD` gave it (its attributes when non-empty).
    pub attrs: Option<ObjId>,
}

/// A storage the pickle names through a persistent id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageUse {
    /// Its key (the record `data/<key>`, or a legacy key).
    pub key: Box<[u8]>,
    /// Its class.
    pub class: StorageClass,
    /// Its element count, as the id states it.
    pub numel: u64,
    /// The offset of the first `BINPERSID` naming it.
    pub at: u64,
}

impl StorageUse {
    /// Its bytes (checked when the id was read).
    pub fn nbytes(&self) -> u64 {
        self.numel.saturating_mul(self.class.elem())
    }
}

/// A tensor: its storage, dtype and geometry (checked against the storage's
/// stated size when it was built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Index into [`Pickle::storages`](super::Pickle::storages).
    pub storage: usize,
    /// Its dtype.
    pub dtype: &'static Dtype,
    /// The storage offset, in elements of `dtype`.
    pub offset: u64,
    /// Its shape.
    pub size: Vec<u64>,
    /// Its strides, in elements.
    pub stride: Vec<u64>,
    /// Its attributes (a parameter's state), when any were given.
    pub attrs: Option<ObjId>,
    /// The offset of the call that built it.
    pub at: u64,
}

impl Tensor {
    /// The number of elements (checked when built).
    pub fn numel(&self) -> u64 {
        self.size.iter().try_fold(1u64, |a, &s| a.checked_mul(s)).unwrap_or(u64::MAX)
    }

    /// Bytes of its elements.
    pub fn nbytes(&self) -> u64 {
        self.numel().saturating_mul(self.dtype.size)
    }
}

/// An object the pickle built.
#[derive(Debug, Clone)]
pub enum Obj {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An int.
    Int(Int),
    /// A float's bits.
    Float(u64),
    /// A complex number's two parts' bits.
    Complex(u64, u64),
    /// A string's bytes (UTF-8, surrogates as Python's `surrogatepass` writes them).
    Str(Box<[u8]>),
    /// Bytes.
    Bytes(Box<[u8]>),
    /// A tuple (`torch.Size` too).
    Tuple(Vec<ObjId>),
    /// A list.
    List(Vec<ObjId>),
    /// A set's items, as given.
    Set(Vec<ObjId>),
    /// A mapping.
    Dict(Dict),
    /// A name a `GLOBAL` pushed (a class or a function: no value).
    Global(Global),
    /// A storage (index into [`Pickle::storages`](super::Pickle::storages)): no value.
    Storage(usize),
    /// A tensor.
    Tensor(Tensor),
    /// A dtype.
    Dtype(&'static Dtype),
    /// A device: its type and index.
    Device(Box<[u8]>, Option<u64>),
}

impl Obj {
    /// What it is, in words.
    pub fn what(&self) -> &'static str {
        match self {
            Obj::None => "None",
            Obj::Bool(_) => "a bool",
            Obj::Int(_) => "an int",
            Obj::Float(_) => "a float",
            Obj::Complex(..) => "a complex number",
            Obj::Str(_) => "a string",
            Obj::Bytes(_) => "bytes",
            Obj::Tuple(_) => "a tuple",
            Obj::List(_) => "a list",
            Obj::Set(_) => "a set",
            Obj::Dict(_) => "a mapping",
            Obj::Global(_) => "a class or function",
            Obj::Storage(_) => "a storage",
            Obj::Tensor(_) => "a tensor",
            Obj::Dtype(_) => "a dtype",
            Obj::Device(..) => "a device",
        }
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn ints_are_minimal() {
        for (bytes, min) in [
            (&[][..], &[][..]),
            (&[0], &[]),
            (&[0x7F, 0], &[0x7F]),
            (&[0x80, 0], &[0x80, 0]),
            (&[0xFF, 0xFF], &[0xFF]),
            (&[0x7F, 0xFF], &[0x7F, 0xFF]),
        ] {
            assert_eq!(minimal(bytes), min, "{bytes:?}");
        }
        assert_eq!(Int::from_le(&[0xFF; 10]), Int::Small(-1));
        assert_eq!(Int::from_le(&[0x80, 0]).minimal_le(), vec![0x80, 0]);
        let big = Int::from_le(&[1; 255]);
        assert_eq!(big.minimal_le().len(), 255);
        assert_eq!(Int::Small(0).minimal_le(), Vec::<u8>::new());
        assert_eq!(Int::Small(-129).minimal_le(), vec![0x7F, 0xFF]);
    }
}
