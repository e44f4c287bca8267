//! What the command line prints: sha256sum-style lines, error lines and the
//! JSON document around each format's model entries. Format-neutral.
//!
//! Kept in the library, apart from the parser, so that the binary only
//! parses flags and writes these bytes out, and tests can check the formats
//! without running it.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::{Map, Value as JsonValue, json};

use crate::error::{Error, Hint};
use crate::text::{escape_name, is_unsafe, name_needs_escape};

/// The JSON document's format version; bumped on any incompatible change.
pub const JSON_FORMAT: u32 = 1;

fn needs_escape(name: &[u8]) -> bool {
    name.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// Escapes `\`, newline and carriage return as GNU coreutils does.
fn escape_sums_name(name: &[u8], out: &mut Vec<u8>) {
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// One line of sha256sum output, `<label>  <path>\n`; a path holding `\`,
/// a newline or a carriage return is escaped and the line starts with `\`,
/// exactly as GNU sha256sum writes it, so `--check` reads it back.
pub fn sums_line(label: &str, path: &Path) -> Vec<u8> {
    let name = path.as_os_str().as_encoded_bytes();
    let mut out = Vec::with_capacity(label.len().saturating_add(name.len()).saturating_add(4));
    if needs_escape(name) {
        out.push(b'\\');
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(b"  ");
        escape_sums_name(name, &mut out);
    } else {
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(b"  ");
        out.extend_from_slice(name);
    }
    out.push(b'\n');
    out
}

/// A file name as `--check` and `verify` print it before `: OK`: as it is,
/// unless it holds a newline, another character that could rewrite what a
/// terminal shows (a control, a bidirectional override: `text::is_unsafe`) or
/// bytes that are not UTF-8; then escaped (`text::escape_name`: `\\`, `\n`,
/// `\r`, `\t`, `\u{1b}`, `\xff`) after a leading `\`, as sums lines are.
/// GNU sha256sum 9 escapes only for a newline, so a name holding a
/// carriage return could make a FAILED line read OK (README, "Names in
/// output").
pub fn check_name(name: &[u8]) -> Vec<u8> {
    if !name_needs_escape(name) {
        return name.to_vec();
    }
    let mut out = Vec::with_capacity(name.len().saturating_add(1));
    out.push(b'\\');
    out.extend_from_slice(escape_name(name).as_bytes());
    out
}

/// A file name as coreutils quotes it in messages (its `quotef`): as it is
/// when it is plain, else in shell quotes, with control characters and bytes
/// that are not UTF-8 as `$'\t'` / `$'\377'`, so a hostile name cannot forge
/// a message. C1 controls and bidirectional overrides (`text::is_unsafe`) are
/// escaped too, a byte at a time (`$'\342\200\256'`), as coreutils writes
/// a character its locale cannot print.
pub fn quote_name(name: &[u8]) -> String {
    let unprintable = |b: u8| b < 0x20 || b == 0x7f;
    let special = |i: usize, b: u8| {
        matches!(b, b' ' | b'!' | b'"' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b':' | b';' | b'<' | b'=' | b'>')
            || matches!(b, b'?' | b'[' | b'\\' | b'^' | b'`' | b'|')
            || (i == 0 && matches!(b, b'#' | b'~'))
            || unprintable(b)
    };
    // Unsafe characters and bytes that are not UTF-8 are escaped.
    let escaped = name_needs_escape(name);
    if !escaped && !name.is_empty() && !name.iter().enumerate().any(|(i, &b)| special(i, b)) {
        return String::from_utf8_lossy(name).into_owned();
    }
    if !escaped && name.contains(&b'\'') && !name.iter().any(|b| b"\"$`\\!".contains(b)) {
        return format!("\"{}\"", String::from_utf8_lossy(name));
    }
    // Plain runs go in '...', escapes in $'...'; switching closes one and
    // opens the other, as coreutils writes it.
    let mut out = String::from("'");
    let mut in_dollar = false;
    let escape = |out: &mut String, in_dollar: &mut bool, code: String| {
        if !*in_dollar {
            out.push_str("'$'");
            *in_dollar = true;
        }
        out.push_str(&code);
    };
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if (c as u32) < 0x20 || c == '\u{7f}' {
                let code = match c {
                    '\t' => "\\t".to_string(),
                    '\n' => "\\n".to_string(),
                    '\r' => "\\r".to_string(),
                    c => format!("\\{:03o}", c as u32),
                };
                escape(&mut out, &mut in_dollar, code);
                continue;
            }
            if is_unsafe(c) {
                let mut utf8 = [0u8; 4];
                let code: String = c.encode_utf8(&mut utf8).bytes().map(|b| format!("\\{b:03o}")).collect();
                escape(&mut out, &mut in_dollar, code);
                continue;
            }
            if in_dollar {
                out.push_str("''");
                in_dollar = false;
            }
            match c {
                '\'' => out.push_str("'\\''"),
                c => out.push(c),
            }
        }
        for &b in chunk.invalid() {
            escape(&mut out, &mut in_dollar, format!("\\{b:03o}"));
        }
    }
    out.push('\'');
    out
}

/// An error as the command line prints it after `gguf-digest: `:
/// `ARG: FILE: byte N, SUBJECT: what`, the argument and the file quoted
/// (the argument only when it is not the file itself), then where and what.
pub fn error_line(e: &Error) -> String {
    let mut line = String::new();
    for p in [e.argument_beside_path(), e.path()].into_iter().flatten() {
        line.push_str(&quote_name(p.as_os_str().as_encoded_bytes()));
        line.push_str(": ");
    }
    line.push_str(&e.detail());
    line.push_str(flag_hint(e));
    line
}

/// What the command line adds to a library error that one of its flags
/// answers (the library's messages name no flag).
fn flag_hint(e: &Error) -> &'static str {
    match e.kind().hint() {
        Some(Hint::ShardAlone) => ", or this shard alone with --no-join",
        Some(Hint::MetadataInMemory) => " (--no-mmap, or a stream); a file in the default mode is read in place",
        _ => "",
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Names that are not UTF-8 are shown lossily, with their exact bytes in hex beside.
pub fn put_name(obj: &mut Map<String, JsonValue>, field: &str, bytes: &[u8]) {
    obj.insert(field.to_string(), json!(text(bytes)));
    if std::str::from_utf8(bytes).is_err() {
        obj.insert(format!("{field}_hex"), json!(hex::encode(bytes)));
    }
}

/// Writes JSON a value at a time, so that a document of a million tensors
/// is never held whole: each entry goes to the output as it is made (its
/// records from the model itself). Every byte is serde_json's: the layout
/// (commas, new lines, indent, `": "`) is its `PrettyFormatter` or
/// `CompactFormatter`, and every value is written by its `Serialize` impl
/// through a `serde_json::Serializer` on that same formatter, so the
/// document is the one `serde_json::to_writer_pretty` prints of the same
/// tree, strings escaped by serde_json alike (docs/adr/0045-json-writer.md).
///
/// Callers pair every `begin_*` with its `end_*` and put a `key` before
/// each value in an object; the writer keeps one small frame per open
/// container (the nesting the code writes, never the input's).
pub struct JsonWriter<'w> {
    out: &'w mut dyn Write,
    style: Style,
    /// The open containers, innermost last: an array (`true`) or an
    /// object, and whether it has no member yet.
    open: Vec<(bool, bool)>,
}

/// serde_json's two layouts.
enum Style {
    Pretty(PrettyFormatter<'static>),
    Compact(CompactFormatter),
}

/// The writer's formatter, lent to a `serde_json::Serializer` for one value
/// (its indent and state carry on from the containers the writer opened).
struct Lent<'a>(&'a mut Style);

/// Hands each layout call to the formatter of the style.
macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            match self.0 {
                Style::Pretty(f) => f.$name(w $(, $arg)*),
                Style::Compact(f) => f.$name(w $(, $arg)*),
            }
        })*
    };
}

impl Formatter for Lent<'_> {
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }
}

impl<'w> JsonWriter<'w> {
    /// A writer of `serde_json::to_writer_pretty`'s format.
    pub fn pretty(out: &'w mut dyn Write) -> Self {
        JsonWriter { out, style: Style::Pretty(PrettyFormatter::new()), open: Vec::new() }
    }

    /// A writer of `serde_json::to_writer`'s (compact) format.
    pub fn compact(out: &'w mut dyn Write) -> Self {
        JsonWriter { out, style: Style::Compact(CompactFormatter), open: Vec::new() }
    }

    /// Before a value: in an array, its separator (after a key or at the
    /// top, nothing: the key wrote its own).
    fn before_value(&mut self) -> io::Result<()> {
        if let Some((true, first)) = self.open.last_mut() {
            let was_first = std::mem::replace(first, false);
            Lent(&mut self.style).begin_array_value(&mut *self.out, was_first)?;
        }
        Ok(())
    }

    /// After a value: the formatter notes it (in pretty, the closing
    /// bracket then goes on a line of its own).
    fn after_value(&mut self) -> io::Result<()> {
        match self.open.last() {
            Some((true, _)) => Lent(&mut self.style).end_array_value(&mut *self.out),
            Some((false, _)) => Lent(&mut self.style).end_object_value(&mut *self.out),
            None => Ok(()),
        }
    }

    /// Opens an object (as a value: after a key, in an array, or at the top).
    pub fn begin_object(&mut self) -> io::Result<()> {
        self.before_value()?;
        Lent(&mut self.style).begin_object(&mut *self.out)?;
        self.open.push((false, true));
        Ok(())
    }

    /// Closes the innermost object.
    pub fn end_object(&mut self) -> io::Result<()> {
        self.open.pop();
        Lent(&mut self.style).end_object(&mut *self.out)?;
        self.after_value()
    }

    /// Opens an array.
    pub fn begin_array(&mut self) -> io::Result<()> {
        self.before_value()?;
        Lent(&mut self.style).begin_array(&mut *self.out)?;
        self.open.push((true, true));
        Ok(())
    }

    /// Closes the innermost array.
    pub fn end_array(&mut self) -> io::Result<()> {
        self.open.pop();
        Lent(&mut self.style).end_array(&mut *self.out)?;
        self.after_value()
    }

    /// A member's key; its value is written next.
    pub fn key(&mut self, key: &str) -> io::Result<()> {
        let first = match self.open.last_mut() {
            Some((false, first)) => std::mem::replace(first, false),
            _ => return Err(io::Error::other("a JSON key outside an object")),
        };
        Lent(&mut self.style).begin_object_key(&mut *self.out, first)?;
        // A string alone makes no layout call: just the quoted, escaped key.
        key.serialize(&mut serde_json::Serializer::with_formatter(&mut *self.out, Lent(&mut self.style)))?;
        let mut f = Lent(&mut self.style);
        f.end_object_key(&mut *self.out)?;
        f.begin_object_value(&mut *self.out)
    }

    /// A string value.
    pub fn str(&mut self, s: &str) -> io::Result<()> {
        self.value(s)
    }

    /// A value, written by its `Serialize` impl: a number, a bool, `null`
    /// (`None`), a string, or a small tree, nested at this depth.
    pub fn value(&mut self, v: impl Serialize) -> io::Result<()> {
        self.before_value()?;
        v.serialize(&mut serde_json::Serializer::with_formatter(&mut *self.out, Lent(&mut self.style)))?;
        self.after_value()
    }

    /// A tree, as serde_json would print it at this depth.
    pub fn tree(&mut self, v: &JsonValue) -> io::Result<()> {
        self.value(v)
    }

    /// `key: value`.
    pub fn field(&mut self, key: &str, v: impl Serialize) -> io::Result<()> {
        self.key(key)?;
        self.value(v)
    }

    /// `key: "string"`.
    pub fn str_field(&mut self, key: &str, s: &str) -> io::Result<()> {
        self.key(key)?;
        self.str(s)
    }

    /// `key: [numbers]`.
    pub fn u64s_field(&mut self, key: &str, values: &[u64]) -> io::Result<()> {
        self.field(key, values)
    }

    /// `key: [...]`, the elements serialized from an iterator as it yields
    /// them: nothing collected.
    pub fn seq_field<I>(&mut self, key: &str, items: I) -> io::Result<()>
    where
        I: IntoIterator,
        I::Item: Serialize,
    {
        self.key(key)?;
        self.before_value()?;
        let mut ser = serde_json::Serializer::with_formatter(&mut *self.out, Lent(&mut self.style));
        serde::Serializer::collect_seq(&mut ser, items)?;
        self.after_value()
    }

    /// A name as [`put_name`] puts it: lossily as text, and when it is not
    /// UTF-8 its exact bytes in hex under `KEY_hex`.
    pub fn name_field(&mut self, key: &str, bytes: &[u8]) -> io::Result<()> {
        self.str_field(key, &String::from_utf8_lossy(bytes))?;
        if std::str::from_utf8(bytes).is_err() {
            self.str_field(&format!("{key}_hex"), &hex::encode(bytes))?;
        }
        Ok(())
    }
}

/// The JSON entry of a path that could not be labelled.
pub fn write_error_json(w: &mut JsonWriter<'_>, path: &Path, e: &Error) -> io::Result<()> {
    w.begin_object()?;
    w.str_field("path", &text(path.as_os_str().as_encoded_bytes()))?;
    w.str_field("error", &(e.to_string() + flag_hint(e)))?;
    w.end_object()
}

/// Opens the whole `--json` document, up to its `files` array: each entry
/// is written into it as its model is labelled, then [`end_document`].
pub fn begin_document(w: &mut JsonWriter<'_>) -> io::Result<()> {
    w.begin_object()?;
    w.field("format", JSON_FORMAT)?;
    w.str_field("spec", "canonical-skeleton-v1")?;
    w.str_field("tool", concat!("gguf-digest ", env!("CARGO_PKG_VERSION")))?;
    w.key("files")?;
    w.begin_array()
}

/// Closes the document [`begin_document`] opened.
pub fn end_document(w: &mut JsonWriter<'_>) -> io::Result<()> {
    w.end_array()?;
    w.end_object()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind whose message on the command line names a flag: the line and
    /// the JSON entry word it as they always have.
    fn error_json(path: &Path, e: &Error) -> JsonValue {
        let mut out = Vec::new();
        write_error_json(&mut JsonWriter::compact(&mut out), path, e).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn errors_that_a_flag_answers_name_it_on_the_command_line() {
        // (A GGUF shard on a stream: `gguf/error.rs`.)
        let big = Error::new(crate::error::ErrorKind::MetadataTooLarge { needed: 200, limit: 100 })
            .at(5)
            .in_file(Path::new("m"));
        let words = "byte 5: metadata reaches byte 200, past the 100-byte limit for reading it into memory \
                     (--no-mmap, or a stream); a file in the default mode is read in place";
        assert_eq!(error_line(&big), format!("m: {words}"));
        assert_eq!(error_json(Path::new("m"), &big), json!({"path": "m", "error": format!("m: {words}")}));
        // A second subject naming the same file is told the same.
        assert_eq!(error_line(&big.repeat()), format!("m: {words}"));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_escaped() {
        assert_eq!(quote_name(b"\xff"), "''$'\\377'");
        assert_eq!(quote_name(b"a\xffb"), "'a'$'\\377''b'");
    }

    #[test]
    fn names_are_quoted_like_coreutils() {
        for (name, quoted) in [
            ("nope", "nope"),
            ("a b", "'a b'"),
            ("'q", "\"'q\""),
            ("a'b c", "\"a'b c\""),
            ("a'b$c", "'a'\\''b$c'"),
            ("a$b", "'a$b'"),
            ("a~b", "a~b"),
            ("~ab", "'~ab'"),
            ("#ab", "'#ab'"),
            ("a#b", "a#b"),
            ("a:b", "'a:b'"),
            ("a=b", "'a=b'"),
            ("a\tb", "'a'$'\\t''b'"),
            ("a\x01b", "'a'$'\\001''b'"),
            ("é", "é"),
            ("standard input", "'standard input'"),
            ("a\t", "'a'$'\\t'"),
            ("a\t\tb", "'a'$'\\t\\t''b'"),
            ("a{b}c-d,e@f%g+h]", "a{b}c-d,e@f%g+h]"),
        ] {
            assert_eq!(quote_name(name.as_bytes()), quoted, "{name:?}");
        }
    }

    #[test]
    fn sums_lines_escape_like_gnu() {
        let l = "ab";
        assert_eq!(sums_line(l, Path::new("m.gguf")), b"ab  m.gguf\n");
        assert_eq!(sums_line(l, Path::new("a\\b")), b"\\ab  a\\\\b\n");
        assert_eq!(sums_line(l, Path::new("a\nb")), b"\\ab  a\\nb\n");
        assert_eq!(sums_line(l, Path::new("a\rb")), b"\\ab  a\\rb\n");
    }

    fn written(v: &JsonValue, pretty: bool) -> String {
        let mut out = Vec::new();
        let mut w = if pretty { JsonWriter::pretty(&mut out) } else { JsonWriter::compact(&mut out) };
        w.tree(v).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = JsonValue> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(JsonValue::Null),
            any::<bool>().prop_map(JsonValue::from),
            any::<u64>().prop_map(JsonValue::from),
            any::<i64>().prop_map(JsonValue::from),
            any::<f64>().prop_map(JsonValue::from),
            ".{0,6}".prop_map(JsonValue::from),
            proptest::collection::vec(any::<u8>(), 0..6).prop_map(|b| JsonValue::from(String::from_utf8_lossy(&b))),
        ];
        leaf.prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(JsonValue::Array),
                proptest::collection::vec((".{0,4}", inner), 0..5)
                    .prop_map(|kv| JsonValue::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, failure_persistence: None, ..Default::default() })]

        /// The streamed bytes are serde_json's for the same tree, pretty and compact.
        #[test]
        fn the_writer_prints_as_serde_json(v in any_json()) {
            proptest::prop_assert_eq!(written(&v, true), serde_json::to_string_pretty(&v).unwrap());
            proptest::prop_assert_eq!(written(&v, false), serde_json::to_string(&v).unwrap());
        }
    }

    #[test]
    fn the_writer_nests_empty_containers_and_names_as_serde_json() {
        let v = json!({"a": [], "b": {}, "c": [[], {}, [1]], "d": {"e": {}}, "\u{1}\"k": "\u{7f}\u{202e}"});
        assert_eq!(written(&v, true), serde_json::to_string_pretty(&v).unwrap());
        let mut out = Vec::new();
        let mut w = JsonWriter::pretty(&mut out);
        w.begin_object().unwrap();
        w.name_field("n", b"a\xffb").unwrap();
        w.name_field("m", b"ok").unwrap();
        w.u64s_field("d", &[]).unwrap();
        w.end_object().unwrap();
        let mut o = Map::new();
        put_name(&mut o, "n", b"a\xffb");
        put_name(&mut o, "m", b"ok");
        o.insert("d".into(), json!([]));
        assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string_pretty(&JsonValue::Object(o)).unwrap());
    }

    #[test]
    fn sequences_come_from_iterators_and_keys_belong_in_objects() {
        let mut out = Vec::new();
        let mut w = JsonWriter::pretty(&mut out);
        w.begin_object().unwrap();
        w.seq_field("a", (0..3u64).map(|i| i * 2)).unwrap();
        w.seq_field("e", std::iter::empty::<u64>()).unwrap();
        w.key("n").unwrap();
        w.begin_array().unwrap();
        w.value(f64::NAN).unwrap();
        w.value(Some(0.1f32)).unwrap();
        w.end_array().unwrap();
        w.end_object().unwrap();
        let want = json!({"a": [0, 2, 4], "e": [], "n": [null, 0.1]});
        assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string_pretty(&want).unwrap());
        let mut out = Vec::new();
        let mut w = JsonWriter::compact(&mut out);
        assert!(w.key("k").is_err(), "a key at the top");
        w.begin_array().unwrap();
        assert!(w.key("k").is_err(), "a key in an array");
    }

    #[test]
    fn check_names_escape_every_character_that_could_forge_a_line() {
        // As GNU: plain names (a backslash alone included) as they are, a
        // newline escaped with a leading backslash.
        assert_eq!(check_name(b"a\\b"), b"a\\b");
        assert_eq!(check_name(b"a\\\nb"), b"\\a\\\\\\nb");
        // Beyond GNU: a carriage return, an escape sequence, a bidi
        // override, bytes that are not UTF-8.
        assert_eq!(check_name(b"x\r\x1b[2Ky"), b"\\x\\r\\u{1b}[2Ky");
        assert_eq!(check_name("a\u{202e}b".as_bytes()), b"\\a\\u{202e}b");
        assert_eq!(check_name(b"a\tb\xff"), b"\\a\\tb\\xff");
    }

    #[test]
    fn quoted_names_escape_c1_controls_and_bidi_overrides() {
        assert_eq!(quote_name("a\u{202e}b".as_bytes()), "'a'$'\\342\\200\\256''b'");
        assert_eq!(quote_name("\u{9b}2K".as_bytes()), "''$'\\302\\233''2K'");
        assert_eq!(quote_name("\u{2069}".as_bytes()), "''$'\\342\\201\\251'");
    }
}
