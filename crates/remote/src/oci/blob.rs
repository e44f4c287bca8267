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
//!
//! A file of an uncompressed tar layer is a slice of its blob (`tar.rs`):
//! each open of it reads the blob's bytes before its data again, front to
//! back through the digest's frontier, and parses them, so the headers
//! that place the file are bytes its blob's digest checks; its data is
//! read at its offset; the rest of the blob (padding, other files) is read
//! by the digest itself.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::client::Client;
use super::error::OciErrorKind;
use super::layout::{self, check_path};
use super::manifest::Descriptor;
use super::stream::RangeStream;
use super::tar::{self as tarfile, Forward, Ranged, TarFile};
use crate::source::{RangeDir, RangeReader, RangeSource, ReadMode, Source};
use crate::{Error, Result};

mod window;
use window::{Fetch, InOrder, WINDOW};

/// The digest's own reads are handed on in pieces of this size.
const FETCH_PIECE: usize = 1 << 20;

/// One blob of a manifest, read by ranges: the whole blob, or one file's
/// slice of it (a tar layer's file); its digest always the whole blob's.
pub struct Blob {
    client: Arc<Client>,
    descriptor: Descriptor,
    /// The slice read as the object: its first byte in the blob, its length.
    at: u64,
    len: u64,
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
        let order = InOrder::new(d.size, WINDOW);
        Blob { client, descriptor: d.clone(), at: 0, len: d.size, version: d.digest(), name, place, order }
    }

    /// The file `f` of this tar blob as the object read: the blob's bytes
    /// before its data read again in order (through the digest's
    /// frontier, so they are bytes the digest checks) and parsed; refused
    /// unless they place the same file at the same offset.
    pub fn tar_file(mut self, f: &TarFile) -> Result<Blob> {
        let size = self.descriptor.size;
        let mut failed: Option<Error> = None;
        let seen = {
            let mut reader = self.read_range(0, f.offset)?;
            let next = |buf: &mut [u8]| {
                reader.read_next(buf).map_err(|e| {
                    failed = Some(e);
                    io::Error::other("a read failed")
                })
            };
            tarfile::files(Forward::new(f.offset, next), size, Some(f.offset))
        };
        if let Some(e) = failed {
            return Err(e);
        }
        let seen = seen.map_err(|why| self.refused(why))?;
        if seen.last() != Some(f) {
            return Err(self.refused(format!(
                "the tar's headers before {:?}, read again, do not place it where they did (the registry's bytes changed between reads)",
                f.path
            )));
        }
        self.at = f.offset;
        self.len = f.len;
        Ok(self)
    }

    fn refused(&self, why: String) -> Error {
        OciErrorKind::Manifest { what: self.name.clone(), why }.into()
    }

    /// The blob's offset of `len` bytes at `offset` in the slice.
    fn within(&self, offset: u64, len: u64) -> Result<u64> {
        offset.checked_add(len).filter(|&e| e <= self.len).and_then(|_| self.at.checked_add(offset)).ok_or_else(|| {
            self.refused(format!("a read of {len} bytes at {offset} past the file's {} bytes", self.len))
        })
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
        self.len
    }

    fn version(&self) -> Option<&str> {
        Some(&self.version)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let offset = self.within(offset, buf.len() as u64)?;
        let bytes = self.client.blob_range(&self.descriptor, offset, buf.len() as u64)?;
        let Some(dst) = buf.get_mut(..bytes.len()).filter(|d| d.len() == bytes.len()) else {
            return Err(Error::internal("a range read of another length than asked"));
        };
        dst.copy_from_slice(&bytes);
        self.order.saw(None, offset, buf, self)
    }

    fn read_range(&self, start: u64, len: u64) -> Result<Box<dyn RangeReader + '_>> {
        let start = self.within(start, len)?;
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

/// An artifact's files by their names (a ModelPack's annotated paths or
/// its tar layers' paths, a Docker model's shard names): the place its
/// blobs are opened in. A file is a whole blob, or a slice of a tar blob.
pub struct Files {
    client: Arc<Client>,
    shown: PathBuf,
    files: Vec<(String, Descriptor, Option<TarFile>)>,
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
        let files = files.into_iter().map(|(n, d)| (n, d, None)).collect();
        Arc::new_cyclic(|me| Files { client, shown, files, me: me.clone() })
    }

    /// A ModelPack artifact's place: each `.raw` layer the file its
    /// annotation names, each uncompressed `.tar` layer's regular files
    /// by their paths in the tar (its headers read by ranges, held to its
    /// annotation: `layout::check_tar_paths`); names unique across the
    /// artifact.
    pub fn modelpack(client: Arc<Client>, shown: PathBuf, layers: Vec<(String, Descriptor)>) -> Result<Arc<Files>> {
        let mut files = Vec::new();
        for (annotated, d) in layers {
            if !layout::is_tar(&d.media_type) {
                files.push((annotated, d, None));
                continue;
            }
            let name = format!("{} blob {}", client.reference(), d.digest());
            let refused = |why: String| Error::from(OciErrorKind::Manifest { what: name.clone(), why });
            let mut failed: Option<Error> = None;
            let found = tarfile::files(
                Ranged::new(d.size, |offset, buf: &mut [u8]| {
                    let bytes = client.blob_range(&d, offset, buf.len() as u64).map_err(|e| {
                        failed = Some(e);
                        io::Error::other("a read failed")
                    })?;
                    let dst = buf.get_mut(..).filter(|b| b.len() == bytes.len());
                    dst.ok_or_else(|| io::Error::other("a range of another length than asked"))?
                        .copy_from_slice(&bytes);
                    Ok(())
                }),
                d.size,
                None,
            );
            if let Some(e) = failed {
                return Err(e);
            }
            let found = found.map_err(&refused)?;
            layout::check_tar_paths(&annotated, found.iter().map(|f| f.path.as_str())).map_err(&refused)?;
            for f in found {
                check_path(&f.path).map_err(|why| refused(format!("the tar's path {:?} {why}", f.path)))?;
                files.push((f.path.clone(), d.clone(), Some(f)));
            }
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = files.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
            let name = w.first().map(|(n, _, _)| n.as_str()).unwrap_or("");
            let why = format!("two layers (or tar entries) name the file {name:?}");
            return Err(Error::from(OciErrorKind::Manifest { what: shown.display().to_string(), why }));
        }
        Ok(Arc::new_cyclic(|me| Files { client, shown, files, me: me.clone() }))
    }

    fn find(&self, name: &str) -> Option<(&Descriptor, Option<&TarFile>)> {
        self.files.iter().find(|(n, _, _)| n == name).map(|(_, d, t)| (d, t.as_ref()))
    }

    /// Opens the file named `name` (its path in the artifact).
    pub fn open_name(&self, name: &str) -> Result<Source> {
        let shown = self.shown.join(name);
        let (d, tar) = self.find(name).ok_or_else(|| {
            Error::from(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file in the artifact"))
                .in_file(&shown)
        })?;
        let me: Arc<dyn RangeDir> =
            self.me.upgrade().ok_or_else(|| Error::internal("an artifact's place was dropped"))?;
        let blob = Blob::new(Arc::clone(&self.client), d, me);
        let blob = match tar {
            Some(f) => blob.tar_file(f).map_err(|e| e.in_file(&shown))?,
            None => blob,
        };
        Ok(blob.source(&shown))
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
            self.files.iter().map(|(n, _, _)| OsString::from(n.split('/').next().unwrap_or(n))).collect();
        top.dedup();
        Ok(top)
    }

    fn walk(&self) -> Result<Vec<Vec<u8>>> {
        Ok(self.files.iter().map(|(n, _, _)| n.as_bytes().to_vec()).collect())
    }
}

#[cfg(test)]
mod tests;
