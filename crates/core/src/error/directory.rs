//! The directory kinds of [`ErrorKind`](super::ErrorKind): what the walk of
//! a directory refuses, and a Git LFS pointer where weights should be
//! (docs/adr/0023).
//!
//! Written here, not in the format's folder: every format imports the
//! error, so the error may not import a format. The messages call the
//! helpers in scope where the enum is written (`kind.rs`).

/// Appends the directory kinds to those handed in, and hands them all on
/// to the next macro named (see `kind.rs`).
macro_rules! directory_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// A file named as weights that holds a Git LFS pointer, not the
            /// weights: the repository was cloned without its LFS files.
            #[error("is a Git LFS pointer, not the weights its name promises; `git lfs pull` fetches the file")]
            LfsPointer,
            /// An entry of a directory that its label refuses (directory
            /// contract §2: a link dangling, in a loop, to or through a
            /// directory; no file at all).
            #[error("{0}")]
            DirectoryEntry(String),
            /// `diff` of an Ollama model and a directory that holds no weights
            /// component, or more than one: which one to compare is not
            /// guessed (the message names them and the commands that would).
            #[error("{0}")]
            DirectoryWeightsToCompare(String),
        }
    };
}
pub(super) use directory_kinds;
