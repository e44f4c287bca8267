//! Interop tests for the ONNX label (issue #35, docs/SPEC.md Part VI): the
//! real binary against models the real `onnx` package (1.22.0) writes and
//! against the blind oracle `scripts/interop/onnx_oracle.py`, written from
//! SPEC Part VI alone (it reads the wire itself; it shares no code with the
//! crate).
//!
//! `scripts/interop/onnx_cases.py` writes, for the models onnx_check.py
//! builds with `onnx.helper`, the six ONNX models of `silero-vad` 6.2.3's
//! pinned wheel (downloaded with the PyTorch fixtures by
//! scripts/setup-python.sh, read from the zip), the seventeen ONNX models
//! of five more pinned wheels (`openwakeword` 0.5.1, `nudenet` 3.4.2,
//! `basic-pitch` 0.4.0, `rapidocr-onnxruntime` 1.4.4, and `onnxruntime`
//! 1.20.1's own test models, `mul_1.onnx` among them) and every K-th backend
//! test model of the onnx wheel, each model's variants (as loaded, every tensor in
//! `raw_data`, in its typed field, initializers and metadata reordered,
//! `onnx.save_model(save_as_external_data=True)` in one file and one file per
//! tensor at size thresholds 0 and 1024) and mutations (one element, an
//! attribute, a node's input, an opset version, a metadata value), and the
//! refusals and crafted encodings of onnx_check.py, with the oracle's
//! verdict on each. Here:
//!
//! * every file: the binary's label is the oracle's, or both refuse it
//!   (the binary with exit 2);
//! * every variant of a model has one label (so where the bytes lie is not
//!   content), and every mutation gives another;
//! * `--no-mmap` and `--check` of a sums list agree on every variant with
//!   external data;
//! * `mul_1.onnx`, which `onnx.checker` refuses, is labelled (SPEC X1).
//!
//! And `torch.onnx.export` by a real PyTorch (`scripts/interop/onnx_torch.py`):
//! one small module exported twice, each with its external data laid out
//! three ways by onnx, all one label, the oracle's.
//!
//! K is `GGUF_DIGEST_ONNX_STRIDE` (default 10: 192 of the 1,914 backend
//! models, under three minutes on two busy cores; 1 takes all, about 15
//! minutes). A missing venv or wheel prints one `SKIPPED: <why>` line and
//! the test passes without checking anything, except under `CI=true`,
//! where it fails.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::gguf_digest_bin;
use common::py::prerequisites;
use serde_json::Value as Json;

const WHAT: &str = "the ONNX interop tests (tests/interop/onnx.rs)";

/// One file onnx_cases.py wrote.
struct Case {
    path: PathBuf,
    case: String,
    group: String,
    oracle: Option<String>,
    refusal: Option<String>,
}

fn cases(v: &Json) -> Vec<Case> {
    let files = v["files"].as_array().expect("onnx_cases.py printed files");
    files
        .iter()
        .map(|f| Case {
            path: PathBuf::from(f["path"].as_str().expect("a path")),
            case: f["case"].as_str().expect("a case").to_string(),
            group: f["group"].as_str().expect("a group").to_string(),
            oracle: f["label"].as_str().map(str::to_string),
            refusal: f["refusal"].as_str().map(str::to_string),
        })
        .collect()
}

/// The binary's labels of `paths`, in one run each batch; `extra` flags first.
fn labels(paths: &[&PathBuf], extra: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for batch in paths.chunks(200) {
        let mut args: Vec<OsString> = extra.iter().map(OsString::from).collect();
        args.extend(batch.iter().map(|p| p.as_os_str().to_os_string()));
        let o = Command::new(gguf_digest_bin()).args(&args).stdin(Stdio::null()).output().expect("runs gguf-digest");
        assert!(o.status.success(), "gguf-digest {extra:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).expect("UTF-8 output");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), batch.len(), "{text}");
        for (line, p) in lines.iter().zip(batch) {
            let want_tail = format!("  {}", p.display());
            let label = line.strip_suffix(&want_tail).unwrap_or_else(|| panic!("{line}: not about {}", p.display()));
            out.push(label.to_string());
        }
    }
    out
}

#[test]
fn onnx_labels_agree_with_the_blind_oracle_across_encodings_and_change_with_content() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempfile::Builder::new().prefix("gguf-digest-onnx-interop-").tempdir().expect("a temporary directory");
    let stride = std::env::var("GGUF_DIGEST_ONNX_STRIDE").unwrap_or_else(|_| "10".to_string());
    let v = py.run("onnx_cases.py", &[dir.path().as_os_str(), "--stride".as_ref(), stride.as_ref()]);
    let all = cases(&v);
    assert!(v["models"].as_u64().unwrap_or(0) > 11, "{}", v["models"]);
    assert!(all.iter().any(|c| c.case.starts_with("silero/")), "no silero-vad model");
    // The models of the pinned PyPI wheels (ONNX_WHEELS), each in every
    // variant and mutation below, like the others.
    for (prefix, n) in
        [("openwakeword/", 9), ("nudenet/", 1), ("basic_pitch/", 1), ("rapidocr_onnxruntime/", 3), ("onnxruntime/", 3)]
    {
        let models: std::collections::BTreeSet<&str> =
            all.iter().filter(|c| c.case.starts_with(prefix)).map(|c| c.case.as_str()).collect();
        assert_eq!(models.len(), n, "{prefix}: {models:?}");
    }
    // onnxruntime's mul_1.onnx (IR 3): onnx.checker refuses it (an
    // initializer that is no graph input, an IR 3 rule), the contract labels
    // it (SPEC X1: the label does not run the checker's rules).
    let mul = &v["checker"]["onnxruntime/mul_1.onnx"];
    assert!(mul.as_str().is_some_and(|c| c != "ok"), "onnx.checker on mul_1.onnx: {mul}");
    assert!(
        all.iter().any(|c| c.case == "onnxruntime/mul_1.onnx" && c.group == "same" && c.oracle.is_some()),
        "mul_1.onnx is not labelled"
    );

    // Every file the oracle labels, labelled alike by the binary.
    let labelled: Vec<&Case> = all.iter().filter(|c| c.oracle.is_some()).collect();
    let paths: Vec<&PathBuf> = labelled.iter().map(|c| &c.path).collect();
    let got = labels(&paths, &[]);
    let mut wrong = Vec::new();
    let mut by_path = BTreeMap::new();
    for (c, g) in labelled.iter().zip(&got) {
        if c.oracle.as_deref() != Some(g.as_str()) {
            wrong.push(format!(
                "  {} ({}, {}): oracle {:?}, gguf-digest {g}",
                c.path.display(),
                c.case,
                c.group,
                c.oracle
            ));
        }
        by_path.insert(&c.path, g.clone());
    }
    assert!(
        wrong.is_empty(),
        "{} of {} labels differ from the oracle's:\n{}",
        wrong.len(),
        got.len(),
        wrong.join("\n")
    );

    // Every file the oracle refuses, refused by the binary (exit 2).
    let refused: Vec<&Case> = all.iter().filter(|c| c.refusal.is_some()).collect();
    assert!(refused.len() >= 25, "{} refusals", refused.len());
    for c in &refused {
        let o = Command::new(gguf_digest_bin()).arg(&c.path).stdin(Stdio::null()).output().expect("runs gguf-digest");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}: the oracle refuses ({:?}), gguf-digest: {err}",
            c.path.display(),
            c.refusal
        );
        assert!(o.stdout.is_empty() && err.contains("byte "), "{}: {err}", c.path.display());
    }

    // One label per model across its variants; another for each mutation.
    let mut same: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for c in labelled.iter().filter(|c| c.group == "same") {
        same.entry(&c.case).or_default().push(&by_path[&c.path]);
    }
    for (case, ls) in &same {
        assert!(ls.iter().all(|l| l == &ls[0]), "{case}: variants differ: {ls:?}");
        assert!(ls.len() >= 5, "{case}: {} variants", ls.len());
    }
    let mut mutations = 0;
    for c in labelled.iter().filter(|c| c.group.starts_with("mut:")) {
        let base = same.get(c.case.as_str()).map(|ls| ls[0]).expect("the mutated model's label");
        assert_ne!(&by_path[&c.path], base, "{} {}: the label did not change", c.case, c.group);
        mutations += 1;
    }
    assert!(mutations > same.len(), "{mutations} mutations for {} models", same.len());

    // With external data: --no-mmap and --check agree.
    let ext: Vec<&PathBuf> =
        labelled.iter().filter(|c| c.path.to_string_lossy().contains("/ext_")).map(|c| &c.path).collect();
    assert!(!ext.is_empty());
    let pread = labels(&ext, &["--no-mmap"]);
    let sums: String = ext.iter().zip(&pread).map(|(p, l)| format!("{l}  {}\n", p.display())).collect();
    for (p, l) in ext.iter().zip(&pread) {
        assert_eq!(&by_path[p], l, "{}: --no-mmap", p.display());
    }
    let list = dir.path().join("sums.txt");
    std::fs::write(&list, sums).expect("writes the list");
    let o = Command::new(gguf_digest_bin()).arg("--check").arg(&list).output().expect("runs --check");
    assert!(
        o.status.success(),
        "--check: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `torch.onnx.export` of a small module by a real PyTorch (Debian's
/// python3-torch), twice in two processes, each saved again by onnx with
/// its external data in one file, one file per tensor and above a
/// threshold (`scripts/interop/onnx_torch.py`): every file's label is the
/// blind oracle's, and all of them are one label.
#[test]
fn torch_onnx_export_with_external_data_agrees_with_the_oracle_and_is_one_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempfile::Builder::new().prefix("gguf-digest-onnx-torch-").tempdir().expect("a temporary directory");
    let v = py.run("onnx_torch.py", &[dir.path()]);
    let files = v["files"].as_array().expect("onnx_torch.py printed files");
    assert_eq!(files.len(), 8, "{v}");
    let paths: Vec<PathBuf> = files.iter().map(|f| PathBuf::from(f["path"].as_str().expect("a path"))).collect();
    let got = labels(&paths.iter().collect::<Vec<_>>(), &[]);
    for (f, g) in files.iter().zip(&got) {
        assert_eq!(f["label"].as_str(), Some(g.as_str()), "{f} (torch {})", v["torch"]);
    }
    assert!(got.iter().all(|l| l == &got[0]), "not one label: {got:?}");
    assert!(files.iter().any(|f| f["layout"] == "one file per tensor"), "{v}");
    let pread = labels(&paths.iter().collect::<Vec<_>>(), &["--no-mmap"]);
    assert_eq!(pread, got, "--no-mmap");
}
