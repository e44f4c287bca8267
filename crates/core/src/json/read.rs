//! [`parse_strict`]: serde_json parses (syntax, escapes, surrogates,
//! numbers, trailing bytes), then `scan.rs` checks what it cannot, and the
//! value is converted to ours, each number with its token as written.

use serde_json::Value;
use serde_json::error::Category;

use super::error::{JsonError, SERDE_MAX_DEPTH, from_serde};
use super::scan::{MAX_VALUES, check_structure, too_many_values};
use super::tree::Json;

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
}
