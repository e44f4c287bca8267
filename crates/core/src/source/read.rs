//! Reading an input's bytes: at a position (a stream only within its kept
//! first bytes), or front to back.

use std::io;
use std::os::unix::fs::FileExt;

use super::stream::Stream;
use super::{Backing, Source, changed, lock};
use crate::error::{Error, Result};

impl Source {
    /// Reads `buf.len()` bytes at file position `offset` on the way front to
    /// back: a file is read there; a stream serves them from its first bytes
    /// or reads on to them, skipping any gap. Positions must not go back on
    /// a stream past its first bytes. Returns the bytes taken from the input
    /// (a stream's skipped gap included), for a progress count.
    pub fn read_forward(&self, offset: u64, buf: &mut [u8]) -> Result<u64> {
        let Some(mut st) = self.stream() else {
            self.read_exact_at(buf, offset)?;
            self.forget_if_huge(offset, buf.len() as u64);
            return Ok(buf.len() as u64);
        };
        let located = |e: Error| e.in_file(&self.path);
        let st = &mut *st;
        let mut filled = 0usize;
        if let Some(held) = usize::try_from(offset).ok().and_then(|o| st.prefix.get(o..)) {
            let n = held.len().min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(..n), held.get(..n)) {
                dst.copy_from_slice(src);
            }
            filled = n;
        }
        if filled == buf.len() {
            return Ok(0);
        }
        let at = offset.saturating_add(filled as u64);
        let before = st.input.pos;
        if at < before {
            let e = io::Error::other(format!("a stream cannot go back to byte {at}: it was read up to byte {before}"));
            return Err(located(Error::from(e).at(at)));
        }
        st.input.skip(at.saturating_sub(before)).map_err(|e| located(Error::from(e).at(st.input.pos)))?;
        let rest = buf.get_mut(filled..).unwrap_or(&mut []);
        let want = rest.len();
        let got = st.input.read_more(rest).map_err(|e| located(Error::from(e).at(st.input.pos)))?;
        if got < want {
            // Ended early: the format's verdict at this length says what is
            // missing, in the words it would use for such a file.
            return Err(located(st.judge().err().unwrap_or_else(|| changed("it ended early").at(st.input.pos))));
        }
        Ok(st.input.pos.saturating_sub(before))
    }

    /// Reads a stream to its end, so that a producer writing into a pipe
    /// (`curl … | tee model.gguf | gguf-digest -`) is never cut off, and the
    /// stream's length is known for its verdict. Returns the bytes read.
    /// Nothing for a file.
    pub fn read_to_end(&self) -> Result<u64> {
        let Some(mut st) = self.stream() else { return Ok(0) };
        st.input.drain().map_err(|e| Error::from(e).at(st.input.pos).in_file(&self.path))
    }

    /// Bytes taken from a stream so far (for a progress count); 0 for a file.
    pub fn stream_pos(&self) -> u64 {
        self.stream().map_or(0, |s| s.input.pos)
    }

    /// The first `n` bytes of the file, or all of it when it is shorter:
    /// enough to tell formats apart.
    pub fn head(&self, n: u64) -> Result<Vec<u8>> {
        if let Some(mut st) = self.stream() {
            st.fill_prefix(n).map_err(|e| e.in_file(&self.path))?;
            let n = usize::try_from(n).unwrap_or(usize::MAX).min(st.prefix.len());
            return Ok(st.prefix.get(..n).unwrap_or(&[]).to_vec());
        }
        let mut buf = vec![0u8; usize::try_from(n.min(self.len())).unwrap_or(0)];
        self.read_exact_at(&mut buf, 0)?;
        Ok(buf)
    }

    /// Reads exactly `buf.len()` bytes at file position `offset`; a file that
    /// ends early changed underneath (its length was checked when parsed).
    ///
    /// A stream holds only its first bytes (the metadata) for this; a range
    /// past them is an error.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let file = match &self.backing {
            Backing::File(f) => f,
            Backing::Stream(s) => return self.read_held(&lock(s), buf, offset),
            Backing::Ranged(r) => return r.read_at(offset, buf).map_err(|e| e.in_file(&self.path)),
        };
        self.touch();
        self.check_lease()?;
        match file.read_exact_at(buf, offset) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(changed("it ended early").at(offset).in_file(&self.path))
            }
            Err(e) => Err(Error::from(e).at(offset).in_file(&self.path)),
        }
    }

    fn read_held(&self, st: &Stream, buf: &mut [u8], offset: u64) -> Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        let held = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(start, end)| st.prefix.get(start..end));
        match held {
            Some(held) => {
                buf.copy_from_slice(held);
                Ok(())
            }
            None => {
                let e = io::Error::other(format!(
                    "bytes {offset}..{end} of a stream were not kept (only its first {} bytes are)",
                    st.prefix.len()
                ));
                Err(Error::from(e).at(offset).in_file(&self.path))
            }
        }
    }
}

/// A job's range read front to back, a piece at a time
/// ([`Source::pieces`]): a file's or a stream's kept bytes by position, an
/// object read by ranges as one streamed range.
pub struct Pieces<'s> {
    source: &'s Source,
    /// The file position of the next piece.
    at: u64,
    /// The object's range being streamed, for an object read by ranges.
    ranged: Option<Box<dyn super::RangeReader + 's>>,
}

impl Source {
    /// The `len` bytes at `start` read front to back in pieces the caller
    /// sizes ([`Pieces::read_next`]): by position for a file (`pread`),
    /// as one streamed range for an object read by ranges (one request,
    /// not one per piece).
    pub fn pieces(&self, start: u64, len: u64) -> Result<Pieces<'_>> {
        let ranged = match &self.backing {
            Backing::Ranged(r) => Some(r.read_range(start, len).map_err(|e| e.in_file(&self.path))?),
            Backing::File(_) | Backing::Stream(_) => None,
        };
        Ok(Pieces { source: self, at: start, ranged })
    }
}

impl Pieces<'_> {
    /// Fills `buf` with the next `buf.len()` bytes of the range.
    pub fn read_next(&mut self, buf: &mut [u8]) -> Result<()> {
        let at = self.at;
        match &mut self.ranged {
            Some(r) => r.read_next(buf).map_err(|e| e.in_file(&self.source.path))?,
            None => self.source.read_exact_at(buf, at)?,
        }
        self.at = at.saturating_add(buf.len() as u64);
        Ok(())
    }

    /// Hands the next `buf.len()` bytes of the range to `sink` in order:
    /// an object read by ranges lends its network buffers, no copy
    /// ([`super::RangeReader::feed`]); a file's are read into `buf`.
    pub fn feed(&mut self, buf: &mut [u8], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let at = self.at;
        match &mut self.ranged {
            Some(r) => r.feed(buf, sink).map_err(|e| e.in_file(&self.source.path))?,
            None => {
                self.source.read_exact_at(buf, at)?;
                sink(buf);
            }
        }
        self.at = at.saturating_add(buf.len() as u64);
        Ok(())
    }
}
