//! Is a file in the page cache? Asked before its metadata is parsed (a
//! cold file is read front to back, docs/adr/0016); how it is asked is the
//! platform's (`platform::all_sampled_pages_cached`). A cold file's first
//! bytes are then asked for in one read-ahead.

use super::{Source, platform};

/// The first bytes of a cold file asked for in one read-ahead before its
/// metadata is parsed: the metadata and the first tensors arrive in large
/// requests instead of fault after fault; from there the kernel's own
/// read-ahead follows the front-to-back reader (docs/adr/0016).
const READ_AHEAD: u64 = 64 << 20;

impl Source {
    /// True when some of the file was not in the page cache when first
    /// asked (a few pages sampled over it: `residency`); always true for a
    /// stream, which has no page cache to be read from.
    ///
    /// A cold file is read at the disk's speed only front to back, so its
    /// model is hashed by one reader in file order (`pipeline`); a cached
    /// file keeps the mapped path, whose order balances the cores.
    pub fn is_cold(&self) -> bool {
        // An object read by ranges is not: its jobs are read in parallel,
        // each range streamed (docs/adr/0044), not by one reader in order.
        *self.cold.get_or_init(|| {
            self.ranged().is_none()
                && !self.file().is_some_and(|file| platform::all_sampled_pages_cached(file, self.len()))
        })
    }

    /// Samples residency, and for a cold file asks the kernel for its first
    /// [`READ_AHEAD`] bytes at once. Called before the parser touches the
    /// file: afterwards its first pages would look cached.
    pub(super) fn read_ahead_start(&self) {
        let Some(file) = self.file().filter(|_| self.is_cold()) else { return };
        // Only a hint: failing it changes nothing but speed. No length (an
        // empty file) is the whole file, as posix_fadvise's 0 is.
        let len = std::num::NonZeroU64::new(READ_AHEAD.min(self.len()));
        platform::read_ahead(file, len);
    }
}

// What `cachestat` and `mincore` see: Linux's page cache, evicted and read
// back. The portable path samples nothing (every file counts as cached).
#[cfg(all(test, target_os = "linux", not(feature = "portable")))]
mod tests {
    use super::super::{ReadMode, Source};
    use std::fs::File;

    /// Drops the file's clean pages from the page cache.
    fn evict(file: &File) {
        file.sync_all().unwrap();
        rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    }

    #[test]
    fn residency_tells_cold_from_cached_files_of_every_size() {
        let dir = tempfile::tempdir().unwrap();
        let page = super::super::system::page_size() as usize;
        for (i, pages) in [1usize, 2, 3, 5, 64, 300, 5000].into_iter().enumerate() {
            let path = dir.path().join(format!("f{i}"));
            std::fs::write(&path, vec![7u8; pages * page - 1]).unwrap();
            // Read-only: a file held open for writing is refused (`lease.rs`).
            let f = File::open(&path).unwrap();
            evict(&f);
            assert!(Source::open(&path, ReadMode::Mmap).unwrap().is_cold(), "{pages} pages, evicted");
            std::fs::read(&path).unwrap();
            assert!(!Source::open(&path, ReadMode::Mmap).unwrap().is_cold(), "{pages} pages, read");
            // The second half evicted (whole folios only are dropped, so not
            // just the last page): the last page is among the samples.
            let tail = (pages / 2 * page) as u64;
            let _ = rustix::fs::fadvise(&f, tail, None, rustix::fs::Advice::DontNeed);
            assert!(Source::open(&path, ReadMode::Mmap).unwrap().is_cold(), "{pages} pages, second half evicted");
        }
        let empty = dir.path().join("empty");
        File::create(&empty).unwrap();
        assert!(!Source::open(&empty, ReadMode::Mmap).unwrap().is_cold());
    }
}
