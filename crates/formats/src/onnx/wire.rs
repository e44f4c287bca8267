//! The protobuf wire reader (SPEC Part VI, X2), schema-driven: a
//! `ModelProto` read from the whole file into a tree of [`Msg`]s, every
//! record checked against the tables of `schema`. Tensors are read by
//! their own loop (`tensor`): their element bytes are never copied, only
//! located (`raw_data` as a byte range of the file) or, for the typed
//! fields, hashed in place once the tensor's type and shape are known.
//! Pure: no I/O.

use std::fmt;

use super::schema::{Field, M, Ty};
use crate::error::{Error, Result};

/// The highest field number protobuf allows.
const MAX_FIELD: u64 = (1 << 29) - 1;

/// One value of a field.
#[derive(Debug, Clone)]
pub enum Val {
    /// An `int32`, `int64` or enum.
    I(i64),
    /// A `uint64`, or a `double`'s bits.
    U(u64),
    /// A `float`'s bits.
    F(u32),
    /// A `string` or `bytes` value.
    S(Vec<u8>),
    /// A message.
    M(Box<Msg>),
    /// A tensor: its index in the model's tensors (`read::Parsed::tensors`).
    T(usize),
}

/// What a message holds in one of its fields.
#[derive(Debug, Clone, Default)]
pub enum Slot {
    /// Not written.
    #[default]
    Absent,
    /// A non-repeated field's value, and where its record began.
    One(Val, u64),
    /// A repeated field's values, in record order (possibly none).
    Many(Vec<Val>),
}

/// A parsed message: a slot per field of its table, in the table's order.
#[derive(Debug, Clone)]
pub struct Msg {
    /// Which message.
    pub m: M,
    /// The file offset of its first byte.
    pub at: u64,
    /// Its field path (`graph.node[3]`), for errors found later.
    pub path: String,
    /// One slot per field of `m.fields()`.
    pub slots: Vec<Slot>,
}

impl Msg {
    /// The slot of field `num`.
    pub fn slot(&self, num: u32) -> &Slot {
        self.m.field(num).and_then(|(i, _)| self.slots.get(i)).unwrap_or(&Slot::Absent)
    }

    /// The bytes of the string field `num` (empty when not written).
    pub fn str(&self, num: u32) -> &[u8] {
        match self.slot(num) {
            Slot::One(Val::S(s), _) => s,
            _ => &[],
        }
    }

    /// The integer field `num` (0 when not written).
    pub fn int(&self, num: u32) -> i64 {
        match self.slot(num) {
            Slot::One(Val::I(i), _) => *i,
            _ => 0,
        }
    }

    /// The message field `num`, when written.
    pub fn msg(&self, num: u32) -> Option<&Msg> {
        match self.slot(num) {
            Slot::One(Val::M(m), _) => Some(m),
            _ => None,
        }
    }

    /// The values of the repeated field `num`.
    pub fn many(&self, num: u32) -> &[Val] {
        match self.slot(num) {
            Slot::Many(v) => v,
            _ => &[],
        }
    }

    /// The messages of the repeated message field `num`.
    pub fn msgs(&self, num: u32) -> impl Iterator<Item = &Msg> {
        self.many(num).iter().filter_map(|v| match v {
            Val::M(m) => Some(m.as_ref()),
            _ => None,
        })
    }

    /// The tensor index of the tensor field `num`, when written.
    pub fn msg_tensor(&self, num: u32) -> Option<usize> {
        match self.slot(num) {
            Slot::One(Val::T(i), _) => Some(*i),
            _ => None,
        }
    }

    /// The strings of the repeated string field `num`.
    pub fn strs(&self, num: u32) -> impl Iterator<Item = &[u8]> {
        self.many(num).iter().filter_map(|v| match v {
            Val::S(s) => Some(s.as_slice()),
            _ => None,
        })
    }
}

/// A field path being read: each level names its parent, so a path is
/// written out only for an error or a tensor.
#[derive(Clone, Copy)]
pub struct FieldPath<'a> {
    up: Option<&'a FieldPath<'a>>,
    name: &'a str,
    index: Option<usize>,
}

impl<'a> FieldPath<'a> {
    /// The `ModelProto` itself.
    pub const ROOT: FieldPath<'static> = FieldPath { up: None, name: "", index: None };

    /// A path written out already (`graph.initializer[0]`).
    pub fn named(path: &'a str) -> FieldPath<'a> {
        FieldPath { up: Some(&ROOT_PATH), name: path, index: None }
    }

    /// The field `name` (its `index`-th value, for a repeated one) below this path.
    pub fn child<'b>(&'b self, name: &'b str, index: Option<usize>) -> FieldPath<'b> {
        FieldPath { up: Some(self), name, index }
    }

    fn write_parts(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(up) = self.up {
            up.write_parts(f)?;
            if up.up.is_some() {
                f.write_str(".")?;
            }
        }
        f.write_str(self.name)?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        Ok(())
    }
}

static ROOT_PATH: FieldPath<'static> = FieldPath::ROOT;

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.up.is_none() { f.write_str("ModelProto") } else { self.write_parts(f) }
    }
}

/// An ONNX error at `at` in the file, its message led by `path`.
pub fn err(path: impl fmt::Display, at: u64, what: impl fmt::Display) -> Error {
    Error::new(crate::onnx::OnnxErrorKind::Onnx(format!("{path}: {what}"))).at(at)
}

/// A record's value, as its wire type holds it.
#[derive(Debug, Clone, Copy)]
pub enum Rec {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (the 8 bytes as a little-endian number).
    Fixed64(u64),
    /// Wire type 5.
    Fixed32(u32),
    /// Wire type 2: the value's bytes `start..end` in the file.
    Len(usize, usize),
}

impl Rec {
    /// The wire type that holds such a value.
    pub fn wire_type(self) -> u8 {
        match self {
            Rec::Varint(_) => 0,
            Rec::Fixed64(_) => 1,
            Rec::Len(..) => 2,
            Rec::Fixed32(_) => 5,
        }
    }
}

/// The wire type a field's type takes.
fn wire_of(ty: Ty) -> u8 {
    match ty {
        Ty::Int32 | Ty::Int64 | Ty::Uint64 | Ty::Enum(_) => 0,
        Ty::Double => 1,
        Ty::Bytes | Ty::Msg(_) => 2,
        Ty::Float => 5,
    }
}

/// The bytes of the model file, read as protobuf records.
pub struct Wire<'a> {
    /// The whole file.
    pub buf: &'a [u8],
}

/// A varint at `pos`, before `end`: its value and the position after it.
pub fn varint(buf: &[u8], pos: usize, end: usize, path: &dyn fmt::Display) -> Result<(u64, usize)> {
    let mut v: u64 = 0;
    let mut p = pos;
    for i in 0..10u32 {
        let b = match buf.get(p) {
            Some(&b) if p < end => b,
            _ => return Err(err(path, pos as u64, "a varint runs past the end of its message")),
        };
        p = p.saturating_add(1);
        if i == 9 && b > 1 {
            return Err(err(path, pos as u64, "a varint does not fit 64 bits"));
        }
        v |= u64::from(b & 0x7f) << 7u32.saturating_mul(i);
        if b & 0x80 == 0 {
            return Ok((v, p));
        }
    }
    Err(err(path, pos as u64, "a varint does not fit 64 bits"))
}

impl Wire<'_> {
    /// The next record at `pos` (before `end`): its field number, its
    /// value, and the position after it.
    pub fn record(&self, pos: usize, end: usize, path: &FieldPath<'_>) -> Result<(u64, Rec, usize)> {
        let (tag, p) = varint(self.buf, pos, end, path)?;
        let (num, wt) = (tag >> 3, tag & 7);
        if matches!(wt, 3 | 4 | 6 | 7) {
            return Err(err(path, pos as u64, format!("wire type {wt} (field {num})")));
        }
        if num == 0 || num > MAX_FIELD {
            return Err(err(path, pos as u64, format!("field number {num}")));
        }
        let fixed = |n: usize| -> Result<&[u8]> {
            match p.checked_add(n).filter(|&e| e <= end).and_then(|e| self.buf.get(p..e)) {
                Some(b) => Ok(b),
                None => Err(err(
                    path,
                    pos as u64,
                    format!("a {}-bit value runs past the end of its message", n.saturating_mul(8)),
                )),
            }
        };
        Ok(match wt {
            0 => {
                let (v, q) = varint(self.buf, p, end, path)?;
                (num, Rec::Varint(v), q)
            }
            1 => {
                let b = fixed(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                (num, Rec::Fixed64(u64::from_le_bytes(a)), p.saturating_add(8))
            }
            5 => {
                let b = fixed(4)?;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                (num, Rec::Fixed32(u32::from_le_bytes(a)), p.saturating_add(4))
            }
            _ => {
                let (n, q) = varint(self.buf, p, end, path)?;
                let left = end.saturating_sub(q);
                let n = usize::try_from(n).ok().filter(|&n| n <= left).ok_or_else(|| {
                    err(path, pos as u64, format!("a length-delimited value of {n} bytes, {left} left"))
                })?;
                let e = q.saturating_add(n);
                (num, Rec::Len(q, e), e)
            }
        })
    }

    /// The numbers a record of the repeated or single numeric field `f`
    /// holds (one, or a packed run), each handed to `each` with its offset.
    pub fn numbers(
        &self,
        f: &Field,
        rec: Rec,
        at: usize,
        path: &FieldPath<'_>,
        each: &mut dyn FnMut(Val, u64) -> Result<()>,
    ) -> Result<()> {
        let want = wire_of(f.ty);
        match rec {
            Rec::Len(s, e) if f.rep && f.ty.is_number() => {
                let mut p = s;
                while p < e {
                    let (raw, q) = match f.ty {
                        Ty::Float | Ty::Double => {
                            let n = if f.ty == Ty::Float { 4 } else { 8 };
                            let b = p.checked_add(n).filter(|&q| q <= e).and_then(|q| self.buf.get(p..q));
                            let Some(b) = b else {
                                return Err(err(path, p as u64, "a packed record does not end on a value's end"));
                            };
                            let mut a = [0u8; 8];
                            a.get_mut(..n).unwrap_or(&mut []).copy_from_slice(b);
                            (u64::from_le_bytes(a), p.saturating_add(n))
                        }
                        _ => varint(self.buf, p, e, path)?,
                    };
                    each(scalar(f, raw, path, p as u64)?, p as u64)?;
                    p = q;
                }
                Ok(())
            }
            _ if rec.wire_type() != want => {
                Err(err(path, at as u64, format!("wire type {}, the field's type takes {want}", rec.wire_type())))
            }
            Rec::Varint(v) | Rec::Fixed64(v) => each(scalar(f, v, path, at as u64)?, at as u64),
            Rec::Fixed32(v) => each(scalar(f, u64::from(v), path, at as u64)?, at as u64),
            Rec::Len(..) => Err(Error::internal("a length-delimited record read as a number")),
        }
    }
}

/// One number of field `f` from its raw wire value, checked (X2).
pub fn scalar(f: &Field, raw: u64, path: &dyn fmt::Display, at: u64) -> Result<Val> {
    let signed = raw as i64;
    Ok(match f.ty {
        Ty::Float => Val::F(u32::try_from(raw).unwrap_or(0)),
        Ty::Double | Ty::Uint64 => Val::U(raw),
        Ty::Int64 => Val::I(signed),
        Ty::Int32 | Ty::Enum(_) => {
            if i32::try_from(signed).is_err() {
                return Err(err(path, at, format!("{signed} does not fit int32")));
            }
            if let Ty::Enum(values) = f.ty {
                if !values.contains(&signed) {
                    return Err(err(path, at, format!("{signed} is not a value of the field's enum")));
                }
            }
            Val::I(signed)
        }
        Ty::Bytes | Ty::Msg(_) => return Err(Error::internal("a number read for a length-delimited field")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_read_as_the_spec_writes_them() {
        let root = FieldPath::ROOT;
        assert_eq!(root.to_string(), "ModelProto");
        let g = root.child("graph", None);
        let n = g.child("node", Some(3));
        let a = n.child("attribute", Some(1));
        let t = a.child("t", None);
        assert_eq!(t.child("dims", None).to_string(), "graph.node[3].attribute[1].t.dims");
        assert_eq!(root.child("ir_version", None).to_string(), "ir_version");
    }

    #[test]
    fn varints_take_any_width_up_to_ten_bytes_and_sixty_four_bits() {
        let p: &dyn fmt::Display = &"x";
        assert_eq!(varint(&[0x80, 0x00], 0, 2, p).unwrap(), (0, 2));
        assert_eq!(varint(&[0xff; 9].iter().copied().chain([1]).collect::<Vec<_>>(), 0, 10, p).unwrap().0, u64::MAX);
        let e = varint(&[0xff; 9].iter().copied().chain([2]).collect::<Vec<_>>(), 0, 10, p).unwrap_err();
        assert!(e.to_string().contains("does not fit 64 bits"), "{e}");
        let e = varint(&[0x80, 0x80], 0, 2, p).unwrap_err();
        assert!(e.to_string().contains("past the end"), "{e}");
        // The end of the message bounds the varint, not the buffer's.
        assert!(varint(&[0x80, 0x00], 0, 1, p).is_err());
    }
}
