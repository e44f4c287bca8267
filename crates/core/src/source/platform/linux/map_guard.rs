//! Makes reading a memory map safe against the file shrinking underneath.
//!
//! When another process truncates a mapped file, touching a page past the new
//! end raises SIGBUS, which kills the process. While a [`Guard`] is alive,
//! a SIGBUS handler recognises faults inside the guarded range, maps a page
//! of zeros over the faulting page (so the read completes, seeing zeros) and
//! records the hit; the owner then asks [`Guard::was_hit`] and discards what
//! it read. Faults anywhere else go to the handler that was installed before
//! (Rust's own stack-overflow handler, or the default action), so nothing
//! else changes.
//!
//! Everything the handler touches is a fixed array of atomics and the raw
//! `mmap` system call; it allocates nothing and takes no lock.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many maps can be guarded at once; beyond that callers fall back to
/// reads. Each open file of a model holds one for its lifetime, and an
/// Ollama model of tensor blobs is one file per tensor (thousands): with
/// too few, most blobs would be copied through `pread` instead of hashed in
/// place. The handler scans the table only on a fault; a new guard scans it
/// for a free slot, a few microseconds at this size.
pub const SLOTS: usize = 4096;

struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    hit: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot { start: AtomicUsize::new(0), end: AtomicUsize::new(0), hit: AtomicBool::new(false) };
static SLOT_TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);

/// The SIGBUS action that was in place before ours, to pass other faults on.
struct Previous(libc::sigaction);
// SAFETY: written once before the handler is installed, then only read.
unsafe impl Sync for Previous {}
// SAFETY: the struct is plain data (a handler's address, flags and a mask)
// that no thread owns; moving it between threads changes nothing.
unsafe impl Send for Previous {}
static PREVIOUS: OnceLock<Option<Previous>> = OnceLock::new();

/// A guarded address range; unguarded again when dropped.
pub struct Guard {
    slot: &'static Slot,
}

impl Guard {
    /// Guards `len` bytes at `start`, or `None` if the handler could not be
    /// installed or every slot is taken (the caller then reads instead).
    pub fn new(start: *const u8, len: usize) -> Option<Guard> {
        if !install() || len == 0 {
            return None;
        }
        let start = start as usize;
        let end = start.checked_add(len)?;
        for slot in &SLOT_TABLE {
            if slot.start.compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                slot.hit.store(false, Ordering::Release);
                slot.end.store(end, Ordering::Release);
                return Some(Guard { slot });
            }
        }
        None
    }

    /// True if a read in the range faulted since the guard was made.
    pub fn was_hit(&self) -> bool {
        self.slot.hit.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.slot.end.store(0, Ordering::Release);
        self.slot.start.store(0, Ordering::Release);
    }
}

/// Installs the handler once; false if the system refused.
fn install() -> bool {
    PREVIOUS
        .get_or_init(|| {
            let p = rustix::param::page_size();
            if p.is_power_of_two() {
                PAGE_SIZE.store(p, Ordering::Relaxed);
            }
            // SAFETY: zeroed sigaction structs are valid; the handler below
            // only uses async-signal-safe operations (atomics, mmap, and the
            // previous handler, which was itself installed as a signal handler).
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = handler as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
                    return None;
                }
                Some(Previous(old))
            }
        })
        .is_some()
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    for slot in &SLOT_TABLE {
        let (start, end) = (slot.start.load(Ordering::Acquire), slot.end.load(Ordering::Acquire));
        if start != 0 && start <= addr && addr < end {
            let page = addr & !PAGE_SIZE.load(Ordering::Relaxed).saturating_sub(1);
            // SAFETY: the page lies inside a mapping that this process owns and
            // that stays mapped while its guard lives; replacing it with zeros
            // only changes what the guarded reader sees, and it is told so.
            let mapped = unsafe {
                libc::mmap(
                    page as *mut libc::c_void,
                    PAGE_SIZE.load(Ordering::Relaxed),
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if mapped != libc::MAP_FAILED {
                slot.hit.store(true, Ordering::Release);
                return;
            }
        }
    }
    pass_on(sig, info, context);
}

/// Hands a fault that is not ours to the previous handler, or restores the
/// default action so that the faulting instruction, run again, ends the
/// process exactly as it would have without us.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let previous = PREVIOUS.get().and_then(|p| p.as_ref());
    if let Some(Previous(old)) = previous {
        let h = old.sa_sigaction;
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            // SAFETY: `h` was installed by someone as a handler of this kind.
            unsafe {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(h);
                    f(sig, info, context);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                    f(sig);
                }
            }
            return;
        }
    }
    // SAFETY: resetting a signal to its default action is always valid.
    unsafe {
        libc::signal(libc::SIGBUS, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The one case the guard exists for: a mapped file truncated before a read.
    #[test]
    fn read_past_a_truncation_sees_zeros_and_is_reported() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[7u8; 65536]).unwrap();
        // SAFETY: test-owned file; the truncation below is the point of the test.
        let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
        let guard = Guard::new(map.as_ptr(), map.len()).unwrap();
        assert_eq!(map[100], 7);
        assert!(!guard.was_hit());
        f.set_len(0).unwrap();
        // Without the guard this read kills the test process with SIGBUS.
        let b = std::hint::black_box(&map[40000]);
        assert_eq!(*b, 0);
        assert!(guard.was_hit());
        drop(guard);
    }

    #[test]
    fn slots_are_reused() {
        let data = [1u8; 16];
        for _ in 0..(SLOTS * 2) {
            let g = Guard::new(data.as_ptr(), data.len());
            assert!(g.is_some());
        }
    }
}
