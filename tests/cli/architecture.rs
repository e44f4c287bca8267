//! ARCHITECTURE.md names every source file and test module, and every
//! repository path it names exists (issue #32, item 7): the map cannot
//! drift from the tree without this test failing.
//!
//! The convention, which ARCHITECTURE.md states under "How this map is
//! checked":
//!
//! - A *path* is an inline code span (outside fenced blocks) made only of
//!   letters, digits and `_ . - /`, not starting with `/` or `.`, that
//!   contains a `/` or ends in `.rs`.
//! - A heading (`##` or `###`) whose text starts with a code span ending in
//!   `/` opens that folder's section; any other such heading goes back to
//!   the repository root. In a section, a path names the file or folder
//!   beneath the section's folder, or else beneath the repository root;
//!   elsewhere only beneath the root. A path ending in `/` must be a folder,
//!   any other a file.
//! - A file is *named* when some path resolves to it exactly: so a module
//!   is named by its file name in its folder's table (`cursor.rs` under
//!   `crates/formats/src/gguf/`), or by its path from the root anywhere.
//!
//! Checked files: `src/**/*.rs`, `crates/*/src/**/*.rs`, `python/src/*.rs`
//! and `tests/*/**/*.rs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The paths a document names, each resolved against the tree at `root`:
/// `Ok` with the repository-relative path, or `Err` with the path as
/// written and the section it was read in.
fn resolve(root: &Path, doc: &str) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if line.starts_with("## ") || line.starts_with("### ") {
            let text = line.trim_start_matches('#').trim_start();
            section = match code_spans(text).first() {
                Some(first) if text.starts_with('`') && first.ends_with('/') && is_path(first) => first.clone(),
                _ => String::new(),
            };
        }
        for span in code_spans(line) {
            if !is_path(&span) {
                continue;
            }
            let folder = span.ends_with('/');
            let exists = |rel: &str| {
                let p = root.join(rel.trim_end_matches('/'));
                if folder { p.is_dir() } else { p.is_file() }
            };
            let in_section = format!("{section}{span}");
            if !section.is_empty() && exists(&in_section) {
                out.push(Ok(in_section));
            } else if exists(&span) {
                out.push(Ok(span));
            } else {
                let under = if section.is_empty() { "the root".to_string() } else { format!("`{section}`") };
                out.push(Err(format!("`{span}` (read under {under})")));
            }
        }
    }
    out
}

/// The inline code spans of a line, in order.
fn code_spans(line: &str) -> Vec<String> {
    line.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// Whether a code span is read as a repository path (see the module doc).
fn is_path(span: &str) -> bool {
    !span.is_empty()
        && !span.starts_with('/')
        && !span.starts_with('.')
        && span.chars().all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c))
        && (span.contains('/') || span.ends_with(".rs"))
}

/// Every file below `dir` (recursively) whose name ends in `.rs`, as
/// paths relative to `root`.
fn rust_files(root: &Path, dir: &Path, recurse: bool, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return };
    for entry in entries.flatten() {
        let rel = dir.join(entry.file_name());
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && recurse {
            rust_files(root, &rel, true, out);
        } else if kind.is_file() && rel.extension().is_some_and(|e| e == "rs") {
            out.insert(rel.to_string_lossy().into_owned());
        }
    }
}

/// The files the map must name: every source file of every crate and every
/// test module.
fn checked_files(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    rust_files(root, Path::new("src"), true, &mut out);
    rust_files(root, Path::new("python/src"), false, &mut out);
    for parent in ["crates", "tests"] {
        let Ok(entries) = std::fs::read_dir(root.join(parent)) else { continue };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let mut dir = PathBuf::from(parent).join(entry.file_name());
            if parent == "crates" {
                dir.push("src");
            }
            rust_files(root, &dir, true, &mut out);
        }
    }
    out
}

/// What is wrong with `doc` as the map of the tree at `root`: paths that
/// do not exist, then files it does not name. Empty when it is true.
fn problems(root: &Path, doc: &str) -> Vec<String> {
    let mut named = BTreeSet::new();
    let mut out = Vec::new();
    for r in resolve(root, doc) {
        match r {
            Ok(path) => {
                named.insert(path);
            }
            Err(what) => out.push(format!("names {what}, which does not exist")),
        }
    }
    for file in checked_files(root) {
        if !named.contains(&file) {
            out.push(format!("does not name `{file}`"));
        }
    }
    out
}

#[test]
fn architecture_md_names_every_file_and_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let found = problems(root, &doc);
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md is not the map of the tree (see its \"How this map is checked\"):\n  {}",
        found.join("\n  ")
    );
}

/// A tree of empty files at the given paths.
fn tree(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"").unwrap();
    }
    dir
}

const FILES: &[&str] = &[
    "src/lib.rs",
    "src/cli/mod.rs",
    "crates/core/src/lib.rs",
    "crates/core/src/source/map.rs",
    "python/src/lib.rs",
    "python/src/deep/not_checked.rs",
    "tests/cli/main.rs",
    "tests/cli/a.rs",
    "bench/not_checked.rs",
];

const MAP: &str = "\
# Map

`src/lib.rs`, `src/cli/` and `python/src/lib.rs`.

```text
`not/a/path.rs` in a fenced block is not read
```

### `crates/core/src/` — the core

| module | what |
|---|---|
| `lib.rs` | the root; `source/map.rs` the map; not paths: `crate::hash`, `hf:ORG/NAME`, `/proc/self/fd`, `P<suffix>`, `a b/c` |

## `tests/cli/`

`main.rs`, `a.rs`; `src/cli/mod.rs` from the root.

## Other

`mod.rs` here would be the root's.
";

#[test]
fn checker_accepts_a_map_that_names_every_file() {
    let dir = tree(FILES);
    // Only the last line fails: `mod.rs` under a plain heading is the root's.
    let map = MAP.replace("`mod.rs` here", "mod.rs here");
    assert_eq!(problems(dir.path(), &map), Vec::<String>::new());
}

#[test]
fn checker_names_a_file_the_map_leaves_out() {
    let dir = tree(&[FILES, &["crates/core/src/planted.rs", "tests/formats/planted.rs"]].concat());
    let map = MAP.replace("`mod.rs` here", "mod.rs here");
    assert_eq!(
        problems(dir.path(), &map),
        ["does not name `crates/core/src/planted.rs`", "does not name `tests/formats/planted.rs`"]
    );
}

#[test]
fn checker_names_a_path_that_does_not_exist() {
    let dir = tree(FILES);
    // `mod.rs` under "Other" resolves from the root, where there is none;
    // a folder named as a file and a file named as a folder are wrong too.
    let map = MAP.replace("`a.rs`;", "`a.rs`, `gone.rs`, `a.rs/`, `src/cli`;");
    assert_eq!(
        problems(dir.path(), &map),
        [
            "names `gone.rs` (read under `tests/cli/`), which does not exist",
            "names `a.rs/` (read under `tests/cli/`), which does not exist",
            "names `src/cli` (read under `tests/cli/`), which does not exist",
            "names `mod.rs` (read under the root), which does not exist",
        ]
    );
}

#[test]
fn checker_reads_a_section_relative_name_only_in_its_section() {
    let dir = tree(FILES);
    // `map.rs` alone names nothing outside `crates/core/src/source/`'s section.
    let map = "### `crates/core/src/`\n\n`map.rs`\n";
    let found = problems(dir.path(), map);
    assert_eq!(
        found.first().map(String::as_str),
        Some("names `map.rs` (read under `crates/core/src/`), which does not exist")
    );
    assert!(found.contains(&"does not name `crates/core/src/source/map.rs`".to_string()), "{found:?}");
}
