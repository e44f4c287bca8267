//! The logical model: one GGUF file, or the shards of a split model joined
//! (spec §5). `split.` keys are dropped here, KVs and tensors are sorted,
//! and tensor offsets are recomputed.

use crate::gguf::GgufErrorKind;
use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::{self, OpenOptions};
use crate::gguf::parse::{ALIGNMENT_KEY, DEFAULT_ALIGNMENT, Kv, SPLIT_PREFIX, TensorInfo, align_up};
pub use crate::gguf::shard::Shard;
use crate::gguf::shards::ShardName;
pub(crate) use crate::gguf::tensors::ModelTensor;
use crate::gguf::tensors::{Slot, Tensors};
use crate::gguf::value::Value;
use crate::hash::{Digest, Job, PieceSizes, Sha256Digest};
use crate::source::{ReadMode, Source, changed};
use sha2::{Digest as _, Sha256};

/// Opens a later shard of a set, by the path its name gives.
pub type OpenSibling<'a> = dyn FnMut(&Path) -> Result<Source> + 'a;

/// A KV of the logical model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelKv {
    /// The KV as parsed.
    pub kv: Kv,
    /// Index of the shard it was read from (the first one holding it).
    pub shard: usize,
}

/// A logical model: its shards, its KVs and tensors in canonical order, and
/// its effective alignment. Tensor data is read only by [`Model::digest`].
#[derive(Debug)]
pub struct Model {
    shards: Vec<Shard>,
    kvs: Vec<ModelKv>,
    /// The tensors in canonical order, as places in the shards' infos.
    tensors: Vec<Slot>,
    alignment: u64,
    pieces: PieceSizes,
}

impl Model {
    /// Opens a model with the default options: a first shard brings its siblings.
    pub fn open(path: impl AsRef<Path>) -> Result<Model> {
        Model::open_with(path.as_ref(), OpenOptions::default())
    }

    /// Opens a model.
    pub fn open_with(path: &Path, opts: OpenOptions) -> Result<Model> {
        Model::from_source(Source::open(path, opts.read_mode)?, opts)
    }

    /// Opens a model whose first (or only) file is already open.
    pub fn from_source(source: Source, opts: OpenOptions) -> Result<Model> {
        Model::from_source_with(source, opts, None)
    }

    /// Opens a model whose first (or only) file is already open, its later
    /// shards opened by `open_sibling` from the paths their names give (a
    /// directory's walk hands the files it resolved, each opened once);
    /// `None` opens them beside the first, beneath its root.
    pub fn from_source_with(
        source: Source,
        opts: OpenOptions,
        open_sibling: Option<&mut OpenSibling<'_>>,
    ) -> Result<Model> {
        let first = Shard::from_source(source)?;
        let count = first.file.split_value(b"split.count").unwrap_or(0);
        if opts.join_shards && count > 1 && first.source.is_stream() {
            let no = first.file.split_value(b"split.no").and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
            let kind = GgufErrorKind::StreamShard { no, count: u64::try_from(count).unwrap_or(0) };
            let mut e = Error::new(kind);
            if let Some(kv) = first.file.get(b"split.count") {
                e = e.at(kv.file_offset).about(Subject::Key(kv.key.clone()));
            }
            return Err(e.in_file(first.path()));
        }
        let shards = if opts.join_shards && count > 1 {
            open_shard_set(first, opts.read_mode, open_sibling)?
        } else {
            vec![first]
        };
        Ok(Model { pieces: opts.pieces, ..Model::join(shards)? })
    }

    /// Joins parsed shards into one logical model (spec §5). The first
    /// shard holding a key gives its value (a later one must agree); a
    /// tensor may be in one shard only. Of several such errors, the one in
    /// the earliest shard (its KVs before its tensors, each in file order)
    /// is reported, as a reader going shard by shard would meet it.
    pub fn join(shards: Vec<Shard>) -> Result<Model> {
        let (mut kvs, kv_error) = join_kvs(&shards);
        let mut tensors: Vec<Slot> = Vec::with_capacity(Self::count_tensors(&shards));
        for (s, shard) in shards.iter().enumerate() {
            tensors.extend((0..shard.file.tensors.len()).map(|index| Slot { shard: s, index, offset: 0 }));
        }
        // Names first, then where they lie: the tensors sharing a name
        // follow each other, the first met in shard order first. Unstable:
        // a stable sort would take a buffer of half the list.
        let key = |t: &Slot| t.info(&shards).map(|i| (&i.name, t.shard, i.file_offset));
        tensors.sort_unstable_by(|a, b| key(a).cmp(&key(b)));
        let tensor_error = first_tensor_in_two_shards(&shards, &tensors);
        match (kv_error, tensor_error) {
            (Some((s, e)), Some((t, _))) if s <= t => return Err(e),
            (_, Some((_, e))) | (Some((_, e)), None) => return Err(e),
            (None, None) => {}
        }
        let alignment = match kvs.iter().find(|m| m.kv.key == ALIGNMENT_KEY) {
            // Validated when its file was parsed.
            Some(ModelKv { kv: Kv { value: Value::Uint32(a), .. }, .. }) => u64::from(*a),
            _ => DEFAULT_ALIGNMENT,
        };
        // Keys are distinct here.
        kvs.sort_unstable_by(|a, b| a.kv.key.cmp(&b.kv.key));
        // `next` is None once the running offset has overflowed; that is an
        // error only if a tensor still needs an offset (spec §2 defines none
        // past the last tensor).
        let mut next = Some(0u64);
        for t in &mut tensors {
            let info = t.info(&shards).ok_or_else(|| Error::internal("a tensor slot names no tensor info"))?;
            t.offset = next.ok_or_else(|| {
                let path = shards.get(t.shard).map_or(Path::new(""), |s| s.path());
                Error::new(ErrorKind::OffsetOverflow("recomputed offset"))
                    .about(Subject::Tensor(info.name.to_vec()))
                    .in_file(path)
            })?;
            next = t.offset.checked_add(info.nbytes).and_then(|end| align_up(end, alignment));
        }
        Ok(Model { shards, kvs, tensors, alignment, pieces: PieceSizes::default() })
    }

    /// The files the model was read from; the first is the path given.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// Shard `i` of [`Model::shards`] (as named by [`ModelTensor::shard`]).
    pub fn shard(&self, i: usize) -> Option<&Shard> {
        self.shards.get(i)
    }

    /// The KVs that enter the skeleton (no `split.` keys), sorted by key bytes.
    pub fn kvs(&self) -> &[ModelKv] {
        &self.kvs
    }

    /// The bytes of a STRING KV, read again from its shard and checked
    /// against the SHA-256 it enters the skeleton with (a file changed since
    /// it was parsed is an error, never a value the label does not bind);
    /// `None` for other values and for strings longer than `max` bytes.
    pub fn string_bytes(&self, kv: &ModelKv, max: u64) -> Result<Option<Vec<u8>>> {
        let Value::String(s) = &kv.kv.value else { return Ok(None) };
        if s.len > max {
            return Ok(None);
        }
        let shard = self.shards.get(kv.shard).ok_or_else(|| changed("a KV names a shard that is not there"))?;
        let about = |e: Error| e.about(Subject::Key(kv.kv.key.clone())).in_file(shard.path());
        // `s.len <= max`, and the parser checked the string lies in the file.
        let len = usize::try_from(s.len).map_err(|_| about(changed("a string longer than memory")))?;
        let mut bytes = vec![0u8; len];
        shard.source.read_exact_at(&mut bytes, s.file_offset).map_err(|e| e.about(Subject::Key(kv.kv.key.clone())))?;
        let sha: Sha256Digest = Sha256::digest(&bytes).into();
        if sha != s.sha256 {
            return Err(about(changed("the string's bytes differ from when it was read").at(s.file_offset)));
        }
        Ok(Some(bytes))
    }

    /// The tensors, sorted by name bytes, with recomputed offsets.
    pub fn tensors(&self) -> Tensors<'_> {
        Tensors::new(&self.shards, &self.tensors)
    }

    fn count_tensors(shards: &[Shard]) -> usize {
        shards.iter().fold(0usize, |n, s| n.saturating_add(s.file.tensors.len()))
    }

    /// The effective alignment A (spec §4).
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// Total bytes of tensor data.
    pub fn tensor_bytes(&self) -> u64 {
        self.tensors().iter().fold(0u64, |acc, t| acc.saturating_add(t.info.nbytes))
    }

    /// Tensor indices, largest first: the order that keeps every core busy
    /// until the end when one tensor dominates.
    pub fn hash_order(&self) -> Vec<usize> {
        format::hash_order(self)
    }

    /// The hashing job of a tensor: its data range in its shard, and the
    /// conversion of its ggml type from the shard's byte order.
    pub fn job(&self, t: ModelTensor<'_>) -> Option<Job<'_>> {
        let shard = self.shards.get(t.shard)?;
        Some(Job {
            source: &shard.source,
            start: shard.file.data_position(t.info),
            len: t.info.nbytes,
            conversion: t.info.ggml_type.conversion(shard.file.byte_order),
            subject: Subject::Tensor(t.info.name.to_vec()),
            gather: None,
        })
    }

    /// Hashes one tensor's data (spec §2, `H(tensor data bytes)`);
    /// `progress` is told of every piece's bytes as they are hashed.
    pub fn hash_tensor(
        &self,
        t: ModelTensor<'_>,
        progress: &crate::hash::ProgressCallback<'_>,
    ) -> Result<Sha256Digest> {
        let Some(job) = self.job(t) else {
            let e = Error::internal("the tensor names no shard of this model");
            return Err(e.about(Subject::Tensor(t.info.name.to_vec())));
        };
        crate::hash::hash_job(&job, &self.pieces, progress)
    }

    /// Hashes every tensor (in parallel, on the current rayon pool), checks
    /// that no file changed meanwhile, and builds the skeleton.
    pub fn digest(&self) -> Result<Digest> {
        crate::schedule::digest(self, &self.pieces)
    }

    /// Builds the digest from the tensor data digests (in [`Model::tensors`]
    /// order), after checking that no file changed while it was read.
    pub fn finish(&self, tensor_sha256: Vec<Sha256Digest>) -> Result<Digest> {
        format::finish(self, tensor_sha256)
    }

    /// The label: 64 lowercase hex digits (hashes every tensor).
    pub fn label(&self) -> Result<String> {
        Ok(self.digest()?.label())
    }
}

/// The shard at index `i` of a model. [`Model::join`] sets every index from
/// the model's own shard list, so the error is unreachable; it stands in for
/// an index that would otherwise panic.
pub(crate) fn shard_of(model: &Model, i: usize) -> Result<&Shard> {
    model.shards().get(i).ok_or_else(|| Error::internal(&format!("no shard #{i}")))
}

/// The KVs of the model (no `split.` keys; the first shard holding a key
/// gives it), and the first key a later shard holds with other content,
/// with its shard.
fn join_kvs(shards: &[Shard]) -> (Vec<ModelKv>, Option<(usize, Error)>) {
    let mut kvs: Vec<ModelKv> = Vec::new();
    let mut key_index: HashMap<&[u8], usize> = HashMap::new();
    for (s, shard) in shards.iter().enumerate() {
        for kv in shard.file.kvs.iter().filter(|kv| !kv.key.starts_with(SPLIT_PREFIX)) {
            let Some(&i) = key_index.get(kv.key.as_slice()) else {
                key_index.insert(&kv.key, kvs.len());
                kvs.push(ModelKv { kv: kv.clone(), shard: s });
                continue;
            };
            let Some(seen) = kvs.get(i) else { continue };
            if !same_content(&seen.kv.value, &kv.value) {
                let other = shards.get(seen.shard).map(|o| o.path().to_path_buf()).unwrap_or_default();
                let e = Error::new(GgufErrorKind::ConflictingKey { other });
                let e = e.at(kv.file_offset).about(Subject::Key(kv.key.clone())).in_file(shard.path());
                return (kvs, Some((s, e)));
            }
        }
    }
    (kvs, None)
}

/// The first tensor (in shard order, then file order) whose name an
/// earlier shard holds too, as the error a reader going shard by shard
/// meets, with its shard; `tensors` sorted by name, shard, file offset.
fn first_tensor_in_two_shards(shards: &[Shard], tensors: &[Slot]) -> Option<(usize, Error)> {
    let mut found: Option<(&Slot, &TensorInfo, usize)> = None;
    let mut first_of_name: Option<&Slot> = None;
    let mut previous: Option<&TensorInfo> = None;
    for t in tensors {
        let info = t.info(shards)?;
        if previous.is_none_or(|p| p.name != info.name) {
            first_of_name = Some(t);
        } else if found.is_none_or(|(f, fi, _)| (t.shard, info.file_offset) < (f.shard, fi.file_offset)) {
            found = Some((t, info, first_of_name.map_or(t.shard, |f| f.shard)));
        }
        previous = Some(info);
    }
    let (t, info, other) = found?;
    let other = shards.get(other).map(|o| o.path().to_path_buf()).unwrap_or_default();
    let path = shards.get(t.shard).map_or(Path::new(""), |s| s.path());
    let e = Error::new(ErrorKind::TensorInTwoShards { other });
    Some((t.shard, e.at(info.file_offset).about(Subject::Tensor(info.name.to_vec())).in_file(path)))
}

/// Two values are the same content when type and canonical bytes agree.
fn same_content(a: &Value, b: &Value) -> bool {
    a.value_type() == b.value_type() && a.canonical_bytes() == b.canonical_bytes()
}

/// Opens the siblings of a first shard whose split.count is above 1.
fn open_shard_set(first: Shard, mode: ReadMode, open_sibling: Option<&mut OpenSibling<'_>>) -> Result<Vec<Shard>> {
    let path = first.path().to_path_buf();
    let located = |e: Error| e.in_file(&path);
    let count = first.file.split_value(b"split.count").unwrap_or(0);
    let no = first.file.split_value(b"split.no");
    let name = ShardName::parse(&path).filter(|n| i128::from(n.count) == count);
    let Some(name) = name else {
        let kind = GgufErrorKind::ShardName {
            no: no.and_then(|n| u64::try_from(n).ok()).unwrap_or(0),
            count: u64::try_from(count).unwrap_or(0),
        };
        let mut e = Error::new(kind);
        if let Some(kv) = first.file.get(b"split.count") {
            e = e.at(kv.file_offset).about(Subject::Key(kv.key.clone()));
        }
        return Err(located(e));
    };
    // Pointing at the right file helps more than any other complaint.
    if name.no != 1 {
        return Err(located(
            ErrorKind::NotFirstShard { no: name.no, count: name.count, first: name.sibling(1) }.into(),
        ));
    }
    check_split_no(&first, &path, name.no)?;
    // Siblings are opened beside the first shard, beneath its root: one
    // that links out of it is refused (docs/adr/0020).
    let beside = if open_sibling.is_none() { Some(first.source.beside().map_err(located)?) } else { None };
    let mut open_beside = |sibling: &Path| -> Result<Source> {
        let beside = beside.as_ref().ok_or_else(|| Error::internal("no directory to open a shard in"))?;
        beside.open(sibling.file_name().unwrap_or_default(), mode)
    };
    let open: &mut dyn FnMut(&Path) -> Result<Source> = match open_sibling {
        Some(open) => open,
        None => &mut open_beside,
    };
    let mut shards = vec![first];
    for no in 2..=name.count {
        let sibling = name.sibling(no);
        let shard = match open(&sibling).and_then(Shard::from_source) {
            Ok(s) => s,
            Err(e) if e.is_not_found() => {
                let kind = ErrorKind::MissingShard { no, count: name.count, path: sibling };
                return Err(located(kind.into()));
            }
            Err(e) => return Err(e),
        };
        let found = shard.file.split_value(b"split.count");
        if found != Some(count) {
            return Err(mismatch(&shard, "split.count", found, count));
        }
        check_split_no(&shard, &sibling, no)?;
        shards.push(shard);
    }
    let total: u64 = shards.iter().map(|s| s.file.tensors.len() as u64).sum();
    for s in &shards {
        if let Some(n) = s.file.split_value(b"split.tensors.count") {
            if n != i128::from(total) {
                return Err(mismatch(s, "split.tensors.count", Some(n), total.into()));
            }
        }
    }
    Ok(shards)
}

fn check_split_no(shard: &Shard, path: &Path, name_no: u64) -> Result<()> {
    let found = shard.file.split_value(b"split.no");
    let expected = i128::from(name_no).saturating_sub(1);
    if found == Some(expected) { Ok(()) } else { Err(mismatch(shard, "split.no", found, expected).in_file(path)) }
}

fn mismatch(shard: &Shard, key: &'static str, found: Option<i128>, expected: i128) -> Error {
    let kind = match found {
        Some(found) => GgufErrorKind::ShardMismatch { key, found, expected },
        None => GgufErrorKind::MissingSplitKey(key),
    };
    let mut e = Error::new(kind);
    if let Some(kv) = shard.file.get(key.as_bytes()) {
        e = e.at(kv.file_offset).about(Subject::Key(kv.key.clone()));
    }
    e.in_file(shard.path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_index_past_the_model_is_an_internal_error() {
        // The smallest GGUF: magic, version 3, no tensors, no keys.
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend([0u8; 16]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, bytes).unwrap();
        let model = Model::open(&path).unwrap();
        assert!(shard_of(&model, 0).is_ok());
        let e = shard_of(&model, 1).err().unwrap();
        assert_eq!(e.to_string(), "internal error: no shard #1 (please report it)");
    }
}
