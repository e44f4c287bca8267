//! The GGUF kinds of [`ErrorKind`](super::ErrorKind): the header, keys and
//! values, tensor infos and their data ranges, and a split model's shards.
//!
//! Written here, not in the format's folder: every format imports the
//! error, so the error may not import a format. The messages call the
//! helpers in scope where the enum is written (`kind.rs`).

use std::fmt;

/// Appends the GGUF kinds to those handed in, and hands them all on to
/// the next macro named (see `kind.rs`).
macro_rules! gguf_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// The first four bytes are not `GGUF`.
            #[error(fmt = super::gguf::bad_magic)]
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
            /// cannot be found. (The command line adds how to label it alone.)
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
            #[error("key has a different type or value in {}", name(.other))]
            ConflictingKey {
                /// The other shard that holds the key.
                other: PathBuf,
            },
        }
    };
}
pub(super) use gguf_kinds;

/// [`ErrorKind::BadMagic`](super::ErrorKind::BadMagic)'s message. A
/// function rather than `.0` in the attribute: thiserror names a tuple
/// field read in an expression with the span of the `.0` written here, which
/// the enum, written by another macro, does not bind.
pub(super) fn bad_magic(magic: &[u8; 4], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "not a GGUF file: magic is {}, expected 47475546 (\"GGUF\")", hex::encode(magic))
}
