//! The GGUF parser: a pure function from the bytes of one file to a
//! [`GgufFile`], with every check of spec §3 and §4.
//!
//! It does no I/O and allocates nothing in proportion to a declared count:
//! counts are checked against the bytes left in the file first, and lists
//! grow one parsed entry at a time.

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::gguf::GgufErrorKind;
use crate::gguf::cursor::{ByteOrder, Cursor};
use crate::gguf::ggml_type::GgmlType;
use crate::gguf::name::{Name, NameSet};
use crate::gguf::value::{Value, ValueType};
use crate::hash::Swap;
use crate::source::Step;

/// The alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// The key that sets the alignment.
pub const ALIGNMENT_KEY: &[u8] = b"general.alignment";

/// Keys with this prefix describe the split into files, not the model.
pub const SPLIT_PREFIX: &[u8] = b"split.";

/// The split keys whose values must be integers (spec §5).
pub const SPLIT_COUNT_KEYS: [&[u8]; 3] = [b"split.no", b"split.count", b"split.tensors.count"];

/// The fewest bytes a KV can take: key length, one key byte, type, one value byte.
const MIN_KV_SIZE: u64 = 8 + 1 + 4 + 1;
/// The fewest bytes a tensor info can take: name length, n_dims, type, offset.
const MIN_TENSOR_INFO_SIZE: u64 = 8 + 4 + 4 + 8;
/// Tensors have at most this many dims.
pub const MAX_DIMS: u32 = 4;

/// One metadata key-value pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Kv {
    /// The key's bytes (usually ASCII; not required to be UTF-8).
    pub key: Vec<u8>,
    /// The value.
    pub value: Value,
    /// File position where this KV starts.
    pub file_offset: u64,
}

/// A tensor's shape with trailing 1s dropped (spec §2): at least one dim, at most four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: [u64; 4],
    n: usize,
}

impl Shape {
    /// The canonical shape of stored dims: padded with 1s to four, then
    /// trailing 1s dropped, keeping at least one.
    pub fn canonical(stored: &[u64]) -> Shape {
        let mut dims = [1u64; 4];
        for (d, s) in dims.iter_mut().zip(stored) {
            *d = *s;
        }
        let n = dims.iter().rposition(|&d| d != 1).map_or(1, |i| i.saturating_add(1));
        Shape { dims, n }
    }

    /// The dims.
    pub fn dims(&self) -> &[u64] {
        self.dims.get(..self.n).unwrap_or(&self.dims)
    }
}

/// A tensor's dims as stored: 0 to [`MAX_DIMS`] of them, held inline
/// (a `Vec` would cost a heap block per tensor); derefs to the slice.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StoredDims {
    dims: [u64; 4],
    n: u8,
}

impl StoredDims {
    /// These dims; `None` for more than [`MAX_DIMS`].
    pub fn new(dims: &[u64]) -> Option<StoredDims> {
        let mut d = StoredDims::default();
        for &x in dims {
            d.push(x)?;
        }
        Some(d)
    }

    /// Appends a dim; `None` when there are [`MAX_DIMS`] already.
    fn push(&mut self, d: u64) -> Option<()> {
        *self.dims.get_mut(usize::from(self.n))? = d;
        self.n = self.n.checked_add(1)?;
        Some(())
    }

    /// The dims.
    pub fn as_slice(&self) -> &[u64] {
        self.dims.get(..usize::from(self.n)).unwrap_or(&self.dims)
    }
}

impl std::ops::Deref for StoredDims {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

/// As a `Vec<u64>` prints.
impl std::fmt::Debug for StoredDims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl PartialEq<Vec<u64>> for StoredDims {
    fn eq(&self, other: &Vec<u64>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

/// One tensor info: compact, as a model may hold a million of them.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// The name's bytes (may be empty).
    pub name: Name,
    /// The dims as stored (0 to 4 of them).
    pub stored_dims: StoredDims,
    /// The ggml type.
    pub ggml_type: &'static GgmlType,
    /// The stored offset, relative to the file's data_start.
    pub stored_offset: u64,
    /// Size of the data in bytes.
    pub nbytes: u64,
    /// File position where this tensor info starts.
    pub file_offset: u64,
}

impl TensorInfo {
    /// The canonical shape (spec §2).
    pub fn shape(&self) -> Shape {
        Shape::canonical(&self.stored_dims)
    }
}

/// Everything one GGUF file says, parsed and checked; tensor data not yet read.
#[derive(Debug, Clone)]
pub struct GgufFile {
    /// 2 or 3.
    pub version: u32,
    /// The byte order of the header, KV and tensor-info numbers.
    pub byte_order: ByteOrder,
    /// The KVs in file order, `split.` keys included.
    pub kvs: Vec<Kv>,
    /// The tensor infos in file order.
    pub tensors: Vec<TensorInfo>,
    /// This file's effective alignment (spec §4).
    pub alignment: u64,
    /// File position where the tensor infos end.
    pub tensor_info_end: u64,
    /// `tensor_info_end` rounded up to the alignment.
    pub data_start: u64,
    /// The file's length in bytes.
    pub file_len: u64,
}

impl GgufFile {
    /// The KV with this key, if any.
    pub fn get(&self, key: &[u8]) -> Option<&Kv> {
        self.kvs.iter().find(|kv| kv.key == key)
    }

    /// An integer split key's value, if present (types were checked at parse time).
    pub fn split_value(&self, key: &[u8]) -> Option<i128> {
        self.get(key).and_then(|kv| kv.value.as_integer())
    }

    /// The file position of a tensor's first data byte.
    pub fn data_position(&self, t: &TensorInfo) -> u64 {
        // Range checked at parse time: data_start + offset + nbytes <= file_len.
        self.data_start.saturating_add(t.stored_offset)
    }
}

/// `x` rounded up to a multiple of the power of two `a`, or `None` on overflow.
pub fn align_up(x: u64, a: u64) -> Option<u64> {
    match x.checked_rem(a)? {
        0 => Some(x),
        rem => x.checked_add(a.checked_sub(rem)?),
    }
}

/// Parses a complete file.
pub fn parse(bytes: &[u8]) -> Result<GgufFile> {
    match parse_prefix(bytes, bytes.len() as u64) {
        Ok(f) => Ok(f),
        Err(Step::Fail(e)) => Err(e),
        // Unreachable with the whole file in hand; reported as a truncation.
        Err(Step::NeedMore(at)) => {
            Err(Error::new(ErrorKind::Truncated { what: "file", needed: at, available: bytes.len() as u64 }))
        }
    }
}

/// Parses a file of `file_len` bytes of which `bytes` holds a prefix;
/// [`Step::NeedMore`] says how far the prefix must reach to go on.
pub(crate) fn parse_prefix(bytes: &[u8], file_len: u64) -> Result<GgufFile, Step> {
    if file_len == 0 {
        return Err(Error::new(ErrorKind::Empty).at(0).into());
    }
    let mut c = Cursor::new(bytes, file_len, ByteOrder::Little);
    let magic = c.take(4, "magic")?;
    if magic != b"GGUF" {
        let mut m = [0u8; 4];
        m.copy_from_slice(magic);
        return Err(Error::new(GgufErrorKind::BadMagic(m)).at(0).into());
    }
    let version_bytes = c.take(4, "version")?;
    let mut v = [0u8; 4];
    v.copy_from_slice(version_bytes);
    let (le, be) = (u32::from_le_bytes(v), u32::from_be_bytes(v));
    let (version, byte_order) = match (le, be) {
        (2 | 3, _) => (le, ByteOrder::Little),
        (_, 2 | 3) => (be, ByteOrder::Big),
        (1, _) | (_, 1) => return Err(Error::new(GgufErrorKind::Version1).at(4).into()),
        _ => return Err(Error::new(GgufErrorKind::UnsupportedVersion(le)).at(4).into()),
    };
    c.set_order(byte_order);

    let tensor_count = c.u64("tensor count")?;
    let kv_count = c.u64("KV count")?;
    // Errors point at the count fields themselves (bytes 8 and 16).
    c.check_count(kv_count, MIN_KV_SIZE, "KV count", 16)?;
    c.check_count(tensor_count, MIN_TENSOR_INFO_SIZE, "tensor count", 8)?;
    let both =
        kv_count.checked_mul(MIN_KV_SIZE).and_then(|k| tensor_count.checked_mul(MIN_TENSOR_INFO_SIZE)?.checked_add(k));
    if both.is_none_or(|n| n > c.remaining()) {
        return Err(Error::new(ErrorKind::CountTooLarge {
            what: "KV count plus tensor count",
            count: kv_count.saturating_add(tensor_count),
            available: c.remaining(),
        })
        .at(16)
        .into());
    }

    // Names are checked for repeats as they are read, so a file of
    // repeated entries stops at the second one instead of growing a list.
    let mut kvs: Vec<Kv> = Vec::new();
    let mut seen = NameSet::new();
    for i in 0..kv_count {
        let kv = read_kv(&mut c, i, &mut seen, &kvs)?;
        kvs.push(kv);
    }
    drop(seen);
    let alignment = effective_alignment(&kvs)?;
    check_split_keys(&kvs)?;

    let mut tensors: Vec<TensorInfo> = Vec::new();
    let mut seen = NameSet::new();
    for i in 0..tensor_count {
        let t = read_tensor_info(&mut c, i, &mut seen, &tensors)?;
        tensors.push(t);
    }
    drop(seen);
    // The list is kept as long as the model: without the slack of growing.
    tensors.shrink_to_fit();
    if byte_order == ByteOrder::Big {
        if let Some(t) = tensors.iter().find(|t| t.ggml_type.swap == Swap::Unsupported) {
            return Err(tensor_error(t, GgufErrorKind::BigEndianType(t.ggml_type.name)).into());
        }
    }

    let tensor_info_end = c.pos();
    let data_start = align_up(tensor_info_end, alignment)
        .ok_or_else(|| Error::new(ErrorKind::OffsetOverflow("data_start")).at(tensor_info_end))?;
    let file = GgufFile { version, byte_order, kvs, tensors, alignment, tensor_info_end, data_start, file_len };
    check_data_ranges(&file)?;
    Ok(file)
}

/// What could be read of a file that does not parse: its header, then its
/// KVs and tensor infos in file order up to the first that could not be
/// read (cut off, or malformed). `inspect` shows it before the error.
#[derive(Debug, Clone)]
pub struct PartialFile {
    /// 2 or 3, when the magic and version could be read.
    pub version: Option<u32>,
    /// The byte order of its numbers.
    pub byte_order: ByteOrder,
    /// The declared KV and tensor counts, when they could be read.
    pub counts: Option<(u64, u64)>,
    /// The KVs read, in file order.
    pub kvs: Vec<Kv>,
    /// The tensor infos read, in file order.
    pub tensors: Vec<TensorInfo>,
    /// True when the read stopped only because `bytes` (a prefix of the
    /// file) ran out: a longer prefix may read further.
    pub wants_more: bool,
}

/// Reads what it can of a file of `file_len` bytes whose first bytes are
/// `bytes`, with the same rules as [`parse_prefix`] entry by entry, but
/// keeping every entry read before the first failure. Nothing is allocated
/// in proportion to a declared count: lists grow an entry at a time.
pub(crate) fn parse_partial(bytes: &[u8], file_len: u64) -> PartialFile {
    let mut out = PartialFile {
        version: None,
        byte_order: ByteOrder::Little,
        counts: None,
        kvs: Vec::new(),
        tensors: Vec::new(),
        wants_more: false,
    };
    let mut c = Cursor::new(bytes, file_len, ByteOrder::Little);
    let stopped = read_partial(&mut c, &mut out);
    out.wants_more = matches!(stopped, Err(Step::NeedMore(_)));
    out
}

fn read_partial<'a>(c: &mut Cursor<'a>, out: &mut PartialFile) -> Result<(), Step> {
    if c.take(4, "magic")? != b"GGUF" {
        return Ok(());
    }
    let mut v = [0u8; 4];
    v.copy_from_slice(c.take(4, "version")?);
    let (le, be) = (u32::from_le_bytes(v), u32::from_be_bytes(v));
    out.byte_order = match (le, be) {
        (2 | 3, _) => ByteOrder::Little,
        (_, 2 | 3) => ByteOrder::Big,
        _ => return Ok(()),
    };
    out.version = Some(if out.byte_order == ByteOrder::Little { le } else { be });
    c.set_order(out.byte_order);
    let tensor_count = c.u64("tensor count")?;
    let kv_count = c.u64("KV count")?;
    out.counts = Some((kv_count, tensor_count));
    let mut seen = NameSet::new();
    for i in 0..kv_count {
        let kv = read_kv(c, i, &mut seen, &out.kvs)?;
        out.kvs.push(kv);
    }
    let mut seen = NameSet::new();
    for i in 0..tensor_count {
        let t = read_tensor_info(c, i, &mut seen, &out.tensors)?;
        out.tensors.push(t);
    }
    Ok(())
}

/// Reads one KV; `seen` holds the keys of `earlier`, the KVs read so far.
fn read_kv(c: &mut Cursor<'_>, index: u64, seen: &mut NameSet, earlier: &[Kv]) -> Result<Kv, Step> {
    let file_offset = c.pos();
    let key_len = c.u64("key length").map_err(|e| e.map_err(|e| e.about(Subject::KvNumber(index))))?;
    let key_bytes = c.take(key_len, "key").map_err(|e| e.map_err(|e| e.about(Subject::KvNumber(index))))?;
    if key_bytes.is_empty() {
        return Err(Error::new(GgufErrorKind::EmptyKey).at(file_offset).about(Subject::KvNumber(index)).into());
    }
    let key = key_bytes.to_vec();
    let about = |e: Error| e.about(Subject::Key(key.clone()));
    if !seen.insert(key_bytes, |i| earlier.get(i).map(|kv| kv.key.as_slice())) {
        return Err(about(Error::new(GgufErrorKind::DuplicateKey).at(file_offset)).into());
    }
    let type_at = c.pos();
    let id = c.u32("value type").map_err(|e| e.map_err(about))?;
    let ty =
        ValueType::from_id(id).ok_or_else(|| about(Error::new(GgufErrorKind::UnknownValueType(id)).at(type_at)))?;
    let value = Value::read(c, ty).map_err(|e| e.map_err(about))?;
    Ok(Kv { key, value, file_offset })
}

/// Reads one tensor info; `seen` holds the names of `earlier`, the infos read so far.
fn read_tensor_info(
    c: &mut Cursor<'_>,
    index: u64,
    seen: &mut NameSet,
    earlier: &[TensorInfo],
) -> Result<TensorInfo, Step> {
    let file_offset = c.pos();
    let numbered = |e: Step| e.map_err(|e| e.about(Subject::TensorNumber(index)));
    let name_len = c.u64("tensor name length").map_err(numbered)?;
    let name_bytes = c.take(name_len, "tensor name").map_err(numbered)?;
    let name = Name::new(name_bytes);
    let about = |e: Error| e.about(Subject::Tensor(name_bytes.to_vec()));
    if !seen.insert(name_bytes, |i| earlier.get(i).map(|t| t.name.as_slice())) {
        return Err(about(Error::new(GgufErrorKind::DuplicateTensor).at(file_offset)).into());
    }

    let dims_at = c.pos();
    let n_dims = c.u32("n_dims").map_err(|e| e.map_err(about))?;
    if n_dims > MAX_DIMS {
        return Err(about(Error::new(GgufErrorKind::TooManyDims(n_dims)).at(dims_at)).into());
    }
    // n_dims <= 4 here: every dim fits.
    let mut stored_dims = StoredDims::default();
    for _ in 0..n_dims {
        let at = c.pos();
        let d = c.u64("dim").map_err(|e| e.map_err(about))?;
        if d > i64::MAX as u64 {
            return Err(about(Error::new(GgufErrorKind::SizeOverflow("dim")).at(at)).into());
        }
        stored_dims.push(d).ok_or_else(|| about(Error::new(GgufErrorKind::TooManyDims(n_dims)).at(dims_at)))?;
    }
    let type_at = c.pos();
    let type_id = c.u32("ggml type").map_err(|e| e.map_err(about))?;
    let ggml_type = GgmlType::from_id(type_id)
        .ok_or_else(|| about(Error::new(GgufErrorKind::UnknownGgmlType(type_id)).at(type_at)))?;
    let stored_offset = c.u64("tensor offset").map_err(|e| e.map_err(about))?;
    let nbytes = tensor_nbytes(&stored_dims, ggml_type).map_err(|k| about(Error::new(k).at(dims_at)))?;
    Ok(TensorInfo { name, stored_dims, ggml_type, stored_offset, nbytes, file_offset })
}

/// nbytes = (dim_0 / block_size) * type_size * dim_1 * dim_2 * dim_3, with
/// the element count and every partial product checked against i64 (spec §3).
pub fn tensor_nbytes(dims: &[u64], t: &GgmlType) -> std::result::Result<u64, GgufErrorKind> {
    let limit = i64::MAX as u64;
    let mul =
        |acc: u64, d: u64, what| acc.checked_mul(d).filter(|&p| p <= limit).ok_or(GgufErrorKind::SizeOverflow(what));
    dims.iter().try_fold(1u64, |acc, &d| mul(acc, d, "element count"))?;
    let dim0 = dims.first().copied().unwrap_or(1);
    let blocks = match (dim0.checked_rem(t.block_size), dim0.checked_div(t.block_size)) {
        (Some(0), Some(blocks)) => blocks,
        _ => return Err(GgufErrorKind::NotBlockMultiple { dim: dim0, block_size: t.block_size, type_name: t.name }),
    };
    let first = mul(blocks, t.type_size, "nbytes")?;
    dims.iter().skip(1).try_fold(first, |acc, &d| mul(acc, d, "nbytes"))
}

fn tensor_error(t: &TensorInfo, kind: GgufErrorKind) -> Error {
    Error::new(kind).at(t.file_offset).about(Subject::Tensor(t.name.to_vec()))
}

fn effective_alignment(kvs: &[Kv]) -> Result<u64> {
    let Some(kv) = kvs.iter().find(|kv| kv.key == ALIGNMENT_KEY) else {
        return Ok(DEFAULT_ALIGNMENT);
    };
    let about = |k| Error::new(k).at(kv.file_offset).about(Subject::Key(kv.key.clone()));
    match kv.value {
        Value::Uint32(a) if a != 0 && a.is_power_of_two() => Ok(u64::from(a)),
        Value::Uint32(a) => Err(about(GgufErrorKind::AlignmentValue(a))),
        ref v => Err(about(GgufErrorKind::AlignmentType(v.value_type().name()))),
    }
}

fn check_split_keys(kvs: &[Kv]) -> Result<()> {
    for kv in kvs {
        if SPLIT_COUNT_KEYS.contains(&kv.key.as_slice()) && kv.value.as_integer().is_none() {
            let kind = GgufErrorKind::SplitKeyType(kv.value.value_type().name());
            return Err(Error::new(kind).at(kv.file_offset).about(Subject::Key(kv.key.clone())));
        }
    }
    Ok(())
}

/// Every tensor inside the file, and no two sharing a byte (spec §3).
fn check_data_ranges(f: &GgufFile) -> Result<()> {
    let range = |t: &TensorInfo| {
        let start = f.data_start.checked_add(t.stored_offset);
        (start, start.and_then(|s| s.checked_add(t.nbytes)))
    };
    for t in &f.tensors {
        let (start, end) = range(t);
        if end.is_none_or(|e| e > f.file_len) {
            let kind = GgufErrorKind::TensorOutOfFile {
                start: start.unwrap_or(u64::MAX),
                end: end.unwrap_or(u64::MAX),
                file_len: f.file_len,
            };
            return Err(tensor_error(t, kind));
        }
    }
    // Every range is in the file now. Indices of the tensors that hold
    // bytes, in order of their ranges, then of the file (8 bytes a tensor,
    // not a copy of each).
    let key = |i: usize| f.tensors.get(i).map(|t| (t.stored_offset, t.nbytes));
    let mut ranges: Vec<usize> = (0..f.tensors.len()).filter(|&i| key(i).is_some_and(|(_, n)| n > 0)).collect();
    ranges.sort_unstable_by_key(|&i| (key(i), i));
    for pair in ranges.windows(2) {
        if let [Some(a), Some(b)] = [pair.first(), pair.get(1)].map(|i| i.and_then(|&i| f.tensors.get(i))) {
            if b.stored_offset < a.stored_offset.saturating_add(a.nbytes) {
                return Err(tensor_error(b, GgufErrorKind::TensorsOverlap { other: a.name.to_vec() }));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_shapes() {
        assert_eq!(Shape::canonical(&[4096, 1]).dims(), &[4096]);
        assert_eq!(Shape::canonical(&[4096, 1, 1]).dims(), &[4096]);
        assert_eq!(Shape::canonical(&[]).dims(), &[1]);
        assert_eq!(Shape::canonical(&[1, 1, 1, 1]).dims(), &[1]);
        assert_eq!(Shape::canonical(&[1, 5]).dims(), &[1, 5]);
        assert_eq!(Shape::canonical(&[3, 0, 1]).dims(), &[3, 0]);
    }

    #[test]
    fn nbytes_rules() {
        let q8 = GgmlType::from_id(8).unwrap();
        assert_eq!(tensor_nbytes(&[32, 2], q8).ok(), Some(68));
        assert!(matches!(tensor_nbytes(&[33], q8), Err(GgufErrorKind::NotBlockMultiple { .. })));
        let i8t = GgmlType::from_id(24).unwrap();
        // A later zero does not excuse an earlier overflow.
        let big = i64::MAX as u64;
        assert!(tensor_nbytes(&[big, 2, 0], i8t).is_err());
        assert_eq!(tensor_nbytes(&[big], i8t).ok(), Some(big));
        let f32t = GgmlType::from_id(0).unwrap();
        assert!(tensor_nbytes(&[big / 2], f32t).is_err());
        assert_eq!(tensor_nbytes(&[], f32t).ok(), Some(4));
    }

    #[test]
    fn a_partial_read_keeps_every_entry_before_the_cut() {
        // GGUF v3, 1 tensor, 2 KVs: the first KV whole, the second cut.
        let mut f = b"GGUF".to_vec();
        f.extend_from_slice(&3u32.to_le_bytes());
        f.extend_from_slice(&1u64.to_le_bytes());
        f.extend_from_slice(&2u64.to_le_bytes());
        f.extend_from_slice(&1u64.to_le_bytes());
        f.extend_from_slice(b"a");
        f.extend_from_slice(&4u32.to_le_bytes());
        f.extend_from_slice(&7u32.to_le_bytes());
        f.extend_from_slice(&1u64.to_le_bytes());
        let p = parse_partial(&f, f.len() as u64);
        assert_eq!((p.version, p.counts, p.kvs.len(), p.tensors.len()), (Some(3), Some((2, 1)), 1, 0));
        assert_eq!(p.kvs.first().map(|kv| &kv.value), Some(&Value::Uint32(7)));
        assert!(!p.wants_more);
        // The same bytes as a prefix of a longer file: more may be read.
        assert!(parse_partial(&f, 1000).wants_more);
        assert_eq!(parse_partial(b"GGUX", 4).version, None);
    }

    #[test]
    fn align() {
        assert_eq!(align_up(0, 32), Some(0));
        assert_eq!(align_up(1, 32), Some(32));
        assert_eq!(align_up(64, 32), Some(64));
        assert_eq!(align_up(u64::MAX, 32), None);
    }
}
