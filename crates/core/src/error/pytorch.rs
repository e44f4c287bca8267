//! The PyTorch kinds of [`ErrorKind`](super::ErrorKind): the zip archive,
//! the pickle read as data, the globals it may name, and the tensors it
//! builds (docs/SPEC.md Part V).
//!
//! Written here, not in the format's folder: every format imports the
//! error, so the error may not import a format. The messages call the
//! helpers in scope where the enum is written (`kind.rs`).

/// Appends the PyTorch kinds to those handed in, and hands them all on to
/// the next macro named (see `kind.rs`).
macro_rules! pytorch_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// A zip archive that is not one every zip reader reads alike.
            #[error("zip archive: {0}")]
            Zip(String),
            /// A TorchScript archive (`torch.jit.save`), not a checkpoint.
            #[error(fmt = super::pytorch::torchscript)]
            TorchScript(String),
            /// A pickle this reader does not accept as data.
            #[error("pickle: {0}")]
            Pickle(String),
            /// A `GLOBAL` outside the accepted list: what loading would run.
            #[error("pickle names '{}.{}', which is not accepted: loading the file would import and call `{}.{}`", escape_bytes(.module.as_bytes()), escape_bytes(.name.as_bytes()), escape_bytes(.module.as_bytes()), escape_bytes(.name.as_bytes()))]
            RefusedGlobal {
                /// The module line.
                module: String,
                /// The name line.
                name: String,
            },
            /// A checkpoint whose values or tensors the contract refuses.
            #[error("{0}")]
            Checkpoint(String),
        }
    };
}
pub(super) use pytorch_kinds;

/// [`ErrorKind::TorchScript`](super::ErrorKind::TorchScript)'s message.
pub(super) fn torchscript(record: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    write!(
        f,
        "a TorchScript archive (it holds '{}'), not a checkpoint: loading it runs the code it holds",
        crate::text::escape_bytes(record.as_bytes())
    )
}
