//! [`Subject`]: the key or tensor an error is about.

use std::fmt;

use crate::text::escape_bytes;

/// What an error is about: a key, a tensor, or an entry not yet named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The n-th KV (0-based), before its key could be read.
    KvNumber(u64),
    /// The KV with this key.
    Key(Vec<u8>),
    /// The n-th tensor info (0-based), before its name could be read.
    TensorNumber(u64),
    /// The tensor with this name.
    Tensor(Vec<u8>),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::KvNumber(n) => write!(f, "KV #{n}"),
            Subject::Key(k) => write!(f, "key '{}'", escape_bytes(k)),
            Subject::TensorNumber(n) => write!(f, "tensor info #{n}"),
            Subject::Tensor(t) => write!(f, "tensor '{}'", escape_bytes(t)),
        }
    }
}
