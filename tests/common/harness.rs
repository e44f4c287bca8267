//! The mutation tests' harness: a counting allocator (live bytes, their
//! high-water mark, the largest block), the lock that keeps one test's
//! allocations out of another's window, a panic report naming the mutant in
//! flight, and a deterministic PRNG. A test binary turns the allocator on
//! with `#[global_allocator] static A: Counting = Counting;`.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// Forwards to the system allocator, counting as it goes.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BIGGEST: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize, block: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
    BIGGEST.fetch_max(block, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters are side bookkeeping and never affect what is returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours, forwarded.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size(), layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours, forwarded.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size(), layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours, forwarded.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size(), new_size);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Starts a measurement window: returns the live bytes now.
pub fn window_start() -> usize {
    let now = LIVE.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    BIGGEST.store(0, Ordering::Relaxed);
    now
}

/// Extra bytes at the high-water mark since `window_start` returned `base`,
/// and the largest single block asked for.
pub fn window_end(base: usize) -> (usize, usize) {
    (PEAK.load(Ordering::Relaxed).saturating_sub(base), BIGGEST.load(Ordering::Relaxed))
}

/// The allocator counts every thread: every test of a binary holds this lock
/// from its first line to its last, so that one test's allocations
/// (building inputs included) never land in another's measurement window.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The recipe and bytes of the mutant in flight; the panic hook writes them out.
static CURRENT: Mutex<(String, Vec<u8>)> = Mutex::new((String::new(), Vec::new()));

/// On a panic, writes the mutant in flight to `$CARGO_TARGET_TMPDIR/<file>`
/// and prints its recipe, headed by `what`.
pub fn install_panic_report(what: &'static str, file: &'static str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Ok(cur) = CURRENT.try_lock() {
                if !cur.0.is_empty() {
                    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(file);
                    let saved = std::fs::write(&out, &cur.1).is_ok();
                    eprintln!(
                        "{what}: panic while processing mutant [{}] ({} bytes){}",
                        cur.0,
                        cur.1.len(),
                        if saved { format!("; input written to {}", out.display()) } else { String::new() }
                    );
                }
            }
            default(info);
        }));
    });
}

pub fn set_current(desc: &dyn fmt::Display, bytes: &[u8]) {
    let mut cur = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    cur.0.clear();
    fmt::write(&mut cur.0, format_args!("{desc}")).unwrap();
    cur.1.clear();
    cur.1.extend_from_slice(bytes);
}

pub fn clear_current() {
    let mut cur = CURRENT.lock().unwrap_or_else(|p| p.into_inner());
    cur.0.clear();
    cur.1 = Vec::new();
}

/// A deterministic PRNG (SplitMix64): no dependency, same sequence everywhere.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, one_in: u64) -> bool {
        self.next() % one_in == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The costliest mutants seen: the most heap one held and the longest one
/// took, each with its description, for the run's closing line.
#[derive(Debug, Default)]
pub struct Worst {
    /// Peak heap bytes, and the mutant.
    pub mem: (usize, String),
    /// Time, and the mutant.
    pub time: (std::time::Duration, String),
}

impl Worst {
    /// Records one mutant's cost.
    pub fn note(&mut self, desc: &dyn fmt::Display, mem: usize, time: std::time::Duration) {
        if mem > self.mem.0 {
            self.mem = (mem, desc.to_string());
        }
        if time > self.time.0 {
            self.time = (time, desc.to_string());
        }
    }
}
