//! A registry blob as an object read by ranges ([`RangeSource`]), its
//! bytes checked against its OCI digest; and an artifact's files as a
//! place ([`RangeDir`]) where a ModelPack directory or a GGUF shard set is
//! opened by name.
//!
//! The digest check (docs/adr/0046): every piece the label's reads bring
//! is fed to the blob's SHA-256 in file order (`window.rs`): at once when
//! it continues the bytes hashed, else from a bounded window once the
//! bytes before it are hashed; the label's jobs come in file order
//! ([`RangeSource::wants_file_order`]), so a weights blob is read once for
//! both in the common case. What could not be kept is read again, by the
//! thread that ends the job at the frontier or after hashing
//! ([`RangeSource::check_unchanged`], which the core asks of every source
//! before it prints a label): a blob whose bytes are not its digest's is
//! an error, never a label.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::client::Client;
use super::error::OciErrorKind;
use super::manifest::Descriptor;
use super::stream::RangeStream;
use crate::source::{RangeDir, RangeReader, RangeSource, ReadMode, Source};
use crate::{Error, Result};

mod window;
use window::{Fetch, InOrder, WINDOW};

/// The digest's own reads are handed on in pieces of this size.
const FETCH_PIECE: usize = 1 << 20;

/// One blob of a manifest, read by ranges.
pub struct Blob {
    client: Arc<Client>,
    descriptor: Descriptor,
    version: String,
    name: String,
    place: Arc<dyn RangeDir>,
    order: InOrder,
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // With the bytes its digest read itself so far (read twice).
        let again = self.order.fetched();
        f.debug_struct("Blob").field("name", &self.name).field("read_again", &again).finish_non_exhaustive()
    }
}

impl Blob {
    /// The blob `d` of the client's repository, its files' place `place`.
    pub fn new(client: Arc<Client>, d: &Descriptor, place: Arc<dyn RangeDir>) -> Blob {
        let name = format!("{} blob {}", client.reference(), d.digest());
        Blob { client, descriptor: d.clone(), version: d.digest(), name, place, order: InOrder::new(d.size, WINDOW) }
    }

    /// The blob as a [`Source`] shown as `shown`.
    pub fn source(self, shown: &Path) -> Source {
        Source::from_range(shown, Arc::new(self))
    }

    fn mismatch(&self, expected: String, found: String) -> Error {
        OciErrorKind::DigestMismatch { what: self.name.clone(), expected, found }.into()
    }
}

impl Fetch for Blob {
    fn fetch(&self, start: u64, len: u64, sink: &mut dyn FnMut(&[u8]) -> Result<bool>) -> Result<()> {
        let mut stream = self.client.range_stream(&self.descriptor, start, len)?;
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX).min(FETCH_PIECE)];
        let mut left = len;
        while left > 0 {
            let n = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            let Some(piece) = buf.get_mut(..n) else { return Err(Error::internal("a piece past its buffer")) };
            stream.read_exact(piece)?;
            if !sink(piece)? {
                break;
            }
            left = left.saturating_sub(n as u64);
        }
        Ok(())
    }
}

/// Reads a range, handing each piece to the blob's in-order digest too;
/// the digest knows the range is being read until it ends or is dropped.
struct Reader<'a> {
    blob: &'a Blob,
    at: u64,
    end: u64,
    ticket: Option<u64>,
    stream: RangeStream<'a>,
}

impl RangeReader for Reader<'_> {
    fn read_next(&mut self, buf: &mut [u8]) -> Result<()> {
        self.stream.read_exact(buf)?;
        self.blob.order.saw(self.ticket, self.at, buf, self.blob)?;
        self.at = self.at.saturating_add(buf.len() as u64);
        if self.at >= self.end
            && let Some(ticket) = self.ticket.take()
        {
            // Read to its end: the bytes dropped from the window that
            // nobody else reads are read now, by this thread.
            self.blob.order.close(ticket, Some(self.blob))?;
        }
        Ok(())
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        // Given up (an error, a cancel): its bytes are left to the end.
        if let Some(ticket) = self.ticket.take() {
            let _ = self.blob.order.close(ticket, None);
        }
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
        self.order.saw(None, offset, buf, self)
    }

    fn read_range(&self, start: u64, len: u64) -> Result<Box<dyn RangeReader + '_>> {
        let stream = self.client.range_stream(&self.descriptor, start, len)?;
        let end = start.saturating_add(len);
        let ticket = if len > 0 { Some(self.order.open(start, end)?) } else { None };
        Ok(Box::new(Reader { blob: self, at: start, end, ticket, stream }))
    }

    /// The blob's digest finished: the bytes not yet hashed in order read
    /// now, front to back between the pieces still held. A
    /// content-addressed blob cannot change; bytes that are not its
    /// digest's are refused here.
    fn check_unchanged(&self) -> Result<()> {
        let found = self.order.finish(self)?;
        if found == self.descriptor.hex {
            Ok(())
        } else {
            Err(self.mismatch(self.descriptor.digest(), format!("sha256:{found}")))
        }
    }

    fn beside(&self) -> Result<Arc<dyn RangeDir>> {
        Ok(Arc::clone(&self.place))
    }

    /// Its jobs in file order, so its digest takes the label's pieces.
    fn wants_file_order(&self) -> bool {
        true
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
