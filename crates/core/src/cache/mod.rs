//! The verified-leaf cache (opt-in, `--cache`; docs/adr/0033): the digests
//! a run computed for a file's hashing jobs, kept with the file's identity
//! ([`FileId`]) and handed back, without reading the file, to a later run
//! that finds the identity unchanged.
//!
//! A leaf is one job: (offset, length, conversion) of one file, so every
//! format, directory and Ollama model, `--verify-blobs` and a BOM's
//! whole-file hashes are cached alike, and a model with one changed file
//! reads that file only. One entry per (device, inode), however many paths
//! or models lead to it.
//!
//! This module only keeps entries: `source` decides which files may be
//! looked up or stored (a file read under a read lease, on a file system
//! with trustworthy times, not racy) and `hash` asks for each job's leaf.
//! It imports neither (`source` and `hash` import it).
//!
//! The store is one file (`store.rs`) in a folder of its own, owned by the
//! user and closed to others, read whole at the start of a run, and written
//! at the end, when anything new was learnt, by atomic rename under a lock
//! (the entries another run wrote meanwhile are merged in first).

use std::collections::HashMap;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod identity;
mod store;

pub use identity::{FileId, Stat};
pub use store::Leaf;
use store::{Entries, Entry};

/// The store's file name in the cache folder (its format is in the name,
/// so a later format sits beside it, never read as this one).
const STORE: &str = "leaves-v1";

/// The lock a writer holds while it merges and renames.
const LOCK: &str = "lock";

/// The folder's name under the platform cache folder: a subfolder of
/// `gguf-digest`, so that nothing else kept there (the test venv) meets it.
const SUBFOLDER: &str = "leaves";

/// The store's default bound, in bytes: about 200,000 cached tensors or
/// whole files. Entries verified longest ago go first past it.
pub const DEFAULT_MAX_BYTES: u64 = 16 << 20;

/// A store larger than this is not read at all (a bound set far lower
/// later evicts down to it; this only stops a runaway file).
const MAX_READ: u64 = 1 << 30;

/// An entry whose last verification is older than this is stamped again
/// when a run finds it unchanged, so eviction goes by use (to a day),
/// without a run that only reads cached files writing the store each time.
const RESTAMP_AFTER_NS: i64 = 86_400 * 1_000_000_000;

/// The environment variable that turns the cache on for every run (`1`).
pub const ENV_ON: &str = "GGUF_DIGEST_CACHE";
/// The environment variable naming the cache folder.
pub const ENV_DIR: &str = "GGUF_DIGEST_CACHE_DIR";
/// The environment variable bounding the store, in bytes.
pub const ENV_MAX: &str = "GGUF_DIGEST_CACHE_MAX_BYTES";

/// True when the environment asks for the cache on every run
/// (`GGUF_DIGEST_CACHE=1`, `true` or `yes`).
pub fn enabled_by_env() -> bool {
    std::env::var(ENV_ON).is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// The cache folder: `$GGUF_DIGEST_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/gguf-digest/leaves`, else `~/.cache/gguf-digest/leaves`.
pub fn default_dir() -> Option<PathBuf> {
    let set = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    let home = set("HOME");
    if let Some(d) = set(ENV_DIR) {
        return Some(d);
    }
    let base = set("XDG_CACHE_HOME").filter(|p| p.is_absolute()).or_else(|| home.map(|h| h.join(".cache")))?;
    Some(base.join("gguf-digest").join(SUBFOLDER))
}

/// One run's cache: the entries read at its start, what the run learnt,
/// and the warnings to show (a store ignored, a write that failed).
#[derive(Debug)]
pub struct Cache {
    dir: PathBuf,
    max_bytes: u64,
    /// False when the folder is not safely the user's: nothing is read or
    /// written there.
    usable: bool,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The store as read at the start.
    entries: Entries,
    /// Entries to write: new leaves, or a new verification time.
    learnt: Entries,
    warnings: Vec<String>,
}

impl Cache {
    /// The cache in `dir` (created 0700 if missing), its store read. A
    /// folder or store that is not safely the user's, damaged or of another
    /// version, is a warning (see [`Cache::take_warnings`]) and an empty
    /// cache, never an error and never a digest.
    pub fn open(dir: &Path, max_bytes: u64) -> Cache {
        let mut state = State::default();
        let usable = match prepare_dir(dir) {
            Ok(()) => true,
            Err(why) => {
                state.warnings.push(format!("{}: {why}; the cache is not used", dir.display()));
                false
            }
        };
        if usable {
            match read_store(&dir.join(STORE)) {
                Ok(Some(entries)) => state.entries = entries,
                Ok(None) => {}
                Err(why) => state.warnings.push(format!("{}: {why}; ignored, rebuilt", dir.join(STORE).display())),
            }
        }
        Cache { dir: dir.to_path_buf(), max_bytes, usable, state: Mutex::new(state) }
    }

    /// The cache the environment names ([`default_dir`], [`ENV_MAX`]);
    /// `None` when no folder can be named (no home directory).
    pub fn from_env() -> Option<Cache> {
        let dir = default_dir()?;
        let max = std::env::var(ENV_MAX).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_MAX_BYTES);
        Some(Cache::open(&dir, max))
    }

    /// The folder it lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The warnings so far (each once): a store ignored, a write that failed.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().warnings)
    }

    /// The leaves kept for the file `id` names, if its stat is the one they
    /// were computed for and it is not racy against their verification.
    pub fn lookup(&self, id: &FileId) -> Option<Vec<Leaf>> {
        let state = self.lock();
        let key = (id.dev, id.ino);
        let e = state.learnt.get(&key).filter(|e| e.stat == id.stat).or_else(|| state.entries.get(&key))?;
        (e.stat == id.stat && !id.racy(e.verified) && !id.racy(id.seen)).then(|| e.leaves.clone())
    }

    /// Keeps `leaves` for the file `id` names, checked unchanged after they
    /// were computed (`cached`: it was found in the cache, to be stamped
    /// again when that is old). A racy file is not kept.
    pub fn store(&self, id: &FileId, leaves: Vec<Leaf>, cached: bool) {
        if id.racy(id.seen) || (leaves.is_empty() && !cached) {
            return;
        }
        let mut state = self.lock();
        let key = (id.dev, id.ino);
        let known = state.learnt.get(&key).or_else(|| state.entries.get(&key)).filter(|e| e.stat == id.stat);
        if leaves.is_empty() && known.is_some_and(|e| id.seen.saturating_sub(e.verified) < RESTAMP_AFTER_NS) {
            return;
        }
        let mut all = known.map(|e| e.leaves.clone()).unwrap_or_default();
        all.extend(leaves);
        all.sort_unstable();
        all.dedup_by_key(|l| (l.start, l.len, l.tag));
        let verified = known.map_or(id.seen, |e| e.verified.max(id.seen));
        state.learnt.insert(key, Entry { stat: id.stat, verified, leaves: all });
    }

    /// Writes what this run learnt, merged into the store as it is now (a
    /// run that wrote meanwhile keeps its entries), evicting the entries
    /// verified longest ago past the bound; by atomic rename under the
    /// lock. Nothing is written when nothing was learnt. A failure is a
    /// warning.
    pub fn persist(&self) {
        let learnt = std::mem::take(&mut self.lock().learnt);
        if !self.usable || learnt.is_empty() {
            return;
        }
        if let Err(e) = self.write(learnt) {
            self.lock().warnings.push(format!("{}: not written: {e}", self.dir.join(STORE).display()));
        }
    }

    fn write(&self, learnt: Entries) -> std::io::Result<()> {
        let lock = private_file(&self.dir.join(LOCK), false)?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)?;
        // Read again under the lock: another run may have written since.
        let mut entries = read_store(&self.dir.join(STORE)).ok().flatten().unwrap_or_default();
        for (key, e) in learnt {
            match entries.get_mut(&key) {
                Some(old) if old.stat == e.stat => {
                    old.leaves.extend(e.leaves);
                    old.leaves.sort_unstable();
                    old.leaves.dedup_by_key(|l| (l.start, l.len, l.tag));
                    old.verified = old.verified.max(e.verified);
                }
                _ => {
                    entries.insert(key, e);
                }
            }
        }
        evict(&mut entries, self.max_bytes);
        let bytes = store::encode(&entries);
        let tmp = self.dir.join(format!("{STORE}.{}.tmp", std::process::id()));
        let mut f = private_file(&tmp, true)?;
        // Not synced before the rename (docs/adr/0033, "No fsync"): a crash
        // may leave the store empty, cut or the previous one, which its
        // SHA-256 refuses or which holds only true older entries; it can
        // lose entries, never make a wrong one trusted; and the sync was
        // the one cost of a first run that waited on the disk.
        let written = f.write_all(&bytes);
        drop(f);
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, self.dir.join(STORE))) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        drop(lock);
        Ok(())
    }
}

/// Bytes an entry takes in the store, at most (varints at their longest).
fn entry_bytes(e: &Entry) -> u64 {
    let leaf = 10 + 10 + 10 + 32;
    (30 + 32 + 10u64).saturating_add((e.leaves.len() as u64).saturating_mul(leaf))
}

/// Drops the entries verified longest ago until the rest fit `max` bytes.
fn evict(entries: &mut Entries, max: u64) {
    let mut by_age: Vec<((u64, u64), i64, u64)> =
        entries.iter().map(|(k, e)| (*k, e.verified, entry_bytes(e))).collect();
    by_age.sort_unstable_by_key(|&(k, verified, _)| (std::cmp::Reverse(verified), k));
    let mut total = 100u64;
    for (k, _, size) in by_age {
        total = total.saturating_add(size);
        if total > max {
            entries.remove(&k);
        }
    }
}

/// The user's effective id (POSIX).
fn uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Creates the folder (0700) if missing, and checks that it is the user's
/// and closed to writers other than the user.
fn prepare_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| format!("cannot be created: {e}"))?;
    }
    let m = std::fs::metadata(dir).map_err(|e| e.to_string())?;
    if !m.is_dir() {
        return Err("not a directory".to_string());
    }
    safe_owner(&m)
}

/// The owner is the user and no one else may write.
fn safe_owner(m: &std::fs::Metadata) -> Result<(), String> {
    if m.uid() != uid() {
        return Err(format!("owned by user {}, not by this user", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!("writable by others (mode {:o})", m.mode() & 0o7777));
    }
    Ok(())
}

/// Opens (or creates, 0600) a file of the folder, never through a link.
fn private_file(path: &Path, new: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    if new {
        o.create_new(true);
    } else {
        o.create(true);
    }
    o.open(path)
}

/// The store's entries; `Ok(None)` when there is none yet.
fn read_store(path: &Path) -> Result<Option<Entries>, String> {
    let f = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err("a symbolic link".to_string()),
        Err(e) => return Err(e.to_string()),
    };
    let m = f.metadata().map_err(|e| e.to_string())?;
    if !m.is_file() {
        return Err("not a regular file".to_string());
    }
    safe_owner(&m)?;
    if m.len() > MAX_READ {
        return Err(format!("larger than {MAX_READ} bytes"));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(m.len()).unwrap_or(0));
    f.take(MAX_READ).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    store::decode(&bytes).map(Some).map_err(|r| r.to_string())
}

/// The leaves of one open file found in the cache, by (start, len, tag).
pub type Found = HashMap<(u64, u64, u64), [u8; 32]>;

/// Leaves as a map for lookups by job.
pub fn found(leaves: Vec<Leaf>) -> Found {
    leaves.into_iter().map(|l| ((l.start, l.len, l.tag), l.digest)).collect()
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn id(ino: u64, seen: i64) -> FileId {
        let t = 1_700_000_000_123_456_789;
        FileId { dev: 7, ino, stat: Stat { size: 10, mtime: t, ctime: t, btime: 0 }, seen }
    }

    fn leaf(d: u8) -> Leaf {
        Leaf { start: 0, len: 10, tag: 1, digest: [d; 32] }
    }

    const LATER: i64 = 1_700_000_100_000_000_000;

    #[test]
    fn stored_leaves_come_back_after_a_persist_and_a_changed_stat_misses() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        c.store(&id(1, LATER), vec![leaf(9)], false);
        c.persist();
        assert!(c.take_warnings().is_empty());
        let m = std::fs::metadata(dir.path().join(STORE)).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        assert_eq!(c.lookup(&id(1, LATER + 5)), Some(vec![leaf(9)]));
        let mut other = id(1, LATER);
        other.stat.ctime += 1;
        assert_eq!(c.lookup(&other), None);
        assert_eq!(c.lookup(&id(2, LATER)), None);
    }

    #[test]
    fn a_racy_file_is_neither_stored_nor_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        let t = 1_700_000_000_123_456_789;
        c.store(&id(1, t + 10_000_000), vec![leaf(1)], false);
        c.persist();
        assert!(!dir.path().join(STORE).exists());
    }

    #[test]
    fn two_runs_merge_and_the_oldest_are_evicted() {
        let dir = tempfile::tempdir().unwrap();
        let a = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        let b = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        a.store(&id(1, LATER), vec![leaf(1)], false);
        b.store(&id(2, LATER + 1), vec![leaf(2)], false);
        a.persist();
        b.persist();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        assert!(c.lookup(&id(1, LATER)).is_some() && c.lookup(&id(2, LATER)).is_some());
        // Room for one entry only: the one verified last stays.
        let d = Cache::open(
            dir.path(),
            100 + entry_bytes(&Entry { stat: id(0, 0).stat, verified: 0, leaves: vec![leaf(0)] }),
        );
        d.store(&id(3, LATER + 2), vec![leaf(3)], false);
        d.persist();
        let e = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        assert!(e.lookup(&id(3, LATER + 3)).is_some());
        assert!(e.lookup(&id(1, LATER)).is_none() && e.lookup(&id(2, LATER)).is_none());
    }

    #[test]
    fn an_unsafe_or_damaged_store_is_a_warning_and_empty() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        c.store(&id(1, LATER), vec![leaf(1)], false);
        c.persist();
        let store = dir.path().join(STORE);
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o666)).unwrap();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        assert!(c.lookup(&id(1, LATER)).is_none());
        assert!(c.take_warnings()[0].contains("writable by others"));
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut bytes = std::fs::read(&store).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 4;
        std::fs::write(&store, &bytes).unwrap();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        assert!(c.lookup(&id(1, LATER)).is_none());
        assert!(c.take_warnings()[0].contains("damaged"));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let c = Cache::open(dir.path(), DEFAULT_MAX_BYTES);
        c.store(&id(1, LATER), vec![leaf(1)], false);
        c.persist();
        assert!(c.take_warnings()[0].contains("writable by others"));
        assert_eq!(std::fs::read(&store).unwrap(), bytes, "nothing written to an unsafe folder");
    }

    #[test]
    fn the_folder_is_made_private_under_the_platform_cache() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        let _ = Cache::open(&sub, DEFAULT_MAX_BYTES);
        let m = std::fs::metadata(&sub).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
    }
}
