//! [`LayerKind`]: a layer's own error kinds, carried by the core's
//! [`ErrorKind`](super::ErrorKind) without the core naming them.
//!
//! The core sits below the formats and provenance, so its kind cannot list
//! theirs. Each layer writes its kinds as a plain enum in its own folder
//! (`error.rs` there), implements [`LayerError`] for it, and converts
//! it into [`ErrorKind::Format`](super::ErrorKind::Format) or
//! [`ErrorKind::Provenance`](super::ErrorKind::Provenance); a caller reads
//! it back by type with [`ErrorKind::of`](super::ErrorKind::of). What the
//! core asks of every kind (is it "not found", does the command line add a
//! hint) is a method of [`LayerError`], answered by the layer.

use std::fmt;

/// A hint the command line adds to a library error that one of its flags
/// answers (the library's messages name no flag; `output::error_line`
/// words it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Hint {
    /// A shard of a split model arrived on a stream: it can be labelled
    /// alone.
    ShardAlone,
    /// Metadata held in memory went past the limit: another read mode
    /// reads it in place.
    MetadataInMemory,
}

/// Any error type as `dyn std::error::Error`: implemented for every one,
/// so that [`LayerKind::of`] can downcast a layer's kind without trait
/// upcasting (Rust 1.86; the crate builds on 1.85).
pub trait AsError {
    /// `self`, as a `dyn std::error::Error`.
    fn as_error(&self) -> &(dyn std::error::Error + 'static);
}

impl<T: std::error::Error + 'static> AsError for T {
    fn as_error(&self) -> &(dyn std::error::Error + 'static) {
        self
    }
}

/// A layer's own error kinds: what the core asks of any of them, each
/// answer defaulting to "no".
pub trait LayerError: std::error::Error + AsError + Send + Sync + 'static {
    /// True when the input is simply not there (an `hf:` reference not in
    /// the cache), as the operating system's `NotFound` is: what
    /// `--ignore-missing` leaves out.
    fn is_not_found(&self) -> bool {
        false
    }

    /// The command line's hint for this kind, if it adds one.
    fn hint(&self) -> Option<Hint> {
        None
    }

    /// This kind again, for a kind with a [`hint`](LayerError::hint): a
    /// repeated error (`Error::repeat`) must keep it to be hinted again.
    /// `None` (the default) repeats the words alone.
    fn repeat(&self) -> Option<LayerKind> {
        None
    }
}

/// One layer's kind, type-erased: the core holds it without naming its
/// type. Its message is the kind's own.
pub struct LayerKind(Box<dyn LayerError>);

impl LayerKind {
    /// Wraps a layer's kind.
    pub fn new(kind: impl LayerError) -> Self {
        LayerKind(Box::new(kind))
    }

    /// The kind, when it is of type `K`.
    pub fn of<K: LayerError>(&self) -> Option<&K> {
        self.0.as_error().downcast_ref::<K>()
    }

    /// The kind, as what the core asks of it.
    pub fn get(&self) -> &dyn LayerError {
        &*self.0
    }
}

impl fmt::Debug for LayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for LayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("a {0}")]
    struct A(u8);
    impl LayerError for A {}

    #[derive(Debug, thiserror::Error)]
    #[error("b")]
    struct B;
    impl LayerError for B {}

    #[test]
    fn reads_back_by_type_only() {
        let k = LayerKind::new(A(7));
        assert_eq!(k.of::<A>().map(|a| a.0), Some(7));
        assert!(k.of::<B>().is_none());
        assert_eq!(k.to_string(), "a 7");
        assert!(!k.get().is_not_found());
        assert_eq!(k.get().hint(), None);
        assert!(k.get().repeat().is_none());
    }
}
