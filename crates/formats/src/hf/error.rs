//! The Hugging Face cache error kinds: an `hf:` reference and what the
//! cache holds for it.
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).

use crate::error::{Error, ErrorKind, LayerError, LayerKind};

/// Why an `hf:` reference was rejected: the kinds only this layer raises.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HfErrorKind {
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
    /// No cache can be found to look in: no variable names one and there
    /// is no home directory.
    #[error("{0}")]
    HfNoCache(String),
}

impl LayerError for HfErrorKind {
    /// A reference not in the cache is a missing file to `--ignore-missing`.
    fn is_not_found(&self) -> bool {
        matches!(self, HfErrorKind::HfNotCached(_))
    }
}

impl From<HfErrorKind> for ErrorKind {
    fn from(kind: HfErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<HfErrorKind> for Error {
    fn from(kind: HfErrorKind) -> Self {
        Error::new(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_not_in_the_cache_is_not_found() {
        assert!(Error::new(HfErrorKind::HfNotCached("no".into())).is_not_found());
        let bad = HfErrorKind::HfName { name: "x".into(), why: "bad".into() };
        assert!(!Error::new(bad).is_not_found());
    }
}
