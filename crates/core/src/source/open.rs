//! Opening an input (a regular file by path, a stream), and the checks,
//! after hashing, that the file is still the one opened: its read lease
//! held, its size and times unchanged.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use super::stream::{STREAM_READ, Stream, StreamInput};
use super::{Backing, ReadMode, Source, UNKNOWN_LEN, lease, lock};
use crate::error::{Error, ErrorKind, Result};

/// What identifies one version of a file: if any of this differs between
/// the start and the end of hashing, the file changed underneath. (Device
/// and inode are left out: both checks fstat the same open file.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Identity {
    /// The file's length (what `Source::len` answers for a file).
    pub(super) len: u64,
    modified: Option<SystemTime>,
    ctime: (i64, i64),
}

impl Identity {
    fn of(m: &std::fs::Metadata) -> Identity {
        Identity { len: m.len(), modified: m.modified().ok(), ctime: (m.ctime(), m.ctime_nsec()) }
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
    pub(super) fn from_opened(path: &Path, file: File, mode: ReadMode) -> Result<Source> {
        let located = |e: Error| e.in_file(path);
        // Before the stat: the cache's racy rule needs a moment no later than it.
        let seen = SystemTime::now();
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
            file_id: Some(crate::cache::FileId::of(&meta, seen)),
            cache: OnceLock::new(),
            touched: AtomicBool::new(false),
        })
    }

    /// A stream read once, front to back, named `name` in output and errors
    /// (`-` for standard input, as sha256sum names it).
    ///
    /// Its metadata is read into memory as the format's parser asks (up to
    /// [`MAX_READ_METADATA`](super::MAX_READ_METADATA)) and kept; tensor data is hashed as it arrives,
    /// in file order (`Source::read_forward`); the rest is read to the
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
            file_id: None,
            cache: OnceLock::new(),
            touched: AtomicBool::new(false),
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
            let why = "standard input can be read only once, and an earlier argument named it";
            return Err(Error::new(ErrorKind::Usage(why.to_owned())).in_file(Path::new("-")));
        }
        // Changes only the pipe's buffer size; on anything but a pipe it
        // fails and changes nothing.
        super::platform::grow_stdin_pipe(STREAM_READ);
        let source = Source::from_reader(Path::new("-"), Box::new(io::stdin()));
        if let Some(mut st) = source.stream() {
            st.drain_on_drop = true;
        }
        Ok(source)
    }

    /// Fails once a process has opened the file for writing since it was
    /// opened (its read lease broke): hashing stops at the next piece and
    /// the lease is let go at once, so the writer waiting for it goes on.
    /// Passes for a file without a lease, and once the lease was released
    /// after a check.
    pub fn check_lease(&self) -> Result<()> {
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
            // The version pinned at the first request, asked for again.
            Backing::Ranged(r) => return r.check_unchanged().map_err(|e| e.in_file(&self.path)),
        };
        // No process opened it for writing since it was opened (which its
        // times may not show); the lease is let go here.
        self.lease.check_and_release(file).map_err(|e| e.in_file(&self.path))?;
        // None of its bytes read, every job from the cache: the label is the
        // one of the file as its identity stat saw it, so a change since
        // cannot be in it and a second stat has nothing to catch
        // (docs/adr/0033, "One statx").
        if !self.was_touched() && self.answered_by_cache() {
            self.commit_cache();
            return Ok(());
        }
        // fstat of the open file: the bytes we read are this inode's, whatever
        // the path names now.
        let now = file.metadata().map_err(|e| Error::from(e).in_file(&self.path))?;
        let now = Identity::of(&now);
        if now == self.identity {
            self.commit_cache();
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

/// The file changed underneath, as `what` says.
pub fn changed(what: &str) -> Error {
    Error::new(ErrorKind::FileChanged(what.to_string()))
}
