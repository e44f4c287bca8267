//! `hf:` references in test caches built byte by byte as `huggingface_hub`
//! lays them out (`models--ORG--NAME/{blobs,refs,snapshots}`, snapshot
//! files linked to `../../blobs/<sha256>`, refs holding 40 hex digits and
//! no newline): a reference labels its snapshot as the snapshot directory
//! given by path is labelled, `hf:` alone lists every snapshot a ref names,
//! the cache is found as `huggingface_hub` finds it, every malformed or
//! missing reference and every damaged ref is an error naming its argument
//! (exit 2, the other arguments still labelled), nothing is downloaded, and
//! sums lines, `--check`, `--json`, `statement`, `verify`, `inspect` and
//! `diff` take references as they take paths.
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::st::{St, StTensor};
use common::*;
use serde_json::Value as Json;

/// A Hugging Face cache in a temporary directory.
struct Cache {
    _dir: Dir,
    /// The cache (`hub`).
    hub: PathBuf,
    /// A directory beside the cache, outside it.
    work: PathBuf,
}

const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const C: &str = "cccccccccccccccccccccccccccccccccccccccc";

impl Cache {
    fn new() -> Cache {
        let d = Dir::new();
        let (hub, work) = (d.path("hub"), d.path("work"));
        std::fs::create_dir_all(&hub).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        Cache { _dir: d, hub, work }
    }

    fn repo(&self, id: &str) -> PathBuf {
        self.hub.join(format!("models--{}", id.replace('/', "--")))
    }

    /// The snapshot `commit` of `id`, its files stored as blobs named by
    /// their SHA-256 and linked from the snapshot (`../../blobs/…`, one
    /// `..` more per folder).
    fn snapshot(&self, id: &str, commit: &str, files: &[(&str, Vec<u8>)]) -> PathBuf {
        let repo = self.repo(id);
        let snap = repo.join("snapshots").join(commit);
        std::fs::create_dir_all(repo.join("blobs")).unwrap();
        std::fs::create_dir_all(&snap).unwrap();
        for (name, bytes) in files {
            let blob = hex(&sha(bytes));
            std::fs::write(repo.join("blobs").join(&blob), bytes).unwrap();
            let link = snap.join(name);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            let up = "../".repeat(2 + name.matches('/').count());
            std::os::unix::fs::symlink(format!("{up}blobs/{blob}"), link).unwrap();
        }
        snap
    }

    /// Writes `refs/<name>` holding `content`, as `huggingface_hub` does
    /// (`write_text(commit)`: no newline).
    fn set_ref(&self, id: &str, name: &str, content: &str) {
        let f = self.repo(id).join("refs").join(name);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, content).unwrap();
    }

    fn gd(&self, args: &[&str]) -> Output {
        Command::new(gguf_digest_bin())
            .args(args)
            .current_dir(&self.work)
            .env("HF_HUB_CACHE", &self.hub)
            .env_remove("HUGGINGFACE_HUB_CACHE")
            .env_remove("HF_HOME")
            .env_remove("XDG_CACHE_HOME")
            .stdin(Stdio::null())
            .output()
            .expect("runs gguf-digest")
    }

    /// The label the one sums line of `arg` gives (exit 0, the line names `arg`).
    fn label(&self, arg: &str) -> String {
        let out = self.gd(&[arg]);
        assert_eq!(out.status.code(), Some(0), "{arg}: {}", text(&out.stderr));
        let t = text(&out.stdout);
        let (l, rest) = t.split_once("  ").expect("a sums line");
        assert_eq!(rest, format!("{arg}\n"));
        l.to_string()
    }
}

fn weights(seed: u8) -> Vec<u8> {
    St::new().meta("format", "pt").tensor(StTensor::filled("w", "F32", &[2, 3], seed)).build()
}

/// A model repository `o/n`: `main` and `v1` name snapshot A, `refs/pr/1`
/// names B (other weights), C is in `snapshots/` with no ref.
fn model_cache() -> Cache {
    let c = Cache::new();
    let files = |seed| vec![("model.safetensors", weights(seed)), ("config.json", b"{}".to_vec())];
    c.snapshot("o/n", A, &files(1));
    c.snapshot("o/n", B, &files(2));
    c.snapshot("o/n", C, &files(3));
    c.set_ref("o/n", "main", A);
    c.set_ref("o/n", "v1", A);
    c.set_ref("o/n", "refs/pr/1", B);
    c
}

/// `args` fail for `bad` alone: exit 2, one error line naming `bad` and
/// saying `says`, while the good argument beside it is still labelled.
fn refused_beside_a_good_one(c: &Cache, bad: &str, says: &str) {
    let good = c.repo("o/n").join("snapshots").join(A);
    let out = c.gd(&[good.to_str().unwrap(), bad]);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{bad} must be refused ({says}): {e}");
    assert!(e.starts_with(&format!("gguf-digest: '{bad}': ")), "the error names the argument {bad}: {e}");
    assert!(e.contains(says), "{bad}: expected {says:?} in: {e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let label = c.label(good.to_str().unwrap());
    assert_eq!(text(&out.stdout), format!("{label}  {}\n", good.display()), "the other argument is labelled");
}

#[test]
fn a_reference_labels_the_snapshot_its_ref_names_as_the_directory_is_labelled() {
    let c = model_cache();
    let dir = |commit: &str| c.label(c.repo("o/n").join("snapshots").join(commit).to_str().unwrap());
    let (a, b, cc) = (dir(A), dir(B), dir(C));
    assert!(a != b && b != cc && a != cc, "three snapshots, three labels");
    assert_eq!(c.label("hf:o/n"), a, "hf:ORG/NAME is refs/main's snapshot");
    assert_eq!(c.label("hf:o/n@main"), a);
    assert_eq!(c.label("hf:o/n@v1"), a, "a tag in refs/");
    assert_eq!(c.label("hf:o/n@refs/pr/1"), b, "a ref with '/' is a file in folders of refs/");
    assert_eq!(c.label(&format!("hf:o/n@{C}")), cc, "a 40-hex commit in snapshots/, no ref needed");
    assert_eq!(c.label(&format!("hf:o/n@{A}")), a);
    // A repository without an organization: models--NAME.
    c.snapshot("gpt2", A, &[("model.safetensors", weights(1))]);
    c.set_ref("gpt2", "main", A);
    assert_eq!(c.label("hf:gpt2"), c.label(c.repo("gpt2").join("snapshots").join(A).to_str().unwrap()));
}

#[test]
fn the_cache_is_found_as_huggingface_hub_finds_it() {
    let c = model_cache();
    let want = c.label("hf:o/n");
    let run = |env: &[(&str, &Path)]| {
        let mut cmd = Command::new(gguf_digest_bin());
        cmd.arg("hf:o/n").stdin(Stdio::null());
        for v in ["HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"] {
            cmd.env_remove(v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        (out.status.code(), text(&out.stdout).split("  ").next().unwrap_or_default().to_string(), text(&out.stderr))
    };
    let ok = |r: (Option<i32>, String, String)| {
        assert_eq!(r.0, Some(0), "{}", r.2);
        assert_eq!(r.1, want);
    };
    // HF_HOME/hub; HOME/.cache/huggingface/hub; XDG_CACHE_HOME/huggingface/hub.
    let home = c.work.join("home");
    std::fs::create_dir_all(home.join(".cache/huggingface")).unwrap();
    std::fs::create_dir_all(home.join("xdg/huggingface")).unwrap();
    std::fs::create_dir_all(home.join("hfhome")).unwrap();
    std::os::unix::fs::symlink(&c.hub, home.join(".cache/huggingface/hub")).unwrap();
    std::os::unix::fs::symlink(&c.hub, home.join("xdg/huggingface/hub")).unwrap();
    std::os::unix::fs::symlink(&c.hub, home.join("hfhome/hub")).unwrap();
    ok(run(&[("HOME", &home)]));
    ok(run(&[("HOME", Path::new("/nonexistent")), ("XDG_CACHE_HOME", &home.join("xdg"))]));
    ok(run(&[("HOME", Path::new("/nonexistent")), ("HF_HOME", &home.join("hfhome"))]));
    ok(run(&[("HOME", Path::new("/nonexistent")), ("HUGGINGFACE_HUB_CACHE", &c.hub)]));
    // HF_HUB_CACHE comes first: over HF_HOME, and over the legacy name.
    let empty = c.work.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    ok(run(&[("HF_HUB_CACHE", &c.hub), ("HF_HOME", &empty), ("HUGGINGFACE_HUB_CACHE", &empty)]));
    let r = run(&[("HF_HUB_CACHE", &empty), ("HF_HOME", &home.join("hfhome"))]);
    assert_eq!(r.0, Some(2), "HF_HUB_CACHE wins even where it holds nothing: {}", r.2);
    assert!(r.2.contains(&format!("the Hugging Face cache {}", empty.display())), "{}", r.2);
}

#[test]
fn hf_alone_lists_every_snapshot_a_ref_names_once_and_reports_strays() {
    let c = model_cache();
    c.snapshot("gpt2", A, &[("model.safetensors", weights(1))]);
    c.set_ref("gpt2", "main", A);
    // Only tags: named by the least of them.
    c.snapshot("o/tags", B, &[("model.safetensors", weights(2))]);
    c.set_ref("o/tags", "v2", B);
    c.set_ref("o/tags", "v10", B);
    // Not models, or not entries of a cache: passed over in silence.
    c.snapshot("o/n", A, &[]);
    std::fs::create_dir_all(c.hub.join("datasets--o--d/refs")).unwrap();
    std::fs::write(c.hub.join("datasets--o--d/refs/main"), A).unwrap();
    std::fs::create_dir_all(c.hub.join(".locks/models--o--n")).unwrap();
    std::fs::write(c.hub.join("CACHEDIR.TAG"), b"Signature: 8a477f597d28d172789f06886806bc55").unwrap();
    // Strays: reported, the listing goes on.
    std::fs::write(c.hub.join("notes.txt"), b"").unwrap();
    std::fs::create_dir_all(c.hub.join("models--o--bad--x")).unwrap();
    c.set_ref("o/n", "broken", "not a commit");
    let out = c.gd(&["hf:"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let names: Vec<&str> = stdout.lines().map(|l| l.split_once("  ").unwrap().1).collect();
    assert_eq!(names, ["hf:gpt2", "hf:o/n", "hf:o/n@refs/pr/1", "hf:o/tags@v10"]);
    assert_eq!(stdout.lines().nth(1).unwrap().split("  ").next().unwrap(), c.label("hf:o/n"));
    let strays: Vec<&str> = stderr.lines().collect();
    assert_eq!(strays.len(), 3, "{stderr}");
    assert!(strays[0].contains("models--o--bad--x") && strays[0].contains("not a model repository folder"), "{stderr}");
    assert!(strays[1].contains("refs/broken") && strays[1].contains("40 lowercase hex"), "{stderr}");
    assert!(strays[2].contains("notes.txt"), "{stderr}");
    // No cache: an error saying where it was looked for.
    let out = Command::new(gguf_digest_bin())
        .arg("hf:")
        .env("HF_HUB_CACHE", c.work.join("none"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no Hugging Face cache found"), "{}", text(&out.stderr));
}

#[test]
fn a_name_with_dot_dot_is_refused() {
    let c = model_cache();
    refused_beside_a_good_one(&c, "hf:o/..", "its name '..' begins or ends with '-' or '.'");
    refused_beside_a_good_one(&c, "hf:o/a..b", "it holds '--' or '..'");
}

#[test]
fn a_name_with_a_slash_in_the_wrong_place_is_refused() {
    let c = model_cache();
    refused_beside_a_good_one(&c, "hf:o/n/x", "more than one '/'");
    refused_beside_a_good_one(&c, "hf:/n", "is empty");
}

#[test]
fn a_name_with_an_empty_part_is_refused() {
    refused_beside_a_good_one(&model_cache(), "hf:o/", "its name '' is empty");
}

#[test]
fn a_name_with_characters_huggingface_hub_refuses_is_refused() {
    let c = model_cache();
    refused_beside_a_good_one(&c, "hf:o/n!", "a character other than");
    refused_beside_a_good_one(&c, "hf:o--x/n", "'--'");
}

#[test]
fn a_dataset_is_refused_hf_names_models_only() {
    refused_beside_a_good_one(&model_cache(), "hf:datasets/o/n", "hf: names models only");
}

#[test]
fn a_revision_that_is_no_ref_name_is_refused() {
    let c = model_cache();
    refused_beside_a_good_one(&c, "hf:o/n@../../../x", "is neither a ref nor a 40-hex commit");
    refused_beside_a_good_one(&c, "hf:o/n@", "is neither a ref nor a 40-hex commit");
}

#[test]
fn a_revision_not_in_the_cache_is_refused_with_the_call_that_would_download_it() {
    let c = model_cache();
    refused_beside_a_good_one(
        &c,
        "hf:o/n@v9",
        "revision v9 of o/n is not in the Hugging Face cache (no refs/v9); nothing is downloaded here: \
         huggingface_hub.snapshot_download(\"o/n\", revision=\"v9\") or `hf download o/n --revision v9` fetches it",
    );
    let d = "d".repeat(40);
    refused_beside_a_good_one(&c, &format!("hf:o/n@{d}"), &format!("commit {d} of o/n is not in the Hugging Face"));
}

#[test]
fn a_repository_not_in_the_cache_is_refused_with_the_call_that_would_download_it() {
    refused_beside_a_good_one(&model_cache(), "hf:o/other", "o/other is not in the Hugging Face cache");
    refused_beside_a_good_one(&model_cache(), "hf:o/other", "snapshot_download(\"o/other\", revision=\"main\")");
}

#[test]
fn a_ref_with_a_trailing_newline_is_refused() {
    let c = model_cache();
    c.set_ref("o/n", "v2", &format!("{A}\n"));
    refused_beside_a_good_one(&c, "hf:o/n@v2", "no newline, as huggingface_hub writes it; this one begins");
}

#[test]
fn a_ref_that_is_not_40_hex_digits_is_refused() {
    let c = model_cache();
    c.set_ref("o/n", "short", &A[..39]);
    refused_beside_a_good_one(&c, "hf:o/n@short", "40 lowercase hex digits");
    c.set_ref("o/n", "upper", &A.to_uppercase());
    refused_beside_a_good_one(&c, "hf:o/n@upper", "40 lowercase hex digits");
}

#[test]
fn a_ref_naming_a_missing_snapshot_is_refused() {
    let c = model_cache();
    let d = "d".repeat(40);
    c.set_ref("o/n", "gone", &d);
    refused_beside_a_good_one(
        &c,
        "hf:o/n@gone",
        &format!("refs/gone names commit {d}, whose snapshot folder is missing"),
    );
}

#[test]
fn a_ref_that_is_a_link_is_refused() {
    let c = model_cache();
    std::fs::write(c.work.join("outside"), A).unwrap();
    std::os::unix::fs::symlink(c.work.join("outside"), c.repo("o/n").join("refs/linked")).unwrap();
    refused_beside_a_good_one(&c, "hf:o/n@linked", "refs/linked: a symbolic link");
}

#[test]
fn a_repository_folder_linked_out_of_the_cache_is_never_read() {
    let c = model_cache();
    std::fs::rename(c.repo("o/n"), c.work.join("moved")).unwrap();
    std::os::unix::fs::symlink(c.work.join("moved"), c.repo("o/n")).unwrap();
    refused_beside_a_good_one_elsewhere(&c, "hf:o/n", "leads outside");
}

/// As [`refused_beside_a_good_one`], the good argument a file of its own.
fn refused_beside_a_good_one_elsewhere(c: &Cache, bad: &str, says: &str) {
    let good = c.work.join("good.safetensors");
    std::fs::write(&good, weights(9)).unwrap();
    let out = c.gd(&[good.to_str().unwrap(), bad]);
    let e = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.starts_with(&format!("gguf-digest: '{bad}': ")) && e.contains(says), "{e}");
    assert_eq!(text(&out.stdout).lines().count(), 1);
}

#[test]
fn sums_lines_check_and_json_take_references() {
    let c = model_cache();
    let a = c.label("hf:o/n");
    let b = c.label("hf:o/n@refs/pr/1");
    let out = c.gd(&["hf:o/n", "hf:o/n@refs/pr/1"]);
    let sums = text(&out.stdout);
    assert_eq!(sums, format!("{a}  hf:o/n\n{b}  hf:o/n@refs/pr/1\n"));
    std::fs::write(c.work.join("sums"), &sums).unwrap();
    let out = c.gd(&["-c", "sums"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "hf:o/n: OK\nhf:o/n@refs/pr/1: OK\n".into()));
    // main moves to B: the reference now names other weights.
    c.set_ref("o/n", "main", B);
    let out = c.gd(&["-c", "sums"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("hf:o/n: FAILED"), "{}", text(&out.stdout));
    // A reference not in the cache is a missing file to --ignore-missing.
    std::fs::write(c.work.join("sums2"), format!("{b}  hf:o/n@refs/pr/1\n{a}  hf:o/not-here\n")).unwrap();
    let out = c.gd(&["-c", "--ignore-missing", "sums2"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "hf:o/n@refs/pr/1: OK\n".into()),
        "{}",
        text(&out.stderr)
    );
    let out = c.gd(&["-c", "sums2"]);
    assert_eq!(out.status.code(), Some(1), "without it, a failure: {}", text(&out.stderr));
    let out = c.gd(&["--json", "hf:o/n@v1"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["files"][0]["path"], "hf:o/n@v1");
    assert_eq!(doc["files"][0]["label"], a.as_str());
}

#[test]
fn statement_and_verify_take_references_as_subject_names() {
    let c = model_cache();
    let a = c.label("hf:o/n");
    let out = c.gd(&["statement", "hf:o/n"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let statement: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(statement["subject"][0]["name"], "hf:o/n", "the reference as given");
    assert_eq!(statement["subject"][0]["digest"]["sha256"], a.as_str());
    std::fs::write(c.work.join("s.json"), &out.stdout).unwrap();
    let out = c.gd(&["verify", "--no-signature", "s.json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout), "s.json: signature NOT CHECKED (--no-signature)\nhf:o/n: OK\n");
    c.set_ref("o/n", "main", B);
    let out = c.gd(&["verify", "--no-signature", "s.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn inspect_and_diff_take_references() {
    let c = model_cache();
    let a = c.label("hf:o/n");
    let snap_a = c.repo("o/n").join("snapshots").join(A);
    let out = c.gd(&["inspect", "hf:o/n"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let by_path = c.gd(&["inspect", snap_a.to_str().unwrap()]);
    assert!(text(&out.stdout).contains(&a), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stdout).lines().skip(1).collect::<Vec<_>>(),
        text(&by_path.stdout).lines().skip(1).collect::<Vec<_>>()
    );
    let out = c.gd(&["diff", "hf:o/n", "hf:o/n@v1"]);
    assert_eq!(out.status.code(), Some(0), "same snapshot: {}", text(&out.stderr));
    let out = c.gd(&["diff", "hf:o/n", "hf:o/n@refs/pr/1"]);
    assert_eq!(out.status.code(), Some(1), "other weights: {}", text(&out.stderr));
    let out = c.gd(&["diff", "hf:o/n", snap_a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "a reference and its snapshot by path: {}", text(&out.stderr));
}
