//! Bounded resources (issue #23, items 5 and 6): what the command holds in
//! memory grows with a model's metadata by a small factor, never with a
//! tree of its whole JSON document; a `--check` list is read a line at a
//! time, never whole. Memory is bounded with `ulimit -d` (RLIMIT_DATA) and
//! an endless input with a timeout guard, never a measured time: the
//! numbers themselves are bench/memory.sh's (docs/BENCHMARKS.md).

mod common;

use std::process::{Command, Stdio};

use common::{Dir, gguf_digest_bin};

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
    let label = [vec!["-j2", p], vec!["-j2", "--json", p], vec!["statement", "-j2", "--leaves", p]];
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
