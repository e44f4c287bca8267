//! The sizes of the pieces a job's range is cut into: windows of a map,
//! chunks of `pread`, always whole blocks of the data's type.

/// Bytes read per `pread` by default: large enough that syscalls cost
/// nothing next to hashing, small enough to stay in the core's L2 cache.
pub const CHUNK: u64 = 256 * 1024;

/// Bytes of a mapped tensor faulted in and dropped at a time by default:
/// one madvise call each way per window keeps system time small, and the
/// resident set stays at about a window per thread.
pub const WINDOW: u64 = 8 << 20;

/// Tensors shorter than this are read, not mapped, by default: for a few
/// KiB, copying costs less than the `madvise` calls that bring a mapped
/// range in and drop it again (a drop flushes the TLB of every core running
/// another hashing thread).
pub const MIN_MAPPED: u64 = 64 << 10;

/// The sizes of the pieces tensor data is cut into on its way into SHA-256.
///
/// They decide speed and memory only, never a digest: every size is rounded
/// to whole blocks of the tensor's type before use. Tests shrink them to a
/// few hundred bytes so that small tensors cross every boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PieceSizes {
    /// Bytes of a mapped tensor faulted in, hashed and dropped at a time.
    pub window: u64,
    /// Bytes read per `pread`, and converted per buffer for big-endian data.
    pub chunk: u64,
    /// Tensors shorter than this are read with `pread`, not mapped.
    pub min_mapped: u64,
}

impl Default for PieceSizes {
    fn default() -> Self {
        PieceSizes { window: WINDOW, chunk: CHUNK, min_mapped: MIN_MAPPED }
    }
}

/// The piece sizes for one tensor, in bytes: `chunk` is a whole number of
/// blocks (at least one), `window` a whole number of chunks (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) chunk: usize,
    pub(super) window: usize,
}

impl PieceSizes {
    /// The plan for data made of `block`-byte blocks.
    pub(super) fn plan(&self, block: u64) -> Plan {
        let block = usize::try_from(block.max(1)).unwrap_or(usize::MAX);
        let whole = |size: u64, unit: usize| {
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            size.checked_div(unit).unwrap_or(0).max(1).saturating_mul(unit)
        };
        let chunk = whole(self.chunk, block);
        Plan { chunk, window: whole(self.window, chunk) }
    }

    /// Bytes read at a time when data is read front to back (a stream, a
    /// file not in the page cache): [`READ_CHUNKS`] chunks, so whole blocks.
    pub fn read_piece(&self, block: u64) -> usize {
        self.plan(block).chunk.saturating_mul(READ_CHUNKS)
    }
}

/// Chunks per read when data is read front to back: 1 MiB by default.
/// Larger pieces (2 MiB, with 32 MiB in flight) were slower on SmolLM2
/// cold: more fresh buffer pages to fault in, and a reader held up longer
/// behind the thread hashing the first, largest tensor (docs/adr/0016).
pub const READ_CHUNKS: usize = 4;

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_whole_blocks_and_windows_whole_chunks() {
        let sizes = [0, 1, 2, 17, 33, 34, 35, 143, 144, 145, 210, 1000, 4096, CHUNK, WINDOW, u64::MAX];
        for block in [1, 2, 4, 8, 17, 18, 34, 36, 54, 144, 210, 292] {
            for chunk in sizes {
                for window in sizes {
                    let p = PieceSizes { window, chunk, min_mapped: 0 }.plan(block);
                    let b = block as usize;
                    assert!(p.chunk >= b && p.chunk % b == 0, "block {block}, chunk {chunk}: {p:?}");
                    assert!(p.window >= p.chunk && p.window % p.chunk == 0, "block {block}, window {window}: {p:?}");
                    // Never more than asked for, unless one block (or chunk) is more.
                    assert!(p.chunk as u64 <= chunk.max(block), "{p:?}");
                    assert!(p.window as u64 <= window.max(p.chunk as u64), "{p:?}");
                }
            }
        }
    }

    #[test]
    fn default_sizes_for_little_endian_bytes_are_unchanged() {
        // Block 1 (and 4) divides both defaults: the plan is the defaults.
        for block in [1, 2, 4] {
            let p = PieceSizes::default().plan(block);
            assert_eq!((p.chunk as u64, p.window as u64), (CHUNK, WINDOW));
        }
    }
}
