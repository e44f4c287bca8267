//! Which files of a directory form which component (directory contract
//! §3), by their names alone: safetensors models (`P.safetensors`, shards
//! `P-NNNNN-of-MMMMM.safetensors`, an index `P.safetensors.index.json`),
//! GGUF models (`P.gguf`, shards `P-NNNNN-of-MMMMM.gguf`), PyTorch
//! checkpoints (`pytorch_model.bin`, its shards and its index, grouped as a
//! safetensors model; any other `P.bin`, `P.pt`, `P.pth` a candidate, a
//! checkpoint or a file as its bytes say: revision 3, rule 3), and every
//! other file on its own. An index's own list of files is the one thing read from
//! a file; the caller hands it in, so this stays a pure function of names.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::text::escape_bytes;

/// What a safetensors index's name ends in.
const INDEX_SUFFIX: &[u8] = b".safetensors.index.json";

/// The one prefix whose `.bin` files and index form a PyTorch model by name.
const PT_PREFIX: &[u8] = b"pytorch_model";

/// The PyTorch index's name.
const PT_INDEX: &[u8] = b"pytorch_model.bin.index.json";

/// The suffixes of a file that is a PyTorch checkpoint when its bytes say so.
const PT_CANDIDATE: [&[u8]; 3] = [b".bin", b".pt", b".pth"];

/// A component to be labelled, before any weights file is opened. Paths are
/// relative to the root, `/`-separated, as raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// A safetensors model named `d/P`: through its index (every file it
    /// lists), or a complete shard set in shard order, or one file.
    Safetensors {
        /// `d/P`.
        name: Vec<u8>,
        /// `d/P.safetensors.index.json`, when the model has one.
        index: Option<Vec<u8>>,
        /// Its weights files; for a set, shard 1 first.
        files: Vec<Vec<u8>>,
    },
    /// A GGUF model named `d/P`: one file, or a complete shard set in shard
    /// order.
    Gguf {
        /// `d/P`.
        name: Vec<u8>,
        /// Its files; for a set, shard 1 first.
        files: Vec<Vec<u8>>,
    },
    /// A PyTorch model named `d/pytorch_model`: through its index, or a
    /// complete shard set in shard order, or one file.
    Pytorch {
        /// `d/pytorch_model`.
        name: Vec<u8>,
        /// `d/pytorch_model.bin.index.json`, when the model has one.
        index: Option<Vec<u8>>,
        /// Its files; for a set, shard 1 first.
        files: Vec<Vec<u8>>,
    },
    /// Any other `P.bin`, `P.pt` or `P.pth`: a PyTorch model named by its
    /// relative path when the contract accepts its bytes, else a file.
    Checkpoint(Vec<u8>),
    /// Any other file, named by its relative path.
    File(Vec<u8>),
}

/// A name's format, as its suffix says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Weights {
    Safetensors,
    Gguf,
    Pytorch,
}

impl Weights {
    fn suffix(self) -> &'static [u8] {
        match self {
            Weights::Safetensors => b".safetensors",
            Weights::Gguf => b".gguf",
            Weights::Pytorch => b".bin",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Weights::Safetensors => "safetensors",
            Weights::Gguf => "GGUF",
            Weights::Pytorch => "PyTorch",
        }
    }
}

/// What one name is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    /// `P` + suffix, `P` the whole stem.
    Single { prefix: Vec<u8> },
    /// `P-NNNNN-of-MMMMM` + suffix.
    Shard { prefix: Vec<u8>, no: u32, count: u32 },
}

fn five_digits(s: &[u8]) -> Option<u32> {
    if s.len() != 5 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |n, d| n.checked_mul(10)?.checked_add(u32::from(d.checked_sub(b'0')?)))
}

/// Reads a stem (the name without its suffix) as a shard name, else as a
/// single file's stem (contract §3: `x-00003-of-00002` is a single file).
fn role(stem: &[u8]) -> Role {
    // "-NNNNN-of-MMMMM" is 15 bytes.
    let shard = stem.len().checked_sub(15).and_then(|cut| {
        let (prefix, tail) = stem.split_at(cut);
        let no = five_digits(tail.get(1..6)?)?;
        let count = five_digits(tail.get(10..15)?)?;
        let fixed = tail.first() == Some(&b'-') && tail.get(6..10)? == b"-of-";
        (fixed && no >= 1 && no <= count).then(|| Role::Shard { prefix: prefix.to_vec(), no, count })
    });
    shard.unwrap_or_else(|| Role::Single { prefix: stem.to_vec() })
}

/// `d/P`, or `P` at the root.
fn joined(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return name.to_vec();
    }
    let mut out = dir.to_vec();
    out.push(b'/');
    out.extend_from_slice(name);
    out
}

/// Splits a relative path into its directory and its last name.
fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (path.get(..i).unwrap_or_default(), path.get(i.saturating_add(1)..).unwrap_or_default()),
        None => (&[], path),
    }
}

fn refused(name: &[u8], what: impl std::fmt::Display) -> Error {
    Error::schema(format!("{}: {what}", escape_bytes(name)))
}

/// Reads an index (by its relative path) and answers the names it lists.
pub type IndexLister<'a> = dyn FnMut(&[u8]) -> Result<Vec<Vec<u8>>> + 'a;

/// The files of one `(directory, format, prefix)`.
#[derive(Debug, Default)]
struct Family {
    singles: Vec<Vec<u8>>,
    /// (no, count, path).
    shards: Vec<(u32, u32, Vec<u8>)>,
    index: Option<Vec<u8>>,
}

/// Groups the content files of a directory into components (contract §3).
/// `index_files` reads an index (by its relative path) and answers the
/// plain file names it lists (its `weight_map`'s values, each once).
/// Errors name `d/P` or the file.
pub fn group(files: &[Vec<u8>], index_files: &mut IndexLister<'_>) -> Result<Vec<Planned>> {
    let mut families: BTreeMap<(Vec<u8>, Weights, Vec<u8>), Family> = BTreeMap::new();
    let mut plain = Vec::new();
    for path in files {
        let (dir, name) = split(path);
        let family = |w: Weights, prefix: &[u8]| (dir.to_vec(), w, prefix.to_vec());
        if let Some(prefix) = name.strip_suffix(INDEX_SUFFIX) {
            families.entry(family(Weights::Safetensors, prefix)).or_default().index = Some(path.clone());
            continue;
        }
        if name == PT_INDEX {
            families.entry(family(Weights::Pytorch, PT_PREFIX)).or_default().index = Some(path.clone());
            continue;
        }
        let weights = [Weights::Safetensors, Weights::Gguf].into_iter().find(|w| name.ends_with(w.suffix()));
        let Some(w) = weights else {
            if let Some(stem) = name.strip_suffix(Weights::Pytorch.suffix()) {
                let pt = family(Weights::Pytorch, PT_PREFIX);
                match role(stem) {
                    Role::Single { prefix } if prefix == PT_PREFIX => {
                        families.entry(pt).or_default().singles.push(path.clone());
                        continue;
                    }
                    Role::Shard { prefix, no, count } if prefix == PT_PREFIX => {
                        families.entry(pt).or_default().shards.push((no, count, path.clone()));
                        continue;
                    }
                    _ => {}
                }
            }
            if PT_CANDIDATE.iter().any(|s| name.ends_with(s)) {
                plain.push(Planned::Checkpoint(path.clone()));
            } else {
                plain.push(Planned::File(path.clone()));
            }
            continue;
        };
        let stem = name.get(..name.len().saturating_sub(w.suffix().len())).unwrap_or_default();
        match role(stem) {
            Role::Single { prefix } => families.entry(family(w, &prefix)).or_default().singles.push(path.clone()),
            Role::Shard { prefix, no, count } => {
                families.entry(family(w, &prefix)).or_default().shards.push((no, count, path.clone()));
            }
        }
    }

    // Indexes first: a file an index lists is that index's alone, whatever
    // its own name's prefix.
    let present: BTreeSet<&[u8]> = files.iter().map(Vec::as_slice).collect();
    let mut claimed: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    // Index path → the files it lists.
    let mut lists: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
    let mut out = Vec::new();
    // (directory, weights kind, prefix, index path) of each index.
    type Indexed = (Vec<u8>, Weights, Vec<u8>, Vec<u8>);
    let indexed: Vec<Indexed> = families
        .iter()
        .filter_map(|((dir, w, prefix), f)| f.index.clone().map(|i| (dir.clone(), *w, prefix.clone(), i)))
        .collect();
    for (dir, w, prefix, index) in &indexed {
        let model = joined(dir, prefix);
        let mut listed = Vec::new();
        for name in index_files(index)? {
            if name.is_empty() || name == b"." || name == b".." || name.contains(&b'/') {
                return Err(refused(
                    &model,
                    format!("its index lists {}, which is not a plain file name", escape_bytes(&name)),
                ));
            }
            let path = joined(dir, &name);
            if !present.contains(path.as_slice()) {
                return Err(refused(
                    &model,
                    format!("its index lists {}, which is not a file of the directory", escape_bytes(&name)),
                ));
            }
            if let Some(other) = claimed.insert(path.clone(), index.clone()) {
                return Err(refused(
                    &path,
                    format!("is listed by two indexes, {} and {}", escape_bytes(&other), escape_bytes(index)),
                ));
            }
            listed.push(path);
        }
        // An index that lists no file is a model of no file, as the
        // safetensors contract (§5) reads it and `gguf-digest INDEX` labels
        // it: its metadata is still content.
        lists.insert(index.clone(), listed.clone());
        out.push(match w {
            Weights::Pytorch => Planned::Pytorch { name: model, index: Some(index.clone()), files: listed },
            _ => Planned::Safetensors { name: model, index: Some(index.clone()), files: listed },
        });
    }
    // Then every family: its files not claimed by an index.
    for ((dir, w, prefix), f) in families {
        let model = joined(&dir, &prefix);
        let is_claimed = |p: &Vec<u8>| claimed.contains_key(p);
        if let Some(index) = &f.index {
            // Every file of this prefix must be one its own index lists.
            let unlisted =
                f.singles.iter().chain(f.shards.iter().map(|s| &s.2)).find(|p| claimed.get(*p) != Some(index));
            if let Some(p) = unlisted {
                return Err(refused(&model, format!("{} is not listed by its index", escape_bytes(p))));
            }
            single_beside_index(&model, w, &f.singles, lists.get(index).map_or(&[], Vec::as_slice))?;
            continue;
        }
        let singles: Vec<&Vec<u8>> = f.singles.iter().filter(|p| !is_claimed(p)).collect();
        let mut shards: Vec<&(u32, u32, Vec<u8>)> = f.shards.iter().filter(|s| !is_claimed(&s.2)).collect();
        // A shard of this prefix listed by another index, while this prefix
        // has no index of its own, simply belongs to that index.
        match (singles.as_slice(), shards.is_empty()) {
            ([], true) => {}
            ([one], true) => out.push(planned(w, model, vec![(*one).clone()])),
            ([_, _, ..], _) => return Err(refused(&model, "two files claim the same model name")),
            ([one], false) => {
                return Err(refused(&model, format!("{} lies beside shards of the same name", escape_bytes(one))));
            }
            ([], false) => {
                shards.sort();
                let count = shards.first().map_or(0, |s| s.1);
                if shards.iter().any(|s| s.1 != count) {
                    return Err(refused(&model, "its shards name two different shard counts"));
                }
                let numbers: Vec<u32> = shards.iter().map(|s| s.0).collect();
                let want: Vec<u32> = (1..=count).collect();
                if numbers != want {
                    let missing: Vec<String> =
                        want.iter().filter(|n| !numbers.contains(n)).map(|n| format!("{n:05}")).collect();
                    return Err(refused(
                        &model,
                        format!("shard set of {count} is incomplete: missing {}", missing.join(", ")),
                    ));
                }
                out.push(planned(w, model, shards.into_iter().map(|s| s.2.clone()).collect()));
            }
        }
    }
    // A file an index lists enters through that model only.
    out.extend(
        plain
            .into_iter()
            .filter(|p| !matches!(p, Planned::File(f) | Planned::Checkpoint(f) if claimed.contains_key(f))),
    );
    Ok(out)
}

/// Contract §3.1 (revision 2), for any weights kind read through an index:
/// `P<suffix>` beside `P<suffix>.index.json` must be the index's only file.
/// `transformers` loads `P<suffix>` alone whenever it exists and never reads
/// the index, while other readers follow the index: a split between the two
/// would be one model to one reader and part of it to another.
fn single_beside_index(model: &[u8], w: Weights, singles: &[Vec<u8>], listed: &[Vec<u8>]) -> Result<()> {
    let Some(single) = singles.first() else { return Ok(()) };
    let others: Vec<String> = listed.iter().filter(|p| *p != single).map(|p| escape_bytes(p).to_string()).collect();
    if others.is_empty() {
        return Ok(());
    }
    let (_, shown) = split(single);
    Err(refused(
        model,
        format!(
            "{single} lies beside its index, which also lists {others}: transformers loads {shown} alone whenever it \
             exists and never reads the index, while other readers follow the index, so the two would load different \
             weights; keep {shown} alone (delete the index and the other files) or remove {shown} \
             (its {kind} tensors then belong in a file the index lists)",
            single = escape_bytes(single),
            others = others.join(", "),
            shown = escape_bytes(shown),
            kind = w.name(),
        ),
    ))
}

fn planned(w: Weights, name: Vec<u8>, files: Vec<Vec<u8>>) -> Planned {
    match w {
        Weights::Safetensors => Planned::Safetensors { name, index: None, files },
        Weights::Gguf => Planned::Gguf { name, files },
        Weights::Pytorch => Planned::Pytorch { name, index: None, files },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn no_index(_: &[u8]) -> Result<Vec<Vec<u8>>> {
        Err(Error::schema("no index expected"))
    }

    fn grouped(files: &[&str], indexes: &[(&str, &[&str])]) -> Result<Vec<Planned>> {
        let mut lookup = |p: &[u8]| -> Result<Vec<Vec<u8>>> {
            let found = indexes.iter().find(|(i, _)| i.as_bytes() == p);
            found.map(|(_, l)| names(l)).ok_or_else(|| Error::schema("unknown index"))
        };
        group(&names(files), &mut lookup)
    }

    #[test]
    fn a_snapshot_groups_weights_and_files() {
        let files = ["config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json", "q/m.Q4_0.gguf"];
        let got = group(&names(&files), &mut no_index).unwrap();
        assert!(got.contains(&Planned::Safetensors {
            name: b"model".to_vec(),
            index: None,
            files: names(&["model.safetensors"])
        }));
        assert!(got.contains(&Planned::Gguf { name: b"q/m.Q4_0".to_vec(), files: names(&["q/m.Q4_0.gguf"]) }));
        for f in ["config.json", "tokenizer.json", "1_Pooling/config.json"] {
            assert!(got.contains(&Planned::File(f.as_bytes().to_vec())), "{f}");
        }
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn shard_sets_and_indexes() {
        let set = ["m-00002-of-00002.safetensors", "m-00001-of-00002.safetensors"];
        let got = group(&names(&set), &mut no_index).unwrap();
        assert_eq!(got, [Planned::Safetensors { name: b"m".to_vec(), index: None, files: names(&[set[1], set[0]]) }]);
        // An empty prefix, as for GGUF.
        let got = group(&names(&["-00001-of-00001.gguf"]), &mut no_index).unwrap();
        assert_eq!(got, [Planned::Gguf { name: b"".to_vec(), files: names(&["-00001-of-00001.gguf"]) }]);
        // An index lists files whatever their prefix.
        let files = ["d/model.safetensors.index.json", "d/a.safetensors", "d/w-00001-of-00002.safetensors"];
        let got = grouped(&files, &[(files[0], &["a.safetensors", "w-00001-of-00002.safetensors"])]).unwrap();
        assert_eq!(
            got,
            [Planned::Safetensors {
                name: b"d/model".to_vec(),
                index: Some(files[0].as_bytes().to_vec()),
                files: names(&[files[1], files[2]])
            }]
        );
        // A name that only looks like a shard is a single file.
        let got = group(&names(&["x-00003-of-00002.safetensors"]), &mut no_index).unwrap();
        assert_eq!(
            got,
            [Planned::Safetensors {
                name: b"x-00003-of-00002".to_vec(),
                index: None,
                files: names(&["x-00003-of-00002.safetensors"])
            }]
        );
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
        assert_eq!(
            got,
            [Planned::Safetensors {
                name: b"m".to_vec(),
                index: Some(files[0].as_bytes().to_vec()),
                files: names(&["m.safetensors"])
            }]
        );
    }

    #[test]
    fn the_index_of_another_directory_cannot_reach_in() {
        // Names an index lists are plain names in its own directory.
        let files = ["a/m.safetensors.index.json", "b/w.safetensors"];
        let e = grouped(&files, &[(files[0], &["w.safetensors"])]).unwrap_err().to_string();
        assert!(e.contains("not a file of the directory"), "{e}");
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
            Planned::Pytorch {
                name: b"pytorch_model".to_vec(),
                index: None,
                files: names(&["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"]),
            },
            Planned::Pytorch { name: b"d/pytorch_model".to_vec(), index: None, files: names(&["d/pytorch_model.bin"]) },
            Planned::Checkpoint(b"w.pt".to_vec()),
            Planned::Checkpoint(b"e/x.pth".to_vec()),
            Planned::Checkpoint(b"other-00001-of-00002.bin".to_vec()),
            Planned::File(b"t.ckpt".to_vec()),
            Planned::File(b"pytorch_model.bin.json".to_vec()),
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
            [Planned::Pytorch {
                name: b"pytorch_model".to_vec(),
                index: Some(b"pytorch_model.bin.index.json".to_vec()),
                files: names(&["a.bin", "pytorch_model-00001-of-00001.bin"]),
            }]
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
}
