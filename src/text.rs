//! Showing bytes read from an input as text that cannot forge output.
//!
//! Keys, tensor names and paths come from files; printed raw, a hostile
//! one could move the cursor or clear a terminal. Errors, `inspect`, `diff`
//! and JSON all show them through here.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

/// Shows bytes as text: printable ASCII as is, everything else escaped, so
/// that a hostile key or tensor name cannot forge terminal output.
pub fn escape_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => s.push_str("\\n"),
                '\r' => s.push_str("\\r"),
                '\t' => s.push_str("\\t"),
                '\\' => s.push_str("\\\\"),
                '\'' => s.push_str("\\'"),
                c if c.is_control() => s.push_str(&c.escape_unicode().to_string()),
                c => s.push(c),
            }
        }
        for byte in chunk.invalid() {
            s.push_str(&format!("\\x{byte:02x}"));
        }
    }
    s
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
    }
}
