//! KV values: the 13 GGUF value types, how they are read in either byte
//! order, and their canonical (little-endian) skeleton encoding.
//!
//! Strings and arrays are never copied: a string is hashed where it lies,
//! and an array's canonical payload is hashed straight from the file for a
//! little-endian file, or re-encoded element by element into the hasher
//! (through a small stack buffer) for a big-endian one.

use crate::gguf::GgufErrorKind;
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind};
use crate::gguf::cursor::{ByteOrder, Cursor};
use crate::hash::Sha256Digest;
use crate::source::Step;

/// Arrays may nest this deep; an array at depth 9 is an error (spec §2).
pub const MAX_ARRAY_DEPTH: u32 = 8;

/// The GGUF value types (the `value_type` / `elem_type` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum ValueType {
    /// 0
    Uint8 = 0,
    /// 1
    Int8 = 1,
    /// 2
    Uint16 = 2,
    /// 3
    Int16 = 3,
    /// 4
    Uint32 = 4,
    /// 5
    Int32 = 5,
    /// 6
    Float32 = 6,
    /// 7: one byte, 0 or 1
    Bool = 7,
    /// 8: u64 length + bytes
    String = 8,
    /// 9: u32 element type + u64 count + elements
    Array = 9,
    /// 10
    Uint64 = 10,
    /// 11
    Int64 = 11,
    /// 12
    Float64 = 12,
}

impl ValueType {
    /// The type for a stored id, if it is one of the 13.
    pub fn from_id(id: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match id {
            0 => Uint8,
            1 => Int8,
            2 => Uint16,
            3 => Int16,
            4 => Uint32,
            5 => Int32,
            6 => Float32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => Uint64,
            11 => Int64,
            12 => Float64,
            _ => return None,
        })
    }

    /// The stored id.
    pub fn id(self) -> u32 {
        self as u32
    }

    /// The GGUF name, e.g. `UINT32`.
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            Uint8 => "UINT8",
            Int8 => "INT8",
            Uint16 => "UINT16",
            Int16 => "INT16",
            Uint32 => "UINT32",
            Int32 => "INT32",
            Float32 => "FLOAT32",
            Bool => "BOOL",
            String => "STRING",
            Array => "ARRAY",
            Uint64 => "UINT64",
            Int64 => "INT64",
            Float64 => "FLOAT64",
        }
    }

    /// Bytes per value for the fixed-size types; `None` for STRING and ARRAY.
    pub fn fixed_size(self) -> Option<u64> {
        use ValueType::*;
        match self {
            Uint8 | Int8 | Bool => Some(1),
            Uint16 | Int16 => Some(2),
            Uint32 | Int32 | Float32 => Some(4),
            Uint64 | Int64 | Float64 => Some(8),
            String | Array => None,
        }
    }

    /// The fewest bytes one stored value of this type can take.
    fn min_size(self) -> u64 {
        match self {
            ValueType::String => 8,
            ValueType::Array => 12,
            t => t.fixed_size().unwrap_or(1),
        }
    }

    fn read(c: &mut Cursor<'_>, what: &'static str) -> Result<ValueType, Step> {
        let at = c.pos();
        let id = c.u32(what)?;
        ValueType::from_id(id).ok_or_else(|| Error::new(GgufErrorKind::UnknownValueType(id)).at(at).into())
    }
}

/// A string value: its length and digest, and where its bytes lie in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringValue {
    /// Length in bytes.
    pub len: u64,
    /// SHA-256 of the bytes.
    pub sha256: Sha256Digest,
    /// File position of the first byte.
    pub file_offset: u64,
}

/// An array value: its element type, count and the digest of its canonical payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayValue {
    /// The element type.
    pub elem_type: ValueType,
    /// Number of elements.
    pub count: u64,
    /// SHA-256 of the canonical little-endian payload (spec §2).
    pub sha256: Sha256Digest,
    /// File position of the stored payload (after the count).
    pub file_offset: u64,
    /// Length of the stored payload in the file.
    pub file_len: u64,
}

/// One KV value. Scalars are held as values; strings and arrays as digests.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// UINT8
    Uint8(u8),
    /// INT8
    Int8(i8),
    /// UINT16
    Uint16(u16),
    /// INT16
    Int16(i16),
    /// UINT32
    Uint32(u32),
    /// INT32
    Int32(i32),
    /// FLOAT32, bit for bit
    Float32(f32),
    /// BOOL
    Bool(bool),
    /// STRING
    String(StringValue),
    /// ARRAY
    Array(ArrayValue),
    /// UINT64
    Uint64(u64),
    /// INT64
    Int64(i64),
    /// FLOAT64, bit for bit
    Float64(f64),
}

impl Value {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::Uint8(_) => ValueType::Uint8,
            Value::Int8(_) => ValueType::Int8,
            Value::Uint16(_) => ValueType::Uint16,
            Value::Int16(_) => ValueType::Int16,
            Value::Uint32(_) => ValueType::Uint32,
            Value::Int32(_) => ValueType::Int32,
            Value::Float32(_) => ValueType::Float32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::Uint64(_) => ValueType::Uint64,
            Value::Int64(_) => ValueType::Int64,
            Value::Float64(_) => ValueType::Float64,
        }
    }

    /// Appends the value's canonical skeleton encoding (spec §2, canonical_value).
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        match self {
            Value::Uint8(v) => out.push(*v),
            Value::Int8(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Bool(v) => out.push(u8::from(*v)),
            Value::Uint16(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int16(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Uint32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Float32(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            Value::Uint64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Float64(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            Value::String(s) => {
                out.extend_from_slice(&s.len.to_le_bytes());
                out.extend_from_slice(&s.sha256);
            }
            Value::Array(a) => {
                out.extend_from_slice(&a.elem_type.id().to_le_bytes());
                out.extend_from_slice(&a.count.to_le_bytes());
                out.extend_from_slice(&a.sha256);
            }
        }
    }

    /// The canonical encoding on its own; two values are the same content
    /// exactly when their types and canonical encodings are equal.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(44);
        self.write_canonical(&mut v);
        v
    }

    /// The value as an integer, for the integer types only (not BOOL).
    pub fn as_integer(&self) -> Option<i128> {
        Some(match self {
            Value::Uint8(v) => (*v).into(),
            Value::Int8(v) => (*v).into(),
            Value::Uint16(v) => (*v).into(),
            Value::Int16(v) => (*v).into(),
            Value::Uint32(v) => (*v).into(),
            Value::Int32(v) => (*v).into(),
            Value::Uint64(v) => (*v).into(),
            Value::Int64(v) => (*v).into(),
            _ => return None,
        })
    }

    /// Reads a value of type `ty` at the cursor.
    pub(crate) fn read(c: &mut Cursor<'_>, ty: ValueType) -> Result<Value, Step> {
        let at = c.pos();
        Ok(match ty {
            ValueType::Uint8 => Value::Uint8(c.u8("UINT8 value")?),
            ValueType::Int8 => Value::Int8(c.u8("INT8 value")? as i8),
            ValueType::Uint16 => Value::Uint16(c.u16("UINT16 value")?),
            ValueType::Int16 => Value::Int16(c.u16("INT16 value")? as i16),
            ValueType::Uint32 => Value::Uint32(c.u32("UINT32 value")?),
            ValueType::Int32 => Value::Int32(c.u32("INT32 value")? as i32),
            ValueType::Float32 => Value::Float32(f32::from_bits(c.u32("FLOAT32 value")?)),
            ValueType::Uint64 => Value::Uint64(c.u64("UINT64 value")?),
            ValueType::Int64 => Value::Int64(c.u64("INT64 value")? as i64),
            ValueType::Float64 => Value::Float64(f64::from_bits(c.u64("FLOAT64 value")?)),
            ValueType::Bool => match c.u8("BOOL value")? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return Err(Error::new(GgufErrorKind::InvalidBool(b)).at(at).into()),
            },
            ValueType::String => {
                let len = c.u64("string length")?;
                let file_offset = c.pos();
                let bytes = c.take(len, "string")?;
                Value::String(StringValue { len, sha256: Sha256::digest(bytes).into(), file_offset })
            }
            ValueType::Array => Value::Array(read_array(c)?),
        })
    }
}

/// Reads an array value (element type, count, payload) at depth 1.
fn read_array(c: &mut Cursor<'_>) -> Result<ArrayValue, Step> {
    let elem_type = ValueType::read(c, "array element type")?;
    let count = c.u64("array count")?;
    let file_offset = c.pos();
    let mut hasher = Sha256::new();
    match c.order() {
        ByteOrder::Little => {
            // The stored payload is already canonical: validate, then hash it in place.
            walk_elements(c, elem_type, count, 1, None::<&mut Reencoder<Sha256>>)?;
            hasher.update(c.slice(file_offset, c.pos()));
        }
        ByteOrder::Big => {
            let mut sink = Reencoder::new(&mut hasher);
            walk_elements(c, elem_type, count, 1, Some(&mut sink))?;
            sink.flush();
        }
    }
    Ok(ArrayValue {
        elem_type,
        count,
        sha256: hasher.finalize().into(),
        file_offset,
        file_len: c.pos().saturating_sub(file_offset),
    })
}

/// Where canonical array bytes go: a hasher, or a buffer.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Collects canonical bytes for a big-endian array in a small buffer, so the
/// sink sees large writes instead of one per element.
struct Reencoder<'h, S: Sink> {
    sink: &'h mut S,
    buf: [u8; 4096],
    len: usize,
}

impl<'h, S: Sink> Reencoder<'h, S> {
    fn new(sink: &'h mut S) -> Self {
        Reencoder { sink, buf: [0; 4096], len: 0 }
    }

    fn push(&mut self, bytes: &[u8]) {
        if bytes.len() > self.buf.len().saturating_sub(self.len) {
            self.flush();
        }
        let end = self.len.saturating_add(bytes.len());
        match self.buf.get_mut(self.len..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.len = end;
            }
            // Larger than the whole buffer (a long string): pass it on directly.
            None => self.sink.put(bytes),
        }
    }

    /// Pushes `n`-byte words, reversing each one.
    fn push_swapped(&mut self, words: &[u8], n: usize) {
        for w in words.chunks_exact(n) {
            let mut tmp = [0u8; 8];
            if let Some(t) = tmp.get_mut(..n) {
                t.copy_from_slice(w);
                t.reverse();
                self.push(t);
            }
        }
    }

    fn flush(&mut self) {
        self.sink.put(self.buf.get(..self.len).unwrap_or(&[]));
        self.len = 0;
    }
}

/// The canonical little-endian payload (spec §2) of an array whose stored
/// payload bytes (everything after its count, as read from the file at
/// [`ArrayValue::file_offset`], [`ArrayValue::file_len`] bytes) are `stored`.
///
/// For a little-endian file this is `stored` itself; for a big-endian one
/// every number is re-encoded. Used to show or compare array elements; the
/// label never needs it (digests are streamed while parsing).
pub fn canonical_payload(stored: &[u8], order: ByteOrder, elem_type: ValueType, count: u64) -> crate::Result<Vec<u8>> {
    let mut c = Cursor::new(stored, stored.len() as u64, order);
    let mut out = Vec::new();
    let mut sink = Reencoder::new(&mut out);
    let walked = walk_elements(&mut c, elem_type, count, 1, Some(&mut sink));
    sink.flush();
    match walked {
        Ok(()) => Ok(out),
        Err(Step::Fail(e)) => Err(e),
        Err(Step::NeedMore(at)) => {
            Err(Error::new(ErrorKind::Truncated { what: "array payload", needed: at, available: stored.len() as u64 }))
        }
    }
}

/// Validates `count` elements of `elem_type` that belong to an array at
/// `depth`, advancing past them; with a sink, feeds it their canonical bytes.
fn walk_elements(
    c: &mut Cursor<'_>,
    elem_type: ValueType,
    count: u64,
    depth: u32,
    mut sink: Option<&mut Reencoder<'_, impl Sink>>,
) -> Result<(), Step> {
    // The count field is the 8 bytes just read.
    c.check_count(count, elem_type.min_size(), "array count", c.pos().saturating_sub(8))?;
    match elem_type {
        ValueType::Bool => {
            let at = c.pos();
            let bytes = c.take(count, "BOOL array")?;
            if let Some(i) = bytes.iter().position(|&b| b > 1) {
                let b = bytes.get(i).copied().unwrap_or(0);
                return Err(Error::new(GgufErrorKind::InvalidBool(b)).at(at.saturating_add(i as u64)).into());
            }
            if let Some(s) = sink {
                s.push(bytes);
            }
        }
        ValueType::String => {
            for _ in 0..count {
                let len = c.u64("string length")?;
                let bytes = c.take(len, "string")?;
                if let Some(s) = sink.as_deref_mut() {
                    s.push(&len.to_le_bytes());
                    s.push(bytes);
                }
            }
        }
        ValueType::Array => {
            for _ in 0..count {
                if depth >= MAX_ARRAY_DEPTH {
                    let e = Error::new(GgufErrorKind::NestingTooDeep { max: MAX_ARRAY_DEPTH });
                    return Err(e.at(c.pos()).into());
                }
                let inner_type = ValueType::read(c, "array element type")?;
                let inner_count = c.u64("array count")?;
                if let Some(s) = sink.as_deref_mut() {
                    s.push(&inner_type.id().to_le_bytes());
                    s.push(&inner_count.to_le_bytes());
                }
                walk_elements(c, inner_type, inner_count, depth.saturating_add(1), sink.as_deref_mut())?;
            }
        }
        fixed => {
            let size = fixed.fixed_size().unwrap_or(1);
            // check_count above guarantees count * size fits in the file.
            let bytes = c.take(count.saturating_mul(size), "array payload")?;
            if let Some(s) = sink {
                match (size, c.order()) {
                    (1, _) | (_, ByteOrder::Little) => s.push(bytes),
                    (n, ByteOrder::Big) => s.push_swapped(bytes, n as usize),
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(bytes: &[u8], order: ByteOrder, ty: ValueType) -> Result<Value, Step> {
        let mut c = Cursor::new(bytes, bytes.len() as u64, order);
        Value::read(&mut c, ty)
    }

    #[test]
    fn nested_array_payload_is_its_wire_bytes() {
        // ARRAY of 2 ARRAYs of UINT8: [1, 2] and [3] (the example from vector b).
        let payload: Vec<u8> =
            [&0u32.to_le_bytes()[..], &2u64.to_le_bytes(), &[1, 2], &0u32.to_le_bytes(), &1u64.to_le_bytes(), &[3]]
                .concat();
        let mut le = [&9u32.to_le_bytes()[..], &2u64.to_le_bytes()].concat();
        le.extend_from_slice(&payload);
        let Ok(Value::Array(a)) = read_one(&le, ByteOrder::Little, ValueType::Array) else {
            panic!("not an array");
        };
        assert_eq!(a.sha256, <[u8; 32]>::from(Sha256::digest(&payload)));

        let be: Vec<u8> = [
            &9u32.to_be_bytes()[..],
            &2u64.to_be_bytes(),
            &0u32.to_be_bytes(),
            &2u64.to_be_bytes(),
            &[1, 2],
            &0u32.to_be_bytes(),
            &1u64.to_be_bytes(),
            &[3],
        ]
        .concat();
        let Ok(Value::Array(b)) = read_one(&be, ByteOrder::Big, ValueType::Array) else {
            panic!("not an array");
        };
        assert_eq!(a, ArrayValue { file_offset: a.file_offset, ..b });
    }

    #[test]
    fn big_endian_numbers_are_reencoded() {
        let be = [&4u32.to_be_bytes()[..], &2u64.to_be_bytes(), &[0, 0, 1, 0, 0, 0, 0, 7]].concat();
        let Ok(Value::Array(a)) = read_one(&be, ByteOrder::Big, ValueType::Array) else {
            panic!("not an array");
        };
        let want: [u8; 32] = Sha256::digest([0, 1, 0, 0, 7, 0, 0, 0]).into();
        assert_eq!(a.sha256, want);
    }

    #[test]
    fn canonical_payload_keeps_little_endian_and_swaps_big_endian() {
        let le = canonical_payload(&[1, 2, 3, 4], ByteOrder::Little, ValueType::Uint16, 2).unwrap();
        assert_eq!(le, vec![1, 2, 3, 4]);
        let be = canonical_payload(&[1, 2, 3, 4], ByteOrder::Big, ValueType::Uint16, 2).unwrap();
        assert_eq!(be, vec![2, 1, 4, 3]);
        let s = [&1u64.to_be_bytes()[..], b"x"].concat();
        let be = canonical_payload(&s, ByteOrder::Big, ValueType::String, 1).unwrap();
        assert_eq!(be, [&1u64.to_le_bytes()[..], b"x"].concat());
    }

    #[test]
    fn canonical_scalars() {
        assert_eq!(Value::Int16(-2).canonical_bytes(), vec![0xfe, 0xff]);
        assert_eq!(Value::Float32(0.5).canonical_bytes(), vec![0, 0, 0, 0x3f]);
        assert_eq!(Value::Bool(true).canonical_bytes(), vec![1]);
    }

    #[test]
    fn bool_2_is_rejected_in_arrays_at_depth() {
        let b = [&7u32.to_le_bytes()[..], &3u64.to_le_bytes(), &[0, 1, 2]].concat();
        assert!(read_one(&b, ByteOrder::Little, ValueType::Array).is_err());
    }

    #[test]
    fn empty_array_of_unknown_type_is_rejected() {
        let b = [&13u32.to_le_bytes()[..], &0u64.to_le_bytes()].concat();
        assert!(read_one(&b, ByteOrder::Little, ValueType::Array).is_err());
    }
}
