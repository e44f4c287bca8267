//! What is in a model, and what a user should know about it (`gguf-digest inspect`).
//!
//! Everything shown comes from what labelling already computed (the parsed
//! headers, KVs and tensor infos, and each tensor's data digest) plus short
//! reads of string and array bytes. Nothing is loaded whole: a string is
//! read only as far as it is shown, an array only as far as its shown
//! elements, and the UTF-8 check streams through a small buffer.
//!
//! The warnings are about loadability and convention, never about the label:
//! a file that gets a label holds a well-defined model whatever they say.
//!
//! The reading helpers here ([`show_value`], [`first_difference`]) are also
//! what `gguf-digest diff` uses to show values and locate changed elements.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::collections::{BTreeMap, HashSet};
use std::fmt::{self, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};
use sha2::{Digest as _, Sha256};

use crate::batch::{BatchOptions, digest_paths};
use crate::bytes::{ByteOrder, escape_bytes};
use crate::error::{Error, ErrorKind, Result};
use crate::ggml_type::GgmlType;
use crate::hash::Digest;
use crate::model::{Model, ModelKv, Shard};
use crate::output::{JSON_FORMAT, value_json};
use crate::parse::{GgufFile, SPLIT_PREFIX, align_up};
use crate::source::Source;
use crate::value::{ArrayValue, MAX_ARRAY_DEPTH, Sha256Digest, Value, ValueType, canonical_payload};

/// llama.cpp's default `GGML_MAX_NAME`: a tensor name must be shorter, as
/// it is stored with its NUL in a fixed 64-byte field.
pub const LLAMA_CPP_MAX_NAME: usize = 64;

/// How much of a model `inspect` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InspectOptions {
    /// Bytes of a string shown before it is elided (its length is shown).
    pub width: usize,
    /// Array elements shown per KV, nested elements included.
    pub items: usize,
    /// Tensors listed, in file order; `None` lists all of them.
    pub limit: Option<usize>,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions { width: 64, items: 8, limit: None }
    }
}

// ---------------------------------------------------------------------------
// Showing values

/// A value prepared for showing: numbers as they are, strings and arrays cut
/// to what is shown, with their full length or count kept beside.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// UINT8, UINT16, UINT32 or UINT64.
    Uint(u64),
    /// INT8, INT16, INT32 or INT64.
    Int(i64),
    /// FLOAT32, bit for bit.
    F32(f32),
    /// FLOAT64, bit for bit.
    F64(f64),
    /// BOOL.
    Bool(bool),
    /// A string: its first bytes (never a partial UTF-8 character when the
    /// cut falls inside one) and its whole length.
    Str {
        /// The bytes shown.
        prefix: Vec<u8>,
        /// The string's length in bytes.
        len: u64,
    },
    /// An array: element type, count and the first elements.
    Array {
        /// The element type.
        elem_type: ValueType,
        /// Number of elements in the file.
        count: u64,
        /// The elements shown (a prefix of all of them).
        elements: Vec<Shown>,
    },
}

impl Shown {
    /// The JSON form: numbers and bools as JSON values (non-finite floats as
    /// the strings `NaN`, `inf`, `-inf`); a string as a JSON string when it is
    /// whole and valid UTF-8, else as `{text, len, hex?}`; an array as
    /// `{elem_type, count, elements}`.
    pub fn to_json(&self) -> Json {
        match self {
            Shown::Uint(v) => json!(v),
            Shown::Int(v) => json!(v),
            Shown::F32(v) => float_json(&format!("{v:?}"), v.is_finite()),
            Shown::F64(v) => float_json(&format!("{v:?}"), v.is_finite()),
            Shown::Bool(v) => json!(v),
            Shown::Str { prefix, len } => match std::str::from_utf8(prefix) {
                Ok(s) if prefix.len() as u64 == *len => json!(s),
                _ => {
                    let mut o = Map::new();
                    crate::output::put_name(&mut o, "text", prefix);
                    o.insert("len".into(), json!(len));
                    Json::Object(o)
                }
            },
            Shown::Array { elem_type, count, elements } => json!({
                "elem_type": elem_type.name(),
                "count": count,
                "elements": elements.iter().map(Shown::to_json).collect::<Vec<_>>(),
            }),
        }
    }
}

/// A float as its shortest decimal form, which is what `Debug` prints; JSON
/// has no NaN or infinity, so those stay text.
fn float_json(text: &str, finite: bool) -> Json {
    match text.parse::<f64>() {
        Ok(v) if finite => json!(v),
        _ => json!(text),
    }
}

impl fmt::Display for Shown {
    /// Strings in single quotes, escaped with [`escape_bytes`]; a cut string is
    /// followed by `… (N bytes)`; an array is `TYPE[count] [e0, e1, … N more]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Uint(v) => write!(f, "{v}"),
            Shown::Int(v) => write!(f, "{v}"),
            Shown::F32(v) => write!(f, "{v:?}"),
            Shown::F64(v) => write!(f, "{v:?}"),
            Shown::Bool(v) => write!(f, "{v}"),
            Shown::Str { prefix, len } => {
                write!(f, "'{}'", escape_bytes(prefix))?;
                if (prefix.len() as u64) < *len {
                    write!(f, "… ({len} bytes)")?;
                }
                Ok(())
            }
            Shown::Array { elem_type, count, elements } => {
                write!(f, "{}[{count}] [", elem_type.name())?;
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                let more = count.saturating_sub(elements.len() as u64);
                if more > 0 {
                    if !elements.is_empty() {
                        f.write_str(", ")?;
                    }
                    write!(f, "… {more} more")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// Shows a KV value of `shard`: scalars as they are, a string up to `width`
/// bytes, an array's first `items` elements (nested ones counted too), each
/// string element up to `width` bytes.
pub fn show_value(shard: &Shard, value: &Value, width: usize, items: usize) -> Result<Shown> {
    let source = &shard.source;
    Ok(match value {
        Value::Uint8(v) => Shown::Uint(u64::from(*v)),
        Value::Uint16(v) => Shown::Uint(u64::from(*v)),
        Value::Uint32(v) => Shown::Uint(u64::from(*v)),
        Value::Uint64(v) => Shown::Uint(*v),
        Value::Int8(v) => Shown::Int(i64::from(*v)),
        Value::Int16(v) => Shown::Int(i64::from(*v)),
        Value::Int32(v) => Shown::Int(i64::from(*v)),
        Value::Int64(v) => Shown::Int(*v),
        Value::Float32(v) => Shown::F32(*v),
        Value::Float64(v) => Shown::F64(*v),
        Value::Bool(v) => Shown::Bool(*v),
        Value::String(s) => {
            let end = s.file_offset.saturating_add(s.len);
            let mut stream = Stream::new(source, shard.file.byte_order, s.file_offset, end);
            Shown::Str { prefix: stream.prefix(s.len, width)?, len: s.len }
        }
        Value::Array(a) => {
            let mut stream = array_stream(shard, a);
            let mut budget = items;
            let elements = show_elements(&mut stream, a.elem_type, a.count, 1, &mut budget, width, false)?;
            Shown::Array { elem_type: a.elem_type, count: a.count, elements }
        }
    })
}

/// A stream over an array's stored payload.
fn array_stream<'a>(shard: &'a Shard, a: &ArrayValue) -> Stream<'a> {
    let end = a.file_offset.saturating_add(a.file_len);
    Stream::new(&shard.source, shard.file.byte_order, a.file_offset, end)
}

/// Bytes read from a file per `pread` while walking strings and arrays.
const STREAM_BUF: usize = 64 * 1024;

/// How many fixed-size elements of `size` bytes one read takes.
fn elements_per_read(size: u64) -> u64 {
    (STREAM_BUF as u64).checked_div(size).unwrap_or(1).max(1)
}

/// Reads one byte range of a file front to back through a small buffer.
///
/// The range was validated when the file was parsed; a read that does not
/// fit it now means the file changed, and is reported as such.
struct Stream<'a> {
    source: &'a Source,
    order: ByteOrder,
    /// File position of `buf[0]`.
    buf_pos: u64,
    buf: Vec<u8>,
    /// Index in `buf` of the next unread byte.
    next: usize,
    /// End of the range (exclusive).
    end: u64,
}

impl<'a> Stream<'a> {
    fn new(source: &'a Source, order: ByteOrder, start: u64, end: u64) -> Self {
        Stream { source, order, buf_pos: start, buf: Vec::new(), next: 0, end }
    }

    fn pos(&self) -> u64 {
        self.buf_pos.saturating_add(self.next as u64)
    }

    fn changed(&self, what: &str) -> Error {
        Error::new(ErrorKind::FileChanged(format!("{what} no longer fits where it was parsed")))
            .at(self.pos())
            .in_file(self.source.path())
    }

    fn buffered(&self) -> usize {
        self.buf.len().saturating_sub(self.next)
    }

    /// The next `n` bytes of the range.
    fn take(&mut self, n: u64, what: &str) -> Result<&[u8]> {
        if n > self.end.saturating_sub(self.pos()) {
            return Err(self.changed(what));
        }
        let n = usize::try_from(n).map_err(|_| self.changed(what))?;
        if self.buffered() < n {
            // Keep the unread bytes, then read at least a whole buffer's worth.
            let pos = self.pos();
            self.buf.drain(..self.next.min(self.buf.len()));
            self.buf_pos = pos;
            self.next = 0;
            let have = self.buf.len();
            let room = usize::try_from(self.end.saturating_sub(pos)).unwrap_or(usize::MAX);
            let want = n.max(STREAM_BUF).min(room);
            self.buf.resize(want, 0);
            let tail = self.buf.get_mut(have..).unwrap_or(&mut []);
            self.source.read_exact_at(tail, pos.saturating_add(have as u64))?;
        }
        let start = self.next;
        let stop = start.saturating_add(n);
        self.next = stop;
        self.buf.get(start..stop).ok_or_else(|| self.changed(what))
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<()> {
        if n > self.end.saturating_sub(self.pos()) {
            return Err(self.changed(what));
        }
        if n <= self.buffered() as u64 {
            self.next = self.next.saturating_add(n as usize);
        } else {
            self.buf_pos = self.pos().saturating_add(n);
            self.buf.clear();
            self.next = 0;
        }
        Ok(())
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let order = self.order;
        let a: [u8; 4] = self.take(4, what)?.try_into().map_err(|_| self.changed(what))?;
        Ok(match order {
            ByteOrder::Little => u32::from_le_bytes(a),
            ByteOrder::Big => u32::from_be_bytes(a),
        })
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let order = self.order;
        let a: [u8; 8] = self.take(8, what)?.try_into().map_err(|_| self.changed(what))?;
        Ok(match order {
            ByteOrder::Little => u64::from_le_bytes(a),
            ByteOrder::Big => u64::from_be_bytes(a),
        })
    }

    fn value_type(&mut self) -> Result<ValueType> {
        let id = self.u32("array element type")?;
        ValueType::from_id(id).ok_or_else(|| self.changed("array element type"))
    }

    /// Feeds the next `n` bytes to `f`, a buffer at a time.
    fn stream(&mut self, n: u64, mut f: impl FnMut(&[u8])) -> Result<()> {
        let mut left = n;
        while left > 0 {
            let k = left.min(STREAM_BUF as u64);
            f(self.take(k, "string")?);
            left = left.saturating_sub(k);
        }
        Ok(())
    }

    /// The first `width` bytes of the next `len`, cut back to a character
    /// boundary when the cut splits one; the rest is skipped.
    fn prefix(&mut self, len: u64, width: usize) -> Result<Vec<u8>> {
        let keep = len.min(width as u64);
        let mut out = self.take(keep, "string")?.to_vec();
        self.skip(len.saturating_sub(keep), "string")?;
        if keep < len {
            let whole = complete_chars(&out);
            out.truncate(whole);
        }
        Ok(out)
    }

    /// `count` fixed-size elements as their canonical little-endian bytes.
    fn fixed_le(&mut self, ty: ValueType, count: u64) -> Result<Vec<u8>> {
        let size = ty.fixed_size().unwrap_or(1);
        let n = count.checked_mul(size).ok_or_else(|| self.changed("array payload"))?;
        let order = self.order;
        let stored = self.take(n, "array payload")?;
        match order {
            // A little-endian payload is already canonical (spec §2).
            ByteOrder::Little => Ok(stored.to_vec()),
            ByteOrder::Big => canonical_payload(stored, order, ty, count),
        }
    }
}

/// The length of the longest prefix of `b` that does not end inside a
/// multi-byte UTF-8 character (invalid bytes are left as they are).
fn complete_chars(b: &[u8]) -> usize {
    // A character is at most 4 bytes: look back at most 3 for its lead byte.
    for back in 1..=b.len().min(4) {
        let Some(i) = b.len().checked_sub(back) else { break };
        let Some(&lead) = b.get(i) else { break };
        if lead & 0xC0 == 0x80 {
            continue;
        }
        let need = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if need > back { i } else { b.len() };
    }
    b.len()
}

/// A fixed-size element from its canonical little-endian bytes.
fn fixed_shown(ty: ValueType, le: &[u8]) -> Shown {
    let mut a = [0u8; 8];
    for (d, s) in a.iter_mut().zip(le) {
        *d = *s;
    }
    let u = u64::from_le_bytes(a);
    // The `as` casts reinterpret the low bytes, which is what they hold.
    match ty {
        ValueType::Int8 => Shown::Int(i64::from(u as u8 as i8)),
        ValueType::Int16 => Shown::Int(i64::from(u as u16 as i16)),
        ValueType::Int32 => Shown::Int(i64::from(u as u32 as i32)),
        ValueType::Int64 => Shown::Int(u as i64),
        ValueType::Float32 => Shown::F32(f32::from_bits(u as u32)),
        ValueType::Float64 => Shown::F64(f64::from_bits(u)),
        ValueType::Bool => Shown::Bool(u != 0),
        _ => Shown::Uint(u),
    }
}

/// Reads `count` elements of `ty` (of an array at `depth`), showing the first
/// ones while `budget` lasts; with `skip_rest`, the stream is left after the
/// last element, as a nested array's parent needs.
fn show_elements(
    s: &mut Stream<'_>,
    ty: ValueType,
    count: u64,
    depth: u32,
    budget: &mut usize,
    width: usize,
    skip_rest: bool,
) -> Result<Vec<Shown>> {
    let shown = count.min(*budget as u64);
    *budget = budget.saturating_sub(shown as usize);
    let mut out = Vec::new();
    match ty.fixed_size() {
        Some(size) => {
            let le = s.fixed_le(ty, shown)?;
            out.extend(le.chunks_exact(size as usize).map(|e| fixed_shown(ty, e)));
        }
        None => {
            for _ in 0..shown {
                out.push(show_one(s, ty, depth, budget, width)?);
            }
        }
    }
    if skip_rest {
        skip_elements(s, ty, count.saturating_sub(shown), depth)?;
    }
    Ok(out)
}

/// Reads one string or array element and shows it.
fn show_one(s: &mut Stream<'_>, ty: ValueType, depth: u32, budget: &mut usize, width: usize) -> Result<Shown> {
    match ty {
        ValueType::String => {
            let len = s.u64("string length")?;
            Ok(Shown::Str { prefix: s.prefix(len, width)?, len })
        }
        ValueType::Array => {
            if depth >= MAX_ARRAY_DEPTH {
                return Err(s.changed("nested array"));
            }
            let inner = s.value_type()?;
            let count = s.u64("array count")?;
            let elements = show_elements(s, inner, count, depth.saturating_add(1), budget, width, true)?;
            Ok(Shown::Array { elem_type: inner, count, elements })
        }
        fixed => {
            let le = s.fixed_le(fixed, 1)?;
            Ok(fixed_shown(fixed, &le))
        }
    }
}

/// Moves past `count` elements of `ty` without looking at them.
fn skip_elements(s: &mut Stream<'_>, ty: ValueType, count: u64, depth: u32) -> Result<()> {
    match ty.fixed_size() {
        Some(size) => {
            let n = count.checked_mul(size).ok_or_else(|| s.changed("array payload"))?;
            s.skip(n, "array payload")
        }
        None => {
            for _ in 0..count {
                if ty == ValueType::String {
                    let len = s.u64("string length")?;
                    s.skip(len, "string")?;
                } else {
                    if depth >= MAX_ARRAY_DEPTH {
                        return Err(s.changed("nested array"));
                    }
                    let inner = s.value_type()?;
                    let n = s.u64("array count")?;
                    skip_elements(s, inner, n, depth.saturating_add(1))?;
                }
            }
            Ok(())
        }
    }
}

/// Feeds the canonical encoding of one string or array element to `h`.
fn hash_element(s: &mut Stream<'_>, ty: ValueType, depth: u32, h: &mut Sha256) -> Result<()> {
    match ty {
        ValueType::String => {
            let len = s.u64("string length")?;
            h.update(len.to_le_bytes());
            s.stream(len, |b| h.update(b))
        }
        ValueType::Array => {
            if depth >= MAX_ARRAY_DEPTH {
                return Err(s.changed("nested array"));
            }
            let inner = s.value_type()?;
            let count = s.u64("array count")?;
            h.update(inner.id().to_le_bytes());
            h.update(count.to_le_bytes());
            match inner.fixed_size() {
                Some(size) => {
                    let per_read = elements_per_read(size);
                    let mut left = count;
                    while left > 0 {
                        let k = left.min(per_read);
                        h.update(s.fixed_le(inner, k)?);
                        left = left.saturating_sub(k);
                    }
                }
                None => {
                    for _ in 0..count {
                        hash_element(s, inner, depth.saturating_add(1), h)?;
                    }
                }
            }
            Ok(())
        }
        fixed => {
            let le = s.fixed_le(fixed, 1)?;
            h.update(le);
            Ok(())
        }
    }
}

/// Where two arrays of the same element type first differ.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementDifference {
    /// Index of the first element that differs (or that only one array has).
    pub index: u64,
    /// That element in the first array, if it has one.
    pub a: Option<Shown>,
    /// That element in the second array, if it has one.
    pub b: Option<Shown>,
}

/// The first element where two arrays differ, comparing their canonical
/// encodings element by element (so byte order does not matter); `None`
/// when their element types differ or they are equal. Both are streamed:
/// only the elements up to the difference are read.
pub fn first_difference(
    a: (&Shard, &ArrayValue),
    b: (&Shard, &ArrayValue),
    width: usize,
    items: usize,
) -> Result<Option<ElementDifference>> {
    let ((sa, va), (sb, vb)) = (a, b);
    if va.elem_type != vb.elem_type {
        return Ok(None);
    }
    let ty = va.elem_type;
    let common = va.count.min(vb.count);
    let mut ra = array_stream(sa, va);
    let mut rb = array_stream(sb, vb);
    let mut index = None;
    match ty.fixed_size() {
        Some(size) => {
            let per_read = elements_per_read(size);
            let mut done = 0u64;
            while done < common && index.is_none() {
                let k = common.saturating_sub(done).min(per_read);
                let (la, lb) = (ra.fixed_le(ty, k)?, rb.fixed_le(ty, k)?);
                if let Some(i) =
                    la.chunks_exact(size as usize).zip(lb.chunks_exact(size as usize)).position(|(x, y)| x != y)
                {
                    index = Some(done.saturating_add(i as u64));
                }
                done = done.saturating_add(k);
            }
        }
        None => {
            for i in 0..common {
                let (mut ha, mut hb) = (Sha256::new(), Sha256::new());
                hash_element(&mut ra, ty, 1, &mut ha)?;
                hash_element(&mut rb, ty, 1, &mut hb)?;
                if ha.finalize() != hb.finalize() {
                    index = Some(i);
                    break;
                }
            }
        }
    }
    let index = match index {
        Some(i) => i,
        None if va.count != vb.count => common,
        None => return Ok(None),
    };
    Ok(Some(ElementDifference {
        index,
        a: element_at((sa, va), index, width, items)?,
        b: element_at((sb, vb), index, width, items)?,
    }))
}

/// Shows element `index` of an array, or `None` past its end.
fn element_at(arr: (&Shard, &ArrayValue), index: u64, width: usize, items: usize) -> Result<Option<Shown>> {
    let (shard, a) = arr;
    if index >= a.count {
        return Ok(None);
    }
    let mut s = array_stream(shard, a);
    skip_elements(&mut s, a.elem_type, index, 1)?;
    let mut budget = items;
    Ok(Some(show_one(&mut s, a.elem_type, 1, &mut budget, width)?))
}

/// Checks UTF-8 over a stream of chunks that may split a character.
#[derive(Default)]
struct Utf8Check {
    carry: Vec<u8>,
    bad: bool,
}

impl Utf8Check {
    fn feed(&mut self, chunk: &[u8]) {
        if self.bad {
            return;
        }
        let joined;
        let bytes = if self.carry.is_empty() {
            chunk
        } else {
            joined = [self.carry.as_slice(), chunk].concat();
            &joined
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => self.carry.clear(),
            // An incomplete character at the end may be completed by the next chunk.
            Err(e) if e.error_len().is_none() => self.carry = bytes.get(e.valid_up_to()..).unwrap_or(&[]).to_vec(),
            Err(_) => self.bad = true,
        }
    }

    fn valid(&self) -> bool {
        !self.bad && self.carry.is_empty()
    }
}

/// Whether the next `len` bytes are valid UTF-8.
fn string_is_utf8(s: &mut Stream<'_>, len: u64) -> Result<bool> {
    let mut check = Utf8Check::default();
    s.stream(len, |b| check.feed(b))?;
    Ok(check.valid())
}

/// Whether every string inside one element (a string, or an array at any
/// depth) is valid UTF-8; the stream is left after the element.
fn element_is_utf8(s: &mut Stream<'_>, ty: ValueType, depth: u32) -> Result<bool> {
    match ty {
        ValueType::String => {
            let len = s.u64("string length")?;
            string_is_utf8(s, len)
        }
        ValueType::Array => {
            if depth >= MAX_ARRAY_DEPTH {
                return Err(s.changed("nested array"));
            }
            let inner = s.value_type()?;
            let count = s.u64("array count")?;
            let mut ok = true;
            if matches!(inner, ValueType::String | ValueType::Array) {
                for _ in 0..count {
                    ok &= element_is_utf8(s, inner, depth.saturating_add(1))?;
                }
            } else {
                skip_elements(s, inner, count, depth.saturating_add(1))?;
            }
            Ok(ok)
        }
        fixed => {
            skip_elements(s, fixed, 1, depth)?;
            Ok(true)
        }
    }
}

// ---------------------------------------------------------------------------
// Warnings

/// Something about a file that does not change its label but that a user
/// should know: mostly what keeps llama.cpp from loading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WarningKind {
    /// The file is big-endian: llama.cpp loads it only on a big-endian host.
    BigEndian,
    /// A tensor's data lies before the data of the tensor listed before it
    /// (llama.cpp wants data in tensor-info order).
    DataOrder {
        /// The tensor.
        tensor: Vec<u8>,
        /// Its stored offset.
        offset: u64,
        /// The tensor listed just before it.
        previous: Vec<u8>,
        /// That tensor's stored offset.
        previous_offset: u64,
    },
    /// A stored offset is not a multiple of the alignment.
    UnalignedOffset {
        /// The tensor.
        tensor: Vec<u8>,
        /// Its stored offset.
        offset: u64,
        /// The file's alignment.
        alignment: u64,
    },
    /// Unused bytes between one tensor's aligned end (or the start of the
    /// data section) and the next tensor's data.
    Gap {
        /// The tensor before the gap, in data order (`None`: the gap opens the data section).
        after: Option<Vec<u8>>,
        /// The tensor after the gap.
        before: Vec<u8>,
        /// File position of the first unused byte.
        start: u64,
        /// Size of the gap in bytes.
        len: u64,
    },
    /// Bytes after the last tensor's aligned end (or, without tensors, after data_start).
    TrailingBytes {
        /// File position of the first such byte.
        start: u64,
        /// How many there are.
        len: u64,
    },
    /// A key is not valid UTF-8.
    InvalidUtf8Key {
        /// The key.
        key: Vec<u8>,
    },
    /// A string value, or strings in an array value, are not valid UTF-8.
    InvalidUtf8Value {
        /// The key.
        key: Vec<u8>,
        /// For an array: how many elements hold invalid UTF-8, and the first one's index.
        elements: Option<(u64, u64)>,
    },
    /// A tensor name is not valid UTF-8.
    InvalidUtf8TensorName {
        /// The name.
        tensor: Vec<u8>,
    },
    /// A key is not `namespace.property` in lower_snake_case segments.
    KeyConvention {
        /// The key.
        key: Vec<u8>,
    },
    /// A tensor name of 64 bytes or more, which llama.cpp's default build refuses.
    LongTensorName {
        /// The name.
        tensor: Vec<u8>,
    },
    /// A tensor stored with dims other than its canonical shape (trailing
    /// 1s, or no dims at all); the label uses the canonical shape.
    StoredShape {
        /// The tensor.
        tensor: Vec<u8>,
        /// Its dims as stored.
        stored: Vec<u64>,
        /// Its canonical dims.
        canonical: Vec<u64>,
    },
    /// An array of arrays, which llama.cpp refuses.
    NestedArray {
        /// The key.
        key: Vec<u8>,
    },
}

impl WarningKind {
    /// A stable short name, as printed and in JSON.
    pub fn code(&self) -> &'static str {
        match self {
            WarningKind::BigEndian => "big_endian",
            WarningKind::DataOrder { .. } => "data_order",
            WarningKind::UnalignedOffset { .. } => "unaligned_offset",
            WarningKind::Gap { .. } => "gap",
            WarningKind::TrailingBytes { .. } => "trailing_bytes",
            WarningKind::InvalidUtf8Key { .. } => "invalid_utf8_key",
            WarningKind::InvalidUtf8Value { .. } => "invalid_utf8_value",
            WarningKind::InvalidUtf8TensorName { .. } => "invalid_utf8_tensor_name",
            WarningKind::KeyConvention { .. } => "key_convention",
            WarningKind::LongTensorName { .. } => "long_tensor_name",
            WarningKind::StoredShape { .. } => "stored_shape",
            WarningKind::NestedArray { .. } => "nested_array",
        }
    }

    /// True when llama.cpp (its `gguf_init_from_file` in a default build, on
    /// a little-endian host) refuses a file with this.
    pub fn llama_cpp_refuses(&self) -> bool {
        matches!(
            self,
            WarningKind::BigEndian
                | WarningKind::DataOrder { .. }
                | WarningKind::UnalignedOffset { .. }
                | WarningKind::Gap { .. }
                | WarningKind::LongTensorName { .. }
                | WarningKind::NestedArray { .. }
        )
    }

    /// One line of explanation, names escaped.
    pub fn message(&self) -> String {
        let e = |b: &[u8]| escape_bytes(b);
        match self {
            WarningKind::BigEndian => "the file is big-endian; llama.cpp loads it only on a big-endian host".into(),
            WarningKind::DataOrder { tensor, offset, previous, previous_offset } => format!(
                "tensor '{}' is stored at offset {offset}, before tensor '{}' (listed before it) at offset {previous_offset}",
                e(tensor),
                e(previous)
            ),
            WarningKind::UnalignedOffset { tensor, offset, alignment } => {
                format!(
                    "tensor '{}' is stored at offset {offset}, not a multiple of the alignment {alignment}",
                    e(tensor)
                )
            }
            WarningKind::Gap { after: Some(after), before, start, len } => format!(
                "{len} unused bytes at file position {start}, between tensor '{}' and tensor '{}'",
                e(after),
                e(before)
            ),
            WarningKind::Gap { after: None, before, start, len } => format!(
                "{len} unused bytes at file position {start}, at the start of the data section before tensor '{}'",
                e(before)
            ),
            WarningKind::TrailingBytes { start, len } => {
                format!("{len} bytes after the tensor data and its padding, from file position {start}")
            }
            WarningKind::InvalidUtf8Key { key } => format!("key '{}' is not valid UTF-8", e(key)),
            WarningKind::InvalidUtf8Value { key, elements: None } => {
                format!("the string value of '{}' is not valid UTF-8", e(key))
            }
            WarningKind::InvalidUtf8Value { key, elements: Some((n, first)) } => format!(
                "{n} element(s) of '{}' hold strings that are not valid UTF-8 (the first is element {first})",
                e(key)
            ),
            WarningKind::InvalidUtf8TensorName { tensor } => format!("tensor name '{}' is not valid UTF-8", e(tensor)),
            WarningKind::KeyConvention { key } => {
                format!("key '{}' is not namespace.property in lower_snake_case segments", e(key))
            }
            WarningKind::LongTensorName { tensor } => format!(
                "tensor name '{}' is {} bytes; llama.cpp's default build allows at most {}",
                e(tensor),
                tensor.len(),
                LLAMA_CPP_MAX_NAME - 1
            ),
            WarningKind::StoredShape { tensor, stored, canonical } => format!(
                "tensor '{}' is stored with dims {}; its canonical shape (the one in the label) is {}",
                e(tensor),
                dims_text(stored),
                dims_text(canonical)
            ),
            WarningKind::NestedArray { key } => format!("'{}' is an array of arrays", e(key)),
        }
    }

    /// The JSON fields naming what the warning is about.
    fn json_fields(&self, o: &mut Map<String, Json>) {
        match self {
            WarningKind::BigEndian => {}
            WarningKind::DataOrder { tensor, offset, previous, previous_offset } => {
                crate::output::put_name(o, "tensor", tensor);
                o.insert("offset".into(), json!(offset));
                crate::output::put_name(o, "previous", previous);
                o.insert("previous_offset".into(), json!(previous_offset));
            }
            WarningKind::UnalignedOffset { tensor, offset, alignment } => {
                crate::output::put_name(o, "tensor", tensor);
                o.insert("offset".into(), json!(offset));
                o.insert("alignment".into(), json!(alignment));
            }
            WarningKind::Gap { after, before, start, len } => {
                match after {
                    Some(a) => crate::output::put_name(o, "after", a),
                    None => {
                        o.insert("after".into(), Json::Null);
                    }
                }
                crate::output::put_name(o, "before", before);
                o.insert("start".into(), json!(start));
                o.insert("len".into(), json!(len));
            }
            WarningKind::TrailingBytes { start, len } => {
                o.insert("start".into(), json!(start));
                o.insert("len".into(), json!(len));
            }
            WarningKind::InvalidUtf8Key { key }
            | WarningKind::KeyConvention { key }
            | WarningKind::NestedArray { key } => crate::output::put_name(o, "key", key),
            WarningKind::InvalidUtf8Value { key, elements } => {
                crate::output::put_name(o, "key", key);
                if let Some((n, first)) = elements {
                    o.insert("elements".into(), json!(n));
                    o.insert("first_element".into(), json!(first));
                }
            }
            WarningKind::InvalidUtf8TensorName { tensor } | WarningKind::LongTensorName { tensor } => {
                crate::output::put_name(o, "tensor", tensor);
            }
            WarningKind::StoredShape { tensor, stored, canonical } => {
                crate::output::put_name(o, "tensor", tensor);
                o.insert("stored_dims".into(), json!(stored));
                o.insert("dims".into(), json!(canonical));
            }
        }
    }
}

/// A warning about one file of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Index of the file (in [`Model::shards`]) it concerns.
    pub shard: usize,
    /// What it is.
    pub kind: WarningKind,
}

/// Whether a key is `namespace.property` with lower_snake_case segments
/// (`[a-z0-9_]+`, at least two, dot-separated), as the GGUF spec asks.
pub fn follows_key_convention(key: &[u8]) -> bool {
    let mut segments = 0usize;
    for seg in key.split(|&b| b == b'.') {
        if seg.is_empty() || !seg.iter().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_')) {
            return false;
        }
        segments = segments.saturating_add(1);
    }
    segments >= 2
}

/// The tensor warnings of one file: names, shapes, data order, alignment,
/// gaps and trailing bytes.
fn tensor_warnings(shard: usize, f: &GgufFile, out: &mut Vec<Warning>) {
    let mut push = |kind| out.push(Warning { shard, kind });
    let mut previous: Option<&crate::parse::TensorInfo> = None;
    for t in &f.tensors {
        if std::str::from_utf8(&t.name).is_err() {
            push(WarningKind::InvalidUtf8TensorName { tensor: t.name.clone() });
        }
        if t.name.len() >= LLAMA_CPP_MAX_NAME {
            push(WarningKind::LongTensorName { tensor: t.name.clone() });
        }
        let shape = t.shape();
        if t.stored_dims.as_slice() != shape.dims() {
            push(WarningKind::StoredShape {
                tensor: t.name.clone(),
                stored: t.stored_dims.clone(),
                canonical: shape.dims().to_vec(),
            });
        }
        if let Some(p) = previous.filter(|p| t.stored_offset < p.stored_offset) {
            push(WarningKind::DataOrder {
                tensor: t.name.clone(),
                offset: t.stored_offset,
                previous: p.name.clone(),
                previous_offset: p.stored_offset,
            });
        }
        if t.stored_offset.checked_rem(f.alignment).is_some_and(|r| r != 0) {
            push(WarningKind::UnalignedOffset {
                tensor: t.name.clone(),
                offset: t.stored_offset,
                alignment: f.alignment,
            });
        }
        previous = Some(t);
    }
    // Gaps: walk the data in file order; each tensor should start where the
    // previous one ended, rounded up to the alignment.
    let mut by_offset: Vec<&crate::parse::TensorInfo> = f.tensors.iter().collect();
    by_offset.sort_by_key(|t| (t.stored_offset, t.nbytes));
    let mut expected = 0u64;
    let mut after: Option<&[u8]> = None;
    for t in by_offset {
        if t.stored_offset > expected {
            push(WarningKind::Gap {
                after: after.map(<[u8]>::to_vec),
                before: t.name.clone(),
                start: f.data_start.saturating_add(expected),
                len: t.stored_offset.saturating_sub(expected),
            });
        }
        // The parser checked that offset + nbytes lies inside the file.
        let end = t.stored_offset.saturating_add(t.nbytes);
        expected = expected.max(align_up(end, f.alignment).unwrap_or(u64::MAX));
        after = Some(&t.name);
    }
    let data_end = f.data_start.saturating_add(expected);
    if f.file_len > data_end {
        push(WarningKind::TrailingBytes { start: data_end, len: f.file_len.saturating_sub(data_end) });
    }
}

/// The warnings about one KV of `shard` (its key, strings and nesting).
fn kv_warnings(s: usize, shard: &Shard, kv: &crate::parse::Kv, out: &mut Vec<Warning>) -> Result<()> {
    let mut push = |kind| out.push(Warning { shard: s, kind });
    let key = || kv.key.clone();
    if std::str::from_utf8(&kv.key).is_err() {
        push(WarningKind::InvalidUtf8Key { key: key() });
    }
    if !follows_key_convention(&kv.key) {
        push(WarningKind::KeyConvention { key: key() });
    }
    match &kv.value {
        Value::String(v) => {
            let end = v.file_offset.saturating_add(v.len);
            let mut stream = Stream::new(&shard.source, shard.file.byte_order, v.file_offset, end);
            if !string_is_utf8(&mut stream, v.len)? {
                push(WarningKind::InvalidUtf8Value { key: key(), elements: None });
            }
        }
        Value::Array(a) => {
            if a.elem_type == ValueType::Array {
                push(WarningKind::NestedArray { key: key() });
            }
            if matches!(a.elem_type, ValueType::String | ValueType::Array) {
                let mut stream = array_stream(shard, a);
                let (mut bad, mut first) = (0u64, None);
                for i in 0..a.count {
                    if !element_is_utf8(&mut stream, a.elem_type, 1)? {
                        bad = bad.saturating_add(1);
                        first.get_or_insert(i);
                    }
                }
                if let Some(first) = first {
                    push(WarningKind::InvalidUtf8Value { key: key(), elements: Some((bad, first)) });
                }
            }
        }
        _ => {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The inspection

/// The header of one file of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHeader {
    /// The file's path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// GGUF version, 2 or 3.
    pub version: u32,
    /// Byte order of its numbers.
    pub byte_order: ByteOrder,
    /// Its effective alignment.
    pub alignment: u64,
    /// KVs in the file, `split.` keys included.
    pub kv_count: usize,
    /// Tensors in the file.
    pub tensor_count: usize,
    /// File position where the tensor infos end.
    pub tensor_info_end: u64,
    /// File position where tensor data starts.
    pub data_start: u64,
}

/// Tensors of one ggml type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeSummary {
    /// The type.
    pub ggml_type: &'static GgmlType,
    /// How many tensors have it.
    pub count: usize,
    /// Their data bytes in all.
    pub bytes: u64,
}

/// A KV as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct KvEntry {
    /// The key.
    pub key: Vec<u8>,
    /// The value as parsed (type, scalars, digests).
    pub value: Value,
    /// The value as shown.
    pub shown: Shown,
    /// Index of the file it was read from.
    pub shard: usize,
}

/// A tensor as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorEntry {
    /// The name.
    pub name: Vec<u8>,
    /// The canonical dims (the ones in the label).
    pub dims: Vec<u64>,
    /// The dims as stored.
    pub stored_dims: Vec<u64>,
    /// The ggml type.
    pub ggml_type: &'static GgmlType,
    /// Data size in bytes.
    pub nbytes: u64,
    /// The stored offset, relative to its file's data_start.
    pub stored_offset: u64,
    /// The offset in the canonical layout.
    pub offset: u64,
    /// Index of the file holding its data.
    pub shard: usize,
    /// SHA-256 of its data.
    pub sha256: Sha256Digest,
}

/// Everything `gguf-digest inspect` shows about a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The label.
    pub label: String,
    /// The effective alignment of the model.
    pub alignment: u64,
    /// KVs in the label (no `split.` keys).
    pub kv_count: usize,
    /// Tensors in the model.
    pub tensor_count: usize,
    /// Tensor data bytes in all.
    pub tensor_bytes: u64,
    /// One header per file; the first is the path given.
    pub files: Vec<FileHeader>,
    /// Tensor count and bytes per ggml type, by type id.
    pub types: Vec<TypeSummary>,
    /// The KVs in the label, in file order (file by file).
    pub kvs: Vec<KvEntry>,
    /// The `split.` keys of every file, in file order: layout, not content.
    pub split_kvs: Vec<KvEntry>,
    /// The tensors in file order, at most `limit` of them.
    pub tensors: Vec<TensorEntry>,
    /// Warnings, file by file.
    pub warnings: Vec<Warning>,
}

/// The shard at index `i` of a model. [`Model::join`] sets every index from
/// the model's own shard list, so the error is unreachable; it stands in for
/// an index that would otherwise panic.
pub(crate) fn shard_of(model: &Model, i: usize) -> Result<&Shard> {
    model.shards().get(i).ok_or_else(|| Error::new(ErrorKind::Io(std::io::Error::other(format!("no shard #{i}")))))
}

/// Opens and labels a model (its tensors hashed on `pool`) and inspects it.
pub fn inspect_path(
    path: &Path,
    open: &BatchOptions,
    pool: &rayon::ThreadPool,
    opts: &InspectOptions,
) -> Result<Inspection> {
    let mut done = None;
    digest_paths(&[path.to_path_buf()], open, pool, |_, r| done = Some(r));
    let Some(r) = done else {
        return Err(Error::new(ErrorKind::Io(std::io::Error::other("hashing was interrupted"))));
    };
    let (model, digest) = r?;
    inspect(&model, &digest, opts)
}

/// Inspects a model whose tensors were hashed into `digest`.
pub fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> Result<Inspection> {
    let shards = model.shards();
    let files = shards
        .iter()
        .map(|s| FileHeader {
            path: s.path().to_path_buf(),
            size: s.file.file_len,
            version: s.file.version,
            byte_order: s.file.byte_order,
            alignment: s.file.alignment,
            kv_count: s.file.kvs.len(),
            tensor_count: s.file.tensors.len(),
            tensor_info_end: s.file.tensor_info_end,
            data_start: s.file.data_start,
        })
        .collect();

    let mut model_kvs: Vec<&ModelKv> = model.kvs().iter().collect();
    model_kvs.sort_by_key(|m| (m.shard, m.kv.file_offset));
    let mut kvs = Vec::with_capacity(model_kvs.len());
    for m in model_kvs {
        let shown = show_value(shard_of(model, m.shard)?, &m.kv.value, opts.width, opts.items)?;
        kvs.push(KvEntry { key: m.kv.key.clone(), value: m.kv.value.clone(), shown, shard: m.shard });
    }
    let mut split_kvs = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        for kv in s.file.kvs.iter().filter(|kv| kv.key.starts_with(SPLIT_PREFIX)) {
            let shown = show_value(s, &kv.value, opts.width, opts.items)?;
            split_kvs.push(KvEntry { key: kv.key.clone(), value: kv.value.clone(), shown, shard: i });
        }
    }

    let mut types: BTreeMap<u32, TypeSummary> = BTreeMap::new();
    for t in model.tensors() {
        let ty = t.info.ggml_type;
        let e = types.entry(ty.id).or_insert(TypeSummary { ggml_type: ty, count: 0, bytes: 0 });
        e.count = e.count.saturating_add(1);
        e.bytes = e.bytes.saturating_add(t.info.nbytes);
    }
    // File order: how the tensor infos list them, file by file.
    let mut in_file_order: Vec<_> = model.tensors().iter().zip(digest.tensor_sha256()).collect();
    in_file_order.sort_by_key(|(t, _)| (t.shard, t.info.file_offset));
    let mut tensors: Vec<TensorEntry> = in_file_order
        .into_iter()
        .map(|(t, sha)| TensorEntry {
            name: t.info.name.clone(),
            dims: t.info.shape().dims().to_vec(),
            stored_dims: t.info.stored_dims.clone(),
            ggml_type: t.info.ggml_type,
            nbytes: t.info.nbytes,
            stored_offset: t.info.stored_offset,
            offset: t.offset,
            shard: t.shard,
            sha256: *sha,
        })
        .collect();
    tensors.truncate(opts.limit.unwrap_or(usize::MAX));

    let mut warnings = Vec::new();
    let mut seen: HashSet<&[u8]> = HashSet::new();
    for (i, s) in shards.iter().enumerate() {
        if s.file.byte_order == ByteOrder::Big {
            warnings.push(Warning { shard: i, kind: WarningKind::BigEndian });
        }
        // A key repeated in a later shard holds the same value: warn once.
        for kv in &s.file.kvs {
            if seen.insert(&kv.key) {
                kv_warnings(i, s, kv, &mut warnings)?;
            }
        }
        tensor_warnings(i, &s.file, &mut warnings);
    }

    Ok(Inspection {
        label: digest.label(),
        alignment: model.alignment(),
        kv_count: model.kvs().len(),
        tensor_count: model.tensors().len(),
        tensor_bytes: model.tensor_bytes(),
        files,
        types: types.into_values().collect(),
        kvs,
        split_kvs,
        tensors,
        warnings,
    })
}

impl Inspection {
    /// True when some warning means llama.cpp will not load the model.
    pub fn llama_cpp_refuses(&self) -> bool {
        self.warnings.iter().any(|w| w.kind.llama_cpp_refuses())
    }

    /// The codes of the warnings that keep llama.cpp from loading the model, each once.
    pub fn refusing_codes(&self) -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = Vec::new();
        for w in self.warnings.iter().filter(|w| w.kind.llama_cpp_refuses()) {
            if !codes.contains(&w.kind.code()) {
                codes.push(w.kind.code());
            }
        }
        codes
    }

    fn path_of(&self, shard: usize) -> String {
        self.files.get(shard).map(|f| path_text(&f.path)).unwrap_or_default()
    }

    /// The text report: header, tensor types, KVs, tensors, warnings.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        let sharded = self.files.len() > 1;
        let split_note =
            |n: usize| if n > 0 { format!(" (and {n} split.* keys, not in the label)") } else { String::new() };
        let tensors_line = format!("{} ({} bytes of data)", self.tensor_count, self.tensor_bytes);
        match self.files.as_slice() {
            [f] => {
                let rows = [
                    ("file", path_text(&f.path)),
                    ("size", format!("{} bytes", f.size)),
                    ("version", f.version.to_string()),
                    ("byte order", f.byte_order.name().to_string()),
                    ("alignment", self.alignment.to_string()),
                    ("KVs", format!("{}{}", self.kv_count, split_note(self.split_kvs.len()))),
                    ("tensors", tensors_line),
                    ("data_start", f.data_start.to_string()),
                    ("label", self.label.clone()),
                ];
                for (k, v) in rows {
                    writeln!(out, "{k:<12}{v}")?;
                }
            }
            files => {
                let first = files.first().map(|f| path_text(&f.path)).unwrap_or_default();
                let rows = [
                    ("model", format!("{first} ({} shards)", files.len())),
                    ("alignment", self.alignment.to_string()),
                    ("KVs", format!("{}{}", self.kv_count, split_note(self.split_kvs.len()))),
                    ("tensors", tensors_line),
                    ("label", self.label.clone()),
                ];
                for (k, v) in rows {
                    writeln!(out, "{k:<12}{v}")?;
                }
                writeln!(out, "\nShards:")?;
                let rows: Vec<Vec<String>> = files
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        vec![
                            i.saturating_add(1).to_string(),
                            path_text(&f.path),
                            f.size.to_string(),
                            f.version.to_string(),
                            f.byte_order.name().to_string(),
                            f.alignment.to_string(),
                            f.kv_count.to_string(),
                            f.tensor_count.to_string(),
                            f.data_start.to_string(),
                        ]
                    })
                    .collect();
                let header =
                    ["shard", "path", "size", "version", "byte order", "alignment", "KVs", "tensors", "data_start"];
                let right = [true, false, true, true, false, true, true, true, true];
                table(out, &header, &right, &rows)?;
            }
        }

        writeln!(out, "\nTensor types:")?;
        let mut rows: Vec<Vec<String>> = self
            .types
            .iter()
            .map(|t| vec![t.ggml_type.name.to_string(), t.count.to_string(), t.bytes.to_string()])
            .collect();
        rows.push(vec!["total".into(), self.tensor_count.to_string(), self.tensor_bytes.to_string()]);
        table(out, &["type", "count", "bytes"], &[false, true, true], &rows)?;

        writeln!(out, "\nKVs ({}):", self.kvs.len())?;
        let kv_row = |e: &KvEntry| {
            let mut row = vec![escape_bytes(&e.key), e.value.value_type().name().to_string(), e.shown.to_string()];
            if sharded {
                row.insert(0, e.shard.saturating_add(1).to_string());
            }
            row
        };
        let (kv_header, kv_right): (&[&str], &[bool]) = if sharded {
            (&["shard", "key", "type", "value"], &[true, false, false, false])
        } else {
            (&["key", "type", "value"], &[false, false, false])
        };
        table(out, kv_header, kv_right, &self.kvs.iter().map(kv_row).collect::<Vec<_>>())?;
        if !self.split_kvs.is_empty() {
            writeln!(out, "\nSplit keys ({}, layout only, not in the label):", self.split_kvs.len())?;
            table(out, kv_header, kv_right, &self.split_kvs.iter().map(kv_row).collect::<Vec<_>>())?;
        }

        let listed = if self.tensors.len() < self.tensor_count {
            format!("{} of {}", self.tensors.len(), self.tensor_count)
        } else {
            self.tensor_count.to_string()
        };
        writeln!(out, "\nTensors ({listed}, in file order; offset as stored):")?;
        let rows: Vec<Vec<String>> = self
            .tensors
            .iter()
            .map(|t| {
                let mut row = vec![
                    escape_bytes(&t.name),
                    dims_text(&t.dims),
                    t.ggml_type.name.to_string(),
                    t.nbytes.to_string(),
                    t.stored_offset.to_string(),
                    hex::encode(t.sha256.get(..8).unwrap_or(&[])),
                ];
                if sharded {
                    row.insert(0, t.shard.saturating_add(1).to_string());
                }
                row
            })
            .collect();
        let mut header = vec!["name", "dims", "type", "nbytes", "offset", "sha256"];
        let mut right = vec![false, false, false, true, true, false];
        if sharded {
            header.insert(0, "shard");
            right.insert(0, true);
        }
        table(out, &header, &right, &rows)?;
        let more = self.tensor_count.saturating_sub(self.tensors.len());
        if more > 0 {
            writeln!(out, "  … {more} more (--limit)")?;
        }

        if self.warnings.is_empty() {
            writeln!(out, "\nWarnings: none")?;
        } else {
            writeln!(out, "\nWarnings ({}):", self.warnings.len())?;
            for w in &self.warnings {
                let file = if sharded { format!("shard {}: ", w.shard.saturating_add(1)) } else { String::new() };
                writeln!(out, "  {file}{}: {}", w.kind.code(), w.kind.message())?;
            }
        }
        if self.llama_cpp_refuses() {
            writeln!(
                out,
                "\nThe label is defined, but llama.cpp will not load this file ({}).",
                self.refusing_codes().join(", ")
            )?;
        }
        Ok(())
    }

    /// The JSON document (the same content as [`Inspection::text`]).
    pub fn to_json(&self) -> Json {
        let kv_json = |e: &KvEntry| {
            let mut o = Map::new();
            crate::output::put_name(&mut o, "key", &e.key);
            o.insert("type".into(), json!(e.value.value_type().name()));
            o.extend(value_json(&e.value));
            match &e.shown {
                Shown::Str { prefix, len } => {
                    crate::output::put_name(&mut o, "value", prefix);
                    o.insert("truncated".into(), json!((prefix.len() as u64) < *len));
                }
                Shown::Array { elements, .. } => {
                    o.insert("elements".into(), json!(elements.iter().map(Shown::to_json).collect::<Vec<_>>()));
                }
                _ => {}
            }
            o.insert("shard".into(), json!(e.shard));
            Json::Object(o)
        };
        let files: Vec<Json> = self
            .files
            .iter()
            .map(|f| {
                json!({
                    "path": path_text(&f.path),
                    "size": f.size,
                    "version": f.version,
                    "byte_order": f.byte_order.name(),
                    "alignment": f.alignment,
                    "kv_count": f.kv_count,
                    "tensor_count": f.tensor_count,
                    "tensor_info_end": f.tensor_info_end,
                    "data_start": f.data_start,
                })
            })
            .collect();
        let types: Vec<Json> = self
            .types
            .iter()
            .map(|t| json!({ "type": t.ggml_type.name, "type_id": t.ggml_type.id, "count": t.count, "bytes": t.bytes }))
            .collect();
        let tensors: Vec<Json> = self
            .tensors
            .iter()
            .map(|t| {
                let mut o = Map::new();
                crate::output::put_name(&mut o, "name", &t.name);
                o.insert("dims".into(), json!(t.dims));
                o.insert("stored_dims".into(), json!(t.stored_dims));
                o.insert("type".into(), json!(t.ggml_type.name));
                o.insert("type_id".into(), json!(t.ggml_type.id));
                o.insert("nbytes".into(), json!(t.nbytes));
                o.insert("stored_offset".into(), json!(t.stored_offset));
                o.insert("offset".into(), json!(t.offset));
                o.insert("shard".into(), json!(t.shard));
                o.insert("sha256".into(), json!(hex::encode(t.sha256)));
                Json::Object(o)
            })
            .collect();
        let warnings: Vec<Json> = self
            .warnings
            .iter()
            .map(|w| {
                let mut o = Map::new();
                o.insert("code".into(), json!(w.kind.code()));
                o.insert("shard".into(), json!(w.shard));
                o.insert("path".into(), json!(self.path_of(w.shard)));
                o.insert("llama_cpp_refuses".into(), json!(w.kind.llama_cpp_refuses()));
                o.insert("message".into(), json!(w.kind.message()));
                w.kind.json_fields(&mut o);
                Json::Object(o)
            })
            .collect();
        json!({
            "format": JSON_FORMAT,
            "tool": concat!("gguf-digest ", env!("CARGO_PKG_VERSION")),
            "path": self.path_of(0),
            "label": self.label,
            "alignment": self.alignment,
            "kv_count": self.kv_count,
            "tensor_count": self.tensor_count,
            "tensor_bytes": self.tensor_bytes,
            "shards": files,
            "types": types,
            "kvs": self.kvs.iter().map(kv_json).collect::<Vec<_>>(),
            "split_kvs": self.split_kvs.iter().map(kv_json).collect::<Vec<_>>(),
            "tensors_listed": self.tensors.len(),
            "tensors": tensors,
            "warnings": warnings,
            "llama_cpp_loads": !self.llama_cpp_refuses(),
        })
    }
}

// ---------------------------------------------------------------------------
// Text helpers shared with `diff`

/// Dims as `[a, b, c]`.
pub fn dims_text(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// A path as text, escaped like any name from a file (a path may hold
/// control bytes too).
pub fn path_text(p: &Path) -> String {
    escape_bytes(p.as_os_str().as_bytes())
}

/// Padding for columns is capped so that one very long name does not push
/// every other row off the screen; longer cells just run over.
const MAX_COLUMN: usize = 48;

/// Writes rows as column-aligned text, two spaces between columns, numbers
/// right-aligned where `right` says so; the last column is not padded.
fn table(out: &mut String, header: &[&str], right: &[bool], rows: &[Vec<String>]) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count().min(MAX_COLUMN));
        }
    }
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&head).chain(rows) {
        let mut line = String::from("  ");
        let last = row.len().saturating_sub(1);
        for (i, cell) in row.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            let pad = w.saturating_sub(cell.chars().count());
            let is_right = right.get(i).copied().unwrap_or(false);
            if i > 0 {
                line.push_str("  ");
            }
            if is_right {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i < last {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn key_convention() {
        assert!(follows_key_convention(b"general.architecture"));
        assert!(follows_key_convention(b"llama.attention.head_count_kv"));
        assert!(follows_key_convention(b"general.base_model.0.name"));
        assert!(!follows_key_convention(b"general"));
        assert!(!follows_key_convention(b"General.name"));
        assert!(!follows_key_convention(b"a..b"));
        assert!(!follows_key_convention(b"a.b."));
        assert!(!follows_key_convention(b"my key.x"));
    }

    #[test]
    fn cuts_keep_whole_characters() {
        assert_eq!(complete_chars("aé".as_bytes()), 3);
        assert_eq!(complete_chars(&"aé".as_bytes()[..2]), 1);
        assert_eq!(complete_chars(&"a€".as_bytes()[..3]), 1);
        assert_eq!(complete_chars(&[b'a', 0xff]), 2);
        assert_eq!(complete_chars(&[]), 0);
    }

    #[test]
    fn utf8_across_chunks() {
        let s = "ab€cd".as_bytes();
        let mut c = Utf8Check::default();
        c.feed(&s[..3]);
        c.feed(&s[3..4]);
        c.feed(&s[4..]);
        assert!(c.valid());
        let mut c = Utf8Check::default();
        c.feed(&s[..3]);
        assert!(!c.valid());
        let mut c = Utf8Check::default();
        c.feed(&[b'a', 0xff, b'b']);
        assert!(!c.valid());
    }

    #[test]
    fn shown_text() {
        let s = Shown::Array {
            elem_type: ValueType::String,
            count: 3,
            elements: vec![
                Shown::Str { prefix: b"a\n".to_vec(), len: 2 },
                Shown::Str { prefix: b"xy".to_vec(), len: 9 },
            ],
        };
        assert_eq!(s.to_string(), "STRING[3] ['a\\n', 'xy'… (9 bytes), … 1 more]");
        assert_eq!(Shown::F32(0.1).to_string(), "0.1");
        assert_eq!(Shown::F32(0.1).to_json(), json!(0.1));
        assert_eq!(Shown::F64(f64::NAN).to_json(), json!("NaN"));
        let e = Shown::Array { elem_type: ValueType::Uint8, count: 0, elements: vec![] };
        assert_eq!(e.to_string(), "UINT8[0] []");
    }
}
