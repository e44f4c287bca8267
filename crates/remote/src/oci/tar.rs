//! An uncompressed tar layer (a ModelPack `.tar` layer, as `modctl build`
//! wrote them before `--raw`) read as slices of its blob: each regular
//! file's path, and where its data lies, from the headers alone
//! (docs/adr/0046, "ModelPack tar layers").
//!
//! The `tar` crate parses the headers (ustar, GNU long names, PAX) through
//! `entries_with_seek`, so it seeks past every file's data instead of
//! reading it; [`Guard`] bounds what it reads between two seeks (a header
//! and its PAX or GNU long-name data: [`MAX_EXTENSION`]) and refuses a
//! seek past the blob's end, so a declared size is never read or
//! allocated before it is checked against the bytes that exist.

use std::io::{self, Read, Seek, SeekFrom};

use super::layout::check_path;

/// Entries of one tar layer, at most (directories included).
pub const MAX_ENTRIES: usize = 65_536;
/// A PAX extended header's or a GNU long name's data, at most.
pub const MAX_EXTENSION: u64 = 64 << 10;
/// A tar block.
const BLOCK: u64 = 512;

/// A regular file of a tar: its path and where its data lies in the blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarFile {
    /// Its path inside the tar, checked as an annotation's path is.
    pub path: String,
    /// The byte offset of its own header (after any PAX or long-name entry).
    pub header: u64,
    /// The byte offset of its data.
    pub offset: u64,
    /// Its data's length.
    pub len: u64,
}

/// Bounds what the tar crate reads between two seeks, and where it seeks.
struct Guard<R> {
    inner: R,
    pos: u64,
    size: u64,
    since_seek: u64,
}

fn refused(why: String) -> io::Error {
    io::Error::other(why)
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let limit = BLOCK.saturating_add(MAX_EXTENSION);
        if self.since_seek >= limit && !buf.is_empty() {
            return Err(refused(format!(
                "a header's extension (PAX or GNU long name) longer than {MAX_EXTENSION} bytes at byte offset {}",
                self.pos
            )));
        }
        let room = usize::try_from(limit.saturating_sub(self.since_seek)).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        let Some(part) = buf.get_mut(..n) else { return Err(refused("a read past its buffer".into())) };
        let got = self.inner.read(part)?;
        self.pos = self.pos.saturating_add(got as u64);
        self.since_seek = self.since_seek.saturating_add(got as u64);
        Ok(got)
    }
}

impl<R: Seek> Seek for Guard<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::Current(by) => self.pos.checked_add_signed(by),
            SeekFrom::End(by) => self.size.checked_add_signed(by),
        };
        let target = target
            .filter(|&t| t <= self.size)
            .ok_or_else(|| refused(format!("an entry runs past the blob's end ({} bytes)", self.size)))?;
        let at = self.inner.seek(SeekFrom::Start(target))?;
        self.pos = at;
        self.since_seek = 0;
        Ok(at)
    }
}

/// The regular files of the tar read through `inner` (a blob of `size`
/// bytes), in tar order; with `stop`, parsing ends at the entry whose data
/// starts there (nothing after it is read). Directories are skipped;
/// links, devices, FIFOs, sparse files and PAX global headers refused,
/// named; paths checked as annotation paths are; every entry's data must
/// lie within the blob.
pub fn files<R: Read + Seek>(inner: R, size: u64, stop: Option<u64>) -> Result<Vec<TarFile>, String> {
    bounded(inner, size, stop, MAX_ENTRIES)
}

fn bounded<R: Read + Seek>(inner: R, size: u64, stop: Option<u64>, max: usize) -> Result<Vec<TarFile>, String> {
    let guard = Guard { inner, pos: 0, size, since_seek: 0 };
    let mut archive = tar::Archive::new(guard);
    let entries = archive.entries_with_seek().map_err(|e| format!("not a tar: {e}"))?;
    let mut found = Vec::new();
    let mut count = 0usize;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("not a tar ({e})"))?;
        count = count.saturating_add(1);
        if count > max {
            return Err(format!("more than {max} entries"));
        }
        let header = entry.raw_header_position();
        let offset = entry.raw_file_position();
        let len = entry.size();
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let kind = entry.header().entry_type();
        offset.checked_add(len).filter(|&e| e <= size).ok_or_else(|| {
            format!("the entry {shown:?} at byte offset {header} ({len} bytes) runs past the blob's end ({size} bytes)")
        })?;
        let sparse = match entry.pax_extensions() {
            Ok(Some(pax)) => pax.filter_map(Result::ok).any(|x| x.key_bytes().starts_with(b"GNU.sparse.")),
            Ok(None) => false,
            Err(e) => return Err(format!("the entry {shown:?} at byte offset {header}: {e}")),
        };
        let what = if kind.is_file() || kind.is_contiguous() {
            if sparse { Some("a sparse file") } else { None }
        } else if kind.is_dir() {
            // Skipped; its path still checked (a trailing `/` is a
            // directory's mark).
            let path = std::str::from_utf8(&raw).map_err(|_| format!("the entry {shown:?} is not UTF-8"))?;
            let path = path.strip_suffix('/').unwrap_or(path);
            check_path(path).map_err(|why| format!("the directory {shown:?} at byte offset {header} {why}"))?;
            continue;
        } else if kind.is_symlink() {
            Some("a symbolic link")
        } else if kind.is_hard_link() {
            Some("a hard link")
        } else if kind.is_character_special() || kind.is_block_special() {
            Some("a device")
        } else if kind.is_fifo() {
            Some("a FIFO")
        } else if kind.is_gnu_sparse() {
            Some("a sparse file")
        } else if kind.is_pax_global_extensions() {
            Some("a PAX global header")
        } else {
            Some("an entry of an unknown type")
        };
        if let Some(what) = what {
            return Err(format!("the entry {shown:?} at byte offset {header} is {what}: only regular files are read"));
        }
        let path = String::from_utf8(raw).map_err(|_| format!("the entry {shown:?} is not UTF-8"))?;
        check_path(&path).map_err(|why| format!("the entry {shown:?} at byte offset {header} {why}"))?;
        found.push(TarFile { path, header, offset, len });
        if stop.is_some_and(|s| offset >= s) {
            break;
        }
    }
    Ok(found)
}

/// A blob read by ranges as `Read + Seek` for [`files`]: `read_at` fills a
/// buffer at an offset; reads come a block-aligned look-ahead at a time.
pub struct Ranged<F> {
    read_at: F,
    size: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_at: u64,
}

/// Bytes read ahead at once: a few headers and their extensions.
const AHEAD: u64 = 8 * BLOCK;

impl<F: FnMut(u64, &mut [u8]) -> io::Result<()>> Ranged<F> {
    /// A blob of `size` bytes read by `read_at`.
    pub fn new(size: u64, read_at: F) -> Ranged<F> {
        Ranged { read_at, size, pos: 0, buf: Vec::new(), buf_at: 0 }
    }
}

impl<F: FnMut(u64, &mut [u8]) -> io::Result<()>> Read for Ranged<F> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let in_buf = self.pos.checked_sub(self.buf_at).filter(|&d| d < self.buf.len() as u64);
        let skip = match in_buf {
            Some(d) => d,
            None => {
                let n = self.size.saturating_sub(self.pos).min(AHEAD);
                if n == 0 {
                    return Ok(0);
                }
                self.buf = vec![0; usize::try_from(n).unwrap_or(0)];
                self.buf_at = self.pos;
                (self.read_at)(self.pos, &mut self.buf)?;
                0
            }
        };
        let have = self.buf.get(usize::try_from(skip).unwrap_or(usize::MAX)..).unwrap_or(&[]);
        let n = have.len().min(out.len());
        let (Some(dst), Some(src)) = (out.get_mut(..n), have.get(..n)) else { return Ok(0) };
        dst.copy_from_slice(src);
        self.pos = self.pos.saturating_add(n as u64);
        Ok(n)
    }
}

impl<F> Seek for Ranged<F> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        // Only `Start` comes here (through the guard).
        let SeekFrom::Start(at) = to else { return Err(refused("a relative seek".into())) };
        self.pos = at;
        Ok(at)
    }
}

/// A range read front to back as `Read + Seek` for [`files`]: a seek goes
/// forward only, by reading the bytes it passes (so every byte goes
/// through the reader, in order).
pub struct Forward<R> {
    next: R,
    pos: u64,
    end: u64,
    skip: Vec<u8>,
}

impl<R: FnMut(&mut [u8]) -> io::Result<()>> Forward<R> {
    /// The bytes `0..end` handed over by `next` (which fills its buffer).
    pub fn new(end: u64, next: R) -> Forward<R> {
        Forward { next, pos: 0, end, skip: Vec::new() }
    }
}

impl<R: FnMut(&mut [u8]) -> io::Result<()>> Read for Forward<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = usize::try_from(self.end.saturating_sub(self.pos)).unwrap_or(usize::MAX).min(out.len());
        let Some(part) = out.get_mut(..n) else { return Ok(0) };
        if n > 0 {
            (self.next)(part)?;
        }
        self.pos = self.pos.saturating_add(n as u64);
        Ok(n)
    }
}

impl<R: FnMut(&mut [u8]) -> io::Result<()>> Seek for Forward<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let SeekFrom::Start(at) = to else { return Err(refused("a relative seek".into())) };
        if at < self.pos || at > self.end {
            return Err(refused(format!("a seek to byte offset {at} outside {}..{}", self.pos, self.end)));
        }
        while self.pos < at {
            let n = usize::try_from(at.saturating_sub(self.pos)).unwrap_or(usize::MAX).min(1 << 16);
            self.skip.resize(n, 0);
            (self.next)(&mut self.skip)?;
            self.pos = self.pos.saturating_add(n as u64);
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests;
