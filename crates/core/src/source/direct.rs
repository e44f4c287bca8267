//! Files larger than half of memory, which cannot stay in the page cache:
//! read around it with `O_DIRECT` when cold, and their pages dropped from
//! it once read (docs/adr/0016).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

use super::system::memory_bytes;
use super::{Source, changed, platform};
use crate::error::{Error, Result};

impl Source {
    /// Drops bytes just read from the page cache when the file is larger
    /// than half the machine's memory: read front to back, such a file
    /// cannot stay cached anyway, and evicting its pages here, in large
    /// ranges, spares the kernel's reclaim scanning for them page by page
    /// on the cores that hash (measured on a 32 GiB file on 24 GiB:
    /// docs/BENCHMARKS.md). A smaller file keeps its pages, for whatever
    /// reads it next.
    pub(super) fn forget_if_huge(&self, offset: u64, len: u64) {
        let Some(file) = self.file() else { return };
        if !self.larger_than_half_of_memory() {
            return;
        }
        // Only a hint: failing it changes nothing but memory pressure. No
        // length is to the end of the file, as posix_fadvise's 0 is.
        platform::drop_from_cache(file, offset, std::num::NonZeroU64::new(len));
    }

    fn larger_than_half_of_memory(&self) -> bool {
        static HALF_MEMORY: OnceLock<u64> = OnceLock::new();
        let half = *HALF_MEMORY.get_or_init(|| memory_bytes() / 2);
        half > 0 && self.len() > half
    }

    /// The file opened again with `O_DIRECT`, when it is cold and larger
    /// than half of memory (or `direct_reads` forces it, for tests): such a
    /// file cannot stay cached, and reading it around the page cache costs
    /// the kernel almost no CPU (0.12 s against 3 s for 2 GiB here), which
    /// on two cores is what the hashing threads need. Reopened through
    /// `/proc/self/fd`, so it is the same inode whatever the path names now
    /// (checked); `None` when the file system refuses `O_DIRECT`.
    fn direct_file(&self, force: bool) -> Option<&File> {
        // A stream first: it counts as cold and of unknown (huge) length.
        let file = self.file()?;
        if !(force || (self.is_cold() && self.larger_than_half_of_memory())) {
            return None;
        }
        self.direct.get_or_init(|| platform::open_direct(file)).as_ref()
    }

    /// True when this file is read around the page cache
    /// ([`Source::read_direct`]).
    pub fn reads_directly(&self, force: bool) -> bool {
        self.direct_file(force).is_some()
    }

    /// Reads `len` bytes at `offset` with `O_DIRECT` into `buf` (resized as
    /// needed): offset, length and address are widened to whole 4 KiB
    /// blocks, and the bytes asked for start at the returned position in
    /// `buf`. Only for a file [`Source::reads_directly`] said yes to (it
    /// opens the direct descriptor; nothing is decided here).
    pub fn read_direct(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<usize> {
        const BLOCK: usize = 4096;
        let located = |e: Error| e.at(offset).in_file(&self.path);
        let Some(file) = self.direct.get().and_then(Option::as_ref) else {
            return Err(located(Error::internal("a direct read of a buffered file")));
        };
        self.touch();
        self.check_lease()?;
        // BLOCK is 4096: clear the low 12 bits.
        let aligned_start = offset & !0xFFF_u64;
        let lead = usize::try_from(offset.saturating_sub(aligned_start)).unwrap_or(0);
        let need = lead.saturating_add(len);
        let span = need.div_ceil(BLOCK).saturating_mul(BLOCK);
        let want = span.saturating_add(BLOCK);
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let base = buf.as_ptr().align_offset(BLOCK).min(BLOCK);
        let Some(window) = buf.get_mut(base..base.saturating_add(span)) else {
            return Err(located(changed("no aligned buffer")));
        };
        let mut got = 0usize;
        while got < need {
            let Some(rest) = window.get_mut(got..) else { break };
            match file.read_at(rest, aligned_start.saturating_add(got as u64)) {
                Ok(0) => break,
                Ok(n) => got = got.saturating_add(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(located(e.into())),
            }
            // A direct read ends short only at the end of the file; go on
            // from a block boundary or stop.
            if got % BLOCK != 0 && got < need {
                break;
            }
        }
        if got < need {
            return Err(located(changed("it ended early")));
        }
        Ok(base.saturating_add(lead))
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::source::ReadMode;

    #[test]
    fn forced_direct_reads_go_around_the_page_cache_and_return_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..(3 * 4096 + 100)).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let s = Source::open(&path, ReadMode::Mmap).unwrap();
        // Not asked to read directly (a small cached file), it refuses to.
        let mut buf = Vec::new();
        let e = s.read_direct(0, 10, &mut buf).unwrap_err();
        assert!(e.to_string().contains("internal error: a direct read of a buffered file"), "{e}");
        // The front-to-back tests pass on either path; this one says which ran.
        if !s.reads_directly(true) {
            eprintln!("SKIPPED: this file system refuses O_DIRECT");
            return;
        }
        for (offset, len) in [(0u64, 4096usize), (5000, 7000), (4096 * 3, 100), (1, data.len() - 1)] {
            let at = s.read_direct(offset, len, &mut buf).unwrap();
            let start = usize::try_from(offset).unwrap();
            assert_eq!(&buf[at..at + len], &data[start..start + len], "{offset}+{len}");
        }
        // Past the end: an error, not short bytes.
        assert!(s.read_direct(4096 * 3, 200, &mut buf).unwrap_err().to_string().contains("ended early"));
    }
}
