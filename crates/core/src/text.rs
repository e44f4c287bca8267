//! Showing bytes read from an input as text that cannot forge output.
//!
//! Keys, tensor names and paths come from files; printed raw, a hostile
//! one could move the cursor, clear a line or reorder what a terminal
//! shows. Errors, warnings, `--check` results, `inspect`, `diff` and JSON
//! all show them through here (README, "Names in output").

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for a character that must never reach a terminal as it is: a C0
/// or C1 control or DEL (which move the cursor, erase, start escape
/// sequences), or a bidirectional embedding, override or isolate
/// (U+202A–U+202E, U+2066–U+2069), which reorders the text that follows
/// on screen, so that `FAILED` can be shown where `OK` was written.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The escape of an unsafe character: `\n`, `\r`, `\t`, else `\u{…}`.
fn push_escape(s: &mut String, c: char) {
    match c {
        '\n' => s.push_str("\\n"),
        '\r' => s.push_str("\\r"),
        '\t' => s.push_str("\\t"),
        c => {
            // Writing to a String cannot fail.
            let _ = write!(s, "{}", c.escape_unicode());
        }
    }
}

/// Escapes `b`: `\` as `\\`, unsafe characters (`is_unsafe`) as `\n`,
/// `\r`, `\t` or `\u{…}`, bytes that are not UTF-8 as `\xff`; with
/// `quote`, also `'` as `\'` (for text shown inside single quotes).
fn escape(b: &[u8], quote: bool) -> String {
    let mut s = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => s.push_str("\\\\"),
                '\'' if quote => s.push_str("\\'"),
                c if is_unsafe(c) => push_escape(&mut s, c),
                c => s.push(c),
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(s, "\\x{byte:02x}");
        }
    }
    s
}

/// Shows bytes as text to be put in single quotes (a key, a tensor name, a
/// string value): printable text as is, `\`, `'` and every unsafe character
/// (`is_unsafe`) escaped, bytes that are not UTF-8 as `\xff`, so that a
/// hostile key or tensor name cannot forge terminal output.
pub fn escape_bytes(b: &[u8]) -> String {
    escape(b, true)
}

/// Shows a file name as text, unquoted (a path in a message or a result
/// line): as [`escape_bytes`], but `'` is left as it is.
pub fn escape_name(b: &[u8]) -> String {
    escape(b, false)
}

/// True when [`escape_name`] would show `b` otherwise than as it is, `\`
/// aside: it holds an unsafe character or bytes that are not UTF-8.
pub fn name_needs_escape(b: &[u8]) -> bool {
    b.utf8_chunks().any(|chunk| !chunk.invalid().is_empty() || chunk.valid().chars().any(is_unsafe))
}

/// Text made safe to print: every unsafe character (`is_unsafe`)
/// escaped, everything else (`\` included) as it is. The last guard on a
/// message that was put together from names shown raw; text already
/// escaped passes unchanged.
pub fn defang(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if is_unsafe(c) => push_escape(&mut s, c),
            c => s.push(c),
        }
    }
    Cow::Owned(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_bytes(b"ok.name"), "ok.name");
        assert_eq!(escape_bytes(b"\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(escape_bytes("é".as_bytes()), "é");
        assert_eq!(escape_bytes(b"a\n\xff'"), "a\\n\\xff\\'");
        assert_eq!(escape_name(b"a\n\xff'\\"), "a\\n\\xff'\\\\");
    }

    #[test]
    fn bidirectional_overrides_and_c1_controls_are_escaped() {
        for (c, shown) in [
            ('\u{202a}', "\\u{202a}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2069}', "\\u{2069}"),
            ('\u{9b}', "\\u{9b}"),
            ('\u{7f}', "\\u{7f}"),
        ] {
            let name = format!("a{c}b");
            assert_eq!(escape_name(name.as_bytes()), format!("a{shown}b"));
            assert_eq!(escape_bytes(name.as_bytes()), format!("a{shown}b"));
            assert!(name_needs_escape(name.as_bytes()));
            assert_eq!(defang(&name), format!("a{shown}b"));
        }
        // Neighbours that reorder nothing stay as they are.
        for c in ['\u{2029}', '\u{202f}', '\u{2065}', '\u{206a}', 'é'] {
            let name = format!("a{c}b");
            assert_eq!(escape_name(name.as_bytes()), name);
            assert!(!name_needs_escape(name.as_bytes()));
        }
    }

    #[test]
    fn defang_leaves_escaped_text_and_backslashes() {
        assert_eq!(defang("a\\nb"), "a\\nb");
        assert!(matches!(defang("plain: text"), Cow::Borrowed(_)));
        assert_eq!(defang("a\r\u{1b}[2Kb\n"), "a\\r\\u{1b}[2Kb\\n");
        assert!(name_needs_escape(b"\xff"));
        assert!(!name_needs_escape(b"a\\b c'"));
    }
}
