// Tests index their own fixtures, never a blob's bytes.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing, clippy::cast_possible_truncation)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest as _, Sha256};

use super::*;

/// A blob in memory, read in pieces of `piece` bytes, counting what the
/// digest reads itself.
struct Blob {
    bytes: Vec<u8>,
    piece: usize,
    read: AtomicU64,
    asked: Mutex<Vec<(u64, u64)>>,
}

impl Blob {
    fn new(len: usize) -> Blob {
        let bytes = (0..len as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        Blob { bytes, piece: 333, read: AtomicU64::new(0), asked: Mutex::new(Vec::new()) }
    }

    fn sha(&self) -> String {
        hex::encode(Sha256::digest(&self.bytes))
    }

    fn at(&self, from: u64, to: u64) -> &[u8] {
        &self.bytes[from as usize..to as usize]
    }
}

impl Fetch for Blob {
    fn fetch(&self, start: u64, len: u64, sink: &mut dyn FnMut(&[u8]) -> Result<bool>) -> Result<()> {
        self.asked.lock().unwrap().push((start, len));
        for p in self.at(start, start + len).chunks(self.piece) {
            self.read.fetch_add(p.len() as u64, Ordering::Relaxed);
            if !sink(p)? {
                break;
            }
        }
        Ok(())
    }
}

/// xorshift64: a seeded order, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The blob cut into pieces of random lengths, with duplicates and
/// overlapping pieces added, in a random order.
fn shuffled_pieces(len: u64, rng: &mut Rng) -> Vec<(u64, u64)> {
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < len {
        let n = (1 + rng.below(3000)).min(len - at);
        pieces.push((at, at + n));
        at += n;
    }
    for _ in 0..pieces.len() / 3 {
        let from = rng.below(len);
        pieces.push((from, (from + 1 + rng.below(5000)).min(len)));
    }
    for i in (1..pieces.len()).rev() {
        pieces.swap(i, rng.below(i as u64 + 1) as usize);
    }
    pieces
}

#[test]
fn pieces_in_any_order_with_duplicates_and_overlaps_make_the_blob_s_sha256() {
    // Past SMALL_GAP, so pieces far from the frontier are not read to.
    let blob = Blob::new(200_000);
    let len = blob.bytes.len() as u64;
    for seed in 1..=12u64 {
        for (cap, reader) in [(0, false), (1, true), (700, false), (10_000, true), (60_000, false), (1 << 20, true)] {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let order = InOrder::new(len, cap);
            blob.read.store(0, Ordering::Relaxed);
            // A reader of the whole blob that hands nothing over: the
            // digest waits for it and reads nothing while pieces come in.
            let all = reader.then(|| order.open(0, len).unwrap());
            for (from, to) in shuffled_pieces(len, &mut rng) {
                order.saw(None, from, blob.at(from, to), &blob).unwrap();
            }
            if let Some(all) = all {
                assert_eq!(order.fetched(), 0, "seed {seed}, window {cap}");
                order.close(all, None).unwrap();
            }
            assert_eq!(order.finish(&blob).unwrap(), blob.sha(), "seed {seed}, window {cap}");
            assert_eq!(order.fetched(), blob.read.load(Ordering::Relaxed));
            if cap == 1 << 20 {
                // Every byte came in some piece and none was dropped (the
                // window holds every piece, duplicates too): the digest
                // read nothing itself.
                assert_eq!(order.fetched(), 0, "seed {seed}, window {cap}");
            }
            // Asked again: the same answer, nothing read.
            let before = blob.read.load(Ordering::Relaxed);
            assert_eq!(order.finish(&blob).unwrap(), blob.sha());
            assert_eq!(blob.read.load(Ordering::Relaxed), before);
        }
    }
}

#[test]
fn a_piece_straddling_the_frontier_is_hashed_from_it() {
    let blob = Blob::new(1000);
    let order = InOrder::new(1000, 0);
    order.saw(None, 0, blob.at(0, 100), &blob).unwrap();
    order.saw(None, 50, blob.at(50, 400), &blob).unwrap(); // 50 bytes hashed already
    order.saw(None, 0, blob.at(0, 10), &blob).unwrap(); // all hashed already
    order.saw(None, 399, blob.at(399, 1000), &blob).unwrap();
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert_eq!(order.fetched(), 0);
}

#[test]
fn the_window_overflows_into_reads_at_the_end_keeping_the_nearest_pieces() {
    let blob = Blob::new(30_000);
    let order = InOrder::new(30_000, 1000 + 2 * ENTRY_COST);
    order.saw(None, 0, blob.at(0, 10), &blob).unwrap();
    // A reader at the frontier, so nothing is read again while it reads.
    let a = order.open(10, 15_000).unwrap();
    // Far ahead, 500 bytes at a time: two fit (with their entries' cost),
    // the rest is dropped.
    for at in (20_000..30_000).step_by(500) {
        order.saw(None, at, blob.at(at, at + 500), &blob).unwrap();
    }
    // A nearer piece pushes out the furthest one held.
    order.saw(None, 15_000, blob.at(15_000, 15_500), &blob).unwrap();
    {
        let s = order.lock().unwrap();
        assert_eq!(s.held.keys().copied().collect::<Vec<_>>(), [15_000, 20_000]);
        assert_eq!(s.held_bytes, 1000);
    }
    // The reader gives up: at the end, everything but the 10 bytes hashed
    // and the 1000 held is read, in order.
    assert_eq!(order.fetched(), 0);
    order.close(a, None).unwrap();
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert_eq!(order.fetched(), 30_000 - 10 - 1000);
    assert_eq!(*blob.asked.lock().unwrap(), [(10, 14_990), (15_500, 4500), (20_500, 9500)]);
}

#[test]
fn a_small_gap_is_read_unless_a_reader_brings_it() {
    let blob = Blob::new(300_000);
    let order = InOrder::new(300_000, 1 << 20);
    order.saw(None, 0, blob.at(0, 100), &blob).unwrap();
    order.saw(None, 150, blob.at(150, 200), &blob).unwrap(); // 50 bytes of padding: read
    assert_eq!(order.fetched(), 50);
    // A reader of 200..1000 has not handed anything over yet: a piece
    // after it waits in the window, nothing read.
    let id = order.open(200, 1000).unwrap();
    order.saw(None, 1000, blob.at(1000, 1100), &blob).unwrap();
    assert_eq!(order.fetched(), 50);
    order.saw(Some(id), 200, blob.at(200, 1000), &blob).unwrap();
    order.close(id, Some(&blob)).unwrap();
    assert_eq!(order.lock().unwrap().next, 1100, "the held piece followed the reader's");
    // A gap past SMALL_GAP is not read while pieces come in.
    order.saw(None, 1100 + SMALL_GAP + 1, blob.at(1100 + SMALL_GAP + 1, 200_000), &blob).unwrap();
    assert_eq!(order.fetched(), 50);
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert_eq!(order.fetched(), 50 + SMALL_GAP + 1 + 100_000);
}

#[test]
fn the_reader_at_the_frontier_reads_again_only_what_ran_past_the_window() {
    // Job 1 (0..1000) by reader A; pieces of 1000..3000 that do not wait
    // (reads at a position) run ahead: 500 bytes fit the window (five
    // pieces), 1500 are dropped.
    let blob = Blob::new(3000);
    let order = InOrder::new(3000, 500 + 5 * ENTRY_COST);
    let a = order.open(0, 1000).unwrap();
    for at in (1000..3000).step_by(100) {
        order.saw(None, at, blob.at(at, at + 100), &blob).unwrap();
    }
    // A still reads at the frontier: nobody reads the dropped bytes yet.
    assert_eq!(order.fetched(), 0);
    for at in (0..1000).step_by(100) {
        order.saw(Some(a), at, blob.at(at, at + 100), &blob).unwrap();
    }
    // A is done: the window was hashed (to 1500) and A reads 1500..3000.
    order.close(a, Some(&blob)).unwrap();
    assert_eq!(order.fetched(), 1500);
    assert_eq!(*blob.asked.lock().unwrap(), [(1500, 1500)]);
    assert_eq!(order.lock().unwrap().next, 3000);
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert_eq!(order.fetched(), 1500, "nothing left for the end");
}

#[test]
fn a_reader_ahead_of_a_full_window_waits_and_stops_waiting_when_the_frontier_s_reader_gives_up() {
    let blob = Blob::new(3000);
    let order = InOrder::new(3000, 0);
    let a = order.open(0, 1000).unwrap();
    let b = order.open(1000, 3000).unwrap();
    std::thread::scope(|s| {
        let ahead = s.spawn(|| {
            for at in (1000..3000).step_by(100) {
                order.saw(Some(b), at, blob.at(at, at + 100), &blob).unwrap();
            }
            order.close(b, Some(&blob)).unwrap();
        });
        // B waits (no window, A reads at the frontier) ...
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!ahead.is_finished());
        assert_eq!(order.lock().unwrap().seen_end, 0, "B's first piece waits");
        // ... until A gives up: B's pieces are then dropped and the bytes
        // before them read (A's job), never a wait without end.
        order.close(a, None).unwrap();
        ahead.join().unwrap();
    });
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert!(order.fetched() >= 1000, "{}", order.fetched());
}

#[test]
fn dropped_bytes_nobody_reads_are_read_at_once_up_to_what_was_seen() {
    // Pieces at positions (metadata, a gathered view's rows), no reader:
    // once the window drops bytes, the frontier is moved on at once, so the
    // window empties instead of staying full to the end.
    let blob = Blob::new(200_000);
    let order = InOrder::new(200_000, 300 + 3 * ENTRY_COST);
    for at in (100_000..101_000).step_by(100) {
        order.saw(None, at, blob.at(at, at + 100), &blob).unwrap();
    }
    // The fourth piece did not fit: up to the held ones, then the dropped one.
    assert_eq!(*blob.asked.lock().unwrap(), [(0, 100_000), (100_300, 100)]);
    assert_eq!(order.lock().unwrap().next, 101_000);
    assert_eq!(order.lock().unwrap().held_bytes, 0);
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert_eq!(order.fetched(), 200_000 - 900);
}

#[test]
fn tiny_pieces_cost_the_window_their_entries_too() {
    // A gathered view's elements read one by one: 2-byte pieces.
    let blob = Blob::new(100_000);
    let cap = 100 * (2 + ENTRY_COST);
    let order = InOrder::new(100_000, cap);
    let all = order.open(0, 100_000).unwrap();
    for at in (80_000..90_000).step_by(4) {
        order.saw(None, at, blob.at(at, at + 2), &blob).unwrap();
    }
    {
        let s = order.lock().unwrap();
        assert_eq!(s.held.len(), 100);
        assert_eq!(s.held_bytes, 200);
    }
    order.close(all, None).unwrap();
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
}

#[test]
fn a_reader_given_up_leaves_its_bytes_to_the_end() {
    let blob = Blob::new(5000);
    let order = InOrder::new(5000, 10_000);
    let a = order.open(0, 5000).unwrap();
    order.saw(Some(a), 0, blob.at(0, 1000), &blob).unwrap();
    order.saw(None, 3000, blob.at(3000, 3100), &blob).unwrap();
    order.close(a, None).unwrap();
    assert_eq!(order.fetched(), 0);
    assert_eq!(order.finish(&blob).unwrap(), blob.sha());
    assert_eq!(order.fetched(), 5000 - 1000 - 100);
}

/// Jobs of `lens` laid end to end, read by `threads` threads taking them
/// in file order, each job's reader opened as it is taken (as the
/// scheduler's file order and `read_range` do), its range handed over in
/// pieces of 1000 bytes. Returns the bytes the digest read itself.
fn run_jobs(lens: &[u64], threads: usize, cap: usize) -> (u64, Blob) {
    let len: u64 = lens.iter().sum();
    let blob = Blob::new(len as usize);
    let order = InOrder::new(len, cap);
    let jobs: Vec<(u64, u64)> = lens
        .iter()
        .scan(0, |at, &n| {
            *at += n;
            Some((*at - n, *at))
        })
        .collect();
    let queue = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let (from, to, id) = {
                        let mut q = queue.lock().unwrap();
                        let Some(&(from, to)) = jobs.get(*q) else { break };
                        *q += 1;
                        (from, to, order.open(from, to).unwrap())
                    };
                    for at in (from..to).step_by(1000) {
                        let end = (at + 1000).min(to);
                        order.saw(Some(id), at, blob.at(at, end), &blob).unwrap();
                    }
                    order.close(id, Some(&blob)).unwrap();
                }
            });
        }
    });
    assert_eq!(order.finish(&blob).unwrap(), blob.sha(), "{lens:?} on {threads} threads, window {cap}");
    assert_eq!(order.fetched(), blob.read.load(Ordering::Relaxed));
    (order.fetched(), blob)
}

#[test]
fn jobs_in_file_order_on_threads_read_each_byte_once_within_the_window() {
    // A big first job (embeddings), then layers: the other threads run
    // ahead by at most the big job, which the window holds.
    let mut lens = vec![1_000_000];
    lens.extend([100_000u64, 120_000, 80_000].iter().cycle().take(30));
    for threads in [1, 2, 4] {
        let (fetched, _) = run_jobs(&lens, threads, 1_000_000 * threads);
        assert_eq!(fetched, 0, "{threads} threads");
    }
}

#[test]
fn jobs_ahead_of_a_window_smaller_than_the_lead_wait_and_read_each_byte_once() {
    // The window is a tenth of the lead, or none: the readers ahead wait
    // for the one at the frontier instead of dropping what they read.
    let mut lens = vec![1_000_000];
    lens.extend([100_000u64, 120_000, 80_000].iter().cycle().take(30));
    for threads in [2, 3] {
        for cap in [0, 100_000] {
            let (fetched, _) = run_jobs(&lens, threads, cap);
            assert_eq!(fetched, 0, "{threads} threads, window {cap}");
        }
    }
}
