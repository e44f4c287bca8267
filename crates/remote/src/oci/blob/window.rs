//! A blob's SHA-256 taken in file order from the label's own pieces,
//! whatever order they arrive in (docs/adr/0046, "Each blob's bytes
//! against its digest").
//!
//! The label reads a blob's tensors in parallel ranges, in file order
//! (`RangeSource::wants_file_order`), so the pieces of one thread continue
//! the digest's frontier while those of the others run a little ahead. A
//! piece that continues the frontier is hashed at once; one ahead of it is
//! copied into a bounded window and hashed when the frontier reaches it.
//! A reader whose piece does not fit waits while another reader reads at
//! the frontier (that one never waits: its pieces continue the bytes
//! hashed). A piece that still does not fit is dropped (the window never
//! holds more than its bound, whatever the blob's declared size), and its
//! bytes are read again: by the thread that finishes the job at the
//! frontier, when no reader will bring the bytes there, or at the end
//! ([`InOrder::finish`]). So correctness never depends on the window: the
//! digest is the SHA-256 of the blob's bytes in order, from the label's
//! pieces where they could be kept, from the digest's own reads elsewhere.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use sha2::{Digest as _, Sha256};

use crate::{Error, Result};

/// Bytes of a blob held ahead of its digest's frontier, at most. The
/// label's threads read in file order, so the pieces ahead are at most
/// the rest of the job at the frontier per other thread: 64 MiB holds the
/// lead behind any tensor of a 7B model's layers (a 4096 × 11008 F16
/// matrix is 86 MiB, its Q8 half that) and keeps a run's memory within
/// the 256 MiB of issue #36 with two blobs in flight; behind a larger
/// tensor (a vocabulary's embeddings) the readers ahead wait
/// (docs/BENCHMARKS.md, "An OCI blob's digest").
pub const WINDOW: usize = 64 << 20;

/// The largest gap before a piece that is read at once to hash the piece
/// in order, when no reader brings it (alignment padding, the end of the
/// metadata before the first tensor).
pub const SMALL_GAP: u64 = 64 << 10;

/// How long a reader ahead of a full window waits at most before it looks
/// again (it is woken whenever the frontier moves or a reader ends).
const WAIT: Duration = Duration::from_millis(50);

/// What a held piece costs the window besides its bytes (its entry), so
/// that many tiny pieces (a gathered view's elements read one by one) are
/// bounded too.
pub const ENTRY_COST: usize = 64;

/// Where the digest's own reads come from: the registry (a blob's client),
/// a slice in tests.
pub trait Fetch: Sync {
    /// Hands the `len` bytes at `start` to `sink` in order, in pieces of
    /// the fetcher's size, until the end or until `sink` answers false.
    fn fetch(&self, start: u64, len: u64, sink: &mut dyn FnMut(&[u8]) -> Result<bool>) -> Result<()>;
}

/// A range being read by the label (or by a fill): the digest does not
/// read what a reader is about to bring.
#[derive(Debug, Clone, Copy)]
struct Reading {
    id: u64,
    /// The next byte the reader hands over, and its range's end.
    at: u64,
    end: u64,
}

/// What the lock guards.
#[derive(Debug)]
struct State {
    /// The first byte not yet hashed: the frontier.
    next: u64,
    hasher: Sha256,
    /// Pieces ahead of the frontier, by offset (a longer piece wins a tie),
    /// costing at most `cap` with [`ENTRY_COST`] each.
    held: BTreeMap<u64, Vec<u8>>,
    held_bytes: usize,
    cap: usize,
    readers: Vec<Reading>,
    last_id: u64,
    /// The end of the furthest piece seen: bytes past it were handed to no
    /// one yet, so no fill goes past it.
    seen_end: u64,
    /// Bytes the digest read itself (gaps, fills, the end): a measure of
    /// what was read twice.
    fetched: u64,
    /// The finished digest, in hex.
    found: Option<String>,
}

/// A blob's in-order SHA-256 and its window, shared by every read of it.
#[derive(Debug)]
pub struct InOrder {
    size: u64,
    state: Mutex<State>,
    /// Told whenever the frontier moves or a reader ends.
    moved: Condvar,
}

fn poisoned() -> Error {
    Error::internal("an OCI blob's digest lock was poisoned")
}

impl State {
    /// True when a reader's bytes still to come meet `from..to`.
    fn brought(&self, from: u64, to: u64) -> bool {
        self.readers.iter().any(|r| r.at < to && r.end > from)
    }

    /// Hashes the held pieces that reach the frontier.
    fn consume(&mut self) {
        while let Some(entry) = self.held.first_entry() {
            if *entry.key() > self.next {
                break;
            }
            let (at, bytes) = entry.remove_entry();
            self.held_bytes = self.held_bytes.saturating_sub(bytes.len());
            self.hash_from(at, &bytes);
        }
    }

    /// Hashes the part of `piece` (at `at`) past the frontier, when it
    /// reaches the frontier.
    fn hash_from(&mut self, at: u64, piece: &[u8]) {
        let end = at.saturating_add(piece.len() as u64);
        if at > self.next || end <= self.next {
            return;
        }
        let skip = usize::try_from(self.next.saturating_sub(at)).unwrap_or(usize::MAX);
        if let Some(rest) = piece.get(skip..) {
            self.hasher.update(rest);
            self.next = end;
        }
    }

    /// Reads `from..to` and hashes it (the frontier is at `from`).
    fn read_gap(&mut self, from: u64, to: u64, fetch: &dyn Fetch) -> Result<()> {
        let mut at = from;
        fetch.fetch(from, to.saturating_sub(from), &mut |piece| {
            if at != self.next {
                return Err(Error::internal("an OCI blob's gap read out of order"));
            }
            self.hash_from(at, piece);
            at = at.saturating_add(piece.len() as u64);
            self.fetched = self.fetched.saturating_add(piece.len() as u64);
            Ok(true)
        })?;
        if self.next != to {
            return Err(Error::internal("an OCI blob's gap read of another length than asked"));
        }
        Ok(())
    }

    /// Takes `piece`, found at `offset`: hashed as far as it continues the
    /// frontier (a small gap no reader brings read first), else held.
    /// False when bytes were dropped (this piece's, or held ones evicted
    /// for it), to be read again.
    fn offer(&mut self, offset: u64, piece: &[u8], fetch: &dyn Fetch) -> Result<bool> {
        let end = offset.saturating_add(piece.len() as u64);
        self.seen_end = self.seen_end.max(end);
        loop {
            self.consume();
            if piece.is_empty() || end <= self.next {
                return Ok(true);
            }
            if offset <= self.next {
                self.hash_from(offset, piece);
                self.settle(fetch)?;
                return Ok(true);
            }
            let to = self.held.keys().next().map_or(offset, |&h| h.min(offset));
            if offset.saturating_sub(self.next) > SMALL_GAP || self.brought(self.next, to) {
                return Ok(self.hold(offset, piece));
            }
            let from = self.next;
            self.read_gap(from, to, fetch)?;
        }
    }

    /// Hashes the held pieces that reach the frontier, and those after a
    /// small gap no reader brings (the padding after the job at the
    /// frontier, which no piece after it would close while the pieces
    /// after it wait in the window).
    fn settle(&mut self, fetch: &dyn Fetch) -> Result<()> {
        loop {
            self.consume();
            let Some(&h) = self.held.keys().next() else { return Ok(()) };
            if h.saturating_sub(self.next) > SMALL_GAP || self.brought(self.next, h) {
                return Ok(());
            }
            let from = self.next;
            self.read_gap(from, h, fetch)?;
        }
    }

    /// True when `piece` at `offset` can be taken without dropping bytes:
    /// it reaches the frontier, or the window has room for it.
    fn fits(&self, offset: u64, len: usize) -> bool {
        let cost = self.held_bytes.saturating_add(self.held.len().saturating_add(1).saturating_mul(ENTRY_COST));
        offset <= self.next || cost.saturating_add(len) <= self.cap
    }

    /// True when a reader other than `me` reads at the frontier: its next
    /// piece continues the bytes hashed, so it never waits, and the
    /// frontier moves on.
    fn frontier_read_by_other(&self, me: u64) -> bool {
        self.readers.iter().any(|r| r.id != me && r.at <= self.next && r.end > self.next)
    }

    /// Copies `piece` (ahead of the frontier) into the window, making room
    /// by dropping held pieces further on; false when bytes were dropped.
    fn hold(&mut self, offset: u64, piece: &[u8]) -> bool {
        let mut whole = true;
        let had = self.held.get(&offset).map_or(0, Vec::len);
        if had >= piece.len() {
            return true;
        }
        let cost = |s: &State| s.held_bytes.saturating_add(s.held.len().saturating_add(1).saturating_mul(ENTRY_COST));
        while cost(self).saturating_add(piece.len()) > self.cap {
            let Some(far) = self.held.last_entry() else { break };
            if *far.key() <= offset {
                break;
            }
            self.held_bytes = self.held_bytes.saturating_sub(far.remove().len());
            whole = false;
        }
        let had = self.held.get(&offset).map_or(0, Vec::len);
        let room = self.cap.saturating_sub(cost(self)).saturating_add(had);
        let keep = piece.get(..piece.len().min(room)).unwrap_or(&[]);
        whole &= keep.len() == piece.len();
        if keep.is_empty() {
            return false;
        }
        if had < keep.len() {
            self.held_bytes = self.held_bytes.saturating_sub(had).saturating_add(keep.len());
            self.held.insert(offset, keep.to_vec());
        }
        whole
    }

    /// The bytes at the frontier that nobody is reading, up to what lies
    /// ahead of them (a held piece, a reader), never past what was seen:
    /// dropped bytes a thread should read again now.
    fn orphans(&self, size: u64) -> Option<(u64, u64)> {
        let next = self.next;
        if next >= size || self.brought(next, next.saturating_add(SMALL_GAP).saturating_add(1)) {
            return None;
        }
        let held = self.held.keys().next().copied();
        let reader = self.readers.iter().map(|r| r.at).filter(|&at| at > next).min();
        let to = [held, reader].into_iter().flatten().fold(self.seen_end.min(size), u64::min);
        (to > next).then_some((next, to))
    }

    fn moved(&mut self, id: u64, at: u64) {
        if let Some(r) = self.readers.iter_mut().find(|r| r.id == id) {
            r.at = at;
        }
    }
}

impl InOrder {
    /// The digest of a blob of `size` bytes, holding at most `cap` bytes
    /// ahead of its frontier ([`WINDOW`]; smaller in tests, 0 for none).
    pub fn new(size: u64, cap: usize) -> InOrder {
        let state = State {
            next: 0,
            hasher: Sha256::new(),
            held: BTreeMap::new(),
            held_bytes: 0,
            cap,
            readers: Vec::new(),
            last_id: 0,
            seen_end: 0,
            fetched: 0,
            found: None,
        };
        InOrder { size, state: Mutex::new(state), moved: Condvar::new() }
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>> {
        self.state.lock().map_err(|_| poisoned())
    }

    /// A reader of `start..end` begins: its bytes are not read by the
    /// digest meanwhile. The ticket goes to [`InOrder::saw`] and
    /// [`InOrder::close`].
    pub fn open(&self, start: u64, end: u64) -> Result<u64> {
        let mut s = self.lock()?;
        s.last_id = s.last_id.saturating_add(1);
        let id = s.last_id;
        s.readers.push(Reading { id, at: start, end });
        Ok(id)
    }

    /// Takes `piece`, found at `offset`, from the reader `ticket` (`None`:
    /// a read at a position, such as metadata). When bytes had to be
    /// dropped and nobody reads at the frontier, the bytes missing there
    /// are read now, so the frontier moves on and the window empties.
    pub fn saw(&self, ticket: Option<u64>, offset: u64, piece: &[u8], fetch: &dyn Fetch) -> Result<()> {
        let whole = {
            let mut s = self.lock()?;
            if let Some(me) = ticket {
                // The window is full and another reader reads at the
                // frontier: wait for it to move on rather than drop this
                // piece (which would be read again). That reader never
                // waits (its pieces reach the frontier); a reader that
                // ends or gives up wakes the waiters, who then drop.
                while !s.fits(offset, piece.len()) && s.frontier_read_by_other(me) {
                    s = self.moved.wait_timeout(s, WAIT).map_err(|_| poisoned())?.0;
                }
            }
            let next = s.next;
            let whole = s.offer(offset, piece, fetch)?;
            if let Some(id) = ticket {
                s.moved(id, offset.saturating_add(piece.len() as u64));
            }
            if s.next != next {
                self.moved.notify_all();
            }
            whole
        };
        if whole { Ok(()) } else { self.fill(fetch) }
    }

    /// The reader `ticket` is done. With `fetch` (its range read to the
    /// end), the bytes at the frontier that nobody else reads are read now
    /// ([`InOrder::saw`]); without (a reader given up), only forgotten.
    pub fn close(&self, ticket: u64, fetch: Option<&dyn Fetch>) -> Result<()> {
        self.lock()?.readers.retain(|r| r.id != ticket);
        self.moved.notify_all();
        fetch.map_or(Ok(()), |f| self.fill(f))
    }

    /// Reads the bytes at the frontier that nobody reads, up to what lies
    /// ahead, as a reader of its own (so no other thread reads them too),
    /// until the frontier is at a reader or at what was seen. The lock is
    /// taken piece by piece, never across a request.
    fn fill(&self, fetch: &dyn Fetch) -> Result<()> {
        loop {
            let (id, from, to) = {
                let mut s = self.lock()?;
                let Some((from, to)) = s.orphans(self.size) else { return Ok(()) };
                s.last_id = s.last_id.saturating_add(1);
                let id = s.last_id;
                s.readers.push(Reading { id, at: from, end: to });
                (id, from, to)
            };
            let mut at = from;
            let r = fetch.fetch(from, to.saturating_sub(from), &mut |piece| {
                let mut s = self.lock()?;
                s.offer(at, piece, fetch)?;
                at = at.saturating_add(piece.len() as u64);
                s.moved(id, at);
                s.fetched = s.fetched.saturating_add(piece.len() as u64);
                self.moved.notify_all();
                // The frontier went past this read (held pieces): the rest
                // would be read for nothing.
                Ok(s.next <= at)
            });
            self.lock()?.readers.retain(|r| r.id != id);
            self.moved.notify_all();
            r?;
        }
    }

    /// After every read: the digest finished, the bytes not yet hashed
    /// read now in order (between the held pieces), in hex. Asked again,
    /// the same answer.
    pub fn finish(&self, fetch: &dyn Fetch) -> Result<String> {
        let mut s = self.lock()?;
        if let Some(found) = &s.found {
            return Ok(found.clone());
        }
        loop {
            s.consume();
            if s.next >= self.size {
                break;
            }
            let to = s.held.keys().next().map_or(self.size, |&h| h.min(self.size));
            let from = s.next;
            s.read_gap(from, to, fetch)?;
        }
        if s.next != self.size {
            return Err(Error::internal("an OCI blob's digest went past its size"));
        }
        let found = hex::encode(s.hasher.clone().finalize());
        s.found = Some(found.clone());
        Ok(found)
    }

    /// Bytes the digest read itself so far (what the label's reads did not
    /// bring, or brought when the window was full): read twice.
    pub fn fetched(&self) -> u64 {
        self.lock().map_or(0, |s| s.fetched)
    }
}

#[cfg(test)]
mod tests;
