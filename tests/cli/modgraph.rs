//! The module graph of each crate of the workspace (`src/`,
//! `crates/*/src/`) has no cycle (ARCHITECTURE.md: no module imports one
//! that imports it back; between the crates, Cargo itself forbids one).
//! The project's own check, so that a clone needs nothing beside it (issue
//! #31, item 12): every `src/**/*.rs` file is a module; its `use crate::…`, `super::…` and `self::…` paths,
//! and inline ones (`crate::gguf::parse(…)`, or a module brought in by
//! `use` and named on), are edges to the deepest module file they name; a
//! cycle is named module by module.
//!
//! A folder's face (`mod.rs`) and the files beneath it are one unit: an
//! edge between a module and its own ancestor (a child using what its
//! face re-exports, `super::Shard`, or the crate root's re-exports) is not
//! counted, as the face's `pub use` of its children is not. Test modules
//! (`#[cfg(test)] mod tests`) may import anything and are left out, and so
//! is `src/bin/` (the executable, above everything).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module: its path below the crate root (`["gguf", "parse"]`).
type Module = Vec<String>;

/// The modules of the crate whose root is `src`, each with its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![(src.to_path_buf(), Vec::<String>::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                if !(prefix.is_empty() && name == "bin") {
                    let mut p = prefix.clone();
                    p.push(name);
                    stack.push((path, p));
                }
            } else if let Some(stem) = name.strip_suffix(".rs") {
                let mut m = prefix.clone();
                if !matches!(stem, "mod" | "lib" | "main") {
                    m.push(stem.to_string());
                }
                found.insert(m, path);
            }
        }
    }
    found
}

/// A token of Rust source that matters to paths.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Other,
}

/// The tokens of `text`, comments, strings and character literals left out.
fn tokens(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#')) && !ident_before(b, i) {
            // A raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(Tok::Ident("r".into()));
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            j += 1;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.push(Tok::Other);
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Tok::Other);
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime.
            if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
            } else {
                i += 1;
            }
            out.push(Tok::Other);
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(text[start..i].to_string()));
        } else {
            out.push(match c {
                b':' if b.get(i + 1) == Some(&b':') => {
                    i += 1;
                    Tok::PathSep
                }
                b'{' => Tok::Open,
                b'}' => Tok::Close,
                b',' => Tok::Comma,
                b';' => Tok::Semi,
                _ => Tok::Other,
            });
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// The tokens before the file's test module (`#[cfg(test)] mod tests`).
fn without_tests(toks: Vec<Tok>) -> Vec<Tok> {
    let ident = |t: &Tok, s: &str| matches!(t, Tok::Ident(x) if x == s);
    let at = toks.windows(2).enumerate().position(|(at, w)| {
        ident(&w[0], "mod") && ident(&w[1], "tests") && toks[at.saturating_sub(6)..at].iter().any(|t| ident(t, "test"))
    });
    match at {
        Some(at) => toks[..at].to_vec(),
        None => toks,
    }
}

/// The paths a use tree starting at `toks[i]` names, expanded
/// (`crate::{a, b::{self, c}}` → `crate::a`, `crate::b`, `crate::b::c`),
/// with the alias each ends under; and where the tree ends.
fn use_tree(toks: &[Tok], mut i: usize, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(i) {
            Some(Tok::Ident(s)) if s == "self" && !path.is_empty() => {}
            Some(Tok::Ident(s)) if s == "as" => {
                if let Some(Tok::Ident(alias)) = toks.get(i + 1) {
                    out.push((path.clone(), alias.clone()));
                }
                return i + 2;
            }
            Some(Tok::Ident(s)) => path.push(s.clone()),
            Some(Tok::PathSep) => {}
            Some(Tok::Open) => {
                i += 1;
                loop {
                    i = use_tree(toks, i, &path, out);
                    match toks.get(i) {
                        Some(Tok::Comma) => i += 1,
                        _ => break,
                    }
                    if toks.get(i) == Some(&Tok::Close) {
                        break;
                    }
                }
                return i + 1;
            }
            Some(Tok::Other) => {
                // `path::*`
                if !path.is_empty() {
                    let alias = path.last().cloned().unwrap_or_default();
                    out.push((path.clone(), alias));
                }
                return i + 1;
            }
            _ => {
                if let Some(last) = path.last() {
                    out.push((path.clone(), last.clone()));
                }
                return i;
            }
        }
        i += 1;
    }
}

/// `path` (which begins with `crate`, `super` or `self`) from `module`,
/// as a path below the crate root; `None` if it begins otherwise.
fn absolute(module: &Module, path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    // `self` is the file's module (a face's: its folder's), `super` the one above.
    let mut base: Vec<String> = match first.as_str() {
        "crate" => return Some(rest.to_vec()),
        "self" => module.clone(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some((s, r)) = rest.split_first() {
        if s != "super" {
            break;
        }
        base.pop();
        rest = r;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The deepest module of `known` that `path` lies in.
fn target(known: &BTreeMap<Module, PathBuf>, path: &[String]) -> Option<Module> {
    (0..=path.len()).rev().map(|k| path[..k].to_vec()).find(|m| known.contains_key(m))
}

/// The import graph of the crate at `src`: an edge from each module to each
/// module it names, none between a module and its ancestor.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let known = modules(src);
    let mut edges = BTreeMap::new();
    for (module, file) in &known {
        let toks = without_tests(tokens(&std::fs::read_to_string(file).unwrap()));
        let mut named = Vec::new();
        let mut aliases = BTreeMap::new();
        let mut i = 0;
        while i < toks.len() {
            if matches!(&toks[i], Tok::Ident(s) if s == "use") {
                let mut paths = Vec::new();
                i = use_tree(&toks, i + 1, &[], &mut paths);
                for (path, alias) in paths {
                    if let Some(abs) = absolute(module, &path) {
                        // A module brought in by name is followed where it is named on.
                        if known.contains_key(&abs) {
                            aliases.insert(alias, abs.clone());
                        }
                        named.push(abs);
                    }
                }
                continue;
            }
            // An inline path: `crate::x::y`, `super::x`, or `alias::x` after `use`.
            if let Tok::Ident(first) = &toks[i] {
                let starts_path = i == 0 || toks[i - 1] != Tok::PathSep;
                if starts_path && toks.get(i + 1) == Some(&Tok::PathSep) {
                    let mut path = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Tok::PathSep) {
                        match toks.get(j + 1) {
                            Some(Tok::Ident(s)) => path.push(s.clone()),
                            _ => break,
                        }
                        j += 2;
                    }
                    let abs = match aliases.get(first) {
                        Some(base) => Some(base.iter().chain(&path[1..]).cloned().collect()),
                        None => absolute(module, &path),
                    };
                    if let Some(abs) = abs {
                        named.push(abs);
                    }
                    i = j;
                    continue;
                }
            }
            i += 1;
        }
        let to: BTreeSet<Module> = named
            .iter()
            .filter_map(|p| target(&known, p))
            .filter(|t| !t.starts_with(module) && !module.starts_with(t))
            .collect();
        edges.insert(module.clone(), to);
    }
    edges
}

fn show(m: &Module) -> String {
    if m.is_empty() { "crate".into() } else { m.join("::") }
}

/// Every cycle of the graph, one per strongly connected component of more
/// than one module, named as a path that returns to where it began.
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let mut found = Vec::new();
    let mut reported: BTreeSet<Module> = BTreeSet::new();
    for start in edges.keys() {
        if reported.contains(start) {
            continue;
        }
        // The shortest way back to `start`, breadth first.
        let mut from: BTreeMap<&Module, &Module> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut back = None;
        while let Some(m) = queue.pop_front() {
            for n in edges.get(m).into_iter().flatten() {
                if n == start {
                    back = Some(m);
                    break;
                }
                if !from.contains_key(n) {
                    from.insert(n, m);
                    queue.push_back(n);
                }
            }
            if back.is_some() {
                break;
            }
        }
        if let Some(mut m) = back {
            let mut cycle = vec![start.clone()];
            let mut rest = vec![m.clone()];
            while m != start {
                m = from[m];
                if m != start {
                    rest.push(m.clone());
                }
            }
            cycle.extend(rest.into_iter().rev());
            cycle.push(start.clone());
            reported.extend(cycle.iter().cloned());
            found.push(cycle.iter().map(show).collect::<Vec<_>>().join(" -> "));
        }
    }
    found
}

/// The source roots of the workspace's crates: this one's and each of
/// `crates/`.
fn crate_roots() -> Vec<PathBuf> {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![top.join("src")];
    let mut layers: Vec<PathBuf> =
        std::fs::read_dir(top.join("crates")).unwrap().map(|e| e.unwrap().path().join("src")).collect();
    layers.sort();
    roots.extend(layers);
    roots
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let roots = crate_roots();
    assert_eq!(roots.len(), 5, "{roots:?}");
    for src in &roots {
        let edges = graph(src);
        let found = cycles(&edges);
        assert!(found.is_empty(), "import cycles in {} (ARCHITECTURE.md):\n{}", src.display(), found.join("\n"));
    }
    // The graphs were read at all: known edges of the formats and the core are there.
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = graph(&top.join("crates/formats/src"));
    assert!(edges[&vec!["formats".to_string()]].contains(&vec!["gguf".to_string()]), "{edges:?}");
    let edges = graph(&top.join("crates/core/src"));
    assert!(edges[&vec!["schedule".to_string()]].contains(&vec!["cache".to_string()]), "{edges:?}");
}

/// Writes `files` (path below `src/`, text) into a fresh tree.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = d.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    d
}

#[test]
fn a_planted_cycle_is_found_and_named() {
    // The core imports a format whose parser imports the core back, through
    // a group, an alias and an inline path.
    let d = tree(&[
        ("lib.rs", "pub mod core; pub mod fmt; pub use fmt::Model;"),
        ("core.rs", "use crate::{error::Error, fmt as f};\nfn g() { f::parse::run(); }"),
        ("error.rs", "pub struct Error;"),
        ("fmt/mod.rs", "mod parse; pub use parse::run; use super::error::Error;"),
        ("fmt/parse.rs", "// crate::nothing in a comment\nfn run() { let _ = \"crate::nor\"; crate::core::helper(); }"),
    ]);
    let edges = graph(d.path());
    let found = cycles(&edges);
    assert_eq!(found, ["core -> fmt::parse -> core"], "{edges:?}");
}

#[test]
fn a_face_and_its_files_and_a_layered_tree_are_no_cycle() {
    // A child using its face's re-exports, a face re-exporting its
    // children, lifetimes, raw strings and test modules importing anything.
    let d = tree(&[
        ("lib.rs", "pub mod a; pub mod b; pub use a::Thing;"),
        ("a/mod.rs", "mod x; pub use self::x::Thing; use crate::b::y;"),
        ("a/x.rs", "use super::Thing; fn f<'a>(s: &'a str) -> char { let _ = r#\"crate::b\"#; 'x' }"),
        ("b/mod.rs", "pub mod y;"),
        ("b/y.rs", "use crate::Thing as _;\n#[cfg(test)]\nmod tests { use crate::a::x; }"),
    ]);
    let edges = graph(d.path());
    assert_eq!(edges[&vec!["a".to_string()]], BTreeSet::from([vec!["b".to_string(), "y".to_string()]]));
    assert_eq!(cycles(&edges), Vec::<String>::new());
}

#[test]
fn a_cycle_through_super_super_is_found() {
    let d = tree(&[
        ("lib.rs", "pub mod p; pub mod q;"),
        ("p/mod.rs", "pub mod deep;"),
        ("p/deep/mod.rs", "pub mod leaf;"),
        ("p/deep/leaf.rs", "use super::super::super::q::Q;"),
        ("q.rs", "pub struct Q; fn f() { crate::p::deep::leaf::g(); }"),
    ]);
    assert_eq!(cycles(&graph(d.path())), ["p::deep::leaf -> q -> p::deep::leaf"]);
}
