//! Shard sets (docs/SPEC.md P8): a set found by its first shard, by its
//! index or handed by a directory's walk, each file read alone, then
//! joined: every root a mapping of string keys, no key in two shards, the
//! index listing exactly each key where it is, the root their union.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::jobs::jobs;
use super::{IndexInfo, Layout, Model, Part, PickleFacts, Placed, checkpoint_err, read_part};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::OpenOptions;
use crate::pytorch::pickle::{self, Dict, DictKind, Obj};
use crate::pytorch::shards::{self, Index, ShardName};
use crate::pytorch::tree::Tree;
use crate::source::{Beside, Source};

impl Model {
    /// The set whose first shard `first` is, its siblings opened beside it
    /// (a later shard is refused naming the first, as for the other formats).
    pub(super) fn open_shard_set(first: Source, beside: &Beside, name: &ShardName, opts: OpenOptions) -> Result<Model> {
        if name.no != 1 {
            let first_path = beside.path_of(&name.sibling(1));
            let kind = ErrorKind::NotFirstShard { no: name.no, count: name.count, first: first_path };
            return Err(Error::new(kind).in_file(first.path()));
        }
        let path = first.path().to_path_buf();
        let mut parts = vec![read_part(first)?];
        for no in 2..=name.count {
            let sibling = name.sibling(no);
            let source = match beside.open(&sibling, opts.read_mode) {
                Ok(s) => s,
                Err(e) if e.is_not_found() => {
                    let kind = ErrorKind::MissingShard { no, count: name.count, path: beside.path_of(&sibling) };
                    return Err(Error::new(kind).in_file(&path));
                }
                Err(e) => return Err(e),
            };
            parts.push(read_part(source)?);
        }
        Model::join(parts, None, opts)
    }

    /// A model of files already open (a directory's walk opened them):
    /// one checkpoint, or with `set` the shard set they are, in any order.
    pub fn from_files(sources: Vec<Source>, set: bool, opts: OpenOptions) -> Result<Model> {
        let mut parts = Vec::with_capacity(sources.len());
        for s in sources {
            parts.push(read_part(s)?);
        }
        match (set, parts.len()) {
            (false, 1) => Model::single(parts.remove(0), opts),
            (false, _) => Err(Error::internal("several files that are not a shard set")),
            (true, _) => Model::join(parts, None, opts),
        }
    }

    /// Reads a checkpoint's index (`P.bin.index.json`), bounded as a
    /// safetensors index is.
    pub fn read_index(index_file: &Source) -> Result<Index> {
        let located = |e: Error| e.in_file(index_file.path());
        if index_file.len() > shards::MAX_INDEX {
            let msg = format!(
                "an index of {} bytes (at most {} are read, as for a safetensors index)",
                index_file.len(),
                shards::MAX_INDEX
            );
            return Err(located(Error::schema(msg).at(0)));
        }
        shards::parse_index(&index_file.head(index_file.len())?).map_err(located)
    }

    /// The model of an index (`given`: the shard named, which it must list).
    pub(super) fn open_index(index_file: Source, given: Option<&Path>, opts: OpenOptions) -> Result<Model> {
        let index_path = index_file.path().to_path_buf();
        let index = Model::read_index(&index_file)?;
        let beside = index_file.beside()?;
        drop(index_file);
        Model::from_index(&index_path, index, given, opts, &mut |name| beside.open(name, opts.read_mode))
    }

    /// The model of an index already read (`index_path` names it), its
    /// files opened by `open` from their plain names (a directory's walk
    /// hands the files it resolved, each opened once).
    pub fn from_index(
        index_path: &Path,
        index: Index,
        given: Option<&Path>,
        opts: OpenOptions,
        open: &mut dyn FnMut(&OsStr) -> Result<Source>,
    ) -> Result<Model> {
        if let Some(given) = given {
            let listed = given.file_name().and_then(|n| n.to_str()).is_some_and(|n| index.files.iter().any(|f| f == n));
            if !listed {
                let what = format!(
                    "{} does not list this file",
                    crate::text::escape_bytes(index_path.as_os_str().as_encoded_bytes())
                );
                return Err(checkpoint_err(what).in_file(given));
            }
        }
        let mut parts = Vec::with_capacity(index.files.len());
        for name in &index.files {
            let source = open(OsStr::new(name)).map_err(|e| e.in_file(index_path))?;
            parts.push(read_part(source)?);
        }
        Model::join(parts, Some((index_path.to_path_buf(), index)), opts)
    }

    /// Shards joined into one model: each root a mapping of string keys
    /// without attributes, no key in two shards, the index (if any)
    /// listing exactly each key with the file that holds it; the root is
    /// their union.
    fn join(parts: Vec<Part>, index: Option<(PathBuf, Index)>, opts: OpenOptions) -> Result<Model> {
        let mut owner: HashMap<Box<[u8]>, usize> = HashMap::new();
        for (i, part) in parts.iter().enumerate() {
            let path = part.source.path();
            let keys = root_keys(&part.tree).map_err(|e| e.in_file(path))?;
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            for key in keys {
                if let Some((_, wm)) = &index {
                    let listed = std::str::from_utf8(key).ok().and_then(|k| wm.weight_map.get(k));
                    if listed.map(String::as_str) != Some(file_name) {
                        let what = match listed {
                            Some(other) => {
                                format!("the index lists this key in {}", crate::text::escape_bytes(other.as_bytes()))
                            }
                            None => "the index does not list this key".to_string(),
                        };
                        return Err(shards::mismatch(what, key).in_file(path));
                    }
                }
                if let Some(&other) = owner.get(key) {
                    let other = parts.get(other).map(|o| o.source.path().to_path_buf()).unwrap_or_default();
                    let e = Error::new(ErrorKind::TensorInTwoShards { other });
                    return Err(e.about(Subject::Key(key.to_vec())).in_file(path));
                }
                owner.insert(key.into(), i);
            }
        }
        if let Some((index_path, wm)) = &index {
            for (key, file) in &wm.weight_map {
                let held =
                    owner.get(key.as_bytes()).and_then(|&i| parts.get(i)).and_then(|p| p.source.path().file_name());
                if held != Some(OsStr::new(file)) {
                    let what = format!(
                        "the index lists this key in {}, which does not hold it",
                        crate::text::escape_bytes(file.as_bytes())
                    );
                    return Err(shards::mismatch(what, key.as_bytes()).in_file(index_path));
                }
            }
        }
        let shown =
            index.as_ref().map(|(p, _)| p.clone()).or_else(|| parts.first().map(|p| p.source.path().to_path_buf()));
        let (mut sources, layout, tree, mut placed, big_endian, facts) = union(parts).map_err(|e| match &shown {
            Some(p) => e.in_file(p),
            None => e,
        })?;
        let jobs = jobs(&tree, &mut placed)?;
        let index = index.map(|(path, i)| IndexInfo { path, total_size: i.total_size });
        if sources.is_empty() {
            return Err(Error::internal("a shard set of no file"));
        }
        let source = sources.remove(0);
        Ok(Model { source, more: sources, layout, tree, placed, big_endian, facts, jobs, index, pieces: opts.pieces })
    }
}

/// The keys of a shard's root: it must be a mapping of string keys
/// without attributes (SPEC P8).
fn root_keys(tree: &Tree) -> Result<Vec<&[u8]>> {
    let refuse = |what: &str| {
        checkpoint_err(format!(
            "a shard's root is {what}: each shard of a set holds a mapping of string keys without attributes (docs/SPEC.md P8)"
        ))
    };
    let Some(Obj::Dict(d)) = tree.objs.get(tree.root) else {
        return Err(refuse(tree.objs.get(tree.root).map_or("nothing", Obj::what)));
    };
    let attrs = d.attrs.and_then(|a| tree.objs.get(a));
    if matches!(attrs, Some(Obj::Dict(a)) if !a.entries.is_empty()) {
        return Err(refuse("a mapping with attributes"));
    }
    d.entries
        .iter()
        .map(|&(k, _)| match tree.objs.get(k) {
            Some(Obj::Str(s)) => Ok(&**s),
            other => Err(refuse(&format!("a mapping with a key that is {}", other.map_or("nothing", Obj::what)))),
        })
        .collect()
}

/// An object of one file's arena moved into the union's: its object and
/// storage indices shifted.
fn shifted(obj: Obj, objs: usize, storages: usize) -> Result<Obj> {
    let o = |id: usize| id.checked_add(objs).ok_or_else(|| Error::internal("objects beyond usize"));
    let all = |ids: Vec<usize>| ids.into_iter().map(o).collect::<Result<Vec<_>>>();
    Ok(match obj {
        Obj::Tuple(items) => Obj::Tuple(all(items)?),
        Obj::List(items) => Obj::List(all(items)?),
        Obj::Set(items) => Obj::Set(all(items)?),
        Obj::Dict(d) => Obj::Dict(Dict {
            entries: d.entries.into_iter().map(|(k, v)| Ok((o(k)?, o(v)?))).collect::<Result<Vec<_>>>()?,
            kind: d.kind,
            attrs: d.attrs.map(o).transpose()?,
        }),
        Obj::Storage(s) => {
            Obj::Storage(s.checked_add(storages).ok_or_else(|| Error::internal("storages beyond usize"))?)
        }
        Obj::Tensor(mut t) => {
            t.storage = t.storage.checked_add(storages).ok_or_else(|| Error::internal("storages beyond usize"))?;
            t.attrs = t.attrs.map(o).transpose()?;
            Obj::Tensor(t)
        }
        other => other,
    })
}

type Union = (Vec<Source>, Layout, Tree, Vec<Placed>, bool, PickleFacts);

/// The shards' trees as one: their arenas end to end and a plain mapping
/// of every shard root's entries, checked again as one tree (its bounds
/// are the whole model's).
fn union(parts: Vec<Part>) -> Result<Union> {
    let mut objs: Vec<Obj> = Vec::new();
    let mut storages = Vec::new();
    let mut placed = Vec::new();
    let mut entries = Vec::new();
    let mut sources = Vec::with_capacity(parts.len());
    let mut layout = None;
    let mut big = false;
    let (mut protocol, mut globals, mut opcodes, mut requires_grad) = (0u8, BTreeSet::new(), 0u64, 0u64);
    for (file, part) in parts.into_iter().enumerate() {
        let Part { source, layout: l, tree, placed: p, big_endian, facts } = part;
        let (base, sbase) = (objs.len(), storages.len());
        let root = tree.root;
        if let Some(Obj::Dict(d)) = tree.objs.get(root) {
            for &(k, v) in &d.entries {
                let k = k.checked_add(base).ok_or_else(|| Error::internal("objects beyond usize"))?;
                let v = v.checked_add(base).ok_or_else(|| Error::internal("objects beyond usize"))?;
                entries.push((k, v));
            }
        }
        for obj in tree.objs {
            objs.push(shifted(obj, base, sbase)?);
        }
        storages.extend(tree.storages);
        placed.extend(p.into_iter().map(|p| Placed { file, big_endian, ..p }));
        layout.get_or_insert(l);
        big |= big_endian;
        protocol = protocol.max(facts.protocol);
        globals.extend(facts.globals);
        opcodes = opcodes.saturating_add(facts.opcodes);
        requires_grad = requires_grad.saturating_add(facts.requires_grad);
        sources.push(source);
    }
    let root = objs.len();
    objs.push(Obj::Dict(Dict { entries, kind: DictKind::Plain, attrs: None }));
    let facts = PickleFacts { protocol, globals: globals.iter().cloned().collect(), opcodes, requires_grad };
    let pickle = pickle::Pickle { objs, root, storages, end: 0, protocol, globals, opcodes, requires_grad };
    let tree = Tree::new(pickle)?;
    let layout = layout.ok_or_else(|| Error::internal("a shard set of no file"))?;
    Ok((sources, layout, tree, placed, big, facts))
}
