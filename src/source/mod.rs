//! One opened input file: its length, its identity, the bytes of its
//! metadata (handed to a format's parser), and reads of its tensor data.
//! Format-neutral: a parser is a function of a byte prefix. The memory map lives here; the
//! SIGBUS guard that keeps it sound is `map_guard`.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use memmap2::{Advice, Mmap, UncheckedAdvice};

use crate::error::{Error, ErrorKind, Result, Step};
use crate::map_guard::Guard;

mod beneath;
mod beside;
mod lease;
mod residency;
mod stream;

pub use beneath::{Last, Root};
pub use beside::Beside;

use stream::{STREAM_READ, Stream, StreamInput};

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
/// A plain function (no captures), so that a stream can keep it for its
/// verdict at the end.
pub(crate) type PrefixParser<T> = fn(&[u8], u64) -> Result<(T, u64), Step>;

/// An open input: a regular file, or a stream read once, front to back
/// (standard input).
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    backing: Backing,
    /// The read lease taken when the file was opened (`lease.rs`): it
    /// breaks when a process opens the file for writing, which the file's
    /// times do not always show. Released once hashing is checked.
    lease: lease::Lease,
    identity: Identity,
    mode: ReadMode,
    /// The guarded map of the whole file, made on first use and kept while
    /// the file is open: metadata is parsed from it and every tensor is
    /// hashed from it, so a model with hundreds of tensors costs one `mmap`,
    /// not one per tensor. `None` inside when no map could be guarded.
    map: OnceLock<Option<FileMap>>,
    /// Whether the file was found (mostly) outside the page cache, sampled
    /// once on first use; see [`Source::is_cold`].
    cold: OnceLock<bool>,
    /// For a cold file larger than half of memory (or any file, with
    /// `DirectReads::Always`): the same file opened again with `O_DIRECT`,
    /// read around the page cache (see [`Source::read_direct`]); `None`
    /// inside when the file system refuses it. Unset until wanted.
    direct: OnceLock<Option<File>>,
    /// The directory it was opened in, beneath a root, when it was: the
    /// files it names are opened there too ([`Source::beside`]).
    beside: Option<Beside>,
}

/// The first bytes of a cold file asked for in one read-ahead before its
/// metadata is parsed: the metadata and the first tensors arrive in large
/// requests instead of fault after fault; from there the kernel's own
/// read-ahead follows the front-to-back reader (docs/adr/0016).
const READ_AHEAD: u64 = 64 << 20;

/// Where an input's bytes come from.
#[derive(Debug)]
enum Backing {
    /// A regular file: read with `pread` or mapped, in any order.
    File(File),
    /// A stream: read once, front to back.
    Stream(Mutex<Stream>),
}

/// The length a format's parser is handed for a stream whose end has not
/// been seen: every check against the file's length passes, and bytes past
/// the prefix are asked for (a stream that ends then is judged again at its
/// true length).
pub const UNKNOWN_LEN: u64 = u64::MAX;

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
        Source::open_with(path, mode)
    }

    fn open_with(path: &Path, mode: ReadMode) -> Result<Source> {
        let located = |e: Error| e.in_file(path);
        // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before
        // we could see that it is no file. It changes nothing for reads of a
        // regular file.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| located(e.into()))?;
        Source::from_opened(path, file, mode)
    }

    /// A source of a regular file just opened by `path`.
    fn from_opened(path: &Path, file: File, mode: ReadMode) -> Result<Source> {
        let located = |e: Error| e.in_file(path);
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
        let lease = lease::Lease::take(&file).map_err(located)?;
        Ok(Source {
            path: path.to_path_buf(),
            lease,
            backing: Backing::File(file),
            identity: Identity::of(&meta),
            mode,
            map: OnceLock::new(),
            cold: OnceLock::new(),
            direct: OnceLock::new(),
            beside: None,
        })
    }

    /// True when some of the file was not in the page cache when first
    /// asked (a few pages sampled over it: `residency`); always true for a
    /// stream, which has no page cache to be read from.
    ///
    /// A cold file is read at the disk's speed only front to back, so its
    /// model is hashed by one reader in file order (`pipeline`); a cached
    /// file keeps the mapped path, whose order balances the cores.
    pub fn is_cold(&self) -> bool {
        *self.cold.get_or_init(|| !self.all_sampled_pages_cached())
    }

    fn all_sampled_pages_cached(&self) -> bool {
        self.file().is_some_and(|file| residency::all_sampled_pages_cached(file, self.len()))
    }

    /// Samples residency, and for a cold file asks the kernel for its first
    /// [`READ_AHEAD`] bytes at once. Called before the parser touches the
    /// file: afterwards its first pages would look cached.
    fn read_ahead_start(&self) {
        let Some(file) = self.file().filter(|_| self.is_cold()) else { return };
        // Only a hint: failing it changes nothing but speed. No length (an
        // empty file) is the whole file, as posix_fadvise's 0 is.
        let len = std::num::NonZeroU64::new(READ_AHEAD.min(self.len()));
        let _ = rustix::fs::fadvise(file, 0, len, rustix::fs::Advice::WillNeed);
    }

    /// A stream read once, front to back, named `name` in output and errors
    /// (`-` for standard input, as sha256sum names it).
    ///
    /// Its metadata is read into memory as the format's parser asks (up to
    /// [`MAX_READ_METADATA`]) and kept; tensor data is hashed as it arrives,
    /// in file order ([`Source::read_forward`]); the rest is read to the
    /// end, and the format then judges the whole stream as it would a file
    /// of that length ([`Source::check_unchanged`]).
    pub fn from_reader(name: &Path, reader: Box<dyn io::Read + Send>) -> Source {
        let stream = Stream {
            input: StreamInput { reader, pos: 0, end: None },
            prefix: Vec::new(),
            verdict: None,
            drain_on_drop: false,
        };
        Source {
            path: name.to_path_buf(),
            backing: Backing::Stream(Mutex::new(stream)),
            lease: lease::Lease::stream(),
            identity: Identity { len: UNKNOWN_LEN, modified: None, ctime: (0, 0) },
            mode: ReadMode::Pread,
            map: OnceLock::new(),
            cold: OnceLock::new(),
            direct: OnceLock::new(),
            beside: None,
        }
    }

    /// Standard input as a stream named `-`. A pipe's buffer is enlarged
    /// (best effort) so that each read hands over up to 1 MiB.
    ///
    /// Standard input is read once: a second call in one process is an
    /// error, since two readers would each get some of its bytes.
    pub fn stdin() -> Result<Source> {
        static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let e = io::Error::other("standard input can be read only once, and an earlier argument named it");
            return Err(Error::from(e).in_file(Path::new("-")));
        }
        #[cfg(target_os = "linux")]
        {
            // Changes only the pipe's buffer size; on anything but a pipe it
            // fails and changes nothing.
            let _ = rustix::pipe::fcntl_setpipe_size(io::stdin(), STREAM_READ);
        }
        let source = Source::from_reader(Path::new("-"), Box::new(io::stdin()));
        if let Some(mut st) = source.stream() {
            st.drain_on_drop = true;
        }
        Ok(source)
    }

    /// True for a stream (standard input): read once, front to back.
    pub fn is_stream(&self) -> bool {
        matches!(self.backing, Backing::Stream(_))
    }

    fn file(&self) -> Option<&File> {
        match &self.backing {
            Backing::File(f) => Some(f),
            Backing::Stream(_) => None,
        }
    }

    fn stream(&self) -> Option<std::sync::MutexGuard<'_, Stream>> {
        match &self.backing {
            Backing::File(_) => None,
            Backing::Stream(s) => Some(lock(s)),
        }
    }

    /// How this file is read.
    pub fn mode(&self) -> ReadMode {
        self.mode
    }

    /// The path the file was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length when it was opened; a stream's length once it
    /// ended, [`UNKNOWN_LEN`] before.
    pub fn len(&self) -> u64 {
        match self.stream() {
            Some(s) => s.len(),
            None => self.identity.len,
        }
    }

    /// True for a 0-byte file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parses the file's metadata with a format's pure parser.
    ///
    /// `parse(bytes, file_len)` is handed the file or a prefix of it; it
    /// returns the parsed metadata and the file position where the metadata
    /// ends, or [`Step::NeedMore`] to be called again with a longer prefix.
    /// By default the prefix is the whole file's guarded map (the metadata's
    /// pages are dropped after the parse); with `--no-mmap`, or when no map
    /// can be guarded, it is read into memory, up to [`MAX_READ_METADATA`].
    pub(crate) fn parse<T: 'static>(&self, parse: PrefixParser<T>) -> Result<T> {
        self.read_ahead_start();
        let r = match (&self.backing, self.mode) {
            (Backing::Stream(s), _) => parse_stream(&mut lock(s), parse),
            (Backing::File(_), ReadMode::Mmap) if !self.is_empty() => self.parse_mapped(parse),
            (Backing::File(_), _) => self.parse_read(parse),
        };
        r.map_err(|e| e.in_file(&self.path))
    }

    fn parse_mapped<T>(&self, parse: PrefixParser<T>) -> Result<T> {
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
        let Some(file) = self.file() else { return Ok(None) };
        // SAFETY: the map is read-only, and nothing in this process writes
        // the file. Another process may still change it: changed metadata
        // bytes give a parse error or the metadata of the changed content,
        // changed tensor bytes another digest, and any change of size or
        // time is caught by `check_unchanged` after hashing. A truncation makes reads of the vanished pages fault
        // with SIGBUS; the guard turns those faults into zero pages and a
        // flag, which `parse_mapped` and `MappedRange::check` report, so the
        // process never dies of it. See docs/adr/0001-parser-over-a-map.md
        // and docs/adr/0003-reading-tensor-data.md.
        let map = unsafe { Mmap::map(file) }.map_err(|e| Error::from(e).in_file(&self.path))?;
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

    fn parse_read<T>(&self, parse: PrefixParser<T>) -> Result<T> {
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
                    want = next_metadata_read(upto, want, buf.len())?.min(len);
                }
            }
        }
    }

    /// Reads `buf.len()` bytes at file position `offset` on the way front to
    /// back: a file is read there; a stream serves them from its first bytes
    /// or reads on to them, skipping any gap. Positions must not go back on
    /// a stream past its first bytes. Returns the bytes taken from the input
    /// (a stream's skipped gap included), for a progress count.
    pub(crate) fn read_forward(&self, offset: u64, buf: &mut [u8]) -> Result<u64> {
        let Some(mut st) = self.stream() else {
            self.read_exact_at(buf, offset)?;
            self.forget_if_huge(offset, buf.len() as u64);
            return Ok(buf.len() as u64);
        };
        let located = |e: Error| e.in_file(&self.path);
        let st = &mut *st;
        let mut filled = 0usize;
        if let Some(held) = usize::try_from(offset).ok().and_then(|o| st.prefix.get(o..)) {
            let n = held.len().min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(..n), held.get(..n)) {
                dst.copy_from_slice(src);
            }
            filled = n;
        }
        if filled == buf.len() {
            return Ok(0);
        }
        let at = offset.saturating_add(filled as u64);
        let before = st.input.pos;
        if at < before {
            let e = io::Error::other(format!("a stream cannot go back to byte {at}: it was read up to byte {before}"));
            return Err(located(Error::from(e).at(at)));
        }
        st.input.skip(at.saturating_sub(before)).map_err(|e| located(Error::from(e).at(st.input.pos)))?;
        let rest = buf.get_mut(filled..).unwrap_or(&mut []);
        let want = rest.len();
        let got = st.input.read_more(rest).map_err(|e| located(Error::from(e).at(st.input.pos)))?;
        if got < want {
            // Ended early: the format's verdict at this length says what is
            // missing, in the words it would use for such a file.
            return Err(located(st.judge().err().unwrap_or_else(|| changed("it ended early").at(st.input.pos))));
        }
        Ok(st.input.pos.saturating_sub(before))
    }

    /// Drops bytes just read from the page cache when the file is larger
    /// than half the machine's memory: read front to back, such a file
    /// cannot stay cached anyway, and evicting its pages here, in large
    /// ranges, spares the kernel's reclaim scanning for them page by page
    /// on the cores that hash (measured on a 32 GiB file on 24 GiB:
    /// docs/BENCHMARKS.md). A smaller file keeps its pages, for whatever
    /// reads it next.
    fn forget_if_huge(&self, offset: u64, len: u64) {
        let Some(file) = self.file() else { return };
        if !self.larger_than_half_of_memory() {
            return;
        }
        // Only a hint: failing it changes nothing but memory pressure. No
        // length is to the end of the file, as posix_fadvise's 0 is.
        let _ = rustix::fs::fadvise(file, offset, std::num::NonZeroU64::new(len), rustix::fs::Advice::DontNeed);
    }

    fn larger_than_half_of_memory(&self) -> bool {
        static HALF_MEMORY: OnceLock<u64> = OnceLock::new();
        let half = *HALF_MEMORY.get_or_init(|| memory_bytes() / 2);
        half > 0 && self.len() > half
    }

    /// The file opened again with `O_DIRECT`, when it is cold and larger
    /// than half of memory (or `direct_reads` forces it, for tests): such a
    /// file cannot stay cached, and reading it around the page cache costs
    /// the kernel almost no CPU (0.12 s against 3 s for 2 GiB here), which
    /// on two cores is what the hashing threads need. Reopened through
    /// `/proc/self/fd`, so it is the same inode whatever the path names now
    /// (checked); `None` when the file system refuses `O_DIRECT`.
    fn direct_file(&self, force: bool) -> Option<&File> {
        // A stream first: it counts as cold and of unknown (huge) length.
        let file = self.file()?;
        if !(force || (self.is_cold() && self.larger_than_half_of_memory())) {
            return None;
        }
        self.direct
            .get_or_init(|| {
                let fd = std::os::fd::AsRawFd::as_raw_fd(file);
                let direct = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_DIRECT)
                    .open(format!("/proc/self/fd/{fd}"))
                    .ok()?;
                let (a, b) = (file.metadata().ok()?, direct.metadata().ok()?);
                (a.dev() == b.dev() && a.ino() == b.ino()).then_some(direct)
            })
            .as_ref()
    }

    /// True when this file is read around the page cache
    /// ([`Source::read_direct`]).
    pub(crate) fn reads_directly(&self, force: bool) -> bool {
        self.direct_file(force).is_some()
    }

    /// Reads `len` bytes at `offset` with `O_DIRECT` into `buf` (resized as
    /// needed): offset, length and address are widened to whole 4 KiB
    /// blocks, and the bytes asked for start at the returned position in
    /// `buf`. Only for a file [`Source::reads_directly`] said yes to (it
    /// opens the direct descriptor; nothing is decided here).
    pub(crate) fn read_direct(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<usize> {
        const BLOCK: usize = 4096;
        let located = |e: Error| e.at(offset).in_file(&self.path);
        let Some(file) = self.direct.get().and_then(Option::as_ref) else {
            return Err(located(Error::internal("a direct read of a buffered file")));
        };
        self.check_lease()?;
        // BLOCK is 4096: clear the low 12 bits.
        let aligned_start = offset & !0xFFF_u64;
        let lead = usize::try_from(offset.saturating_sub(aligned_start)).unwrap_or(0);
        let need = lead.saturating_add(len);
        let span = need.div_ceil(BLOCK).saturating_mul(BLOCK);
        let want = span.saturating_add(BLOCK);
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let base = buf.as_ptr().align_offset(BLOCK).min(BLOCK);
        let Some(window) = buf.get_mut(base..base.saturating_add(span)) else {
            return Err(located(changed("no aligned buffer")));
        };
        let mut got = 0usize;
        while got < need {
            let Some(rest) = window.get_mut(got..) else { break };
            match file.read_at(rest, aligned_start.saturating_add(got as u64)) {
                Ok(0) => break,
                Ok(n) => got = got.saturating_add(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(located(e.into())),
            }
            // A direct read ends short only at the end of the file; go on
            // from a block boundary or stop.
            if got % BLOCK != 0 && got < need {
                break;
            }
        }
        if got < need {
            return Err(located(changed("it ended early")));
        }
        Ok(base.saturating_add(lead))
    }

    /// Reads a stream to its end, so that a producer writing into a pipe
    /// (`curl … | tee model.gguf | gguf-digest -`) is never cut off, and the
    /// stream's length is known for its verdict. Returns the bytes read.
    /// Nothing for a file.
    pub(crate) fn read_to_end(&self) -> Result<u64> {
        let Some(mut st) = self.stream() else { return Ok(0) };
        st.input.drain().map_err(|e| Error::from(e).at(st.input.pos).in_file(&self.path))
    }

    /// Bytes taken from a stream so far (for a progress count); 0 for a file.
    pub(crate) fn stream_pos(&self) -> u64 {
        self.stream().map_or(0, |s| s.input.pos)
    }

    /// Extends `buf` with file bytes until it holds the first `want` bytes.
    fn fill_to(&self, buf: &mut Vec<u8>, want: u64) -> Result<()> {
        let have = buf.len();
        // Metadata is held whole on this path: a file declaring more than the
        // machine can hold is an error, never an abort.
        let too_big = || metadata_too_big(want, have);
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
        if self.mode == ReadMode::Pread || len < min_mapped || self.is_stream() {
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
        if let Some(mut st) = self.stream() {
            st.fill_prefix(n).map_err(|e| e.in_file(&self.path))?;
            let n = usize::try_from(n).unwrap_or(usize::MAX).min(st.prefix.len());
            return Ok(st.prefix.get(..n).unwrap_or(&[]).to_vec());
        }
        let mut buf = vec![0u8; usize::try_from(n.min(self.len())).unwrap_or(0)];
        self.read_exact_at(&mut buf, 0)?;
        Ok(buf)
    }

    /// Reads exactly `buf.len()` bytes at file position `offset`; a file that
    /// ends early changed underneath (its length was checked when parsed).
    ///
    /// A stream holds only its first bytes (the metadata) for this; a range
    /// past them is an error.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        let file = match &self.backing {
            Backing::File(f) => f,
            Backing::Stream(s) => return self.read_held(&lock(s), buf, offset),
        };
        self.check_lease()?;
        match file.read_exact_at(buf, offset) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                Err(changed("it ended early").at(offset).in_file(&self.path))
            }
            Err(e) => Err(Error::from(e).at(offset).in_file(&self.path)),
        }
    }

    fn read_held(&self, st: &Stream, buf: &mut [u8], offset: u64) -> Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        let held = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(start, end)| st.prefix.get(start..end));
        match held {
            Some(held) => {
                buf.copy_from_slice(held);
                Ok(())
            }
            None => {
                let e = io::Error::other(format!(
                    "bytes {offset}..{end} of a stream were not kept (only its first {} bytes are)",
                    st.prefix.len()
                ));
                Err(Error::from(e).at(offset).in_file(&self.path))
            }
        }
    }

    /// Fails once a process has opened the file for writing since it was
    /// opened (its read lease broke): hashing stops at the next piece and
    /// the lease is let go at once, so the writer waiting for it goes on.
    /// Passes for a file without a lease, and once the lease was released
    /// after a check.
    pub(crate) fn check_lease(&self) -> Result<()> {
        match self.file() {
            Some(file) => self.lease.check_held(file).map_err(|e| e.in_file(&self.path)),
            None => Ok(()),
        }
    }

    /// Why this file is read without a read lease (see `lease.rs`), for its
    /// model's `--json` entry; `None` when it holds one, and for a stream.
    pub fn lease_unavailable(&self) -> Option<String> {
        self.lease.unavailable().and_then(lease::Unavailable::why)
    }

    /// Fails if a process opened the file for writing since it was opened,
    /// or if its size or times differ from then; releases its read lease.
    /// A stream is judged instead, once read to its end, by its format's
    /// parser at its true length: exactly the verdict on a file holding the
    /// same bytes (a tensor past the end, bytes after the last safetensors
    /// tensor, ...).
    pub fn check_unchanged(&self) -> Result<()> {
        let file = match &self.backing {
            Backing::File(f) => f,
            Backing::Stream(s) => return lock(s).judge().map_err(|e| e.in_file(&self.path)),
        };
        // No process opened it for writing since it was opened (which its
        // times may not show); the lease is let go here.
        self.lease.check_and_release(file).map_err(|e| e.in_file(&self.path))?;
        // fstat of the open file: the bytes we read are this inode's, whatever
        // the path names now.
        let now = file.metadata().map_err(|e| Error::from(e).in_file(&self.path))?;
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

impl Drop for Source {
    /// A lease not yet released (a file whose hashing was never checked:
    /// it failed, or was never asked for) is let go before the descriptor
    /// closes: with the map still open the kernel would keep it until the
    /// unmap.
    fn drop(&mut self) {
        if let Backing::File(file) = &self.backing {
            self.lease.release(file);
        }
    }
}

/// Raises this process's soft limit on open files to its hard limit, as Go
/// programs (Ollama among them) do at start: one model can be thousands of
/// files held open at once (an Ollama model is a blob per tensor), and a soft
/// limit of 1024 is common. Failing leaves the limit as it was.
pub fn raise_open_file_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    // `None` is no limit (RLIM_INFINITY), above every number.
    let lim = getrlimit(Resource::Nofile);
    let below_hard = match (lim.current, lim.maximum) {
        (Some(current), Some(maximum)) => current < maximum,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if below_hard {
        let _ = setrlimit(Resource::Nofile, Rlimit { current: lim.maximum, maximum: lim.maximum });
    }
}

/// Metadata held whole (a stream's, or a file's read with `pread`) that
/// cannot be allocated: an error at the bytes held so far, never an abort.
pub(crate) fn metadata_too_big(want: impl std::fmt::Display, have: usize) -> Error {
    let e = io::Error::new(io::ErrorKind::OutOfMemory, format!("{want} bytes of metadata do not fit in memory"));
    Error::new(ErrorKind::Io(e)).at(have as u64)
}

/// Parses a stream's metadata from its first bytes, reading more as the
/// parser asks, with the length unknown until the stream ends; keeps the
/// parser for the verdict at the end.
fn parse_stream<T: 'static>(st: &mut Stream, parse: PrefixParser<T>) -> Result<T> {
    let mut want = FIRST_READ_MAX;
    loop {
        st.fill_prefix(want)?;
        match parse(&st.prefix, st.len()) {
            Ok((parsed, _)) => {
                st.verdict = Some(Box::new(move |bytes, len| match parse(bytes, len) {
                    Ok(_) => Ok(()),
                    Err(Step::Fail(e)) => Err(e),
                    Err(Step::NeedMore(_)) => Err(changed("its metadata came up short")),
                }));
                return Ok(parsed);
            }
            Err(Step::Fail(e)) => return Err(e),
            Err(Step::NeedMore(upto)) => {
                if upto <= st.prefix.len() as u64 || st.input.end.is_some() {
                    return Err(changed("its metadata came up short"));
                }
                want = next_metadata_read(upto, want, st.prefix.len())?;
            }
        }
    }
}

/// How much metadata to hold next when a parser needs the first `upto`
/// bytes and `want` were asked for last (`have` are held): at least
/// double, never past [`MAX_READ_METADATA`], which a parser needing more is
/// refused at.
fn next_metadata_read(upto: u64, want: u64, have: usize) -> Result<u64> {
    if upto > MAX_READ_METADATA {
        let kind = ErrorKind::MetadataTooLarge { needed: upto, limit: MAX_READ_METADATA };
        return Err(Error::new(kind).at(have as u64));
    }
    Ok(upto.max(want.saturating_mul(2)).min(MAX_READ_METADATA))
}

/// A stream's state, locked (a panic elsewhere leaves nothing half-done
/// that matters to a reader: its position and prefix are always whole).
fn lock(stream: &Mutex<Stream>) -> std::sync::MutexGuard<'_, Stream> {
    stream.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn changed(what: &str) -> Error {
    Error::new(ErrorKind::FileChanged(what.to_string()))
}

/// The machine's memory in bytes: what sysconf(_SC_PHYS_PAGES) times the
/// page size is, since glibc and musl compute it from these two fields.
fn memory_bytes() -> u64 {
    let info = rustix::system::sysinfo();
    // `as`: the field is a C unsigned long, 32 bits on some targets.
    (info.totalram as u64).saturating_mul(u64::from(info.mem_unit))
}

pub(crate) fn page_size() -> u64 {
    let p = rustix::param::page_size();
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

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// A line of a `/proc` file such as `/proc/meminfo`: the numbers after
    /// `key`.
    fn proc_numbers(file: &str, key: &str) -> Vec<u64> {
        let text = std::fs::read_to_string(file).unwrap();
        let line = text.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("{file}: no {key}"));
        line[key.len()..].split_whitespace().filter_map(|w| w.parse().ok()).collect()
    }

    #[test]
    fn memory_and_page_size_are_the_kernels() {
        // MemTotal is the same count of pages as sysinfo's, in KiB.
        assert_eq!(memory_bytes(), proc_numbers("/proc/meminfo", "MemTotal:")[0] * 1024);
        let getconf = std::process::Command::new("getconf").arg("PAGESIZE").output().unwrap();
        assert_eq!(page_size().to_string(), String::from_utf8_lossy(&getconf.stdout).trim());
    }

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        // One below the hard limit first (one, so that tests running beside
        // this one keep their descriptors), unless there is none.
        let lim = getrlimit(Resource::Nofile);
        if let Some(hard) = lim.maximum {
            setrlimit(Resource::Nofile, Rlimit { current: Some(hard - 1), maximum: Some(hard) }).unwrap();
        }
        raise_open_file_limit();
        // "Max open files  SOFT  HARD  files"; "unlimited" is not a number.
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[3], words[4], "{line}");
    }

    #[test]
    fn forced_direct_reads_go_around_the_page_cache_and_return_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..(3 * 4096 + 100)).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let s = Source::open(&path, ReadMode::Mmap).unwrap();
        // Not asked to read directly (a small cached file), it refuses to.
        let mut buf = Vec::new();
        let e = s.read_direct(0, 10, &mut buf).unwrap_err();
        assert!(e.to_string().contains("internal error: a direct read of a buffered file"), "{e}");
        // The front-to-back tests pass on either path; this one says which ran.
        if !s.reads_directly(true) {
            eprintln!("SKIPPED: this file system refuses O_DIRECT");
            return;
        }
        for (offset, len) in [(0u64, 4096usize), (5000, 7000), (4096 * 3, 100), (1, data.len() - 1)] {
            let at = s.read_direct(offset, len, &mut buf).unwrap();
            let start = usize::try_from(offset).unwrap();
            assert_eq!(&buf[at..at + len], &data[start..start + len], "{offset}+{len}");
        }
        // Past the end: an error, not short bytes.
        assert!(s.read_direct(4096 * 3, 200, &mut buf).unwrap_err().to_string().contains("ended early"));
    }

    #[test]
    fn metadata_reads_double_up_to_the_limit_and_refuse_past_it() {
        assert_eq!(next_metadata_read(10, FIRST_READ_MAX, 0).unwrap(), 2 * FIRST_READ_MAX);
        assert_eq!(next_metadata_read(5 * FIRST_READ_MAX, FIRST_READ_MAX, 0).unwrap(), 5 * FIRST_READ_MAX);
        assert_eq!(next_metadata_read(MAX_READ_METADATA - 1, MAX_READ_METADATA / 2 + 1, 0).unwrap(), MAX_READ_METADATA);
        let e = next_metadata_read(MAX_READ_METADATA + 1, FIRST_READ_MAX, 10).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::MetadataTooLarge { needed, limit }
            if *needed == MAX_READ_METADATA + 1 && *limit == MAX_READ_METADATA),
            "{e}"
        );
        assert_eq!(e.offset(), Some(10));
    }
}
