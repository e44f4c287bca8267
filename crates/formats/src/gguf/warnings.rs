//! What a user should know about a GGUF file that labels fine: whether
//! llama.cpp will load it, and where it leaves the format's conventions.
//! About loadability, never about the label.

use serde_json::{Map, Value as JsonValue, json};

use crate::error::Result;
use crate::gguf::arrays::{elements_not_utf8, string_is_utf8};
use crate::gguf::model::Shard;
use crate::gguf::parse::{GgufFile, Kv, align_up};
use crate::gguf::value::{Value, ValueType};
use crate::render::{count, dims_text};
use crate::text::escape_bytes;

/// llama.cpp's default `GGML_MAX_NAME`: a tensor name must be shorter, as
/// it is stored with its NUL in a fixed 64-byte field.
pub const LLAMA_CPP_MAX_NAME: usize = 64;

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
                "{} at file position {start}, between tensor '{}' and tensor '{}'",
                count(*len, "unused byte", "unused bytes"),
                e(after),
                e(before)
            ),
            WarningKind::Gap { after: None, before, start, len } => format!(
                "{} at file position {start}, at the start of the data section before tensor '{}'",
                count(*len, "unused byte", "unused bytes"),
                e(before)
            ),
            WarningKind::TrailingBytes { start, len } => {
                format!(
                    "{} after the tensor data and its padding, from file position {start}",
                    count(*len, "byte", "bytes")
                )
            }
            WarningKind::InvalidUtf8Key { key } => format!("key '{}' is not valid UTF-8", e(key)),
            WarningKind::InvalidUtf8Value { key, elements: None } => {
                format!("the string value of '{}' is not valid UTF-8", e(key))
            }
            WarningKind::InvalidUtf8Value { key, elements: Some((1, first)) } => {
                format!("element {first} of '{}' holds a string that is not valid UTF-8", e(key))
            }
            WarningKind::InvalidUtf8Value { key, elements: Some((n, first)) } => format!(
                "{n} elements of '{}' hold strings that are not valid UTF-8 (the first is element {first})",
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
    pub(crate) fn json_fields(&self, o: &mut Map<String, JsonValue>) {
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
                        o.insert("after".into(), JsonValue::Null);
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
    /// Index of the file (in [`Model::shards`](crate::gguf::Model::shards)) it concerns.
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
pub(crate) fn tensor_warnings(shard: usize, f: &GgufFile, file_len: u64, out: &mut Vec<Warning>) {
    let mut push = |kind| out.push(Warning { shard, kind });
    let mut previous: Option<&crate::gguf::parse::TensorInfo> = None;
    for t in &f.tensors {
        if std::str::from_utf8(&t.name).is_err() {
            push(WarningKind::InvalidUtf8TensorName { tensor: t.name.to_vec() });
        }
        if t.name.len() >= LLAMA_CPP_MAX_NAME {
            push(WarningKind::LongTensorName { tensor: t.name.to_vec() });
        }
        let shape = t.shape();
        if t.stored_dims.as_slice() != shape.dims() {
            push(WarningKind::StoredShape {
                tensor: t.name.to_vec(),
                stored: t.stored_dims.to_vec(),
                canonical: shape.dims().to_vec(),
            });
        }
        if let Some(p) = previous.filter(|p| t.stored_offset < p.stored_offset) {
            push(WarningKind::DataOrder {
                tensor: t.name.to_vec(),
                offset: t.stored_offset,
                previous: p.name.to_vec(),
                previous_offset: p.stored_offset,
            });
        }
        if t.stored_offset.checked_rem(f.alignment).is_some_and(|r| r != 0) {
            push(WarningKind::UnalignedOffset {
                tensor: t.name.to_vec(),
                offset: t.stored_offset,
                alignment: f.alignment,
            });
        }
        previous = Some(t);
    }
    // Gaps: walk the data in file order; each tensor should start where the
    // previous one ended, rounded up to the alignment.
    let mut by_offset: Vec<&crate::gguf::parse::TensorInfo> = f.tensors.iter().collect();
    by_offset.sort_by_key(|t| (t.stored_offset, t.nbytes));
    let mut expected = 0u64;
    let mut after: Option<&[u8]> = None;
    for t in by_offset {
        if t.stored_offset > expected {
            push(WarningKind::Gap {
                after: after.map(<[u8]>::to_vec),
                before: t.name.to_vec(),
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
    // The file's length, not the parsed one: a stream's is known only
    // once it was read to its end.
    if file_len > data_end {
        push(WarningKind::TrailingBytes { start: data_end, len: file_len.saturating_sub(data_end) });
    }
}

/// The warnings about one KV of `shard` (its key, strings and nesting).
pub(crate) fn kv_warnings(s: usize, shard: &Shard, kv: &Kv, out: &mut Vec<Warning>) -> Result<()> {
    let mut push = |kind| out.push(Warning { shard: s, kind });
    let key = || kv.key.clone();
    if std::str::from_utf8(&kv.key).is_err() {
        push(WarningKind::InvalidUtf8Key { key: key() });
    }
    if !follows_key_convention(&kv.key) {
        push(WarningKind::KeyConvention { key: key() });
    }
    match &kv.value {
        Value::String(v) if !string_is_utf8(shard, v)? => {
            push(WarningKind::InvalidUtf8Value { key: key(), elements: None });
        }
        Value::Array(a) => {
            if a.elem_type == ValueType::Array {
                push(WarningKind::NestedArray { key: key() });
            }
            if let Some(bad_and_first) = elements_not_utf8(shard, a)? {
                push(WarningKind::InvalidUtf8Value { key: key(), elements: Some(bad_and_first) });
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
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
}
