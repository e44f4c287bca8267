//! The ONNX kind of [`ErrorKind`](super::ErrorKind) (docs/SPEC.md Part VI).
//!
//! One kind: every refusal of the wire, the schema, a tensor or its
//! external data says what in its message, which begins with the field path
//! (`graph.initializer[0].dims`); the byte offset and the tensor are set on
//! the [`Error`](super::Error) itself.

/// Appends the ONNX kind to those handed in, and hands them all on to the
/// next macro named (see `kind.rs`).
macro_rules! onnx_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// An ONNX model the contract refuses: its field path, then why.
            #[error("{0}")]
            Onnx(String),
        }
    };
}
pub(super) use onnx_kinds;
