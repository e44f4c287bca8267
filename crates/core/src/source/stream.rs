//! A stream read once, front to back (standard input): its reader, how far
//! it got, the first bytes it keeps, and the verdict of the format's parser
//! once its length is known. `Source` wraps it (`Source::from_reader`).

use std::io;

use crate::error::{Error, Result};
use crate::source::{UNKNOWN_LEN, changed, metadata_too_big};

/// A format's verdict on a stream's first bytes at a given length: how a
/// stream, once it has ended, is judged exactly as a file of that length.
pub(super) type Verdict = Box<dyn Fn(&[u8], u64) -> Result<()> + Send + Sync>;

/// What has been read of a stream. Its first bytes (the metadata and
/// whatever came with it) are kept whole, for parsing, for reading values
/// to show, and for the verdict at the end; later bytes pass through once.
pub(super) struct Stream {
    pub(super) input: StreamInput,
    /// The first bytes of the stream.
    pub(super) prefix: Vec<u8>,
    /// The format's parser at a length, kept by `parse`.
    pub(super) verdict: Option<Verdict>,
    /// Read to the end when dropped (standard input; see `Drop`).
    pub(super) drain_on_drop: bool,
}

/// The reader of a stream and how far it got.
pub(super) struct StreamInput {
    pub(super) reader: Box<dyn io::Read + Send>,
    /// Bytes taken from the reader so far.
    pub(super) pos: u64,
    /// The stream's length, once its end was seen.
    pub(super) end: Option<u64>,
}

impl Drop for Stream {
    /// Reads on to the end, as sha256sum would, whatever went wrong before:
    /// a producer such as `tee model.gguf` upstream must not die of a
    /// broken pipe halfway through saving the file because its header was
    /// refused. (After a label the stream was already read to its end.)
    fn drop(&mut self) {
        if !self.drain_on_drop {
            return;
        }
        let _ = self.input.drain();
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("prefix", &self.prefix.len())
            .field("pos", &self.input.pos)
            .finish_non_exhaustive()
    }
}

/// The most bytes asked of a stream by one `read`.
pub(super) const STREAM_READ: usize = 1 << 20;

impl StreamInput {
    /// Reads and drops everything up to the end; returns the bytes read.
    pub(super) fn drain(&mut self) -> io::Result<u64> {
        let before = self.pos;
        self.skip(u64::MAX)?;
        Ok(self.pos.saturating_sub(before))
    }

    /// Reads and drops `n` bytes, or all up to the end if fewer remain.
    pub(super) fn skip(&mut self, n: u64) -> io::Result<()> {
        let mut left = n;
        let mut scratch = vec![0u8; usize::try_from(n).unwrap_or(usize::MAX).min(STREAM_READ)];
        while left > 0 && self.end.is_none() {
            let take = usize::try_from(left).unwrap_or(usize::MAX).min(scratch.len());
            let got = self.read_more(scratch.get_mut(..take).unwrap_or(&mut []))?;
            left = left.saturating_sub(got as u64);
        }
        Ok(())
    }

    /// Reads until `buf` is full or the stream ended; returns the bytes
    /// filled.
    pub(super) fn read_more(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0usize;
        while filled < buf.len() && self.end.is_none() {
            let upto = filled.saturating_add(STREAM_READ).min(buf.len());
            let part = buf.get_mut(filled..upto).unwrap_or(&mut []);
            match self.reader.read(part) {
                Ok(0) => self.end = Some(self.pos),
                Ok(n) => {
                    filled = filled.saturating_add(n);
                    self.pos = self.pos.saturating_add(n as u64);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

impl Stream {
    /// Extends the prefix until it holds `want` bytes or the stream ended.
    /// It grows a read at a time: `want` comes from sizes the stream
    /// declares, so memory follows the bytes that arrive, not the claim.
    pub(super) fn fill_prefix(&mut self, want: u64) -> Result<()> {
        let want = usize::try_from(want).unwrap_or(usize::MAX);
        while self.prefix.len() < want && self.input.end.is_none() {
            let have = self.prefix.len();
            let next = want.min(have.saturating_add(STREAM_READ));
            self.prefix.try_reserve(next.saturating_sub(have)).map_err(|_| metadata_too_big(want, have))?;
            self.prefix.resize(next, 0);
            let tail = self.prefix.get_mut(have..).unwrap_or(&mut []);
            let taken = self.input.read_more(tail);
            self.prefix.truncate(have.saturating_add(*taken.as_ref().unwrap_or(&0)));
            taken.map_err(|e| Error::from(e).at(have as u64))?;
        }
        Ok(())
    }

    /// The length the parser is handed: the true one once the end was seen.
    pub(super) fn len(&self) -> u64 {
        self.input.end.unwrap_or(UNKNOWN_LEN)
    }

    /// The stream's verdict at its end, as a file of that length.
    pub(super) fn judge(&self) -> Result<()> {
        let Some(end) = self.input.end else {
            return Err(changed("standard input was not read to its end"));
        };
        match &self.verdict {
            Some(v) => v(&self.prefix, end),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_grows_with_the_bytes_that_arrive_not_the_size_asked() {
        let bytes = vec![7u8; 2 * STREAM_READ + 5];
        let input = StreamInput { reader: Box::new(io::Cursor::new(bytes.clone())), pos: 0, end: None };
        let mut s = Stream { input, prefix: Vec::new(), verdict: None, drain_on_drop: false };
        // A header may declare 120 MiB of metadata in a 2 MiB stream.
        s.fill_prefix(120 << 20).unwrap();
        assert_eq!(s.prefix, bytes);
        assert_eq!(s.input.end, Some(bytes.len() as u64));
        assert!(s.prefix.capacity() < 8 * STREAM_READ, "capacity {}", s.prefix.capacity());
        // Asking again, or for less, reads nothing more.
        s.fill_prefix(10).unwrap();
        assert_eq!(s.prefix.len(), bytes.len());

        let input = StreamInput { reader: Box::new(io::Cursor::new(bytes.clone())), pos: 0, end: None };
        let mut s = Stream { input, prefix: Vec::new(), verdict: None, drain_on_drop: false };
        s.fill_prefix(STREAM_READ as u64 + 3).unwrap();
        assert_eq!(s.prefix.len(), STREAM_READ + 3, "exactly what was asked, across two reads");
        assert_eq!(s.input.end, None);
    }
}
