//! How stored bytes become hashed bytes ([`Conversion`], [`Swap`]), and
//! the digest they go into ([`Algorithm`], [`Hasher`]).

use sha2::{Digest as _, Sha256};

use super::Sha256Digest;
use crate::error::{Error, ErrorKind, Result};

/// How a job's stored bytes become the bytes that are hashed: a rule
/// applied to each block of `block` bytes (reversing words or halves for
/// big-endian data; nothing for little-endian data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conversion {
    /// Bytes per block: pieces are cut at whole blocks.
    pub block: u64,
    /// What to do to each block.
    pub swap: Swap,
    /// The name of the block's type, for the one error a conversion has.
    pub type_name: &'static str,
    /// The digest the bytes go into.
    pub digest: Algorithm,
}

/// The digest a job computes. Each fits the 32 bytes of a
/// [`Sha256Digest`]; a shorter one is zero-padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// SHA-256 of the bytes (every label's data digest).
    Sha256,
    /// Git's blob object id: SHA-1 of `"blob <len>\0"` and then the `len`
    /// bytes, in the first 20 bytes (a Hugging Face cache names a blob
    /// that is not an LFS file so).
    GitBlobSha1 {
        /// The number of bytes hashed, which the header states.
        len: u64,
    },
}

/// A digest being computed, of either [`Algorithm`].
pub enum Hasher {
    /// SHA-256.
    Sha256(Sha256),
    /// Git's blob SHA-1 (its header already fed).
    Sha1(sha1::Sha1),
}

impl Hasher {
    /// A new digest of `algorithm`, its header (if any) already fed.
    pub fn new(algorithm: Algorithm) -> Hasher {
        match algorithm {
            Algorithm::Sha256 => Hasher::Sha256(Sha256::new()),
            Algorithm::GitBlobSha1 { len } => {
                let mut h = sha1::Sha1::new();
                h.update(format!("blob {len}\0").as_bytes());
                Hasher::Sha1(h)
            }
        }
    }

    /// Feeds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Sha256(h) => h.update(bytes),
            Hasher::Sha1(h) => h.update(bytes),
        }
    }

    /// The digest, a SHA-1's 20 bytes followed by zeros.
    pub fn finalize(self) -> Sha256Digest {
        match self {
            Hasher::Sha256(h) => h.finalize().into(),
            Hasher::Sha1(h) => {
                let mut out = [0u8; 32];
                for (o, b) in out.iter_mut().zip(h.finalize()) {
                    *o = b;
                }
                out
            }
        }
    }
}

/// What a [`Conversion`] does to each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swap {
    /// No conversion rule is defined (a format rejects such data before it
    /// makes a job of it).
    Unsupported,
    /// The bytes are hashed as stored.
    None,
    /// Every `n`-byte word is reversed (plain integer and float types).
    Words(usize),
    /// Within each block, the 2-byte halves at these block offsets are
    /// reversed (the fp16 scales of quantized blocks); the rest is bytes.
    Halves(&'static [usize]),
    /// Bytes hashed as stored, each checked to be 0 or 1 (a bool tensor:
    /// any other byte is an error, never a label).
    Bool,
}

impl Conversion {
    /// Data hashed as stored, cut at whole `block`-byte blocks.
    pub fn none(block: u64, type_name: &'static str) -> Conversion {
        Conversion { block, swap: Swap::None, type_name, digest: Algorithm::Sha256 }
    }

    /// Bytes hashed as stored into Git's blob id of `len` bytes.
    pub fn git_blob(len: u64) -> Conversion {
        Conversion { digest: Algorithm::GitBlobSha1 { len }, ..Conversion::none(1, "blob") }
    }

    /// Converts whole blocks in place.
    ///
    /// A buffer that is not a whole number of blocks is an error, never a
    /// partial conversion: a block cut in two would have its halves swapped
    /// at the wrong offsets, or its tail left as stored. No caller hands one
    /// over (see [`PieceSizes`]); if one did, the label is refused rather
    /// than wrong.
    ///
    /// [`PieceSizes`]: super::PieceSizes
    pub fn apply(&self, buf: &mut [u8]) -> Result<()> {
        let block = usize::try_from(self.block).unwrap_or(usize::MAX);
        if block == 0 || buf.len().checked_rem(block) != Some(0) {
            let kind =
                ErrorKind::PartialBlock { len: buf.len() as u64, type_name: self.type_name, type_size: self.block };
            return Err(Error::new(kind));
        }
        match self.swap {
            Swap::Unsupported | Swap::None => {}
            // Constant word sizes let the compiler vectorize the reversal
            // (a runtime size cost big-endian F32 models 7 % at -j1).
            Swap::Words(2) => reverse_words::<2>(buf),
            Swap::Words(4) => reverse_words::<4>(buf),
            Swap::Words(8) => reverse_words::<8>(buf),
            Swap::Words(n) => {
                for word in buf.chunks_exact_mut(n) {
                    word.reverse();
                }
            }
            Swap::Bool => {
                if let Some(i) = buf.iter().position(|&b| b > 1) {
                    let kind = ErrorKind::BoolByte(buf.get(i).copied().unwrap_or(0));
                    return Err(Error::new(kind));
                }
            }
            Swap::Halves(offsets) => {
                for b in buf.chunks_exact_mut(block) {
                    for &o in offsets {
                        if let Some(half) = b.get_mut(o..o.saturating_add(2)) {
                            half.reverse();
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The conversion's key in the verified-leaf cache: the first 8 bytes
    /// of the SHA-256 of everything that decides the digest (block, rule,
    /// algorithm; the type's name, for errors only, is left out).
    pub fn cache_tag(&self) -> u64 {
        let mut h = Sha256::new();
        h.update(b"conversion v1\0");
        h.update(self.block.to_le_bytes());
        match self.swap {
            Swap::Unsupported => h.update([0u8]),
            Swap::None => h.update([1u8]),
            Swap::Words(n) => {
                h.update([2u8]);
                h.update((n as u64).to_le_bytes());
            }
            Swap::Halves(offsets) => {
                h.update([3u8]);
                h.update((offsets.len() as u64).to_le_bytes());
                for &o in offsets {
                    h.update((o as u64).to_le_bytes());
                }
            }
            Swap::Bool => h.update([4u8]),
        }
        match self.digest {
            Algorithm::Sha256 => h.update([0u8]),
            Algorithm::GitBlobSha1 { len } => {
                h.update([1u8]);
                h.update(len.to_le_bytes());
            }
        }
        let d: [u8; 32] = h.finalize().into();
        u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
    }

    /// True when bytes are hashed as stored (no copy needed).
    pub(super) fn is_identity(&self) -> bool {
        matches!(self.swap, Swap::None | Swap::Unsupported)
    }
}

/// Reverses every `N`-byte word of `buf` (a whole number of words).
fn reverse_words<const N: usize>(buf: &mut [u8]) {
    for word in buf.chunks_exact_mut(N) {
        word.reverse();
    }
}

#[cfg(test)]
// Tests index their own fixtures, never file bytes.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_block_is_an_error_for_every_rule() {
        // Whatever the rule (none, words, halves), a buffer that is not
        // whole blocks is refused and left untouched, never half converted.
        let rules = [(4, Swap::Words(4)), (34, Swap::Halves(&[0])), (144, Swap::Halves(&[0, 2])), (17, Swap::None)];
        for (block, swap) in rules {
            let c = Conversion { block, swap, type_name: "T", digest: Algorithm::Sha256 };
            let size = block as usize;
            for len in [1, size - 1, size + 1, 2 * size + size / 2] {
                let mut buf: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let before = buf.clone();
                let e = c.apply(&mut buf).unwrap_err();
                assert!(
                    matches!(e.kind(), ErrorKind::PartialBlock { len: l, .. } if *l == len as u64),
                    "{swap:?}: {e}"
                );
                assert_eq!(buf, before, "{swap:?}");
            }
            c.apply(&mut vec![0u8; 3 * size]).unwrap();
            c.apply(&mut []).unwrap();
        }
    }

    #[test]
    fn a_git_blob_id_is_sha1_of_its_header_and_bytes() {
        // `git hash-object` of an empty file and of "hello\n".
        let id = |bytes: &[u8]| {
            let mut h = Hasher::new(Algorithm::GitBlobSha1 { len: bytes.len() as u64 });
            h.update(bytes);
            h.finalize()
        };
        assert_eq!(hex::encode(&id(b"")[..20]), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(hex::encode(id(b"hello\n")), format!("ce013625030ba8dba906f756967f9e9ca394464a{}", "0".repeat(24)));
        let mut h = Hasher::new(Algorithm::Sha256);
        h.update(b"abc");
        assert_eq!(h.finalize(), <[u8; 32]>::from(Sha256::digest(b"abc")));
    }
}
