//! Tensors (SPEC Part VI, X3.2, X5, X6's names and numbers): the element
//! types, a `TensorProto` read by its own loop, and where its elements
//! come from, checked before any hashing. `raw_data` is located, never
//! copied; the typed fields are hashed from the records in place once the
//! tensor's type and shape are known (their values are varints or floats,
//! not the elements' bytes); external data is named here and opened by
//! `model`.

use sha2::{Digest as _, Sha256};

use super::schema::{M, tensor as f};
use super::wire::{FieldPath, Msg, Rec, Val, Wire, err};
use crate::error::{Error, Result, Subject};
use crate::hash::Sha256Digest;

/// An element type of X5's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    /// `data_type`.
    pub code: i32,
    /// Its name in the skeleton (safetensors' where it has the type).
    pub name: &'static str,
    /// Bits per element (0 for `STRING`).
    pub bits: u64,
    /// The typed field that may hold it.
    pub typed: u32,
    /// The range of one typed value, when narrower than the field's type.
    pub range: Option<(i64, i64)>,
}

const fn dt(code: i32, name: &'static str, bits: u64, typed: u32, range: Option<(i64, i64)>) -> Dtype {
    Dtype { code, name, bits, typed, range }
}

const BYTE: Option<(i64, i64)> = Some((0, 255));
const HALF: Option<(i64, i64)> = Some((0, 65535));

/// The type a tensor is held as until its `data_type` is read.
const PLACEHOLDER: Dtype = dt(1, "F32", 32, f::FLOAT_DATA, None);

/// X5's table.
pub static DTYPES: &[Dtype] = &[
    dt(1, "F32", 32, f::FLOAT_DATA, None),
    dt(2, "U8", 8, f::INT32_DATA, BYTE),
    dt(3, "I8", 8, f::INT32_DATA, Some((-128, 127))),
    dt(4, "U16", 16, f::INT32_DATA, HALF),
    dt(5, "I16", 16, f::INT32_DATA, Some((-32768, 32767))),
    dt(6, "I32", 32, f::INT32_DATA, None),
    dt(7, "I64", 64, f::INT64_DATA, None),
    dt(8, "STRING", 0, f::STRING_DATA, None),
    dt(9, "BOOL", 8, f::INT32_DATA, Some((0, 1))),
    dt(10, "F16", 16, f::INT32_DATA, HALF),
    dt(11, "F64", 64, f::DOUBLE_DATA, None),
    dt(12, "U32", 32, f::UINT64_DATA, Some((0, 0xffff_ffff))),
    dt(13, "U64", 64, f::UINT64_DATA, None),
    dt(14, "C64", 64, f::FLOAT_DATA, None),
    dt(15, "C128", 128, f::DOUBLE_DATA, None),
    dt(16, "BF16", 16, f::INT32_DATA, HALF),
    dt(17, "F8_E4M3", 8, f::INT32_DATA, BYTE),
    dt(18, "F8_E4M3FNUZ", 8, f::INT32_DATA, BYTE),
    dt(19, "F8_E5M2", 8, f::INT32_DATA, BYTE),
    dt(20, "F8_E5M2FNUZ", 8, f::INT32_DATA, BYTE),
    dt(21, "U4", 4, f::INT32_DATA, BYTE),
    dt(22, "I4", 4, f::INT32_DATA, BYTE),
    dt(23, "F4", 4, f::INT32_DATA, BYTE),
    dt(24, "F8_E8M0", 8, f::INT32_DATA, BYTE),
    dt(25, "U2", 2, f::INT32_DATA, BYTE),
    dt(26, "I2", 2, f::INT32_DATA, BYTE),
];

impl Dtype {
    /// The type of `data_type` `code`.
    pub fn of(code: i64) -> Option<&'static Dtype> {
        DTYPES.iter().find(|d| i64::from(d.code) == code)
    }

    /// Whether elements are packed several to a byte.
    pub fn is_packed(&self) -> bool {
        self.bits < 8 && self.bits > 0
    }

    fn is_complex(&self) -> bool {
        matches!(self.code, 14 | 15)
    }

    /// The bytes one typed value is written in (the elements' bytes).
    fn value_bytes(&self) -> usize {
        match self.code {
            14 => 4,
            15 => 8,
            _ if self.is_packed() => 1,
            _ => usize::try_from(self.bits / 8).unwrap_or(8),
        }
    }
}

/// The name of a typed field, for messages.
pub fn typed_name(num: u32) -> &'static str {
    match num {
        f::FLOAT_DATA => "float_data",
        f::INT32_DATA => "int32_data",
        f::STRING_DATA => "string_data",
        f::INT64_DATA => "int64_data",
        f::DOUBLE_DATA => "double_data",
        f::UINT64_DATA => "uint64_data",
        _ => "a typed field",
    }
}

/// A tensor's external data as the model names it (X6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// `location`: checked to be plain relative components.
    pub location: Vec<u8>,
    /// `offset` (0 when absent).
    pub offset: u64,
    /// `length`, when written.
    pub length: Option<u64>,
}

/// Where a tensor's elements come from (X5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// No elements (`n` = 0, nothing written).
    Empty,
    /// `raw_data`: these bytes of the model file.
    Raw {
        /// The file offset of the first byte.
        start: u64,
        /// The byte count.
        len: u64,
    },
    /// A typed field, hashed while read.
    Typed(Sha256Digest),
    /// Another file's range.
    External(External),
}

/// One `TensorProto`, read and checked.
#[derive(Debug, Clone)]
pub struct Tensor {
    /// `name`.
    pub name: Vec<u8>,
    /// `dims`, each checked ≥ 0.
    pub dims: Vec<u64>,
    /// Its element type.
    pub dtype: &'static Dtype,
    /// `doc_string`.
    pub doc: Vec<u8>,
    /// `metadata_props`, as written (`Val::M`s).
    pub meta: Vec<Val>,
    /// The file offset of its message.
    pub at: u64,
    /// Its field path.
    pub path: String,
    /// Its element count.
    pub n: u64,
    /// Its elements' bytes (X5; for `STRING`, `8 + len` a string).
    pub nbytes: u64,
    /// Where its elements are.
    pub data: Data,
}

impl Tensor {
    /// An error about this tensor: its path, its offset, its name.
    pub fn err(&self, what: impl std::fmt::Display) -> Error {
        err(&self.path, self.at, what).about(Subject::Tensor(self.name.clone()))
    }
}

/// What a tensor's records were, before they are checked together.
#[derive(Default)]
pub(super) struct Written {
    pub(super) dims: Vec<i64>,
    pub(super) data_type: Option<i64>,
    pub(super) name: Option<Vec<u8>>,
    pub(super) doc: Option<Vec<u8>>,
    pub(super) raw: Option<(usize, usize)>,
    pub(super) location: Option<i64>,
    pub(super) external: Option<Vec<Msg>>,
    pub(super) meta: Vec<Val>,
    /// The typed fields' records: (field number, record, its offset).
    pub(super) typed: Vec<(u32, Rec, usize)>,
}

/// Checks a tensor's records together (X5) and decides where its elements are.
pub(super) fn finish(r: &Wire<'_>, w: Written, at: u64, path: String) -> Result<Tensor> {
    let name = w.name.unwrap_or_default();
    let code = w.data_type.unwrap_or(0);
    let mut t = Tensor {
        name,
        dims: Vec::new(),
        dtype: &PLACEHOLDER,
        doc: w.doc.unwrap_or_default(),
        meta: w.meta,
        at,
        path,
        n: 0,
        nbytes: 0,
        data: Data::Empty,
    };
    let mut keys: Vec<&[u8]> =
        t.meta.iter().filter_map(|v| if let Val::M(m) = v { Some(m.str(1)) } else { None }).collect();
    keys.sort_unstable();
    if let Some(k) = keys.windows(2).find_map(|w| match w {
        [a, b] if a == b => Some(*a),
        _ => None,
    }) {
        return Err(t.err(format!("two metadata_props with the key '{}'", crate::text::escape_bytes(k))));
    }
    let Some(dtype) = Dtype::of(code) else {
        return Err(t.err(format!("data_type {code} is not in the table")));
    };
    t.dtype = dtype;
    for &d in &w.dims {
        match u64::try_from(d) {
            Ok(d) => t.dims.push(d),
            Err(_) => return Err(t.err(format!("a negative dim {d}"))),
        }
    }
    let mut n: u64 = 1;
    if t.dims.contains(&0) {
        n = 0;
    } else {
        for &d in &t.dims {
            n = n
                .checked_mul(d)
                .filter(|&n| n <= i64::MAX as u64)
                .ok_or_else(|| t.err("the element count is above 2^63 - 1"))?;
        }
    }
    t.n = n;
    // Bytes of the elements, and how many typed values hold them.
    let (want_bytes, want_values) = if dtype.is_packed() {
        let per = 8u64.checked_div(dtype.bits).unwrap_or(1);
        let b = n.div_ceil(per);
        (b, b)
    } else if dtype.code == 8 {
        (0, n)
    } else {
        let b = n
            .checked_mul(dtype.bits / 8)
            .filter(|&b| b <= i64::MAX as u64)
            .ok_or_else(|| t.err("the byte count is above 2^63 - 1"))?;
        (b, if dtype.is_complex() { n.saturating_mul(2) } else { n })
    };
    let external = w.location == Some(1);
    if external && w.external.is_none() {
        return Err(t.err("data_location EXTERNAL without external_data"));
    }
    if w.external.is_some() && !external {
        return Err(t.err("external_data written while data_location is not EXTERNAL"));
    }
    let first_typed = w.typed.first().map(|(k, _, _)| *k);
    if let (Some(_), Some(k)) = (w.raw, first_typed) {
        return Err(t.err(format!("raw_data beside {}", typed_name(k))));
    }
    if w.raw.is_some() && external {
        return Err(t.err("raw_data beside external data"));
    }
    if let (true, Some(k)) = (external, first_typed) {
        return Err(t.err(format!("external data beside {}", typed_name(k))));
    }
    if let Some((k, _, _)) = w.typed.iter().find(|(k, _, _)| *k != dtype.typed) {
        return Err(t.err(format!(
            "{} written for a {} tensor (it takes {})",
            typed_name(*k),
            dtype.name,
            typed_name(dtype.typed)
        )));
    }
    if let Some((s, e)) = w.raw {
        if dtype.code == 8 {
            return Err(t.err("a STRING tensor in raw_data"));
        }
        let len = e.saturating_sub(s) as u64;
        if len != want_bytes {
            return Err(t.err(format!("raw_data holds {len} bytes, {n} elements of {} take {want_bytes}", dtype.name)));
        }
        let bytes = r.buf.get(s..e).unwrap_or(&[]);
        if dtype.code == 9 {
            if let Some(i) = bytes.iter().position(|&b| b > 1) {
                return Err(t.err(format!("BOOL element {i} is {}", bytes.get(i).copied().unwrap_or(0))));
            }
        }
        check_last_byte(&t, bytes.last().copied())?;
        t.nbytes = want_bytes;
        t.data = Data::Raw { start: s as u64, len };
        return Ok(t);
    }
    if !w.typed.is_empty() {
        let (sha, count, bytes, last) = hash_typed(r, &t, &w.typed)?;
        if count != want_values {
            return Err(t.err(format!(
                "{} holds {count} values, {} with {n} elements takes {want_values}",
                typed_name(dtype.typed),
                dtype.name
            )));
        }
        check_last_byte(&t, last)?;
        t.nbytes = if dtype.code == 8 { bytes } else { want_bytes };
        t.data = Data::Typed(sha);
        return Ok(t);
    }
    if external {
        if dtype.code == 8 {
            return Err(t.err("a STRING tensor in external data"));
        }
        t.data = Data::External(external_entries(&t, w.external.as_deref().unwrap_or(&[]))?);
        t.nbytes = want_bytes;
        return Ok(t);
    }
    if n > 0 {
        return Err(t.err(format!("{n} elements and no data")));
    }
    Ok(t)
}

/// A packed type's last byte: its bits after the last element must be 0.
pub fn check_last_byte(t: &Tensor, last: Option<u8>) -> Result<()> {
    if !t.dtype.is_packed() {
        return Ok(());
    }
    let per = 8u64.checked_div(t.dtype.bits).unwrap_or(1);
    let used = t.n.checked_rem(per).unwrap_or(0);
    if let (Some(b), true) = (last, used != 0) {
        if u64::from(b).checked_shr(u32::try_from(used.saturating_mul(t.dtype.bits)).unwrap_or(64)).unwrap_or(0) != 0 {
            return Err(t.err("bits after the last packed element are not 0"));
        }
    }
    Ok(())
}

/// Hashes a tensor's typed values as its elements: the digest, the number
/// of values, the element bytes and the last byte written.
fn hash_typed(r: &Wire<'_>, t: &Tensor, recs: &[(u32, Rec, usize)]) -> Result<(Sha256Digest, u64, u64, Option<u8>)> {
    let dtype = t.dtype;
    let mut h = Sha256::new();
    let mut count: u64 = 0;
    let mut bytes: u64 = 0;
    let mut last = None;
    let field = M::Tensor.field(dtype.typed).map(|(_, f)| f).ok_or_else(|| Error::internal("no typed field"))?;
    let width = dtype.value_bytes();
    let fpath = format!("{}.{}", t.path, field.name);
    let shown = FieldPath::named(&fpath);
    for &(_, rec, at) in recs {
        if dtype.code == 8 {
            let Rec::Len(s, e) = rec else { continue };
            let v = r.buf.get(s..e).unwrap_or(&[]);
            h.update((v.len() as u64).to_le_bytes());
            h.update(v);
            count = count.saturating_add(1);
            bytes = bytes.saturating_add(8).saturating_add(v.len() as u64);
            continue;
        }
        r.numbers(field, rec, at, &shown, &mut |v, _| {
            let raw: u64 = match v {
                Val::I(i) => {
                    if let Some((lo, hi)) = dtype.range {
                        if i < lo || i > hi {
                            return Err(t.err(format!("{}[{count}] = {i} is outside {lo} … {hi}", field.name)));
                        }
                    }
                    i as u64
                }
                Val::U(u) => {
                    if let Some((_, hi)) = dtype.range {
                        if u > hi as u64 {
                            return Err(t.err(format!("{}[{count}] = {u} is outside 0 … {hi}", field.name)));
                        }
                    }
                    u
                }
                Val::F(bits) => u64::from(bits),
                _ => 0,
            };
            let le = raw.to_le_bytes();
            let piece = le.get(..width).unwrap_or(&le);
            h.update(piece);
            last = piece.last().copied();
            count = count.saturating_add(1);
            Ok(())
        })?;
    }
    Ok((h.finalize().into(), count, bytes, last))
}

/// Reads `external_data`'s entries (X6): the keys, the location's form, the numbers.
fn external_entries(t: &Tensor, entries: &[Msg]) -> Result<External> {
    let mut seen: Vec<&[u8]> = Vec::new();
    let (mut location, mut offset, mut length) = (None, None, None);
    for e in entries {
        let (k, v) = (e.str(1), e.str(2));
        if !matches!(k, b"location" | b"offset" | b"length" | b"checksum" | b"basepath") {
            return Err(t.err(format!("external_data key '{}'", crate::text::escape_bytes(k))));
        }
        if seen.contains(&k) {
            return Err(t.err(format!("external_data key {} twice", String::from_utf8_lossy(k))));
        }
        seen.push(k);
        match k {
            b"location" => location = Some(v.to_vec()),
            b"offset" => offset = Some(decimal(t, "offset", v)?),
            b"length" => length = Some(decimal(t, "length", v)?),
            _ => {}
        }
    }
    let Some(location) = location else {
        return Err(t.err("external_data without location"));
    };
    if !is_plain_relative(&location) {
        return Err(t.err(format!(
            "external location '{}' is not a relative name beneath the model's directory",
            crate::text::escape_bytes(&location)
        )));
    }
    Ok(External { location, offset: offset.unwrap_or(0), length })
}

/// Whether `loc` is one or more components joined by `/`, none empty, `.`
/// or `..`, none holding `\` or NUL (so not absolute either).
pub fn is_plain_relative(loc: &[u8]) -> bool {
    loc.split(|&b| b == b'/')
        .all(|c| !c.is_empty() && c != b"." && c != b".." && !c.contains(&b'\\') && !c.contains(&0))
}

/// An `offset` or `length` value: 1 to 20 ASCII digits, at most 2⁶⁴ − 1.
fn decimal(t: &Tensor, key: &str, v: &[u8]) -> Result<u64> {
    let shown = crate::text::escape_bytes(v);
    if v.is_empty() || v.len() > 20 || !v.iter().all(u8::is_ascii_digit) {
        return Err(t.err(format!("external {key} '{shown}' is not a decimal")));
    }
    let mut x: u64 = 0;
    for &d in v {
        x = x
            .checked_mul(10)
            .and_then(|x| x.checked_add(u64::from(d.saturating_sub(b'0'))))
            .ok_or_else(|| t.err(format!("external {key} '{shown}' does not fit 64 bits")))?;
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_names_only() {
        for ok in [&b"w.bin"[..], b"d/w.bin", b"a/b/c", b"..x", b"x.."] {
            assert!(is_plain_relative(ok), "{ok:?}");
        }
        for bad in [&b""[..], b"/abs", b"a//b", b"a/", b"./a", b"a/./b", b"../a", b"a/..", b"a\\b", b"a\0b"] {
            assert!(!is_plain_relative(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_table_names_every_type_once() {
        let mut codes: Vec<i32> = DTYPES.iter().map(|d| d.code).collect();
        codes.dedup();
        assert_eq!(codes, (1..=26).collect::<Vec<_>>());
        assert!(Dtype::of(0).is_none() && Dtype::of(27).is_none());
        assert_eq!(Dtype::of(23).map(|d| d.name), Some("F4"));
    }
}
