//! A file's side of the verified-leaf cache (docs/adr/0033): whether it may
//! be trusted from it, the leaves found for it, the jobs hashed from its
//! bytes in this run, and, once its hashing was checked unchanged, those
//! leaves handed to the cache.
//!
//! A file is trusted (looked up and stored) only when all of this holds:
//! it is a regular file read under a read lease (so no process held it open
//! for writing when it was opened, and a writer since would have broken the
//! lease or moved its change time); its file system stamps times from this
//! machine's clock; and its times are not racy (`cache::FileId::racy`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Backing, Source, platform};
use crate::cache::{Cache, Found, Leaf};

/// The cache attached to one open file.
#[derive(Debug)]
pub(super) struct Attached {
    cache: Arc<Cache>,
    /// Whether the file may be looked up and stored (see the module).
    trusted: bool,
    found: Found,
    /// Jobs answered from the cache.
    hits: AtomicUsize,
    /// Jobs hashed from the file's bytes in this run.
    reads: AtomicUsize,
    /// Their leaves, to store once the file is checked unchanged.
    fresh: Mutex<Vec<Leaf>>,
}

impl Source {
    /// Turns the cache on for this file: its leaves are looked up (when it
    /// may be trusted) and the jobs hashed from it stored after its check.
    /// Nothing for a stream; the first cache attached stays.
    pub fn attach_cache(&self, cache: &Arc<Cache>) {
        let (Backing::File(file), Some(id)) = (&self.backing, &self.file_id) else { return };
        if self.cache.get().is_some() {
            return;
        }
        let trusted = self.lease.unavailable().is_none() && !id.racy(id.seen) && local_times(id.dev, file);
        let found = match trusted {
            true => cache.lookup(id).map(crate::cache::found).unwrap_or_default(),
            false => Found::default(),
        };
        let _ = self.cache.set(Attached {
            cache: Arc::clone(cache),
            trusted,
            found,
            hits: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            fresh: Mutex::new(Vec::new()),
        });
    }

    /// True once a cache was attached ([`Source::attach_cache`]).
    pub fn cache_attached(&self) -> bool {
        self.cache.get().is_some()
    }

    /// The digest of `len` bytes at `start` through the conversion tagged
    /// `tag`, from the cache, when this file's entry holds it.
    pub fn cached_leaf(&self, start: u64, len: u64, tag: u64) -> Option<[u8; 32]> {
        let a = self.cache.get()?;
        let d = a.found.get(&(start, len, tag)).copied()?;
        a.hits.fetch_add(1, Ordering::Relaxed);
        Some(d)
    }

    /// Notes a job hashed from this file's bytes (kept, if the file may be
    /// trusted, until its check).
    pub fn note_leaf(&self, start: u64, len: u64, tag: u64, digest: [u8; 32]) {
        let Some(a) = self.cache.get() else { return };
        a.reads.fetch_add(1, Ordering::Relaxed);
        if a.trusted {
            lock(&a.fresh).push(Leaf { start, len, tag, digest });
        }
    }

    /// True when the cache holds some leaf of this file (so it is not read
    /// front to back for the others).
    pub fn has_cached_leaves(&self) -> bool {
        self.cache.get().is_some_and(|a| !a.found.is_empty())
    }

    /// With the cache on: `Some(true)` when every job of this file came
    /// from the cache (none of its tensor or file bytes were read in this
    /// run), `Some(false)` when some were read. `None` with the cache off.
    pub fn bytes_from_cache(&self) -> Option<bool> {
        let a = self.cache.get()?;
        Some(a.hits.load(Ordering::Relaxed) > 0 && a.reads.load(Ordering::Relaxed) == 0)
    }

    /// True when the file may be trusted from the cache and every job of
    /// it asked so far was answered from it (at least one).
    pub(super) fn answered_by_cache(&self) -> bool {
        self.cache
            .get()
            .is_some_and(|a| a.trusted && a.hits.load(Ordering::Relaxed) > 0 && a.reads.load(Ordering::Relaxed) == 0)
    }

    /// After the file was checked unchanged (lease held throughout, stat the
    /// same): its new leaves go to the cache.
    pub(super) fn commit_cache(&self) {
        let (Some(a), Some(id)) = (self.cache.get(), &self.file_id) else { return };
        if !a.trusted {
            return;
        }
        let fresh = std::mem::take(&mut *lock(&a.fresh));
        a.cache.store(id, fresh, a.hits.load(Ordering::Relaxed) > 0);
    }
}

/// Whether the file system of device `dev` stamps times from this
/// machine's clock, asked once per device (`fstatfs`), not once per file.
fn local_times(dev: u64, file: &std::fs::File) -> bool {
    static KNOWN: Mutex<Vec<(u64, bool)>> = Mutex::new(Vec::new());
    if let Some(&(_, local)) = lock(&KNOWN).iter().find(|(d, _)| *d == dev) {
        return local;
    }
    let local = platform::local_times(file);
    lock(&KNOWN).push((dev, local));
    local
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
