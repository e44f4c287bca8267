//! The guarded map of a whole file: metadata parsed in place, tensors
//! hashed from it, and its pages dropped once read so that the resident set
//! stays bounded. The SIGBUS guard that keeps it sound is
//! `platform/linux/map_guard.rs`; the portable path maps nothing.

use std::path::Path;
use std::sync::Mutex;

use memmap2::{Advice, Mmap, UncheckedAdvice};

use super::platform::{self, Guard};
use super::system::page_size;
use super::{PrefixParser, ReadMode, Source, Step, changed};
use crate::error::{Error, Result};

/// A map of a whole file with the guard that makes reading it safe.
pub(super) struct FileMap {
    // Declared before `map`, so it is unguarded before it is unmapped.
    guard: Guard,
    map: Mmap,
    /// Short ranges hashed since their pages were last dropped.
    short: Mutex<ShortRanges>,
}

/// The short ranges hashed since the last drop: how much they may hold
/// mapped, and the span of map positions that holds them all.
#[derive(Default)]
struct ShortRanges {
    mapped: usize,
    span: Option<(usize, usize)>,
}

/// A file this small gets no read-ahead advice: it fits the kernel's window.
const SMALL_FILE: usize = 2 << 20;

/// The most the kernel maps at once: a 2 MiB folio of the page cache,
/// mapped whole with one PMD entry (file offset and address share alignment).
const HUGE_PAGE: usize = 2 << 20;

/// Mapped ranges shorter than this do not drop their own pages when hashed...
const SHORT_RANGE: usize = 1 << 20;
/// ...instead the pages of the span that holds them are dropped at once
/// whenever the short ranges hashed may hold this much mapped. Each drop is
/// a `madvise` call that also flushes the TLB of every core running another
/// hashing thread; one per short tensor cost SmolLM2 (hundreds of tensors
/// under 1 MiB) several per cent of its wall time with two threads. The resident set
/// stays bounded: about this much of short ranges per open file.
const SHORT_RANGES_DROPPED_EVERY: usize = 16 << 20;

impl std::fmt::Debug for FileMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileMap").field("len", &self.map.len()).finish_non_exhaustive()
    }
}

impl Source {
    pub(super) fn parse_mapped<T>(&self, parse: PrefixParser<T>) -> Result<T> {
        let Some(fm) = self.file_map()? else {
            // No guard to be had (every slot busy, or no signal handler):
            // reading is always safe.
            return self.parse_read(parse);
        };
        // The length may have changed between stat and map; parse only what
        // both agree on, so that no read reaches past the mapped length.
        let len = (fm.map.len() as u64).min(self.len());
        let parsed = parse(&fm.map, len);
        if fm.guard.was_hit() {
            return Err(changed("it was truncated while its metadata was read"));
        }
        let (parsed, metadata_end) = match parsed {
            Ok(p) => p,
            Err(Step::Fail(e)) => return Err(e),
            Err(Step::NeedMore(_)) => return Err(changed("shorter than when opened")),
        };
        // The parsed metadata owns what it needs; its pages (a vocabulary
        // can be tens of MiB) need not stay in the resident set. Reading it
        // mapped more than it: a fault maps a whole fault-around window (64
        // KiB) or a 2 MiB folio. So the drop runs to the next 2 MiB boundary:
        // a model of a thousand files is parsed before any is hashed, and
        // each would otherwise keep up to a window resident until then (the
        // data pages dropped here fault in again when hashed).
        let metadata_end = usize::try_from(metadata_end).unwrap_or(fm.map.len());
        fm.release(0, metadata_end.div_ceil(HUGE_PAGE).saturating_mul(HUGE_PAGE).max(HUGE_PAGE));
        Ok(parsed)
    }

    /// The guarded map of the whole file, made on first call; `None` when
    /// no guard slot is free (the caller reads instead).
    fn file_map(&self) -> Result<Option<&FileMap>> {
        if let Some(made) = self.map.get() {
            return Ok(made.as_ref());
        }
        let Some(file) = self.file().filter(|_| platform::GUARDED_MAPS) else { return Ok(None) };
        // Asked for to be read: the map's bytes count as read from here on.
        self.touch();
        // SAFETY: the map is read-only, and nothing in this process writes
        // the file. Another process may still change it: changed metadata
        // bytes give a parse error or the metadata of the changed content,
        // changed tensor bytes another digest, and any change of size or
        // time is caught by `check_unchanged` after hashing. A truncation makes reads of the vanished pages fault
        // with SIGBUS; the guard turns those faults into zero pages and a
        // flag, which `parse_mapped` and `MappedRange::check` report, so the
        // process never dies of it. See docs/adr/0001-parser-over-a-map.md
        // and docs/adr/0003-reading-tensor-data.md.
        let map = unsafe { Mmap::map(file) }.map_err(|e| Error::from(e).in_file(&self.path))?;
        let made = Guard::new(map.as_ptr(), map.len()).map(|guard| {
            // Only a hint, for read-ahead; failing it changes nothing. A file
            // within one read-ahead window gains nothing from it, and a model
            // of thousands of small files (Ollama's tensor blobs) would pay
            // the call for each.
            if map.len() > SMALL_FILE {
                let _ = map.advise(Advice::Sequential);
            }
            FileMap { guard, map, short: Mutex::new(ShortRanges::default()) }
        });
        // Two threads may race to make it; the loser's map is dropped here.
        Ok(self.map.get_or_init(|| made).as_ref())
    }

    /// The guarded map of `len` bytes at file position `offset`, for
    /// streaming; `None` when the file is to be read (`--no-mmap`), the
    /// range is better read (shorter than `min_mapped`), the file has no
    /// guarded map, or the map does not reach that far (a read then says
    /// what changed).
    pub fn map_range(&self, offset: u64, len: u64, min_mapped: u64) -> Result<Option<MappedRange<'_>>> {
        if self.mode == ReadMode::Pread || len < min_mapped || self.is_stream() {
            return Ok(None);
        }
        let Some(fm) = self.file_map()? else {
            return Ok(None);
        };
        let (Ok(start), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
            return Ok(None);
        };
        match start.checked_add(len) {
            Some(end) if end <= fm.map.len() => Ok(Some(MappedRange { file: fm, start, len })),
            _ => Ok(None),
        }
    }
}

impl FileMap {
    /// Drops the pages of map bytes `start..end` from this process, so that
    /// a long stream does not pile mapped pages up in its resident set. The
    /// page cache keeps them; only this mapping forgets them. Whole pages
    /// are dropped, so a neighbour's bytes in the first or last page may be
    /// dropped too: a read of them just faults them in again.
    fn release(&self, start: usize, end: usize) {
        let page = usize::try_from(page_size()).unwrap_or(4096);
        let start = start & !(page.saturating_sub(1));
        let end = end.min(self.map.len());
        if end > start {
            // SAFETY: the map is read-only and file-backed: after DONTNEED a
            // read of these pages faults them in again from the file (or,
            // past a truncation, through the guard), so no data is lost and
            // any slice of them still in use stays valid.
            let _ =
                unsafe { self.map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end.saturating_sub(start)) };
        }
    }
}

/// One byte range of a file's guarded map, hashed in place.
pub struct MappedRange<'a> {
    file: &'a FileMap,
    start: usize,
    len: usize,
}

impl MappedRange<'_> {
    /// The bytes of the range.
    pub fn bytes(&self) -> &[u8] {
        self.start.checked_add(self.len).and_then(|end| self.file.map.get(self.start..end)).unwrap_or(&[])
    }

    /// Maps in the pages of `bytes()[start..start + len]` with one call
    /// instead of a page fault every few pages.
    pub fn populate(&self, start: usize, len: usize) {
        platform::populate_read(&self.file.map, self.start.saturating_add(start), len);
    }

    /// Drops the pages of `bytes()[start..end]`, just hashed, from this
    /// process (see `FileMap::release`); short ranges are dropped in bulk.
    pub fn release(&self, start: usize, end: usize) {
        let len = end.saturating_sub(start);
        if len >= SHORT_RANGE {
            self.file.release(self.start.saturating_add(start), self.start.saturating_add(end));
            return;
        }
        let (start, end) = (self.start.saturating_add(start), self.start.saturating_add(end));
        let due = {
            let Ok(mut short) = self.file.short.lock() else { return };
            // A range may hold more than itself mapped: a 2 MiB folio is
            // mapped whole, so count every 2 MiB block the range touches.
            let blocks = end.div_ceil(HUGE_PAGE).saturating_sub(start.checked_div(HUGE_PAGE).unwrap_or(0));
            short.mapped = short.mapped.saturating_add(blocks.saturating_mul(HUGE_PAGE));
            let (lo, hi) = short.span.unwrap_or((start, end));
            short.span = Some((lo.min(start), hi.max(end)));
            if short.mapped < SHORT_RANGES_DROPPED_EVERY {
                return;
            }
            short.mapped = 0;
            short.span.take()
        };
        // Pages in the span that another thread is hashing are dropped too;
        // it faults them in again, which is cheap next to one flush per range.
        if let Some((lo, hi)) = due {
            self.file.release(lo, hi);
        }
    }

    /// Fails if a read of the file's map hit a page lost to a truncation.
    pub fn check(&self, path: &Path) -> Result<()> {
        if self.file.guard.was_hit() {
            return Err(changed("it was truncated while it was read").in_file(path));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;

    /// A file is mapped only where the SIGBUS guard makes reading the map
    /// safe (Linux); the portable path reads every byte with `pread`.
    #[test]
    fn a_file_is_mapped_only_where_a_guard_makes_it_safe() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![3u8; 8192]).unwrap();
        let s = Source::open(&path, ReadMode::Mmap).unwrap();
        let mapped = s.map_range(0, 8192, 0).unwrap().is_some();
        assert_eq!(mapped, platform::GUARDED_MAPS);
        assert_eq!(mapped, cfg!(all(target_os = "linux", not(feature = "portable"))));
    }
}
