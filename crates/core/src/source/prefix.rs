//! The protocol between a format's pure parser of a file's prefix and
//! `Source`, which hands it the prefix: the parser finishes, fails, or asks
//! for a longer prefix ([`Step`]), and `Source` reads more and calls again.

use crate::error::{Error, ErrorKind, Result};

/// A format's pure metadata parser: handed the file or a prefix of it and
/// the file's length, it returns the parsed metadata and the file position
/// where the metadata ends, or asks for a longer prefix ([`Step::NeedMore`]).
/// A plain function (no captures), so that a stream can keep it for its
/// verdict at the end.
pub type PrefixParser<T> = fn(&[u8], u64) -> Result<(T, u64), Step>;

/// Why a parse of a file's prefix could not finish: the protocol between a
/// format's pure parser, which may be handed only the first bytes of a
/// file, and `Source`, which reads more and tries again.
#[derive(Debug)]
pub enum Step {
    /// The file itself is malformed: a final error.
    Fail(Error),
    /// The cursor holds a prefix of the file and the read needs the bytes up
    /// to this file position.
    NeedMore(u64),
}

impl From<Error> for Step {
    fn from(e: Error) -> Self {
        Step::Fail(e)
    }
}

impl From<ErrorKind> for Step {
    fn from(k: ErrorKind) -> Self {
        Step::Fail(Error::new(k))
    }
}

impl Step {
    /// Attaches a location to a final error; a request for more bytes passes.
    pub fn map_err(self, f: impl FnOnce(Error) -> Error) -> Step {
        match self {
            Step::Fail(e) => Step::Fail(f(e)),
            more => more,
        }
    }
}
