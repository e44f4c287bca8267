//! [`ErrorKind`]: why an input was rejected.
//!
//! A plain enum of the core's own kinds (reading a file, JSON, which files
//! make one model, hashing), [`ErrorKind::Internal`] for a bug, and one
//! variant per layer above the core ([`ErrorKind::Format`],
//! [`ErrorKind::Provenance`]) that carries that layer's own kinds, which
//! the core cannot name (`layer.rs`, docs/adr/0041). A kind several
//! formats raise is the core's.

use std::path::{Path, PathBuf};

use super::layer::{Hint, LayerError, LayerKind};
use crate::text::escape_name;

/// Why a file (or set of shard files) was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    // Reading a file.
    /// The operating system refused to open, stat or read the file.
    #[error("{}", io_text(.0))]
    Io(#[from] std::io::Error),
    /// A FIFO, device, socket or (where links are not followed)
    /// [`SYMBOLIC_LINK`] was given instead of a file (a directory is the
    /// system's own "Is a directory" I/O error, as sha256sum reports it).
    #[error("not a regular file ({0})")]
    NotRegularFile(&'static str),
    /// The file has no bytes at all.
    #[error("file is empty (0 bytes)")]
    Empty,
    /// The file ends before a field that must be there.
    #[error("file ends inside the {what}: {needed} bytes needed, {available} left")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left in the file at that point.
        available: u64,
    },
    /// A declared count cannot possibly fit in the bytes left in the file.
    #[error("{what} {count} cannot fit in the {available} bytes left in the file")]
    CountTooLarge {
        /// Which count.
        what: &'static str,
        /// The declared value.
        count: u64,
        /// Bytes left in the file at that point.
        available: u64,
    },
    /// Metadata held in memory (read with `pread`, or from a stream) past
    /// the limit; a mapped file's is read in place. (The command line adds
    /// the flag that chose this.)
    #[error("metadata reaches byte {needed}, past the {limit}-byte limit for reading it into memory")]
    MetadataTooLarge {
        /// The file position the parser needed to read up to.
        needed: u64,
        /// The most metadata held in memory.
        limit: u64,
    },
    /// A process holds the file open for writing (a descriptor, or a shared
    /// writable map) as it is opened, so its bytes could change under the
    /// hashing without its times moving: refused rather than labelled (a
    /// read lease, `source/lease.rs`).
    #[error(
        "file is open for writing by a process (a descriptor or a shared writable map), so its content could change while it is hashed"
    )]
    OpenForWriting,
    /// The file changed (size, time or content) while it was being read.
    #[error("file changed while hashing ({0})")]
    FileChanged(String),
    /// A path opened beneath a root (the directory the tool was pointed
    /// at) that resolves outside it, through a symbolic link: refused by
    /// the open itself (docs/adr/0020).
    #[error("it leads outside {} through a symbolic link; nothing outside it is opened", root_text(.root))]
    OutsideRoot {
        /// The root, as it was named.
        root: PathBuf,
    },

    // JSON text (every format's).
    /// A JSON header or index longer than the reader accepts.
    #[error("declares a {declared}-byte JSON header; at most {limit} bytes are accepted")]
    HeaderTooLarge {
        /// The declared length.
        declared: u64,
        /// The limit.
        limit: u64,
    },
    /// JSON text that breaks the strict rules (syntax, repeated key, depth,
    /// trailing bytes, lone surrogate, not UTF-8).
    #[error("invalid JSON: {0}")]
    Json(String),
    /// Well-formed JSON whose members are not what the format requires.
    #[error("{0}")]
    Schema(String),

    // Which files make one model.
    /// A later shard was given instead of the first.
    #[error("this is shard {no} of {count}; pass the first shard instead: {}", name(.first))]
    NotFirstShard {
        /// 1-based shard number.
        no: u64,
        /// Shard count.
        count: u64,
        /// Path of the first shard.
        first: PathBuf,
    },
    /// A shard of the set could not be found.
    #[error("shard {no} of {count} is missing: {}", name(.path))]
    MissingShard {
        /// 1-based shard number.
        no: u64,
        /// Shard count.
        count: u64,
        /// The path looked for.
        path: PathBuf,
    },
    /// The same tensor name in two shards.
    #[error("tensor is also in {}", name(.other))]
    TensorInTwoShards {
        /// The other shard that holds the tensor.
        other: PathBuf,
    },
    /// The recomputed offsets or the data start do not fit in u64.
    #[error("{0} overflows u64")]
    OffsetOverflow(&'static str),

    // Hashing, and the commands.
    /// A byte-order conversion was handed part of a block. Input cannot
    /// cause this: it is a bug in how data was cut into pieces, reported
    /// instead of a wrong label.
    #[error(
        "internal error: {len} bytes handed to the {type_name} byte-order conversion are not a whole number of \
         {type_size}-byte blocks; please report this"
    )]
    PartialBlock {
        /// The length of the buffer.
        len: u64,
        /// The tensor type's name.
        type_name: &'static str,
        /// Bytes per block of the type.
        type_size: u64,
    },
    /// The caller cancelled the run (Ctrl-C in Python) before this model
    /// was finished.
    #[error("cancelled before the label was finished")]
    Cancelled,
    /// `diff` of two models of different formats.
    #[error(
        "A is {a} and B is {b}: different formats never share a label (names, types and metadata all change \
         in a conversion); compare models of one format"
    )]
    DifferentFormats {
        /// What A is.
        a: &'static str,
        /// What B is.
        b: &'static str,
    },
    /// A line of a `--check` list longer than a label line may be (the
    /// list is read a line at a time, never whole).
    #[error("{line}: line longer than {limit} bytes (the most a label line may hold)")]
    ListLineTooLong {
        /// Its number, from 1.
        line: u64,
        /// [`crate::check::MAX_LINE`].
        limit: usize,
    },

    // Kinds several formats raise.
    /// A blob of a model store or cache that is not what the store says
    /// (missing, not a file, another size, another digest): the store is
    /// damaged.
    #[error("{0}")]
    DamagedStore(String),
    /// A file named as weights that holds a Git LFS pointer, not the
    /// weights: the repository was cloned without its LFS files.
    #[error("is a Git LFS pointer, not the weights its name promises; `git lfs pull` fetches the file")]
    LfsPointer,
    /// A bool element whose byte is neither 0 nor 1 (found while its bytes
    /// are converted for hashing).
    #[error("a bool element holds the byte 0x{0:02x} (only 0 and 1 are bools)")]
    BoolByte(u8),

    /// The arguments cannot be honoured as given: standard input named
    /// twice, more hashing threads than [`crate::schedule::MAX_THREADS`]
    /// (asked for, or from the environment). The caller's mistake, not an
    /// input's, and not the operating system's either.
    #[error("{0}")]
    Usage(String),

    /// A state the code rules out was reached: a bug, said so, never a
    /// label or a wrong digest (never an I/O error either).
    #[error("internal error: {0} (please report it)")]
    Internal(String),

    // The layers above the core, each with its own kinds.
    /// A format's own kind (written in the format's folder): read it with
    /// [`ErrorKind::of`].
    #[error("{0}")]
    Format(LayerKind),
    /// A provenance kind (a statement, a signature, a key): read it with
    /// [`ErrorKind::of`].
    #[error("{0}")]
    Provenance(LayerKind),
}

impl ErrorKind {
    /// The layer's own kind, when this is one of type `K`: `None` for the
    /// core's kinds and for another layer's.
    ///
    /// ```
    /// use gguf_digest_core::error::{Error, ErrorKind, LayerError, LayerKind};
    ///
    /// /// A layer's kinds (a format writes its own in its folder).
    /// #[derive(Debug, thiserror::Error)]
    /// enum MyKind {
    ///     #[error("bad thing {0}")]
    ///     Bad(u8),
    /// }
    /// impl LayerError for MyKind {}
    ///
    /// let e = Error::new(ErrorKind::Format(LayerKind::new(MyKind::Bad(3))));
    /// assert!(matches!(e.kind().of::<MyKind>(), Some(MyKind::Bad(3))));
    /// assert_eq!(e.to_string(), "bad thing 3");
    /// assert!(ErrorKind::Empty.of::<MyKind>().is_none());
    /// ```
    pub fn of<K: LayerError>(&self) -> Option<&K> {
        self.layer().and_then(LayerKind::of)
    }

    /// The layer's kind this carries, if any.
    fn layer(&self) -> Option<&LayerKind> {
        match self {
            ErrorKind::Format(k) | ErrorKind::Provenance(k) => Some(k),
            _ => None,
        }
    }

    /// The command line's hint for this kind, if it adds one
    /// (`output::error_line`).
    pub fn hint(&self) -> Option<Hint> {
        match self {
            ErrorKind::MetadataTooLarge { .. } => Some(Hint::MetadataInMemory),
            _ => self.layer().and_then(|k| k.get().hint()),
        }
    }

    /// True when the input is simply not there (what `--ignore-missing`
    /// leaves out), beyond the operating system's `NotFound`.
    pub(crate) fn layer_not_found(&self) -> bool {
        self.layer().is_some_and(|k| k.get().is_not_found())
    }

    /// The same kind again, for the kinds `Error::repeat` keeps typed: those
    /// the command line adds a hint to, and a bug (never an I/O error);
    /// `None` otherwise.
    pub(crate) fn repeat_typed(&self) -> Option<ErrorKind> {
        match self {
            ErrorKind::MetadataTooLarge { needed, limit } => {
                Some(ErrorKind::MetadataTooLarge { needed: *needed, limit: *limit })
            }
            ErrorKind::Internal(what) => Some(ErrorKind::Internal(what.clone())),
            ErrorKind::Format(k) => k.get().repeat().map(ErrorKind::Format),
            ErrorKind::Provenance(k) => k.get().repeat().map(ErrorKind::Provenance),
            _ => None,
        }
    }
}

/// What [`ErrorKind::NotRegularFile`] says of a symbolic link that was not
/// followed.
pub const SYMBOLIC_LINK: &str = "a symbolic link";

/// A root as messages name it: `.` for the working directory.
fn root_text(root: &Path) -> String {
    if root.as_os_str().is_empty() { ".".to_string() } else { root.display().to_string() }
}

/// A path shown inside a message: escaped, so a hostile file name cannot
/// forge terminal output.
pub(crate) fn name(p: &Path) -> String {
    escape_name(p.as_os_str().as_encoded_bytes())
}

/// An I/O error worded as coreutils words it: without Rust's ` (os error N)`.
fn io_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if e.raw_os_error().is_some() => s.get(..i).unwrap_or(&s).to_string(),
        _ => s,
    }
}
