//! What identifies one version of a file for the cache, as git's index
//! keeps it and stricter: device, inode, size, modification, change and
//! birth times in nanoseconds, and the moment they were seen (the racy
//! rule below).

use std::os::unix::fs::MetadataExt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A file's identity, from the `statx` of the open file, and the time just
/// before that call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    /// Device and inode: the entry's key (one entry per file, however many
    /// paths or models lead to it).
    pub dev: u64,
    /// The inode number.
    pub ino: u64,
    /// The file's stat, compared whole.
    pub stat: Stat,
    /// The wall clock just before the file was stat'ed, in nanoseconds
    /// since the epoch.
    pub seen: i64,
}

/// The parts of a file's stat that change when its bytes can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Length in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    /// Change time (no unprivileged user can set it), nanoseconds.
    pub ctime: i64,
    /// Birth time where `statx` gives it, else 0.
    pub btime: i64,
}

/// Nanoseconds since the epoch of `secs` and `nsec`; saturating (a time
/// that far away is judged racy, never trusted).
fn nanos(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

/// Nanoseconds since the epoch of a `SystemTime` (negative before it).
pub fn since_epoch(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| n.saturating_neg()),
    }
}

impl FileId {
    /// The identity in `meta`, stat'ed just after `seen`.
    pub fn of(meta: &std::fs::Metadata, seen: SystemTime) -> FileId {
        let btime = meta.created().map_or(0, since_epoch);
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            stat: Stat {
                size: meta.len(),
                mtime: nanos(meta.mtime(), meta.mtime_nsec()),
                ctime: nanos(meta.ctime(), meta.ctime_nsec()),
                btime,
            },
            seen: since_epoch(seen),
        }
    }

    /// How much older than a moment the file's times must be for a change
    /// after that moment to be certain to move them. A file system's
    /// timestamps come from a coarse clock (up to a tick, 10 ms at HZ=100,
    /// behind the wall clock) rounded to its granularity: nanoseconds on
    /// ext4, XFS, Btrfs, tmpfs; a second on ext3's small inodes; two on
    /// FAT. Times whose nanoseconds are whole milliseconds are taken for a
    /// coarse file system.
    fn margin(&self) -> i64 {
        let whole_ms = |t: i64| t.rem_euclid(1_000_000) == 0;
        if whole_ms(self.stat.mtime) && whole_ms(self.stat.ctime) { 2_000_000_000 } else { 50_000_000 }
    }

    /// Git's racy rule: true when the file's modification or change time is
    /// not older than `at` by the margin, so that a write after `at` could
    /// have left both unchanged. A racy file is never trusted from the
    /// cache, nor stored in it.
    pub fn racy(&self, at: i64) -> bool {
        let limit = at.saturating_sub(self.margin());
        self.stat.mtime >= limit || self.stat.ctime >= limit
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn id(mtime: i64, ctime: i64) -> FileId {
        FileId { dev: 1, ino: 2, stat: Stat { size: 3, mtime, ctime, btime: 0 }, seen: 0 }
    }

    #[test]
    fn racy_when_a_time_is_within_the_margin_of_the_moment() {
        let s = 1_000_000_000_000_000_123;
        assert!(!id(s, s).racy(s + 50_000_001));
        assert!(id(s, s).racy(s + 50_000_000), "not older than at - margin");
        assert!(id(s - 10_000_000_000, s).racy(s), "the change time alone makes it racy");
        assert!(id(s, s - 10_000_000_000).racy(s), "the modification time alone too");
        assert!(id(s + 1_000_000_000, s).racy(s), "a time in the future");
    }

    #[test]
    fn whole_millisecond_times_get_the_coarse_margin() {
        let s = 1_000_000_000_000_000_000;
        assert!(id(s, s).racy(s + 1_999_999_999));
        assert!(!id(s, s).racy(s + 2_000_000_001));
        assert!(!id(s + 7, s).racy(s + 60_000_000), "one fine time means a fine file system");
    }

    #[test]
    fn times_far_away_saturate() {
        assert_eq!(nanos(i64::MAX, 5), i64::MAX);
        assert_eq!(since_epoch(UNIX_EPOCH), 0);
        assert!(since_epoch(UNIX_EPOCH - std::time::Duration::from_secs(1)) < 0);
    }
}
