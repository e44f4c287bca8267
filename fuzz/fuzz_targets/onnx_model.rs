//! Fuzz target: the ONNX model reader through real files (docs/SPEC.md
//! Part VI, X2 to X6): the wire reader, the tensor checks, the external
//! data naming rules and ranges, the work bound and the label.
//!
//! The input is a model file, or, when it starts with `EXT\0` and a
//! little-endian u32 `n`, a model file of the next `n` bytes and an
//! external data file of the rest. They are written under /dev/shm (or the
//! temp dir) as `m/model.onnx` and `m/w.bin`, beside `m/sub/w.bin` (the same
//! bytes), a link `m/link.bin` to `w.bin` (inside: followed), and two links
//! leading out of `m/`: `m/out.bin` to `../secret.bin` and `m/up` to `..`.
//! A model naming any of them is opened with `onnx::Model::from_source` in
//! both read modes and, when opened, labelled.
//!
//! Oracles: no panic; both read modes agree (same Ok/Err, same label); a
//! model the in-memory parser refuses never opens; an opened model labels
//! (nothing changes its files while it is hashed); an opened model names
//! only plain relative locations, none through `out.bin` or `up` (the
//! links out of its directory), and reads no more external files than it
//! names.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gguf_digest_core::format::OpenOptions;
use gguf_digest_core::source::{ReadMode, Source};
use gguf_digest_formats::onnx::Model;
use gguf_digest_formats::onnx::tensor::is_plain_relative;
use libfuzzer_sys::fuzz_target;

/// The model's directory, private to this process (tmpfs when there is
/// one), with its fixed links made once.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
        let top = base.join(format!("gguf-digest-fuzz-{}", std::process::id()));
        let m = top.join("m");
        std::fs::create_dir_all(m.join("sub")).expect("fuzz scratch dir");
        std::fs::write(top.join("secret.bin"), [0x5a; 4096]).expect("the file outside");
        std::os::unix::fs::symlink("w.bin", m.join("link.bin")).expect("a link inside");
        std::os::unix::fs::symlink("../secret.bin", m.join("out.bin")).expect("a link out");
        std::os::unix::fs::symlink("..", m.join("up")).expect("a directory link out");
        m
    })
}

fn label(path: &Path, read_mode: ReadMode) -> Option<(String, Vec<Vec<u8>>)> {
    let source = Source::open(path, read_mode).expect("the model file opens");
    let opts = OpenOptions { read_mode, ..OpenOptions::default() };
    let m = Model::from_source(source, opts).ok()?;
    assert!(m.externals().len() == m.locations().len(), "an external file without its location");
    match gguf_digest_core::schedule::digest(&m, &opts.pieces) {
        Ok(d) => Some((d.label(), m.locations().to_vec())),
        Err(e) => panic!("opened but did not label: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let d = dir();
    let (model, external) = match data.strip_prefix(b"EXT\0") {
        Some(rest) => {
            let Some((n, rest)) = rest.split_first_chunk::<4>() else { return };
            let n = (u32::from_le_bytes(*n) as usize).min(rest.len());
            rest.split_at(n)
        }
        None => (data, &[][..]),
    };
    let p = d.join("model.onnx");
    std::fs::write(&p, model).unwrap();
    std::fs::write(d.join("w.bin"), external).unwrap();
    std::fs::write(d.join("sub/w.bin"), external).unwrap();
    let a = label(&p, ReadMode::Mmap);
    let b = label(&p, ReadMode::Pread);
    assert_eq!(a, b, "the read modes disagree");
    let parsed = gguf_digest_formats::onnx::parse(model);
    if let Some((_, locations)) = &a {
        assert!(parsed.is_ok(), "a model the in-memory parser refuses was opened");
        for loc in locations {
            assert!(is_plain_relative(loc), "an external location that is not plain: {loc:?}");
            assert!(
                !loc.starts_with(b"out.bin") && !loc.starts_with(b"up/"),
                "an external location through a link out of the model's directory: {loc:?}"
            );
        }
    }
    if let Err(e) = parsed {
        assert!(!e.detail().is_empty(), "an error without a message");
    }
});
