//! The store's bytes: one file, every entry, and a SHA-256 of all of it at
//! the end, so damage anywhere is found before a digest is believed.
//!
//! ```text
//! "gguf-digest leaf cache\n"  magic (23 bytes)
//! u32 LE                      FORMAT
//! u8 n, n bytes               the crate version that wrote it
//! varint                      conversions: their number, then each tag (u64 LE)
//! varint                      entries: their number, then each:
//!   varint dev, varint ino, varint size
//!   i64 LE mtime, ctime, btime, verified (nanoseconds since the epoch)
//!   varint leaves, then each: varint start, varint len, varint conversion, 32 bytes digest
//! 32 bytes                    SHA-256 of everything before
//! ```
//!
//! A file with one whole-file leaf costs about 80 bytes.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use super::identity::Stat;

/// The first bytes of a store.
const MAGIC: &[u8] = b"gguf-digest leaf cache\n";

/// The layout above; a store of any other is ignored and rebuilt.
pub(super) const FORMAT: u32 = 1;

/// One hashing job's digest: `len` bytes at `start`, through the
/// conversion whose tag is `tag` (`hash::Conversion::cache_tag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Leaf {
    /// The file position of the first byte.
    pub start: u64,
    /// The number of bytes.
    pub len: u64,
    /// The conversion's tag.
    pub tag: u64,
    /// The job's digest.
    pub digest: [u8; 32],
}

/// One file's entry: its stat when its leaves were computed, when that was
/// last verified, and the leaves (sorted, one per place and conversion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file's stat; the entry holds only while it is the same.
    pub stat: Stat,
    /// The wall clock (nanoseconds) of the run that last found the file
    /// unchanged: the racy rule's moment, and the age eviction goes by.
    pub verified: i64,
    /// The digests, sorted by (start, len, tag).
    pub leaves: Vec<Leaf>,
}

/// Entries by (device, inode).
pub type Entries = HashMap<(u64, u64), Entry>;

/// Why a store's bytes were not believed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not a store, or its end was cut, or its checksum does not match.
    Damaged(&'static str),
    /// A store of another format or another version of the tool.
    Foreign(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Damaged(why) => write!(f, "damaged ({why})"),
            Refused::Foreign(what) => write!(f, "written by {what}"),
        }
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bytes of a store holding `entries` (in any order: sorted here, so
/// equal stores are equal bytes).
pub fn encode(entries: &Entries) -> Vec<u8> {
    let mut keys: Vec<&(u64, u64)> = entries.keys().collect();
    keys.sort_unstable();
    let mut tags: Vec<u64> = entries.values().flat_map(|e| e.leaves.iter().map(|l| l.tag)).collect();
    tags.sort_unstable();
    tags.dedup();
    let index: HashMap<u64, u64> = tags.iter().enumerate().map(|(i, &t)| (t, i as u64)).collect();
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    let version = env!("CARGO_PKG_VERSION").as_bytes();
    out.push(u8::try_from(version.len()).unwrap_or(0));
    out.extend_from_slice(version.get(..usize::from(u8::try_from(version.len()).unwrap_or(0))).unwrap_or(&[]));
    varint(&mut out, tags.len() as u64);
    for t in &tags {
        out.extend_from_slice(&t.to_le_bytes());
    }
    varint(&mut out, keys.len() as u64);
    for key in keys {
        let Some(e) = entries.get(key) else { continue };
        varint(&mut out, key.0);
        varint(&mut out, key.1);
        varint(&mut out, e.stat.size);
        for t in [e.stat.mtime, e.stat.ctime, e.stat.btime, e.verified] {
            out.extend_from_slice(&t.to_le_bytes());
        }
        varint(&mut out, e.leaves.len() as u64);
        for l in &e.leaves {
            varint(&mut out, l.start);
            varint(&mut out, l.len);
            varint(&mut out, index.get(&l.tag).copied().unwrap_or(0));
            out.extend_from_slice(&l.digest);
        }
    }
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// A reader of a store's bytes: every read checked.
struct Reader<'a> {
    bytes: &'a [u8],
}

const CUT: Refused = Refused::Damaged("cut short");

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Refused> {
        let (head, rest) = self.bytes.split_at_checked(n).ok_or(CUT)?;
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Refused> {
        self.take(N)?.try_into().map_err(|_| CUT)
    }

    fn varint(&mut self) -> Result<u64, Refused> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let [b] = self.array::<1>()?;
            v |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Refused::Damaged("a number too long"))
    }

    fn i64(&mut self) -> Result<i64, Refused> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    /// A count of items each at least `min` bytes long, refused if the
    /// bytes left cannot hold them (nothing allocated for a count the
    /// bytes do not back).
    fn count(&mut self, min: usize) -> Result<usize, Refused> {
        let n = usize::try_from(self.varint()?).map_err(|_| Refused::Damaged("a count too large"))?;
        if n.checked_mul(min).is_none_or(|need| need > self.bytes.len()) {
            return Err(Refused::Damaged("a count larger than the file"));
        }
        Ok(n)
    }
}

/// The entries of a store's bytes; any damage, a foreign format or another
/// version is refused whole (nothing of such a store is believed).
pub fn decode(bytes: &[u8]) -> Result<Entries, Refused> {
    let body_len = bytes.len().checked_sub(32).ok_or(Refused::Damaged("shorter than its checksum"))?;
    let (body, sum) = bytes.split_at_checked(body_len).ok_or(CUT)?;
    let mut r = Reader { bytes: body };
    if r.take(MAGIC.len()).ok() != Some(MAGIC) {
        return Err(Refused::Damaged("not a gguf-digest leaf cache"));
    }
    let format = u32::from_le_bytes(r.array()?);
    let [n] = r.array::<1>()?;
    let version = r.take(usize::from(n))?;
    // The checksum first: a bit flipped in the header is damage, not a
    // foreign version.
    if Sha256::digest(body).as_slice() != sum {
        return Err(Refused::Damaged("its checksum does not match"));
    }
    if format != FORMAT || version != env!("CARGO_PKG_VERSION").as_bytes() {
        let version = String::from_utf8_lossy(version);
        return Err(Refused::Foreign(format!("gguf-digest {version}, store format {format}")));
    }
    let ntags = r.count(8)?;
    let mut tags = Vec::with_capacity(ntags);
    for _ in 0..ntags {
        tags.push(u64::from_le_bytes(r.array()?));
    }
    let nentries = r.count(36)?;
    let mut entries = Entries::with_capacity(nentries);
    for _ in 0..nentries {
        let key = (r.varint()?, r.varint()?);
        let size = r.varint()?;
        let (mtime, ctime, btime, verified) = (r.i64()?, r.i64()?, r.i64()?, r.i64()?);
        let nleaves = r.count(35)?;
        let mut leaves = Vec::with_capacity(nleaves);
        for _ in 0..nleaves {
            let (start, len) = (r.varint()?, r.varint()?);
            let tag = usize::try_from(r.varint()?).ok().and_then(|i| tags.get(i)).copied();
            let tag = tag.ok_or(Refused::Damaged("a conversion out of range"))?;
            leaves.push(Leaf { start, len, tag, digest: r.array()? });
        }
        let entry = Entry { stat: Stat { size, mtime, ctime, btime }, verified, leaves };
        if entries.insert(key, entry).is_some() {
            return Err(Refused::Damaged("a file entered twice"));
        }
    }
    if !r.bytes.is_empty() {
        return Err(Refused::Damaged("bytes after the last entry"));
    }
    Ok(entries)
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn sample(n: u64) -> Entries {
        (0..n)
            .map(|i| {
                let leaves = vec![Leaf { start: 0, len: 1000 + i, tag: 0x5eed_0000_0000_0001, digest: [i as u8; 32] }];
                let stat = Stat {
                    size: 1000 + i,
                    mtime: 1_700_000_000_123_456_789,
                    ctime: 1_700_000_000_123_456_789,
                    btime: 0,
                };
                ((2049, 1_000_000 + i), Entry { stat, verified: 1_700_000_100_000_000_000, leaves })
            })
            .collect()
    }

    #[test]
    fn round_trips_and_is_small() {
        let e = sample(1000);
        let bytes = encode(&e);
        assert_eq!(decode(&bytes), Ok(e));
        // One whole-file leaf per file: at most 100 bytes each.
        assert!(bytes.len() <= 100 * 1000, "{} bytes", bytes.len());
        assert_eq!(decode(&encode(&Entries::new())), Ok(Entries::new()));
    }

    #[test]
    fn every_truncation_and_bit_flip_is_refused() {
        let bytes = encode(&sample(3));
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(matches!(decode(&b), Err(Refused::Damaged(_))), "byte {i} bit {bit}");
            }
        }
    }

    #[test]
    fn another_version_or_format_is_foreign() {
        let mut bytes = encode(&sample(1));
        bytes.truncate(bytes.len() - 32);
        let at = MAGIC.len();
        bytes[at] = 2;
        let sum = Sha256::digest(&bytes);
        bytes.extend_from_slice(&sum);
        assert!(matches!(decode(&bytes), Err(Refused::Foreign(_))));
    }

    #[test]
    fn counts_the_bytes_cannot_hold_are_refused_before_allocating() {
        let mut body = MAGIC.to_vec();
        body.extend_from_slice(&FORMAT.to_le_bytes());
        let v = env!("CARGO_PKG_VERSION").as_bytes();
        body.push(v.len() as u8);
        body.extend_from_slice(v);
        varint(&mut body, u64::MAX >> 1);
        let sum = Sha256::digest(&body);
        body.extend_from_slice(&sum);
        assert_eq!(decode(&body), Err(Refused::Damaged("a count larger than the file")));
    }
}
