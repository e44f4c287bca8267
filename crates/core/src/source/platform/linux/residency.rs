//! Is a file in the page cache? Sampled a few pages over it, without
//! bringing any in: `cachestat(2)`, else `mincore` on a map never read.
//! Linux only (`cachestat` is Linux's; `mincore` is not POSIX's to answer
//! for a file's pages on every system).

use std::fs::File;

use crate::source::system::page_size;

/// Pages sampled to tell a cold file from a cached one: one per 64 pages
/// of the file, at least [`MIN_RESIDENCY_SAMPLES`] (or every page of a
/// smaller file), at most this many. Asking about every page cost 40 µs
/// for a 1 MiB Ollama blob (the kernel looks each one up), 40 ms for a
/// model of a thousand: more than the answer is worth.
const RESIDENCY_SAMPLES: u64 = 64;
/// The fewest pages sampled, the first and the last among them.
const MIN_RESIDENCY_SAMPLES: u64 = 4;
/// One page sampled per this many pages of the file (between the bounds
/// above).
const PAGES_PER_SAMPLE: u64 = 64;

/// False once the kernel has refused `cachestat` (older than 6.5, or a
/// seccomp filter): every later file goes straight to `mincore`, instead
/// of paying a failing call each (a thousand for an Ollama model).
static CACHESTAT_WORKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// True when every sampled page of the first `len` bytes of `file` is in
/// the page cache.
pub fn all_sampled_pages_cached(file: &File, len: u64) -> bool {
    if len == 0 {
        return true;
    }
    let page = page_size();
    let pages = len.div_ceil(page);
    let samples = (pages / PAGES_PER_SAMPLE).clamp(MIN_RESIDENCY_SAMPLES, RESIDENCY_SAMPLES).min(pages);
    let last = pages.saturating_sub(1);
    let mut probe = ResidencyProbe::new(file, len);
    (0..samples).all(|k| {
        // Spread evenly, the first and the last page included.
        let p = last.saturating_mul(k).checked_div(samples.saturating_sub(1)).unwrap_or(0);
        probe.cached(p.saturating_mul(page))
    })
}

/// Asks whether the page holding a file offset is in the page cache,
/// without bringing it in: `cachestat(2)` (Linux 6.5) over that one page,
/// which only looks (no map, no fault, no read-ahead, a microsecond).
/// Where the kernel refuses it (older, or a seccomp filter), a map of the
/// file that is never read is asked with `mincore`. (A `RWF_NOWAIT` read
/// was tried first: on a miss it starts read-ahead, and on a fast disk the
/// page could arrive before the call returned, so a cold file looked cached.)
struct ResidencyProbe<'a> {
    file: &'a File,
    len: u64,
    cachestat: bool,
    map: Option<Option<memmap2::Mmap>>,
}

impl<'a> ResidencyProbe<'a> {
    fn new(file: &'a File, len: u64) -> Self {
        let cachestat = CACHESTAT_WORKS.load(std::sync::atomic::Ordering::Relaxed);
        ResidencyProbe { file, len, cachestat, map: None }
    }

    fn cached(&mut self, offset: u64) -> bool {
        if self.cachestat {
            match cachestat_page(self.file, offset) {
                Ok(cached) => return cached,
                Err(errno) => {
                    self.cachestat = false;
                    // Refused by the kernel or a filter: so for every file.
                    // Any other error (a file system that cannot answer) is
                    // this file's alone.
                    if errno == libc::ENOSYS || errno == libc::EPERM {
                        CACHESTAT_WORKS.store(false, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        }
        let (len, file) = (self.len, self.file);
        let map = self.map.get_or_insert_with(|| {
            // SAFETY: the map is read-only, and no byte of it is ever read (only
            // its address is passed to mincore), so no page is faulted in and a
            // truncation cannot raise SIGBUS.
            usize::try_from(len).ok().and_then(|l| unsafe { memmap2::MmapOptions::new().len(l).map(file) }.ok())
        });
        let Some(map) = map else { return false };
        let page = usize::try_from(page_size()).unwrap_or(4096);
        let Some(at) = usize::try_from(offset).ok().filter(|&o| o < map.len()) else { return false };
        let mut resident = [0u8; 1];
        let ptr = map.as_ptr().wrapping_add(at & !page.saturating_sub(1)) as *mut libc::c_void;
        // SAFETY: `ptr` is a page-aligned address inside the map, one page is
        // asked about, and `resident` holds the one byte mincore writes.
        let r = unsafe { libc::mincore(ptr, 1, resident.as_mut_ptr()) };
        r == 0 && resident[0] & 1 == 1
    }
}

/// `cachestat(2)`'s syscall number: one number on every architecture from
/// 424 on (the libc crate does not name it for x86_64 yet).
const SYS_CACHESTAT: libc::c_long = 451;

/// `struct cachestat_range` of linux/mman.h.
#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

/// `struct cachestat` of linux/mman.h.
#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// Whether the page holding `offset` is in the page cache, or the error
/// number `cachestat` was refused with.
fn cachestat_page(file: &File, offset: u64) -> Result<bool, i32> {
    let page = page_size();
    let range = CachestatRange { off: offset & !page.saturating_sub(1), len: page };
    let mut stat = Cachestat::default();
    // SAFETY: both pointers are to live structs of the layout the kernel
    // expects; the kernel reads `range` and writes `stat` only.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            std::os::fd::AsRawFd::as_raw_fd(file),
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0u32,
        )
    };
    if r == 0 { Ok(stat.nr_cache > 0) } else { Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_mincore_fallback_answers_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![1u8; 40 * page_size() as usize]).unwrap();
        f.sync_all().unwrap();
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        let file = File::open(&path).unwrap();
        let mut probe = ResidencyProbe::new(&file, 40 * page_size());
        probe.cachestat = false;
        assert!(!probe.cached(0));
        std::fs::read(&path).unwrap();
        let mut probe = ResidencyProbe::new(&file, 40 * page_size());
        probe.cachestat = false;
        assert!(probe.cached(0) && probe.cached(39 * page_size()));
    }
}
