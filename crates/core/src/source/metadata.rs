//! Reading a file's metadata for a format's prefix parser: in place from
//! the guarded map (`map.rs`), or into memory, more as the parser asks, up
//! to [`MAX_READ_METADATA`].

use std::io;

use super::stream::Stream;
use super::{Backing, PrefixParser, ReadMode, Source, Step, changed, lock};
use crate::error::{Error, ErrorKind, Result};

/// The first metadata read in `Pread` mode is 1/64 of the file, between
/// these bounds; it grows while the parser asks for more. Big models have big
/// metadata (a vocabulary of megabytes: one read saves re-parses), while a
/// small file (an Ollama tensor blob of 1 MiB with a 200-byte header) must
/// not be read whole just to find its header.
const FIRST_READ_MIN: u64 = 64 << 10;
const FIRST_READ_MAX: u64 = 1 << 20;

/// The most metadata `Pread` mode holds in memory. Real models stay far
/// below it (a 262,144-token vocabulary with merges is tens of MiB); past it
/// a hostile file could make the process hold gigabytes.
pub const MAX_READ_METADATA: u64 = 128 << 20;

impl Source {
    /// Parses the file's metadata with a format's pure parser.
    ///
    /// `parse(bytes, file_len)` is handed the file or a prefix of it; it
    /// returns the parsed metadata and the file position where the metadata
    /// ends, or [`Step::NeedMore`] to be called again with a longer prefix.
    /// By default the prefix is the whole file's guarded map (the metadata's
    /// pages are dropped after the parse); with `--no-mmap`, or when no map
    /// can be guarded, it is read into memory, up to [`MAX_READ_METADATA`].
    pub fn parse<T: 'static>(&self, parse: PrefixParser<T>) -> Result<T> {
        self.read_ahead_start();
        let r = match (&self.backing, self.mode) {
            (Backing::Stream(s), _) => parse_stream(&mut lock(s), parse),
            (Backing::File(_), ReadMode::Mmap) if !self.is_empty() => self.parse_mapped(parse),
            (Backing::File(_) | Backing::Ranged(_), _) => self.parse_read(parse),
        };
        r.map_err(|e| e.in_file(&self.path))
    }

    pub(super) fn parse_read<T>(&self, parse: PrefixParser<T>) -> Result<T> {
        let len = self.len();
        let mut buf = Vec::new();
        let mut want = (len / 64).clamp(FIRST_READ_MIN, FIRST_READ_MAX).min(len);
        loop {
            self.fill_to(&mut buf, want)?;
            match parse(&buf, len) {
                Ok((parsed, _)) => return Ok(parsed),
                Err(Step::Fail(e)) => return Err(e),
                Err(Step::NeedMore(upto)) => {
                    if upto <= buf.len() as u64 || upto > len {
                        return Err(changed("metadata read came up short"));
                    }
                    want = next_metadata_read(upto, want, buf.len())?.min(len);
                }
            }
        }
    }

    /// Extends `buf` with file bytes until it holds the first `want` bytes.
    fn fill_to(&self, buf: &mut Vec<u8>, want: u64) -> Result<()> {
        let have = buf.len();
        // Metadata is held whole on this path: a file declaring more than the
        // machine can hold is an error, never an abort.
        let too_big = || metadata_too_big(want, have);
        let want = usize::try_from(want).map_err(|_| too_big())?;
        buf.try_reserve_exact(want.saturating_sub(have)).map_err(|_| too_big())?;
        buf.resize(want.max(have), 0);
        let tail = buf.get_mut(have..).unwrap_or(&mut []);
        self.read_exact_at(tail, have as u64)
    }
}

/// Metadata held whole (a stream's, or a file's read with `pread`) that
/// cannot be allocated: an error at the bytes held so far, never an abort.
pub fn metadata_too_big(want: impl std::fmt::Display, have: usize) -> Error {
    let e = io::Error::new(io::ErrorKind::OutOfMemory, format!("{want} bytes of metadata do not fit in memory"));
    Error::new(ErrorKind::Io(e)).at(have as u64)
}

/// Parses a stream's metadata from its first bytes, reading more as the
/// parser asks, with the length unknown until the stream ends; keeps the
/// parser for the verdict at the end.
fn parse_stream<T: 'static>(st: &mut Stream, parse: PrefixParser<T>) -> Result<T> {
    let mut want = FIRST_READ_MAX;
    loop {
        st.fill_prefix(want)?;
        match parse(&st.prefix, st.len()) {
            Ok((parsed, _)) => {
                st.verdict = Some(Box::new(move |bytes, len| match parse(bytes, len) {
                    Ok(_) => Ok(()),
                    Err(Step::Fail(e)) => Err(e),
                    Err(Step::NeedMore(_)) => Err(changed("its metadata came up short")),
                }));
                return Ok(parsed);
            }
            Err(Step::Fail(e)) => return Err(e),
            Err(Step::NeedMore(upto)) => {
                if upto <= st.prefix.len() as u64 || st.input.end.is_some() {
                    return Err(changed("its metadata came up short"));
                }
                want = next_metadata_read(upto, want, st.prefix.len())?;
            }
        }
    }
}

/// How much metadata to hold next when a parser needs the first `upto`
/// bytes and `want` were asked for last (`have` are held): at least
/// double, never past [`MAX_READ_METADATA`], which a parser needing more is
/// refused at.
fn next_metadata_read(upto: u64, want: u64, have: usize) -> Result<u64> {
    if upto > MAX_READ_METADATA {
        let kind = ErrorKind::MetadataTooLarge { needed: upto, limit: MAX_READ_METADATA };
        return Err(Error::new(kind).at(have as u64));
    }
    Ok(upto.max(want.saturating_mul(2)).min(MAX_READ_METADATA))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn metadata_reads_double_up_to_the_limit_and_refuse_past_it() {
        assert_eq!(next_metadata_read(10, FIRST_READ_MAX, 0).unwrap(), 2 * FIRST_READ_MAX);
        assert_eq!(next_metadata_read(5 * FIRST_READ_MAX, FIRST_READ_MAX, 0).unwrap(), 5 * FIRST_READ_MAX);
        assert_eq!(next_metadata_read(MAX_READ_METADATA - 1, MAX_READ_METADATA / 2 + 1, 0).unwrap(), MAX_READ_METADATA);
        let e = next_metadata_read(MAX_READ_METADATA + 1, FIRST_READ_MAX, 10).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::MetadataTooLarge { needed, limit }
            if *needed == MAX_READ_METADATA + 1 && *limit == MAX_READ_METADATA),
            "{e}"
        );
        assert_eq!(e.offset(), Some(10));
    }
}
