//! The one error type of the crate.
//!
//! Every rejection carries what was wrong ([`ErrorKind`]) and, where known,
//! the argument the user gave, the file, the byte offset and the key or
//! tensor it concerns, so that the message printed by the binary points at
//! the exact place in the file, and says which argument led there
//! (docs/adr/0008-errors.md).
//!
//! `kind.rs` holds [`ErrorKind`]: the core's own kinds, and one variant per
//! layer above the core carrying that layer's kinds, written in the
//! layer's folder (`error.rs` there); `layer.rs` the type-erased
//! [`LayerKind`] and the [`LayerError`] trait those kinds implement;
//! `subject.rs` the key or tensor an error is about. A format's prefix
//! parser's "read more" signal, `Step`, is no error: it lives in `source/`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::text::defang;

mod kind;
mod layer;
mod subject;

pub use kind::{ErrorKind, SYMBOLIC_LINK};
pub use layer::{AsError, Hint, LayerError, LayerKind};
pub use subject::Subject;

/// Shorthand used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    pub fn new(kind: impl Into<ErrorKind>) -> Self {
        let kind = kind.into();
        Error(Box::new(Inner { argument: None, path: None, offset: None, subject: None, kind }))
    }

    /// Sets the byte offset in the file, unless one is already set.
    pub fn at(mut self, offset: u64) -> Self {
        self.0.offset.get_or_insert(offset);
        self
    }

    /// Sets the key or tensor this is about, unless one is already set.
    pub fn about(mut self, subject: Subject) -> Self {
        if self.0.subject.is_none() {
            self.0.subject = Some(subject);
        }
        self
    }

    /// Sets the file this is about, unless one is already set.
    pub fn in_file(mut self, path: &Path) -> Self {
        if self.0.path.is_none() {
            self.0.path = Some(path.to_path_buf());
        }
        self
    }

    /// Sets the argument the user gave that led to this error (a
    /// directory, an index, a first shard, an `ollama:` reference), unless
    /// one is already set.
    pub fn for_argument(mut self, argument: &Path) -> Self {
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
    /// True when the error came from the operating system not finding the
    /// file, or a layer's kind says the input is not there (an `hf:`
    /// reference not in the cache): what `--ignore-missing` leaves out.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.0.kind, ErrorKind::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
            || self.0.kind.layer_not_found()
    }

    /// The same error again, for a second subject that names the same file
    /// (a file labelled once answers every subject naming it): the same
    /// path, offset, subject and words, and `NotFound` stays `NotFound`. The
    /// kind becomes an I/O error carrying the words, since a kind can hold
    /// an [`std::io::Error`], which cannot be copied; a kind the command
    /// line adds a hint to, and an internal error, stay themselves.
    pub fn repeat(&self) -> Error {
        let io_kind = match &self.0.kind {
            ErrorKind::Io(e) => e.kind(),
            _ => std::io::ErrorKind::Other,
        };
        // Kinds the command line adds a hint to stay themselves, so that
        // the hint is printed again (`output::error_line`).
        let kind = self
            .0
            .kind
            .repeat_typed()
            .unwrap_or_else(|| ErrorKind::Io(std::io::Error::new(io_kind, self.0.kind.to_string())));
        Error(Box::new(Inner {
            argument: self.0.argument.clone(),
            path: self.0.path.clone(),
            offset: self.0.offset,
            subject: self.0.subject.clone(),
            kind,
        }))
    }

    /// The operating system's error number, when the error came from it.
    pub fn raw_os_error(&self) -> Option<i32> {
        match &self.0.kind {
            ErrorKind::Io(e) => e.raw_os_error(),
            _ => None,
        }
    }
}

impl Error {
    /// Well-formed JSON whose members are not what the format requires.
    pub fn schema(what: impl Into<String>) -> Self {
        Error::new(ErrorKind::Schema(what.into()))
    }

    /// A state the code rules out was reached (a bug): said so, never a
    /// label or a wrong digest.
    pub fn internal(what: &str) -> Self {
        Error::new(ErrorKind::Internal(what.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A library message names no command-line flag: the command line adds
    /// its hints itself (`output::error_line`).
    #[test]
    fn messages_name_no_flag() {
        let kinds = [ErrorKind::MetadataTooLarge { needed: 2, limit: 1 }];
        for kind in kinds {
            let text = Error::new(kind).to_string();
            assert!(!text.contains("--"), "{text}");
        }
    }

    #[test]
    fn message_names_file_offset_and_subject() {
        let e = Error::new(ErrorKind::Json("repeated key".into()))
            .at(40)
            .about(Subject::Key(b"general.name".to_vec()))
            .in_file(Path::new("m.gguf"));
        assert_eq!(e.to_string(), "m.gguf: byte 40, key 'general.name': invalid JSON: repeated key");
    }

    #[test]
    fn message_names_the_argument_unless_it_is_the_file() {
        let e = || Error::new(ErrorKind::Empty).at(40);
        let inner = e().in_file(Path::new("d/m.gguf")).for_argument(Path::new("d"));
        assert_eq!(inner.to_string(), "d: d/m.gguf: byte 40: file is empty (0 bytes)");
        assert_eq!(inner.argument(), Some(Path::new("d")));
        let same = e().in_file(Path::new("m.gguf")).for_argument(Path::new("m.gguf"));
        assert_eq!(same.to_string(), "m.gguf: byte 40: file is empty (0 bytes)");
        assert_eq!(same.argument_beside_path(), None);
        let no_file = e().for_argument(Path::new("ollama:m"));
        assert_eq!(no_file.to_string(), "ollama:m: byte 40: file is empty (0 bytes)");
        // The innermost argument stays.
        assert_eq!(no_file.for_argument(Path::new("x")).argument(), Some(Path::new("ollama:m")));
    }

    #[test]
    fn messages_never_hold_a_raw_control_character() {
        let first = PathBuf::from("d/a\r\x1b[2Kx.gguf");
        let e = Error::new(ErrorKind::NotFirstShard { no: 2, count: 2, first }).in_file(Path::new("d\n"));
        assert_eq!(e.detail(), "this is shard 2 of 2; pass the first shard instead: d/a\\r\\u{1b}[2Kx.gguf");
        assert_eq!(e.to_string(), format!("d\\n: {}", e.detail()));
        let other = PathBuf::from("d/b\u{202e}.gguf");
        assert_eq!(Error::new(ErrorKind::TensorInTwoShards { other }).detail(), "tensor is also in d/b\\u{202e}.gguf");
        let raw = Error::new(ErrorKind::DamagedStore("the blob /s/\x1b]0;x\x07 is bad".into()));
        assert_eq!(raw.to_string(), "the blob /s/\\u{1b}]0;x\\u{7} is bad");
    }

    /// A bug is a kind of its own, never an I/O error, and stays one when
    /// repeated.
    #[test]
    fn internal_is_no_io_error() {
        let e = Error::internal("x");
        assert!(matches!(e.kind(), ErrorKind::Internal(_)));
        assert_eq!(e.to_string(), "internal error: x (please report it)");
        assert!(matches!(e.repeat().kind(), ErrorKind::Internal(_)));
        assert_eq!(e.raw_os_error(), None);
        assert!(std::error::Error::source(&e).is_none());
    }

    #[test]
    fn first_location_wins() {
        let e = Error::new(ErrorKind::Empty).at(1).at(2);
        assert_eq!(e.offset(), Some(1));
    }

    #[test]
    fn subject_escapes_unprintable_bytes() {
        let s = Subject::Tensor(b"a\n\xff".to_vec());
        assert_eq!(s.to_string(), "tensor 'a\\n\\xff'");
    }
}
