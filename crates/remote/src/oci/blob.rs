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
//! by the digest itself (and after a tar's last file, parsed from those
//! reads once the digest is found right: nothing hides after it).

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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

/// The bytes after a tar's last regular file (padding, end blocks,
/// directories), at most: they are parsed from the digest's own reads.
pub const MAX_TAIL: u64 = 1 << 20;

/// The bytes after a tar's last regular file, as the digest read them.
#[derive(Debug)]
struct Tail {
    /// Where they start in the blob (the file's data's end).
    from: u64,
    bytes: Vec<u8>,
    /// Bytes past [`MAX_TAIL`], or not in order: refused.
    broken: bool,
}

impl Tail {
    /// Takes the part of `piece` (at `at`) in the tail, in order.
    fn tap(&mut self, at: u64, piece: &[u8]) {
        let have = self.from.saturating_add(self.bytes.len() as u64);
        let end = at.saturating_add(piece.len() as u64);
        if end <= have || self.broken {
            return;
        }
        if at > have {
            self.broken = true;
            return;
        }
        let skip = usize::try_from(have.saturating_sub(at)).unwrap_or(usize::MAX);
        let new = piece.get(skip..).unwrap_or(&[]);
        if (self.bytes.len() as u64).saturating_add(new.len() as u64) > MAX_TAIL {
            self.broken = true;
            return;
        }
        self.bytes.extend_from_slice(new);
    }
}

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
    /// A tar's last regular file: the bytes after it, parsed once its
    /// digest has checked them.
    tail: Option<Mutex<Tail>>,
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
        Blob { client, descriptor: d.clone(), at: 0, len: d.size, version: d.digest(), name, place, order, tail: None }
    }

    /// The file `f` of this tar blob (whose regular files are `all`, as
    /// first parsed) as the object read: the blob's bytes before its data
    /// read again in order (through the digest's frontier, so they are
    /// bytes the digest checks) and parsed; refused unless they hold the
    /// same files up to `f`, placed where they were. For the tar's last
    /// file the bytes after it are parsed too, from the digest's own
    /// reads, at [`RangeSource::check_unchanged`].
    pub fn tar_file(mut self, f: &TarFile, all: &[TarFile]) -> Result<Blob> {
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
        let before: Vec<&TarFile> = all.iter().take_while(|e| e.offset <= f.offset).collect();
        if seen.last() != Some(f) || !seen.iter().eq(before.iter().copied()) {
            return Err(self.refused(format!(
                "the tar's headers before {:?}, read again, do not place it where they did (the registry's bytes changed between reads)",
                f.path
            )));
        }
        self.at = f.offset;
        self.len = f.len;
        if all.last() == Some(f) {
            let from = f.offset.saturating_add(f.len);
            if size.saturating_sub(from) > MAX_TAIL {
                return Err(self.refused(format!(
                    "more than {MAX_TAIL} bytes after the tar's last file {:?} (at byte offset {from})",
                    f.path
                )));
            }
            self.tail = Some(Mutex::new(Tail { from, bytes: Vec::new(), broken: false }));
        }
        Ok(self)
    }

    /// The bytes after a tar's last file, as the digest read them (so
    /// checked by it): padding, then nothing but directories and the end.
    fn check_tail(&self) -> Result<()> {
        let Some(tail) = &self.tail else { return Ok(()) };
        let tail = tail.lock().map_err(|_| Error::internal("a tar's tail lock was poisoned"))?;
        let want = self.descriptor.size.saturating_sub(tail.from);
        if tail.broken || tail.bytes.len() as u64 != want {
            return Err(Error::internal("a tar's tail not read in order by its digest"));
        }
        // Its next header is at the next block.
        let skip = tail.from.next_multiple_of(512).saturating_sub(tail.from);
        let rest = tail.bytes.get(usize::try_from(skip).unwrap_or(usize::MAX)..).unwrap_or(&[]);
        let found = tarfile::files(io::Cursor::new(rest), rest.len() as u64, None)
            .map_err(|why| self.refused(format!("after the tar's last file (byte offset {}): {why}", tail.from)))?;
        match found.first() {
            None => Ok(()),
            Some(f) => Err(self.refused(format!(
                "the tar holds {:?} after its last file (byte offset {}), which its first read did not show (the registry's bytes changed between reads)",
                f.path, tail.from
            ))),
        }
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
            if let Some(tail) = &self.tail {
                let at = start.saturating_add(len.saturating_sub(left));
                tail.lock().map_err(|_| Error::internal("a tar's tail lock was poisoned"))?.tap(at, piece);
            }
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
            self.check_tail()
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

/// A tar layer's file, and every regular file of its tar (as first parsed).
type InTar = (TarFile, Arc<[TarFile]>);

/// An artifact's files by their names (a ModelPack's annotated paths or
/// its tar layers' paths, a Docker model's shard names): the place its
/// blobs are opened in. A file is a whole blob, or a slice of a tar blob.
pub struct Files {
    client: Arc<Client>,
    shown: PathBuf,
    files: Vec<(String, Descriptor, Option<InTar>)>,
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
            let all: Arc<[TarFile]> = found.into();
            for f in all.iter() {
                check_path(&f.path).map_err(|why| refused(format!("the tar's path {:?} {why}", f.path)))?;
                files.push((f.path.clone(), d.clone(), Some((f.clone(), Arc::clone(&all)))));
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

    fn find(&self, name: &str) -> Option<(&Descriptor, Option<&InTar>)> {
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
            Some((f, all)) => blob.tar_file(f, all).map_err(|e| e.in_file(&shown))?,
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
