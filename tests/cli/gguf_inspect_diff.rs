//! CLI tests of `gguf-digest inspect` and `gguf-digest diff`, run on files
//! built by the test writer: every section and warning of `inspect`, and
//! every kind of difference `diff` names, with its exit status.
use crate::common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::Value as JsonValue;

fn run(args: &[&OsStr]) -> Output {
    Command::new(gguf_digest_bin()).args(args).output().expect("runs")
}

fn cmd(sub: &str, extra: &[&str], paths: &[&Path]) -> Output {
    let mut a: Vec<&OsStr> = vec![OsStr::new(sub)];
    a.extend(extra.iter().map(OsStr::new));
    a.extend(paths.iter().map(|p| p.as_os_str()));
    run(&a)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `inspect` and expects success.
fn inspect_text(p: &Path, extra: &[&str]) -> String {
    let o = cmd("inspect", extra, &[p]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(o.stderr.is_empty(), "stderr: {}", stderr(&o));
    stdout(&o)
}

fn inspect_json(p: &Path) -> JsonValue {
    serde_json::from_str(&inspect_text(p, &["--json"])).expect("valid JSON")
}

/// The text of one section: the lines after its heading, up to a blank line.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(heading));
    assert!(lines.next().is_some(), "no section {heading} in:\n{text}");
    lines.take_while(|l| !l.is_empty()).collect()
}

/// Table rows with their columns split on runs of two or more spaces.
fn cells(line: &str) -> Vec<String> {
    line.trim().split("  ").map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect()
}

fn row(lines: &[&str], first: &str) -> Vec<String> {
    let found = lines.iter().find(|l| cells(l).first().map(String::as_str) == Some(first));
    cells(found.unwrap_or_else(|| panic!("no row {first} in {lines:#?}")))
}

fn short_sha(data: &[u8]) -> String {
    hex(&sha(data))[..16].to_string()
}

/// A small model llama.cpp would load: no warnings at all.
fn clean_model() -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("general.name", Val::str("clean"))
        .kv("llama.context_length", Val::U32(4096))
        .kv("tokenizer.ggml.tokens", Val::Arr(8, (0..20).map(|i| Val::str(&format!("t{i}"))).collect()))
        .tensor(Tensor::filled("token_embd.weight", &[8, 4], 0, 1))
        .tensor(Tensor::filled("output_norm.weight", &[8], 0, 2))
        .tensor(Tensor::filled("output.weight", &[64, 2], 8, 3))
}

fn write(d: &Dir, name: &str, g: &Gguf) -> PathBuf {
    d.write(name, &g.build())
}

// ---------------------------------------------------------------------------
// inspect

#[test]
fn inspect_header_section() {
    let d = Dir::new();
    let g = clean_model();
    let (bytes, lay) = g.build_with_layout();
    let p = d.write("m.gguf", &bytes);
    let text = inspect_text(&p, &[]);
    let header: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    let want = [
        format!("file        {}", p.display()),
        format!("size        {} bytes", bytes.len()),
        "version     3".to_string(),
        "byte order  little".to_string(),
        "alignment   32".to_string(),
        "KVs         4".to_string(),
        "tensors     3 (296 bytes of data)".to_string(),
        format!("data_start  {}", lay.data_start),
        format!("label       {}", g.expected_label()),
    ];
    assert_eq!(header, want);
}

#[test]
fn inspect_type_summary_section() {
    let d = Dir::new();
    let g = clean_model().tensor(Tensor::filled("x", &[2, 2], 1, 4));
    let text = inspect_text(&write(&d, "m.gguf", &g), &[]);
    let s = section(&text, "Tensor types:");
    assert_eq!(cells(s[0]), ["type", "count", "bytes"]);
    // By type id; bytes are 128 + 32 (F32), 8 (F16), 2 * 2 * 34 (Q8_0).
    assert_eq!(cells(s[1]), ["F32", "2", "160"]);
    assert_eq!(cells(s[2]), ["F16", "1", "8"]);
    assert_eq!(cells(s[3]), ["Q8_0", "1", "136"]);
    assert_eq!(cells(s[4]), ["total", "4", "304"]);
    assert_eq!(s.len(), 5);
}

#[test]
fn inspect_kv_section_shows_every_type() {
    let d = Dir::new();
    let text = inspect_text(&write(&d, "m.gguf", &rich_model(&[0])), &[]);
    let kvs = section(&text, "KVs (28):");
    assert_eq!(cells(kvs[0]), ["key", "type", "value"]);
    let expect = [
        ("general.architecture", "STRING", "'llama'"),
        ("v.u8", "UINT8", "200"),
        ("v.i8", "INT8", "-5"),
        ("v.u16", "UINT16", "60000"),
        ("v.i16", "INT16", "-300"),
        ("v.u32", "UINT32", "4000000000"),
        ("v.i32", "INT32", "-70000"),
        ("v.f32", "FLOAT32", "0.25"),
        ("v.bool", "BOOL", "true"),
        ("v.u64", "UINT64", "18446744073709551615"),
        ("v.i64", "INT64", "-9223372036854775808"),
        ("v.f64", "FLOAT64", "-2.5"),
        ("v.empty_str", "STRING", "''"),
        ("v.empty_arr", "ARRAY", "FLOAT32[0] []"),
        ("v.nested", "ARRAY", "ARRAY[2] [ARRAY[1] [UINT8[2] [1, 2]], ARRAY[0] []]"),
        ("arr.t2", "ARRAY", "UINT16[3] [513, 513, 513]"),
        ("arr.t3", "ARRAY", "INT16[3] [-513, -513, -513]"),
        ("arr.t5", "ARRAY", "INT32[3] [-70000, -70000, -70000]"),
        ("arr.t6", "ARRAY", "FLOAT32[3] [1.5, 1.5, 1.5]"),
        ("arr.t7", "ARRAY", "BOOL[3] [true, true, true]"),
        ("arr.t8", "ARRAY", "STRING[3] ['tok', 'tok', 'tok']"),
        ("arr.t11", "ARRAY", "INT64[3] [-1099511627776, -1099511627776, -1099511627776]"),
        ("arr.t12", "ARRAY", "FLOAT64[3] [0.1, 0.1, 0.1]"),
    ];
    for (key, ty, value) in expect {
        assert_eq!(row(&kvs, key), [key, ty, value]);
    }
    // File order, as written.
    let keys: Vec<String> = kvs[1..].iter().map(|l| cells(l)[0].clone()).collect();
    assert_eq!(keys[..3], ["general.architecture", "general.name", "v.u8"]);
    assert_eq!(keys.len(), 28);
}

#[test]
fn inspect_values_are_read_the_same_from_big_endian_files() {
    let d = Dir::new();
    let mut g = rich_model(&[0]);
    let le = section(&inspect_text(&write(&d, "le.gguf", &g), &[]), "KVs (").join("\n");
    g.big_endian = true;
    let be = section(&inspect_text(&write(&d, "be.gguf", &g), &[]), "KVs (").join("\n");
    assert_eq!(le, be);
}

#[test]
fn inspect_elides_long_values_and_escapes_control_bytes() {
    let d = Dir::new();
    let g = clean_model()
        .kv("x.long", Val::str(&"a".repeat(200)))
        .kv("x.accents", Val::str("ééé"))
        .kv("x.ctl", Val::str("red\x1b[31m\n\\"))
        .kv("x.many", Val::Arr(4, (0..100).map(Val::U32).collect()))
        .kv("x.nested", Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1), Val::U8(2), Val::U8(3)]), Val::Arr(0, vec![])]))
        .kv("x.key\r\n", Val::U8(1));
    let p = write(&d, "m.gguf", &g);
    let text = inspect_text(&p, &["--width", "10", "--items", "3"]);
    let kvs = section(&text, "KVs (");
    assert_eq!(row(&kvs, "x.long")[2], "'aaaaaaaaaa'… (200 bytes)");
    // A cut inside a character keeps only whole characters.
    assert_eq!(row(&kvs, "x.accents")[2], "'ééé'");
    let text3 = inspect_text(&p, &["--width", "3"]);
    assert_eq!(row(&section(&text3, "KVs ("), "x.accents")[2], "'é'… (6 bytes)");
    assert_eq!(row(&kvs, "x.ctl")[2], "'red\\u{1b}[31m\\n\\\\'");
    assert_eq!(row(&kvs, "x.many")[2], "UINT32[100] [0, 1, 2, … 97 more]");
    // Nested elements count against the same budget: 2 outer ones, then 1 inner.
    assert_eq!(row(&kvs, "x.nested")[2], "ARRAY[2] [UINT8[3] [1, … 2 more], UINT8[0] []]");
    assert_eq!(row(&kvs, "x.key\\r\\n")[2], "1");
    let toks = row(&kvs, "tokenizer.ggml.tokens");
    assert_eq!(toks[2], "STRING[20] ['t0', 't1', 't2', … 17 more]");
    // No raw control byte reaches the terminal.
    assert!(!text.bytes().any(|b| b == 0x1b || b == b'\r'));
}

#[test]
fn inspect_tensor_section_in_file_order_with_limit() {
    let d = Dir::new();
    let mut g = clean_model();
    g.info_order = Some(vec![2, 0, 1]);
    let (bytes, lay) = g.build_with_layout();
    let p = d.write("m.gguf", &bytes);
    let text = inspect_text(&p, &[]);
    let t = section(&text, "Tensors (3, in file order; offset as stored):");
    assert_eq!(cells(t[0]), ["name", "dims", "type", "nbytes", "offset", "sha256"]);
    let line = |i: usize| {
        let x = &g.tensors[i];
        let name = String::from_utf8(x.name.clone()).unwrap();
        let ty = ["F32", "", "", "", "", "", "", "", "Q8_0"][x.ggml_type as usize];
        let dims = format!("[{}]", x.dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", "));
        vec![name, dims, ty.to_string(), x.data.len().to_string(), lay.offsets[i].to_string(), short_sha(&x.data)]
    };
    assert_eq!(cells(t[1]), line(2));
    assert_eq!(cells(t[2]), line(0));
    assert_eq!(cells(t[3]), line(1));
    assert_eq!(t.len(), 4);

    let limited = inspect_text(&p, &["--limit", "1"]);
    let t = section(&limited, "Tensors (1 of 3, in file order; offset as stored):");
    assert_eq!(cells(t[1]), line(2));
    assert_eq!(t[2].trim(), "… 2 more (--limit)");
    let j: JsonValue = serde_json::from_str(&inspect_text(&p, &["--limit", "1", "--json"])).unwrap();
    assert_eq!(j["tensor_count"], 3);
    assert_eq!(j["tensors_listed"], 1);
    assert_eq!(j["tensors"].as_array().unwrap().len(), 1);
}

#[test]
fn inspect_clean_file_has_no_warnings() {
    let d = Dir::new();
    let p = write(&d, "m.gguf", &clean_model());
    let text = inspect_text(&p, &[]);
    assert!(text.ends_with("\nWarnings: none\n"), "{text}");
    assert!(!text.contains("llama.cpp will not load"));
    let j = inspect_json(&p);
    assert_eq!(j["warnings"], JsonValue::Array(vec![]));
    assert_eq!(j["llama_cpp_loads"], true);
}

/// The warning lines of the text output (without the leading blanks).
fn warning_lines(text: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Warnings ("));
    assert!(lines.next().is_some(), "no warnings in:\n{text}");
    lines.take_while(|l| !l.is_empty()).map(|l| l.trim().to_string()).collect()
}

const REFUSED: &str = "The label is defined, but llama.cpp will not load this file";

/// Inspects `g`, expects exactly `want` as warning lines, and the llama.cpp
/// note exactly when `refused`; the label is always the spec's.
fn expect_warnings(g: &Gguf, want: &[String], refused: bool) {
    let d = Dir::new();
    let p = write(&d, "m.gguf", g);
    let text = inspect_text(&p, &[]);
    assert!(text.contains(&format!("label       {}\n", g.expected_label())), "{text}");
    if want.is_empty() {
        assert!(text.ends_with("\nWarnings: none\n"), "{text}");
    } else {
        assert_eq!(warning_lines(&text), want, "{text}");
    }
    assert_eq!(text.contains(REFUSED), refused, "{text}");
    let j = inspect_json(&p);
    assert_eq!(j["warnings"].as_array().unwrap().len(), want.len());
    assert_eq!(j["llama_cpp_loads"], !refused);
    for (w, line) in j["warnings"].as_array().unwrap().iter().zip(want) {
        assert_eq!(format!("{}: {}", w["code"].as_str().unwrap(), w["message"].as_str().unwrap()), *line);
    }
}

#[test]
fn warning_data_order() {
    let mut g = clean_model();
    g.data_order = Some(vec![1, 0, 2]);
    let (_, lay) = g.build_with_layout();
    let want = format!(
        "data_order: tensor 'output_norm.weight' is stored at offset 0, before tensor 'token_embd.weight' (listed before it) at offset {}",
        lay.offsets[0]
    );
    expect_warnings(&g, &[want], true);
}

#[test]
fn warning_unaligned_offset() {
    let mut g = clean_model();
    g.tensors[0] = Tensor::filled("token_embd.weight", &[3, 2], 0, 1); // 24 bytes
    g.align_data = false;
    let want =
        "unaligned_offset: tensor 'output_norm.weight' is stored at offset 24, not a multiple of the alignment 32";
    // 24 + 32 = 56 for the next one: unaligned too.
    let want2 = "unaligned_offset: tensor 'output.weight' is stored at offset 56, not a multiple of the alignment 32";
    expect_warnings(&g, &[want.to_string(), want2.to_string()], true);
}

#[test]
fn warning_gaps_with_their_sizes() {
    let mut g = clean_model();
    // 40 bytes before the first tensor, 0 before the second, 100 before the third (all rounded up to 32).
    g.gaps = vec![40, 0, 100];
    let (_, lay) = g.build_with_layout();
    assert_eq!(lay.offsets, [64, 192, 352]);
    let ds = lay.data_start;
    let want = [
        format!(
            "gap: 64 unused bytes at file position {ds}, at the start of the data section before tensor 'token_embd.weight'"
        ),
        format!(
            "gap: 128 unused bytes at file position {}, between tensor 'output_norm.weight' and tensor 'output.weight'",
            ds + 224
        ),
    ];
    expect_warnings(&g, &want, true);
}

#[test]
fn warning_trailing_bytes_after_the_padding() {
    let mut g = clean_model();
    g.trailing = vec![7; 50];
    let (bytes, lay) = g.build_with_layout();
    // The last tensor (136 bytes at 160) ends at 296; padding runs to 320.
    let end = lay.data_start + 320;
    let want = format!(
        "trailing_bytes: {} bytes after the tensor data and its padding, from file position {end}",
        bytes.len() as u64 - end
    );
    expect_warnings(&g, &[want], false);
    // Padding alone after the last tensor is normal.
    g.trailing = vec![0; 24];
    expect_warnings(&g, &[], false);
}

#[test]
fn warning_invalid_utf8() {
    let mut g = clean_model();
    g.kvs.push((b"x.bad\xffkey".to_vec(), Val::U8(1)));
    g.kvs.push((b"x.value".to_vec(), Val::Str(b"ok\xc3".to_vec())));
    let mut toks: Vec<Val> = (0..10).map(|i| Val::str(&format!("t{i}"))).collect();
    toks[3] = Val::Str(b"\xff".to_vec());
    toks[7] = Val::Str(b"a\xe2\x82".to_vec());
    g.kvs.push((b"x.tokens".to_vec(), Val::Arr(8, toks)));
    g.tensors.push(Tensor { name: b"bad\xfe".to_vec(), ..Tensor::filled("", &[8], 0, 9) });
    let want = [
        "invalid_utf8_key: key 'x.bad\\xffkey' is not valid UTF-8",
        "key_convention: key 'x.bad\\xffkey' is not namespace.property in lower_snake_case segments",
        "invalid_utf8_value: the string value of 'x.value' is not valid UTF-8",
        "invalid_utf8_value: 2 elements of 'x.tokens' hold strings that are not valid UTF-8 (the first is element 3)",
        "invalid_utf8_tensor_name: tensor name 'bad\\xfe' is not valid UTF-8",
    ];
    expect_warnings(&g, &want.map(String::from), false);
    let d = Dir::new();
    let j = inspect_json(&write(&d, "m.gguf", &g));
    let w = &j["warnings"][0];
    assert_eq!(w["key_hex"], "782e626164ff6b6579");
}

#[test]
fn warning_key_convention() {
    let mut g = clean_model();
    for k in ["General.name", "nodot", "x.with-dash", "x..y", "ok.snake_case_2"] {
        g = g.kv(k, Val::U8(0));
    }
    let want: Vec<String> = ["General.name", "nodot", "x.with-dash", "x..y"]
        .iter()
        .map(|k| format!("key_convention: key '{k}' is not namespace.property in lower_snake_case segments"))
        .collect();
    expect_warnings(&g, &want, false);
}

#[test]
fn warning_long_tensor_name() {
    let mut g = clean_model();
    g.tensors.push(Tensor::filled(&"n".repeat(63), &[8], 0, 5));
    expect_warnings(&g, &[], false);
    g.tensors.push(Tensor::filled(&"m".repeat(64), &[8], 0, 6));
    let want = format!(
        "long_tensor_name: tensor name '{}' is 64 bytes; llama.cpp's default build allows at most 63",
        "m".repeat(64)
    );
    expect_warnings(&g, &[want], true);
}

#[test]
fn warning_stored_shape() {
    let mut g = clean_model();
    g.tensors.push(Tensor::filled("x.a", &[8, 1, 1], 0, 5));
    g.tensors.push(Tensor::filled("x.b", &[], 0, 6));
    g.tensors.push(Tensor::filled("x.c", &[1, 8], 0, 7));
    let want = [
        "stored_shape: tensor 'x.a' is stored with dims [8, 1, 1]; its canonical shape (the one in the label) is [8]",
        "stored_shape: tensor 'x.b' is stored with dims []; its canonical shape (the one in the label) is [1]",
    ];
    expect_warnings(&g, &want.map(String::from), false);
}

#[test]
fn warning_nested_array() {
    let g = clean_model().kv("x.nested", Val::Arr(9, vec![Val::Arr(4, vec![Val::U32(1)])]));
    expect_warnings(&g, &["nested_array: 'x.nested' is an array of arrays".to_string()], true);
}

#[test]
fn warning_big_endian() {
    let mut g = clean_model();
    g.big_endian = true;
    let want = "big_endian: the file is big-endian; llama.cpp loads it only on a big-endian host";
    expect_warnings(&g, &[want.to_string()], true);
}

#[test]
fn refusal_note_names_the_refusing_codes_once() {
    let mut g = clean_model().kv("x.nested", Val::Arr(9, vec![]));
    g.gaps = vec![0, 64, 64];
    let d = Dir::new();
    let text = inspect_text(&write(&d, "m.gguf", &g), &[]);
    assert!(text.ends_with(&format!("\n{REFUSED} (nested_array, gap).\n")), "{text}");
}

#[test]
fn inspect_json_has_the_same_content() {
    let d = Dir::new();
    let g = rich_model(&[0, 8]).kv("x.long", Val::str(&"b".repeat(100)));
    let p = write(&d, "m.gguf", &g);
    let j = inspect_json(&p);
    assert_eq!(j["format"], 1);
    assert_eq!(j["label"], g.expected_label());
    assert_eq!(j["path"], p.to_str().unwrap());
    assert_eq!(j["kv_count"], 29);
    assert_eq!(j["shards"][0]["size"], std::fs::metadata(&p).unwrap().len());
    assert_eq!(j["shards"][0]["byte_order"], "little");
    assert_eq!(j["types"][1], serde_json::json!({ "type": "Q8_0", "type_id": 8, "count": 1, "bytes": 204 }));
    let kv = |k: &str| j["kvs"].as_array().unwrap().iter().find(|e| e["key"] == k).unwrap().clone();
    assert_eq!(kv("general.name")["value"], "rich");
    assert_eq!(kv("general.name")["truncated"], false);
    assert_eq!(kv("general.name")["sha256"], hex(&sha(b"rich")));
    assert_eq!(kv("x.long")["value"], "b".repeat(64));
    assert_eq!(kv("x.long")["truncated"], true);
    assert_eq!(kv("x.long")["len"], 100);
    assert_eq!(kv("v.f32")["bits"], "3e800000");
    assert_eq!(kv("arr.t8")["elements"], serde_json::json!(["tok", "tok", "tok"]));
    assert_eq!(kv("arr.t6")["elements"], serde_json::json!([1.5, 1.5, 1.5]));
    let t = &j["tensors"][1];
    assert_eq!(t["name"], "blk.1.w");
    assert_eq!(t["dims"], serde_json::json!([64, 3]));
    assert_eq!(t["type"], "Q8_0");
    assert_eq!(t["sha256"], hex(&sha(&g.tensors[1].data)));
    assert_eq!(j["warnings"][0]["code"], "nested_array");
    assert_eq!(j["warnings"][0]["llama_cpp_refuses"], true);
    assert_eq!(j["llama_cpp_loads"], false);
}

/// Writes `g` as a shard set (and its merged twin); returns (first shard, merged).
fn shard_set(d: &Dir, g: &Gguf, sizes: &[usize]) -> (PathBuf, PathBuf) {
    let n = sizes.len();
    let parts = g.split(sizes);
    let paths: Vec<PathBuf> =
        parts.iter().enumerate().map(|(i, p)| write(d, &format!("m-{:05}-of-{n:05}.gguf", i + 1), p)).collect();
    (paths[0].clone(), write(d, "merged.gguf", &g.merged()))
}

#[test]
fn inspect_shard_set_shows_each_file() {
    let d = Dir::new();
    let g = clean_model();
    let (first, _) = shard_set(&d, &g, &[1, 0, 2]);
    let text = inspect_text(&first, &[]);
    assert!(text.starts_with(&format!("model       {} (3 shards)\n", first.display())), "{text}");
    assert!(text.contains(&format!("\nlabel       {}\n", g.expected_label())));
    assert!(text.contains("\nKVs         4 (and 9 split.* keys, not in the label)\n"));
    let shards = section(&text, "Shards:");
    assert_eq!(
        cells(shards[0]),
        ["shard", "path", "size", "version", "byte order", "alignment", "KVs", "tensors", "data_start"]
    );
    for (i, tensors) in [(1, "1"), (2, "0"), (3, "2")] {
        let r = &cells(shards[i]);
        let path = d.path(&format!("m-{i:05}-of-00003.gguf"));
        assert_eq!(r[0], i.to_string());
        assert_eq!(r[1], path.display().to_string());
        assert_eq!(r[2], std::fs::metadata(&path).unwrap().len().to_string());
        assert_eq!(r[7], tensors);
    }
    let split = section(&text, "Split keys (9, layout only, not in the label):");
    assert_eq!(cells(split[4]), ["2", "split.no", "UINT16", "1"]);
    let tensors = section(&text, "Tensors (3,");
    assert_eq!(cells(tensors[0])[0], "shard");
    assert_eq!(cells(tensors[3])[..2], ["3", "output.weight"]);
    assert!(text.ends_with("\nWarnings: none\n"), "{text}");
}

#[test]
fn inspect_errors_exit_2() {
    let d = Dir::new();
    let o = cmd("inspect", &[], &[&d.path("missing.gguf")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).starts_with("gguf-digest: "), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.gguf"));
    let p = d.write("bad.gguf", b"GGUX\x03\0\0\0");
    let o = cmd("inspect", &["--json"], &[&p]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("not a GGUF file"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------
// diff

/// Runs `diff`, expecting the given exit status and nothing on stderr.
fn diff_text(a: &Path, b: &Path, extra: &[&str], status: i32) -> String {
    let o = cmd("diff", extra, &[a, b]);
    assert_eq!(o.status.code(), Some(status), "stdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    assert!(o.stderr.is_empty(), "stderr: {}", stderr(&o));
    stdout(&o)
}

/// The difference lines of a text diff (neither the a/b lines nor the summary).
fn changes(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "{text}");
    lines[2..lines.len() - 1].to_vec()
}

fn summary(text: &str) -> &str {
    text.lines().last().unwrap()
}

#[test]
fn diff_of_a_reordered_twin_is_empty() {
    let d = Dir::new();
    let g = rich_model(&[0, 8, 1]);
    let mut twin = g.clone();
    twin.kvs.reverse();
    twin.info_order = Some(vec![2, 0, 1]);
    twin.data_order = Some(vec![1, 2, 0]);
    twin.gaps = vec![32, 0, 96];
    twin.pad_byte = 0xaa;
    twin.trailing = vec![1; 9];
    twin.version = 2;
    let (a, b) = (write(&d, "a.gguf", &g), write(&d, "b.gguf", &twin));
    let text = diff_text(&a, &b, &[], 0);
    let label = g.expected_label();
    assert_eq!(text, format!("a  {label}  {}\nb  {label}  {}\nlabels equal: {label}\n", a.display(), b.display()));
    let j: JsonValue = serde_json::from_str(&diff_text(&a, &b, &["--json"], 0)).unwrap();
    assert_eq!(j["labels_equal"], true);
    assert_eq!(j["kvs"], serde_json::json!([]));
    assert_eq!(j["tensors"], serde_json::json!([]));
    assert_eq!(j["alignment"], JsonValue::Null);
}

#[test]
fn diff_of_big_endian_twin_is_empty() {
    let d = Dir::new();
    let g = rich_model(&BE_TYPES);
    let mut be = g.clone();
    be.big_endian = true;
    let text = diff_text(&write(&d, "a.gguf", &g), &write(&d, "b.gguf", &be), &[], 0);
    assert!(changes(&text).is_empty(), "{text}");
}

#[test]
fn diff_names_exactly_the_tensor_with_a_flipped_byte() {
    let d = Dir::new();
    let g = rich_model(&[0, 8, 1]);
    let mut h = g.clone();
    h.tensors[1].data[100] ^= 0x01;
    let text = diff_text(&write(&d, "a.gguf", &g), &write(&d, "b.gguf", &h), &[], 1);
    let want =
        format!("~ tensor blk.1.w: data sha256 {} → {}", short_sha(&g.tensors[1].data), short_sha(&h.tensors[1].data));
    assert_eq!(changes(&text), [want.as_str()]);
    assert_eq!(summary(&text), "labels differ; tensors: 1 changed");
    assert!(text.starts_with(&format!("a  {}  ", g.expected_label())));
    assert!(text.lines().nth(1).unwrap().starts_with(&format!("b  {}  ", h.expected_label())));
}

#[test]
fn diff_names_dims_and_type_changes() {
    let d = Dir::new();
    let g = clean_model();
    let mut h = g.clone();
    // Same bytes, other dims: only the dims differ.
    h.tensors[1] = Tensor::filled("output_norm.weight", &[4, 2], 0, 2);
    h.tensors[2] = Tensor::filled("output.weight", &[32, 4], 8, 4);
    h.tensors[0] = Tensor { ggml_type: 26, ..g.tensors[0].clone() }; // same bytes as I32
    let text = diff_text(&write(&d, "a.gguf", &g), &write(&d, "b.gguf", &h), &[], 1);
    let (d1, d2) = (short_sha(&g.tensors[2].data), short_sha(&h.tensors[2].data));
    assert_eq!(
        changes(&text),
        [
            format!("~ tensor output.weight: data sha256 {d1} → {d2}; dims [64, 2] → [32, 4]").as_str(),
            "~ tensor output_norm.weight: dims [8] → [4, 2]",
            "~ tensor token_embd.weight: type F32 → I32",
        ]
    );
    assert_eq!(summary(&text), "labels differ; tensors: 3 changed");
}

#[test]
fn diff_names_a_changed_kv_with_old_and_new_values() {
    let d = Dir::new();
    let g = clean_model().kv("x.long", Val::str(&"c".repeat(100))).kv("x.n", Val::U32(7));
    let a = write(&d, "a.gguf", &g);
    let set = |k: &str, v: Val| {
        let mut h = g.clone();
        h.kvs.iter_mut().find(|(key, _)| key == k.as_bytes()).unwrap().1 = v;
        write(&d, "b.gguf", &h)
    };

    let text = diff_text(&a, &set("x.n", Val::U32(8)), &[], 1);
    assert_eq!(changes(&text), ["~ kv x.n: UINT32 7 → UINT32 8"]);
    assert_eq!(summary(&text), "labels differ; KVs: 1 changed");

    let text = diff_text(&a, &set("x.n", Val::I64(7)), &[], 1);
    assert_eq!(changes(&text), ["~ kv x.n: UINT32 7 → INT64 7"]);

    let text = diff_text(&a, &set("general.name", Val::str("dirty\n")), &[], 1);
    let want = format!(
        "~ kv general.name: STRING 'clean' (5 bytes, sha256 {}) → STRING 'dirty\\n' (6 bytes, sha256 {})",
        short_sha(b"clean"),
        short_sha(b"dirty\n")
    );
    assert_eq!(changes(&text), [want.as_str()]);

    // Long strings: lengths and digests only.
    let long2 = "c".repeat(99) + "d";
    let text = diff_text(&a, &set("x.long", Val::str(&long2)), &[], 1);
    let want = format!(
        "~ kv x.long: STRING of 100 bytes, sha256 {} → STRING of 100 bytes, sha256 {}",
        short_sha("c".repeat(100).as_bytes()),
        short_sha(long2.as_bytes())
    );
    assert_eq!(changes(&text), [want.as_str()]);
    let j: JsonValue =
        serde_json::from_str(&diff_text(&a, &d.path("b.gguf"), &["--json", "--width", "200"], 1)).unwrap();
    assert_eq!(j["kvs"][0]["a"]["value"], "c".repeat(100));
    assert_eq!(j["kvs"][0]["b"]["value"], long2);
    assert_eq!(j["kvs"][0]["change"], "changed");
}

#[test]
fn diff_locates_the_first_differing_array_element() {
    let d = Dir::new();
    let g = clean_model().kv("x.floats", Val::Arr(6, (0..5000).map(|i| Val::F32(i as f32)).collect()));
    let mut h = g.clone();
    if let Val::Arr(_, toks) = &mut h.kvs[3].1 {
        toks[13] = Val::str("changed");
    }
    if let Val::Arr(_, f) = &mut h.kvs[4].1 {
        f[4321] = Val::F32(-0.5);
        f.push(Val::F32(1.0));
    }
    // Compare across byte orders: elements are compared in canonical form.
    h.big_endian = true;
    let (a, b) = (write(&d, "a.gguf", &g), write(&d, "b.gguf", &h));
    let text = diff_text(&a, &b, &[], 1);
    // canonical_value of an array: elem type, count, payload digest.
    let sha_of = |v: &Val| hex(&v.canonical()[12..20]);
    assert_eq!(
        changes(&text),
        [
            format!(
                "~ kv tokenizer.ggml.tokens: ARRAY STRING[20], sha256 {} → ARRAY STRING[20], sha256 {}; first difference at element 13: 't13' → 'changed'",
                sha_of(&g.kvs[3].1),
                sha_of(&h.kvs[3].1)
            ),
            format!(
                "~ kv x.floats: ARRAY FLOAT32[5000], sha256 {} → ARRAY FLOAT32[5001], sha256 {}; first difference at element 4321: 4321.0 → -0.5",
                sha_of(&g.kvs[4].1),
                sha_of(&h.kvs[4].1)
            ),
        ]
    );
    let j: JsonValue = serde_json::from_str(&diff_text(&a, &b, &["--json"], 1)).unwrap();
    assert_eq!(j["kvs"][0]["first_difference"], serde_json::json!({ "index": 13, "a": "t13", "b": "changed" }));
    assert_eq!(j["kvs"][1]["first_difference"], serde_json::json!({ "index": 4321, "a": 4321.0, "b": -0.5 }));

    // Nested arrays are compared element by element too; arrays of other
    // element types have no element to point at.
    let g2 = clean_model()
        .kv("x.nested", Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1)]), Val::Arr(0, vec![Val::U8(1), Val::U8(2)])]))
        .kv("x.ints", Val::Arr(4, vec![Val::U32(1)]));
    let mut h2 = g2.clone();
    h2.kvs[4].1 = Val::Arr(9, vec![Val::Arr(0, vec![Val::U8(1)]), Val::Arr(0, vec![Val::U8(1), Val::U8(3)])]);
    h2.kvs[5].1 = Val::Arr(5, vec![Val::I32(1)]);
    let text = diff_text(&write(&d, "n1.gguf", &g2), &write(&d, "n2.gguf", &h2), &[], 1);
    let lines = changes(&text);
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("~ kv x.ints: ARRAY UINT32[1], sha256 "), "{text}");
    assert!(lines[0].contains(" → ARRAY INT32[1], sha256 ") && !lines[0].contains("first difference"), "{text}");
    assert!(lines[1].ends_with("; first difference at element 1: UINT8[2] [1, 2] → UINT8[2] [1, 3]"), "{text}");

    // Only appended: the first difference is the first new element.
    let mut h = g.clone();
    if let Val::Arr(_, toks) = &mut h.kvs[3].1 {
        toks.push(Val::str("extra"));
    }
    let text = diff_text(&a, &write(&d, "c.gguf", &h), &[], 1);
    assert!(changes(&text)[0].ends_with("; first difference at element 20: (none) → 'extra'"), "{text}");
}

#[test]
fn diff_names_added_and_removed_tensors_and_keys() {
    let d = Dir::new();
    let g = clean_model().kv("x.gone", Val::U8(3));
    let mut h = g.clone();
    h.kvs.retain(|(k, _)| k != b"x.gone");
    h = h.kv("x.new", Val::Arr(5, vec![Val::I32(-1), Val::I32(2)])).kv("x.s", Val::str("hi"));
    let removed = h.tensors.remove(1);
    h.tensors.push(Tensor::filled("blk.9.new", &[32], 1, 9));
    let text = diff_text(&write(&d, "a.gguf", &g), &write(&d, "b.gguf", &h), &[], 1);
    let new_arr = Val::Arr(5, vec![Val::I32(-1), Val::I32(2)]);
    assert_eq!(
        changes(&text),
        [
            "- kv x.gone: UINT8 3".to_string(),
            format!("+ kv x.new: ARRAY INT32[2] [-1, 2], sha256 {}", hex(&new_arr.canonical()[12..20])),
            format!("+ kv x.s: STRING 'hi' (2 bytes, sha256 {})", short_sha(b"hi")),
            format!("+ tensor blk.9.new: [32] F16, 64 bytes, sha256 {}", short_sha(&h.tensors[2].data)),
            format!("- tensor output_norm.weight: [8] F32, 32 bytes, sha256 {}", short_sha(&removed.data)),
        ]
    );
    assert_eq!(summary(&text), "labels differ; KVs: 2 added, 1 removed; tensors: 1 added, 1 removed");
}

#[test]
fn diff_notes_a_possibly_renamed_tensor() {
    let d = Dir::new();
    let g = clean_model();
    let mut h = g.clone();
    h.tensors[1].name = b"final_norm.weight".to_vec();
    let text = diff_text(&write(&d, "a.gguf", &g), &write(&d, "b.gguf", &h), &["--width", "4"], 1);
    let sha = short_sha(&g.tensors[1].data);
    assert_eq!(
        changes(&text),
        [
            format!("+ tensor final_norm.weight: [8] F32, 32 bytes, sha256 {sha}").as_str(),
            &format!("- tensor output_norm.weight: [8] F32, 32 bytes, sha256 {sha}"),
            "  possibly renamed: tensor output_norm.weight → final_norm.weight",
        ]
    );
    let j: JsonValue = serde_json::from_str(&diff_text(&d.path("a.gguf"), &d.path("b.gguf"), &["--json"], 1)).unwrap();
    assert_eq!(j["possibly_renamed"], serde_json::json!([{ "from": "output_norm.weight", "to": "final_norm.weight" }]));
}

#[test]
fn diff_names_an_alignment_change() {
    let d = Dir::new();
    let g = clean_model();
    let h = g.clone().kv("general.alignment", Val::U32(64));
    let text = diff_text(&write(&d, "a.gguf", &g), &write(&d, "b.gguf", &h), &[], 1);
    assert_eq!(changes(&text), ["~ alignment: 32 → 64", "+ kv general.alignment: UINT32 64"]);
    assert_eq!(summary(&text), "labels differ; KVs: 1 added; alignment: 32 → 64");
    let j: JsonValue = serde_json::from_str(&diff_text(&d.path("a.gguf"), &d.path("b.gguf"), &["--json"], 1)).unwrap();
    assert_eq!(j["alignment"], serde_json::json!({ "a": 32, "b": 64 }));
}

#[test]
fn diff_of_a_shard_set_and_its_merged_file_is_empty() {
    let d = Dir::new();
    let g = rich_model(&[0, 8, 1, 30]);
    let (first, merged) = shard_set(&d, &g, &[2, 0, 2]);
    let text = diff_text(&first, &merged, &[], 0);
    assert!(changes(&text).is_empty(), "{text}");
    assert!(text.lines().next().unwrap().ends_with(" (3 shards)"));
    assert_eq!(summary(&text), format!("labels equal: {}", g.expected_label()));
    // A shard alone (--no-join) is another model: it lacks the other shards' tensors.
    let text = diff_text(&first, &merged, &["--no-join"], 1);
    assert_eq!(summary(&text), "labels differ; tensors: 2 added");
}

#[test]
fn diff_json_document() {
    let d = Dir::new();
    let g = clean_model();
    let mut h = g.clone().kv("x.new", Val::Bool(true));
    h.tensors[0].data[0] ^= 0x80;
    let (a, b) = (write(&d, "a.gguf", &g), write(&d, "b.gguf", &h));
    let j: JsonValue = serde_json::from_str(&diff_text(&a, &b, &["--json"], 1)).unwrap();
    assert_eq!(j["format"], 1);
    assert_eq!(j["a"]["path"], a.to_str().unwrap());
    assert_eq!(j["a"]["label"], g.expected_label());
    assert_eq!(j["b"]["label"], h.expected_label());
    assert_eq!(j["labels_equal"], false);
    assert_eq!(
        j["kvs"],
        serde_json::json!([{ "key": "x.new", "change": "added", "a": null, "b": { "type": "BOOL", "value": true } }])
    );
    let t = &j["tensors"][0];
    assert_eq!(t["name"], "token_embd.weight");
    assert_eq!(t["change"], "changed");
    assert_eq!(t["changed"], serde_json::json!(["data"]));
    assert_eq!(t["a"]["sha256"], hex(&sha(&g.tensors[0].data)));
    assert_eq!(t["b"]["sha256"], hex(&sha(&h.tensors[0].data)));
    assert_eq!(j["summary"], "labels differ; KVs: 1 added; tensors: 1 changed");
}

#[test]
fn diff_errors_exit_2() {
    let d = Dir::new();
    let a = write(&d, "a.gguf", &clean_model());
    for args in [vec![a.clone(), d.path("missing.gguf")], vec![d.path("missing.gguf"), a.clone()]] {
        let o = cmd("diff", &[], &[&args[0], &args[1]]);
        assert_eq!(o.status.code(), Some(2));
        assert!(o.stdout.is_empty());
        assert!(stderr(&o).starts_with("gguf-digest: ") && stderr(&o).contains("missing.gguf"), "{}", stderr(&o));
    }
    let bad = d.write("bad.gguf", b"GGUF\x01\0\0\0");
    let o = cmd("diff", &["--json"], &[&a, &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn subcommands_take_the_reading_flags() {
    let d = Dir::new();
    let g = clean_model();
    let a = write(&d, "a.gguf", &g);
    let text = inspect_text(&a, &["--no-mmap", "-j", "1"]);
    assert!(text.contains(&g.expected_label()));
    diff_text(&a, &a, &["--no-mmap", "-j", "2"], 0);
}
