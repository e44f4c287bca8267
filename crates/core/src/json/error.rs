//! [`JsonError`]: why JSON text was refused, and where; serde_json's
//! errors in our words.

use std::fmt;

use serde_json::error::Category;

/// The deepest nesting serde_json parses before its own "recursion limit
/// exceeded" (it refuses the 128th level). A larger `max_depth` is lowered to
/// this, so that the depth error is always ours and says which limit applied.
pub(super) const SERDE_MAX_DEPTH: usize = 127;

/// Why JSON text was refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// byte offset in the JSON text (0-based) where the problem was found, when known
    pub offset: Option<u64>,
    /// what is wrong, e.g. "repeated key 'a'", "nested deeper than 64 levels", "trailing bytes after the JSON value", "not UTF-8", "lone surrogate ..."
    pub what: String,
}

impl JsonError {
    pub(super) fn at(offset: usize, what: String) -> Self {
        JsonError { offset: Some(offset as u64), what }
    }
}

impl fmt::Display for JsonError {
    /// `byte N: what`, the way the crate's other errors name a place.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "byte {o}: {}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for JsonError {}

/// serde_json's error as ours: its line and column (1-based, counting bytes)
/// made a byte offset, its message without the position and in our words
/// where ours are clearer.
pub(super) fn from_serde(e: &serde_json::Error, text: &str) -> JsonError {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = full.strip_suffix(&suffix).unwrap_or(&full);
    let offset = if e.classify() == Category::Eof {
        // serde_json points at the last byte it read; the value is cut off at the end.
        text.len()
    } else {
        line_start(text.as_bytes(), e.line()).saturating_add(e.column().saturating_sub(1)).min(text.len())
    };
    let what = match msg {
        "trailing characters" => "trailing bytes after the JSON value".to_string(),
        // serde_json names both cases of an unpaired surrogate in its own terms.
        "lone leading surrogate in hex escape" | "unexpected end of hex escape" => {
            "lone surrogate in a \\u escape (half of a UTF-16 pair without the other half)".to_string()
        }
        // Only when the caller's limit is above serde_json's: ours fires first otherwise.
        "recursion limit exceeded" => format!("nested deeper than {SERDE_MAX_DEPTH} levels"),
        "EOF while parsing a value" if text.bytes().all(is_json_space) => {
            "no JSON value (the text is empty or only whitespace)".to_string()
        }
        other => other.to_string(),
    };
    JsonError::at(offset, what)
}

/// The byte offset where 1-based line `line` starts (serde_json counts lines by LF).
fn line_start(text: &[u8], line: usize) -> usize {
    match line.checked_sub(2) {
        None => 0,
        Some(nth_lf) => text
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .nth(nth_lf)
            .map_or(text.len(), |(i, _)| i.saturating_add(1)),
    }
}

/// JSON's whitespace (RFC 8259 §2): nothing else may surround the value.
fn is_json_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn error_display() {
        let e = JsonError { offset: Some(7), what: "repeated key 'a'".into() };
        assert_eq!(e.to_string(), "byte 7: repeated key 'a'");
        let e = JsonError { offset: None, what: "x".into() };
        assert_eq!(e.to_string(), "x");
    }

    #[test]
    fn line_starts() {
        assert_eq!(line_start(b"ab\ncd\n", 0), 0);
        assert_eq!(line_start(b"ab\ncd\n", 1), 0);
        assert_eq!(line_start(b"ab\ncd\n", 2), 3);
        assert_eq!(line_start(b"ab\ncd\n", 3), 6);
        assert_eq!(line_start(b"ab\ncd\n", 9), 6);
    }
}
