//! The safetensors kinds of [`ErrorKind`](super::ErrorKind): dtypes, tensor
//! sizes and tiling, and an index and the files it names.
//!
//! Written here, not in the format's folder: every format imports the
//! error, so the error may not import a format. The messages call the
//! helpers in scope where the enum is written (`kind.rs`).

use std::fmt;

use crate::text::escape_bytes;

/// Appends the safetensors kinds to those handed in, and hands them all on to
/// the next macro named (see `kind.rs`).
macro_rules! safetensors_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// A safetensors dtype not in the table.
            #[error(fmt = super::safetensors::unknown_dtype)]
            UnknownDtype(String),
            /// A tensor whose shape has no byte size, or whose data range does not hold it.
            #[error("{0}")]
            TensorSize(String),
            /// Tensor data ranges that do not tile the data region exactly.
            #[error("tensor data does not tile the data region: {0}")]
            Tiling(String),
            /// An index and the files it names disagree.
            #[error("{0}")]
            IndexMismatch(String),
            /// A metadata key with one value in a file's header and another in the index.
            #[error("metadata key has one value in the file's __metadata__ and another in the index")]
            MetadataConflict,
            /// A file name read from an input that is not a plain name in its directory.
            #[error("file name '{}' {why}: only a plain file name in the index's directory is accepted", escape_bytes(.name.as_bytes()))]
            NotPlainName {
                /// The name as read.
                name: String,
                /// What is wrong with it.
                why: &'static str,
            },
        }
    };
}
pub(super) use safetensors_kinds;

/// [`ErrorKind::UnknownDtype`](super::ErrorKind::UnknownDtype)'s message: a
/// function for the reason `gguf::bad_magic` is one.
pub(super) fn unknown_dtype(dtype: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "unknown dtype '{}'", escape_bytes(dtype.as_bytes()))
}
