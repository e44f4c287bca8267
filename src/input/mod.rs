//! What an argument names, which format reads it, and labelling arguments:
//! the one place that lists the formats (the core never imports one).
//!
//! An argument is a path today; standard input (`-`) and store references
//! (`ollama:NAME`) will be variants of [`Input`]. A path is opened once and
//! sniffed by its first bytes; the format that claims it parses the same
//! open file. Adding a format adds one arm to [`sniff`] and one to
//! [`open_model`].

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::format::OpenOptions;
use crate::gguf;
use crate::hash::Digest;
use crate::schedule::{AnyModel, BatchOptions, schedule};
use crate::source::Source;

/// What a command-line argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A file (or, in a later format, a directory) on disk.
    Path(PathBuf),
}

impl Input {
    /// The input an argument names.
    pub fn from_arg(arg: &Path) -> Input {
        Input::Path(arg.to_path_buf())
    }
}

/// The formats a file can be read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A GGUF file (magic `GGUF`), one file or the first shard of a set.
    Gguf,
}

/// Bytes read from the start of a file to tell its format.
const SNIFF_BYTES: u64 = 8;

/// The format whose signature `head` (a file's first bytes) carries, if any.
pub fn sniff(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"GGUF") {
        return Some(Format::Gguf);
    }
    None
}

/// Opens and parses the model at `path`, in whichever format it is.
pub fn open_model(path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
    match Input::from_arg(path) {
        Input::Path(path) => {
            let source = Source::open(&path, opts.read_mode)?;
            let format = sniff(&source.head(SNIFF_BYTES)?);
            match format {
                // A file no format claims is read as GGUF, whose parser says
                // precisely what is wrong with it (empty, bad magic, ...).
                Some(Format::Gguf) | None => Ok(Box::new(gguf::Model::from_source(source, *opts)?)),
            }
        }
    }
}

/// Labels every path on `pool` (all tensors of all files scheduled
/// together), calling `emit(i, result)` for the i-th path in order, as soon
/// as it and all before it are finished.
pub fn digest_paths(
    paths: &[PathBuf],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
    emit: impl FnMut(usize, Result<(AnyModel, Digest)>),
) {
    schedule(paths, opts, pool, &open_model, emit);
}

/// Labels a fixed number of paths together on `pool` and returns every
/// result, in order.
pub fn label_paths<const N: usize>(
    paths: [PathBuf; N],
    opts: &BatchOptions,
    pool: &rayon::ThreadPool,
) -> [Result<(AnyModel, Digest)>; N] {
    let mut done: [Option<Result<(AnyModel, Digest)>>; N] = std::array::from_fn(|_| None);
    digest_paths(&paths, opts, pool, |i, r| {
        if let Some(slot) = done.get_mut(i) {
            *slot = Some(r);
        }
    });
    done.map(|r| r.unwrap_or_else(|| Err(std::io::Error::other("hashing was interrupted").into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_gguf_by_magic_only() {
        assert_eq!(sniff(b"GGUF\x03\0\0\0"), Some(Format::Gguf));
        assert_eq!(sniff(b"GGUF"), Some(Format::Gguf));
        assert_eq!(sniff(b"GGU"), None);
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"FUGG\0\0\0\x03"), None);
    }
}
