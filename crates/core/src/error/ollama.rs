//! The Ollama kinds of [`ErrorKind`](super::ErrorKind): a model's name and
//! its store.
//!
//! Written here, not in the format's folder: every format imports the
//! error, so the error may not import a format. The messages call the
//! helpers in scope where the enum is written (`kind.rs`).

/// Appends the Ollama kinds to those handed in, and hands them all on to
/// the next macro named (see `kind.rs`).
macro_rules! ollama_kinds {
    ([$next:ident $(, $later:ident)*] $($kinds:tt)*) => {
        $next! { [$($later),*] $($kinds)*
            /// An Ollama model name that is malformed or could leave the store.
            #[error("Ollama model name '{}' is not valid: {why}", escape_bytes(.name.as_bytes()))]
            OllamaName {
                /// The name as given.
                name: String,
                /// What is wrong.
                why: String,
            },
            /// An Ollama blob that is not what its layer says (missing, not a file,
            /// another size, another digest): the store is damaged.
            #[error("{0}")]
            DamagedStore(String),
        }
    };
}
pub(super) use ollama_kinds;
