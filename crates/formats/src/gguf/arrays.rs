//! Reading a GGUF file's string and array values for showing: a string only
//! as far as it is shown, an array only as far as its shown elements, a
//! UTF-8 check streamed through a small buffer, and the first element where
//! two arrays differ. Used by the GGUF sections of `inspect` and `diff`.

use sha2::{Digest as _, Sha256};

use crate::error::{Error, ErrorKind, Result};
use crate::gguf::cursor::ByteOrder;
use crate::gguf::model::Shard;
use crate::gguf::value::{ArrayValue, MAX_ARRAY_DEPTH, StringValue, Value, ValueType, canonical_payload};
use crate::render::Shown;
use crate::source::Source;

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
            let mut stream = RangeReader::new(source, shard.file.byte_order, s.file_offset, end);
            Shown::Str { prefix: stream.prefix(s.len, width)?, len: s.len }
        }
        Value::Array(a) => {
            let mut stream = array_stream(shard, a);
            let mut budget = items;
            let elements = show_elements(&mut stream, a.elem_type, a.count, 1, &mut budget, width, false)?;
            Shown::Array { elem_type: a.elem_type.name(), count: a.count, elements }
        }
    })
}

/// A stream over an array's stored payload.
fn array_stream<'a>(shard: &'a Shard, a: &ArrayValue) -> RangeReader<'a> {
    let end = a.file_offset.saturating_add(a.file_len);
    RangeReader::new(&shard.source, shard.file.byte_order, a.file_offset, end)
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
struct RangeReader<'a> {
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

impl<'a> RangeReader<'a> {
    fn new(source: &'a Source, order: ByteOrder, start: u64, end: u64) -> Self {
        RangeReader { source, order, buf_pos: start, buf: Vec::new(), next: 0, end }
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
    s: &mut RangeReader<'_>,
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
fn show_one(s: &mut RangeReader<'_>, ty: ValueType, depth: u32, budget: &mut usize, width: usize) -> Result<Shown> {
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
            Ok(Shown::Array { elem_type: inner.name(), count, elements })
        }
        fixed => {
            let le = s.fixed_le(fixed, 1)?;
            Ok(fixed_shown(fixed, &le))
        }
    }
}

/// Moves past `count` elements of `ty` without looking at them.
fn skip_elements(s: &mut RangeReader<'_>, ty: ValueType, count: u64, depth: u32) -> Result<()> {
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
fn hash_element(s: &mut RangeReader<'_>, ty: ValueType, depth: u32, h: &mut Sha256) -> Result<()> {
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
/// Whether a STRING value of `shard` is valid UTF-8, streamed from its file.
pub(crate) fn string_is_utf8(shard: &Shard, v: &StringValue) -> Result<bool> {
    let end = v.file_offset.saturating_add(v.len);
    let mut stream = RangeReader::new(&shard.source, shard.file.byte_order, v.file_offset, end);
    stream_is_utf8(&mut stream, v.len)
}

/// For an array of strings (or of arrays), how many elements are not valid
/// UTF-8 and the index of the first; `None` when all are (or the elements
/// are numbers).
pub(crate) fn elements_not_utf8(shard: &Shard, a: &ArrayValue) -> Result<Option<(u64, u64)>> {
    if !matches!(a.elem_type, ValueType::String | ValueType::Array) {
        return Ok(None);
    }
    let mut stream = array_stream(shard, a);
    let (mut bad, mut first) = (0u64, None);
    for i in 0..a.count {
        if !element_is_utf8(&mut stream, a.elem_type, 1)? {
            bad = bad.saturating_add(1);
            first.get_or_insert(i);
        }
    }
    Ok(first.map(|first| (bad, first)))
}

fn stream_is_utf8(s: &mut RangeReader<'_>, len: u64) -> Result<bool> {
    let mut check = Utf8Check::default();
    s.stream(len, |b| check.feed(b))?;
    Ok(check.valid())
}

/// Whether every string inside one element (a string, or an array at any
/// depth) is valid UTF-8; the stream is left after the element.
fn element_is_utf8(s: &mut RangeReader<'_>, ty: ValueType, depth: u32) -> Result<bool> {
    match ty {
        ValueType::String => {
            let len = s.u64("string length")?;
            stream_is_utf8(s, len)
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

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

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
}
