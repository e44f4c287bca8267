//! Bounded resources (issue #23, items 5 and 6): what the command holds in
//! memory grows with a model's metadata by a small factor, never with a
//! tree of its whole JSON document; a `--check` list is read a line at a
//! time, never whole. Memory is bounded with `ulimit -d` (RLIMIT_DATA) and
//! an endless input with a timeout guard, never a measured time: the
//! numbers themselves are bench/memory.sh's (docs/BENCHMARKS.md).

use crate::common;

use std::process::{Command, Stdio};

use common::ollama::{MODEL, Store, TEMPLATE, TENSOR};
use common::st::{St, StTensor};
use common::{Dir, gguf_digest_bin, rich_model};

/// A GGUF of `n` tensor infos of one F32 each (43 bytes of metadata a
/// tensor, as bench/memory.py writes it); returns it and its metadata size.
fn many_tensors(n: u64) -> (Vec<u8>, usize) {
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&n.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes());
    let key = b"general.architecture";
    b.extend_from_slice(&(key.len() as u64).to_le_bytes());
    b.extend_from_slice(key);
    b.extend_from_slice(&8u32.to_le_bytes());
    b.extend_from_slice(&5u64.to_le_bytes());
    b.extend_from_slice(b"llama");
    for i in 0..n {
        let name = format!("blk.{i:07}");
        b.extend_from_slice(&(name.len() as u64).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&1u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(i * 32).to_le_bytes());
    }
    let metadata = b.len();
    b.resize(metadata.next_multiple_of(32), 0);
    for _ in 0..n {
        b.extend_from_slice(&1.0f32.to_le_bytes());
        b.extend_from_slice(&[0; 28]);
    }
    (b, metadata)
}

#[test]
fn every_streamed_document_is_the_bytes_serde_json_prints() {
    // The documents are written a value at a time; parsed and printed again
    // by serde_json (keys in their order), each must come back byte for
    // byte: GGUF (names that are not UTF-8 included), safetensors (one file,
    // shards through an index, metadata), Ollama (GGUF weights, tensor
    // blobs), an error entry, and statements with leaves.
    let d = Dir::new();
    let g = rich_model(&[0, 1, 8, 30]).tensor(common::Tensor::filled("bad\u{1}\u{202e}", &[3], 0, 9));
    let mut g = g;
    g.tensors[0].name = b"not utf-8 \xff".to_vec();
    let gguf = d.write("m.gguf", &g.build());
    let st = St::new()
        .meta("format", "pt")
        .meta("quote\"", "back\\slash")
        .tensor(StTensor::filled("a", "F32", &[2, 3], 1))
        .tensor(StTensor::filled("\u{e9}\u{202e}", "BF16", &[4], 2));
    let one = d.write("m.safetensors", &st.build());
    let (files, index) = st.sharded("s", &[1, 1]);
    for (name, bytes) in &files {
        d.write(name, bytes);
    }
    let index = d.write("s.safetensors.index.json", index.as_bytes());
    let store = Store::new(&d.path("store"));
    let weights = store.blob(MODEL, &g.build());
    store.manifest("gg", &store.config(""), &[weights, store.blob(TEMPLATE, b"{{ .Prompt }}")]);
    let blobs: Vec<_> = (0..3u8)
        .map(|i| {
            let t = St::new().tensor(StTensor::filled(&format!("t{i}"), "F16", &[2], i));
            store.named(TENSOR, &t.build(), &format!("t{i}"))
        })
        .collect();
    store.manifest("st", &store.config(""), &blobs);
    let [gguf, one, index] = [&gguf, &one, &index].map(|p| p.to_str().expect("UTF-8 path").to_string());
    let missing = d.path("missing.gguf").to_str().expect("UTF-8 path").to_string();
    // (arguments, entries in the document, whether a name is not UTF-8)
    for (args, models, hex) in [
        (vec!["--json", &gguf, &one, &index, "ollama:gg", "ollama:st", &missing], 6, true),
        (vec!["--json", "--no-join", &index], 1, false),
        // Subjects named relative to `/`: a statement refuses absolute names.
        (vec!["statement", "--root", "/", "--leaves", &gguf, &one, &index, "ollama:gg", "ollama:st"], 5, true),
        (vec!["statement", "--root", "/", &gguf, "ollama:gg"], 2, false),
    ] {
        let out = Command::new(gguf_digest_bin()).args(&args).env("OLLAMA_MODELS", &store.root).output().expect("runs");
        assert!(!out.stdout.is_empty(), "{args:?}: {}", common::text(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
        let again = serde_json::to_string_pretty(&doc).expect("prints") + "\n";
        assert_eq!(common::text(&out.stdout), again, "{args:?}");
        let entries = doc.get("files").or_else(|| doc.pointer("/predicate/models")).and_then(|v| v.as_array());
        assert_eq!(entries.map(Vec::len), Some(models), "{args:?}");
        assert_eq!(again.contains("\"name_hex\""), hex, "{args:?}");
    }
}

/// Runs the command with its data segment (heap and private mappings)
/// limited to `kib` KiB: whether it succeeded, the bytes it wrote (counted,
/// not kept), their last 64 and its stderr.
fn run_limited(kib: usize, args: &[&str]) -> (bool, usize, String, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -d {kib} && exec \"$0\" \"$@\""))
        .arg(gguf_digest_bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut stdout = child.stdout.take().expect("piped");
    let mut tail = Vec::new();
    let mut count = 0usize;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = std::io::Read::read(&mut stdout, &mut buf).expect("reads stdout");
        if n == 0 {
            break;
        }
        count += n;
        tail.extend_from_slice(&buf[..n]);
        let keep = tail.len().saturating_sub(64);
        tail.drain(..keep);
    }
    let out = child.wait_with_output().expect("waits");
    (out.status.success(), count, common::text(&tail), common::text(&out.stderr))
}

#[test]
fn json_and_leaves_of_a_hundred_thousand_tensors_hold_no_tree_of_them() {
    // 4.3 MB of metadata. Before the JSON was written as it was made, the
    // label needed a data segment of ~70 MiB here, --json and statement
    // --leaves ~600 MiB (a serde_json tree of every tensor); now each
    // needs ~22 MiB (mostly the process itself). 48 MiB sits between.
    let (file, metadata) = many_tensors(100_000);
    assert_eq!(metadata, 4_300_069);
    let d = Dir::new();
    let p = d.write("many.gguf", &file);
    let p = p.to_str().expect("UTF-8 path");
    let label = [vec!["-j2", p], vec!["-j2", "--json", p], vec!["statement", "-j2", "--root", "/", "--leaves", p]];
    // The whole document comes out: its last tensor, then every level closed.
    let ends = [
        "many.gguf\n",
        "\"\n        }\n      ]\n    }\n  ]\n}\n",
        "\"\n            }\n          ]\n        }\n      }\n    ]\n  }\n}\n",
    ];
    for (args, end) in label.iter().zip(ends) {
        let (ok, bytes, tail, stderr) = run_limited(48 << 10, args);
        assert!(ok, "{args:?} within 48 MiB: {stderr}");
        assert!(tail.ends_with(end), "{args:?}: {tail:?}");
        // Every tensor is in the document (a record is ~300 bytes).
        assert!(args.len() == 2 || bytes > 100_000 * 250, "{args:?}: {bytes} bytes");
    }
}

/// Waits for `child` (its output read meanwhile), killing it (and
/// failing) if it has not ended within `guard`: a guard against a hang, not
/// a measure of time.
fn wait_guarded(mut child: std::process::Child, guard: std::time::Duration) -> std::process::Output {
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("polls the child") {
            break status;
        }
        if start.elapsed() > guard {
            let _ = child.kill();
            panic!("still running after {guard:?}: it reads without end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().expect("stdout read"), stderr.join().expect("stderr read"));
    std::process::Output { status, stdout, stderr }
}

/// `gguf-digest -c ARGS` with its data segment limited to 48 MiB (a list
/// read whole would fail for memory), `stdin` fed to it.
fn check_limited(args: &[&str], stdin: Option<Vec<u8>>) -> std::process::Output {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -d 49152 && exec \"$0\" \"$@\"")
        .arg(gguf_digest_bin())
        .arg("-c")
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("piped");
        // The command stops reading at the long line: a closed pipe is expected.
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut pipe, &bytes);
        });
    }
    wait_guarded(child, std::time::Duration::from_secs(120))
}

const LABEL: &str = "29c4cfb0a1382984c7b014137762148477071455cea7b047cddf205df62f9af1";

#[test]
fn a_check_list_without_newlines_is_refused_at_its_first_line() {
    // 10 MiB of zero bytes, no newline: read whole before, now refused once
    // its first line passes 64 KiB.
    let d = Dir::new();
    let zeros = d.write("zeros", &vec![0u8; 10 << 20]);
    let out = check_limited(&[zeros.to_str().expect("UTF-8 path")], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let want =
        format!("gguf-digest: {}: 1: line longer than 65536 bytes (the most a label line may hold)\n", zeros.display());
    assert_eq!(common::text(&out.stderr), want);
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn check_of_dev_zero_ends_with_the_line_error() {
    // Endless: before, the read grew until memory ran out (here, the 48
    // MiB limit: an abort); the guard only keeps a regression from hanging.
    let out = check_limited(&["/dev/zero"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        common::text(&out.stderr),
        "gguf-digest: /dev/zero: 1: line longer than 65536 bytes (the most a label line may hold)\n"
    );
}

#[test]
fn a_long_line_on_standard_input_is_named_by_its_number() {
    // Two good-looking lines, an empty one, then a line of 100 KiB.
    let mut list = format!("{LABEL}  a.gguf\n# comment\n\n").into_bytes();
    list.extend(std::iter::repeat_n(b'x', 100 << 10));
    list.extend_from_slice(format!("\n{LABEL}  b.gguf\n").as_bytes());
    for args in [vec!["-"], vec![]] {
        let out = check_limited(&args, Some(list.clone()));
        assert_eq!(out.status.code(), Some(2), "{args:?} {out:?}");
        assert_eq!(
            common::text(&out.stderr),
            "gguf-digest: 'standard input': 4: line longer than 65536 bytes (the most a label line may hold)\n"
        );
        // Nothing was verified: the list is refused before any file is read.
        assert!(out.stdout.is_empty(), "{out:?}");
    }
}

#[test]
fn a_line_of_the_longest_length_is_read() {
    // A name that makes the line exactly 65,536 bytes is an entry like any
    // other (here, of a file that does not exist).
    let name = "n".repeat(65536 - 66);
    let d = Dir::new();
    let list = d.write("list", format!("{LABEL}  {name}\n").as_bytes());
    let out = check_limited(&[list.to_str().expect("UTF-8 path")], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(common::text(&out.stdout).ends_with(": FAILED open or read\n"), "{out:?}");
    assert!(common::text(&out.stderr).contains("File name too long"), "{out:?}");
}

/// Peak resident memory (KiB) of `gguf-digest ARGS`, read by GNU time
/// (`/usr/bin/time -f %M`, Debian's `time`; .ci/run installs it): the
/// child's own getrusage, whatever else the test binary runs.
fn peak_rss_kib(args: &[&str], d: &Dir) -> u64 {
    let report = d.path("time.out");
    let status = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(gguf_digest_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("/usr/bin/time runs (Debian's time)");
    // 1: every listed file is missing.
    assert_eq!(status.code(), Some(1), "{status:?}");
    let text = std::fs::read_to_string(&report).expect("time's report");
    text.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("time said {text:?}"))
}

/// Issue #31, item 11: `-c` verifies a list a window of lines at a time, so
/// its memory does not grow with the list. 5·10⁵ lines naming missing files
/// held 160 MB (every line's entry and result kept to the end; 2·10⁶, 540
/// MB: docs/BENCHMARKS.md); a window holds a few MB whatever the list's
/// length (14 MB in all, a debug build). The bound leaves room for the
/// binary and the pool, far below the old peak; the count of lines keeps
/// a debug build's run under a minute.
#[test]
fn check_memory_does_not_grow_with_the_list() {
    let d = Dir::new();
    let mut list = Vec::with_capacity(500_000 * 80);
    for i in 0..500_000u32 {
        list.extend_from_slice(format!("{LABEL}  missing/{i:07}.gguf\n").as_bytes());
    }
    let list = d.write("list.sums", &list);
    let kib = peak_rss_kib(&["-c", list.to_str().expect("UTF-8 path")], &d);
    assert!(kib < 32 << 10, "peak RSS {kib} KiB for 5·10⁵ lines (a window's worth is a few MB)");
}
