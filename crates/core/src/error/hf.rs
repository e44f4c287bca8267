//! The Hugging Face cache kinds of [`ErrorKind`](super::ErrorKind): an
//! `hf:` reference and what the cache holds for it.
//!
//! Written here, not in `src/hf/`: every module imports the error, so the
//! error may not import them (see `kind.rs`).

/// Appends the `hf:` kinds to those handed in, and hands them all on to
/// the next macro named (see `kind.rs`).
macro_rules! hf_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// An `hf:` reference that is malformed (`huggingface_hub` would refuse
            /// its repository id, or its revision is no ref name or commit).
            /// The message leaves the name out: it is the error's path.
            #[error("not a valid Hugging Face reference: {why}")]
            HfName {
                /// The reference as given.
                name: String,
                /// What is wrong.
                why: String,
            },
            /// An `hf:` reference the Hugging Face cache does not hold: what is
            /// missing, and the call that would download it (this tool never does).
            #[error("{0}")]
            HfNotCached(String),
        }
    };
}
pub(super) use hf_kinds;
