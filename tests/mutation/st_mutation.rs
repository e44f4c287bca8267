//! Mutation testing of the safetensors reader against hostile files, the
//! counterpart of tests/mutation/gguf_mutation.rs (GGUF).
//!
//! Valid files from the test writer (`common::st`: metadata with escapes
//! and non-ASCII text, many dtypes, sub-byte ones, scalars, zero-byte
//! tensors, padding, unknown members, no tensors at all) are mutated
//! deterministically: every bit of the length field and the JSON header
//! flipped, bytes set to JSON's structural characters and to bytes that
//! break UTF-8, the file cut at every header offset, bytes inserted and
//! deleted (with the header length kept right, or not), the header length
//! set to hostile values; then JSON-aware edits made on the header's own
//! structure: every number and string replaced by hostile ones, members
//! duplicated (plainly and under an escaped spelling of the key), deleted
//! and swapped, whitespace added; and seeded random stacks of all of these.
//!
//! Every mutant is parsed from memory with `gguf_digest_formats::safetensors::parse`
//! under a counting global allocator. The pass criterion is the absence of a
//! panic, plus these oracles:
//!
//! - no single allocation, and no peak of live heap, while one mutant is
//!   parsed (or labelled through a file) exceeds 16 × its size + 1 MiB,
//!   whatever sizes the file declares; no mutant takes longer than
//!   [`TIME_CAP`];
//! - every error has a message, and a pure parse names no file;
//! - an accepted file's tensors tile its data region exactly;
//! - a sample (every 16th accepted mutant, every 200th of all, every mutant
//!   with a stronger expectation) is written to a file and labelled with
//!   `Model::open_with` in both read modes: the same outcome as in memory,
//!   the same label in both modes;
//! - reordering members, re-spelling keys with escapes and adding
//!   whitespace keep the label; a member repeated (in any spelling) is a
//!   JSON error naming the repeated key.
//!
//! `ST_MUTATION_COUNT` sets how many mutants run at least (random stacks top
//! the systematic ones up to it; default [`DEFAULT_COUNT`]);
//! `ST_MUTATION_SEED` picks another seed (the default is fixed so that a
//! failure reproduces). On a panic the input is written to
//! `$CARGO_TARGET_TMPDIR/st-mutation-crash.safetensors` and its recipe printed.
use crate::common;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

use common::harness::*;
use common::st::*;
use gguf_digest::{ErrorKind, OpenOptions, ReadMode};
use gguf_digest_formats::safetensors::{self, Model, SafetensorsFile};

/// Mutants run by default (about 11 s in a debug build on two cores).
const DEFAULT_COUNT: u64 = 80_000;

/// Longest time one mutant may take (debug build, a busy shared core).
const TIME_CAP: Duration = Duration::from_secs(5);

fn count() -> u64 {
    std::env::var("ST_MUTATION_COUNT").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_COUNT)
}

fn seed() -> u64 {
    std::env::var("ST_MUTATION_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x7361_6665_7465_6e73)
}

/// The most heap one mutant of `len` bytes may take, in one allocation or in all.
fn bound(len: usize) -> usize {
    (1 << 20) + 16 * len
}

// ---------------------------------------------------------------------------
// An independent map of a valid header's JSON: where its objects' members,
// numbers and strings lie (walked here, not by the library).

#[derive(Clone, Debug)]
struct Member {
    /// The key, quotes included.
    key: Range<usize>,
    /// Key, colon and value.
    whole: Range<usize>,
}

#[derive(Clone, Debug, Default)]
struct JsonMap {
    /// Every object's members, in text order (positions in the header text).
    objects: Vec<Vec<Member>>,
    numbers: Vec<Range<usize>>,
    /// String values and keys, quotes included.
    strings: Vec<Range<usize>>,
    /// Positions right after a `,` `:` `{` or `[`: whitespace may go there.
    gaps: Vec<usize>,
}

struct Walker<'a> {
    t: &'a [u8],
    at: usize,
    map: JsonMap,
}

impl Walker<'_> {
    fn ws(&mut self) {
        while matches!(self.t.get(self.at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) {
        assert_eq!(self.t[self.at], b, "walker: expected {:?} at {}", b as char, self.at);
        self.at += 1;
        if matches!(b, b',' | b':' | b'{' | b'[') {
            self.map.gaps.push(self.at);
        }
    }

    fn string(&mut self) -> Range<usize> {
        let start = self.at;
        self.eat(b'"');
        while self.t[self.at] != b'"' {
            self.at += if self.t[self.at] == b'\\' { 2 } else { 1 };
        }
        self.at += 1;
        self.map.strings.push(start..self.at);
        start..self.at
    }

    fn value(&mut self) -> Range<usize> {
        self.ws();
        let start = self.at;
        match self.t[self.at] {
            b'{' => {
                self.eat(b'{');
                let mut members = Vec::new();
                self.ws();
                if self.t[self.at] == b'}' {
                    self.at += 1;
                } else {
                    loop {
                        self.ws();
                        let key = self.string();
                        self.ws();
                        self.eat(b':');
                        let v = self.value();
                        members.push(Member { key: key.clone(), whole: key.start..v.end });
                        self.ws();
                        if self.t[self.at] == b',' {
                            self.eat(b',');
                        } else {
                            self.eat(b'}');
                            break;
                        }
                    }
                }
                self.map.objects.push(members);
            }
            b'[' => {
                self.eat(b'[');
                self.ws();
                if self.t[self.at] == b']' {
                    self.at += 1;
                } else {
                    loop {
                        self.value();
                        self.ws();
                        if self.t[self.at] == b',' {
                            self.eat(b',');
                        } else {
                            self.eat(b']');
                            break;
                        }
                    }
                }
            }
            b'"' => {
                self.string();
            }
            _ => {
                while matches!(self.t.get(self.at), Some(b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E')) {
                    self.at += 1;
                }
                if self.t[start].is_ascii_digit() || self.t[start] == b'-' {
                    self.map.numbers.push(start..self.at);
                }
            }
        }
        start..self.at
    }
}

fn map_json(header: &[u8]) -> JsonMap {
    let mut w = Walker { t: header, at: 0, map: JsonMap::default() };
    w.value();
    w.ws();
    assert_eq!(w.at, header.len(), "walker: the header is one value");
    w.map
}

/// A key spelled with a `\u` escape for every UTF-16 unit.
fn escaped_key(quoted: &[u8]) -> Vec<u8> {
    let key: String = serde_json::from_slice(quoted).expect("a valid key");
    let mut out = String::from("\"");
    for unit in key.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out.into_bytes()
}

// ---------------------------------------------------------------------------
// Base files.

struct Base {
    name: &'static str,
    bytes: Vec<u8>,
    /// The header text (without the length field).
    header: Vec<u8>,
    map: JsonMap,
    label: String,
}

impl Base {
    fn new(name: &'static str, st: &St) -> Base {
        let bytes = st.build();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header = bytes[8..8 + n].to_vec();
        let map = map_json(&header);
        Base { name, bytes, header, map, label: st.expected_label() }
    }

    /// The length field and the header: what most mutations aim at.
    fn head_len(&self) -> usize {
        8 + self.header.len()
    }

    fn data(&self) -> &[u8] {
        &self.bytes[self.head_len()..]
    }

    /// A file with this header text (the length field set to its length) and the base's data.
    fn with_header(&self, header: &[u8]) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header);
        out.extend_from_slice(self.data());
        out
    }

    /// The header with `range` replaced by `with`.
    fn splice(&self, range: Range<usize>, with: &[u8]) -> Vec<u8> {
        let mut h = self.header.clone();
        h.splice(range, with.iter().copied());
        h
    }
}

fn bases() -> Vec<Base> {
    let mut rich =
        St::new().meta("format", "pt").meta("author", "zoë \"q\" \\ ✓").meta("", "empty key").meta("k\n", "");
    for (i, dtype) in ["F32", "BF16", "U8", "F4", "F6_E2M3", "I64", "C64", "BOOL", "F8_E4M3"].iter().enumerate() {
        let shape: &[u64] = if *dtype == "F6_E2M3" { &[2, 4] } else { &[2, 3] };
        rich = rich.tensor(StTensor::filled(&format!("layer.{i}.{dtype}"), dtype, shape, i as u8));
    }
    let rich = rich
        .tensor(StTensor::filled("scalar", "F32", &[], 1))
        .tensor(StTensor::filled("zero.a", "F16", &[0, 7], 2))
        .tensor(StTensor::filled("", "U8", &[3], 4))
        .tensor(StTensor::filled("émoji 🦀", "I16", &[1, 3], 5));
    let n = rich.tensors.len();
    let laid_out = St {
        escape: true,
        pad: 13,
        extra_member: Some("\"note\": [1.5, -2, {\"x\": null}]".into()),
        key_order: Some((0..n).rev().collect()),
        data_order: Some((0..n).map(|i| (i * 5 + 3) % n).collect()),
        metadata_last: true,
        ..rich.clone()
    };
    assert_eq!(n % 5, 3, "5 and n coprime: the data order is a permutation");
    let bare = St::new().tensor(StTensor::filled("w", "F32", &[4], 9)).tensor(StTensor::filled("b", "F16", &[2], 7));
    let sub_byte = St::new()
        .meta("quant", "fp4")
        .tensor(StTensor::filled("q", "F4", &[6], 1))
        .tensor(StTensor::filled("r", "F6_E3M2", &[4], 2))
        .tensor(StTensor::filled("z", "F4", &[0], 3));
    vec![
        Base::new("rich", &rich),
        Base::new("laid-out", &laid_out),
        Base::new("bare", &bare),
        Base::new("sub-byte", &sub_byte),
        Base::new("meta-only", &St::new().meta("a", "b")),
        Base::new("empty", &St::new()),
    ]
}

// ---------------------------------------------------------------------------
// Mutants.

/// A mutant's recipe: base, operation, and the operation's two numbers.
#[derive(Clone, Copy, Debug)]
struct Desc<'a> {
    base: &'a str,
    op: &'static str,
    a: u64,
    b: u64,
}

impl fmt::Display for Desc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {} a={} b={} (0x{:x})", self.base, self.op, self.a, self.b, self.b)
    }
}

/// What a mutant must do beyond not crashing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Anything,
    /// Parses and has the base's label.
    SameLabel,
    /// A JSON error: a key repeated.
    RepeatedKey,
    /// A JSON error of any kind.
    Json,
}

/// Bytes that matter to JSON and to UTF-8.
const BYTES: [u8; 20] = [
    0x00, 0xFF, b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'9', b'-', b'.', b'e', b' ', 0x80, 0xC3, b'u',
    0x7F,
];

/// Header lengths that break the length field.
fn hostile_lengths(file_len: u64, n: u64) -> Vec<u64> {
    vec![
        0,
        1,
        2,
        7,
        8,
        n.wrapping_sub(1),
        n + 1,
        n + 8,
        file_len - 8,
        file_len - 7,
        file_len,
        99_999_999,
        100_000_000,
        100_000_001,
        1 << 31,
        1 << 32,
        1 << 63,
        u64::MAX - 7,
        u64::MAX,
    ]
}

/// Numbers a header may hold in place of another.
fn hostile_numbers(region: u64) -> Vec<String> {
    let mut v: Vec<String> = [
        "0",
        "1",
        "2",
        "3",
        "4",
        "8",
        "-1",
        "-0",
        "1.0",
        "1e3",
        "0e0",
        "4294967296",
        "4294967295",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
        "1e400",
        "-1e400",
        "00",
        "1.",
        "--1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend([region.saturating_sub(1), region, region + 1].map(|n| n.to_string()));
    v
}

/// What may stand in place of a string (value or key).
const STRINGS: [&str; 16] = [
    r#""""#,
    r#""F32""#,
    r#""F4""#,
    r#""Q4_0""#,
    r#""__metadata__""#,
    r#""dtype""#,
    r#""shape""#,
    r#""data_offsets""#,
    r#""\ud800""#,
    r#""\udc00x""#,
    r#""\u0000""#,
    r#""\u0046\u0033\u0032""#,
    "1",
    "null",
    "[]",
    "{}",
];

// ---------------------------------------------------------------------------
// The runner.

#[derive(Default)]
struct Stats {
    mutants: u64,
    parsed_ok: u64,
    /// Mutants with an expectation beyond "anything but a crash".
    expected: u64,
    via_file: u64,
    labelled: u64,
    worst: Worst,
}

struct Runner {
    dir: tempfile::TempDir,
    stats: Stats,
    ok_seen: u64,
}

impl Runner {
    fn new() -> Runner {
        install_panic_report("st mutation test", "st-mutation-crash.safetensors");
        let dir = if Path::new("/dev/shm").is_dir() { tempfile::tempdir_in("/dev/shm") } else { tempfile::tempdir() };
        Runner { dir: dir.expect("temp dir"), stats: Stats::default(), ok_seen: 0 }
    }

    fn note(&mut self, desc: &Desc, len: usize, (mem, biggest): (usize, usize), time: Duration) {
        let bound = bound(len);
        assert!(biggest <= bound, "mutant [{desc}] of {len} bytes allocated {biggest} bytes at once (bound {bound})");
        assert!(mem <= bound, "mutant [{desc}] of {len} bytes held {mem} bytes of heap (bound {bound})");
        assert!(time < TIME_CAP, "mutant [{desc}] took {time:?} (cap {TIME_CAP:?})");
        self.stats.worst.note(desc, mem, time);
    }

    fn run(&mut self, base: &Base, desc: Desc, bytes: &[u8], expect: Expect) {
        set_current(&desc, bytes);
        self.stats.mutants += 1;
        let t0 = Instant::now();
        let mem0 = window_start();
        let parsed = safetensors::parse(bytes);
        let used = window_end(mem0);
        self.note(&desc, bytes.len(), used, t0.elapsed());

        match &parsed {
            Ok(f) => check_accepted(&desc, bytes, f),
            Err(e) => {
                assert!(
                    !e.detail().is_empty() && !e.to_string().is_empty(),
                    "mutant [{desc}]: an error without a message"
                );
                assert_eq!(e.path(), None, "mutant [{desc}]: a pure parse named a file: {e}");
            }
        }
        if expect != Expect::Anything {
            self.stats.expected += 1;
        }
        match (&parsed, expect) {
            (_, Expect::Anything) | (Ok(_), Expect::SameLabel) => {}
            (Err(e), Expect::Json) if matches!(e.kind(), ErrorKind::Json(_)) => {}
            (Err(e), Expect::RepeatedKey) if matches!(e.kind(), ErrorKind::Json(w) if w.contains("repeated key")) => {}
            (r, want) => panic!(
                "mutant [{desc}]: expected {want:?}, got {:?}",
                r.as_ref().map(|_| "Ok").map_err(|e| e.to_string())
            ),
        }

        if parsed.is_ok() {
            self.stats.parsed_ok += 1;
            self.ok_seen += 1;
        }
        let via_file =
            (parsed.is_ok() && self.ok_seen % 16 == 1) || self.stats.mutants % 200 == 0 || expect == Expect::SameLabel;
        if via_file {
            self.through_files(base, &desc, bytes, &parsed, expect);
        }
    }

    fn through_files(
        &mut self,
        base: &Base,
        desc: &Desc,
        bytes: &[u8],
        parsed: &gguf_digest::Result<SafetensorsFile>,
        expect: Expect,
    ) {
        self.stats.via_file += 1;
        let path = self.dir.path().join("m.safetensors");
        std::fs::write(&path, bytes).unwrap();
        let mut labels = Vec::new();
        for mode in [ReadMode::Mmap, ReadMode::Pread] {
            let t0 = Instant::now();
            let mem0 = window_start();
            let opened = Model::open_with(&path, OpenOptions { read_mode: mode, ..OpenOptions::default() });
            let digest = opened.as_ref().map(|m| m.digest());
            let used = window_end(mem0);
            self.note(desc, bytes.len(), used, t0.elapsed());
            match (parsed, &opened) {
                (Ok(_), Ok(_)) => {}
                (Err(a), Err(b)) => {
                    assert_eq!(a.detail(), b.detail(), "mutant [{desc}], {mode:?}: memory and file disagree");
                    assert_eq!(b.path(), Some(path.as_path()), "mutant [{desc}], {mode:?}: {b}");
                }
                (a, b) => panic!(
                    "mutant [{desc}], {mode:?}: memory parse {:?} but file open {:?}",
                    a.as_ref().map(|_| "Ok").map_err(|e| e.to_string()),
                    b.as_ref().map(|_| "Ok").map_err(|e| e.to_string())
                ),
            }
            if let Ok(d) = digest {
                let d = d.unwrap_or_else(|e| panic!("mutant [{desc}], {mode:?}: parsed but did not label: {e}"));
                labels.push(d.label());
            }
        }
        if let [a, b] = labels.as_slice() {
            assert_eq!(a, b, "mutant [{desc}]: the two read modes disagree");
            self.stats.labelled += 1;
            if expect == Expect::SameLabel {
                assert_eq!(*a, base.label, "mutant [{desc}]: a change of layout changed the label");
            }
        }
    }

    fn report(&self, systematic: u64, started: Instant) {
        let s = &self.stats;
        eprintln!(
            "st mutation test: {} mutants ({systematic} systematic), {} parsed OK, {} with an expected outcome, \
             {} through files ({} labelled), {:.1?}; peak heap {} KiB [{}]; slowest {:.1?} [{}]",
            s.mutants,
            s.parsed_ok,
            s.expected,
            s.via_file,
            s.labelled,
            started.elapsed(),
            s.worst.mem.0 / 1024,
            s.worst.mem.1,
            s.worst.time.0,
            s.worst.time.1
        );
    }
}

/// What an accepted file promises: its tensors tile its data region.
fn check_accepted(desc: &Desc, bytes: &[u8], f: &SafetensorsFile) {
    assert_eq!(f.data_start, 8 + f.header_len, "mutant [{desc}]");
    assert_eq!(f.file_len, bytes.len() as u64, "mutant [{desc}]");
    assert!(f.data_start <= f.file_len, "mutant [{desc}]: data starts past the end");
    let mut ranges: Vec<(u64, u64)> = f.tensors.iter().map(|t| (t.begin, t.end)).collect();
    ranges.sort_unstable();
    let mut next = 0;
    for (b, e) in ranges {
        assert_eq!(b, next, "mutant [{desc}]: accepted a file whose tensors do not tile");
        next = e;
    }
    assert_eq!(next, f.file_len - f.data_start, "mutant [{desc}]: accepted bytes after the last tensor");
    for t in &f.tensors {
        assert_eq!(t.end - t.begin, t.nbytes, "mutant [{desc}]: {}", t.name);
    }
    let mut names: Vec<&str> = f.tensors.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), f.tensors.len(), "mutant [{desc}]: accepted a tensor name twice");
}

// ---------------------------------------------------------------------------
// Mutation operators.

/// Byte-level mutations of the length field and the header, systematic.
fn bytes_level(runner: &mut Runner, base: &Base, rng: &mut Rng) {
    let b = &base.bytes;
    let h = base.head_len();
    let d = |op, a: usize, v: u64| Desc { base: base.name, op, a: a as u64, b: v };
    let mut m = b.clone();
    for i in 0..h {
        for bit in 0..8 {
            m[i] ^= 1 << bit;
            runner.run(base, d("bit flip", i, bit), &m, Expect::Anything);
            m[i] ^= 1 << bit;
        }
    }
    // JSON's structural bytes, a sample of them at every header position.
    for i in 8..h {
        for _ in 0..3 {
            let v = *rng.pick(&BYTES);
            if b[i] != v {
                m[i] = v;
                runner.run(base, d("byte set", i, u64::from(v)), &m, Expect::Anything);
            }
        }
        m[i] = b[i];
    }
    for cut in 0..=h {
        runner.run(base, d("truncate", cut, 0), &b[..cut], Expect::Anything);
    }
    for _ in 0..16.min(b.len() - h) {
        let cut = h + rng.below(b.len() - h);
        runner.run(base, d("truncate in data", cut, 0), &b[..cut], Expect::Anything);
    }
    // Insertions and deletions in the header, with the length kept right
    // (so that the JSON is what breaks) and, sometimes, not.
    for i in 0..=base.header.len() {
        let v = *rng.pick(&BYTES);
        let hdr = base.splice(i..i, &[v]);
        runner.run(base, d("insert byte", i, u64::from(v)), &base.with_header(&hdr), Expect::Anything);
        if i < base.header.len() {
            let hdr = base.splice(i..i + 1, &[]);
            runner.run(base, d("delete byte", i, 0), &base.with_header(&hdr), Expect::Anything);
        }
        if rng.chance(8) {
            let mut raw = b.clone();
            raw.insert(8 + i, v);
            runner.run(base, d("insert byte, length kept", i, u64::from(v)), &raw, Expect::Anything);
        }
    }
    // The length field.
    let n = base.header.len() as u64;
    for v in hostile_lengths(b.len() as u64, n) {
        m[..8].copy_from_slice(&v.to_le_bytes());
        runner.run(base, d("set header length", 0, v), &m, Expect::Anything);
    }
    m[..8].copy_from_slice(&b[..8]);
    // Data bytes changed: still valid, another label (through files sometimes).
    for _ in 0..8.min(b.len() - h) {
        let i = h + rng.below(b.len() - h);
        m[i] ^= 0x01;
        runner.run(base, d("data bit flip", i, 0), &m, Expect::Anything);
        m[i] = b[i];
    }
}

/// Edits made on the header's JSON structure.
fn json_level(runner: &mut Runner, base: &Base, rng: &mut Rng) {
    let map = &base.map;
    let hdr = &base.header;
    let region = base.data().len() as u64;
    let d = |op, a: usize, v: usize| Desc { base: base.name, op, a: a as u64, b: v as u64 };

    for (k, r) in map.numbers.iter().enumerate() {
        for (j, num) in hostile_numbers(region).iter().enumerate() {
            let h = base.splice(r.clone(), num.as_bytes());
            runner.run(base, d("replace number", k, j), &base.with_header(&h), Expect::Anything);
        }
    }
    for (k, r) in map.strings.iter().enumerate() {
        for (j, s) in STRINGS.iter().enumerate() {
            if rng.chance(2) {
                let h = base.splice(r.clone(), s.as_bytes());
                runner.run(base, d("replace string", k, j), &base.with_header(&h), Expect::Anything);
            }
        }
    }
    for (o, members) in map.objects.iter().enumerate() {
        for (i, mem) in members.iter().enumerate() {
            let text = &hdr[mem.whole.clone()];
            // Repeated right after itself, and at the object's end.
            let mut dup = text.to_vec();
            dup.insert(0, b',');
            let h = base.splice(mem.whole.end..mem.whole.end, &dup);
            runner.run(base, d("duplicate member", o, i), &base.with_header(&h), Expect::RepeatedKey);
            let last = members.last().unwrap().whole.end;
            let h = base.splice(last..last, &dup);
            runner.run(base, d("duplicate member at end", o, i), &base.with_header(&h), Expect::RepeatedKey);
            // Repeated under an escaped spelling of its key.
            let mut esc = b",".to_vec();
            esc.extend_from_slice(&escaped_key(&hdr[mem.key.clone()]));
            esc.extend_from_slice(&hdr[mem.key.end..mem.whole.end]);
            let h = base.splice(mem.whole.end..mem.whole.end, &esc);
            runner.run(base, d("duplicate member, key escaped", o, i), &base.with_header(&h), Expect::RepeatedKey);
            // The key re-spelled: the same file.
            let h = base.splice(mem.key.clone(), &escaped_key(&hdr[mem.key.clone()]));
            runner.run(base, d("escape key", o, i), &base.with_header(&h), Expect::SameLabel);
            // Deleted (with the comma before it, or after it for the first).
            let cut = if i > 0 {
                members[i - 1].whole.end..mem.whole.end
            } else if members.len() > 1 {
                mem.whole.start..members[1].whole.start
            } else {
                mem.whole.clone()
            };
            let h = base.splice(cut, &[]);
            runner.run(base, d("delete member", o, i), &base.with_header(&h), Expect::Anything);
        }
        // Swapped with each neighbour: key order is not content.
        for i in 1..members.len() {
            let (a, b) = (&members[i - 1].whole, &members[i].whole);
            let mut h = hdr[..a.start].to_vec();
            h.extend_from_slice(&hdr[b.clone()]);
            h.extend_from_slice(&hdr[a.end..b.start]);
            h.extend_from_slice(&hdr[a.clone()]);
            h.extend_from_slice(&hdr[b.end..]);
            runner.run(base, d("swap members", o, i), &base.with_header(&h), Expect::SameLabel);
        }
    }
    // Whitespace between tokens and around the value; NUL padding is not whitespace.
    for (k, &at) in map.gaps.iter().enumerate() {
        if rng.chance(3) {
            const SPACES: [&[u8]; 4] = [b" ", b"\n", b"\t\r\n ", b"  "];
            let spaces = *rng.pick(&SPACES);
            let h = base.splice(at..at, spaces);
            runner.run(base, d("add whitespace", k, at), &base.with_header(&h), Expect::SameLabel);
        }
    }
    for pad in [1usize, 7, 100] {
        let mut h = hdr.clone();
        h.extend(std::iter::repeat_n(b' ', pad));
        runner.run(base, d("pad with spaces", pad, 0), &base.with_header(&h), Expect::SameLabel);
        let mut h = b"\n\t ".to_vec();
        h.extend_from_slice(hdr);
        runner.run(base, d("leading whitespace", pad, 0), &base.with_header(&h), Expect::SameLabel);
        let mut h = hdr.clone();
        h.extend(std::iter::repeat_n(0u8, pad));
        runner.run(base, d("pad with NULs", pad, 0), &base.with_header(&h), Expect::Json);
    }
}

/// Random stacks of 1 to 6 mutations; the length field kept right half the time.
fn havoc(runner: &mut Runner, base: &Base, rng: &mut Rng, rounds: u64) {
    let numbers = hostile_numbers(base.data().len() as u64);
    for round in 0..rounds {
        let mut h = base.header.clone();
        let mut data = base.data().to_vec();
        let ops = 1 + rng.below(6);
        for _ in 0..ops {
            let at = rng.below(h.len() + 1);
            match rng.below(11) {
                0 if at < h.len() => h[at] ^= 1 << rng.below(8),
                1 if at < h.len() => h[at] = *rng.pick(&BYTES),
                2 => h.insert(at, *rng.pick(&BYTES)),
                3 if at < h.len() => {
                    let end = (at + 1 + rng.below(16)).min(h.len());
                    h.drain(at..end);
                }
                4 if at < h.len() => {
                    let end = (at + 1 + rng.below(32)).min(h.len());
                    let chunk = h[at..end].to_vec();
                    let to = rng.below(h.len() + 1);
                    h.splice(to..to, chunk);
                }
                5 if !base.map.numbers.is_empty() => {
                    // A number of the base header, if it is still where it was.
                    let r = rng.pick(&base.map.numbers).clone();
                    if r.end <= h.len() {
                        h.splice(r, rng.pick(&numbers).bytes());
                    }
                }
                6 if !base.map.strings.is_empty() => {
                    let r = rng.pick(&base.map.strings).clone();
                    if r.end <= h.len() {
                        h.splice(r, rng.pick(&STRINGS).bytes());
                    }
                }
                7 => {
                    let len = rng.below(9);
                    data.truncate(data.len().saturating_sub(len));
                }
                8 => data.extend(std::iter::repeat_n(0xAB, 1 + rng.below(8))),
                9 => h.truncate(at),
                _ => h.insert(at, b' '),
            }
        }
        let mut m = if rng.chance(2) {
            (h.len() as u64).to_le_bytes().to_vec()
        } else {
            let v = *rng.pick(&hostile_lengths(base.bytes.len() as u64, base.header.len() as u64));
            v.to_le_bytes().to_vec()
        };
        m.extend_from_slice(&h);
        m.extend_from_slice(&data);
        if rng.chance(20) {
            let cut = rng.below(m.len() + 1);
            m.truncate(cut);
        }
        runner.run(base, Desc { base: base.name, op: "havoc", a: round, b: ops as u64 }, &m, Expect::Anything);
    }
}

// ---------------------------------------------------------------------------
// The tests.

#[test]
fn mutants_of_valid_files_never_crash_and_stay_bounded() {
    let _serial = serial();
    let started = Instant::now();
    let at_least = count();
    let mut rng = Rng(seed());
    let mut runner = Runner::new();
    let bases = bases();
    for base in &bases {
        // The base itself: the writer's label, through a file, both modes.
        let desc = Desc { base: base.name, op: "none", a: 0, b: 0 };
        runner.run(base, desc, &base.bytes, Expect::SameLabel);
        bytes_level(&mut runner, base, &mut rng);
        json_level(&mut runner, base, &mut rng);
    }
    let systematic = runner.stats.mutants;
    let rest = at_least.saturating_sub(systematic);
    // The rest: random stacks, most on the richest bases.
    for (i, base) in bases.iter().enumerate() {
        let share = match i {
            0 | 1 => rest * 3 / 8,
            _ => rest / 16,
        };
        havoc(&mut runner, base, &mut rng, share);
    }
    let short = at_least.saturating_sub(runner.stats.mutants);
    havoc(&mut runner, &bases[0], &mut rng, short);
    clear_current();
    runner.report(systematic, started);
    assert!(runner.stats.mutants >= at_least, "only {} mutants", runner.stats.mutants);
    assert!(runner.stats.parsed_ok > systematic / 100, "too few mutants parse: the oracles barely ran");
    assert!(runner.stats.labelled > 100, "too few mutants were labelled through files");
}

/// Declared sizes far beyond the file: refused at once, without allocating
/// in proportion to them.
#[test]
fn hostile_declared_sizes_allocate_nothing_in_proportion() {
    let _serial = serial();
    let mut runner = Runner::new();
    let base = &bases()[2];
    let entry = |shape: &str, b: &str, e: &str| {
        format!(r#"{{"w":{{"dtype":"F32","shape":[{shape}],"data_offsets":[{b},{e}]}}}}"#).into_bytes()
    };
    let cases: Vec<(&'static str, Vec<u8>)> = vec![
        ("dims near u64::MAX", entry("18446744073709551615,18446744073709551615", "0", "16")),
        ("offsets near u64::MAX", entry("4", "18446744073709551599", "18446744073709551615")),
        ("2^40 elements", entry("1099511627776", "0", "4398046511104")),
        ("2^64 elements in F4", entry("4294967296,4294967296", "0", "0")),
    ];
    for (i, (what, header)) in cases.iter().enumerate() {
        let desc = Desc { base: "bare", op: what, a: i as u64, b: 0 };
        runner.run(base, desc, &base.with_header(header), Expect::Anything);
    }
    // The length field at every hostile value, with and without a header after it.
    for v in hostile_lengths(base.bytes.len() as u64, base.header.len() as u64) {
        let mut m = v.to_le_bytes().to_vec();
        runner.run(base, Desc { base: "bare", op: "length only", a: 0, b: v }, &m, Expect::Anything);
        m.extend_from_slice(b"{}");
        runner.run(base, Desc { base: "bare", op: "length and {}", a: 0, b: v }, &m, Expect::Anything);
    }
    clear_current();
}

/// Header bytes that are all tiny JSON values (`0,0,0,...`, `[],[],...`,
/// short keys), at a size where the 1 MiB of slack no longer hides a
/// per-value cost: the heap a hostile header can make the parse take.
///
/// The bound here is 64 × the file (+ 1 MiB), not the mutants' 16 ×:
/// serde_json's `Value` tree (72 bytes a value with `preserve_order`, in a
/// `Vec` that grows by doubling) and the converted `Json` tree are both held
/// while a header is parsed (src/json.rs), so the 2 bytes of `0,` cost about
/// 100 bytes (52 x). A header at the 100,000,000-byte limit may take about
/// 5 GB. docs/SECURITY.md, "Known gaps", says so and how to close it (a
/// serde visitor that builds no `Value` and skips the members the contract
/// ignores); this test holds the line where it is.
#[test]
fn hostile_headers_of_tiny_values_stay_within_the_cap() {
    let json_bound = |len: usize| (1 << 20) + 64 * len;
    let _serial = serial();
    let n = 1 << 20;
    let ignored = |inner: String| {
        format!(r#"{{"w":{{"dtype":"U8","shape":[0],"data_offsets":[0,0],"x":{inner}}}}}"#).into_bytes()
    };
    let keys: String = (0..n / 10).map(|i| format!(r#""k{i}":0,"#)).collect();
    let meta: String = (0..n / 10).map(|i| format!(r#""k{i}":"","#)).collect();
    let tensors: String =
        (0..n / 50).map(|i| format!(r#""t{i}":{{"dtype":"U8","shape":[0],"data_offsets":[0,0]}},"#)).collect();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("zeros", ignored(format!("[{}]", ["0"; 1 << 19].join(",")))),
        ("negative ones", ignored(format!("[{}]", ["-1"; 1 << 18].join(",")))),
        ("empty arrays", ignored(format!("[{}]", ["[]"; 1 << 18].join(",")))),
        (
            "dims of 1",
            format!(r#"{{"w":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#, ["1"; 1 << 19].join(","))
                .into_bytes(),
        ),
        ("short keys", ignored(format!("{{{keys}\"z\":0}}"))),
        ("metadata", format!(r#"{{"__metadata__":{{{meta}"z":""}}}}"#).into_bytes()),
        (
            "zero-byte tensors",
            format!(r#"{{{tensors}"z":{{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}}}"#).into_bytes(),
        ),
    ];
    let mut over = Vec::new();
    for (what, header) in &cases {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        let mem0 = window_start();
        let parsed = safetensors::parse(&bytes);
        let (peak, biggest) = window_end(mem0);
        drop(parsed);
        let len = bytes.len();
        let line = format!(
            "{what}: {len} bytes; peak heap {peak} ({:.1} x), largest allocation {biggest} ({:.1} x); bound {}",
            peak as f64 / len as f64,
            biggest as f64 / len as f64,
            bound(len)
        );
        eprintln!("{line}");
        if peak > json_bound(len) || biggest > json_bound(len) {
            over.push(line);
        }
    }
    assert!(over.is_empty(), "over the cap of 64 x the file + 1 MiB:\n{}", over.join("\n"));
}
