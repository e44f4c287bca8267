//! One opened input file: its length, its identity, the bytes of its
//! metadata (handed to a format's parser), and reads of its tensor data.
//! Format-neutral: a parser is a function of a byte prefix. The memory map lives here; the
//! SIGBUS guard that keeps it sound is `map_guard`.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use memmap2::{Advice, Mmap, UncheckedAdvice};

use crate::error::{Error, ErrorKind, Result, Step};
use crate::map_guard::Guard;

/// How the metadata of a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadMode {
    /// Map the file and parse the metadata in place (the default).
    #[default]
    Mmap,
    /// Read the metadata into a buffer with `pread`, growing it as the parser
    /// asks; the file is never mapped.
    Pread,
}

/// What identifies one version of a file: if any of this differs between
/// the start and the end of hashing, the file changed underneath. (Device
/// and inode are left out: both checks fstat the same open file.)
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    len: u64,
    modified: Option<SystemTime>,
    ctime: (i64, i64),
}

impl Identity {
    fn of(m: &std::fs::Metadata) -> Identity {
        Identity { len: m.len(), modified: m.modified().ok(), ctime: (m.ctime(), m.ctime_nsec()) }
    }
}

/// The first metadata read in `Pread` mode is 1/64 of the file, between
/// these bounds; it grows while the parser asks for more. Big models have big
/// metadata (a vocabulary of megabytes: one read saves re-parses), while a
/// small file (an Ollama tensor blob of 1 MiB with a 200-byte header) must
/// not be read whole just to find its header.
const FIRST_READ_MIN: u64 = 64 << 10;
const FIRST_READ_MAX: u64 = 1 << 20;

/// The most metadata `Pread` mode holds in memory. Real models stay far
/// below it (a 262,144-token vocabulary with merges is tens of MiB); past it
/// a hostile file could make the process hold gigabytes.
pub const MAX_READ_METADATA: u64 = 128 << 20;

/// A format's pure metadata parser: handed the file or a prefix of it and
/// the file's length, it returns the parsed metadata and the file position
/// where the metadata ends, or asks for a longer prefix ([`Step::NeedMore`]).
pub(crate) type PrefixParser<T> = dyn Fn(&[u8], u64) -> Result<(T, u64), Step>;

/// An open, regular input file.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    file: File,
    identity: Identity,
    mode: ReadMode,
    /// The guarded map of the whole file, made on first use and kept while
    /// the file is open: metadata is parsed from it and every tensor is
    /// hashed from it, so a model with hundreds of tensors costs one `mmap`,
    /// not one per tensor. `None` inside when no map could be guarded.
    map: OnceLock<Option<FileMap>>,
}

/// A map of a whole file with the guard that makes reading it safe.
struct FileMap {
    // Declared before `map`, so it is unguarded before it is unmapped.
    guard: Guard,
    map: Mmap,
    /// Short ranges hashed since their pages were last dropped.
    short: Mutex<ShortRanges>,
}

/// The short ranges hashed since the last drop: how much they may hold
/// mapped, and the span of map positions that holds them all.
#[derive(Default)]
struct ShortRanges {
    mapped: usize,
    span: Option<(usize, usize)>,
}

/// A file this small gets no read-ahead advice: it fits the kernel's window.
const SMALL_FILE: usize = 2 << 20;

/// The most the kernel maps at once: a 2 MiB folio of the page cache,
/// mapped whole with one PMD entry (file offset and address share alignment).
const HUGE_PAGE: usize = 2 << 20;

/// Mapped ranges shorter than this do not drop their own pages when hashed...
const SHORT_RANGE: usize = 1 << 20;
/// ...instead the pages of the span that holds them are dropped at once
/// whenever the short ranges hashed may hold this much mapped. Each drop is
/// a `madvise` call that also flushes the TLB of every core running another
/// hashing thread; one per short tensor cost SmolLM2 (hundreds of tensors
/// under 1 MiB) several per cent of its wall time with two threads. The resident set
/// stays bounded: about this much of short ranges per open file.
const SHORT_RANGES_DROPPED_EVERY: usize = 16 << 20;

impl std::fmt::Debug for FileMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileMap").field("len", &self.map.len()).finish_non_exhaustive()
    }
}

impl Source {
    /// Opens a regular file; anything else (a directory, FIFO, device) is an error.
    pub fn open(path: &Path, mode: ReadMode) -> Result<Source> {
        let located = |e: Error| e.in_file(path);
        // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before
        // we could see that it is no file. It changes nothing for reads of a
        // regular file.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| located(e.into()))?;
        let meta = file.metadata().map_err(|e| located(e.into()))?;
        let ft = meta.file_type();
        if ft.is_dir() {
            // Worded by the system, as sha256sum reports it.
            return Err(located(io::Error::from_raw_os_error(libc::EISDIR).into()));
        }
        if !ft.is_file() {
            let what = if ft.is_fifo() {
                "a FIFO"
            } else if ft.is_char_device() {
                "a character device"
            } else if ft.is_block_device() {
                "a block device"
            } else if ft.is_socket() {
                "a socket"
            } else {
                "not a file"
            };
            return Err(located(ErrorKind::NotRegularFile(what).into()));
        }
        Ok(Source { path: path.to_path_buf(), file, identity: Identity::of(&meta), mode, map: OnceLock::new() })
    }

    /// How this file is read.
    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    /// The path the file was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length when it was opened.
    pub fn len(&self) -> u64 {
        self.identity.len
    }

    /// True for a 0-byte file.
    pub fn is_empty(&self) -> bool {
        self.identity.len == 0
    }

    /// Parses the file's metadata with a format's pure parser.
    ///
    /// `parse(bytes, file_len)` is handed the file or a prefix of it; it
    /// returns the parsed metadata and the file position where the metadata
    /// ends, or [`Step::NeedMore`] to be called again with a longer prefix.
    /// By default the prefix is the whole file's guarded map (the metadata's
    /// pages are dropped after the parse); with `--no-mmap`, or when no map
    /// can be guarded, it is read into memory, up to [`MAX_READ_METADATA`].
    pub(crate) fn parse<T>(&self, parse: &PrefixParser<T>) -> Result<T> {
        let r = match self.mode {
            ReadMode::Mmap if !self.is_empty() => self.parse_mapped(parse),
            _ => self.parse_read(parse),
        };
        r.map_err(|e| e.in_file(&self.path))
    }

    fn parse_mapped<T>(&self, parse: &PrefixParser<T>) -> Result<T> {
        let Some(fm) = self.file_map()? else {
            // No guard to be had (every slot busy, or no signal handler):
            // reading is always safe.
            return self.parse_read(parse);
        };
        // The length may have changed between stat and map; parse only what
        // both agree on, so that no read reaches past the mapped length.
        let len = (fm.map.len() as u64).min(self.len());
        let parsed = parse(&fm.map, len);
        if fm.guard.was_hit() {
            return Err(changed("it was truncated while its metadata was read"));
        }
        let (parsed, metadata_end) = match parsed {
            Ok(p) => p,
            Err(Step::Fail(e)) => return Err(e),
            Err(Step::NeedMore(_)) => return Err(changed("shorter than when opened")),
        };
        // The parsed metadata owns what it needs; its pages (a vocabulary
        // can be tens of MiB) need not stay in the resident set. Reading it
        // mapped more than it: a fault maps a whole fault-around window (64
        // KiB) or a 2 MiB folio. So the drop runs to the next 2 MiB boundary:
        // a model of a thousand files is parsed before any is hashed, and
        // each would otherwise keep up to a window resident until then (the
        // data pages dropped here fault in again when hashed).
        let metadata_end = usize::try_from(metadata_end).unwrap_or(fm.map.len());
        fm.release(0, metadata_end.div_ceil(HUGE_PAGE).saturating_mul(HUGE_PAGE).max(HUGE_PAGE));
        Ok(parsed)
    }

    /// The guarded map of the whole file, made on first call; `None` when
    /// no guard slot is free (the caller reads instead).
    fn file_map(&self) -> Result<Option<&FileMap>> {
        if let Some(made) = self.map.get() {
            return Ok(made.as_ref());
        }
        // SAFETY: the map is read-only, and nothing in this process writes
        // the file. Another process may still change it: changed metadata
        // bytes give a parse error or the metadata of the changed content,
        // changed tensor bytes another digest, and any change of size or
        // time is caught by `check_unchanged` after hashing. A truncation makes reads of the vanished pages fault
        // with SIGBUS; the guard turns those faults into zero pages and a
        // flag, which `parse_mapped` and `MappedRange::check` report, so the
        // process never dies of it. See docs/adr/0001-parser-over-a-map.md
        // and docs/adr/0003-reading-tensor-data.md.
        let map = unsafe { Mmap::map(&self.file) }.map_err(|e| Error::from(e).in_file(&self.path))?;
        let made = Guard::new(map.as_ptr(), map.len()).map(|guard| {
            // Only a hint, for read-ahead; failing it changes nothing. A file
            // within one read-ahead window gains nothing from it, and a model
            // of thousands of small files (Ollama's tensor blobs) would pay
            // the call for each.
            if map.len() > SMALL_FILE {
                let _ = map.advise(Advice::Sequential);
            }
            FileMap { guard, map, short: Mutex::new(ShortRanges::default()) }
        });
        // Two threads may race to make it; the loser's map is dropped here.
        Ok(self.map.get_or_init(|| made).as_ref())
    }

    fn parse_read<T>(&self, parse: &PrefixParser<T>) -> Result<T> {
        let len = self.len();
        let mut buf = Vec::new();
        let mut want = (len / 64).clamp(FIRST_READ_MIN, FIRST_READ_MAX).min(len);
        loop {
            self.fill_to(&mut buf, want)?;
            match parse(&buf, len) {
                Ok((parsed, _)) => return Ok(parsed),
                Err(Step::Fail(e)) => return Err(e),
                Err(Step::NeedMore(upto)) => {
                    if upto <= buf.len() as u64 || upto > len {
                        return Err(changed("metadata read came up short"));
                    }
                    if upto > MAX_READ_METADATA {
                        let kind = ErrorKind::MetadataTooLarge { needed: upto, limit: MAX_READ_METADATA };
                        return Err(Error::new(kind).at(buf.len() as u64));
                    }
                    want = upto.max(want.saturating_mul(2)).min(len).min(MAX_READ_METADATA);
                }
            }
        }
    }

    /// Extends `buf` with file bytes until it holds the first `want` bytes.
    fn fill_to(&self, buf: &mut Vec<u8>, want: u64) -> Result<()> {
        let have = buf.len();
        // Metadata is held whole on this path: a file declaring more than the
        // machine can hold is an error, never an abort.
        let too_big = || {
            let e =
                io::Error::new(io::ErrorKind::OutOfMemory, format!("{want} bytes of metadata do not fit in memory"));
            Error::new(ErrorKind::Io(e)).at(have as u64)
        };
        let want = usize::try_from(want).map_err(|_| too_big())?;
        buf.try_reserve_exact(want.saturating_sub(have)).map_err(|_| too_big())?;
        buf.resize(want.max(have), 0);
        let tail = buf.get_mut(have..).unwrap_or(&mut []);
        self.read_exact_at(tail, have as u64)
    }

    /// The guarded map of `len` bytes at file position `offset`, for
    /// streaming; `None` when the file is to be read (`--no-mmap`), the
    /// range is better read (shorter than `min_mapped`), the file has no
    /// guarded map, or the map does not reach that far (a read then says
    /// what changed).
    pub(crate) fn map_range(&self, offset: u64, len: u64, min_mapped: u64) -> Result<Option<MappedRange<'_>>> {
        if self.mode == ReadMode::Pread || len < min_mapped {
            return Ok(None);
        }
        let Some(fm) = self.file_map()? else {
            return Ok(None);
        };
        let (Ok(start), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
            return Ok(None);
        };
        match start.checked_add(len) {
            Some(end) if end <= fm.map.len() => Ok(Some(MappedRange { file: fm, start, len })),
            _ => Ok(None),
        }
    }

    /// The first `n` bytes of the file, or all of it when it is shorter:
    /// enough to tell formats apart.
    pub fn head(&self, n: u64) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; usize::try_from(n.min(self.len())).unwrap_or(0)];
        self.read_exact_at(&mut buf, 0)?;
        Ok(buf)
    }

    /// Reads exactly `buf.len()` bytes at file position `offset`; a file that
    /// ends early changed underneath (its length was checked when parsed).
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        match self.file.read_exact_at(buf, offset) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(changed("it ended early").at(offset).in_file(&self.path))
            }
            Err(e) => Err(Error::from(e).at(offset).in_file(&self.path)),
        }
    }

    /// Fails if the file's size or times differ from when it was opened.
    pub fn check_unchanged(&self) -> Result<()> {
        // fstat of the open file: the bytes we read are this inode's, whatever
        // the path names now.
        let now = self.file.metadata().map_err(|e| Error::from(e).in_file(&self.path))?;
        let now = Identity::of(&now);
        if now == self.identity {
            return Ok(());
        }
        let what = if now.len != self.identity.len {
            format!("size was {} bytes, now {}", self.identity.len, now.len)
        } else if now.modified != self.identity.modified {
            "its modification time changed".to_string()
        } else {
            "its inode was changed (ctime)".to_string()
        };
        Err(changed(&what).in_file(&self.path))
    }
}

/// Raises this process's soft limit on open files to its hard limit, as Go
/// programs (Ollama among them) do at start: one model can be thousands of
/// files held open at once (an Ollama model is a blob per tensor), and a soft
/// limit of 1024 is common. Failing leaves the limit as it was.
pub fn raise_open_file_limit() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed;
    // the limit applies to this process alone.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn changed(what: &str) -> Error {
    Error::new(ErrorKind::FileChanged(what.to_string()))
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).ok().filter(|p| p.is_power_of_two()).unwrap_or(4096)
}

impl FileMap {
    /// Drops the pages of map bytes `start..end` from this process, so that
    /// a long stream does not pile mapped pages up in its resident set. The
    /// page cache keeps them; only this mapping forgets them. Whole pages
    /// are dropped, so a neighbour's bytes in the first or last page may be
    /// dropped too: a read of them just faults them in again.
    fn release(&self, start: usize, end: usize) {
        let page = usize::try_from(page_size()).unwrap_or(4096);
        let start = start & !(page.saturating_sub(1));
        let end = end.min(self.map.len());
        if end > start {
            // SAFETY: the map is read-only and file-backed: after DONTNEED a
            // read of these pages faults them in again from the file (or,
            // past a truncation, through the guard), so no data is lost and
            // any slice of them still in use stays valid.
            let _ =
                unsafe { self.map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end.saturating_sub(start)) };
        }
    }
}

/// One byte range of a file's guarded map, hashed in place.
pub(crate) struct MappedRange<'a> {
    file: &'a FileMap,
    start: usize,
    len: usize,
}

impl MappedRange<'_> {
    /// The bytes of the range.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.start.checked_add(self.len).and_then(|end| self.file.map.get(self.start..end)).unwrap_or(&[])
    }

    /// Maps in the pages of `bytes()[start..start + len]` with one call
    /// instead of a page fault every few pages.
    pub(crate) fn populate(&self, start: usize, len: usize) {
        // Only a hint; without MADV_POPULATE_READ (Linux < 5.14) faults do it.
        let _ = self.file.map.advise_range(Advice::PopulateRead, self.start.saturating_add(start), len);
    }

    /// Drops the pages of `bytes()[start..end]`, just hashed, from this
    /// process (see `FileMap::release`); short ranges are dropped in bulk.
    pub(crate) fn release(&self, start: usize, end: usize) {
        let len = end.saturating_sub(start);
        if len >= SHORT_RANGE {
            self.file.release(self.start.saturating_add(start), self.start.saturating_add(end));
            return;
        }
        let (start, end) = (self.start.saturating_add(start), self.start.saturating_add(end));
        let due = {
            let Ok(mut short) = self.file.short.lock() else { return };
            // A range may hold more than itself mapped: a 2 MiB folio is
            // mapped whole, so count every 2 MiB block the range touches.
            let blocks = end.div_ceil(HUGE_PAGE).saturating_sub(start.checked_div(HUGE_PAGE).unwrap_or(0));
            short.mapped = short.mapped.saturating_add(blocks.saturating_mul(HUGE_PAGE));
            let (lo, hi) = short.span.unwrap_or((start, end));
            short.span = Some((lo.min(start), hi.max(end)));
            if short.mapped < SHORT_RANGES_DROPPED_EVERY {
                return;
            }
            short.mapped = 0;
            short.span.take()
        };
        // Pages in the span that another thread is hashing are dropped too;
        // it faults them in again, which is cheap next to one flush per range.
        if let Some((lo, hi)) = due {
            self.file.release(lo, hi);
        }
    }

    /// Fails if a read of the file's map hit a page lost to a truncation.
    pub(crate) fn check(&self, path: &Path) -> Result<()> {
        if self.file.guard.was_hit() {
            return Err(changed("it was truncated while it was read").in_file(path));
        }
        Ok(())
    }
}
