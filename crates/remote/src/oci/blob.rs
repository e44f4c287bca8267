//! A registry blob as an object read by ranges ([`RangeSource`]), its
//! bytes checked against its OCI digest; and an artifact's files as a
//! place ([`RangeDir`]) where a ModelPack directory or a GGUF shard set is
//! opened by name.
//!
//! The digest check (docs/adr/0046): every piece the label's reads bring
//! is hashed again, in file order, as far as the pieces arrive in file
//! order (a whole-blob job, metadata, a front-to-back pipeline; a gap of
//! at most 64 KiB before a piece is read to close it): those bytes are
//! read once for both. After hashing ([`RangeSource::check_unchanged`],
//! which the core asks of every source before it prints a label) the rest
//! of the blob, from the first byte not yet hashed in order, is read
//! front to back and the digest finished: a blob whose bytes are not its
//! digest's is an error, never a label.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest as _, Sha256};

use super::client::Client;
use super::error::OciErrorKind;
use super::manifest::Descriptor;
use super::stream::RangeStream;
use crate::source::{RangeDir, RangeReader, RangeSource, ReadMode, Source};
use crate::{Error, Result};

/// The largest gap before a piece that is read to hash the piece in
/// order (the alignment padding of GGUF and safetensors is far smaller).
const SMALL_GAP: u64 = 64 << 10;

/// Pieces hashed in file order, and the verdict once finished.
#[derive(Debug)]
struct InOrder {
    /// The first byte not yet hashed.
    next: u64,
    hasher: Sha256,
    /// The verdict, once the whole blob was hashed: `Ok` or the mismatch's
    /// words.
    verdict: Option<std::result::Result<(), String>>,
}

impl InOrder {
    /// Hashes `piece`, found at `offset`, as far as it continues the bytes
    /// hashed so far; a gap of at most [`SMALL_GAP`] before it is read
    /// with `fill(offset, len)` first.
    fn offer(&mut self, offset: u64, piece: &[u8], fill: &mut dyn FnMut(u64, u64) -> Result<Vec<u8>>) -> Result<()> {
        let end = offset.saturating_add(piece.len() as u64);
        // A small gap (padding between tensors, the end of the metadata
        // before the first tensor) is read to keep the digest going.
        let gap = offset.saturating_sub(self.next);
        if gap > 0 && gap <= SMALL_GAP && !piece.is_empty() {
            let bytes = fill(self.next, gap)?;
            if bytes.len() as u64 != gap {
                return Err(Error::internal("a gap read of another length than asked"));
            }
            self.hasher.update(&bytes);
            self.next = offset;
        }
        if offset <= self.next && end > self.next {
            let skip = usize::try_from(self.next.saturating_sub(offset)).unwrap_or(usize::MAX);
            if let Some(rest) = piece.get(skip..) {
                self.hasher.update(rest);
                self.next = end;
            }
        }
        Ok(())
    }
}

/// One blob of a manifest, read by ranges.
pub struct Blob {
    client: Arc<Client>,
    descriptor: Descriptor,
    version: String,
    name: String,
    place: Arc<dyn RangeDir>,
    order: Mutex<InOrder>,
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blob").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Blob {
    /// The blob `d` of the client's repository, its files' place `place`.
    pub fn new(client: Arc<Client>, d: &Descriptor, place: Arc<dyn RangeDir>) -> Blob {
        let name = format!("{} blob {}", client.reference(), d.digest());
        Blob {
            client,
            descriptor: d.clone(),
            version: d.digest(),
            name,
            place,
            order: Mutex::new(InOrder { next: 0, hasher: Sha256::new(), verdict: None }),
        }
    }

    /// The blob as a [`Source`] shown as `shown`.
    pub fn source(self, shown: &Path) -> Source {
        Source::from_range(shown, Arc::new(self))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, InOrder>> {
        self.order.lock().map_err(|_| Error::internal("an OCI blob's digest lock was poisoned"))
    }

    /// Hashes `piece`, found at `offset`, as far as it continues the bytes
    /// hashed in order.
    fn saw(&self, offset: u64, piece: &[u8]) -> Result<()> {
        let mut o = self.lock()?;
        o.offer(offset, piece, &mut |at, len| self.client.blob_range(&self.descriptor, at, len))
    }

    fn mismatch(&self, expected: String, found: String) -> Error {
        OciErrorKind::DigestMismatch { what: self.name.clone(), expected, found }.into()
    }
}

/// Reads a range, handing each piece to the blob's in-order digest too.
struct Reader<'a> {
    blob: &'a Blob,
    at: u64,
    stream: RangeStream<'a>,
}

impl RangeReader for Reader<'_> {
    fn read_next(&mut self, buf: &mut [u8]) -> Result<()> {
        self.stream.read_exact(buf)?;
        self.blob.saw(self.at, buf)?;
        self.at = self.at.saturating_add(buf.len() as u64);
        Ok(())
    }
}

impl RangeSource for Blob {
    fn len(&self) -> u64 {
        self.descriptor.size
    }

    fn version(&self) -> Option<&str> {
        Some(&self.version)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let bytes = self.client.blob_range(&self.descriptor, offset, buf.len() as u64)?;
        let Some(dst) = buf.get_mut(..bytes.len()).filter(|d| d.len() == bytes.len()) else {
            return Err(Error::internal("a range read of another length than asked"));
        };
        dst.copy_from_slice(&bytes);
        self.saw(offset, buf)
    }

    fn read_range(&self, start: u64, len: u64) -> Result<Box<dyn RangeReader + '_>> {
        let stream = self.client.range_stream(&self.descriptor, start, len)?;
        Ok(Box::new(Reader { blob: self, at: start, stream }))
    }

    /// The blob's digest finished: the bytes not yet hashed in order read
    /// now, front to back. A content-addressed blob cannot change; bytes
    /// that are not its digest's are refused here.
    fn check_unchanged(&self) -> Result<()> {
        let mut o = self.lock()?;
        if o.verdict.is_none() {
            let size = self.descriptor.size;
            if o.next < size {
                let mut stream = self.client.range_stream(&self.descriptor, o.next, size.saturating_sub(o.next))?;
                let mut buf = vec![0u8; 1 << 20];
                while o.next < size {
                    let n = usize::try_from(size.saturating_sub(o.next)).unwrap_or(usize::MAX).min(buf.len());
                    let Some(piece) = buf.get_mut(..n) else { return Err(Error::internal("a piece past its buffer")) };
                    stream.read_exact(piece)?;
                    o.hasher.update(&*piece);
                    o.next = o.next.saturating_add(n as u64);
                }
            }
            let found = hex::encode(o.hasher.clone().finalize());
            o.verdict = Some(if found == self.descriptor.hex { Ok(()) } else { Err(format!("sha256:{found}")) });
        }
        match &o.verdict {
            Some(Ok(())) => Ok(()),
            Some(Err(found)) => Err(self.mismatch(self.descriptor.digest(), found.clone())),
            None => Err(Error::internal("an OCI blob's digest was not finished")),
        }
    }

    fn beside(&self) -> Result<Arc<dyn RangeDir>> {
        Ok(Arc::clone(&self.place))
    }
}

/// An artifact's files by their names (a ModelPack's annotated paths, a
/// Docker model's shard names): the place its blobs are opened in.
pub struct Files {
    client: Arc<Client>,
    shown: PathBuf,
    files: Vec<(String, Descriptor)>,
    me: std::sync::Weak<Files>,
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files").field("shown", &self.shown).field("files", &self.files.len()).finish()
    }
}

impl Files {
    /// The place of `files` (sorted, unique names), shown as `shown`.
    pub fn new(client: Arc<Client>, shown: PathBuf, files: Vec<(String, Descriptor)>) -> Arc<Files> {
        Arc::new_cyclic(|me| Files { client, shown, files, me: me.clone() })
    }

    fn find(&self, name: &str) -> Option<&Descriptor> {
        self.files.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    /// Opens the file named `name` (its path in the artifact).
    pub fn open_name(&self, name: &str) -> Result<Source> {
        let shown = self.shown.join(name);
        let d = self.find(name).ok_or_else(|| {
            Error::from(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file in the artifact"))
                .in_file(&shown)
        })?;
        let me: Arc<dyn RangeDir> =
            self.me.upgrade().ok_or_else(|| Error::internal("an artifact's place was dropped"))?;
        Ok(Blob::new(Arc::clone(&self.client), d, me).source(&shown))
    }
}

impl RangeDir for Files {
    fn shown(&self) -> &Path {
        &self.shown
    }

    fn open(&self, name: &OsStr, _mode: ReadMode) -> Result<Source> {
        self.open_name(&name.to_string_lossy())
    }

    fn open_below(&self, rel: &Path, _mode: ReadMode) -> Result<Source> {
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        self.open_name(&parts.join("/"))
    }

    fn holds_file(&self, name: &OsStr) -> bool {
        self.find(&name.to_string_lossy()).is_some()
    }

    fn names(&self) -> Result<Vec<OsString>> {
        let mut top: Vec<OsString> =
            self.files.iter().map(|(n, _)| OsString::from(n.split('/').next().unwrap_or(n))).collect();
        top.dedup();
        Ok(top)
    }

    fn walk(&self) -> Result<Vec<Vec<u8>>> {
        Ok(self.files.iter().map(|(n, _)| n.as_bytes().to_vec()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> InOrder {
        InOrder { next: 0, hasher: Sha256::new(), verdict: None }
    }

    #[test]
    fn pieces_in_order_overlapping_and_after_small_gaps_make_the_digest() {
        let blob: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut fills = Vec::new();
        let mut o = fresh();
        let mut fill = |at: u64, len: u64| {
            fills.push((at, len));
            Ok(blob[at as usize..(at + len) as usize].to_vec())
        };
        o.offer(0, &blob[..100], &mut fill).unwrap(); // metadata
        o.offer(0, &blob[..150], &mut fill).unwrap(); // read again, longer
        o.offer(100_000, &blob[100_000..100_010], &mut fill).unwrap(); // far ahead: left for the end
        o.offer(160, &blob[160..100_000], &mut fill).unwrap(); // after a 10-byte gap
        o.offer(100_000, &blob[100_000..], &mut fill).unwrap();
        assert_eq!(o.next, blob.len() as u64);
        assert_eq!(hex::encode(o.hasher.finalize()), hex::encode(Sha256::digest(&blob)));
        assert_eq!(fills, [(150, 10)], "only the small gap was read");
    }

    #[test]
    fn a_large_gap_is_left_for_the_end() {
        let mut o = fresh();
        let mut fill = |_: u64, _: u64| -> Result<Vec<u8>> { panic!("no gap read") };
        o.offer(0, b"abc", &mut fill).unwrap();
        o.offer(SMALL_GAP + 4, b"z", &mut fill).unwrap();
        assert_eq!(o.next, 3);
    }
}
