//! A format's side of reading metadata: its parser is a pure function of
//! a prefix of the file, which asks for a longer prefix when it needs one.

use crate::error::{Result, Step};

/// A format's pure metadata parser: handed the file or a prefix of it and
/// the file's length, it returns the parsed metadata and the file position
/// where the metadata ends, or asks for a longer prefix ([`Step::NeedMore`]).
/// A plain function (no captures), so that a stream can keep it for its
/// verdict at the end.
pub(crate) type PrefixParser<T> = fn(&[u8], u64) -> Result<(T, u64), Step>;
