//! The one error type of the crate.
//!
//! Every rejection carries what was wrong ([`ErrorKind`]) and, where known,
//! the argument the user gave, the file, the byte offset and the key or
//! tensor it concerns, so that the message printed by the binary points at
//! the exact place in the file, and says which argument led there
//! (docs/adr/0008-errors.md).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::text::{defang, escape_bytes, escape_name};

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What an error is about: a key, a tensor, or an entry not yet named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The n-th KV (0-based), before its key could be read.
    KvNumber(u64),
    /// The KV with this key.
    Key(Vec<u8>),
    /// The n-th tensor info (0-based), before its name could be read.
    TensorNumber(u64),
    /// The tensor with this name.
    Tensor(Vec<u8>),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::KvNumber(n) => write!(f, "KV #{n}"),
            Subject::Key(k) => write!(f, "key '{}'", escape_bytes(k)),
            Subject::TensorNumber(n) => write!(f, "tensor info #{n}"),
            Subject::Tensor(t) => write!(f, "tensor '{}'", escape_bytes(t)),
        }
    }
}

/// Why a file (or set of shard files) was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
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
    /// The first four bytes are not `GGUF`.
    #[error("not a GGUF file: magic is {}, expected 47475546 (\"GGUF\")", hex::encode(.0))]
    BadMagic([u8; 4]),
    /// GGUF version 1 used 32-bit counts and is not supported.
    #[error("GGUF version 1 (32-bit counts) is not supported; only versions 2 and 3 are")]
    Version1,
    /// A version field that reads as neither 2 nor 3 in either byte order.
    #[error("unsupported GGUF version {0} (0x{0:08x}); only versions 2 and 3 are supported")]
    UnsupportedVersion(u32),
    /// A KV whose key is the empty string.
    #[error("empty key")]
    EmptyKey,
    /// A key that appears twice in one file.
    #[error("duplicate key")]
    DuplicateKey,
    /// A tensor name that appears twice in one file.
    #[error("duplicate tensor name")]
    DuplicateTensor,
    /// A value type (or array element type) outside 0–12.
    #[error("unknown value type {0}")]
    UnknownValueType(u32),
    /// Arrays nested more than eight deep.
    #[error("arrays nested deeper than {max} levels")]
    NestingTooDeep {
        /// The deepest level allowed.
        max: u32,
    },
    /// A BOOL byte other than 0 or 1.
    #[error("BOOL value is byte {0}; only 0 and 1 are allowed")]
    InvalidBool(u8),
    /// A tensor with more than four dimensions.
    #[error("n_dims is {0}; at most 4 are allowed")]
    TooManyDims(u32),
    /// A dimension, element count or byte size that does not fit in i64.
    #[error("{0} overflows a signed 64-bit integer")]
    SizeOverflow(&'static str),
    /// A first dimension that is not a whole number of blocks.
    #[error("dim 0 is {dim}, not a multiple of the {type_name} block size {block_size}")]
    NotBlockMultiple {
        /// The stored first dimension.
        dim: u64,
        /// The type's block size.
        block_size: u64,
        /// The type's name.
        type_name: &'static str,
    },
    /// A ggml type id with no known size.
    #[error("unknown ggml type {0}")]
    UnknownGgmlType(u32),
    /// `general.alignment` stored with a type other than UINT32.
    #[error("general.alignment must be UINT32, found {0}")]
    AlignmentType(&'static str),
    /// `general.alignment` zero or not a power of two.
    #[error("general.alignment must be a non-zero power of two, found {0}")]
    AlignmentValue(u32),
    /// A `split.` count key that does not hold an integer.
    #[error("must hold an integer (UINT8..INT32, UINT64, INT64), found {0}")]
    SplitKeyType(&'static str),
    /// A tensor whose data range is not inside its file.
    #[error("data range {start}..{end} lies outside the file ({file_len} bytes)")]
    TensorOutOfFile {
        /// First byte of the range (file position), if computable.
        start: u64,
        /// One past the last byte (file position), or u64::MAX on overflow.
        end: u64,
        /// The file's length.
        file_len: u64,
    },
    /// Two tensors whose data ranges share a byte.
    #[error("data range overlaps tensor '{}'", escape_bytes(.other))]
    TensorsOverlap {
        /// The other tensor's name.
        other: Vec<u8>,
    },
    /// The recomputed offsets or the data start do not fit in u64.
    #[error("{0} overflows u64")]
    OffsetOverflow(&'static str),
    /// A big-endian tensor of a type that has no byte-swap rule.
    #[error("big-endian tensor of type {0} cannot be converted to little-endian")]
    BigEndianType(&'static str),
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
    /// A shard file name that does not follow `-NNNNN-of-MMMMM.gguf`.
    #[error(
        "split.count is {count} but the file name does not end in -{:05}-of-{:05}.gguf",
        .no.saturating_add(1), .count
    )]
    ShardName {
        /// split.no read from the file.
        no: u64,
        /// split.count read from the file.
        count: u64,
    },
    /// A shard of a split model arrived on a stream, where its siblings
    /// cannot be found. (The command line adds how to label it alone.)
    #[error(
        "this is shard {} of {count} of a split model; label the set by its first file's path \
         (…-00001-of-{count:05}.gguf)",
        .no.saturating_add(1)
    )]
    StreamShard {
        /// split.no read from the stream.
        no: u64,
        /// split.count read from the stream.
        count: u64,
    },
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
    /// A shard lacks a split key that a shard must have.
    #[error("shard has no {0} key")]
    MissingSplitKey(&'static str),
    /// A shard disagrees with its name or with the first shard.
    #[error("{key} is {found}, expected {expected}")]
    ShardMismatch {
        /// The split key that disagrees.
        key: &'static str,
        /// The value in the file.
        found: i128,
        /// The value the name or first shard implies.
        expected: i128,
    },
    /// The same key with different values in two shards.
    #[error("key has a different type or value in {}", name(.other))]
    ConflictingKey {
        /// The other shard that holds the key.
        other: PathBuf,
    },
    /// The same tensor name in two shards.
    #[error("tensor is also in {}", name(.other))]
    TensorInTwoShards {
        /// The other shard that holds the tensor.
        other: PathBuf,
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
    /// A safetensors header or index longer than the reader accepts.
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
    /// A public key that could not be read as one (a signature that does
    /// not verify is [`ErrorKind::SignatureFailed`]).
    #[error("signature: {0}")]
    Signature(String),
    /// A signed statement none of whose signatures verifies with the keys
    /// given (or a bare statement where a signature was required).
    #[error("signature: FAILED: {0}")]
    SignatureFailed(String),
    /// A statement given to `verify` with no public key to check its
    /// signature and no explicit choice to check the subjects alone: a
    /// pass must never look signed when nothing about the signer is known.
    #[error("signature: no public key was given to check it, so nothing was verified")]
    SignatureRequired,
    /// Well-formed JSON whose members are not what the format requires.
    #[error("{0}")]
    Schema(String),
    /// A safetensors dtype not in the table.
    #[error("unknown dtype '{}'", escape_bytes(.0.as_bytes()))]
    UnknownDtype(String),
    /// A tensor whose shape has no byte size, or whose data range does not hold it.
    #[error("{0}")]
    TensorSize(String),
    /// Tensor data ranges that do not tile the data region exactly.
    #[error("tensor data does not tile the data region: {0}")]
    Tiling(String),
    /// An index and the files it names disagree.
    #[error("{0}")]
    IndexMismatch(String),
    /// A metadata key with one value in a file's header and another in the index.
    #[error("metadata key has one value in the file's __metadata__ and another in the index")]
    MetadataConflict,
    /// A file name read from an input that is not a plain name in its directory.
    #[error("file name '{}' {why}: only a plain file name in the index's directory is accepted", escape_bytes(.name.as_bytes()))]
    NotPlainName {
        /// The name as read.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A directory that holds no model.
    #[error("holds no model: no *.safetensors.index.json, *.safetensors or *.gguf file")]
    NoModelInDirectory,
    /// A directory that holds several models.
    #[error("holds several models; name one of them: {}", .0.iter().map(|p| name(p)).collect::<Vec<_>>().join(", "))]
    SeveralModels(Vec<PathBuf>),
    /// An Ollama model name that is malformed or could leave the store.
    #[error("Ollama model name '{}' is not valid: {why}", escape_bytes(.name.as_bytes()))]
    OllamaName {
        /// The name as given.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// An Ollama blob that is not what its layer says (missing, not a file,
    /// another size, another digest): the store is damaged.
    #[error("{0}")]
    DamagedStore(String),
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
    /// A line of a `--check` list longer than a label line may be (the
    /// list is read a line at a time, never whole).
    #[error("{line}: line longer than {limit} bytes (the most a label line may hold)")]
    ListLineTooLong {
        /// Its number, from 1.
        line: u64,
        /// [`crate::check::MAX_LINE`].
        limit: usize,
    },
    /// The caller cancelled the run (Ctrl-C in Python) before this model
    /// was finished.
    #[error("cancelled before the label was finished")]
    Cancelled,
    /// A path opened beneath a root (the directory the tool was pointed
    /// at) that resolves outside it, through a symbolic link: refused by
    /// the open itself (docs/adr/0020).
    #[error("it leads outside {} through a symbolic link; nothing outside it is opened", root_text(.root))]
    OutsideRoot {
        /// The root, as it was named.
        root: PathBuf,
    },
    /// A file named as weights that holds a Git LFS pointer, not the
    /// weights: the repository was cloned without its LFS files.
    #[error("is a Git LFS pointer, not the weights its name promises; `git lfs pull` fetches the file")]
    LfsPointer,
    /// An entry of a directory that its label refuses (directory contract
    /// §2: a link leading outside, dangling, in a loop or to a directory,
    /// a FIFO or device, no file at all).
    #[error("{0}")]
    DirectoryEntry(String),
}

/// A root as messages name it: `.` for the working directory.
fn root_text(root: &Path) -> String {
    if root.as_os_str().is_empty() { ".".to_string() } else { root.display().to_string() }
}

/// A rejection: what went wrong, and where.
///
/// Boxed so that the `Result`s of the parser's hot paths stay one word wide.
#[derive(Debug)]
pub struct Error(Box<Inner>);

#[derive(Debug)]
struct Inner {
    argument: Option<PathBuf>,
    path: Option<PathBuf>,
    offset: Option<u64>,
    subject: Option<Subject>,
    kind: ErrorKind,
}

impl Error {
    /// An error of this kind with no location yet.
    pub fn new(kind: ErrorKind) -> Self {
        Error(Box::new(Inner { argument: None, path: None, offset: None, subject: None, kind }))
    }

    /// Sets the byte offset in the file, unless one is already set.
    pub(crate) fn at(mut self, offset: u64) -> Self {
        self.0.offset.get_or_insert(offset);
        self
    }

    /// Sets the key or tensor this is about, unless one is already set.
    pub(crate) fn about(mut self, subject: Subject) -> Self {
        if self.0.subject.is_none() {
            self.0.subject = Some(subject);
        }
        self
    }

    /// Sets the file this is about, unless one is already set.
    pub(crate) fn in_file(mut self, path: &Path) -> Self {
        if self.0.path.is_none() {
            self.0.path = Some(path.to_path_buf());
        }
        self
    }

    /// Sets the argument the user gave that led to this error (a
    /// directory, an index, a first shard, an `ollama:` reference), unless
    /// one is already set.
    pub(crate) fn for_argument(mut self, argument: &Path) -> Self {
        if self.0.argument.is_none() {
            self.0.argument = Some(argument.to_path_buf());
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The file, when the error concerns one.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The argument the user gave that led to this error, when known: the
    /// directory, index, first shard or `ollama:` reference whose model
    /// holds [`Error::path`], or the very file.
    pub fn argument(&self) -> Option<&Path> {
        self.0.argument.as_deref()
    }

    /// The argument, when a message names it beside the file: unless it is
    /// the file itself (a file is named once).
    pub fn argument_beside_path(&self) -> Option<&Path> {
        self.argument().filter(|a| self.path() != Some(*a))
    }

    /// The byte offset in the file, when known.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// The key or tensor concerned, when known.
    pub fn subject(&self) -> Option<&Subject> {
        self.0.subject.as_ref()
    }

    /// True when the error came from the operating system not finding the file.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.0.kind, ErrorKind::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }

    /// The same error again, for a second subject that names the same file
    /// (a file labelled once answers every subject naming it): the same
    /// path, offset, subject and words, and `NotFound` stays `NotFound`. The
    /// kind becomes an I/O error carrying the words, since a kind can hold
    /// an [`std::io::Error`], which cannot be copied.
    pub fn repeat(&self) -> Error {
        let io_kind = match &self.0.kind {
            ErrorKind::Io(e) => e.kind(),
            _ => std::io::ErrorKind::Other,
        };
        let kind = match self.0.kind {
            // Kinds the command line adds a hint to stay themselves, so that
            // the hint is printed again (`output::error_line`).
            ErrorKind::StreamShard { no, count } => ErrorKind::StreamShard { no, count },
            ErrorKind::MetadataTooLarge { needed, limit } => ErrorKind::MetadataTooLarge { needed, limit },
            _ => ErrorKind::Io(std::io::Error::new(io_kind, self.0.kind.to_string())),
        };
        Error(Box::new(Inner {
            argument: self.0.argument.clone(),
            path: self.0.path.clone(),
            offset: self.0.offset,
            subject: self.0.subject.clone(),
            kind,
        }))
    }

    /// The operating system's error number, when the error came from it.
    pub(crate) fn raw_os_error(&self) -> Option<i32> {
        match &self.0.kind {
            ErrorKind::Io(e) => e.raw_os_error(),
            _ => None,
        }
    }
}

/// What [`ErrorKind::NotRegularFile`] says of a symbolic link that was not
/// followed.
pub const SYMBOLIC_LINK: &str = "a symbolic link";

/// A path shown inside a message: escaped, so a hostile file name cannot
/// forge terminal output.
fn name(p: &Path) -> String {
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

impl Error {
    /// Well-formed JSON whose members are not what the format requires.
    pub(crate) fn schema(what: impl Into<String>) -> Self {
        Error::new(ErrorKind::Schema(what.into()))
    }

    /// A state the code rules out was reached (a bug): said so, never a
    /// label or a wrong digest.
    pub(crate) fn internal(what: &str) -> Self {
        Error::from(std::io::Error::other(format!("internal error: {what} (please report it)")))
    }
}

/// JSON that breaks the strict reader's rules, at its byte offset.
impl From<crate::json::JsonError> for Error {
    fn from(e: crate::json::JsonError) -> Self {
        let error = Error::new(ErrorKind::Json(e.what));
        match e.offset {
            Some(offset) => error.at(offset),
            None => error,
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(ErrorKind::Io(e))
    }
}

impl Error {
    /// The message without the argument's and the file's names: where in
    /// the file, and what. Safe to print: no control character or
    /// bidirectional override of a name it quotes is left raw.
    pub fn detail(&self) -> String {
        struct Detail<'a>(&'a Inner);
        impl fmt::Display for Detail<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_detail(self.0, f)
            }
        }
        defang(&Detail(&self.0).to_string()).into_owned()
    }
}

fn write_detail(inner: &Inner, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match (&inner.offset, &inner.subject) {
        (Some(o), Some(s)) => write!(f, "byte {o}, {s}: ")?,
        (Some(o), None) => write!(f, "byte {o}: ")?,
        (None, Some(s)) => write!(f, "{s}: ")?,
        (None, None) => {}
    }
    write!(f, "{}", inner.kind)
}

/// `ARG: FILE: byte N, SUBJECT: what`: the argument when it is not the
/// file itself, the file, where, what; every name made safe to print.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        for p in [self.argument_beside_path(), self.path()].into_iter().flatten() {
            text.push_str(&p.display().to_string());
            text.push_str(": ");
        }
        text.push_str(&self.detail());
        f.write_str(&defang(&text))
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a parse of a file's prefix could not finish: the protocol between a
/// format's pure parser, which may be handed only the first bytes of a
/// file, and `Source`, which reads more and tries again.
#[derive(Debug)]
pub(crate) enum Step {
    /// The file itself is malformed: a final error.
    Fail(Error),
    /// The cursor holds a prefix of the file and the read needs the bytes up
    /// to this file position.
    NeedMore(u64),
}

impl From<Error> for Step {
    fn from(e: Error) -> Self {
        Step::Fail(e)
    }
}

impl From<ErrorKind> for Step {
    fn from(k: ErrorKind) -> Self {
        Step::Fail(Error::new(k))
    }
}

impl Step {
    /// Attaches a location to a final error; a request for more bytes passes.
    pub(crate) fn map_err(self, f: impl FnOnce(Error) -> Error) -> Step {
        match self {
            Step::Fail(e) => Step::Fail(f(e)),
            more => more,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A library message names no command-line flag: the command line adds
    /// its hints itself (`output::error_line`).
    #[test]
    fn messages_name_no_flag() {
        let kinds = [ErrorKind::StreamShard { no: 0, count: 2 }, ErrorKind::MetadataTooLarge { needed: 2, limit: 1 }];
        for kind in kinds {
            let text = Error::new(kind).to_string();
            assert!(!text.contains("--"), "{text}");
        }
    }

    #[test]
    fn message_names_file_offset_and_subject() {
        let e = Error::new(ErrorKind::DuplicateKey)
            .at(40)
            .about(Subject::Key(b"general.name".to_vec()))
            .in_file(Path::new("m.gguf"));
        assert_eq!(e.to_string(), "m.gguf: byte 40, key 'general.name': duplicate key");
    }

    #[test]
    fn message_names_the_argument_unless_it_is_the_file() {
        let e = || Error::new(ErrorKind::DuplicateKey).at(40);
        let inner = e().in_file(Path::new("d/m.gguf")).for_argument(Path::new("d"));
        assert_eq!(inner.to_string(), "d: d/m.gguf: byte 40: duplicate key");
        assert_eq!(inner.argument(), Some(Path::new("d")));
        let same = e().in_file(Path::new("m.gguf")).for_argument(Path::new("m.gguf"));
        assert_eq!(same.to_string(), "m.gguf: byte 40: duplicate key");
        assert_eq!(same.argument_beside_path(), None);
        let no_file = e().for_argument(Path::new("ollama:m"));
        assert_eq!(no_file.to_string(), "ollama:m: byte 40: duplicate key");
        // The innermost argument stays.
        assert_eq!(no_file.for_argument(Path::new("x")).argument(), Some(Path::new("ollama:m")));
    }

    #[test]
    fn messages_never_hold_a_raw_control_character() {
        let names = vec![PathBuf::from("d/a\r\x1b[2Kx.gguf"), PathBuf::from("d/b\u{202e}.gguf")];
        let e = Error::new(ErrorKind::SeveralModels(names)).in_file(Path::new("d\n"));
        assert_eq!(e.detail(), "holds several models; name one of them: d/a\\r\\u{1b}[2Kx.gguf, d/b\\u{202e}.gguf");
        assert_eq!(e.to_string(), format!("d\\n: {}", e.detail()));
        let raw = Error::new(ErrorKind::DamagedStore("the blob /s/\x1b]0;x\x07 is bad".into()));
        assert_eq!(raw.to_string(), "the blob /s/\\u{1b}]0;x\\u{7} is bad");
    }

    #[test]
    fn first_location_wins() {
        let e = Error::new(ErrorKind::EmptyKey).at(1).at(2);
        assert_eq!(e.offset(), Some(1));
    }

    #[test]
    fn subject_escapes_unprintable_bytes() {
        let s = Subject::Tensor(b"a\n\xff".to_vec());
        assert_eq!(s.to_string(), "tensor 'a\\n\\xff'");
    }
}
