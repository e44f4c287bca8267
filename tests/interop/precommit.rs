//! The pre-commit hook (.pre-commit-hooks.yaml) run by the real `pre-commit`
//! from PyPI, as a user's repository runs it: `pre-commit try-repo` on this
//! repository, in a temporary git repository holding a model and its sums
//! file. pre-commit builds the tool itself (`language: rust`: cargo
//! install from the repository), so this also proves the crate installs.
//! The hook passes on the approved models, fails on a tampered one, and
//! runs for a commit that touches any file, as any file of a listed
//! directory is part of its label (a tokenizer.json alone fails it).
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

/// Runs `pre-commit try-repo` for the hook in `work`, with the build cached
/// under this repository's target/ between runs. pre-commit's own cargo
/// install builds in release mode; the profile is made cheap here (no LTO,
/// many codegen units, opt-level 1: minutes less on two cores), which
/// changes how fast the tool runs, not what it does.
fn try_repo(pre_commit: &Path, work: &Path, args: &[&str]) -> Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cache = repo.join("target/pre-commit");
    Command::new(pre_commit)
        .args(["try-repo", repo.to_str().unwrap(), "gguf-digest-check"])
        .args(args)
        .current_dir(work)
        .env("PRE_COMMIT_HOME", cache.join("home"))
        .env("CARGO_TARGET_DIR", cache.join("build"))
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("pre-commit runs")
}

fn git(work: &Path, args: &[&str]) {
    let o = Command::new("git").args(args).current_dir(work).output().expect("git runs");
    assert!(o.status.success(), "git {args:?}: {}", text(&o.stderr));
}

#[test]
fn the_check_hook_passes_on_approved_models_and_fails_on_a_changed_one() {
    let Some(py) = py::prerequisites("pre-commit hooks") else { return };
    let pre_commit: PathBuf = py.python.with_file_name("pre-commit");
    let d = Dir::new();
    let work = d.path("");
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["config", "user.email", "ci@example.invalid"]);
    git(&work, &["config", "user.name", "CI"]);
    let g = rich_model(&[0, 8]);
    d.write("m.gguf", &g.build());
    d.write("README.md", b"# models\n");
    // A directory model: its weights and the files beside them.
    std::fs::create_dir(d.path("dir")).expect("mkdir dir");
    d.write("dir/w.gguf", &rich_model(&[1, 2]).build());
    d.write("dir/tokenizer.json", br#"{"model": {"vocab": {"a": 0}}}"#);
    d.write("dir/config.json", br#"{"model_type": "llama"}"#);
    let sums = gd_in(&work, &["m.gguf", "dir"]);
    assert_eq!(sums.status.code(), Some(0));
    d.write("models.sums", &sums.stdout);
    git(&work, &["add", "."]);

    let o = try_repo(&pre_commit, &work, &["--all-files"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "the approved model passes: {out}{}", text(&o.stderr));
    assert!(out.contains("gguf-digest --check") && out.contains("Passed"), "{out}");

    // Only a README outside every model in the commit: the list is checked, and passes.
    let o = try_repo(&pre_commit, &work, &["--files", "README.md"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("Passed") && !out.contains("Skipped"), "{out}");

    // Only the tokenizer of a listed directory changed: the hook runs and
    // fails (issue #31, item 13: it once ran only for weights and sums files).
    d.write("dir/tokenizer.json", br#"{"model": {"vocab": {"b": 0}}}"#);
    git(&work, &["add", "dir/tokenizer.json"]);
    let o = try_repo(&pre_commit, &work, &["--files", "dir/tokenizer.json"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "a changed tokenizer.json fails the commit: {out}");
    assert!(out.contains("Failed") && out.contains("dir: FAILED"), "the tool's verdict is shown: {out}");
    d.write("dir/tokenizer.json", br#"{"model": {"vocab": {"a": 0}}}"#);
    git(&work, &["add", "dir/tokenizer.json"]);

    flip_last_byte(&d.path("m.gguf"));
    git(&work, &["add", "m.gguf"]);
    let o = try_repo(&pre_commit, &work, &["--files", "m.gguf"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "a changed model fails the commit: {out}");
    assert!(out.contains("Failed") && out.contains("m.gguf: FAILED"), "the tool's verdict is shown: {out}");
}
