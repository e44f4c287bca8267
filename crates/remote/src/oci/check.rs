//! A blob's bytes checked against its descriptor as they arrive in order
//! ([`BlobCheck`]).

use sha2::{Digest as _, Sha256};

use super::error::OciErrorKind;
use super::manifest::Descriptor;
use crate::{Error, Result};

/// A blob's bytes checked against its descriptor as they stream in order:
/// its SHA-256 and its size.
pub struct BlobCheck {
    hasher: Sha256,
    seen: u64,
    size: u64,
    hex: String,
    name: String,
}

impl BlobCheck {
    /// A check of the blob `d`, named `name` in errors.
    pub fn new(d: &Descriptor, name: &str) -> BlobCheck {
        BlobCheck { hasher: Sha256::new(), seen: 0, size: d.size, hex: d.hex.clone(), name: name.to_string() }
    }

    /// The next bytes in order; more than the declared size is an error at
    /// once.
    pub fn update(&mut self, piece: &[u8]) -> Result<()> {
        self.seen = self.seen.saturating_add(piece.len() as u64);
        if self.seen > self.size {
            return Err(self.mismatch(format!("{} bytes", self.size), format!("more than {} bytes", self.size)));
        }
        self.hasher.update(piece);
        Ok(())
    }

    /// `Ok` when the bytes seen are the declared size and digest.
    pub fn finish(self) -> Result<()> {
        if self.seen != self.size {
            return Err(self.mismatch(format!("{} bytes", self.size), format!("{} bytes", self.seen)));
        }
        let found = hex::encode(self.hasher.clone().finalize());
        if found != self.hex {
            return Err(self.mismatch(format!("sha256:{}", self.hex), format!("sha256:{found}")));
        }
        Ok(())
    }

    fn mismatch(&self, expected: String, found: String) -> Error {
        OciErrorKind::DigestMismatch { what: self.name.clone(), expected, found }.into()
    }
}
