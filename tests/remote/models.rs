//! The models every server test serves, written byte by byte, and labels
//! of files and URLs through the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::onnx::{int, s, value_info};
use crate::common::pt::{Layout, PtTensor, StateDict};
use crate::common::st::{St, StTensor};
use crate::common::{Dir, Gguf, Tensor, gguf_digest_bin, text};

/// Name and bytes of each model kind: GGUF (tensors of several MiB, so a
/// job's range spans parts and a cut connection falls inside one),
/// safetensors, a PyTorch zip, an ONNX file.
pub fn models() -> Vec<(&'static str, Vec<u8>)> {
    let gguf = Gguf::new()
        .tensor(Tensor::filled("big", &[3 << 20], 0, 1))
        .tensor(Tensor::filled("small", &[64, 3], 1, 2))
        .tensor(Tensor::filled("big2", &[1 << 20, 5], 0, 3));
    let st =
        St::new().tensor(StTensor::filled("w", "F32", &[512, 300], 4)).tensor(StTensor::filled("b", "BF16", &[77], 5));
    let pt = StateDict::new()
        .tensor("w", PtTensor::filled("F32", &[64, 64], 6))
        .tensor("b", PtTensor::filled("I64", &[9], 7));
    vec![
        ("m.gguf", gguf.build()),
        ("m.safetensors", st.build()),
        ("m.pt", pt.build(&Layout::default())),
        ("m.onnx", onnx_model()),
    ]
}

/// SPEC X10's worked example (`Identity`, initializer `w` F32 [2]), its
/// data inline.
pub fn onnx_model() -> Vec<u8> {
    onnx_with(&s(9, &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]))
}

/// The same model with its data in `w.bin` beside it (external data).
pub fn onnx_external() -> Vec<u8> {
    let mut data = s(13, &[s(1, b"location"), s(2, b"w.bin")].concat());
    data.extend(int(14, 1));
    onnx_with(&data)
}

fn onnx_with(data: &[u8]) -> Vec<u8> {
    let tensor = [int(1, 2), int(2, 1), s(8, b"w"), data.to_vec()].concat();
    let node = [s(1, b"x"), s(2, b"y"), s(4, b"Identity")].concat();
    let graph = [s(1, &node), s(2, b"g"), s(5, &tensor), s(11, &value_info("x")), s(12, &value_info("y"))].concat();
    [int(1, 8), s(7, &graph), s(8, &[s(1, b""), int(2, 13)].concat())].concat()
}

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> Output {
    std::process::Command::new(gguf_digest_bin()).args(args).output().expect("runs gguf-digest")
}

/// The label the binary prints for `arg` (with `flags` before it).
pub fn label(flags: &[&str], arg: &str) -> String {
    let mut all = flags.to_vec();
    all.push(arg);
    let out = run(&all);
    assert!(out.status.success(), "gguf-digest {all:?}: {}{}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout).split_whitespace().next().unwrap_or_default().to_string()
}

/// The label of the file at `path`.
pub fn file_label(path: &Path) -> String {
    label(&[], path.to_str().unwrap())
}

/// What each bucket service's test uploads: every model of [`models`] under
/// `one/`, and under `tree/` a directory of two models beside a config; with
/// the local folders holding the same bytes.
pub struct Uploads {
    /// The models, one file each.
    pub one: Dir,
    /// The directory labelled whole.
    pub tree: Dir,
    /// (object name, local file) pairs to upload.
    pub files: Vec<(String, PathBuf)>,
}

/// The files of [`Uploads`], written.
pub fn uploads() -> Uploads {
    let one = Dir::new();
    let mut files = Vec::new();
    for (name, bytes) in models() {
        let path = one.write(name, &bytes);
        files.push((format!("one/{name}"), path));
    }
    let tree = Dir::new();
    let (gguf, st) = (&models()[0].1, &models()[1].1);
    for (rel, bytes) in [("a.gguf", gguf), ("sub/b.safetensors", st), ("config.json", &b"{\"a\": 1}".to_vec())] {
        std::fs::create_dir_all(tree.path(rel).parent().unwrap()).unwrap();
        std::fs::write(tree.path(rel), bytes).unwrap();
        files.push((format!("tree/{rel}"), tree.path(rel)));
    }
    Uploads { one, tree, files }
}

/// The label `c` prints for `url` (which must succeed).
pub fn label_of(mut c: Command, url: &str) -> String {
    let out = c.arg(url).output().unwrap();
    assert!(out.status.success(), "{url}: {}", text(&out.stderr));
    text(&out.stdout).split_whitespace().next().unwrap().to_string()
}

/// Every model of `up` under `{base}one/` and the prefix `{base}tree/` have
/// the labels of the same bytes on disk; a missing object is an error
/// naming its URL and never printing `secret`.
pub fn assert_labels_as_on_disk(up: &Uploads, base: &str, secret: Option<&str>, cmd: impl Fn() -> Command) {
    for (name, _) in models() {
        let url = format!("{base}one/{name}");
        assert_eq!(label_of(cmd(), &url), file_label(&up.one.path(name)), "{name}");
    }
    assert_eq!(label_of(cmd(), &format!("{base}tree/")), file_label(&up.tree.path("")));
    let missing = format!("{base}one/none.gguf");
    let out = cmd().arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&missing), "{err}");
    if let Some(secret) = secret {
        assert!(!err.contains(secret), "{err}");
    }
}
