//! The crate's one strict JSON reader: safetensors headers, safetensors index
//! files and (later) Ollama manifests all go through [`parse_strict`].
//!
//! A label must not depend on which JSON reader a tool happens to use, so
//! text that readers disagree on is refused instead of read one way: it must
//! be UTF-8 and exactly one JSON value (RFC 8259) with only JSON whitespace
//! around it; no container nests deeper than the caller's limit; no object
//! holds a key twice (compared after unescaping); no string holds a lone
//! UTF-16 surrogate escape. Every number is kept, and a non-negative integer
//! written without fraction or exponent that fits in u64 stays apart
//! ([`Json::Uint`]) from every other number, so that callers can demand an
//! exact integer for shapes and offsets.
//!
//! serde_json does the parsing (syntax, escapes, surrogates, numbers,
//! trailing bytes): it is already a dependency, and the safetensors reference
//! implementation reads headers with it, so we agree with it on what JSON
//! is. A custom serde `Visitor` would be the natural place for the two rules
//! serde_json's `Value` cannot express, but serde's traits are not reachable
//! without adding `serde` as a dependency; so a small scan over the text
//! serde_json accepted checks them instead: nesting depth and repeated keys.
//! It never recurses and validates nothing else, and keys with escapes are
//! unescaped by serde_json too.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde_json::Value;
use serde_json::error::Category;

use crate::text::escape_bytes;

/// The deepest nesting serde_json parses before its own "recursion limit
/// exceeded" (it refuses the 128th level). A larger `max_depth` is lowered to
/// this, so that the depth error is always ours and says which limit applied.
const SERDE_MAX_DEPTH: usize = 127;

/// A JSON value as the strict reader returns it. Object members keep file order; keys are unique.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A non-negative integer without fraction or exponent that fits a u64
    /// (its token is its decimal digits: JSON allows no other spelling).
    Uint(u64),
    /// Any other number (negative, fractional, exponent, or too large): its
    /// value as parsed, and its token exactly as written (`1e3`, `-0`,
    /// `1.50`), which a canonical encoding of the text needs.
    Number(f64, String),
    /// A string, unescaped.
    Str(String),
    /// An array, elements in file order.
    Array(Vec<Json>),
    /// An object: its members in file order, each key once.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The kind of value, for messages: "null", "boolean", "integer",
    /// "number", "string", "array" or "object".
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Uint(_) => "integer",
            Json::Number(..) => "number",
            Json::Str(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// The members of an object, in file order.
    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value of an integer in 0…2^64−1 written without fraction or
    /// exponent; `None` for every other value, `1.0` and `1e3` included.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Uint(n) => Some(*n),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The member of an object with this key (a linear search: to visit
    /// every member, iterate [`Json::as_object`] instead).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object()?.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// Why JSON text was refused, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// byte offset in the JSON text (0-based) where the problem was found, when known
    pub offset: Option<u64>,
    /// what is wrong, e.g. "repeated key 'a'", "nested deeper than 64 levels", "trailing bytes after the JSON value", "not UTF-8", "lone surrogate ..."
    pub what: String,
}

impl JsonError {
    fn at(offset: usize, what: String) -> Self {
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

/// Parses `text` as one strict JSON value: UTF-8, exactly one value with only
/// JSON whitespace (space, tab, CR, LF) around it, no container nested more
/// than `max_depth` levels (the outermost is level 1; values above 127 act as
/// 127, serde_json's own limit), no key twice in one object after
/// unescaping, no lone surrogate escape. Numbers whose magnitude overflows an
/// f64 (`1e400`) are refused, as serde_json refuses them.
///
/// The error is the first problem in the text, with its byte offset.
/// Allocates in proportion to `text` only.
pub fn parse_strict(text: &[u8], max_depth: usize) -> Result<Json, JsonError> {
    let max_depth = max_depth.min(SERDE_MAX_DEPTH);
    // Building the value costs about 110 bytes of heap a value (serde_json's
    // tree and ours), whatever the text: refuse before building when the
    // count alone could not be held.
    if let Some(at) = too_many_values(text) {
        let what = format!(
            "holds more than {MAX_VALUES} values (arrays, objects, strings, numbers, literals): \
             past this reader's limit, about {} MiB of memory",
            MAX_VALUES.saturating_mul(110) >> 20
        );
        return Err(JsonError::at(at, what));
    }
    // serde_json reads the longest UTF-8 prefix: an error it finds before the
    // first bad byte comes first in the text, so it wins.
    let (valid, bad_utf8) = match std::str::from_utf8(text) {
        Ok(s) => (s, None),
        Err(e) => {
            let up_to = e.valid_up_to();
            let prefix = text.get(..up_to).and_then(|p| std::str::from_utf8(p).ok()).unwrap_or("");
            let byte = text.get(up_to).copied().unwrap_or(0);
            (prefix, Some(JsonError::at(up_to, format!("not UTF-8 (byte 0x{byte:02x})"))))
        }
    };
    let parsed = serde_json::from_str::<Value>(valid);
    // `first` is the earliest error from serde_json or the UTF-8 check, and
    // `checked` the text before it, which serde_json accepted as far as it went.
    let (first, checked) = match (parsed, bad_utf8) {
        (Ok(value), None) => {
            let numbers = check_structure(valid, max_depth)?;
            let mut tokens = numbers.into_iter().map(|(a, b)| valid.get(a..b).unwrap_or(""));
            return Ok(convert(value, &mut tokens));
        }
        (Ok(_), Some(bad)) => (bad, valid),
        (Err(e), bad) => {
            let err = from_serde(&e, valid);
            match bad {
                // The prefix merely ended where the bad byte is: that byte is the problem.
                Some(bad) if e.classify() == Category::Eof || err.offset >= bad.offset => (bad, valid),
                _ => {
                    let end = err.offset.and_then(|o| usize::try_from(o).ok()).unwrap_or(valid.len());
                    (err, valid.get(..end).unwrap_or(valid))
                }
            }
        }
    };
    // A repeated key or a too-deep container before that point comes first.
    check_structure(checked, max_depth)?;
    Err(first)
}

/// The most values a text may hold. A safetensors header of 20,000 tensors
/// holds about 200,000; an Ollama manifest far fewer. Past this, tiny values
/// (`[0,0,0,…]`: 2 bytes of text, ~110 bytes of heap each) would let a
/// 100,000,000-byte header take gigabytes.
pub const MAX_VALUES: usize = 4_000_000;

/// Where the value past [`MAX_VALUES`] starts, if the text holds that many:
/// an upper bound on the count (every value but the first of a container
/// follows a comma; containers count themselves), strings skipped.
fn too_many_values(text: &[u8]) -> Option<usize> {
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

/// serde_json's error as ours: its line and column (1-based, counting bytes)
/// made a byte offset, its message without the position and in our words
/// where ours are clearer.
fn from_serde(e: &serde_json::Error, text: &str) -> JsonError {
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
fn check_structure(text: &str, max_depth: usize) -> Result<Vec<(usize, usize)>, JsonError> {
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

/// The parsed value as ours, each number with the next token of `tokens`
/// (the numbers' tokens in text order). Recursion is bounded: the value
/// passed the depth check, which allows at most [`SERDE_MAX_DEPTH`] levels.
fn convert<'t>(v: Value, tokens: &mut impl Iterator<Item = &'t str>) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(b),
        // serde_json keeps a u64 only for an integer without sign, fraction or
        // exponent that fits; `-0`, `1.0`, `1e3` and 2^64 arrive as f64.
        Value::Number(n) => {
            let token = tokens.next().unwrap_or_default();
            match n.as_u64() {
                Some(u) => Json::Uint(u),
                // Always Some without serde_json's arbitrary_precision feature.
                None => Json::Number(n.as_f64().unwrap_or(f64::NAN), token.to_string()),
            }
        }
        Value::String(s) => Json::Str(s),
        Value::Array(a) => Json::Array(a.into_iter().map(|e| convert(e, tokens)).collect()),
        // preserve_order: members in file order; no duplicates were merged,
        // as check_structure refused them.
        Value::Object(m) => Json::Object(m.into_iter().map(|(k, v)| (k, convert(v, tokens))).collect()),
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

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

    fn ok(text: &str) -> Json {
        parse_strict(text.as_bytes(), 64).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    /// The error's offset and message.
    fn err(text: &[u8]) -> (u64, String) {
        let e = parse_strict(text, 64).expect_err(&String::from_utf8_lossy(text));
        (e.offset.expect("offset"), e.what)
    }

    fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn values_and_accessors() {
        let v = ok(r#"{"b":[1,-2.5,"x",true,null,{}],"a":"s\"\\\n\u00e9"}"#);
        let members = v.as_object().unwrap();
        assert_eq!(members.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["b", "a"], "file order");
        let b = v.get("b").unwrap().as_array().unwrap();
        assert_eq!(b[0], Json::Uint(1));
        assert_eq!(b[1], Json::Number(-2.5, "-2.5".into()));
        assert_eq!(b[2].as_str(), Some("x"));
        assert_eq!(b[3], Json::Bool(true));
        assert_eq!(b[4], Json::Null);
        assert_eq!(b[5], Json::Object(vec![]));
        assert_eq!(v.get("a").unwrap().as_str(), Some("s\"\\\né"));
        assert_eq!(v.get("c"), None);
        assert_eq!(b[0].get("a"), None);
        assert_eq!(b[0].as_u64(), Some(1));
        assert_eq!(b[2].as_u64(), None);
        assert_eq!((b[0].as_str(), b[0].as_array(), b[0].as_object()), (None, None, None));
        let kinds: Vec<_> = b.iter().map(Json::kind).collect();
        assert_eq!(kinds, ["integer", "number", "string", "boolean", "null", "object"]);
        assert_eq!(ok("[]").kind(), "array");
    }

    #[test]
    fn error_display() {
        let e = JsonError { offset: Some(7), what: "repeated key 'a'".into() };
        assert_eq!(e.to_string(), "byte 7: repeated key 'a'");
        let e = JsonError { offset: None, what: "x".into() };
        assert_eq!(e.to_string(), "x");
    }

    #[test]
    fn repeated_keys() {
        assert_eq!(err(br#"{"a":1,"b":2,"a":3}"#), (13, "repeated key 'a'".into()));
        assert_eq!(err(br#"{"x":{"a":1,"a":2}}"#), (12, "repeated key 'a'".into()));
        assert_eq!(err(br#"[0,[{"k":{},"k":[]}]]"#), (12, "repeated key 'k'".into()));
        // Equal after unescaping, either one escaped.
        assert_eq!(err(br#"{"a":1,"\u0061":2}"#), (7, "repeated key 'a'".into()));
        assert_eq!(err(br#"{"\u0061":1, "a":2}"#), (13, "repeated key 'a'".into()));
        assert_eq!(err(br#"{"\/":1,"/":2}"#).1, "repeated key '/'");
        // The same key after a nested object closed is still in the outer one.
        assert_eq!(err(br#"{"a":{"b":1},"a":2}"#), (13, "repeated key 'a'".into()));
        // The key is escaped in the message: no terminal control from a file.
        assert_eq!(err(br#"{"\u001b[2J\n'":1,"\u001b[2J\n'":2}"#).1, "repeated key '\\u{1b}[2J\\n\\''");
    }

    #[test]
    fn same_text_in_other_places_is_no_repeat() {
        ok(r#"{"a":{"a":1},"b":{"a":2}}"#);
        ok(r#"[{"a":1},{"a":2}]"#);
        ok(r#"{"a":"a","b":"a","c":["a","a"]}"#);
        ok(r#"{"a\"":1,"a\\":2,"a":3,"b":{"a\\":4}}"#);
        ok(r#"{"a":1,"A":2,"a ":3}"#);
    }

    #[test]
    fn depth_limit() {
        ok(&nested("[", "1", "]", 64));
        assert_eq!(err(nested("[", "1", "]", 65).as_bytes()), (64, "nested deeper than 64 levels".into()));
        ok(&nested(r#"{"a":"#, "1", "}", 64));
        assert_eq!(err(nested(r#"{"a":"#, "1", "}", 65).as_bytes()), (320, "nested deeper than 64 levels".into()));
        ok(&nested(r#"[{"a":"#, "[]", "}]", 31));
        assert_eq!(err(nested(r#"[{"a":"#, "[]", "}]", 32).as_bytes()).1, "nested deeper than 64 levels");
        // Empty containers count as levels; scalars and brackets in strings don't.
        ok(&nested("[", "", "]", 64));
        assert!(parse_strict(nested("[", "", "]", 65).as_bytes(), 64).is_err());
        assert_eq!(
            parse_strict(br#"["[[[[", "{{{{"]"#, 1),
            Ok(Json::Array(vec![Json::Str("[[[[".into()), Json::Str("{{{{".into())]))
        );
        assert_eq!(parse_strict(b"1", 0), Ok(Json::Uint(1)));
        assert_eq!(parse_strict(b"[]", 0).unwrap_err().what, "nested deeper than 0 levels");
        // Siblings do not add up.
        ok(&format!("[{}]", vec![nested("[", "", "]", 63); 3].join(",")));
    }

    #[test]
    fn depth_above_serde_json_limit_is_127() {
        let text = nested("[", "", "]", 127);
        assert!(parse_strict(text.as_bytes(), 1000).is_ok(), "serde_json still reads 127 levels");
        let e = parse_strict(nested("[", "", "]", 128).as_bytes(), 1000).unwrap_err();
        assert_eq!(e, JsonError { offset: Some(127), what: "nested deeper than 127 levels".into() });
    }

    #[test]
    fn huge_nesting_does_not_overflow_the_stack() {
        for (open, close) in [("[", "]"), (r#"{"a":"#, "}"), ("[", ""), (r#"{"":"#, "")] {
            let text = nested(open, "0", close, 100_000);
            assert_eq!(err(text.as_bytes()), ((open.len() * 64) as u64, "nested deeper than 64 levels".into()));
        }
        // A syntax error before the depth is exceeded comes first.
        assert_eq!(err(format!("[x{}", "[".repeat(100_000)).as_bytes()).1, "expected value");
    }

    #[test]
    fn surrounding_bytes() {
        assert_eq!(ok(" \t\r\n{}\n\r\t "), Json::Object(vec![]));
        assert_eq!(ok("\n1\n"), Json::Uint(1));
        assert_eq!(err(b"{}\0"), (2, "trailing bytes after the JSON value".into()));
        assert_eq!(err(b"{}\0\0\0\0"), (2, "trailing bytes after the JSON value".into()));
        assert_eq!(err(b"[1] x"), (4, "trailing bytes after the JSON value".into()));
        assert_eq!(err(b"{} {}"), (3, "trailing bytes after the JSON value".into()));
        assert_eq!(err(b"1 2"), (2, "trailing bytes after the JSON value".into()));
        // Form feed, vertical tab, NBSP and a BOM are not JSON whitespace.
        assert_eq!(err(b"[1]\x0c").0, 3);
        assert_eq!(err(b"\x0b[1]").0, 0);
        assert_eq!(err("[1]\u{a0}".as_bytes()).0, 3);
        assert_eq!(err("\u{feff}[1]".as_bytes()), (0, "expected value".into()));
    }

    #[test]
    fn empty_input() {
        assert_eq!(err(b""), (0, "no JSON value (the text is empty or only whitespace)".into()));
        assert_eq!(err(b" \n\t"), (3, "no JSON value (the text is empty or only whitespace)".into()));
    }

    #[test]
    fn not_utf8() {
        assert_eq!(err(b"\"a\xffb\""), (2, "not UTF-8 (byte 0xff)".into()));
        assert_eq!(err(b"[1, \xff]"), (4, "not UTF-8 (byte 0xff)".into()));
        assert_eq!(err(b"{\"\xc3\":1}"), (2, "not UTF-8 (byte 0xc3)".into()));
        assert_eq!(err(b"[1]\xff"), (3, "not UTF-8 (byte 0xff)".into()));
        assert_eq!(err(b"\xff"), (0, "not UTF-8 (byte 0xff)".into()));
        // A sequence cut off at the end, and an encoded surrogate.
        assert_eq!(err(b"\"\xe2\x82"), (1, "not UTF-8 (byte 0xe2)".into()));
        assert_eq!(err(b"\"\xed\xa0\x80\""), (1, "not UTF-8 (byte 0xed)".into()));
        // An earlier problem comes first.
        assert_eq!(err(b"[x, \"\xff\"]"), (1, "expected value".into()));
        assert_eq!(err(b"{\"a\":1,\"a\":\"\xff\"}"), (7, "repeated key 'a'".into()));
        assert_eq!(err(&[b"[".repeat(65), b"\xff".to_vec()].concat()), (64, "nested deeper than 64 levels".into()));
    }

    #[test]
    fn lone_surrogates() {
        let lone = "lone surrogate in a \\u escape (half of a UTF-16 pair without the other half)";
        assert_eq!(err(br#""\ud800""#), (7, lone.into()));
        assert_eq!(err(br#""\udc00x""#), (6, lone.into()));
        assert_eq!(err(br#"["\ud800\u0041"]"#).1, lone);
        assert_eq!(err(br#"["\udbff\udbff"]"#).1, lone);
        assert_eq!(err(br#"["\ud800\n"]"#).1, lone);
        assert_eq!(err(br#"{"\ud800":1}"#).1, lone);
        assert_eq!(err(br#"{"\udfff":1}"#).1, lone);
        assert_eq!(ok(r#""\ud83d\ude00""#), Json::Str("😀".into()));
        assert_eq!(ok(r#"{"\uD83D\uDE00":1}"#).get("😀"), Some(&Json::Uint(1)));
    }

    #[test]
    fn numbers() {
        assert_eq!(ok("0"), Json::Uint(0));
        assert_eq!(ok("18446744073709551615"), Json::Uint(u64::MAX));
        for (text, value) in [
            ("18446744073709551616", 18446744073709551616.0),
            ("-1", -1.0),
            ("1.0", 1.0),
            ("1e3", 1000.0),
            ("1E3", 1000.0),
            ("1e+3", 1000.0),
            ("10e-1", 1.0),
            ("-9223372036854775809", -9223372036854775809.0),
            ("1e-400", 0.0),
            ("123456789012345678901234567890", 1.2345678901234568e29),
        ] {
            let v = ok(text);
            assert_eq!(v, Json::Number(value, text.to_string()), "{text}: the value, and the token as written");
            assert_eq!((v.as_u64(), v.kind()), (None, "number"), "{text}");
        }
        // -0 is a number, not the integer 0, and keeps its sign.
        let Json::Number(z, _) = ok("-0") else { panic!("-0 is not a Number") };
        assert!(z == 0.0 && z.is_sign_negative());
        assert_eq!(ok("-0.0").as_u64(), None);
        // Integers inside containers behave the same.
        assert_eq!(
            ok(r#"{"s":[0,1.0]}"#).get("s").unwrap().as_array().unwrap(),
            [Json::Uint(0), Json::Number(1.0, "1.0".into())]
        );
        // Tokens pair with their numbers in document order, however nested,
        // and strings that look like numbers are not tokens.
        let v = ok(r#"{"a": [1e0, "2.5", {"b": -0.50}], "c": 7, "d": [[3E-1]], "e": "-1"}"#);
        let tokens: Vec<String> = {
            fn walk(v: &Json, out: &mut Vec<String>) {
                match v {
                    Json::Number(_, t) => out.push(t.clone()),
                    Json::Uint(u) => out.push(u.to_string()),
                    Json::Array(a) => a.iter().for_each(|e| walk(e, out)),
                    Json::Object(o) => o.iter().for_each(|(_, e)| walk(e, out)),
                    _ => {}
                }
            }
            let mut out = Vec::new();
            walk(&v, &mut out);
            out
        };
        assert_eq!(tokens, ["1e0", "-0.50", "7", "3E-1"]);
        // Not JSON numbers, or beyond f64: refused.
        assert_eq!(err(b"01"), (1, "invalid number".into()));
        assert_eq!(err(b"+1").1, "expected value");
        assert_eq!(err(b"1."), (2, "EOF while parsing a value".into()));
        assert_eq!(err(b".5").1, "expected value");
        assert_eq!(err(b"[NaN]").1, "expected value");
        assert_eq!(err(b"1e400"), (4, "number out of range".into()));
        assert_eq!(err(b"[-1e400]"), (6, "number out of range".into()));
    }

    #[test]
    fn offsets_count_bytes() {
        // serde_json's column counts bytes, not characters: é is two bytes.
        assert_eq!(err("[\"é\", x]".as_bytes()), (7, "expected value".into()));
        assert_eq!(err("[1,\n é]".as_bytes()), (5, "expected value".into()));
        assert_eq!(err("{\"é\":1,\n\n\"é\":2}".as_bytes()), (10, "repeated key 'é'".into()));
        assert_eq!(err(b"[1,2,]"), (5, "trailing comma".into()));
        assert_eq!(err(b"[1,\n2\n"), (6, "EOF while parsing a list".into()));
        assert_eq!(err(b"{\"a\" 1}"), (5, "expected `:`".into()));
        assert_eq!(err(b"\"a\x01\""), (2, "control character (\\u0000-\\u001F) found while parsing a string".into()));
        assert_eq!(err(br#""\x""#), (2, "invalid escape".into()));
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
