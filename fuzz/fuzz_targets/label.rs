//! Fuzz target: the whole labelling path through real files.
//!
//! The input is written to a file under /dev/shm (or the temp dir) and
//! labelled with `Model::open_with` + `digest` in both read modes (map and
//! pread). An input that starts with `SHRD` + a little-endian u32 `n` is two
//! shards instead: the next `n` bytes are written as `f-00001-of-00002.gguf`
//! and the rest as `f-00002-of-00002.gguf`, and the set is opened joined, so
//! that shard joining is fuzzed too.
//!
//! Oracles: no panic; both read modes agree (same Ok/Err, same label); a file
//! the in-memory parser accepts opens, and an opened file labels (nothing
//! changes it while it is hashed).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use gguf_digest::gguf::Model;
use gguf_digest::{OpenOptions, ReadMode};
use libfuzzer_sys::fuzz_target;

/// A directory private to this process: tmpfs when there is one.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base =
            if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let d = base.join(format!("gguf-digest-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("fuzz scratch dir");
        d
    })
}

fn label(path: &std::path::Path, join_shards: bool, read_mode: ReadMode) -> Option<String> {
    let m = Model::open_with(path, OpenOptions { join_shards, read_mode, ..OpenOptions::default() }).ok()?;
    match m.digest() {
        Ok(d) => Some(d.label()),
        Err(e) => panic!("opened but did not label: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let d = dir();
    if let Some(rest) = data.strip_prefix(b"SHRD") {
        let Some((n, rest)) = rest.split_first_chunk::<4>() else { return };
        let n = (u32::from_le_bytes(*n) as usize).min(rest.len());
        let (first, second) = rest.split_at(n);
        let p1 = d.join("f-00001-of-00002.gguf");
        std::fs::write(&p1, first).unwrap();
        std::fs::write(d.join("f-00002-of-00002.gguf"), second).unwrap();
        let a = label(&p1, true, ReadMode::Mmap);
        let b = label(&p1, true, ReadMode::Pread);
        assert_eq!(a, b, "the read modes disagree on a shard set");
        return;
    }
    let p = d.join("m.gguf");
    std::fs::write(&p, data).unwrap();
    let a = label(&p, false, ReadMode::Mmap);
    let b = label(&p, false, ReadMode::Pread);
    assert_eq!(a, b, "the read modes disagree");
    assert_eq!(a.is_some(), gguf_digest::gguf::parse(data).is_ok(), "file and memory parses disagree");
    // The default open joins shards when split.count > 1; no sibling exists here.
    let _ = label(&p, true, ReadMode::Mmap);
});
