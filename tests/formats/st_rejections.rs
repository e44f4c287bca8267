//! Every rejection rule of the safetensors contract
//! (shared/spec/safetensors-skeleton-v1.md §3 and §5), one test each: the
//! exact `ErrorKind`, and a message that names the file, the byte offset
//! where the contract gives one (the header length at 0, JSON errors at
//! 8 + their offset in the JSON text, tiling errors where the tiling breaks)
//! and the tensor or key. Next to each rule, what it must not refuse (spaces
//! after the JSON, depth 64, zero-byte tensors, `{}` with no data, the same
//! metadata value in a shard and its index).
//!
//! Files are written raw (`file(header, data)`), so that every rule can be
//! broken precisely; valid models come from the test writer (`common::st`).
//! Each file is opened through `Model::open_with` in both read modes and
//! through `open_model` (what the binary does); all three must fail with the
//! same message, and the in-memory `parse` with the same detail.
use crate::common;
use gguf_digest::safetensors::SafetensorsErrorKind;

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::st::*;
use common::*;
use gguf_digest::safetensors::{self, Model};
use gguf_digest::{Error, ErrorKind, OpenOptions, ReadMode, Subject, open_model};

// ---------------------------------------------------------------- helpers

/// `LE_u64(len(header)) || header || data`.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    file_bytes(header.as_bytes(), data)
}

fn file_bytes(header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header);
    out.extend_from_slice(data);
    out
}

/// One tensor entry: `"dtype":..,"shape":[..],"data_offsets":[b,e]`.
fn entry(dtype: &str, shape: &str, begin: u64, end: u64) -> String {
    format!(r#"{{"dtype":"{dtype}","shape":[{shape}],"data_offsets":[{begin},{end}]}}"#)
}

/// The file position of the first occurrence of `needle` in `header`.
fn pos(header: &str, needle: &str) -> u64 {
    8 + header.find(needle).unwrap_or_else(|| panic!("{needle:?} not in {header}")) as u64
}

/// The file position of the last occurrence of `needle` in `header`.
fn rpos(header: &str, needle: &str) -> u64 {
    8 + header.rfind(needle).unwrap_or_else(|| panic!("{needle:?} not in {header}")) as u64
}

fn opts(read_mode: ReadMode) -> OpenOptions {
    OpenOptions { read_mode, ..OpenOptions::default() }
}

fn label_mode(p: &Path, read_mode: ReadMode) -> Result<String, Error> {
    Model::open_with(p, opts(read_mode)).and_then(|m| m.label())
}

/// What the binary does with an argument: sniff, open, label.
fn label_any(p: &Path) -> Result<String, Error> {
    let m = open_model(p, &OpenOptions::default())?;
    Ok(gguf_digest::digest(&m, &Default::default())?.label())
}

/// Opens `p` both ways of reading and as the binary does; all must fail alike.
#[track_caller]
fn reject_path(p: &Path) -> Error {
    let mapped = label_mode(p, ReadMode::Mmap).expect_err("must be rejected");
    let read = label_mode(p, ReadMode::Pread).expect_err("must be rejected (pread)");
    assert_eq!(mapped.to_string(), read.to_string(), "mmap and pread disagree");
    let any = label_any(p).expect_err("must be rejected (open_model)");
    assert_eq!(mapped.to_string(), any.to_string(), "Model::open_with and open_model disagree");
    mapped
}

/// Labels `p` both ways of reading and as the binary does; all must agree.
#[track_caller]
fn accept_path(p: &Path) -> String {
    let a = label_mode(p, ReadMode::Mmap).unwrap_or_else(|e| panic!("must be accepted: {e}"));
    let b = label_mode(p, ReadMode::Pread).unwrap_or_else(|e| panic!("must be accepted (pread): {e}"));
    assert_eq!(a, b, "mmap and pread disagree");
    let c = label_any(p).unwrap_or_else(|e| panic!("must be accepted (open_model): {e}"));
    assert_eq!(a, c, "Model::open_with and open_model disagree");
    a
}

/// A rejected file: the directory (kept alive), its path and the error.
struct Rejected {
    _dir: Dir,
    path: PathBuf,
    err: Error,
}

/// Writes `bytes` as `bad.safetensors`, which must be rejected; the
/// in-memory parse must say the same (without a path: it knows none).
#[track_caller]
fn reject(bytes: &[u8]) -> Rejected {
    let dir = Dir::new();
    let path = dir.write("bad.safetensors", bytes);
    let err = reject_path(&path);
    let mem = safetensors::parse(bytes).expect_err("the in-memory parse must reject it too");
    assert_eq!(mem.path(), None, "a pure parse knows no path: {mem}");
    assert_eq!(mem.detail(), err.detail(), "file and memory disagree");
    Rejected { _dir: dir, path, err }.names_file()
}

/// Writes `bytes` as `good.safetensors`, which must label.
#[track_caller]
fn accept(bytes: &[u8]) -> String {
    let dir = Dir::new();
    let path = dir.write("good.safetensors", bytes);
    safetensors::parse(bytes).unwrap_or_else(|e| panic!("the in-memory parse must accept it: {e}"));
    accept_path(&path)
}

/// Wraps an error from a model of several files (the path checked by the caller).
fn rejected_at(dir: Dir, path: PathBuf, err: Error) -> Rejected {
    Rejected { _dir: dir, path, err }
}

impl Rejected {
    fn msg(&self) -> String {
        self.err.to_string()
    }

    /// The error names `self.path`, and its message starts with it.
    #[track_caller]
    fn names_file(self) -> Self {
        let msg = self.msg();
        assert_eq!(self.err.path(), Some(self.path.as_path()), "{msg}");
        assert!(msg.starts_with(&format!("{}: ", self.path.display())), "message lacks the path: {msg}");
        self
    }

    #[track_caller]
    fn kind(self, ok: impl FnOnce(&ErrorKind) -> bool) -> Self {
        assert!(ok(self.err.kind()), "wrong kind {:?}: {}", self.err.kind(), self.err);
        self
    }

    /// The byte offset is exactly `at`, and the message says so.
    #[track_caller]
    fn at(self, at: u64) -> Self {
        self.at_in(at..=at)
    }

    /// The byte offset lies in `range`, and the message says so.
    #[track_caller]
    fn at_in(self, range: RangeInclusive<u64>) -> Self {
        let msg = self.msg();
        let o = self.err.offset().unwrap_or_else(|| panic!("no byte offset: {msg}"));
        assert!(range.contains(&o), "offset {o} outside {range:?}: {msg}");
        assert!(msg.contains(&format!(": byte {o}")), "message lacks the offset: {msg}");
        self
    }

    /// The error is about tensor `name`, and the message names it.
    #[track_caller]
    fn tensor(self, name: &str) -> Self {
        let msg = self.msg();
        assert_eq!(self.err.subject(), Some(&Subject::Tensor(name.as_bytes().to_vec())), "{msg}");
        assert!(msg.contains(&format!("tensor '{}'", gguf_digest::escape_bytes(name.as_bytes()))), "{msg}");
        self
    }

    /// The error is about key `name`, and the message names it.
    #[track_caller]
    fn key(self, name: &str) -> Self {
        let msg = self.msg();
        assert_eq!(self.err.subject(), Some(&Subject::Key(name.as_bytes().to_vec())), "{msg}");
        assert!(msg.contains(&format!("key '{}'", gguf_digest::escape_bytes(name.as_bytes()))), "{msg}");
        self
    }

    /// The message says `text`.
    #[track_caller]
    fn says(self, text: &str) -> Self {
        let msg = self.msg();
        assert!(msg.contains(text), "message lacks {text:?}: {msg}");
        self
    }
}

fn is_json(k: &ErrorKind) -> bool {
    matches!(k, ErrorKind::Json(_))
}

fn is_schema(k: &ErrorKind) -> bool {
    matches!(k, ErrorKind::Schema(_))
}

fn is_size(k: &ErrorKind) -> bool {
    matches!(k.of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::TensorSize(_)))
}

fn is_tiling(k: &ErrorKind) -> bool {
    matches!(k.of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::Tiling(_)))
}

fn is_mismatch(k: &ErrorKind) -> bool {
    matches!(k.of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::IndexMismatch(_)))
}

/// A file with one tensor `t` whose entry is `body` (verbatim), 4 data bytes.
fn one(body: &str) -> (String, Vec<u8>) {
    let header = format!(r#"{{"t":{body}}}"#);
    let bytes = file(&header, &[1, 2, 3, 4]);
    (header, bytes)
}

// ------------------------------------------------------- the header length

#[test]
fn file_shorter_than_eight_bytes() {
    for len in 0..8 {
        let bytes = &2u64.to_le_bytes()[..len];
        reject(bytes)
            .kind(|k| matches!(k, ErrorKind::Truncated { needed: 8, available, .. } if *available == len as u64))
            .at(0)
            .says("header length");
    }
}

#[test]
fn header_length_over_the_limit() {
    for n in [100_000_001u64, 1 << 32, 1 << 63, u64::MAX] {
        let mut bytes = n.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"{}");
        reject(&bytes)
            .kind(|k| matches!(k, ErrorKind::HeaderTooLarge { declared, limit: 100_000_000 } if *declared == n))
            .at(0)
            .says(&n.to_string());
    }
    // Exactly the limit is allowed: the file is then merely too short.
    let mut bytes = 100_000_000u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    reject(&bytes).kind(|k| matches!(k, ErrorKind::Truncated { needed: 100_000_000, available: 2, .. }));
}

/// `8 + N` past the end of the file. Reported where the JSON header begins
/// (byte 8), the way GGUF reports a length that runs off the end: at the
/// field it was the length of.
#[test]
fn header_longer_than_the_file() {
    let mut bytes = 10u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}   ");
    reject(&bytes)
        .kind(|k| matches!(k, ErrorKind::Truncated { needed: 10, available: 5, .. }))
        .at(8)
        .says("JSON header");
    let mut bytes = 1u64.to_le_bytes().to_vec();
    reject(&bytes).kind(|k| matches!(k, ErrorKind::Truncated { needed: 1, available: 0, .. })).at(8);
    bytes.push(b'{');
    reject(&bytes).kind(is_json).at(9);
}

// -------------------------------------------------------------------- JSON

#[test]
fn header_not_utf8() {
    let mut header = br#"{"__metadata__":{"k":"caf"#.to_vec();
    let bad = header.len() as u64;
    header.extend_from_slice(b"\xe9\"}}");
    reject(&file_bytes(&header, &[])).kind(is_json).at(8 + bad).says("not UTF-8");
    // In a tensor name.
    let header = b"{\"a\xff\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}";
    reject(&file_bytes(header, &[])).kind(is_json).at(8 + 3).says("not UTF-8");
}

#[test]
fn trailing_bytes_after_the_json() {
    for tail in ["x", "\0", "\0\0\0\0\0\0", " \0", "{}", " 1", "\u{a0}", "\x0c"] {
        let header = format!("{{}}{tail}");
        let first_bad = tail.find(|c: char| c != ' ').unwrap() as u64;
        reject(&file(&header, &[])).kind(is_json).at(8 + 2 + first_bad);
    }
    let r = reject(&file("{}\0\0", &[]));
    r.says("trailing bytes");
}

#[test]
fn json_whitespace_around_the_header_is_fine() {
    let want = St::new().expected_label();
    for header in ["{}", "{}      ", " \t\r\n{}\n\r\t ", "\n{ }\n"] {
        assert_eq!(accept(&file(header, &[])), want, "{header:?}");
    }
    // The writer's padding, on a model with tensors.
    let st = St { pad: 5, ..St::new().tensor(StTensor::filled("w", "F32", &[3], 1)) };
    assert_eq!(accept(&st.build()), st.expected_label());
}

#[test]
fn header_not_an_object() {
    for header in ["[]", "\"x\"", "1", "null", "true", " [{}] "] {
        reject(&file(header, &[])).kind(is_schema).at(8).says("not an object");
    }
}

/// `depth` containers in all: the header object, the tensor entry, and
/// `depth - 2` arrays in an ignored member of it.
fn nested(depth: usize) -> (String, Vec<u8>) {
    let arrays = depth - 2;
    let header = format!(
        r#"{{"t":{{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":{}1{}}}}}"#,
        "[".repeat(arrays),
        "]".repeat(arrays)
    );
    let bytes = file(&header, &[7]);
    (header, bytes)
}

#[test]
fn nesting_depth_64_is_fine_65_is_not() {
    let (_, ok) = nested(64);
    let want = St::new().tensor(StTensor { name: "t".into(), dtype: "U8".into(), shape: vec![1], data: vec![7] });
    assert_eq!(accept(&ok), want.expected_label());
    let (header, bad) = nested(65);
    // The 65th container is the 63rd '[' of "x".
    let at = pos(&header, "[[") + 62;
    reject(&bad).kind(is_json).at(at).says("deeper than 64");
    // Deep in __metadata__ and at the top: the same rule.
    let header = format!(r#"{{"__metadata__":{}"#, "{\"a\":".repeat(70));
    reject(&file(&header, &[])).kind(is_json).at(8 + 1 + 15 + 63 * 5).says("deeper than 64");
    let header = "[".repeat(200);
    reject(&file(&header, &[])).kind(is_json).at(8 + 64).says("deeper than 64");
}

#[test]
fn repeated_tensor_name() {
    let e = entry("U8", "2", 0, 2);
    let header = format!(r#"{{"a":{e},"b":{},"a":{e}}}"#, entry("U8", "2", 2, 4));
    reject(&file(&header, &[0; 4])).kind(is_json).at(rpos(&header, "\"a\"")).says("repeated key 'a'");
}

#[test]
fn repeated_key_inside_a_tensor_entry() {
    for (dup, key) in [
        (r#""dtype":"U8","dtype":"U8""#, "dtype"),
        (r#""dtype":"U8","dtype":"I8""#, "dtype"),
        (r#""shape":[4],"shape":[4]"#, "shape"),
        (r#""data_offsets":[0,4],"data_offsets":[0,4]"#, "data_offsets"),
        (r#""note":1,"note":2"#, "note"),
    ] {
        let mut members = vec![r#""dtype":"U8""#, r#""shape":[4]"#, r#""data_offsets":[0,4]"#];
        members.retain(|m| !m.starts_with(&format!("\"{key}\"")));
        members.push(dup);
        let (header, bytes) = one(&format!("{{{}}}", members.join(",")));
        reject(&bytes).kind(is_json).at(rpos(&header, &format!("\"{key}\""))).says(&format!("repeated key '{key}'"));
    }
}

#[test]
fn repeated_key_inside_metadata() {
    let header = r#"{"__metadata__":{"a":"1","b":"2","a":"1"}}"#;
    reject(&file(header, &[])).kind(is_json).at(rpos(header, "\"a\"")).says("repeated key 'a'");
    // __metadata__ itself twice.
    let header = r#"{"__metadata__":{},"__metadata__":{}}"#;
    reject(&file(header, &[])).kind(is_json).at(rpos(header, "\"__")).says("repeated key '__metadata__'");
}

#[test]
fn repeated_key_after_unescaping() {
    let e = entry("U8", "2", 0, 2);
    let header = format!(r#"{{"a":{e},"\u0061":{}}}"#, entry("U8", "2", 2, 4));
    reject(&file(&header, &[0; 4])).kind(is_json).at(pos(&header, "\"\\u0061")).says("repeated key 'a'");
    let header = r#"{"__metadata__":{"\u00e9":"1","é":"2"}}"#;
    reject(&file(header, &[])).kind(is_json).at(pos(header, "\"é")).says("repeated key 'é'");
    let header = r#"{"__metadata__":{"a\/b":"1","a/b":"2"}}"#;
    reject(&file(header, &[])).kind(is_json).at(pos(header, "\"a/b")).says("repeated key 'a/b'");
    // Two spellings of one key inside a tensor entry.
    let (header, bytes) = one(r#"{"dtype":"U8","shape":[4],"data_offsets":[0,4],"d\u0074ype":"U8"}"#);
    reject(&bytes).kind(is_json).at(pos(&header, "\"d\\u0074")).says("repeated key 'dtype'");
}

#[test]
fn lone_surrogate() {
    for s in [r"\ud800", r"\udbff", r"\udc00", r"\udfff", r"\ud800\u0041", r"x\ud834", r"\ud800\ud800"] {
        let header = format!(r#"{{"__metadata__":{{"k":"{s}"}}}}"#);
        let start = pos(&header, "\"k\":") + 4;
        let end = start + s.len() as u64 + 1;
        reject(&file(&header, &[])).kind(is_json).at_in(start..=end).says("lone surrogate");
    }
    // In a tensor name.
    let header = format!(r#"{{"a\udc01":{}}}"#, entry("U8", "0", 0, 0));
    reject(&file(&header, &[])).kind(is_json).at_in(9..=8 + 10).says("lone surrogate");
    // A pair is fine.
    let header = format!(r#"{{"\ud83e\udd80":{}}}"#, entry("U8", "1", 0, 1));
    let want = St::new().tensor(StTensor { name: "🦀".into(), dtype: "U8".into(), shape: vec![1], data: vec![9] });
    assert_eq!(accept(&file(&header, &[9])), want.expected_label());
}

#[test]
fn json_syntax_errors_are_located() {
    for (header, at) in [
        (r#"{"a":}"#, 5),
        (r#"{"a" 1}"#, 5),
        ("{'a':1}", 1),
        ("{\"a\":\"x\ny\"}", 8),
        (r#"{"a":[1,]}"#, 8),
        (r#"{"a":01}"#, 6),
        ("{", 1),
        ("", 0),
        ("   ", 3),
    ] {
        reject(&file(header, &[])).kind(is_json).at_in(8 + at - 1..=8 + at);
    }
}

// -------------------------------------------------------------- __metadata__

#[test]
fn metadata_not_an_object() {
    for v in ["[]", "\"pt\"", "1", r#"[["a","b"]]"#] {
        reject(&file(&format!(r#"{{"__metadata__":{v}}}"#), &[])).kind(is_schema).says("__metadata__ is a JSON");
    }
}

/// `"__metadata__": null` is no metadata, as the `safetensors` crate reads
/// it (contract §3, revision 2): the label of the file without it.
#[test]
fn metadata_null_is_no_metadata() {
    assert_eq!(accept(&file(r#"{"__metadata__":null}"#, &[])), St::new().expected_label());
    let header = format!(r#"{{"__metadata__":null,"a":{}}}"#, entry("F32", "2", 0, 8));
    let without = format!(r#"{{"a":{}}}"#, entry("F32", "2", 0, 8));
    assert_eq!(accept(&file(&header, &[7; 8])), accept(&file(&without, &[7; 8])));
}

#[test]
fn metadata_value_not_a_string() {
    for v in ["1", "null", "true", "[]", "{}", r#"["x"]"#, "1.5"] {
        let header = format!(r#"{{"__metadata__":{{"ok":"x","k":{v}}}}}"#);
        reject(&file(&header, &[])).kind(is_schema).key("k").says("must be strings");
    }
}

#[test]
fn metadata_absent_and_empty_are_the_same() {
    let t = StTensor::filled("w", "U8", &[2], 3);
    let want = St::new().tensor(t.clone()).expected_label();
    for meta in ["", r#""__metadata__":{},"#] {
        let header = format!(r#"{{{meta}"w":{}}}"#, entry("U8", "2", 0, 2));
        assert_eq!(accept(&file(&header, &t.data)), want);
    }
}

// ------------------------------------------------------------ tensor entries

#[test]
fn tensor_entry_not_an_object() {
    for v in ["[]", "\"F32\"", "null", "4", r#"["F32",[1],[0,4]]"#] {
        let (_, bytes) = one(v);
        reject(&bytes).kind(is_schema).tensor("t").says("must be an object");
    }
    // The empty name is a tensor name like any other.
    let bytes = file(r#"{"":7}"#, &[]);
    reject(&bytes).kind(is_schema).tensor("");
}

#[test]
fn tensor_entry_missing_a_member() {
    for (body, missing) in [
        (r#"{"shape":[1],"data_offsets":[0,4]}"#, "dtype"),
        (r#"{"dtype":"F32","data_offsets":[0,4]}"#, "shape"),
        (r#"{"dtype":"F32","shape":[1]}"#, "data_offsets"),
        (r#"{"DTYPE":"F32","shape":[1],"data_offsets":[0,4]}"#, "dtype"),
        ("{}", "dtype"),
    ] {
        let (_, bytes) = one(body);
        reject(&bytes).kind(is_schema).tensor("t").says(&format!("has no {missing}"));
    }
}

#[test]
fn dtype_not_a_string() {
    for v in ["1", "null", "[\"F32\"]", "{}"] {
        let (_, bytes) = one(&format!(r#"{{"dtype":{v},"shape":[1],"data_offsets":[0,4]}}"#));
        reject(&bytes).kind(is_schema).tensor("t").says("dtype must be a string");
    }
}

#[test]
fn dtype_unknown() {
    for d in ["f32", "FLOAT32", "Q4_0", "", "F32 ", "F8_E4M3FN", "I4"] {
        let (_, bytes) = one(&format!(r#"{{"dtype":"{d}","shape":[1],"data_offsets":[0,4]}}"#));
        reject(&bytes)
            .kind(|k| matches!(k.of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::UnknownDtype(x)) if x == d))
            .tensor("t")
            .says(&format!("unknown dtype '{d}'"));
    }
}

#[test]
fn shape_not_an_array() {
    for v in ["4", "\"4\"", "null", "{\"0\":4}"] {
        let (_, bytes) = one(&format!(r#"{{"dtype":"F32","shape":{v},"data_offsets":[0,4]}}"#));
        reject(&bytes).kind(is_schema).tensor("t").says("shape must be an array");
    }
}

#[test]
fn shape_dims_must_be_plain_u64_integers() {
    for dim in ["-1", "1.0", "1e0", "1e3", "1E3", "-0", "0.5", "18446744073709551616", "1e400", "\"1\"", "null", "[1]"]
    {
        let (header, bytes) = one(&format!(r#"{{"dtype":"F32","shape":[{dim}],"data_offsets":[0,4]}}"#));
        let r = reject(&bytes);
        if dim == "1e400" {
            // serde_json refuses a number that overflows an f64: a JSON error, within the number.
            let at = pos(&header, dim);
            r.kind(is_json).at_in(at..=at + 5).says("out of range");
        } else {
            r.kind(is_schema).tensor("t").says("a shape dimension must be an integer in 0..2^64-1");
        }
    }
    // u64::MAX itself is an integer; its size overflows.
    let (_, bytes) = one(r#"{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,4]}"#);
    reject(&bytes).kind(is_size).tensor("t");
}

/// The contract: a number anywhere (an ignored member of a tensor entry,
/// `__metadata__`, an index's ignored member) whose value overflows a
/// 64-bit float is refused, as the reference readers (serde_json, Go's
/// encoding/json) refuse it; one that underflows rounds to 0 and stands.
/// (Where an integer is required, `1e400` and `-0` are refused by
/// `shape_dims_must_be_plain_u64_integers`, `data_offsets_not_exactly_two_integers`
/// and `index_total_size_must_be_a_non_negative_integer`.)
#[test]
fn a_number_that_overflows_a_float_is_refused_anywhere() {
    for big in ["1e400", "-1e400", "2e308"] {
        let (header, bytes) = one(&format!(r#"{{"dtype":"U8","shape":[4],"data_offsets":[0,4],"x":{big}}}"#));
        let at = pos(&header, big);
        reject(&bytes).kind(is_json).at_in(at..=at + big.len() as u64).says("out of range");
        let header = format!(r#"{{"__metadata__":{{"a":{big}}},"t":{}}}"#, entry("U8", "4", 0, 4));
        let at = pos(&header, big);
        reject(&file(&header, &[1, 2, 3, 4])).kind(is_json).at_in(at..=at + big.len() as u64).says("out of range");
        let index = format!(r#"{{"weight_map":{},"x":[{big}]}}"#, good_map());
        reject_index(&index).kind(is_json).says("out of range");
    }
    for small in ["1e-400", "-1e-400", "0e999"] {
        let (_, bytes) = one(&format!(r#"{{"dtype":"U8","shape":[4],"data_offsets":[0,4],"x":{small}}}"#));
        accept(&bytes);
        let (_d, p) = sharded_with(&format!(r#"{{"weight_map":{},"x":{small}}}"#, good_map()));
        accept_path(&p);
    }
}

#[test]
fn data_offsets_not_exactly_two_integers() {
    for v in ["[]", "[0]", "[0,4,4]", "4", "\"0,4\"", "null", "{\"0\":0,\"1\":4}"] {
        let (_, bytes) = one(&format!(r#"{{"dtype":"F32","shape":[1],"data_offsets":{v}}}"#));
        reject(&bytes).kind(is_schema).tensor("t").says("exactly two");
    }
    for (v, which) in [("[0,4.0]", "data_offsets[1]"), ("[-0,4]", "data_offsets[0]"), ("[0,\"4\"]", "data_offsets[1]")]
    {
        let (_, bytes) = one(&format!(r#"{{"dtype":"F32","shape":[1],"data_offsets":{v}}}"#));
        reject(&bytes).kind(is_schema).tensor("t").says(which);
    }
}

#[test]
fn data_offsets_begin_after_end() {
    let (_, bytes) = one(r#"{"dtype":"U8","shape":[0],"data_offsets":[4,0]}"#);
    reject(&bytes).kind(is_schema).tensor("t").says("[4, 0] begins after it ends");
}

#[test]
fn data_offsets_span_is_not_nbytes() {
    for (dtype, shape, begin, end) in
        [("F32", "2", 0, 4), ("F32", "", 0, 8), ("BF16", "2,2", 0, 4), ("U8", "0", 0, 4), ("F4", "4", 0, 4)]
    {
        let header = format!(r#"{{"t":{}}}"#, entry(dtype, shape, begin, end));
        reject(&file(&header, &[0; 8])).kind(is_size).tensor("t").says(&format!("hold {} bytes", end - begin));
    }
}

#[test]
fn nbytes_overflow() {
    for (dtype, shape) in [
        ("F32", "4294967296,4294967296"),
        ("U8", "18446744073709551615,2"),
        ("F32", "4611686018427387904"),
        ("F64", "2305843009213693952"),
        ("F4", "18446744073709551615"),
        // A partial product overflows before the 0: the reference reader's order.
        ("U8", "18446744073709551615,2,0"),
    ] {
        let (_, bytes) = one(&format!(r#"{{"dtype":"{dtype}","shape":[{shape}],"data_offsets":[0,4]}}"#));
        reject(&bytes).kind(is_size).tensor("t").says("overflows u64");
    }
}

/// No partial product overflows (`u64::MAX`, then 0): zero elements, as the
/// reference reader (`try_fold(1, checked_mul)` over the dims) computes it.
#[test]
fn a_zero_dim_after_a_huge_one_is_zero_elements() {
    let header = format!(r#"{{"t":{}}}"#, entry("U8", "18446744073709551615,0", 0, 0));
    let st =
        St::new().tensor(StTensor { name: "t".into(), dtype: "U8".into(), shape: vec![u64::MAX, 0], data: vec![] });
    assert_eq!(accept(&file(&header, &[])), st.expected_label());
}

#[test]
fn sub_byte_dtype_with_partial_bytes() {
    for (dtype, shape) in [("F4", "3"), ("F4", "1"), ("F4", "3,3"), ("F6_E2M3", "2"), ("F6_E3M2", "5"), ("F4", "")] {
        let (_, bytes) = one(&format!(r#"{{"dtype":"{dtype}","shape":[{shape}],"data_offsets":[0,4]}}"#));
        reject(&bytes).kind(is_size).tensor("t").says("not a whole number of bytes");
    }
    // Whole bytes are fine: 8 F4 elements, 4 F6 elements.
    for (dtype, shape, n) in [("F4", vec![2u64, 4], 4usize), ("F6_E2M3", vec![4], 3), ("F6_E3M2", vec![2, 2], 3)] {
        let t = StTensor::filled("t", dtype, &shape, 5);
        assert_eq!(t.data.len(), n);
        let st = St::new().tensor(t);
        assert_eq!(accept(&st.build()), st.expected_label());
    }
}

// ------------------------------------------------------------------ tiling

/// Tensors `a` (F32 [1]) and `b` (F32 [1]) at the given ranges, `data` bytes of data.
fn two(a: (u64, u64), b: (u64, u64), data: usize) -> (u64, Vec<u8>) {
    let header = format!(r#"{{"a":{},"b":{}}}"#, entry("F32", "1", a.0, a.1), entry("F32", "1", b.0, b.1));
    let data_start = 8 + header.len() as u64;
    (data_start, file(&header, &vec![0xAB; data]))
}

/// A hole from region byte 4 to 8: the offset lies in the gap (its start,
/// or where the tensor after it begins), the message gives its bounds.
#[test]
fn hole_between_tensors() {
    let (ds, bytes) = two((0, 4), (8, 12), 12);
    reject(&bytes).kind(is_tiling).at_in(ds + 4..=ds + 8).says("a hole: bytes 4..8");
}

#[test]
fn overlapping_tensors() {
    let header = format!(r#"{{"a":{},"b":{}}}"#, entry("F32", "2", 0, 8), entry("F32", "1", 4, 8));
    let ds = 8 + header.len() as u64;
    reject(&file(&header, &[0; 8])).kind(is_tiling).at(ds + 4).tensor("b").says("overlap");
    // The same range twice.
    let (ds, bytes) = two((0, 4), (0, 4), 4);
    reject(&bytes).kind(is_tiling).at(ds).tensor("b").says("overlap");
}

#[test]
fn bytes_after_the_last_tensor() {
    let (ds, bytes) = two((0, 4), (4, 8), 10);
    reject(&bytes).kind(is_tiling).at(ds + 8).says("2 bytes after the last tensor");
    // No tensors, but data.
    let bytes = file("{}", &[0]);
    reject(&bytes).kind(is_tiling).at(10).says("1 bytes after the last tensor");
    let bytes = file(r#"{"__metadata__":{"a":"b"}}"#, &[0; 3]);
    reject(&bytes).kind(is_tiling).says("3 bytes after the last tensor");
}

#[test]
fn data_before_the_first_tensor() {
    let (ds, bytes) = two((4, 8), (8, 12), 12);
    reject(&bytes).kind(is_tiling).at_in(ds..=ds + 4).says("a hole: bytes 0..4");
}

#[test]
fn range_past_the_end_of_the_file() {
    let (ds, bytes) = two((0, 4), (4, 8), 6);
    reject(&bytes).kind(is_tiling).at(ds + 4).tensor("b").says("reach past the data region (6 bytes)");
    // A single tensor and no data at all.
    let header = format!(r#"{{"t":{}}}"#, entry("F32", "1", 0, 4));
    reject(&file(&header, &[])).kind(is_tiling).at(8 + header.len() as u64).tensor("t");
    // Offsets near u64::MAX: no overflow on the way.
    let big = u64::MAX - 4;
    let header = format!(r#"{{"t":{}}}"#, entry("F32", "1", big, u64::MAX));
    reject(&file(&header, &[0; 4])).kind(is_tiling);
}

#[test]
fn zero_byte_tensors_anywhere_on_the_chain() {
    let a = StTensor::filled("a", "F32", &[1], 1);
    let b = StTensor::filled("b", "U8", &[3], 2);
    let z = |name: &str, dtype: &str| StTensor::filled(name, dtype, &[0, 5], 0);
    let want = St::new()
        .tensor(a.clone())
        .tensor(b.clone())
        .tensor(z("z0", "F16"))
        .tensor(z("z1", "BF16"))
        .tensor(z("z2", "I64"))
        .tensor(z("z3", "F4"))
        .expected_label();
    // Before the first, between, after the last, two at one place.
    let header = format!(
        r#"{{"z1":{},"a":{},"z0":{},"z3":{},"b":{},"z2":{}}}"#,
        entry("BF16", "0,5", 4, 4),
        entry("F32", "1", 0, 4),
        entry("F16", "0,5", 0, 0),
        entry("F4", "0,5", 4, 4),
        entry("U8", "3", 4, 7),
        entry("I64", "0,5", 7, 7),
    );
    let mut data = a.data.clone();
    data.extend_from_slice(&b.data);
    assert_eq!(accept(&file(&header, &data)), want);
    // Only zero-byte tensors, and no data.
    let header = format!(r#"{{"z0":{},"z1":{}}}"#, entry("F16", "0,5", 0, 0), entry("BF16", "0,5", 0, 0));
    let want = St::new().tensor(z("z0", "F16")).tensor(z("z1", "BF16")).expected_label();
    assert_eq!(accept(&file(&header, &[])), want);
}

/// Zero-byte tensors are on the chain only at its links: one inside another
/// tensor's range, or past the end, breaks it (as in the reference reader).
#[test]
fn zero_byte_tensors_off_the_chain() {
    let header = format!(r#"{{"a":{},"z":{}}}"#, entry("F32", "2", 0, 8), entry("F16", "0", 3, 3));
    reject(&file(&header, &[0; 8])).kind(is_tiling).tensor("z").says("overlap");
    let header = format!(r#"{{"a":{},"z":{}}}"#, entry("F32", "2", 0, 8), entry("F16", "0", 9, 9));
    reject(&file(&header, &[0; 8])).kind(is_tiling).says("a hole");
}

#[test]
fn empty_header_without_data_is_a_model() {
    assert_eq!(accept(&file("{}", &[])), St::new().expected_label());
    let st = St::new().meta("format", "pt");
    assert_eq!(accept(&file(r#"{"__metadata__":{"format":"pt"}}"#, &[])), st.expected_label());
}

/// Known gap in the location of a hole: the error is placed at the tensor
/// after it, so a tensor placed far past the end gets an offset outside the
/// file (here about 2^60). Every offset of an error should be a place in the
/// file; the hole's own start (`data_start + 4` here) always is.
#[test]
fn a_hole_is_located_inside_the_file() {
    let far = 1u64 << 60;
    let (ds, bytes) = two((0, 4), (far, far + 4), 8);
    let r = reject(&bytes).kind(is_tiling);
    let o = r.err.offset().expect("an offset");
    assert!(o <= bytes.len() as u64, "offset {o} lies past the end of the {}-byte file: {}", bytes.len(), r.msg());
    assert_eq!(o, ds + 4, "the hole begins at region byte 4: {}", r.msg());
}

// ------------------------------------------------------------------- index

/// The model the index tests shard: metadata, three dtypes.
fn base_model() -> St {
    St::new()
        .meta("format", "pt")
        .meta("author", "me")
        .tensor(StTensor::filled("a", "F32", &[2], 1))
        .tensor(StTensor::filled("b", "U8", &[3], 2))
        .tensor(StTensor::filled("c", "BF16", &[2], 3))
}

/// Writes the base model as two shards (a, b | c) and the given index text.
fn sharded_with(index: &str) -> (Dir, PathBuf) {
    let d = Dir::new();
    let (files, _) = base_model().sharded("model", &[2, 1]);
    for (name, bytes) in &files {
        d.write(name, bytes);
    }
    let p = d.write("model.safetensors.index.json", index.as_bytes());
    (d, p)
}

const S1: &str = "model-00001-of-00002.safetensors";
const S2: &str = "model-00002-of-00002.safetensors";

fn weight_map(entries: &[(&str, &str)]) -> String {
    let e: Vec<String> =
        entries.iter().map(|(t, f)| format!("{}:{}", json_str(t, false), json_str(f, false))).collect();
    format!("{{{}}}", e.join(","))
}

fn good_map() -> String {
    weight_map(&[("a", S1), ("b", S1), ("c", S2)])
}

#[track_caller]
fn reject_index(index: &str) -> Rejected {
    let (d, p) = sharded_with(index);
    let err = reject_path(&p);
    rejected_at(d, p, err).names_file()
}

#[test]
fn the_sharded_base_model_labels_like_the_unsharded_file() {
    let st = base_model();
    let (d, _) = sharded_with(&st.sharded("model", &[2, 1]).1);
    let want = st.expected_label();
    assert_eq!(accept_path(&d.path("model.safetensors.index.json")), want);
    assert_eq!(accept_path(&d.path(S2)), want);
}

/// Every name that is not plain is refused while the index is read, before
/// any file is opened: the named target exists and would parse (or is a
/// directory), and a plain name listed before it names a missing file, which
/// an opener that checked names one at a time would have tripped on first.
#[test]
fn index_file_names_must_be_plain() {
    let w = StTensor::filled("w", "F32", &[1], 9);
    let valid = St::new().tensor(w).build();
    for bad in ["../x.safetensors", "/etc/passwd", "a/b", "a\\b", "a\0b", "", ".", "..", "sub/../x.safetensors"] {
        for with_missing in [false, true] {
            let d = Dir::new();
            std::fs::create_dir_all(d.path("sub/a")).unwrap();
            std::fs::create_dir_all(d.path("sub/sub")).unwrap();
            d.write("x.safetensors", &valid);
            d.write("sub/a/b", &valid);
            d.write("sub/a\\b", &valid);
            let mut entries = vec![];
            if with_missing {
                // "+" sorts before every bad name but "", "\0..." (which sort first anyway).
                entries.push(("+", "+missing.safetensors"));
            }
            entries.push(("w", bad));
            let index = format!(r#"{{"weight_map":{}}}"#, weight_map(&entries));
            let p = d.write("sub/model.safetensors.index.json", index.as_bytes());
            let err = reject_path(&p);
            let r = rejected_at(d, p, err).names_file().tensor("w").says("only a plain file name");
            r.kind(|k| matches!(k.of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::NotPlainName { name, .. }) if name == bad));
        }
    }
}

#[test]
fn index_json_rules_are_the_headers() {
    // Located at the offset in the index text (no length prefix here).
    let index = format!(r#"{{"weight_map":{},"weight_map":{}}}"#, good_map(), good_map());
    let at = index.rfind("\"weight_map\"").unwrap() as u64;
    reject_index(&index).kind(is_json).at(at).says("repeated key 'weight_map'");
    let index = format!(r#"{{"weight_map":{}}} x"#, good_map());
    reject_index(&index).kind(is_json).at(index.len() as u64 - 1).says("trailing bytes");
    let index = format!(r#"{{"weight_map":{},"x":{}1{}}}"#, good_map(), "[".repeat(64), "]".repeat(64));
    reject_index(&index).kind(is_json).says("deeper than 64");
    let index = format!(r#"{{"weight_map":{},"metadata":{{"k":"\udc00"}}}}"#, good_map());
    reject_index(&index).kind(is_json).says("lone surrogate");
    let mut index = format!(r#"{{"weight_map":{},"metadata":{{"k":"x"}}}}"#, good_map()).into_bytes();
    let at = index.len() - 4;
    index[at] = 0xff;
    let (d, p) = sharded_with("");
    std::fs::write(&p, &index).unwrap();
    let err = reject_path(&p);
    rejected_at(d, p, err).names_file().kind(is_json).at(at as u64).says("not UTF-8");
}

/// An index longer than the header limit is refused before it is read (a
/// sparse file: nothing is written).
#[test]
fn index_over_the_size_limit() {
    let (d, p) = sharded_with("");
    std::fs::File::create(&p).unwrap().set_len(100_000_001).unwrap();
    let err = reject_path(&p);
    rejected_at(d, p, err)
        .names_file()
        .kind(|k| matches!(k, ErrorKind::HeaderTooLarge { declared: 100_000_001, limit: 100_000_000 }))
        .at(0);
}

#[test]
fn index_not_an_object() {
    for text in ["[]", "\"x\"", "null", "1"] {
        reject_index(text).kind(is_schema).at(0).says("the index is a JSON");
    }
}

#[test]
fn index_without_weight_map() {
    reject_index(r#"{"metadata":{}}"#).kind(is_schema).says("no weight_map");
    reject_index(r#"{"weight_map":[]}"#).kind(is_schema).says("weight_map is a JSON array");
    let index = format!(r#"{{"weight_map":{}}}"#, r#"{"a":1}"#);
    reject_index(&index).kind(is_schema).tensor("a").says("must be a file name");
}

/// `total_size` and `total_parameters` are derived from the tensors and
/// may hold any JSON value (contract §5, revision 2: every index
/// `transformers` writes since mid-2025 has an integer `total_parameters`);
/// neither enters the label, and `metadata: null` is no metadata.
#[test]
fn index_derived_members_hold_any_value_and_never_enter_the_label() {
    let want = base_model().expected_label();
    let (_, index) = base_model().sharded("model", &[2, 1]);
    let total = index.split("\"total_size\":").nth(1).unwrap().split([',', '}']).next().unwrap().to_string();
    for v in ["4022468096", "-1", "-0", "\"12\"", "1.5", "1e3", "null", "18446744073709551616", "[1]", "{}"] {
        let text = index
            .replace(&format!("\"total_size\":{total}"), &format!("\"total_size\":{v}"))
            .replace("{\"metadata\":{", &format!("{{\"metadata\":{{\"total_parameters\":{v},"));
        assert!(text.contains(&format!("\"total_size\":{v}")) && text.contains("total_parameters"), "{text}");
        let (_d, p) = sharded_with(&text);
        assert_eq!(accept_path(&p), want, "{v}");
    }
}

#[test]
fn index_metadata_values_must_be_strings() {
    for v in ["1", "null", "[]", "{}"] {
        let index = format!(r#"{{"metadata":{{"author":{v}}},"weight_map":{}}}"#, good_map());
        reject_index(&index).kind(is_schema).key("author").says("metadata values must be strings");
    }
    // `null` is none; an array is no metadata object.
    let index = format!(r#"{{"metadata":null,"weight_map":{}}}"#, good_map());
    let (_d, p) = sharded_with(&index);
    accept_path(&p);
    let index = format!(r#"{{"metadata":[],"weight_map":{}}}"#, good_map());
    reject_index(&index).kind(is_schema).says("metadata is a JSON array");
}

#[test]
fn a_tensor_of_a_file_missing_from_weight_map() {
    let index = format!(r#"{{"weight_map":{}}}"#, weight_map(&[("a", S1), ("c", S2)]));
    let (d, p) = sharded_with(&index);
    let err = reject_path(&p);
    let shard = d.path(S1);
    rejected_at(d, shard, err).names_file().kind(is_mismatch).tensor("b").says("does not list this tensor");
}

#[test]
fn a_weight_map_entry_whose_file_lacks_the_tensor() {
    let index = format!(r#"{{"weight_map":{}}}"#, weight_map(&[("a", S1), ("b", S1), ("c", S2), ("zz", S2)]));
    reject_index(&index).kind(is_mismatch).tensor("zz").says(&format!("lists this tensor in {S2}"));
    // Listed with the wrong one of two existing files.
    let index = format!(r#"{{"weight_map":{}}}"#, weight_map(&[("a", S1), ("b", S2), ("c", S2)]));
    let (d, p) = sharded_with(&index);
    let err = reject_path(&p);
    let shard = d.path(S1);
    rejected_at(d, shard, err).names_file().kind(is_mismatch).tensor("b").says(&format!("lists this tensor in {S2}"));
}

#[test]
fn a_weight_map_entry_naming_a_missing_file() {
    let index =
        format!(r#"{{"weight_map":{}}}"#, weight_map(&[("a", S1), ("b", S1), ("c", S2), ("zz", "gone.safetensors")]));
    let (d, p) = sharded_with(&index);
    let err = reject_path(&p);
    assert!(err.is_not_found(), "{err}");
    let missing = d.path("gone.safetensors");
    rejected_at(d, missing, err).names_file();
}

#[test]
fn a_tensor_in_two_files() {
    // With an index: the second file holds a tensor the index puts in the first.
    let st = base_model();
    let d = Dir::new();
    let (files, index) = st.sharded("model", &[2, 1]);
    d.write(S1, &files[0].1);
    let second = St {
        metadata: Some(vec![("format".into(), "pt".into())]),
        tensors: vec![st.tensors[2].clone(), st.tensors[0].clone()],
        ..St::default()
    };
    d.write(S2, &second.build());
    let p = d.write("model.safetensors.index.json", index.as_bytes());
    let err = reject_path(&p);
    let shard = d.path(S2);
    rejected_at(d, shard, err).names_file().kind(is_mismatch).tensor("a").says(&format!("lists this tensor in {S1}"));
    // Without an index: the shard set joins by name and refuses the repeat.
    let d = Dir::new();
    d.write(S1, &files[0].1);
    d.write(S2, &second.build());
    let err = reject_path(&d.path(S1));
    let (first, shard) = (d.path(S1), d.path(S2));
    let r = rejected_at(d, shard, err).names_file().tensor("a").says("also in");
    r.kind(|k| matches!(k, ErrorKind::TensorInTwoShards { other } if *other == first));
}

#[test]
fn metadata_conflict_between_a_shard_and_the_index() {
    let index = format!(r#"{{"metadata":{{"author":"me","format":"tf"}},"weight_map":{}}}"#, good_map());
    let (d, p) = sharded_with(&index);
    let err = reject_path(&p);
    let shard = d.path(S1);
    rejected_at(d, shard, err)
        .names_file()
        .kind(|k| matches!(k.of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::MetadataConflict)))
        .key("format")
        .says("another in the index");
    // The same value in both counts once: the unsharded file's label.
    let index = format!(r#"{{"metadata":{{"author":"me","format":"pt"}},"weight_map":{}}}"#, good_map());
    let (_d, p) = sharded_with(&index);
    assert_eq!(accept_path(&p), base_model().expected_label());
}

/// Three shards of the base model, one tensor each, no index.
fn three_shards(d: &Dir, skip: Option<usize>) -> Vec<PathBuf> {
    let st = base_model();
    let mut paths = Vec::new();
    for (i, t) in st.tensors.iter().enumerate() {
        let name = format!("m-{:05}-of-00003.safetensors", i + 1);
        if skip != Some(i + 1) {
            let shard = St { tensors: vec![t.clone()], ..st.clone() };
            d.write(&name, &shard.build());
        }
        paths.push(d.path(&name));
    }
    paths
}

#[test]
fn shard_set_without_index_with_a_missing_shard() {
    for missing in [2usize, 3] {
        let d = Dir::new();
        let paths = three_shards(&d, Some(missing));
        let err = reject_path(&paths[0]);
        let gone = paths[missing - 1].clone();
        let r = rejected_at(d, paths[0].clone(), err).names_file();
        let r = r.kind(
            |k| matches!(k, ErrorKind::MissingShard { no, count: 3, path } if *no == missing as u64 && *path == gone),
        );
        r.says(&format!("shard {missing} of 3 is missing: {}", gone.display()));
    }
    // All there: the unsharded file's label.
    let d = Dir::new();
    let paths = three_shards(&d, None);
    assert_eq!(accept_path(&paths[0]), base_model().expected_label());
}

#[test]
fn a_later_shard_given_alone_without_index() {
    for skip_first in [false, true] {
        let d = Dir::new();
        let paths = three_shards(&d, skip_first.then_some(1));
        let first = paths[0].clone();
        for later in &paths[1..] {
            let err = reject_path(later);
            let r = rejected_at(Dir::new(), later.clone(), err).names_file();
            let r = r.kind(|k| matches!(k, ErrorKind::NotFirstShard { first: f, count: 3, .. } if *f == first));
            r.says(&format!("pass the first shard instead: {}", first.display()));
        }
        drop(d);
    }
}

#[test]
fn a_given_shard_not_listed_in_its_sibling_index() {
    let st = base_model();
    let (d, _) = sharded_with(&st.sharded("model", &[2, 1]).1);
    // A third file whose name says it belongs beside that index.
    let extra = St::new().tensor(StTensor::filled("d", "U8", &[1], 4));
    let given = d.write("model-00003-of-00003.safetensors", &extra.build());
    let err = reject_path(&given);
    let index = d.path("model.safetensors.index.json");
    rejected_at(d, given, err)
        .names_file()
        .kind(is_mismatch)
        .says(&format!("{} does not list this file", index.display()));
}

// --------------------------------------------------------------- directories

// A directory is labelled whole (docs/adr/0023, superseding ADR 0012's
// "one model in it"): its rules are tested in tests/formats/dir_label.rs.

// ---------------------------------------------------------------- the binary

fn run(args: &[&Path]) -> (i32, String, String) {
    let out = Command::new(gguf_digest_bin()).args(args).output().expect("runs the binary");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (out.status.code().expect("an exit code"), text(out.stdout), text(out.stderr))
}

#[test]
fn cli_reports_a_bad_file_and_labels_the_others() {
    let d = Dir::new();
    let good = St::new().meta("format", "pt").tensor(StTensor::filled("w", "F32", &[3], 1));
    let a = d.write("a.safetensors", &good.build());
    let (ds, bytes) = two((0, 4), (4, 8), 6);
    let bad = d.write("bad.safetensors", &bytes);
    let c = d.write("c.safetensors", &file("{}", &[]));
    let (code, out, err) = run(&[&a, &bad, &c]);
    assert_eq!(code, 2, "stderr: {err}");
    let want_out =
        format!("{}  {}\n{}  {}\n", good.expected_label(), a.display(), St::new().expected_label(), c.display());
    assert_eq!(out, want_out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    let prefix = format!("gguf-digest: {}: byte {}, tensor 'b': tensor data does not tile", bad.display(), ds + 4);
    assert!(lines[0].starts_with(&prefix), "{:?}\n  wanted prefix {prefix:?}", lines[0]);
}

#[test]
fn cli_error_lines_for_json_schema_index_and_directories() {
    let d = Dir::new();
    let header = r#"{"__metadata__":{"a":"1","a":"2"}}"#;
    let json = d.write("json.safetensors", &file(header, &[]));
    let (_, bytes) = one(r#"{"dtype":"Q4_0","shape":[1],"data_offsets":[0,4]}"#);
    let dtype = d.write("dtype.safetensors", &bytes);
    let sub = d.path("sub");
    std::fs::create_dir(&sub).unwrap();
    let index = d.write("sub/m.safetensors.index.json", br#"{"weight_map":{"w":"../json.safetensors"}}"#);
    let empty = d.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, out, err) = run(&[&json, &dtype, &index, &empty]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    let lines: Vec<&str> = err.lines().collect();
    let at = rpos(header, "\"a\"");
    assert_eq!(lines.len(), 4, "{err}");
    assert_eq!(lines[0], format!("gguf-digest: {}: byte {at}: invalid JSON: repeated key 'a'", json.display()));
    assert_eq!(lines[1], format!("gguf-digest: {}: tensor 't': unknown dtype 'Q4_0'", dtype.display()));
    assert!(
        lines[2].starts_with(&format!(
            "gguf-digest: {}: tensor 'w': file name '../json.safetensors' holds a path separator",
            index.display()
        )),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        format!("gguf-digest: {}: holds no file; a directory label needs at least one", empty.display())
    );
}

#[test]
fn cli_names_a_broken_safetensors_file_by_its_extension() {
    // Bytes no sniff claims (a header length over the limit): the extension
    // picks the format, so the error is safetensors', not "bad GGUF magic".
    let d = Dir::new();
    let mut bytes = u64::MAX.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    let p = d.write("huge.safetensors", &bytes);
    let short = d.write("short.safetensors", b"\x02\0\0");
    let (code, _, err) = run(&[&p, &short]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with(&format!("gguf-digest: {}: byte 0: declares a 18446744073709551615-byte", p.display())),
        "{err}"
    );
    assert!(
        lines[1].starts_with(&format!("gguf-digest: {}: byte 0: file ends inside the header length", short.display())),
        "{err}"
    );
}
