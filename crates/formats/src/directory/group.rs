//! Which files of a directory form which component (directory contract
//! §3), by asking every format of the registry for its rule
//! ([`DirectoryRule`], docs/adr/0047): first the files that list others
//! (an index, an ONNX model) are read, and each file a list names belongs
//! to that list's component alone; then each format plans its components
//! from the names and the lists; every file no component holds is a
//! `FILE`. This names no format: a format's rule is in its folder. What a
//! list names is the one thing read from a file; the caller reads it, so
//! this stays a pure function of names.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::format::directory_rule::{Claims, DirectoryRule, ListHead, Planned, joined, refused, split};
use crate::format::{DirectoryKind, FileFormat};
use crate::formats::FORMATS;
use crate::text::escape_bytes;

/// A component to be labelled, before any of its files is opened: its
/// kind, the format whose rule planned it (none for a `FILE`), and its
/// files. Paths are relative to the root, `/`-separated, raw bytes.
#[derive(Clone)]
pub struct Plan {
    /// Its kind (a candidate the format's rule refuses once opened is a
    /// `FILE` after all).
    pub kind: DirectoryKind,
    /// The format that planned it; `None` for a `FILE`.
    pub format: Option<&'static dyn FileFormat>,
    /// Its name and files.
    pub planned: Planned,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Plan").field(&self.kind.text()).field(&self.planned).finish()
    }
}

impl Plan {
    /// Every file of the component, its head first.
    pub fn all_files(&self) -> Vec<Vec<u8>> {
        self.planned.head.iter().chain(&self.planned.files).cloned().collect()
    }
}

/// Reads the list of the file at a relative path by its format's rule and
/// answers the names it lists.
pub type Lister<'a> = dyn FnMut(&[u8], &'static dyn DirectoryRule) -> Result<Vec<Vec<u8>>> + 'a;

/// Whether `name`, as a list names a file, is a plain relative name: one
/// component, or with `nested` several, none empty, `.` or `..`.
fn plain(name: &[u8], nested: bool) -> bool {
    let ok = |c: &[u8]| !c.is_empty() && c != b"." && c != b"..";
    if nested { name.split(|&b| b == b'/').all(ok) } else { ok(name) && !name.contains(&b'/') }
}

/// Every format with a place in a directory: its format, rule and kind.
type Rules = Vec<(&'static dyn FileFormat, &'static dyn DirectoryRule, DirectoryKind)>;

fn rules() -> Result<Rules> {
    let mut out = Vec::new();
    for f in FORMATS.iter().copied() {
        if let Some(rule) = f.directory_rule() {
            let kind = f.component_kind().ok_or_else(|| Error::internal("a directory rule with no kind"))?;
            out.push((f, rule, kind));
        }
    }
    Ok(out)
}

/// Reads every list (in path order) into the claims: each list's head is
/// its own, and each file a list names is that list's alone.
fn claims(files: &[Vec<u8>], rules: &Rules, lister: &mut Lister<'_>) -> Result<Claims> {
    let present: BTreeSet<&[u8]> = files.iter().map(Vec::as_slice).collect();
    let mut heads: Vec<(&[u8], &'static dyn DirectoryRule, ListHead)> = Vec::new();
    for path in &present {
        if let Some((rule, head)) = rules.iter().find_map(|(_, r, _)| Some((*r, r.list_head(path)?))) {
            heads.push((path, rule, head));
        }
    }
    let mut claims = Claims::default();
    for (path, _, _) in &heads {
        claims.by.insert(path.to_vec(), path.to_vec());
    }
    let is_index: BTreeMap<&[u8], bool> = heads.iter().map(|(p, _, h)| (*p, h.index)).collect();
    for (path, rule, head) in &heads {
        let (dir, _) = split(path);
        let mut listed: Vec<Vec<u8>> = Vec::new();
        for name in lister(path, *rule)? {
            let model = &head.model;
            if !plain(&name, head.nested) {
                let what = format!("{} {}, which is not a plain file name", head.lists, escape_bytes(&name));
                return Err(refused(model, what));
            }
            let file = joined(dir, &name);
            if !present.contains(file.as_slice()) {
                let what = format!("{} {}, which is not a file of the directory", head.lists, escape_bytes(&name));
                return Err(refused(model, what));
            }
            if listed.contains(&file) {
                continue;
            }
            if file.as_slice() == *path {
                return Err(refused(model, format!("{} its own file", head.lists)));
            }
            match claims.by.get(&file) {
                Some(other) if *other == file => {
                    let what = format!("is named by {}, but is a model of its own", escape_bytes(path));
                    return Err(refused(&file, what));
                }
                Some(other) => {
                    let both_indexes = head.index && is_index.get(other.as_slice()) == Some(&true);
                    let by = if both_indexes { "listed by two indexes" } else { "named by two models" };
                    let what = format!("is {by}, {} and {}", escape_bytes(other), escape_bytes(path));
                    return Err(refused(&file, what));
                }
                None => {
                    claims.by.insert(file.clone(), path.to_vec());
                }
            }
            listed.push(file);
        }
        claims.lists.insert(path.to_vec(), listed);
    }
    Ok(claims)
}

/// Groups the content files of a directory into components (contract §3):
/// each format's in the registry's order, then every other file alone, in
/// the order given. `lister` reads a list (by its relative path and the
/// rule that reads it) and answers the names it lists. Errors name `d/P`
/// or the file.
pub fn group(files: &[Vec<u8>], lister: &mut Lister<'_>) -> Result<Vec<Plan>> {
    let rules = rules()?;
    let claims = claims(files, &rules, lister)?;
    let mut out = Vec::new();
    // Each file, to the component that holds it.
    let mut taken: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (format, rule, kind) in &rules {
        for planned in rule.group(files, &claims)? {
            let plan = Plan { kind: *kind, format: Some(*format), planned };
            for f in plan.all_files() {
                if let Some(other) = taken.insert(f.clone(), plan.planned.name.clone()) {
                    let what = format!(
                        "belongs to two models, {} and {}",
                        escape_bytes(&other),
                        escape_bytes(&plan.planned.name)
                    );
                    return Err(refused(&f, what));
                }
            }
            out.push(plan);
        }
    }
    // A file a list claims enters through that list's model only: never
    // dropped, never a FILE beside it.
    if let Some(lost) = claims.by.keys().find(|f| !taken.contains_key(*f)) {
        return Err(Error::internal(&format!("{}: claimed by a list, planned by no format", escape_bytes(lost))));
    }
    for path in files.iter().filter(|p| !taken.contains_key(*p)) {
        let planned = Planned { name: path.clone(), head: None, files: vec![path.clone()] };
        out.push(Plan { kind: DirectoryKind::FILE, format: None, planned });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan as (kind, name, head, files), comparable.
    type Row = (&'static str, Vec<u8>, Option<Vec<u8>>, Vec<Vec<u8>>);

    fn names(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn row(kind: &'static str, name: &str, head: Option<&str>, files: &[&str]) -> Row {
        (kind, name.as_bytes().to_vec(), head.map(|h| h.as_bytes().to_vec()), names(files))
    }

    fn file(name: &str) -> Row {
        row("FILE", name, None, &[name])
    }

    fn grouped(files: &[&str], lists: &[(&str, &[&str])]) -> Result<Vec<Row>> {
        let mut lookup = |p: &[u8], _: &'static dyn DirectoryRule| -> Result<Vec<Vec<u8>>> {
            let found = lists.iter().find(|(i, _)| i.as_bytes() == p);
            found.map(|(_, l)| names(l)).ok_or_else(|| Error::schema("unknown list"))
        };
        let plans = group(&names(files), &mut lookup)?;
        Ok(plans.into_iter().map(|p| (p.kind.text(), p.planned.name, p.planned.head, p.planned.files)).collect())
    }

    #[test]
    fn a_snapshot_groups_weights_and_files() {
        let files = ["config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json", "q/m.Q4_0.gguf"];
        let got = grouped(&files, &[]).unwrap();
        assert!(got.contains(&row("SFTN", "model", None, &["model.safetensors"])));
        assert!(got.contains(&row("GGUF", "q/m.Q4_0", None, &["q/m.Q4_0.gguf"])));
        for f in ["config.json", "tokenizer.json", "1_Pooling/config.json"] {
            assert!(got.contains(&file(f)), "{f}");
        }
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn shard_sets_and_indexes() {
        let set = ["m-00002-of-00002.safetensors", "m-00001-of-00002.safetensors"];
        assert_eq!(grouped(&set, &[]).unwrap(), [row("SFTN", "m", None, &[set[1], set[0]])]);
        // An empty prefix, as for GGUF.
        let got = grouped(&["-00001-of-00001.gguf"], &[]).unwrap();
        assert_eq!(got, [row("GGUF", "", None, &["-00001-of-00001.gguf"])]);
        // An index lists files whatever their prefix.
        let files = ["d/model.safetensors.index.json", "d/a.safetensors", "d/w-00001-of-00002.safetensors"];
        let got = grouped(&files, &[(files[0], &["a.safetensors", "w-00001-of-00002.safetensors"])]).unwrap();
        assert_eq!(got, [row("SFTN", "d/model", Some(files[0]), &[files[1], files[2]])]);
        // A name that only looks like a shard is a single file.
        let got = grouped(&["x-00003-of-00002.safetensors"], &[]).unwrap();
        assert_eq!(got, [row("SFTN", "x-00003-of-00002", None, &["x-00003-of-00002.safetensors"])]);
    }

    #[test]
    fn every_combination_the_contract_refuses() {
        type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a [&'a str])], &'a str);
        let cases: [Case<'_>; 10] = [
            (&["m.safetensors", "m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors"], &[], "beside shards"),
            (&["m-00001-of-00002.gguf"], &[], "incomplete: missing 00002"),
            (&["m-00001-of-00002.gguf", "m-00002-of-00003.gguf"], &[], "two different shard counts"),
            (&["m.gguf", "m-00001-of-00001.gguf"], &[], "beside shards"),
            (
                &[
                    "m.safetensors.index.json",
                    "m-00001-of-00002.safetensors",
                    "m-00002-of-00002.safetensors",
                    "m.safetensors",
                ],
                &[("m.safetensors.index.json", &["m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors"])],
                "m.safetensors is not listed by its index",
            ),
            (
                &["m.safetensors.index.json"],
                &[("m.safetensors.index.json", &["gone.safetensors"])],
                "not a file of the directory",
            ),
            (
                &["a.safetensors.index.json", "b.safetensors.index.json", "w.safetensors"],
                &[("a.safetensors.index.json", &["w.safetensors"]), ("b.safetensors.index.json", &["w.safetensors"])],
                "listed by two indexes",
            ),
            (
                &[
                    "a.safetensors.index.json",
                    "b.safetensors.index.json",
                    "b-00001-of-00001.safetensors",
                    "w.safetensors",
                ],
                &[
                    ("a.safetensors.index.json", &["b-00001-of-00001.safetensors"]),
                    ("b.safetensors.index.json", &["w.safetensors"]),
                ],
                "is not listed by its index",
            ),
            // Revision 2: P.safetensors beside its index is the index's only file.
            (
                &["m.safetensors.index.json", "m.safetensors", "m-00002-of-00002.safetensors"],
                &[("m.safetensors.index.json", &["m.safetensors", "m-00002-of-00002.safetensors"])],
                "m.safetensors lies beside its index, which also lists m-00002-of-00002.safetensors: \
                 transformers loads m.safetensors alone",
            ),
            (
                &["d/m.safetensors.index.json", "d/m.safetensors", "d/other.safetensors"],
                &[("d/m.safetensors.index.json", &["m.safetensors", "other.safetensors"])],
                "d/m: d/m.safetensors lies beside its index, which also lists d/other.safetensors",
            ),
        ];
        for (files, indexes, why) in cases {
            let e = grouped(files, indexes).unwrap_err().to_string();
            assert!(e.contains(why), "{files:?}: {e}");
        }
    }

    #[test]
    fn a_single_file_its_index_lists_alone_is_the_model() {
        let files = ["m.safetensors.index.json", "m.safetensors"];
        let got = grouped(&files, &[(files[0], &["m.safetensors"])]).unwrap();
        assert_eq!(got, [row("SFTN", "m", Some(files[0]), &["m.safetensors"])]);
    }

    #[test]
    fn the_index_of_another_directory_cannot_reach_in() {
        // Names an index lists are plain names in its own directory.
        let files = ["a/m.safetensors.index.json", "b/w.safetensors"];
        let e = grouped(&files, &[(files[0], &["w.safetensors"])]).unwrap_err().to_string();
        assert!(e.contains("not a file of the directory"), "{e}");
        let e = grouped(&files, &[(files[0], &["../b/w.safetensors"])]).unwrap_err().to_string();
        assert!(e.contains("not a plain file name"), "{e}");
    }

    #[test]
    fn pytorch_checkpoints_by_name_and_candidates() {
        let got = grouped(
            &[
                "pytorch_model-00002-of-00002.bin",
                "pytorch_model-00001-of-00002.bin",
                "d/pytorch_model.bin",
                "w.pt",
                "e/x.pth",
                "other-00001-of-00002.bin",
                "t.ckpt",
                "pytorch_model.bin.json",
            ],
            &[],
        )
        .unwrap();
        for want in [
            row(
                "PTCH",
                "pytorch_model",
                None,
                &["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"],
            ),
            row("PTCH", "d/pytorch_model", None, &["d/pytorch_model.bin"]),
            row("PTCH", "w.pt", None, &["w.pt"]),
            row("PTCH", "e/x.pth", None, &["e/x.pth"]),
            row("PTCH", "other-00001-of-00002.bin", None, &["other-00001-of-00002.bin"]),
            file("t.ckpt"),
            file("pytorch_model.bin.json"),
        ] {
            assert!(got.contains(&want), "{want:?} not in {got:?}");
        }
        assert_eq!(got.len(), 7);
        // Through its index, which may list a file of any name.
        let got = grouped(
            &["pytorch_model.bin.index.json", "a.bin", "pytorch_model-00001-of-00001.bin"],
            &[("pytorch_model.bin.index.json", &["a.bin", "pytorch_model-00001-of-00001.bin"])],
        )
        .unwrap();
        assert_eq!(
            got,
            [row(
                "PTCH",
                "pytorch_model",
                Some("pytorch_model.bin.index.json"),
                &["a.bin", "pytorch_model-00001-of-00001.bin"]
            )]
        );
        // A shard beside its index, unlisted; two counts.
        assert!(
            grouped(
                &["pytorch_model.bin.index.json", "pytorch_model-00001-of-00001.bin"],
                &[("pytorch_model.bin.index.json", &[])]
            )
            .is_err()
        );
        assert!(grouped(&["pytorch_model-00001-of-00002.bin", "pytorch_model-00001-of-00003.bin"], &[]).is_err());
        assert!(grouped(&["pytorch_model.bin", "pytorch_model-00001-of-00001.bin"], &[]).is_err());
    }

    #[test]
    fn an_onnx_model_holds_the_files_it_names() {
        let files = ["onnx/model.onnx", "onnx/model.onnx_data", "onnx/w/b.bin", "onnx/other.bin", "config.json"];
        let got = grouped(&files, &[(files[0], &["model.onnx_data", "w/b.bin"])]).unwrap();
        assert_eq!(
            got,
            [
                row("PTCH", "onnx/other.bin", None, &["onnx/other.bin"]),
                row("ONNX", "onnx/model.onnx", Some(files[0]), &[files[1], files[2]]),
                file("config.json"),
            ]
        );
        // Inline: the model alone.
        assert_eq!(grouped(&["m.onnx"], &[("m.onnx", &[])]).unwrap(), [row("ONNX", "m.onnx", Some("m.onnx"), &[])]);
        // A file a model names is not a checkpoint candidate, nor a weights file of its own.
        let got = grouped(&["m.onnx", "weights.pt", "x.safetensors"], &[("m.onnx", &["weights.pt", "x.safetensors"])]);
        assert_eq!(got.unwrap(), [row("ONNX", "m.onnx", Some("m.onnx"), &["weights.pt", "x.safetensors"])]);
    }

    #[test]
    fn what_the_directory_refuses_of_an_onnx_model() {
        type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a [&'a str])], &'a str);
        let cases: [Case<'_>; 6] = [
            (
                &["m.onnx"],
                &[("m.onnx", &["gone.bin"])],
                "m.onnx: its external data names gone.bin, which is not a file",
            ),
            (
                &["a.onnx", "b.onnx", "w.bin"],
                &[("a.onnx", &["w.bin"]), ("b.onnx", &["w.bin"])],
                "w.bin: is named by two models, a.onnx and b.onnx",
            ),
            (
                &["a.onnx", "b.onnx"],
                &[("a.onnx", &["b.onnx"]), ("b.onnx", &[])],
                "b.onnx: is named by a.onnx, but is a model of its own",
            ),
            (&["m.onnx"], &[("m.onnx", &["m.onnx"])], "m.onnx: its external data names its own file"),
            // Its own directory's tree only: another directory's file is not there.
            (&["d/m.onnx", "w.bin"], &[("d/m.onnx", &["w.bin"])], "not a file of the directory"),
            (
                &["m.safetensors.index.json", "m.onnx", "w.safetensors"],
                &[("m.safetensors.index.json", &["w.safetensors"]), ("m.onnx", &["w.safetensors"])],
                "w.safetensors: is named by two models, m.onnx and m.safetensors.index.json",
            ),
        ];
        for (files, lists, why) in cases {
            let e = grouped(files, lists).unwrap_err().to_string();
            assert!(e.contains(why), "{files:?}: {e}");
        }
    }
}
