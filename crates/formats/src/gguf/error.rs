//! GGUF's error kinds: the header, keys and values, tensor infos and their
//! data ranges, and a split model's shards.
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, Hint, LayerError, LayerKind};
use std::path::PathBuf;

use crate::text::{escape_bytes, escape_name};

/// Why a GGUF file (or set of shards) was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GgufErrorKind {
    /// The first four bytes are not `GGUF`.
    #[error("not a GGUF file: magic is {}, expected 47475546 (\"GGUF\")", hex::encode(.0))]
    BadMagic([u8; 4]),
    /// GGUF version 1 used 32-bit counts and is not supported.
    #[error("GGUF version 1 (32-bit counts) is not supported; only versions 2 and 3 are")]
    Version1,
    /// A version field that reads as neither 2 nor 3 in either byte order.
    #[error("unsupported GGUF version {0} (0x{0:08x}); only versions 2 and 3 are supported")]
    UnsupportedVersion(u32),
    /// A KV whose key is the empty string.
    #[error("empty key")]
    EmptyKey,
    /// A key that appears twice in one file.
    #[error("duplicate key")]
    DuplicateKey,
    /// A tensor name that appears twice in one file.
    #[error("duplicate tensor name")]
    DuplicateTensor,
    /// A value type (or array element type) outside 0–12.
    #[error("unknown value type {0}")]
    UnknownValueType(u32),
    /// Arrays nested more than eight deep.
    #[error("arrays nested deeper than {max} levels")]
    NestingTooDeep {
        /// The deepest level allowed.
        max: u32,
    },
    /// A BOOL byte other than 0 or 1.
    #[error("BOOL value is byte {0}; only 0 and 1 are allowed")]
    InvalidBool(u8),
    /// A tensor with more than four dimensions.
    #[error("n_dims is {0}; at most 4 are allowed")]
    TooManyDims(u32),
    /// A dimension, element count or byte size that does not fit in i64.
    #[error("{0} overflows a signed 64-bit integer")]
    SizeOverflow(&'static str),
    /// A first dimension that is not a whole number of blocks.
    #[error("dim 0 is {dim}, not a multiple of the {type_name} block size {block_size}")]
    NotBlockMultiple {
        /// The stored first dimension.
        dim: u64,
        /// The type's block size.
        block_size: u64,
        /// The type's name.
        type_name: &'static str,
    },
    /// A ggml type id with no known size.
    #[error("unknown ggml type {0}")]
    UnknownGgmlType(u32),
    /// `general.alignment` stored with a type other than UINT32.
    #[error("general.alignment must be UINT32, found {0}")]
    AlignmentType(&'static str),
    /// `general.alignment` zero or not a power of two.
    #[error("general.alignment must be a non-zero power of two, found {0}")]
    AlignmentValue(u32),
    /// A `split.` count key that does not hold an integer.
    #[error("must hold an integer (UINT8..INT32, UINT64, INT64), found {0}")]
    SplitKeyType(&'static str),
    /// A tensor whose data range is not inside its file.
    #[error("data range {start}..{end} lies outside the file ({file_len} bytes)")]
    TensorOutOfFile {
        /// First byte of the range (file position), if computable.
        start: u64,
        /// One past the last byte (file position), or u64::MAX on overflow.
        end: u64,
        /// The file's length.
        file_len: u64,
    },
    /// Two tensors whose data ranges share a byte.
    #[error("data range overlaps tensor '{}'", escape_bytes(.other))]
    TensorsOverlap {
        /// The other tensor's name.
        other: Vec<u8>,
    },
    /// A big-endian tensor of a type that has no byte-swap rule.
    #[error("big-endian tensor of type {0} cannot be converted to little-endian")]
    BigEndianType(&'static str),
    /// A shard file name that does not follow `-NNNNN-of-MMMMM.gguf`.
    #[error(
        "split.count is {count} but the file name does not end in -{:05}-of-{:05}.gguf",
        .no.saturating_add(1), .count
    )]
    ShardName {
        /// split.no read from the file.
        no: u64,
        /// split.count read from the file.
        count: u64,
    },
    /// A shard of a split model arrived on a stream, where its siblings
    /// cannot be found. (The command line adds how to label it alone:
    /// [`Hint::ShardAlone`].)
    #[error(
        "this is shard {} of {count} of a split model; label the set by its first file's path \
         (…-00001-of-{count:05}.gguf)",
        .no.saturating_add(1)
    )]
    StreamShard {
        /// split.no read from the stream.
        no: u64,
        /// split.count read from the stream.
        count: u64,
    },
    /// A shard lacks a split key that a shard must have.
    #[error("shard has no {0} key")]
    MissingSplitKey(&'static str),
    /// A shard disagrees with its name or with the first shard.
    #[error("{key} is {found}, expected {expected}")]
    ShardMismatch {
        /// The split key that disagrees.
        key: &'static str,
        /// The value in the file.
        found: i128,
        /// The value the name or first shard implies.
        expected: i128,
    },
    /// The same key with different values in two shards.
    #[error("key has a different type or value in {}", escape_name(.other.as_os_str().as_encoded_bytes()))]
    ConflictingKey {
        /// The other shard that holds the key.
        other: PathBuf,
    },
}

impl LayerError for GgufErrorKind {
    fn hint(&self) -> Option<Hint> {
        match self {
            GgufErrorKind::StreamShard { .. } => Some(Hint::ShardAlone),
            _ => None,
        }
    }

    fn repeat(&self) -> Option<LayerKind> {
        match *self {
            GgufErrorKind::StreamShard { no, count } => Some(LayerKind::new(GgufErrorKind::StreamShard { no, count })),
            _ => None,
        }
    }
}

impl From<GgufErrorKind> for ErrorKind {
    fn from(kind: GgufErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<GgufErrorKind> for Error {
    fn from(kind: GgufErrorKind) -> Self {
        Error::new(kind)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::output::{error_line, write_error_json};

    /// The library's message names no flag; the command line adds the one
    /// that answers it, in the line and the JSON entry, and again for a
    /// second subject naming the same file (`Error::repeat`).
    #[test]
    fn a_shard_on_a_stream_is_hinted_on_the_command_line() {
        let shard = Error::new(GgufErrorKind::StreamShard { no: 0, count: 2 }).at(60).in_file(Path::new("-"));
        assert!(!shard.to_string().contains("--"), "{shard}");
        let words = "byte 60: this is shard 1 of 2 of a split model; label the set by its first file's path \
                     (…-00001-of-00002.gguf), or this shard alone with --no-join";
        assert_eq!(error_line(&shard), format!("-: {words}"));
        let mut out = Vec::new();
        write_error_json(&mut crate::output::JsonWriter::compact(&mut out), Path::new("-"), &shard).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(json, serde_json::json!({"path": "-", "error": format!("-: {words}")}));
        assert_eq!(error_line(&shard.repeat()), format!("-: {words}"));
        assert!(matches!(
            shard.repeat().kind().of::<GgufErrorKind>(),
            Some(GgufErrorKind::StreamShard { no: 0, count: 2 })
        ));
    }

    /// Other GGUF kinds repeat as their words alone.
    #[test]
    fn other_kinds_repeat_as_words() {
        let e = Error::new(GgufErrorKind::EmptyKey).at(3);
        assert!(e.repeat().kind().of::<GgufErrorKind>().is_none());
        assert_eq!(e.repeat().to_string(), e.to_string());
    }
}
