//! One safetensors file: `LE_u64(N)`, `N` bytes of JSON header, then the
//! data region. `parse_prefix` is a pure function of the file's first bytes
//! and its length: it checks every rule of the contract (docs/SPEC.md,
//! "Safetensors") and never allocates in proportion to a size it has not
//! checked against the bytes that exist.

use crate::safetensors::SafetensorsErrorKind;
use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::json::{Json, parse_strict};
use crate::safetensors::dtype::{Dtype, SizeError};
use crate::source::Step;

/// The most header bytes a file may declare (the reference reader's limit).
pub const MAX_HEADER: u64 = 100_000_000;

/// The deepest JSON nesting a header or index may have.
pub const MAX_DEPTH: usize = 64;

/// The header member that holds the file's metadata.
pub const METADATA_KEY: &str = "__metadata__";

/// A tensor entry of a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorEntry {
    /// The name, unescaped.
    pub name: String,
    /// The dtype's table row.
    pub dtype: &'static Dtype,
    /// The shape as stored (rank 0 is a scalar).
    pub shape: Vec<u64>,
    /// `data_offsets[0]`, relative to the data region.
    pub begin: u64,
    /// `data_offsets[1]`.
    pub end: u64,
    /// The byte size from dtype and shape (`end - begin`).
    pub nbytes: u64,
    /// Members other than dtype, shape and data_offsets (ignored by the
    /// label; `inspect` warns).
    pub unknown_members: Vec<String>,
}

/// A parsed safetensors file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafetensorsFile {
    /// The declared header length `N`.
    pub header_len: u64,
    /// The file position of the data region: `8 + N`.
    pub data_start: u64,
    /// The file's length.
    pub file_len: u64,
    /// `__metadata__`, sorted by key (absent, `null` and `{}` are the same).
    pub metadata: BTreeMap<String, String>,
    /// The tensors in header order.
    pub tensors: Vec<TensorEntry>,
}

impl SafetensorsFile {
    /// The file position of a tensor's first byte.
    pub fn data_position(&self, t: &TensorEntry) -> u64 {
        self.data_start.saturating_add(t.begin)
    }
}

fn fail(kind: impl Into<ErrorKind>) -> Error {
    Error::new(kind)
}

/// Parses a whole file held in memory.
pub fn parse(bytes: &[u8]) -> Result<SafetensorsFile> {
    match parse_prefix(bytes, bytes.len() as u64) {
        Ok((f, _)) => Ok(f),
        Err(Step::Fail(e)) => Err(e),
        Err(Step::NeedMore(_)) => Err(Error::internal("a whole file asked for more")),
    }
}

/// Parses the header of a file of `file_len` bytes whose first bytes are
/// `bytes`; returns the file and the position where its data begins, or
/// asks for a longer prefix.
pub(crate) fn parse_prefix(bytes: &[u8], file_len: u64) -> Result<(SafetensorsFile, u64), Step> {
    if file_len < 8 {
        return Err(fail(ErrorKind::Truncated { what: "header length", needed: 8, available: file_len }).at(0).into());
    }
    let Some(len_bytes) = bytes.get(..8) else {
        return Err(Step::NeedMore(8));
    };
    let mut n = [0u8; 8];
    n.copy_from_slice(len_bytes);
    let header_len = u64::from_le_bytes(n);
    if header_len > MAX_HEADER {
        return Err(fail(ErrorKind::HeaderTooLarge { declared: header_len, limit: MAX_HEADER }).at(0).into());
    }
    let data_start = header_len.saturating_add(8);
    if data_start > file_len {
        let e = ErrorKind::Truncated { what: "JSON header", needed: header_len, available: file_len.saturating_sub(8) };
        return Err(fail(e).at(8).into());
    }
    let end = usize::try_from(data_start).map_err(|_| Step::NeedMore(data_start))?;
    let Some(text) = bytes.get(8..end) else {
        return Err(Step::NeedMore(data_start));
    };
    let json = parse_strict(text, MAX_DEPTH).map_err(|e| {
        let at = 8u64.saturating_add(e.offset.unwrap_or(0));
        fail(ErrorKind::Json(e.what)).at(at)
    })?;
    let file = read_header(&json, header_len, data_start, file_len)?;
    Ok((file, data_start))
}

/// The header's members, checked against the contract.
fn read_header(json: &Json, header_len: u64, data_start: u64, file_len: u64) -> Result<SafetensorsFile> {
    let Some(members) = json.as_object() else {
        return Err(Error::schema(format!("the header is a JSON {}, not an object", json.kind())).at(8));
    };
    let mut metadata = BTreeMap::new();
    let mut tensors = Vec::with_capacity(members.len());
    for (name, value) in members {
        if name == METADATA_KEY {
            // `null` is no metadata, as the `safetensors` crate reads it
            // (contract §3, revision 2).
            if !matches!(value, Json::Null) {
                metadata = string_map(value, METADATA_KEY)?;
            }
            continue;
        }
        let located = |e: Error| e.about(Subject::Tensor(name.as_bytes().to_vec()));
        tensors.push(tensor_entry(name, value).map_err(located)?);
    }
    check_tiling(&tensors, data_start, file_len)?;
    Ok(SafetensorsFile { header_len, data_start, file_len, metadata, tensors })
}

/// An object whose values are all strings (`__metadata__`).
pub(crate) fn string_map(value: &Json, what: &str) -> Result<BTreeMap<String, String>> {
    let Some(members) = value.as_object() else {
        return Err(Error::schema(format!("{what} is a JSON {}, not an object", value.kind())));
    };
    let mut map = BTreeMap::new();
    for (k, v) in members {
        let Some(s) = v.as_str() else {
            let e = Error::schema(format!("{what} values must be strings, found a JSON {}", v.kind()));
            return Err(e.about(Subject::Key(k.as_bytes().to_vec())));
        };
        map.insert(k.clone(), s.to_string());
    }
    Ok(map)
}

/// An integer in 0..2^64-1 written without fraction or exponent.
fn integer(v: &Json, what: &str) -> Result<u64> {
    v.as_u64().ok_or_else(|| {
        Error::schema(format!(
            "{what} must be an integer in 0..2^64-1 without fraction or exponent, found a JSON {}",
            v.kind()
        ))
    })
}

fn tensor_entry(name: &str, value: &Json) -> Result<TensorEntry> {
    let Some(members) = value.as_object() else {
        return Err(Error::schema(format!("a tensor entry must be an object, found a JSON {}", value.kind())));
    };
    let member = |key: &str| value.get(key).ok_or_else(|| Error::schema(format!("the tensor entry has no {key}")));
    let dtype_name = member("dtype")?;
    let Some(dtype_name) = dtype_name.as_str() else {
        return Err(Error::schema(format!("dtype must be a string, found a JSON {}", dtype_name.kind())));
    };
    let dtype =
        Dtype::from_name(dtype_name).ok_or_else(|| fail(SafetensorsErrorKind::UnknownDtype(dtype_name.to_string())))?;
    let shape_json = member("shape")?;
    let Some(dims) = shape_json.as_array() else {
        return Err(Error::schema(format!("shape must be an array, found a JSON {}", shape_json.kind())));
    };
    let shape = dims.iter().map(|d| integer(d, "a shape dimension")).collect::<Result<Vec<u64>>>()?;
    let offsets = member("data_offsets")?;
    let pair = offsets.as_array().unwrap_or(&[]);
    let [b, e] = pair else {
        return Err(Error::schema("data_offsets must be an array of exactly two integers [begin, end]"));
    };
    let (begin, end) = (integer(b, "data_offsets[0]")?, integer(e, "data_offsets[1]")?);
    if begin > end {
        return Err(Error::schema(format!("data_offsets [{begin}, {end}] begins after it ends")));
    }
    let nbytes = dtype.nbytes(&shape).map_err(|e| {
        let why = match e {
            SizeError::Overflow => "overflows u64",
            SizeError::NotWholeBytes => "is not a whole number of bytes",
        };
        fail(SafetensorsErrorKind::TensorSize(format!("the size of shape {shape:?} of {} {why}", dtype.name)))
    })?;
    let span = end.saturating_sub(begin);
    if span != nbytes {
        let why =
            format!("data_offsets [{begin}, {end}] hold {span} bytes, but {} {shape:?} needs {nbytes}", dtype.name);
        return Err(fail(SafetensorsErrorKind::TensorSize(why)));
    }
    let unknown_members = members
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "dtype" | "shape" | "data_offsets"))
        .map(|(k, _)| k.clone())
        .collect();
    Ok(TensorEntry { name: name.to_string(), dtype, shape, begin, end, nbytes, unknown_members })
}

/// The ranges, in ascending `(begin, end)` order, must tile the data region
/// exactly: no hole, no overlap, nothing after the last.
fn check_tiling(tensors: &[TensorEntry], data_start: u64, file_len: u64) -> Result<()> {
    let region = file_len.saturating_sub(data_start);
    let mut by_range: Vec<&TensorEntry> = tensors.iter().collect();
    by_range.sort_by_key(|t| (t.begin, t.end));
    let mut next = 0u64;
    for t in by_range {
        let located =
            |e: Error| e.at(data_start.saturating_add(t.begin)).about(Subject::Tensor(t.name.as_bytes().to_vec()));
        if t.begin > next {
            // Located at the hole's start: always inside the file, where the
            // next tensor's begin may lie far past its end.
            let what = format!("a hole: bytes {next}..{} of the data region belong to no tensor", t.begin);
            let e = fail(SafetensorsErrorKind::Tiling(what)).at(data_start.saturating_add(next));
            return Err(e.about(Subject::Tensor(t.name.as_bytes().to_vec())));
        }
        if t.begin < next {
            let what =
                format!("data_offsets [{}, {}] overlap the previous tensor, which ends at {next}", t.begin, t.end);
            return Err(located(fail(SafetensorsErrorKind::Tiling(what))));
        }
        if t.end > region {
            let what = format!("data_offsets [{}, {}] reach past the data region ({region} bytes)", t.begin, t.end);
            return Err(located(fail(SafetensorsErrorKind::Tiling(what))));
        }
        next = t.end;
    }
    // A stream's length is not known until it ends; it is judged again
    // then, at its true length, by this same check.
    if next != region && file_len != crate::source::UNKNOWN_LEN {
        let what = format!("{} bytes after the last tensor belong to no tensor", region.saturating_sub(next));
        return Err(fail(SafetensorsErrorKind::Tiling(what)).at(data_start.saturating_add(next)));
    }
    Ok(())
}
