//! The rules serde_json's `Value` cannot express, checked by a scan over
//! the text: nesting depth and repeated keys, and, before anything is
//! built, the count of values.

use std::borrow::Cow;
use std::collections::HashSet;

use super::error::{JsonError, from_serde};
use crate::text::escape_bytes;

/// The most values a text may hold. A safetensors header of 20,000 tensors
/// holds about 200,000; an Ollama manifest far fewer. Past this, tiny values
/// (`[0,0,0,…]`: 2 bytes of text, ~110 bytes of heap each) would let a
/// 100,000,000-byte header take gigabytes.
pub const MAX_VALUES: usize = 4_000_000;

/// Where the value past [`MAX_VALUES`] starts, if the text holds that many:
/// an upper bound on the count (every value but the first of a container
/// follows a comma; containers count themselves), strings skipped.
pub(super) fn too_many_values(text: &[u8]) -> Option<usize> {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in text.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                count = count.saturating_add(1);
                if count > MAX_VALUES {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// One container open at the scan's position.
enum Open<'a> {
    Array,
    /// The keys seen so far, and whether the next string is a key (after
    /// `{` or `,`) rather than a value.
    Object {
        keys: HashSet<Cow<'a, str>>,
        expect_key: bool,
    },
}

/// Checks the rules serde_json's `Value` cannot: depth and repeated keys.
///
/// `text` is JSON serde_json accepted, or a prefix of it that ends where
/// serde_json found a problem; a prefix may end inside a string, which ends
/// the scan. Because the syntax is known good, brackets outside strings are
/// containers and a string right after `{` or `,` in an object is a key.
pub(super) fn check_structure(text: &str, max_depth: usize) -> Result<Vec<(usize, usize)>, JsonError> {
    let bytes = text.as_bytes();
    // The span of every number token, in text order: the order in which
    // `convert` meets the numbers of the parsed value.
    let mut numbers: Vec<(usize, usize)> = Vec::new();
    // At most `max_depth` entries: the depth check comes before each push.
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'[' | b'{' => {
                if open.len() >= max_depth {
                    return Err(JsonError::at(i, format!("nested deeper than {max_depth} levels")));
                }
                open.push(if b == b'[' {
                    Open::Array
                } else {
                    Open::Object { keys: HashSet::new(), expect_key: true }
                });
            }
            b']' | b'}' => {
                open.pop();
            }
            b',' => {
                if let Some(Open::Object { expect_key, .. }) = open.last_mut() {
                    *expect_key = true;
                }
            }
            b'"' => {
                let Some(end) = string_end(bytes, i) else {
                    return Ok(numbers);
                };
                if let Some(Open::Object { keys, expect_key: expect_key @ true }) = open.last_mut() {
                    *expect_key = false;
                    let key = unescape(text, i, end)?;
                    if keys.contains(&key) {
                        return Err(JsonError::at(i, format!("repeated key '{}'", escape_bytes(key.as_bytes()))));
                    }
                    keys.insert(key);
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let len = bytes.get(i..).map_or(0, |rest| {
                    rest.iter()
                        .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                        .unwrap_or(rest.len())
                });
                let end = i.saturating_add(len);
                numbers.push((i, end));
                // The loop's increment steps past the token's last byte.
                i = end.saturating_sub(1);
            }
            _ => {}
        }
        // i < bytes.len(), so this cannot saturate.
        i = i.saturating_add(1);
    }
    Ok(numbers)
}

/// The index of the quote that closes the string opening at `start`, or
/// `None` when the text ends first.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start.checked_add(1)?;
    loop {
        let rel = bytes.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
        let at = i.checked_add(rel)?;
        match bytes.get(at) {
            Some(b'"') => return Some(at),
            // A backslash and the byte it escapes; a `\u` escape's hex digits
            // hold neither quote nor backslash.
            _ => i = at.checked_add(2)?,
        }
    }
}

/// The key spanning `text[start..=end]` (quotes included), unescaped by
/// serde_json when it holds an escape: `"\u0061"` and `"a"` are one key.
fn unescape(text: &str, start: usize, end: usize) -> Result<Cow<'_, str>, JsonError> {
    let quoted = text.get(start..=end).unwrap_or("");
    let inner = quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or("");
    if !inner.contains('\\') {
        return Ok(Cow::Borrowed(inner));
    }
    // serde_json accepted this string when it parsed the text, so this does too.
    serde_json::from_str::<String>(quoted).map(Cow::Owned).map_err(|e| {
        let mut err = from_serde(&e, quoted);
        err.offset = Some(start as u64);
        err
    })
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::json::parse_strict;

    #[test]
    fn a_text_of_too_many_values_is_refused_before_it_is_built() {
        let just = format!("[{}]", vec!["0"; MAX_VALUES - 1].join(","));
        assert!(parse_strict(just.as_bytes(), 64).is_ok(), "the limit itself is fine");
        let over = format!("[{}]", vec!["0"; MAX_VALUES].join(","));
        let e = parse_strict(over.as_bytes(), 64).unwrap_err();
        assert!(e.what.contains("more than 4000000 values"), "{}", e.what);
        // Commas, brackets and braces inside strings are not values.
        let quoted = format!("[\"{}\"]", ",[{".repeat(MAX_VALUES));
        assert!(parse_strict(quoted.as_bytes(), 64).is_ok());
    }
}
