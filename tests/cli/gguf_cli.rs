//! End-to-end tests of the `gguf-digest` binary: every flag, run as a real
//! process on files built by the test writer, with stdout, stderr and the
//! exit status compared exactly.
//!
//! `--check` is tested differentially: the same list structure is given to
//! GNU `sha256sum -c` (with the files' real SHA-256) and to `gguf-digest -c`
//! (with their labels), and both must print the same bytes and exit alike,
//! up to the few wordings that differ on purpose (see [`gnu_as_ours`]).
use crate::common;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value as JsonValue, json};

// ---------------------------------------------------------------------------
// Running processes
// ---------------------------------------------------------------------------

/// What a process did. Debug shows the streams as text, so a failed
/// `assert_eq!` reads like a terminal session.
#[derive(PartialEq, Eq)]
struct Out {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Out")
            .field("code", &self.code)
            .field("stdout", &String::from_utf8_lossy(&self.stdout))
            .field("stderr", &String::from_utf8_lossy(&self.stderr))
            .finish()
    }
}

/// The expected outcome, for `assert_eq!(run(..), out(..))`.
fn out(code: i32, stdout: impl AsRef<[u8]>, stderr: impl AsRef<[u8]>) -> Out {
    Out { code, stdout: stdout.as_ref().to_vec(), stderr: stderr.as_ref().to_vec() }
}

/// No command here takes more than a fraction of a second; one that runs
/// this long hangs, and is killed so that the test fails instead of the suite
/// never ending.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `cmd` to completion, feeding it `stdin` (or /dev/null, so that
/// nothing ever waits on the terminal the tests run from).
fn exec(mut cmd: Command, stdin: Option<Vec<u8>>) -> Out {
    // Same messages and quoting whatever the host's locale, unless the test
    // chose one; no colour in clap's errors.
    if !cmd.get_envs().any(|(k, _)| k == "LC_ALL") {
        cmd.env("LC_ALL", "C");
    }
    cmd.env("NO_COLOR", "1").env_remove("CLICOLOR_FORCE");
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().expect("spawn");
    // Fed and drained from threads: a child that writes before it has read
    // everything must not deadlock against us.
    let feeder = child.stdin.take().zip(stdin).map(|(mut pipe, bytes)| {
        std::thread::spawn(move || {
            // The child may exit without reading it all (e.g. on a usage error).
            let _ = pipe.write_all(&bytes);
        })
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            r.read_to_end(&mut v).expect("read child output");
            v
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            // Our own child, by its pid.
            child.kill().expect("kill");
            child.wait().expect("reap");
            let (o, e) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
            panic!(
                "hung, killed after {TIMEOUT:?}: {cmd:?}\nstdout so far: {:?}\nstderr so far: {:?}",
                String::from_utf8_lossy(&o),
                String::from_utf8_lossy(&e)
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    if let Some(f) = feeder {
        f.join().expect("stdin feeder");
    }
    Out {
        code: status.code().expect("exited, not killed by a signal"),
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    }
}

fn gd_cmd<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Command {
    let mut cmd = Command::new(gguf_digest_bin());
    cmd.args(args).current_dir(dir);
    cmd
}

/// `gguf-digest ARGS` in `dir`.
fn gd<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Out {
    exec(gd_cmd(dir, args), None)
}

/// `sha256sum ARGS` in `dir`.
fn gnu<S: AsRef<OsStr>>(dir: &Path, args: &[S], stdin: Option<Vec<u8>>) -> Out {
    let mut cmd = Command::new("sha256sum");
    cmd.args(args).current_dir(dir);
    exec(cmd, stdin)
}

fn replace(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut res = Vec::with_capacity(hay.len());
    let mut rest = hay;
    while let Some(i) = rest.windows(from.len()).position(|w| w == from) {
        res.extend_from_slice(&rest[..i]);
        res.extend_from_slice(to);
        rest = &rest[i + from.len()..];
    }
    res.extend_from_slice(rest);
    res
}

/// A name as gguf-digest shows it in a result line where GNU 9.1 shows it
/// raw (README, "Names in output"): escaped, after a `\`, when it holds a
/// control character, a bidirectional override or bytes that are not
/// UTF-8. Written apart from the crate's escaping, as an oracle.
fn result_name_as_ours(name: &[u8]) -> Vec<u8> {
    let unsafe_char =
        |c: char| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c);
    let plain = std::str::from_utf8(name).is_ok_and(|s| !s.chars().any(unsafe_char));
    if plain || name.first() == Some(&b'\\') {
        return name.to_vec();
    }
    let mut out = String::from("\\");
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.into_bytes()
}

/// GNU's output in gguf-digest's words: the program name, and what is
/// checked is a label, not a checksum (the wordings of src/check.rs); a
/// result line's name escaped where GNU leaves a control character raw.
/// Nothing else is rewritten; quoting in particular must agree as is.
fn gnu_as_ours(o: Out) -> Out {
    let mut err = o.stderr;
    for (from, to) in [
        ("sha256sum: ", "gguf-digest: "),
        ("improperly formatted SHA256 checksum line", "improperly formatted label line"),
        ("no properly formatted checksum lines found", "no properly formatted label lines found"),
        // Also turns "computed checksums" into "computed labels".
        ("computed checksum", "computed label"),
    ] {
        err = replace(&err, from.as_bytes(), to.as_bytes());
    }
    let mut stdout = Vec::with_capacity(o.stdout.len());
    for line in o.stdout.split_inclusive(|&b| b == b'\n') {
        let verdict =
            [&b": OK\n"[..], b": FAILED\n", b": FAILED open or read\n"].into_iter().find(|v| line.ends_with(v));
        match verdict {
            Some(v) => {
                stdout.extend_from_slice(&result_name_as_ours(&line[..line.len() - v.len()]));
                stdout.extend_from_slice(v);
            }
            None => stdout.extend_from_slice(line),
        }
    }
    Out { stderr: err, stdout, ..o }
}

fn lines(ls: &[&str]) -> String {
    ls.iter().map(|l| format!("{l}\n")).collect()
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/// A small model of its own: `seed` changes every tensor byte and a KV.
fn small(seed: u8) -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("seed", Val::U8(seed))
        .tensor(Tensor::filled("b", &[8, 2], 0, seed))
        .tensor(Tensor::filled("a", &[32], 8, seed.wrapping_add(1)))
}

/// A model with `n` tensors, to be split into shards.
fn splittable(n: usize, seed: u8) -> Gguf {
    let mut g = Gguf::new().kv("general.architecture", Val::str("llama")).kv("seed", Val::U8(seed));
    for i in 0..n {
        g = g.tensor(Tensor::filled(&format!("t.{i}"), &[4, 1, 1], 0, seed.wrapping_add(i as u8)));
    }
    g
}

/// Writes every shard of `g` cut by `sizes` as `<stem>-NNNNN-of-MMMMM.gguf`;
/// returns the shard names and their writer models.
fn write_shards(dir: &Dir, stem: &str, g: &Gguf, sizes: &[usize]) -> Vec<(String, Gguf)> {
    let shards = g.split(sizes);
    let n = shards.len();
    shards
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let name = format!("{stem}-{:05}-of-{n:05}.gguf", i + 1);
            dir.write(&name, &s.build());
            (name, s)
        })
        .collect()
}

/// A file the parser rejects, with the message gguf-digest gives for it:
/// a BOOL KV holding the byte 2, after two good KVs, so the message must
/// name the file, the byte offset of the bad byte, and the key.
fn corrupt(dir: &Dir, name: &str) -> String {
    let g = small(9).kv("flag", Val::Raw(7, vec![2])).kv("after", Val::U8(0));
    let (bytes, lay) = g.build_with_layout();
    // Key length (8), key "flag" (4), type (4), then the value byte.
    let at = lay.kv_offsets[2] + 8 + 4 + 4;
    assert_eq!(bytes[at as usize], 2);
    dir.write(name, &bytes);
    format!("{name}: byte {at}, key 'flag': BOOL value is byte 2; only 0 and 1 are allowed")
}

// ---------------------------------------------------------------------------
// Plain labelling
// ---------------------------------------------------------------------------

#[test]
fn labels_every_file_in_argument_order() {
    let d = Dir::new();
    let models = [small(1), small(2), small(3)];
    for (i, g) in models.iter().enumerate() {
        d.write(&format!("m{i}.gguf"), &g.build());
    }
    let abs = d.path("m0.gguf");
    let args = [OsStr::new("m2.gguf"), abs.as_os_str(), OsStr::new("m1.gguf"), OsStr::new("m2.gguf")];
    let want = format!(
        "{}  m2.gguf\n{}  {}\n{}  m1.gguf\n{}  m2.gguf\n",
        models[2].expected_label(),
        models[0].expected_label(),
        abs.display(),
        models[1].expected_label(),
        models[2].expected_label(),
    );
    assert_eq!(gd(d.dir.path(), &args), out(0, want, ""));
}

#[test]
fn a_bad_file_is_reported_and_the_others_still_labelled() {
    let d = Dir::new();
    let (a, b) = (small(1), small(2));
    d.write("a.gguf", &a.build());
    d.write("b.gguf", &b.build());
    let msg = corrupt(&d, "bad.gguf");
    let o = gd(d.dir.path(), &["a.gguf", "bad.gguf", "nope.gguf", "b.gguf"]);
    let want_out = format!("{}  a.gguf\n{}  b.gguf\n", a.expected_label(), b.expected_label());
    let want_err = lines(&[&format!("gguf-digest: {msg}"), "gguf-digest: nope.gguf: No such file or directory"]);
    assert_eq!(o, out(2, want_out, want_err));
}

/// Every way a FILE can fail, each alone: the message names the file and,
/// where the file has bytes, the offset.
#[test]
fn each_kind_of_bad_file_is_named_with_its_offset() {
    let d = Dir::new();
    let msg = corrupt(&d, "bad.gguf");
    d.write("junk.gguf", b"JUNK and more bytes after the magic");
    d.write("empty.gguf", b"");
    std::fs::create_dir(d.path("dir.gguf")).unwrap();
    // The last tensor's data cut short by one byte.
    let g = small(3);
    let (bytes, lay) = g.build_with_layout();
    d.write("short.gguf", &bytes[..bytes.len() - 1]);
    let (start, end) =
        (lay.data_start + lay.offsets[1], lay.data_start + lay.offsets[1] + g.tensors[1].data.len() as u64);
    let cases = [
        ("bad.gguf", msg.clone()),
        ("junk.gguf", "junk.gguf: byte 0: not a GGUF file: magic is 4a554e4b, expected 47475546 (\"GGUF\")".into()),
        ("empty.gguf", "empty.gguf: byte 0: file is empty (0 bytes)".into()),
        // A directory is labelled whole (docs/adr/0023); this one holds no file.
        ("dir.gguf", "dir.gguf: holds no file; a directory label needs at least one".into()),
        ("missing.gguf", "missing.gguf: No such file or directory".into()),
        (
            "short.gguf",
            format!(
                "short.gguf: byte {}, tensor 'a': data range {start}..{end} lies outside the file ({} bytes)",
                lay.info_offsets[1],
                bytes.len() - 1
            ),
        ),
    ];
    for (name, msg) in cases {
        assert_eq!(gd(d.dir.path(), &[name]), out(2, "", format!("gguf-digest: {msg}\n")), "{name}");
    }
}

/// Results are printed in argument order, so a file that cannot be
/// labelled must not keep the ones after it from being opened.
#[test]
fn unlabelled_files_in_a_row_do_not_hang() {
    let d = Dir::new();
    let a = small(1);
    d.write("a.gguf", &a.build());
    // No tensors: labelled at once, like a file that fails to open.
    let empty = Gguf::new().kv("k", Val::U8(1));
    d.write("e.gguf", &empty.build());
    let la = a.expected_label();
    let le = empty.expected_label();
    let nope = "gguf-digest: nope.gguf: No such file or directory\n";
    // -j 1 opens two files at a time: two failures fill the window.
    assert_eq!(
        gd(d.dir.path(), &["-j", "1", "nope.gguf", "nope.gguf", "a.gguf"]),
        out(2, format!("{la}  a.gguf\n"), nope.repeat(2))
    );
    assert_eq!(
        gd(d.dir.path(), &["-j", "1", "a.gguf", "nope.gguf", "a.gguf"]),
        out(2, format!("{la}  a.gguf\n{la}  a.gguf\n"), nope)
    );
    // No failure at all: five models without tensors, -j 2 (four at a time).
    assert_eq!(
        gd(d.dir.path(), &["-j", "2", "e.gguf", "e.gguf", "e.gguf", "e.gguf", "e.gguf"]),
        out(0, format!("{le}  e.gguf\n").repeat(5), "")
    );
    // The same through --check.
    let list = format!("{le}  e.gguf\n").repeat(5);
    d.write("list", list.as_bytes());
    assert_eq!(gd(d.dir.path(), &["-j", "2", "-c", "list"]), out(0, "e.gguf: OK\n".repeat(5), ""));
}

/// No FILE reads standard input, as `sha256sum` does (and as `-c` with
/// no FILE always did).
#[test]
fn no_file_reads_standard_input_like_sha256sum() {
    let d = Dir::new();
    let g = small(1);
    let piped = |args: &[&str]| exec(gd_cmd(d.dir.path(), args), Some(g.build()));
    assert_eq!(piped(&[]), out(0, format!("{}  -\n", g.expected_label()), ""));
    assert_eq!(piped(&["--skeleton"]), out(0, g.expected_skeleton(), ""));
    let doc: serde_json::Value = serde_json::from_slice(&piped(&["--json"]).stdout).unwrap();
    assert_eq!(
        (doc["files"][0]["path"].as_str(), doc["files"][0]["label"].as_str()),
        (Some("-"), Some(&*g.expected_label()))
    );
    // Nothing on standard input: an empty file, as `-` says it.
    assert_eq!(gd::<&str>(d.dir.path(), &[]), out(2, "", "gguf-digest: -: byte 0: file is empty (0 bytes)\n"));
}

/// Names holding a newline, a backslash or a carriage return are written
/// exactly as GNU sha256sum writes them: escaped, the line led by `\`.
#[test]
fn odd_names_are_escaped_exactly_like_sha256sum() {
    let d = Dir::new();
    let names =
        ["plain.gguf", "new\nline.gguf", "back\\slash.gguf", "carriage\rreturn.gguf", "all\\\n\r.gguf", " lead"];
    let mut gnu_args = Vec::new();
    let mut swaps = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let g = small(i as u8);
        let bytes = g.build();
        d.write(n, &bytes);
        gnu_args.push(*n);
        swaps.push((hex(&sha(&bytes)), g.expected_label()));
    }
    let g = gnu(d.dir.path(), &gnu_args, None);
    assert_eq!(g.code, 0, "{g:?}");
    // Same lines with each file's SHA-256 replaced by its label.
    let mut want = g.stdout.clone();
    for (s, l) in &swaps {
        want = replace(&want, s.as_bytes(), l.as_bytes());
    }
    let o = gd(d.dir.path(), &gnu_args);
    assert_eq!(o, out(0, &want, ""));
    // Spelled out once, so that agreeing with sha256sum cannot hide a shared mistake.
    let l: Vec<&str> = swaps.iter().map(|(_, l)| l.as_str()).collect();
    let spelled = format!(
        "{}  plain.gguf\n\\{}  new\\nline.gguf\n\\{}  back\\\\slash.gguf\n\\{}  carriage\\rreturn.gguf\n\\{}  all\\\\\\n\\r.gguf\n{}   lead\n",
        l[0], l[1], l[2], l[3], l[4], l[5]
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), spelled);
}

// ---------------------------------------------------------------------------
// --json
// ---------------------------------------------------------------------------

const VALUE_TYPES: [&str; 13] = [
    "UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL", "STRING", "ARRAY", "UINT64", "INT64",
    "FLOAT64",
];

/// The spec's names of the ggml types these tests write.
fn ggml_name(t: u32) -> &'static str {
    match t {
        0 => "F32",
        1 => "F16",
        8 => "Q8_0",
        12 => "Q4_K",
        30 => "BF16",
        _ => panic!("add type {t} to ggml_name"),
    }
}

fn keys(v: &JsonValue) -> Vec<&str> {
    v.as_object().expect("object").keys().map(String::as_str).collect()
}

/// A KV's JSON entry, derived from the writer's value alone.
fn kv_json(key: &[u8], v: &Val) -> JsonValue {
    let mut o = serde_json::Map::new();
    o.insert("key".into(), json!(std::str::from_utf8(key).unwrap()));
    o.insert("type".into(), json!(VALUE_TYPES[v.type_id() as usize]));
    let fields = match v {
        Val::U8(x) => json!({ "value": x }),
        Val::I8(x) => json!({ "value": x }),
        Val::U16(x) => json!({ "value": x }),
        Val::I16(x) => json!({ "value": x }),
        Val::U32(x) => json!({ "value": x }),
        Val::I32(x) => json!({ "value": x }),
        Val::U64(x) => json!({ "value": x }),
        Val::I64(x) => json!({ "value": x }),
        Val::Bool(x) => json!({ "value": x }),
        Val::F32(x) => json!({ "value": f64::from(*x), "bits": format!("{:08x}", x.to_bits()) }),
        Val::F64(x) => json!({ "value": x, "bits": format!("{:016x}", x.to_bits()) }),
        Val::Str(s) => json!({ "len": s.len(), "sha256": hex(&sha(s)) }),
        Val::Arr(t, items) => {
            let mut payload = Vec::new();
            for i in items {
                i.encode(false, &mut payload);
            }
            json!({ "elem_type": VALUE_TYPES[*t as usize], "count": items.len(), "sha256": hex(&sha(&payload)) })
        }
        Val::Raw(..) => unreachable!("only well-formed models here"),
    };
    o.extend(fields.as_object().unwrap().clone());
    JsonValue::Object(o)
}

/// The canonical dims of spec §2.
fn canonical_dims(stored: &[u64]) -> Vec<u64> {
    let mut d = stored.to_vec();
    d.resize(4, 1);
    while d.len() > 1 && d.last() == Some(&1) {
        d.pop();
    }
    d
}

/// One file entry of the JSON document, derived from the writer's shards
/// (their names, models and layouts) alone.
fn file_json(path: &str, shards: &[(String, Gguf)]) -> JsonValue {
    let built: Vec<(Vec<u8>, Layout)> = shards.iter().map(|(_, g)| g.build_with_layout()).collect();
    let first = &shards[0].1;
    let a = first.alignment();
    let mut kvs: Vec<&(Vec<u8>, Val)> =
        shards.iter().flat_map(|(_, g)| &g.kvs).filter(|(k, _)| !k.starts_with(b"split.")).collect();
    kvs.sort_by(|x, y| x.0.cmp(&y.0));
    kvs.dedup_by(|x, y| x.0 == y.0);
    let mut tensors: Vec<(usize, usize, &Tensor)> = shards
        .iter()
        .enumerate()
        .flat_map(|(s, (_, g))| g.tensors.iter().enumerate().map(move |(i, t)| (s, i, t)))
        .collect();
    tensors.sort_by(|x, y| x.2.name.cmp(&y.2.name));
    let mut offset = 0u64;
    let tensors: Vec<JsonValue> = tensors
        .iter()
        .map(|&(s, i, t)| {
            let j = json!({
                "name": std::str::from_utf8(&t.name).unwrap(),
                "dims": canonical_dims(&t.dims),
                "stored_dims": t.dims,
                "type": ggml_name(t.ggml_type),
                "type_id": t.ggml_type,
                "nbytes": t.data.len(),
                "offset": offset,
                "stored_offset": built[s].1.offsets[i],
                "shard": s,
                "sha256": hex(&sha(&t.data)),
            });
            offset = (offset + t.data.len() as u64).div_ceil(a) * a;
            j
        })
        .collect();
    let shard_json: Vec<JsonValue> = shards
        .iter()
        .zip(&built)
        .map(|((name, g), (bytes, lay))| {
            json!({
                "path": name,
                "size": bytes.len(),
                "version": g.version,
                "byte_order": if g.big_endian { "big" } else { "little" },
                "alignment": g.alignment(),
                // Spec §2: the infos' end aligned, even where the writer put no padding (no tensors).
                "data_start": lay.info_end.div_ceil(g.alignment()) * g.alignment(),
                "kv_count": g.kvs.len(),
                "tensor_count": g.tensors.len(),
            })
        })
        .collect();
    let total: usize = shards.iter().flat_map(|(_, g)| &g.tensors).map(|t| t.data.len()).sum();
    json!({
        "path": path,
        "label": "filled in by the caller",
        "version": first.version,
        "byte_order": if first.big_endian { "big" } else { "little" },
        "alignment": a,
        "data_start": built[0].1.info_end.div_ceil(a) * a,
        "kv_count": kvs.len(),
        "tensor_count": tensors.len(),
        "tensor_bytes": total,
        "shards": shard_json,
        "kvs": kvs.iter().map(|(k, v)| kv_json(k, v)).collect::<Vec<_>>(),
        "tensors": tensors,
    })
}

const FILE_KEYS: [&str; 12] = [
    "path",
    "label",
    "version",
    "byte_order",
    "alignment",
    "data_start",
    "kv_count",
    "tensor_count",
    "tensor_bytes",
    "shards",
    "kvs",
    "tensors",
];
const SHARD_KEYS: [&str; 8] =
    ["path", "size", "version", "byte_order", "alignment", "data_start", "kv_count", "tensor_count"];
const TENSOR_KEYS: [&str; 10] =
    ["name", "dims", "stored_dims", "type", "type_id", "nbytes", "offset", "stored_offset", "shard", "sha256"];

/// A model whose layout differs from its canonical form in every way JSON
/// shows: tensor infos and data out of name order, gaps, a trailing-1 shape,
/// alignment 64, and a KV of every type (rich_model).
fn json_model() -> Gguf {
    let mut g = rich_model(&[0, 8, 1])
        .kv("general.alignment", Val::U32(64))
        .tensor(Tensor::filled("a.first", &[16, 1, 1], 30, 7))
        .tensor(Tensor::filled("blk.9.k", &[256], 12, 8))
        // Not finite: JSON has no NaN, so value is null and bits tell.
        .kv("v.nan", Val::F32(f32::NAN));
    g.info_order = Some(vec![3, 0, 4, 2, 1]);
    g.data_order = Some(vec![2, 4, 3, 1, 0]);
    g.gaps = vec![0, 100];
    g
}

#[test]
fn json_document_has_every_field_of_every_file() {
    let d = Dir::new();
    let g = json_model();
    d.write("rich.gguf", &g.build());
    let mut be = rich_model(&[0, 1, 8]);
    be.version = 2;
    be.big_endian = true;
    d.write("be.gguf", &be.build());
    let sharded = splittable(5, 3);
    let shards = write_shards(&d, "split", &sharded, &[2, 0, 3]);
    let msg = corrupt(&d, "bad.gguf");

    let o = gd(d.dir.path(), &["--json", "rich.gguf", "bad.gguf", "be.gguf", "split-00001-of-00003.gguf"]);
    assert_eq!((o.code, String::from_utf8_lossy(&o.stderr)), (2, format!("gguf-digest: {msg}\n").into()));
    assert!(o.stdout.ends_with(b"}\n"), "one document, then a newline");
    let doc: JsonValue = serde_json::from_slice(&o.stdout).unwrap();

    assert_eq!(keys(&doc), ["format", "spec", "tool", "files"]);
    assert_eq!(doc["format"], json!(1));
    assert_eq!(doc["spec"], json!("canonical-skeleton-v1"));
    assert_eq!(doc["tool"], json!("gguf-digest 0.1.0"));
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 4, "one entry per FILE, in argument order");

    let want = [
        (&files[0], file_json("rich.gguf", &[("rich.gguf".into(), g.clone())]), g.expected_label()),
        (&files[2], file_json("be.gguf", &[("be.gguf".into(), be.clone())]), be.expected_label()),
        (&files[3], file_json("split-00001-of-00003.gguf", &shards), sharded.expected_label()),
    ];
    for (got, mut want, label) in want {
        want["label"] = json!(label);
        // The portable path takes no read lease and says so in each entry.
        let mut got = got.clone();
        if cfg!(feature = "portable") {
            let note = got.as_object_mut().unwrap().remove("read_lease_unavailable").unwrap();
            assert!(note.as_array().unwrap().iter().all(|n| n["why"] == "this system has no file leases"), "{note}");
        }
        let got = &got;
        assert_eq!(keys(got), FILE_KEYS);
        for s in got["shards"].as_array().unwrap() {
            assert_eq!(keys(s), SHARD_KEYS);
        }
        for t in got["tensors"].as_array().unwrap() {
            assert_eq!(keys(t), TENSOR_KEYS);
        }
        for (kv, w) in got["kvs"].as_array().unwrap().iter().zip(want["kvs"].as_array().unwrap()) {
            // Scalars: value (+ bits for floats); strings: len + sha256; arrays: elem_type + count + sha256.
            assert_eq!(keys(kv), keys(w), "{kv}");
        }
        assert_eq!(got, &want);
    }
    // Spot checks that do not go through file_json, against the bytes on disk.
    assert_eq!(files[0]["tensors"][0]["name"], json!("a.first"));
    assert_eq!(files[0]["tensors"][0]["dims"], json!([16]));
    assert_eq!(files[0]["tensors"][0]["stored_dims"], json!([16, 1, 1]));
    assert_eq!(files[0]["tensors"][0]["sha256"], json!(hex(&sha(&g.tensors[3].data))));
    assert_eq!(files[0]["alignment"], json!(64));
    assert_eq!(files[2]["byte_order"], json!("big"));
    assert_eq!(files[2]["version"], json!(2));
    assert_eq!(files[3]["shards"][1]["path"], json!("split-00002-of-00003.gguf"));
    assert_eq!(files[3]["shards"][1]["tensor_count"], json!(0));
    let v_f32 = files[0]["kvs"].as_array().unwrap().iter().find(|k| k["key"] == "v.f32").unwrap();
    assert_eq!(v_f32, &json!({ "key": "v.f32", "type": "FLOAT32", "value": 0.25, "bits": "3e800000" }));

    // The error entry: path and error only; the error is the message printed.
    assert_eq!(files[1], json!({ "path": "bad.gguf", "error": msg }));
}

#[test]
fn json_of_only_good_files_exits_0_and_of_a_missing_file_exits_2() {
    let d = Dir::new();
    let g = small(4);
    d.write("m.gguf", &g.build());
    let o = gd(d.dir.path(), &["--json", "m.gguf"]);
    assert_eq!((o.code, o.stderr.as_slice()), (0, &b""[..]));
    let doc: JsonValue = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["files"][0]["label"], json!(g.expected_label()));

    let o = gd(d.dir.path(), &["--json", "nope.gguf"]);
    assert_eq!(
        (o.code, String::from_utf8_lossy(&o.stderr).into_owned()),
        (2, lines(&["gguf-digest: nope.gguf: No such file or directory"]))
    );
    let doc: JsonValue = serde_json::from_slice(&o.stdout).unwrap();
    let entry = &doc["files"][0];
    assert_eq!(keys(entry), ["path", "error"]);
    assert_eq!(entry["path"], json!("nope.gguf"));
    assert!(entry["error"].as_str().unwrap().starts_with("nope.gguf: No such file or directory"), "{entry}");
}

// ---------------------------------------------------------------------------
// --skeleton
// ---------------------------------------------------------------------------

#[test]
fn skeleton_is_the_bytes_the_label_hashes() {
    let d = Dir::new();
    let g = json_model();
    d.write("m.gguf", &g.build());
    let o = gd(d.dir.path(), &["--skeleton", "m.gguf"]);
    assert_eq!(o, out(0, g.expected_skeleton(), ""));
    assert_eq!(hex(&sha(&o.stdout)), g.expected_label());
    // A split model's skeleton is the whole model's.
    let s = splittable(3, 1);
    write_shards(&d, "s", &s, &[1, 2]);
    assert_eq!(gd(d.dir.path(), &["--skeleton", "s-00001-of-00002.gguf"]), out(0, s.expected_skeleton(), ""));
}

#[test]
fn skeleton_takes_exactly_one_good_file() {
    let d = Dir::new();
    d.write("a.gguf", &small(1).build());
    d.write("b.gguf", &small(2).build());
    let msg = corrupt(&d, "bad.gguf");
    let two = out(2, "", "gguf-digest: --skeleton takes exactly one FILE\n");
    assert_eq!(gd(d.dir.path(), &["--skeleton", "a.gguf", "b.gguf"]), two);
    assert_eq!(gd(d.dir.path(), &["--skeleton", "bad.gguf"]), out(2, "", format!("gguf-digest: {msg}\n")));
}

/// Quotes a string for `sh -c`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Binary bytes must not reach a terminal. The child gets a real
/// pseudo-terminal from util-linux `script` (its output comes back through
/// the terminal, hence CRLF).
#[test]
fn skeleton_refuses_to_write_to_a_terminal() {
    let d = Dir::new();
    let g = small(5);
    let m = d.write("m.gguf", &g.build());
    let skel = format!("{} --skeleton {}", sh_quote(gguf_digest_bin()), sh_quote(m.to_str().unwrap()));
    let in_script = |cmd: &str| {
        let mut c = Command::new("script");
        c.args(["-qec", cmd, "/dev/null"]);
        exec(c, None)
    };
    let refusal = "gguf-digest: refusing to write the binary skeleton to a terminal; redirect or pipe it\r\n";
    assert_eq!(in_script(&skel), out(2, refusal, ""));
    // The same command in the same terminal, with stdout redirected, works:
    // the terminal is what it refused.
    let file = d.path("skel.bin");
    assert_eq!(in_script(&format!("{skel} > {}", sh_quote(file.to_str().unwrap()))), out(0, "", ""));
    assert_eq!(std::fs::read(&file).unwrap(), g.expected_skeleton());
}

// ---------------------------------------------------------------------------
// --check, differentially against GNU sha256sum -c
// ---------------------------------------------------------------------------

/// Files for a differential check: each with the SHA-256 sha256sum
/// computes for it and the label gguf-digest computes for it. In a list
/// template, `{i}` stands for the i-th file's digest (`{Ui}`: in upper
/// case); each tool gets the list with its own digests.
struct Twin {
    dir: Dir,
    sums: Vec<String>,
    labels: Vec<String>,
}

impl Twin {
    fn new() -> Twin {
        Twin { dir: Dir::new(), sums: Vec::new(), labels: Vec::new() }
    }

    /// a.gguf, b.gguf and c.gguf: `{0}`, `{1}`, `{2}`.
    fn abc() -> Twin {
        let mut t = Twin::new();
        t.model("a.gguf", &small(1)).model("b.gguf", &small(2)).model("c.gguf", &small(3));
        t
    }

    fn model(&mut self, name: &str, g: &Gguf) -> &mut Twin {
        let bytes = g.build();
        self.dir.write(name, &bytes);
        self.sums.push(hex(&sha(&bytes)));
        self.labels.push(g.expected_label());
        self
    }

    /// A split model, listed by its first shard: sha256sum hashes that one
    /// file, gguf-digest labels the whole model.
    fn shards(&mut self, stem: &str, g: &Gguf, sizes: &[usize]) -> &mut Twin {
        let shards = write_shards(&self.dir, stem, g, sizes);
        self.sums.push(hex(&sha(&shards[0].1.build())));
        self.labels.push(g.expected_label());
        self
    }

    fn render(template: &str, digests: &[String]) -> Vec<u8> {
        let mut res = String::new();
        let mut rest = template;
        while let Some(i) = rest.find('{') {
            res.push_str(&rest[..i]);
            let end = rest[i..].find('}').expect("closing brace") + i;
            let spec = &rest[i + 1..end];
            let (upper, n) = match spec.strip_prefix('U') {
                Some(n) => (true, n),
                None => (false, spec),
            };
            let d = &digests[n.parse::<usize>().expect("file index")];
            res.push_str(&if upper { d.to_uppercase() } else { d.clone() });
            rest = &rest[end + 1..];
        }
        res.push_str(rest);
        res.into_bytes()
    }

    /// Writes `lists` (name, template) and runs both tools with the same
    /// `args` and `stdin`; asserts they agree and returns gguf-digest's outcome.
    fn check(&self, args: &[&str], lists: &[(&str, &str)], stdin: Option<&str>) -> Out {
        let dir = self.dir.dir.path();
        for (name, t) in lists {
            self.dir.write(name, &Twin::render(t, &self.sums));
        }
        let want = gnu_as_ours(gnu(dir, args, stdin.map(|t| Twin::render(t, &self.sums))));
        for (name, t) in lists {
            self.dir.write(name, &Twin::render(t, &self.labels));
        }
        let got = exec(gd_cmd(dir, args), stdin.map(|t| Twin::render(t, &self.labels)));
        assert_eq!(got, want, "gguf-digest (left) and sha256sum (right) disagree on {args:?}");
        got
    }
}

#[test]
fn check_all_ok() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\n{1}  b.gguf\n{2}  c.gguf\n";
    let o = t.check(&["-c", "list"], &[("list", list)], None);
    assert_eq!(o, out(0, "a.gguf: OK\nb.gguf: OK\nc.gguf: OK\n", ""));
    assert_eq!(t.check(&["--check", "list"], &[("list", list)], None).code, 0);
}

#[test]
fn check_mismatches() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\n{0}  b.gguf\n{2}  c.gguf\n{1}  c.gguf\n";
    let o = t.check(&["-c", "list"], &[("list", list)], None);
    let want_err = "gguf-digest: WARNING: 2 computed labels did NOT match\n";
    assert_eq!(o, out(1, "a.gguf: OK\nb.gguf: FAILED\nc.gguf: OK\nc.gguf: FAILED\n", want_err));
    let one = t.check(&["-c", "list"], &[("list", "{1}  a.gguf\n")], None);
    assert_eq!(one.stderr, b"gguf-digest: WARNING: 1 computed label did NOT match\n");
}

#[test]
fn check_missing_files() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\n{1}  gone.gguf\n{2}  c.gguf\n{2}  gone2.gguf\n";
    let o = t.check(&["-c", "list"], &[("list", list)], None);
    assert_eq!(o.code, 1);
    assert_eq!(o.stdout, b"a.gguf: OK\ngone.gguf: FAILED open or read\nc.gguf: OK\ngone2.gguf: FAILED open or read\n");
}

#[test]
fn check_ignore_missing() {
    let t = Twin::abc();
    let some = "{0}  a.gguf\n{1}  gone.gguf\n{2}  c.gguf\n";
    assert_eq!(
        t.check(&["-c", "--ignore-missing", "list"], &[("list", some)], None),
        out(0, "a.gguf: OK\nc.gguf: OK\n", "")
    );
    let all = "{0}  gone.gguf\n{1}  gone2.gguf\n";
    let o = t.check(&["-c", "--ignore-missing", "list"], &[("list", all)], None);
    assert_eq!(o, out(1, "", "gguf-digest: list: no file was verified\n"));
    // A mismatch is still a failure; a file that exists but is unreadable is not "missing".
    let o = t.check(&["-c", "--ignore-missing", "list"], &[("list", "{0}  a.gguf\n{0}  b.gguf\n{0}  gone\n")], None);
    assert_eq!(o.code, 1);
}

/// GNU says "no file was verified" whenever --ignore-missing left no file
/// that matched, mismatches or not, and never under --status.
#[test]
fn check_ignore_missing_no_file_verified_like_gnu() {
    let t = Twin::abc();
    t.check(&["-c", "--ignore-missing", "list"], &[("list", "{1}  a.gguf\n{0}  gone.gguf\n")], None);
    t.check(&["-c", "--ignore-missing", "--status", "list"], &[("list", "{0}  gone.gguf\n")], None);
}

#[test]
fn check_quiet_prints_only_failures() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\n{0}  b.gguf\n{2}  c.gguf\n{2}  gone.gguf\n";
    let o = t.check(&["-c", "--quiet", "list"], &[("list", list)], None);
    assert_eq!(o.code, 1);
    assert_eq!(o.stdout, b"b.gguf: FAILED\ngone.gguf: FAILED open or read\n");
    let ok = "{0}  a.gguf\n{1}  b.gguf\n";
    assert_eq!(t.check(&["-c", "--quiet", "list"], &[("list", ok)], None), out(0, "", ""));
}

#[test]
fn check_status_prints_nothing() {
    let t = Twin::abc();
    let bad = "{0}  a.gguf\n{0}  b.gguf\njunk\n";
    assert_eq!(t.check(&["-c", "--status", "list"], &[("list", bad)], None), out(1, "", ""));
    let ok = "{0}  a.gguf\n{1}  b.gguf\njunk\n";
    assert_eq!(t.check(&["-c", "--status", "list"], &[("list", ok)], None), out(0, "", ""));
    assert_eq!(t.check(&["-c", "--status", "--strict", "list"], &[("list", ok)], None), out(1, "", ""));
}

/// GNU reports a listed file it cannot open even under --status (the
/// message comes from the file's open, not from the report).
#[test]
fn check_status_still_reports_unreadable_files_like_gnu() {
    let t = Twin::abc();
    t.check(&["-c", "--status", "list"], &[("list", "{0}  a.gguf\n{1}  gone.gguf\n")], None);
}

/// The misformatted lines of the tests below, one of each kind.
const MISFORMATTED: &str = "\
junk
deadbeef  a.gguf
{0}x  a.gguf
{0}
 # not a comment
\\{0}  bad\\tescape
\\{0}  trailing\\
";

#[test]
fn check_warn_names_every_misformatted_line() {
    let t = Twin::abc();
    let list = format!("{{0}}  a.gguf\n{MISFORMATTED}{{1}}  b.gguf\n");
    let o = t.check(&["-c", "-w", "list"], &[("list", &list)], None);
    assert_eq!(o.code, 0);
    assert_eq!(o.stdout, b"a.gguf: OK\nb.gguf: OK\n");
    let o = t.check(&["-c", "--warn", "list"], &[("list", &list)], None);
    assert!(String::from_utf8_lossy(&o.stderr).contains("list: 3: improperly formatted label line"), "{o:?}");
    // Without -w: the count only.
    let o = t.check(&["-c", "list"], &[("list", &list)], None);
    assert_eq!(o.stderr, b"gguf-digest: WARNING: 7 lines are improperly formatted\n");
}

#[test]
fn check_strict_fails_on_misformatted_lines() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\njunk\n{1}  b.gguf\n";
    assert_eq!(t.check(&["-c", "--strict", "list"], &[("list", list)], None).code, 1);
    assert_eq!(t.check(&["-c", "--strict", "-w", "list"], &[("list", list)], None).code, 1);
    assert_eq!(t.check(&["-c", "list"], &[("list", list)], None).code, 0);
    let clean = "{0}  a.gguf\n{1}  b.gguf\n";
    assert_eq!(t.check(&["-c", "--strict", "list"], &[("list", clean)], None).code, 0);
}

/// Comments, empty lines, CRLF, upper-case hex, the binary marker, leading
/// blanks, and an escaped line with nothing to escape.
#[test]
fn check_accepts_every_standard_line_form() {
    let t = Twin::abc();
    let list =
        "# a comment\n\n{0}  a.gguf\r\n{U1}  b.gguf\n{2} *c.gguf\n\r\n#{0}  x.gguf\n \t{0}  a.gguf\n\\{1}  b.gguf\n";
    let o = t.check(&["-c", "-w", "--strict", "list"], &[("list", list)], None);
    assert_eq!(o, out(0, "a.gguf: OK\nb.gguf: OK\nc.gguf: OK\na.gguf: OK\nb.gguf: OK\n", ""));
    // The last line without its newline.
    let o = t.check(&["-c", "list"], &[("list", "{0}  a.gguf\n{1}  b.gguf")], None);
    assert_eq!(o, out(0, "a.gguf: OK\nb.gguf: OK\n", ""));
}

/// BSD "reversed" lines (digest, one blank, name): once a list uses them,
/// a second blank belongs to the name, and `*` is not a marker; once a list
/// uses standard lines, a single blank is misformatted.
#[test]
fn check_bsd_reversed_lines_and_no_mixing() {
    let mut t = Twin::new();
    t.model("a.gguf", &small(1)).model(" b.gguf", &small(2)).model("x", &small(3)).model("*c.gguf", &small(4));
    let bsd = "{0} a.gguf\n{1}  b.gguf\n{2}\tx\n{3} *c.gguf\n{2} x\n";
    let o = t.check(&["-c", "-w", "--strict", "list"], &[("list", bsd)], None);
    assert_eq!(o, out(0, "a.gguf: OK\n b.gguf: OK\nx: OK\n*c.gguf: OK\nx: OK\n", ""));
    // Once standard, a single blank is misformatted, even before a one-byte
    // name, and `*` is the binary marker.
    let mixed = "{0}  a.gguf\n{0} a.gguf\n{2} x\n{3} *c.gguf\n";
    let o = t.check(&["-c", "-w", "list"], &[("list", mixed)], None);
    assert_eq!((o.code, o.stdout.as_slice()), (1, &b"a.gguf: OK\nc.gguf: FAILED open or read\n"[..]));
    let reversed_first = "{2} x\n{0}  a.gguf\n";
    let o = t.check(&["-c", "list"], &[("list", reversed_first)], None);
    assert_eq!((o.code, o.stdout.as_slice()), (1, &b"x: OK\n a.gguf: FAILED open or read\n"[..]));
}

/// Escaped names (`\` before the digest): `\\`, `\n` and `\r`; any other
/// escape is misformatted. Names are printed back escaped when they hold a
/// newline, as sha256sum 9.1 does, and also when they hold a carriage
/// return (or any control character), which sha256sum prints raw.
#[test]
fn check_escaped_names() {
    let mut t = Twin::new();
    t.model("new\nline.gguf", &small(1))
        .model("back\\slash.gguf", &small(2))
        .model("cr\rhere.gguf", &small(3))
        .model("all\\\n\r.gguf", &small(4));
    let list = "\
\\{0}  new\\nline.gguf
\\{1}  back\\\\slash.gguf
\\{2}  cr\\rhere.gguf
\\{3}  all\\\\\\n\\r.gguf
{1}  back\\slash.gguf
\\{0}  back\\\\slash.gguf
\\{3}  new\\nline.gguf
\\{0}  bad\\x
";
    let o = t.check(&["-c", "-w", "list"], &[("list", list)], None);
    let want = "\\new\\nline.gguf: OK\nback\\slash.gguf: OK\n\\cr\\rhere.gguf: OK\n\\all\\\\\\n\\r.gguf: OK\nback\\slash.gguf: OK\nback\\slash.gguf: FAILED\n\\new\\nline.gguf: FAILED\n";
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
    assert_eq!(o.code, 1);
}

/// What either tool writes, the same tool reads back.
#[test]
fn check_reads_back_its_own_output_like_sha256sum() {
    let mut t = Twin::new();
    let names = ["plain.gguf", "new\nline.gguf", "back\\slash.gguf", "cr\rhere.gguf", " lead.gguf", "*star.gguf"];
    for (i, n) in names.iter().enumerate() {
        t.model(n, &small(i as u8));
    }
    let dir = t.dir.dir.path();
    let theirs = gnu(dir, &names, None);
    let ours = gd(dir, &names);
    assert_eq!((theirs.code, ours.code), (0, 0));
    t.dir.write("gnu.sums", &theirs.stdout);
    t.dir.write("our.sums", &ours.stdout);
    let want = gnu_as_ours(gnu(dir, &["-c", "gnu.sums"], None));
    let want = Out { stdout: replace(&want.stdout, b"gnu.sums", b"our.sums"), ..want };
    assert_eq!(want.code, 0);
    assert_eq!(gd(dir, &["-c", "our.sums"]), want);
}

/// Names with leading blanks: after the two-blank separator everything is
/// the name.
#[test]
fn check_names_with_leading_blanks() {
    let mut t = Twin::new();
    t.model("  two.gguf", &small(1)).model(" one.gguf", &small(2)).model("a.gguf", &small(3));
    let list = "{0}    two.gguf\n{1}   one.gguf\n  {2}  a.gguf\n{1} * one.gguf\n";
    let o = t.check(&["-c", "list"], &[("list", list)], None);
    assert_eq!(o, out(0, "  two.gguf: OK\n one.gguf: OK\na.gguf: OK\n one.gguf: OK\n", ""));
}

#[test]
fn check_list_without_a_proper_line() {
    let t = Twin::abc();
    let want_err = "gguf-digest: list: no properly formatted label lines found\n";
    for list in ["", "# only a comment\n\n", "junk\n"] {
        assert_eq!(t.check(&["-c", "list"], &[("list", list)], None), out(1, "", want_err), "{list:?}");
    }
    let o = t.check(&["-c", "-w", "list"], &[("list", MISFORMATTED)], None);
    assert_eq!(o.code, 1);
    let o = t.check(&["-c", "--status", "list"], &[("list", MISFORMATTED)], None);
    assert_eq!(o, out(1, "", want_err));
}

#[test]
fn check_reads_standard_input() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\n{1}  b.gguf\n";
    assert_eq!(t.check(&["-c", "-"], &[], Some(list)), out(0, "a.gguf: OK\nb.gguf: OK\n", ""));
    assert_eq!(t.check(&["-c"], &[], Some(list)), out(0, "a.gguf: OK\nb.gguf: OK\n", ""));
    let bad = "{0}  a.gguf\n{0}  b.gguf\n";
    assert_eq!(t.check(&["-c"], &[], Some(bad)).code, 1);
    assert_eq!(t.check(&["-c", "--quiet", "-"], &[], Some(bad)).stdout, b"b.gguf: FAILED\n");
}

/// GNU names standard input `'standard input'`, quoted, in its messages.
#[test]
fn check_quotes_standard_input_like_gnu() {
    let t = Twin::abc();
    t.check(&["-c"], &[], Some("junk\n"));
    t.check(&["-c", "-w", "-"], &[], Some("{0}  a.gguf\njunk\n"));
    t.check(&["-c", "--ignore-missing"], &[], Some("{0}  gone.gguf\n"));
}

/// GNU quotes, in stderr, names with blanks or shell metacharacters.
#[test]
fn check_quotes_odd_names_in_messages_like_gnu() {
    let t = Twin::abc();
    t.check(&["-c", "-w", "my list"], &[("my list", "{0}  a.gguf\njunk\n")], None);
    t.check(&["-c", "list"], &[("list", "{0}  gone file.gguf\n")], None);
}

/// In a list read from standard input, GNU takes a line naming `-` as
/// misformatted (stdin cannot be both the list and a listed file).
#[test]
fn check_dash_entry_in_stdin_list_is_misformatted_like_gnu() {
    let t = Twin::abc();
    t.check(&["-c", "-w"], &[], Some("{0}  a.gguf\n{1}  -\n"));
}

/// GNU's --status, --warn and --quiet each cancel the others: the last
/// one given wins.
#[test]
fn check_last_of_status_warn_quiet_wins_like_gnu() {
    let t = Twin::abc();
    let list = "{0}  a.gguf\njunk\n{0}  b.gguf\n";
    t.check(&["-c", "--status", "-w", "list"], &[("list", list)], None);
    t.check(&["-c", "--status", "--quiet", "list"], &[("list", list)], None);
    t.check(&["-c", "-w", "--status", "list"], &[("list", list)], None);
    t.check(&["-c", "--quiet", "-w", "list"], &[("list", list)], None);
}

#[test]
fn check_several_lists() {
    let t = Twin::abc();
    let lists = [("one", "{0}  a.gguf\n"), ("two", "{0}  b.gguf\n{2}  c.gguf\n"), ("three", "{1}  b.gguf\n")];
    let o = t.check(&["-c", "one", "two", "three"], &lists, None);
    let want_err = "gguf-digest: WARNING: 1 computed label did NOT match\n";
    assert_eq!(o, out(1, "a.gguf: OK\nb.gguf: FAILED\nc.gguf: OK\nb.gguf: OK\n", want_err));
    // Standard input among them, and a list read twice.
    let o = t.check(&["-c", "one", "-", "one"], &lists, Some("{2}  c.gguf\n"));
    assert_eq!(o, out(0, "a.gguf: OK\nc.gguf: OK\na.gguf: OK\n", ""));
    // Standard input twice: the second time it is empty.
    let o = t.check(&["-c", "-", "-"], &[], Some("{2}  c.gguf\n"));
    assert_eq!(o, out(1, "c.gguf: OK\n", "gguf-digest: 'standard input': no properly formatted label lines found\n"));
}

/// coreutils reads a name as a C string: an unescaped name ends at a NUL;
/// an escaped one holding a NUL is misformatted.
#[test]
fn check_names_end_at_a_nul_like_gnu() {
    let t = Twin::abc();
    let o = t.check(&["-c", "-w", "list"], &[("list", "{0}  a.gguf\0junk\n\\{1}  b.gguf\0x\n")], None);
    assert_eq!(o.stdout, b"a.gguf: OK\n");
}

/// A split model is listed by its first shard; the label covers every shard.
#[test]
fn check_a_shard_set_by_its_first_shard() {
    let mut t = Twin::new();
    t.shards("model", &splittable(4, 1), &[1, 3]).model("a.gguf", &small(1));
    let list = "{0}  model-00001-of-00002.gguf\n{1}  a.gguf\n";
    let o = t.check(&["-c", "list"], &[("list", list)], None);
    assert_eq!(o, out(0, "model-00001-of-00002.gguf: OK\na.gguf: OK\n", ""));
}

// ---------------------------------------------------------------------------
// --check, on its own
// ---------------------------------------------------------------------------

#[test]
fn check_exit_status_is_0_1_or_2() {
    let d = Dir::new();
    let a = small(1);
    d.write("a.gguf", &a.build());
    let la = a.expected_label();
    d.write("ok.sums", format!("{la}  a.gguf\n").as_bytes());
    d.write("bad.sums", format!("{}  a.gguf\n", small(2).expected_label()).as_bytes());
    std::fs::create_dir(d.path("dir.sums")).unwrap();
    let dir = d.dir.path();
    let mismatch = "gguf-digest: WARNING: 1 computed label did NOT match\n";
    let nope = "gguf-digest: nope.sums: No such file or directory\n";
    assert_eq!(gd(dir, &["-c", "ok.sums"]), out(0, "a.gguf: OK\n", ""));
    assert_eq!(gd(dir, &["-c", "bad.sums"]), out(1, "a.gguf: FAILED\n", mismatch));
    assert_eq!(gd(dir, &["-c", "nope.sums"]), out(2, "", nope));
    assert_eq!(gd(dir, &["-c", "dir.sums"]), out(2, "", "gguf-digest: dir.sums: Is a directory\n"));
    // The other lists are still checked; an unreadable list outranks a mismatch, in either order.
    assert_eq!(gd(dir, &["-c", "nope.sums", "ok.sums"]), out(2, "a.gguf: OK\n", nope));
    let both = format!("{nope}{mismatch}");
    assert_eq!(gd(dir, &["-c", "nope.sums", "bad.sums"]), out(2, "a.gguf: FAILED\n", &both));
    let both = format!("{mismatch}{nope}");
    assert_eq!(gd(dir, &["-c", "bad.sums", "nope.sums"]), out(2, "a.gguf: FAILED\n", &both));
    // On purpose unlike sha256sum, which exits 1 for an unreadable list:
    // 2 says the check could not be done, not that something failed it.
    assert_eq!(gnu(dir, &["-c", "nope.sums"], None).code, 1);
}

#[test]
fn check_an_invalid_gguf_is_failed_open_or_read() {
    let d = Dir::new();
    let a = small(1);
    d.write("a.gguf", &a.build());
    let msg = corrupt(&d, "bad.gguf");
    // Its label cannot be known: any label stands in.
    let list = format!("{0}  a.gguf\n{0}  bad.gguf\n", a.expected_label());
    d.write("list", list.as_bytes());
    let want_err = format!("gguf-digest: {msg}\ngguf-digest: WARNING: 1 listed file could not be read\n");
    assert_eq!(gd(d.dir.path(), &["-c", "list"]), out(1, "a.gguf: OK\nbad.gguf: FAILED open or read\n", want_err));
}

#[test]
fn check_a_shard_set_missing_a_shard_is_failed_open_or_read() {
    let d = Dir::new();
    let g = splittable(4, 1);
    write_shards(&d, "m", &g, &[2, 2]);
    std::fs::remove_file(d.path("m-00002-of-00002.gguf")).unwrap();
    d.write("list", format!("{}  m-00001-of-00002.gguf\n", g.expected_label()).as_bytes());
    let want_err = "gguf-digest: m-00001-of-00002.gguf: shard 2 of 2 is missing: m-00002-of-00002.gguf\n\
                    gguf-digest: WARNING: 1 listed file could not be read\n";
    assert_eq!(gd(d.dir.path(), &["-c", "list"]), out(1, "m-00001-of-00002.gguf: FAILED open or read\n", want_err));
}

/// sha256sum also reads BSD `--tag` lines, `SHA256 (name) = digest`; such a
/// line carries the SHA-256 of the file, never a label, so gguf-digest
/// takes it as misformatted, on purpose.
#[test]
fn check_tagged_lines_are_misformatted_on_purpose() {
    let d = Dir::new();
    let a = small(1);
    let bytes = a.build();
    d.write("a.gguf", &bytes);
    d.write("ours", format!("SHA256 (a.gguf) = {}\n", a.expected_label()).as_bytes());
    d.write("theirs", format!("SHA256 (a.gguf) = {}\n", hex(&sha(&bytes))).as_bytes());
    let none = "gguf-digest: ours: no properly formatted label lines found\n";
    assert_eq!(gd(d.dir.path(), &["-c", "ours"]), out(1, "", none));
    assert_eq!(gnu(d.dir.path(), &["-c", "theirs"], None), out(0, "a.gguf: OK\n", ""));
}

/// Both tools run with `LC_ALL=C.UTF-8`: GNU quotes by the locale (in
/// the C locale it would escape `é` too; gguf-digest does not look at the
/// locale and always writes UTF-8 as is).
fn missing_files_both<S: AsRef<OsStr>>(names: &[S]) -> (Out, Out) {
    let d = Dir::new();
    let mut theirs = Command::new("sha256sum");
    theirs.args(names).current_dir(d.dir.path()).env("LC_ALL", "C.UTF-8");
    let mut ours = gd_cmd(d.dir.path(), names);
    ours.env("LC_ALL", "C.UTF-8");
    let (theirs, ours) = (gnu_as_ours(exec(theirs, None)), exec(ours, None));
    assert_eq!((theirs.code, ours.code), (1, 2), "sha256sum exits 1, gguf-digest 2");
    (theirs, ours)
}

/// gguf-digest names a missing FILE exactly as sha256sum does, quoting
/// included.
#[test]
fn missing_files_are_named_like_sha256sum() {
    let names = ["plain", "a b", "it's", "new\nline", "tab\there", "$HOME", "a:b", "back\\slash", "#x", "x#", "é"];
    let (theirs, ours) = missing_files_both(&names);
    assert_eq!(String::from_utf8_lossy(&ours.stderr), String::from_utf8_lossy(&theirs.stderr));
    assert!(String::from_utf8_lossy(&ours.stderr).contains("gguf-digest: 'a b': No such file or directory\n"));
}

/// Names with control characters at the end or in a row, or bytes that are
/// not UTF-8: GNU keeps a run of escapes in one `$'...'` and ends without an
/// empty `''` (`'a'$'\t\t''b'`, `'a'$'\t'`), and shows bytes that are not
/// UTF-8 in octal (`''$'\377'`) where a lossy U+FFFD would hide them.
#[test]
fn control_and_non_utf8_bytes_are_quoted_like_sha256sum() {
    let names: [&[u8]; 7] = [b"a\t", b"\t", b"a\x01", b"a\t\tb", b"\xff", b"a\xfe b", b"\xff\t"];
    let names = names.map(OsStr::from_bytes);
    let (theirs, ours) = missing_files_both(&names);
    assert_eq!(String::from_utf8_lossy(&ours.stderr), String::from_utf8_lossy(&theirs.stderr));
}

// ---------------------------------------------------------------------------
// Shards, reading modes, threads
// ---------------------------------------------------------------------------

#[test]
fn no_join_labels_a_shard_alone() {
    let d = Dir::new();
    let g = splittable(5, 2);
    let shards = write_shards(&d, "m", &g, &[2, 3]);
    let (first, second) = ("m-00001-of-00002.gguf", "m-00002-of-00002.gguf");
    let line = |label: String, name: &str| format!("{label}  {name}\n");
    let dir = d.dir.path();
    assert_eq!(gd(dir, &[first]), out(0, line(g.expected_label(), first), ""));
    let alone = line(shards[0].1.expected_label(), first) + &line(shards[1].1.expected_label(), second);
    assert_eq!(gd(dir, &["--no-join", first, second]), out(0, alone, ""));
    assert_ne!(shards[0].1.expected_label(), g.expected_label());
    let later = "gguf-digest: m-00002-of-00002.gguf: this is shard 2 of 2; pass the first shard instead: \
                 m-00001-of-00002.gguf\n";
    assert_eq!(gd(dir, &[second]), out(2, "", later));
    // A merged model (split.count 0) is the same model.
    d.write("merged.gguf", &g.merged().build());
    assert_eq!(gd(dir, &["merged.gguf"]), out(0, line(g.expected_label(), "merged.gguf"), ""));
}

#[test]
fn every_shard_named_with_the_first_is_one_model() {
    // `gguf-digest *.gguf` in a folder holding a split model.
    let d = Dir::new();
    let g = splittable(6, 4);
    let shards = write_shards(&d, "m", &g, &[2, 1, 3]);
    let one = small(7);
    d.write("x.gguf", &one.build());
    let dir = d.dir.path();
    let names = ["m-00001-of-00003.gguf", "m-00002-of-00003.gguf", "m-00003-of-00003.gguf", "x.gguf"];
    let want = format!("{}  {}\n{}  x.gguf\n", g.expected_label(), names[0], one.expected_label());
    assert_eq!(gd(dir, &names), out(0, want.clone(), ""));
    // In any order: the set is listed where its first shard is.
    let shuffled = [names[3], names[2], names[0], names[1]];
    let want_shuffled = format!("{}  x.gguf\n{}  {}\n", one.expected_label(), g.expected_label(), names[0]);
    assert_eq!(gd(dir, &shuffled), out(0, want_shuffled, ""));
    // The list checks, and a later shard changed fails the set's line.
    d.write("models.sums", want.as_bytes());
    assert_eq!(gd(dir, &["-c", "models.sums"]).code, 0);
    flip_last_byte(&d.path(names[2]));
    let failed = gd(dir, &["-c", "models.sums"]);
    assert_eq!(failed.code, 1, "{failed:?}");
    assert!(text(&failed.stdout).contains(&format!("{}: FAILED", names[0])), "{failed:?}");
    d.write(names[2], &shards[2].1.build());
    // One subject per set in a statement.
    let st = gd(dir, &["statement", names[0], names[1], names[2]]);
    assert_eq!(st.code, 0, "{st:?}");
    let subjects: JsonValue = serde_json::from_slice::<JsonValue>(&st.stdout).unwrap()["subject"].clone();
    assert_eq!(subjects, json!([{"name": names[0], "digest": {"sha256": g.expected_label()}}]));
    // Not joined, every shard is its own model; named without its first
    // shard (or spelled another way), a later shard is still refused.
    let alone: String = shards.iter().map(|(n, s)| format!("{}  {n}\n", s.expected_label())).collect();
    assert_eq!(gd(dir, &["--no-join", names[0], names[1], names[2]]), out(0, alone, ""));
    for args in [&[names[1], names[2]][..], &["./m-00001-of-00003.gguf", names[1]]] {
        let o = gd(dir, args);
        assert_eq!(o.code, 2, "{args:?}: {o:?}");
        assert!(text(&o.stderr).contains("this is shard 2 of 3; pass the first shard instead"), "{o:?}");
    }
}

#[test]
fn a_file_named_like_a_shard_is_never_left_out_unseen() {
    // Whether the first shard's model holds a file is read from the files,
    // not guessed from the names.
    let d = Dir::new();
    let dir = d.dir.path();
    let line = |g: &Gguf, name: &str| format!("{}  {name}\n", g.expected_label());
    // Two models of their own (no split keys), named like a set.
    let (a, b) = (small(1), small(2));
    d.write("x-00001-of-00002.gguf", &a.build());
    d.write("x-00002-of-00002.gguf", &b.build());
    let want = line(&a, "x-00001-of-00002.gguf") + &line(&b, "x-00002-of-00002.gguf");
    assert_eq!(gd(dir, &["x-00001-of-00002.gguf", "x-00002-of-00002.gguf"]), out(0, want, ""));
    // A number past the set's count: not a file of the set.
    let g = splittable(4, 5);
    write_shards(&d, "m", &g, &[2, 2]);
    let c = small(3);
    d.write("m-00004-of-00002.gguf", &c.build());
    let want = line(&g, "m-00001-of-00002.gguf") + &line(&c, "m-00004-of-00002.gguf");
    assert_eq!(gd(dir, &["m-00001-of-00002.gguf", "m-00002-of-00002.gguf", "m-00004-of-00002.gguf"]), out(0, want, ""));
    // A later shard (split keys and all) that names the set but that the
    // set does not hold: still refused, not left out.
    let shards = g.split(&[2, 2]);
    d.write("m-00003-of-00002.gguf", &shards[1].build());
    let o = gd(dir, &["m-00001-of-00002.gguf", "m-00003-of-00002.gguf"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert_eq!(text(&o.stdout), line(&g, "m-00001-of-00002.gguf"));
    assert!(text(&o.stderr).contains("m-00003-of-00002.gguf: this is shard 3 of 2"), "{o:?}");
    // A first shard that cannot be read covers nothing: every shard says why.
    write_shards(&d, "broken", &g, &[2, 2]);
    d.write("broken-00001-of-00002.gguf", b"JUNK");
    let o = gd(dir, &["broken-00001-of-00002.gguf", "broken-00002-of-00002.gguf"]);
    assert_eq!(o.code, 2, "{o:?}");
    let err = text(&o.stderr);
    assert!(err.contains("broken-00001-of-00002.gguf: byte 0: not a GGUF file"), "{err}");
    assert!(err.contains("broken-00002-of-00002.gguf: this is shard 2 of 2"), "{err}");
    // Ahead of its first shard, a later one is left out all the same.
    let want = line(&g, "m-00001-of-00002.gguf");
    assert_eq!(gd(dir, &["m-00002-of-00002.gguf", "m-00001-of-00002.gguf"]), out(0, want, ""));
}

/// Files of every kind at once, for the tests that vary how they are read:
/// returns the arguments and a check list naming the same files.
fn mixed_set(d: &Dir) -> (Vec<String>, String) {
    let mut be = rich_model(&[0, 1, 8, 12]);
    be.big_endian = true;
    be.version = 2;
    let models = [("a.gguf", small(1)), ("rich.gguf", json_model()), ("be.gguf", be), ("b.gguf", small(2))];
    let mut list = String::new();
    for (name, g) in &models {
        d.write(name, &g.build());
        list += &format!("{}  {name}\n", g.expected_label());
    }
    let g = splittable(6, 4);
    write_shards(d, "s", &g, &[1, 3, 2]);
    list += &format!("{}  s-00001-of-00003.gguf\n{}  b.gguf\n", g.expected_label(), small(3).expected_label());
    corrupt(d, "bad.gguf");
    list += &format!("{}  bad.gguf\n{}  gone.gguf\n", g.expected_label(), g.expected_label());
    d.write("list", list.as_bytes());
    let args = ["a.gguf", "bad.gguf", "rich.gguf", "s-00001-of-00003.gguf", "gone.gguf", "be.gguf", "b.gguf", "a.gguf"];
    (args.iter().map(|s| s.to_string()).collect(), list)
}

fn with(flags: &[&str], rest: &[String]) -> Vec<String> {
    flags.iter().map(|s| s.to_string()).chain(rest.iter().cloned()).collect()
}

#[test]
fn no_mmap_gives_the_same_output() {
    let d = Dir::new();
    let (args, _) = mixed_set(&d);
    let dir = d.dir.path();
    let base = gd(dir, &args);
    assert_eq!(base.code, 2);
    assert_eq!(base.stdout.split(|&b| b == b'\n').count(), 7, "six labels: {base:?}");
    assert_eq!(gd(dir, &with(&["--no-mmap"], &args)), base);
    assert_eq!(gd(dir, &with(&["--no-mmap", "--json"], &args)), gd(dir, &with(&["--json"], &args)));
    let check = gd(dir, &["-c", "list"]);
    assert_eq!(check.code, 1);
    assert_eq!(gd(dir, &["--no-mmap", "-c", "list"]), check);
    let skel = gd(dir, &["--skeleton", "rich.gguf"]);
    assert_eq!(gd(dir, &["--no-mmap", "--skeleton", "rich.gguf"]), skel);
}

#[test]
fn thread_counts_give_the_same_output() {
    let d = Dir::new();
    let (args, _) = mixed_set(&d);
    let dir = d.dir.path();
    for extra in [&[][..], &["--json"], &["-c", "list"]] {
        let args = if extra.first() == Some(&"-c") { with(extra, &[]) } else { with(extra, &args) };
        let base = gd(dir, &args);
        assert_ne!(base.code, 0, "the set holds bad files: {base:?}");
        for j in [&["-j", "1"][..], &["-j", "2"], &["--threads", "1"], &["-j", "7"]] {
            assert_eq!(gd(dir, &with(j, &args)), base, "{j:?} {extra:?}");
        }
        let mut one = gd_cmd(dir, &args);
        one.env("RAYON_NUM_THREADS", "1");
        assert_eq!(exec(one, None), base, "RAYON_NUM_THREADS=1 {extra:?}");
    }
}

// ---------------------------------------------------------------------------
// Usage
// ---------------------------------------------------------------------------

#[test]
fn zero_threads_is_a_usage_error() {
    let d = Dir::new();
    let want = "error: invalid value '0' for '--threads <N>': at least 1 hashing thread (leave -j out to use one \
                per core)\n\nFor more information, try '--help'.\n";
    assert_eq!(gd(d.dir.path(), &["-j", "0", "m.gguf"]), out(2, "", want));
    assert_eq!(gd(d.dir.path(), &["--threads", "0", "m.gguf"]), out(2, "", want));
}

#[test]
fn more_than_1024_threads_is_a_usage_error() {
    let d = Dir::new();
    let want = "error: invalid value '1025' for '--threads <N>': at most 1024 hashing threads\n\n\
                For more information, try '--help'.\n";
    assert_eq!(gd(d.dir.path(), &["-j", "1025", "m.gguf"]), out(2, "", want));
    // A count no usize holds is the parser's own refusal, not a panic.
    let huge = gd(d.dir.path(), &["-j", "100000000000000000000000", "m.gguf"]);
    assert_eq!(huge.code, 2, "{huge:?}");
    assert!(common::text(&huge.stderr).contains("number too large to fit in target type"), "{huge:?}");
    // The subcommands' own -j, and rayon's variables, are held to it too.
    let subcommands =
        [&["inspect", "m.gguf"][..], &["diff", "m.gguf", "m.gguf"], &["statement", "m.gguf"], &["verify", "s.json"]];
    for sub in subcommands {
        let args = [&sub[..1], &["-j", "1025"], &sub[1..]].concat();
        let o = gd(d.dir.path(), &args);
        assert_eq!((o.code, text(&o.stderr).contains("at most 1024 hashing threads")), (2, true), "{args:?}: {o:?}");
    }
    d.write("m.gguf", &small(1).build());
    let with_env = |args: &[&str], var: &str, n: &str| {
        let mut c = gd_cmd(d.dir.path(), args);
        c.env_remove("RAYON_NUM_THREADS").env(var, n);
        exec(c, None)
    };
    // In rayon's order (1,024 itself, and the parsing, are unit-tested
    // beside `threads_from_env`); an explicit -j leaves them unread.
    for var in ["RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"] {
        for (n, code) in [("1025", 2), ("x", 0), ("0", 0)] {
            let o = with_env(&["m.gguf"], var, n);
            assert_eq!(o.code, code, "{var}={n}: {o:?}");
            if code == 2 {
                assert_eq!(text(&o.stderr), format!("gguf-digest: {var}=1025: at most 1024 hashing threads\n"));
            }
        }
        for args in [&["-j", "2", "m.gguf"][..], &["inspect", "-j", "2", "m.gguf"], &["statement", "-j", "2", "m.gguf"]]
        {
            assert_eq!(with_env(args, var, "5000").code, 0, "{args:?} {var}=5000");
        }
    }
}

#[test]
fn help_and_version() {
    let d = Dir::new();
    let help = gd(d.dir.path(), &["--help"]);
    assert_eq!((help.code, help.stderr.as_slice()), (0, &b""[..]));
    let text = String::from_utf8(help.stdout).unwrap();
    for needle in ["Examples:", "gguf-digest -c models.sums", "Exit status:", "--check", "--skeleton", "--no-join"] {
        assert!(text.contains(needle), "--help lacks {needle:?}:\n{text}");
    }
    // Standard input, the Ollama store's variable, and that verify checks
    // a signature before it opens a subject.
    for needle in ["'-' for standard input", "(none: standard input", "OLLAMA_MODELS", "signature of a DSSE envelope"] {
        assert!(text.contains(needle), "--help lacks {needle:?}:\n{text}");
    }
    assert_eq!(gd(d.dir.path(), &["-h"]).code, 0);
    assert_eq!(gd(d.dir.path(), &["--version"]), out(0, "gguf-digest 0.1.0\n", ""));
    assert_eq!(gd(d.dir.path(), &["-V"]), out(0, "gguf-digest 0.1.0\n", ""));
}

#[test]
fn check_flags_without_check_are_usage_errors() {
    let d = Dir::new();
    for (flag, name) in [
        ("--quiet", "--quiet"),
        ("--status", "--status"),
        ("--warn", "--warn"),
        ("-w", "--warn"),
        ("--strict", "--strict"),
        ("--ignore-missing", "--ignore-missing"),
    ] {
        let want = format!(
            "error: the following required arguments were not provided:\n  --check\n\n\
             Usage: gguf-digest --check {name} <FILE>...\n\nFor more information, try '--help'.\n"
        );
        assert_eq!(gd(d.dir.path(), &[flag, "m.gguf"]), out(2, "", want), "{flag}");
    }
}

#[test]
fn conflicting_modes_are_usage_errors() {
    let d = Dir::new();
    // clap names the flags in the order given.
    for (args, a, b) in [
        (["--json", "--check"], "--json", "--check"),
        (["--check", "--json"], "--check", "--json"),
        (["--skeleton", "-c"], "--skeleton", "--check"),
        (["--json", "--skeleton"], "--json", "--skeleton"),
    ] {
        let want = format!(
            "error: the argument '{a}' cannot be used with '{b}'\n\n\
             Usage: gguf-digest {a} <FILE>...\n\nFor more information, try '--help'.\n"
        );
        assert_eq!(gd(d.dir.path(), &[args[0], args[1], "m.gguf"]), out(2, "", want), "{args:?}");
    }
}
