//! A format's rule in a directory (directory contract §3,
//! docs/adr/0047-directory-rules-in-formats.md): which of a directory's
//! files form the format's components, and how one is opened from its open
//! files. Each format answers in its own folder through
//! [`FileFormat::directory_rule`](crate::format::FileFormat::directory_rule);
//! the directory asks every format of the registry and names none. What
//! the contract says for every format alike (shard names, an index's files,
//! which file lists which) is here, so a rule is a few lines.
//!
//! A rule is asked in three steps: which files *list* others (an index, an
//! ONNX model: [`DirectoryRule::list_head`]), read first, each list's files
//! then belonging to it alone ([`Claims`]); which files form its components
//! ([`DirectoryRule::group`], on names and lists alone); and, once every
//! file of a component is open, its model ([`DirectoryRule::open`]).

use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::{AnyModel, OpenOptions};
use crate::source::Source;
use crate::text::escape_bytes;

/// A file that lists other files of its directory, before it is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListHead {
    /// The component it heads: `d/P` for an index, the model's own
    /// relative path for an ONNX model.
    pub model: Vec<u8>,
    /// How its list is named in an error: "its index lists".
    pub lists: &'static str,
    /// Whether a listed name may be several components below the list's
    /// directory (`sub/x.bin`), else one plain file name.
    pub nested: bool,
    /// Whether it is an index (two indexes listing one file are "two
    /// indexes" in the error).
    pub index: bool,
}

/// What reading a list kept for opening its component (the open file,
/// what was parsed), handed back to [`DirectoryRule::open`].
pub type Held = Box<dyn Any + Send + Sync>;

/// Which file lists which: every file a list names, to the file whose list
/// names it (a file that lists is its own), and each list's files as
/// relative paths.
#[derive(Debug, Default, Clone)]
pub struct Claims {
    /// A file's relative path → the relative path of the list it belongs to.
    pub by: BTreeMap<Vec<u8>, Vec<u8>>,
    /// A list's relative path → the relative paths it names, in its order.
    pub lists: BTreeMap<Vec<u8>, Vec<Vec<u8>>>,
}

impl Claims {
    /// The list `path` belongs to, if any.
    pub fn owner(&self, path: &[u8]) -> Option<&[u8]> {
        self.by.get(path).map(Vec::as_slice)
    }

    /// The files the list `head` names.
    pub fn list(&self, head: &[u8]) -> &[Vec<u8>] {
        self.lists.get(head).map_or(&[], Vec::as_slice)
    }
}

/// A component a rule plans, before any of its files is opened. Paths are
/// relative to the root, `/`-separated, raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Its name: `d/P`, or a file's relative path.
    pub name: Vec<u8>,
    /// The file that listed its files (an index, an ONNX model), if one did.
    pub head: Option<Vec<u8>>,
    /// Its other files; for a shard set, shard 1 first.
    pub files: Vec<Vec<u8>>,
}

/// What a planned component turned out to be once opened.
pub enum Placed {
    /// A model of the format; `keep` is a file the directory holds open
    /// beside it (an index, whose `metadata` is in the label but which is no
    /// file the model hashes).
    Model {
        /// The model.
        model: AnyModel,
        /// The head, when the model does not hold it itself.
        keep: Option<Source>,
    },
    /// A file its name made a candidate for the format that its bytes did
    /// not (a `.pt` the PyTorch contract refuses): a `FILE`, and why.
    File {
        /// The file.
        source: Source,
        /// Why it is not the format's.
        note: String,
    },
}

impl std::fmt::Debug for Placed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placed::Model { model, .. } => f.debug_tuple("Model").field(model).finish(),
            Placed::File { source, note } => f.debug_tuple("File").field(&source.path()).field(note).finish(),
        }
    }
}

/// A format's rule in a directory; see the module's documentation.
pub trait DirectoryRule: Sync {
    /// Whether the file at relative path `path` lists other files of its
    /// directory that then belong to the component it heads, and how.
    fn list_head(&self, path: &[u8]) -> Option<ListHead>;

    /// Reads such a file: the names it lists (relative to its directory,
    /// each once), and what to keep for [`DirectoryRule::open`].
    fn read_list(&self, source: Source, opts: OpenOptions) -> Result<(Vec<Vec<u8>>, Held)>;

    /// The format's components among `files` (every content file of the
    /// directory), given which files the lists claimed: a file another
    /// list claims is not the format's unless its own list's.
    fn group(&self, files: &[Vec<u8>], claims: &Claims) -> Result<Vec<Planned>>;

    /// Opens `planned` from what its head's reading kept and its other
    /// files, open, in [`Planned::files`] order. `dir` is the directory as
    /// shown, for an error about the whole set.
    fn open(
        &self,
        planned: &Planned,
        held: Option<Held>,
        files: Vec<(Vec<u8>, Source)>,
        dir: &Path,
        opts: OpenOptions,
    ) -> Result<Placed>;
}

/// `d/P`, or `P` at the root.
pub fn joined(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return name.to_vec();
    }
    let mut out = dir.to_vec();
    out.push(b'/');
    out.extend_from_slice(name);
    out
}

/// A relative path's directory and last name.
pub fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (path.get(..i).unwrap_or_default(), path.get(i.saturating_add(1)..).unwrap_or_default()),
        None => (&[], path),
    }
}

/// A grouping refused: `name: what`.
pub fn refused(name: &[u8], what: impl std::fmt::Display) -> Error {
    Error::schema(format!("{}: {what}", escape_bytes(name)))
}

/// What one name is, by the contract's shard naming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// `P` + suffix, `P` the whole stem.
    Single {
        /// `P`.
        prefix: Vec<u8>,
    },
    /// `P-NNNNN-of-MMMMM` + suffix.
    Shard {
        /// `P`.
        prefix: Vec<u8>,
        /// `NNNNN`.
        no: u32,
        /// `MMMMM`.
        count: u32,
    },
}

fn five_digits(s: &[u8]) -> Option<u32> {
    if s.len() != 5 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |n, d| n.checked_mul(10)?.checked_add(u32::from(d.checked_sub(b'0')?)))
}

/// Reads a stem (the name without its suffix) as a shard name, else as a
/// single file's stem (contract §3: `x-00003-of-00002` is a single file).
pub fn role(stem: &[u8]) -> Role {
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

/// A weights format's models as the contract groups safetensors, GGUF and
/// `pytorch_model` files (§3 rules 1 to 3): in each directory `d`, for one
/// prefix `P`, the single file `P<suffix>`, the shards
/// `P-NNNNN-of-MMMMM<suffix>` and, where the format has one, the index
/// `P<index>`, as one model named `d/P`.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// What its weights files' names end in: `.safetensors`.
    pub suffix: &'static [u8],
    /// The one prefix whose files are the format's by name, when only one
    /// is (`pytorch_model`); any prefix when `None`.
    pub prefix: Option<&'static [u8]>,
    /// What its index's name is `P` followed by, when it has one.
    pub index: Option<&'static [u8]>,
    /// The format in words, in an error: "safetensors".
    pub words: &'static str,
}

/// The files of one `(directory, prefix)`.
#[derive(Debug, Default)]
struct Members {
    singles: Vec<Vec<u8>>,
    /// (no, count, path).
    shards: Vec<(u32, u32, Vec<u8>)>,
    index: Option<Vec<u8>>,
}

impl Family {
    /// The prefix `P` when `name` (a last name) is the family's index.
    pub fn index_prefix<'n>(&self, name: &'n [u8]) -> Option<&'n [u8]> {
        let prefix = name.strip_suffix(self.index?)?;
        self.prefix.is_none_or(|p| p == prefix).then_some(prefix)
    }

    /// The list head of the family's index at `path`, if it is one.
    pub fn list_head(&self, path: &[u8]) -> Option<ListHead> {
        let (dir, name) = split(path);
        let prefix = self.index_prefix(name)?;
        Some(ListHead { model: joined(dir, prefix), lists: "its index lists", nested: false, index: true })
    }

    /// `name`'s role in the family, when it is a weights file of it.
    pub fn member(&self, name: &[u8]) -> Option<Role> {
        let stem = name.strip_suffix(self.suffix)?;
        let role = role(stem);
        let prefix = match &role {
            Role::Single { prefix } | Role::Shard { prefix, .. } => prefix,
        };
        self.prefix.is_none_or(|p| p == prefix.as_slice()).then_some(role)
    }

    /// The family's models among `files` (§3 rule 1's reading, for any
    /// weights kind): through its index when it has one, else a complete
    /// shard set, else one file; the models with an index first, each in
    /// (directory, prefix) order. Errors name `d/P`.
    pub fn group(&self, files: &[Vec<u8>], claims: &Claims) -> Result<Vec<Planned>> {
        let mut families: BTreeMap<(Vec<u8>, Vec<u8>), Members> = BTreeMap::new();
        for path in files {
            let (dir, name) = split(path);
            if let Some(prefix) = self.index_prefix(name) {
                families.entry((dir.to_vec(), prefix.to_vec())).or_default().index = Some(path.clone());
                continue;
            }
            match self.member(name) {
                Some(Role::Single { prefix }) => {
                    families.entry((dir.to_vec(), prefix)).or_default().singles.push(path.clone());
                }
                Some(Role::Shard { prefix, no, count }) => {
                    families.entry((dir.to_vec(), prefix)).or_default().shards.push((no, count, path.clone()));
                }
                None => {}
            }
        }
        let (mut indexed, mut out) = (Vec::new(), Vec::new());
        for ((dir, prefix), f) in families {
            let model = joined(&dir, &prefix);
            if let Some(index) = &f.index {
                // Every file of this prefix must be one its own index lists.
                let unlisted = f
                    .singles
                    .iter()
                    .chain(f.shards.iter().map(|s| &s.2))
                    .find(|p| claims.owner(p) != Some(index.as_slice()));
                if let Some(p) = unlisted {
                    return Err(refused(&model, format!("{} is not listed by its index", escape_bytes(p))));
                }
                let listed = claims.list(index);
                self.single_beside_index(&model, &f.singles, listed)?;
                // An index that lists no file is a model of no file, as the
                // safetensors contract (§5) reads it: its metadata is content.
                indexed.push(Planned { name: model, head: Some(index.clone()), files: listed.to_vec() });
                continue;
            }
            // A file of this prefix another list claims belongs to that list.
            let singles: Vec<&Vec<u8>> = f.singles.iter().filter(|p| claims.owner(p).is_none()).collect();
            let mut shards: Vec<&(u32, u32, Vec<u8>)> =
                f.shards.iter().filter(|s| claims.owner(&s.2).is_none()).collect();
            match (singles.as_slice(), shards.is_empty()) {
                ([], true) => {}
                ([one], true) => out.push(Planned { name: model, head: None, files: vec![(*one).clone()] }),
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
                    let files = shards.into_iter().map(|s| s.2.clone()).collect();
                    out.push(Planned { name: model, head: None, files });
                }
            }
        }
        indexed.extend(out);
        Ok(indexed)
    }

    /// Contract §3.1 (revision 2), for any weights kind read through an
    /// index: `P<suffix>` beside its index must be the index's only file.
    /// `transformers` loads `P<suffix>` alone whenever it exists and never
    /// reads the index, while other readers follow the index: a split
    /// between the two would be one model to one reader and part of it to
    /// another.
    fn single_beside_index(&self, model: &[u8], singles: &[Vec<u8>], listed: &[Vec<u8>]) -> Result<()> {
        let Some(single) = singles.first() else { return Ok(()) };
        let others: Vec<String> = listed.iter().filter(|p| *p != single).map(|p| escape_bytes(p).to_string()).collect();
        if others.is_empty() {
            return Ok(());
        }
        let (_, shown) = split(single);
        Err(refused(
            model,
            format!(
                "{single} lies beside its index, which also lists {others}: transformers loads {shown} alone whenever \
                 it exists and never reads the index, while other readers follow the index, so the two would load \
                 different weights; keep {shown} alone (delete the index and the other files) or remove {shown} \
                 (its {kind} tensors then belong in a file the index lists)",
                single = escape_bytes(single),
                others = others.join(", "),
                shown = escape_bytes(shown),
                kind = self.words,
            ),
        ))
    }
}

/// The open files of a planned component by their last names (what an
/// index or a shard's split keys name them by), to be taken once each.
pub fn by_last_name(files: Vec<(Vec<u8>, Source)>) -> BTreeMap<Vec<u8>, Source> {
    files.into_iter().map(|(path, s)| (split(&path).1.to_vec(), s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ST: Family =
        Family { suffix: b".safetensors", prefix: None, index: Some(b".safetensors.index.json"), words: "x" };

    fn names(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn shard_names_and_singles() {
        assert_eq!(role(b"m-00001-of-00002"), Role::Shard { prefix: b"m".to_vec(), no: 1, count: 2 });
        assert_eq!(role(b"-00001-of-00001"), Role::Shard { prefix: Vec::new(), no: 1, count: 1 });
        assert_eq!(role(b"x-00003-of-00002"), Role::Single { prefix: b"x-00003-of-00002".to_vec() });
        assert_eq!(role(b"x-00000-of-00002"), Role::Single { prefix: b"x-00000-of-00002".to_vec() });
        assert_eq!(split(b"a/b/c"), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(joined(b"", b"c"), b"c");
    }

    #[test]
    fn a_family_groups_sets_and_refuses_what_the_contract_refuses() {
        let got =
            ST.group(&names(&["m-00002-of-00002.safetensors", "m-00001-of-00002.safetensors"]), &Claims::default());
        assert_eq!(
            got.unwrap(),
            [Planned {
                name: b"m".to_vec(),
                head: None,
                files: names(&["m-00001-of-00002.safetensors", "m-00002-of-00002.safetensors"])
            }]
        );
        let e = ST.group(&names(&["m-00001-of-00002.safetensors"]), &Claims::default()).unwrap_err();
        assert!(e.to_string().contains("incomplete: missing 00002"), "{e}");
        // A file another list claims is that list's.
        let mut claims = Claims::default();
        claims.by.insert(b"w.safetensors".to_vec(), b"m.onnx".to_vec());
        assert!(ST.group(&names(&["w.safetensors"]), &claims).unwrap().is_empty());
    }
}
