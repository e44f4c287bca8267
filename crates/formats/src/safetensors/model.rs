//! The logical safetensors model: one file, a shard set, or the files of an
//! index, with each file's applicable metadata map and its group, the
//! tensors sorted by name with offsets recomputed (docs/SPEC.md).

use crate::safetensors::SafetensorsErrorKind;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::OpenOptions;
use crate::hash::{Conversion, Digest, Job, PieceSizes, Sha256Digest};
use crate::safetensors::header::{SafetensorsFile, TensorEntry, parse_prefix};
use crate::safetensors::index::{Declared, Index, read_index_from};
use crate::safetensors::names::{INDEX_SUFFIX, ShardName, plain_name_in};
use crate::source::{Beside, ReadMode, Source};

/// One file of a model, opened and parsed.
#[derive(Debug)]
pub struct StFile {
    /// The open file.
    pub source: Source,
    /// What its header says.
    pub file: SafetensorsFile,
    /// Index into [`Model::groups`] of its applicable metadata map.
    pub group: usize,
}

impl StFile {
    /// Opens the file `name` beside another, beneath its root.
    fn open_beside(beside: &Beside, name: &std::ffi::OsStr, mode: ReadMode) -> Result<(Source, SafetensorsFile)> {
        let source = beside.open(name, mode)?;
        let file = Self::parse(&source)?;
        Ok((source, file))
    }

    fn parse(source: &Source) -> Result<SafetensorsFile> {
        source.parse(parse_prefix)
    }

    /// The path the file was opened by.
    pub fn path(&self) -> &Path {
        self.source.path()
    }
}

/// A metadata group: one applicable metadata map, canonically encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The map, sorted by key bytes.
    pub map: BTreeMap<String, String>,
    /// `LE_u64(M) || (H(key) || LE_u64(len(value)) || H(value))*`.
    pub bytes: Vec<u8>,
    /// `H(bytes)`: what each tensor record carries.
    pub digest: Sha256Digest,
}

impl Group {
    fn new(map: BTreeMap<String, String>) -> Group {
        let mut bytes = Vec::with_capacity(map.len().saturating_mul(72).saturating_add(8));
        bytes.extend_from_slice(&(map.len() as u64).to_le_bytes());
        // A BTreeMap of Strings iterates in byte order of the keys.
        for (k, v) in &map {
            bytes.extend_from_slice(&Sha256::digest(k.as_bytes()));
            bytes.extend_from_slice(&(v.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&Sha256::digest(v.as_bytes()));
        }
        let digest = Sha256::digest(&bytes).into();
        Group { map, bytes, digest }
    }
}

/// A tensor of the logical model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelTensor {
    /// The header entry.
    pub entry: TensorEntry,
    /// Index into [`Model::files`] of the file holding it.
    pub file: usize,
    /// Its recomputed offset: the running sum of `nbytes` in name order.
    pub offset: u64,
}

/// How the model was found: the index it was opened through, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexInfo {
    /// The index file's path.
    pub path: PathBuf,
    /// Its `metadata.total_size`, if present (derived: never in the label).
    pub total_size: Option<Declared>,
    /// Its `metadata.total_parameters`, if present (derived: never in the
    /// label).
    pub total_parameters: Option<Declared>,
}

/// A logical safetensors model.
#[derive(Debug)]
pub struct Model {
    files: Vec<StFile>,
    groups: Vec<Group>,
    tensors: Vec<ModelTensor>,
    index: Option<IndexInfo>,
    pieces: PieceSizes,
}

impl Model {
    /// Opens a model by path with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Model> {
        Model::open_with(path.as_ref(), OpenOptions::default())
    }

    /// Opens the model a path names: an index file, a shard (with or
    /// without an index beside it), or one file.
    pub fn open_with(path: &Path, opts: OpenOptions) -> Result<Model> {
        Model::from_source(Source::open(path, opts.read_mode)?, opts)
    }

    /// Opens the model whose file is already open: an index file, a shard
    /// (with or without an index beside it), or one file. The files an
    /// index or a shard's name points to are opened beside it, beneath its
    /// root ([`Source::beside`]): one that links out is refused.
    pub fn from_source(source: Source, opts: OpenOptions) -> Result<Model> {
        let path = source.path().to_path_buf();
        if is_index_name(&path) {
            return Model::open_index(source, None, opts);
        }
        if let (true, Some(name)) = (opts.join_shards, ShardName::parse(&path)) {
            let beside = source.beside()?;
            let index = name.index_path();
            let index_name = index.file_name().unwrap_or_default();
            if beside.holds_file(index_name) {
                drop(source);
                let index = beside.open(index_name, opts.read_mode)?;
                return Model::open_index(index, Some(&path), opts);
            }
            return Model::open_shard_set(source, &beside, &name, opts);
        }
        let file = StFile::parse(&source)?;
        Model::join(vec![(source, file, BTreeMap::new())], None, opts)
    }

    /// A model whose files are these open files, each with its own
    /// `__metadata__` only (Ollama's tensor blobs: no index, any file names,
    /// opened by the caller, which knows how they may be opened).
    pub fn from_sources(sources: Vec<Source>, opts: OpenOptions) -> Result<Model> {
        let mut opened = Vec::with_capacity(sources.len());
        for source in sources {
            let file = StFile::parse(&source)?;
            opened.push((source, file, BTreeMap::new()));
        }
        Model::join(opened, None, opts)
    }

    fn open_index(index_file: Source, given: Option<&Path>, opts: OpenOptions) -> Result<Model> {
        let index_path = &index_file.path().to_path_buf();
        let index = read_index_from(&index_file)?;
        let beside = index_file.beside()?;
        drop(index_file);
        Model::index_with(index_path, index, given, opts, &mut |name| beside.open(name, opts.read_mode))
    }

    /// The model of an index already read (`index_path` names it), its
    /// files opened by `open` from their plain names (a directory's walk
    /// hands the files it resolved, each opened once).
    pub fn from_index(
        index_path: &Path,
        index: Index,
        opts: OpenOptions,
        open: &mut dyn FnMut(&std::ffi::OsStr) -> Result<Source>,
    ) -> Result<Model> {
        Model::index_with(index_path, index, None, opts, open)
    }

    fn index_with(
        index_path: &Path,
        index: Index,
        given: Option<&Path>,
        opts: OpenOptions,
        open: &mut dyn FnMut(&std::ffi::OsStr) -> Result<Source>,
    ) -> Result<Model> {
        let Index { files: names, weight_map, metadata, total_size, total_parameters } = index;
        let dir = index_path.parent().unwrap_or(Path::new(""));
        if let Some(given) = given {
            let listed = given.file_name().and_then(|n| n.to_str()).is_some_and(|n| names.iter().any(|f| f == n));
            if !listed {
                let what = format!("{} does not list this file", index_path.display());
                return Err(Error::new(SafetensorsErrorKind::IndexMismatch(what)).in_file(given));
            }
        }
        let mut opened = Vec::with_capacity(names.len());
        for name in &names {
            let path = plain_name_in(dir, name).map_err(|e| e.in_file(index_path))?;
            let file_name = path.file_name().unwrap_or_default();
            let source = open(file_name).map_err(|e| e.in_file(index_path))?;
            let file = StFile::parse(&source)?;
            // Every tensor of the file is listed with this file...
            for t in &file.tensors {
                if weight_map.get(&t.name).map(String::as_str) != Some(name.as_str()) {
                    let what = match weight_map.get(&t.name) {
                        Some(other) => format!("the index lists this tensor in {other}"),
                        None => "the index does not list this tensor".to_string(),
                    };
                    let e = Error::new(SafetensorsErrorKind::IndexMismatch(what))
                        .about(Subject::Tensor(t.name.clone().into_bytes()));
                    return Err(e.in_file(&path));
                }
            }
            opened.push((source, file, metadata.clone()));
        }
        // ...and every entry of weight_map is in the file it names.
        let mut present: HashMap<&str, &str> = HashMap::new();
        for ((_, file, _), name) in opened.iter().zip(&names) {
            for t in &file.tensors {
                present.insert(t.name.as_str(), name.as_str());
            }
        }
        for (tensor, file) in &weight_map {
            if present.get(tensor.as_str()) != Some(&file.as_str()) {
                let what = format!("the index lists this tensor in {file}, which does not hold it");
                let e = Error::new(SafetensorsErrorKind::IndexMismatch(what))
                    .about(Subject::Tensor(tensor.clone().into_bytes()));
                return Err(e.in_file(index_path));
            }
        }
        let info = IndexInfo { path: index_path.to_path_buf(), total_size, total_parameters };
        Model::join(opened, Some(info), opts)
    }

    /// The set whose first shard `first` is, its siblings opened beside it.
    fn open_shard_set(first: Source, beside: &Beside, name: &ShardName, opts: OpenOptions) -> Result<Model> {
        if name.no != 1 {
            let kind = ErrorKind::NotFirstShard { no: name.no, count: name.count, first: name.sibling(1) };
            return Err(Error::new(kind).in_file(first.path()));
        }
        let path = &first.path().to_path_buf();
        let file = StFile::parse(&first)?;
        let mut opened = vec![(first, file, BTreeMap::new())];
        for no in 2..=name.count {
            let sibling = name.sibling(no);
            let file_name = sibling.file_name().unwrap_or_default();
            let (source, file) = match StFile::open_beside(beside, file_name, opts.read_mode) {
                Ok(f) => f,
                Err(e) if e.is_not_found() => {
                    let kind = ErrorKind::MissingShard { no, count: name.count, path: sibling };
                    return Err(Error::new(kind).in_file(path));
                }
                Err(e) => return Err(e),
            };
            opened.push((source, file, BTreeMap::new()));
        }
        Model::join(opened, None, opts)
    }

    /// Joins parsed files, each with the index metadata that applies to it,
    /// into one model.
    fn join(
        opened: Vec<(Source, SafetensorsFile, BTreeMap<String, String>)>,
        index: Option<IndexInfo>,
        opts: OpenOptions,
    ) -> Result<Model> {
        let mut files = Vec::with_capacity(opened.len());
        let mut groups: Vec<Group> = Vec::new();
        let mut tensors: Vec<ModelTensor> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (source, file, from_index) in opened {
            let map = applicable_map(&file, from_index).map_err(|e| e.in_file(source.path()))?;
            let group = Group::new(map);
            let g = match groups.iter().position(|x| x.digest == group.digest) {
                Some(g) => g,
                None => {
                    groups.push(group);
                    groups.len().saturating_sub(1)
                }
            };
            let f = files.len();
            for t in &file.tensors {
                if let Some(&other) = seen.get(&t.name) {
                    let other = files.get(other).map(|o: &StFile| o.path().to_path_buf()).unwrap_or_default();
                    let e = Error::new(ErrorKind::TensorInTwoShards { other });
                    return Err(e.about(Subject::Tensor(t.name.clone().into_bytes())).in_file(source.path()));
                }
                seen.insert(t.name.clone(), f);
                tensors.push(ModelTensor { entry: t.clone(), file: f, offset: 0 });
            }
            files.push(StFile { source, file, group: g });
        }
        // Groups in ascending order of their digests; files point at them.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by(|&a, &b| groups.get(a).map(|g| g.digest).cmp(&groups.get(b).map(|g| g.digest)));
        let mut new_index = vec![0usize; groups.len()];
        for (new, &old) in order.iter().enumerate() {
            if let Some(slot) = new_index.get_mut(old) {
                *slot = new;
            }
        }
        for f in &mut files {
            f.group = new_index.get(f.group).copied().unwrap_or(0);
        }
        let mut sorted: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
        let groups: Vec<Group> = order.iter().filter_map(|&i| sorted.get_mut(i).and_then(Option::take)).collect();

        tensors.sort_by(|a, b| a.entry.name.as_bytes().cmp(b.entry.name.as_bytes()));
        let mut next = Some(0u64);
        for t in &mut tensors {
            t.offset = next.ok_or_else(|| {
                Error::new(ErrorKind::OffsetOverflow("recomputed offset"))
                    .about(Subject::Tensor(t.entry.name.clone().into_bytes()))
            })?;
            next = t.offset.checked_add(t.entry.nbytes);
        }
        Ok(Model { files, groups, tensors, index, pieces: opts.pieces })
    }

    /// The files the model was read from, in the order they were opened.
    pub fn files(&self) -> &[StFile] {
        &self.files
    }

    /// The distinct metadata groups, in ascending order of their digests.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The tensors, sorted by name bytes, with recomputed offsets.
    pub fn tensors(&self) -> &[ModelTensor] {
        &self.tensors
    }

    /// The index the model was opened through, if any.
    pub fn index(&self) -> Option<&IndexInfo> {
        self.index.as_ref()
    }

    /// Total bytes of tensor data.
    pub fn tensor_bytes(&self) -> u64 {
        self.tensors.iter().fold(0u64, |acc, t| acc.saturating_add(t.entry.nbytes))
    }

    /// The number of elements of all tensors (what an index's
    /// `total_parameters` counts), saturating.
    pub fn parameters(&self) -> u64 {
        let elements = |t: &ModelTensor| t.entry.shape.iter().fold(1u64, |n, d| n.saturating_mul(*d));
        self.tensors.iter().fold(0u64, |acc, t| acc.saturating_add(elements(t)))
    }

    /// The group of the file holding tensor `t`.
    pub fn group_of(&self, t: &ModelTensor) -> Option<&Group> {
        self.groups.get(self.files.get(t.file)?.group)
    }

    /// The hashing job of a tensor: its data range, hashed as stored.
    pub fn job(&self, t: &ModelTensor) -> Option<Job<'_>> {
        let f = self.files.get(t.file)?;
        Some(Job {
            source: &f.source,
            start: f.file.data_position(&t.entry),
            len: t.entry.nbytes,
            conversion: Conversion::none(t.entry.dtype.block_bytes(), t.entry.dtype.name),
            subject: Subject::Tensor(t.entry.name.clone().into_bytes()),
            gather: None,
        })
    }

    /// Hashes every tensor (in parallel, on the current rayon pool), checks
    /// that no file changed meanwhile, and builds the skeleton.
    pub fn digest(&self) -> Result<Digest> {
        crate::schedule::digest(self, &self.pieces)
    }

    /// The label: 64 lowercase hex digits (hashes every tensor).
    pub fn label(&self) -> Result<String> {
        Ok(self.digest()?.label())
    }
}

/// True for a name ending in `.safetensors.index.json`.
pub fn is_index_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(INDEX_SUFFIX))
}

/// A file's own `__metadata__` plus what the index says applies to it; a
/// key in both with different values is an error.
fn applicable_map(file: &SafetensorsFile, from_index: BTreeMap<String, String>) -> Result<BTreeMap<String, String>> {
    let mut map = file.metadata.clone();
    for (k, v) in from_index {
        match map.get(&k) {
            Some(own) if *own != v => {
                let e = Error::new(SafetensorsErrorKind::MetadataConflict);
                return Err(e.about(Subject::Key(k.into_bytes())));
            }
            _ => {
                map.insert(k, v);
            }
        }
    }
    Ok(map)
}
