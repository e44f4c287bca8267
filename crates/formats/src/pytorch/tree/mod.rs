//! The object a pickle built, walked as the label's tree (docs/SPEC.md P7):
//! every value checked to be of a kind the contract encodes, mappings
//! sorted by encoded key, sets sorted, cycles, depth and size bounded, the
//! distinct tensors listed with the key path where they are first reached;
//! and the skeleton's `value(root)` written from it.

use crate::pytorch::PytorchErrorKind;
use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use super::pickle::{Dict, Obj, ObjId, Pickle, StorageUse, Tensor};
use crate::error::{Error, Result, Subject};
use crate::hash::Sha256Digest;

/// The deepest a container may be nested (the root container is level 1).
pub const MAX_DEPTH: usize = 1000;

/// The most values the tree may hold, a shared object counted each time it
/// is reached.
pub const MAX_VALUES: u64 = 1 << 26;

/// Bytes of tensor elements allowed beyond 16 × the storages' bytes.
pub const WORK_SLACK: u64 = 1 << 20;

/// A distinct tensor of the tree.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// Its object.
    pub obj: ObjId,
    /// The key path where it is first reached (keys and indices joined by `.`).
    pub path: String,
}

/// A checked tree: the pickle's objects with mappings sorted, and what the
/// skeleton and the jobs need.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The pickle's objects (mappings' entries sorted by encoded key).
    pub objs: Vec<Obj>,
    /// The root.
    pub root: ObjId,
    /// The storages the pickle names.
    pub storages: Vec<StorageUse>,
    /// The distinct tensors, in the order first reached (the jobs' order).
    pub tensors: Vec<Leaf>,
    tensor_no: HashMap<ObjId, usize>,
    set_items: HashMap<ObjId, Vec<Vec<u8>>>,
    /// Values counted, each shared object each time it is reached.
    pub values: u64,
    /// Times a tensor already listed was reached again (tied weights).
    pub tied: u64,
}

fn err(msg: impl Into<String>, path: &str) -> Error {
    let e = Error::new(PytorchErrorKind::Checkpoint(msg.into()));
    if path.is_empty() { e } else { e.about(Subject::Key(path.as_bytes().to_vec())) }
}

/// `0x06 || H(s)`.
fn str_value(s: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(33);
    v.push(0x06);
    v.extend_from_slice(&Sha256::digest(s));
    v
}

fn int_value(minimal: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(minimal.len().saturating_add(5));
    v.push(0x03);
    v.extend_from_slice(&(minimal.len() as u32).to_le_bytes());
    v.extend_from_slice(minimal);
    v
}

/// `value(int)` of a `u64`.
fn u64_value(i: u64) -> Vec<u8> {
    let mut b = i.to_le_bytes().to_vec();
    b.push(0);
    int_value(&super::pickle::Int::from_le(&b).minimal_le())
}

struct Walk<'t> {
    objs: &'t mut Vec<Obj>,
    on_path: Vec<bool>,
    sorted: Vec<bool>,
    tensors: Vec<Leaf>,
    tensor_no: HashMap<ObjId, usize>,
    set_items: HashMap<ObjId, Vec<Vec<u8>>>,
    values: u64,
    tied: u64,
}

impl Tree {
    /// Checks and sorts the tree of a pickle.
    pub fn new(pickle: Pickle) -> Result<Tree> {
        let Pickle { mut objs, root, storages, .. } = pickle;
        let n = objs.len();
        let mut w = Walk {
            objs: &mut objs,
            on_path: vec![false; n],
            sorted: vec![false; n],
            tensors: Vec::new(),
            tensor_no: HashMap::new(),
            set_items: HashMap::new(),
            values: 0,
            tied: 0,
        };
        w.walk(root, 0, "")?;
        let Walk { tensors, tensor_no, set_items, values, tied, .. } = w;
        let tree = Tree { objs, root, storages, tensors, tensor_no, set_items, values, tied };
        tree.check_work()?;
        Ok(tree)
    }

    /// The tensor object of a leaf.
    pub fn tensor(&self, leaf: &Leaf) -> Option<&Tensor> {
        match self.objs.get(leaf.obj)? {
            Obj::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The work bound (P5): distinct tensors' bytes ≤ 16 × storages' bytes + 1 MiB.
    fn check_work(&self) -> Result<()> {
        let storage_bytes = self.storages.iter().fold(0u64, |a, s| a.saturating_add(s.nbytes()));
        let bound = storage_bytes.saturating_mul(16).saturating_add(WORK_SLACK);
        let mut total = 0u64;
        for leaf in &self.tensors {
            let nbytes = self.tensor(leaf).map_or(0, Tensor::nbytes);
            total = total.saturating_add(nbytes);
            if total > bound {
                return Err(err(
                    format!(
                        "the tensors read {total} bytes or more from {storage_bytes} bytes of storage (at most 16 × the storages + 1 MiB: \
                         an expanded view asks for more hashing than the file holds; save it contiguous)"
                    ),
                    &leaf.path,
                )
                .about(Subject::Tensor(leaf.path.as_bytes().to_vec())));
            }
        }
        Ok(())
    }

    /// Writes `value(root)` to `sink`, each tensor's elements digest taken
    /// from `digests` (in [`Tree::tensors`] order).
    pub fn write(&self, digests: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.write_value(self.root, digests, sink, 0)
    }

    fn write_value(
        &self,
        id: ObjId,
        digests: &[Sha256Digest],
        sink: &mut dyn FnMut(&[u8]),
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH.saturating_add(2) {
            return Err(Error::internal("a tree deeper than it was checked to be"));
        }
        let obj = self.objs.get(id).ok_or_else(|| Error::internal("an object out of range"))?;
        match obj {
            Obj::None => sink(&[0x00]),
            Obj::Bool(b) => sink(&[if *b { 0x02 } else { 0x01 }]),
            Obj::Int(i) => sink(&int_value(&i.minimal_le())),
            Obj::Float(bits) => {
                sink(&[0x04]);
                sink(&bits.to_le_bytes());
            }
            Obj::Complex(re, im) => {
                sink(&[0x05]);
                sink(&re.to_le_bytes());
                sink(&im.to_le_bytes());
            }
            Obj::Str(s) => sink(&str_value(s)),
            Obj::Bytes(b) => {
                sink(&[0x07]);
                sink(&Sha256::digest(b));
            }
            Obj::Tuple(items) | Obj::List(items) => {
                sink(&[if matches!(obj, Obj::Tuple(_)) { 0x08 } else { 0x09 }]);
                sink(&(items.len() as u64).to_le_bytes());
                for &i in items {
                    self.write_value(i, digests, sink, depth.saturating_add(1))?;
                }
            }
            Obj::Set(_) => {
                let items = self.set_items.get(&id).ok_or_else(|| Error::internal("a set not sorted"))?;
                sink(&[0x0A]);
                sink(&(items.len() as u64).to_le_bytes());
                for i in items {
                    sink(i);
                }
            }
            Obj::Dict(d) => {
                let attrs = self.attrs(d.attrs);
                if attrs.is_some() {
                    sink(&[0x0C]);
                }
                self.write_mapping(d, digests, sink, depth)?;
                if let Some(a) = attrs {
                    self.write_value(a, digests, sink, depth.saturating_add(1))?;
                }
            }
            Obj::Tensor(t) => {
                let no = *self.tensor_no.get(&id).ok_or_else(|| Error::internal("a tensor not listed"))?;
                let digest = digests.get(no).ok_or_else(|| Error::internal("a tensor without its digest"))?;
                let attrs = self.attrs(t.attrs);
                if attrs.is_some() {
                    sink(&[0x0E]);
                }
                sink(&[0x0D]);
                sink(&(t.dtype.name.len() as u32).to_le_bytes());
                sink(t.dtype.name.as_bytes());
                sink(&(t.size.len() as u32).to_le_bytes());
                for s in &t.size {
                    sink(&s.to_le_bytes());
                }
                sink(digest);
                if let Some(a) = attrs {
                    self.write_value(a, digests, sink, depth.saturating_add(1))?;
                }
            }
            Obj::Dtype(d) => {
                sink(&[0x0F]);
                sink(&Sha256::digest(d.name.as_bytes()));
            }
            Obj::Device(ty, index) => {
                sink(&[0x10]);
                sink(&str_value(ty));
                match index {
                    Some(i) => sink(&u64_value(*i)),
                    None => sink(&[0x00]),
                }
            }
            Obj::Global(_) | Obj::Storage(_) => return Err(Error::internal("a value of no kind left in the tree")),
        }
        Ok(())
    }

    fn write_mapping(
        &self,
        d: &Dict,
        digests: &[Sha256Digest],
        sink: &mut dyn FnMut(&[u8]),
        depth: usize,
    ) -> Result<()> {
        sink(&[0x0B]);
        sink(&(d.entries.len() as u64).to_le_bytes());
        for &(k, v) in &d.entries {
            sink(&self.key_value(k)?);
            self.write_value(v, digests, sink, depth.saturating_add(1))?;
        }
        Ok(())
    }

    /// The attributes object when it is a non-empty mapping.
    fn attrs(&self, a: Option<ObjId>) -> Option<ObjId> {
        a.filter(|&a| matches!(self.objs.get(a), Some(Obj::Dict(d)) if !d.entries.is_empty()))
    }

    fn key_value(&self, k: ObjId) -> Result<Vec<u8>> {
        match self.objs.get(k) {
            Some(Obj::Str(s)) => Ok(str_value(s)),
            Some(Obj::Int(i)) => Ok(int_value(&i.minimal_le())),
            _ => Err(Error::internal("a key of no kind")),
        }
    }

    /// The text of a key, for paths.
    pub fn key_text(&self, k: ObjId) -> String {
        key_text(self.objs.get(k))
    }
}

fn key_text(o: Option<&Obj>) -> String {
    match o {
        Some(Obj::Str(s)) => String::from_utf8_lossy(s).into_owned(),
        Some(Obj::Int(i)) => match i {
            super::pickle::Int::Small(v) => v.to_string(),
            super::pickle::Int::Big(_) => "<big int>".into(),
        },
        _ => "?".into(),
    }
}

fn join(path: &str, part: &str) -> String {
    if path.is_empty() { part.to_string() } else { format!("{path}.{part}") }
}

impl Walk<'_> {
    fn get(&self, id: ObjId) -> Result<&Obj> {
        self.objs.get(id).ok_or_else(|| Error::internal("an object out of range"))
    }

    fn walk(&mut self, id: ObjId, depth: usize, path: &str) -> Result<()> {
        self.values = self.values.saturating_add(1);
        if self.values > MAX_VALUES {
            return Err(err(
                format!(
                    "the tree holds more than {MAX_VALUES} values (shared objects counted each time they are reached)"
                ),
                path,
            ));
        }
        if self.on_path.get(id).copied().unwrap_or(false) {
            return Err(err("a structure that contains itself", path));
        }
        let container = matches!(self.get(id)?, Obj::Tuple(_) | Obj::List(_) | Obj::Set(_) | Obj::Dict(_));
        let depth = if container { depth.saturating_add(1) } else { depth };
        if depth > MAX_DEPTH {
            return Err(err(format!("containers nested deeper than {MAX_DEPTH} levels"), path));
        }
        if let Some(p) = self.on_path.get_mut(id) {
            *p = true;
        }
        let r = self.walk_inner(id, depth, path);
        if let Some(p) = self.on_path.get_mut(id) {
            *p = false;
        }
        r
    }

    fn walk_inner(&mut self, id: ObjId, depth: usize, path: &str) -> Result<()> {
        match self.get(id)?.clone_shallow() {
            Shallow::Leaf => Ok(()),
            Shallow::Refused(what) => {
                Err(err(format!("{what} left in the tree (not a value this label encodes)"), path))
            }
            Shallow::Items(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    let p = join(path, &i.to_string());
                    self.walk(item, depth, &p)?;
                }
                Ok(())
            }
            Shallow::Set(items) => self.set(id, &items, path),
            Shallow::Dict(attrs) => {
                self.sort(id, path, false)?;
                let entries = match self.get(id)? {
                    Obj::Dict(d) => d.entries.clone(),
                    _ => Vec::new(),
                };
                for (k, v) in entries {
                    let p = join(path, &key_text(self.objs.get(k)));
                    self.walk(v, depth, &p)?;
                }
                self.attrs(attrs, depth, path)
            }
            Shallow::Tensor(attrs) => {
                if let Some(&_no) = self.tensor_no.get(&id) {
                    self.tied = self.tied.saturating_add(1);
                } else {
                    self.tensors.push(Leaf { obj: id, path: path.to_string() });
                    self.tensor_no.insert(id, self.tensors.len().saturating_sub(1));
                }
                self.attrs(attrs, depth, path)
            }
        }
    }

    /// A mapping's or tensor's attributes: a mapping of string keys, one level deeper.
    fn attrs(&mut self, attrs: Option<ObjId>, depth: usize, path: &str) -> Result<()> {
        let Some(a) = attrs else { return Ok(()) };
        match self.get(a)? {
            Obj::Dict(d) if d.entries.is_empty() => return Ok(()),
            Obj::Dict(_) => {}
            o => return Err(err(format!("attributes that are {} (a mapping expected)", o.what()), path)),
        }
        self.sort(a, path, true)?;
        let p = join(path, "@attributes");
        self.walk(a, depth, &p)
    }

    /// Sorts a mapping's entries by encoded key, once; keys must be strings
    /// or ints (only strings for attributes), and no two may encode alike.
    fn sort(&mut self, id: ObjId, path: &str, strings_only: bool) -> Result<()> {
        if self.sorted.get(id).copied().unwrap_or(true) {
            return Ok(());
        }
        let entries = match self.get(id)? {
            Obj::Dict(d) => d.entries.clone(),
            _ => return Ok(()),
        };
        let mut keyed = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            let enc = match self.get(k)? {
                Obj::Str(s) => str_value(s),
                Obj::Int(i) if !strings_only => int_value(&i.minimal_le()),
                o => {
                    let allowed = if strings_only { "strings" } else { "strings or ints" };
                    return Err(err(format!("a mapping key that is {} (keys are {allowed})", o.what()), path));
                }
            };
            keyed.push((enc, k, v));
        }
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for w in keyed.windows(2) {
            if let [a, b] = w {
                if a.0 == b.0 {
                    let shown = key_text(self.objs.get(a.1));
                    return Err(err(format!("the key '{shown}' is set twice in one mapping"), &join(path, &shown)));
                }
            }
        }
        if let Some(Obj::Dict(d)) = self.objs.get_mut(id) {
            d.entries = keyed.into_iter().map(|(_, k, v)| (k, v)).collect();
        }
        if let Some(s) = self.sorted.get_mut(id) {
            *s = true;
        }
        Ok(())
    }

    fn set(&mut self, id: ObjId, items: &[ObjId], path: &str) -> Result<()> {
        if self.set_items.contains_key(&id) {
            self.values = self.values.saturating_add(items.len() as u64);
            return Ok(());
        }
        let mut encs = Vec::with_capacity(items.len());
        let mut norms = Vec::with_capacity(items.len());
        for &i in items {
            let (e, n) = self.hashable(i, 0, path)?;
            encs.push(e);
            norms.push(n);
        }
        norms.sort_unstable();
        if norms.windows(2).any(|w| matches!(w, [a, b] if a == b)) {
            return Err(err("a set with two equal items (as Python compares them: 1, 1.0 and True are equal)", path));
        }
        encs.sort_unstable();
        self.set_items.insert(id, encs);
        Ok(())
    }

    /// A set item's encoding, and a form in which Python-equal numbers are
    /// equal (bool, int, integral float, real complex all as ints).
    fn hashable(&mut self, id: ObjId, depth: usize, path: &str) -> Result<(Vec<u8>, Vec<u8>)> {
        self.values = self.values.saturating_add(1);
        if self.values > MAX_VALUES || depth > MAX_DEPTH {
            return Err(err("a set item too large or too deep", path));
        }
        let o = self.get(id)?.clone_shallow_hashable();
        let num = |n: Num| -> Vec<u8> {
            match n {
                Num::Int(b) => {
                    let mut v = vec![0xF0];
                    v.extend(b);
                    v
                }
                Num::Float(bits) => {
                    let mut v = vec![0xF1];
                    v.extend(bits.to_le_bytes());
                    v
                }
                Num::Complex(re, im) => {
                    let mut v = vec![0xF2];
                    v.extend(re.to_le_bytes());
                    v.extend(im.to_le_bytes());
                    v
                }
            }
        };
        Ok(match o {
            Hashable::Bytes(enc) => (enc.clone(), enc),
            Hashable::Num(enc, n) => (enc, num(n)),
            Hashable::Tuple(items) => {
                let mut e = vec![0x08];
                e.extend((items.len() as u64).to_le_bytes());
                let mut n = e.clone();
                for i in items {
                    let (ie, inorm) = self.hashable(i, depth.saturating_add(1), path)?;
                    e.extend(ie);
                    n.extend((inorm.len() as u64).to_le_bytes());
                    n.extend(inorm);
                }
                (e, n)
            }
            Hashable::No(what) => {
                return Err(err(
                    format!("a set holding {what} (Python cannot hash it, or v1 does not encode it in a set)"),
                    path,
                ));
            }
        })
    }
}

/// What a walk needs of an object, without borrowing the arena.
enum Shallow {
    Leaf,
    Refused(&'static str),
    Items(Vec<ObjId>),
    Set(Vec<ObjId>),
    Dict(Option<ObjId>),
    Tensor(Option<ObjId>),
}

enum Num {
    Int(Vec<u8>),
    Float(u64),
    Complex(u64, u64),
}

enum Hashable {
    /// Its encoding, equal only to itself.
    Bytes(Vec<u8>),
    /// A number: its encoding and its Python-equality form.
    Num(Vec<u8>, Num),
    Tuple(Vec<ObjId>),
    No(&'static str),
}

/// The Python-equality form of a float: an int when it is integral.
fn float_num(bits: u64) -> Num {
    let f = f64::from_bits(bits);
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.2e18 {
        // In range: the cast is exact for an integral value.
        #[allow(clippy::cast_possible_truncation)]
        let i = f as i64;
        return Num::Int(super::pickle::Int::Small(i).minimal_le());
    }
    Num::Float(bits)
}

impl Obj {
    fn clone_shallow(&self) -> Shallow {
        match self {
            Obj::None | Obj::Bool(_) | Obj::Int(_) | Obj::Float(_) | Obj::Complex(..) | Obj::Str(_) | Obj::Bytes(_) => {
                Shallow::Leaf
            }
            Obj::Dtype(_) | Obj::Device(..) => Shallow::Leaf,
            Obj::Tuple(i) | Obj::List(i) => Shallow::Items(i.clone()),
            Obj::Set(i) => Shallow::Set(i.clone()),
            Obj::Dict(d) => Shallow::Dict(d.attrs),
            Obj::Tensor(t) => Shallow::Tensor(t.attrs),
            Obj::Global(_) | Obj::Storage(_) => Shallow::Refused(self.what()),
        }
    }

    fn clone_shallow_hashable(&self) -> Hashable {
        match self {
            Obj::None => Hashable::Bytes(vec![0x00]),
            Obj::Bool(b) => Hashable::Num(
                vec![if *b { 0x02 } else { 0x01 }],
                Num::Int(super::pickle::Int::Small(i64::from(*b)).minimal_le()),
            ),
            Obj::Int(i) => {
                let m = i.minimal_le();
                Hashable::Num(int_value(&m), Num::Int(m))
            }
            Obj::Float(bits) => {
                let mut e = vec![0x04];
                e.extend(bits.to_le_bytes());
                Hashable::Num(e, float_num(*bits))
            }
            Obj::Complex(re, im) => {
                let mut e = vec![0x05];
                e.extend(re.to_le_bytes());
                e.extend(im.to_le_bytes());
                let n = if f64::from_bits(*im) == 0.0 { float_num(*re) } else { Num::Complex(*re, *im) };
                Hashable::Num(e, n)
            }
            Obj::Str(s) => Hashable::Bytes(str_value(s)),
            Obj::Bytes(b) => {
                let mut e = vec![0x07];
                e.extend_from_slice(&Sha256::digest(b));
                Hashable::Bytes(e)
            }
            Obj::Tuple(items) => Hashable::Tuple(items.clone()),
            Obj::Dtype(d) => {
                let mut e = vec![0x0F];
                e.extend_from_slice(&Sha256::digest(d.name.as_bytes()));
                Hashable::Bytes(e)
            }
            Obj::Device(ty, index) => {
                let mut e = vec![0x10];
                e.extend(str_value(ty));
                match index {
                    Some(i) => e.extend(u64_value(*i)),
                    None => e.push(0x00),
                }
                Hashable::Bytes(e)
            }
            o => Hashable::No(o.what()),
        }
    }
}

/// A leaf of the tree as shown (`--json`, `inspect`, `diff`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafValue {
    /// A tensor.
    Tensor {
        /// Its dtype's name.
        dtype: &'static str,
        /// Its shape.
        shape: Vec<u64>,
        /// The digest of its elements.
        sha256: Sha256Digest,
    },
    /// Any other value: its kind and its text (a string's digest when it
    /// is long; an empty container as `[]`, `()` or `{}`).
    Value {
        /// `int`, `str`, `float`, …
        kind: &'static str,
        /// The value, as text.
        text: String,
    },
}

/// Strings longer than this are shown by their digest.
const SHOWN: usize = 200;

impl Tree {
    /// Every leaf by key path, in the skeleton's order.
    pub fn leaves(&self, digests: &[Sha256Digest]) -> Vec<(String, LeafValue)> {
        let mut out = Vec::new();
        self.leaves_of(self.root, String::new(), digests, &mut out, 0);
        out
    }

    fn leaves_of(
        &self,
        id: ObjId,
        path: String,
        digests: &[Sha256Digest],
        out: &mut Vec<(String, LeafValue)>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH.saturating_add(2) || out.len() as u64 > MAX_VALUES {
            return;
        }
        let value = |kind, text: String| LeafValue::Value { kind, text };
        let Some(o) = self.objs.get(id) else { return };
        let leaf = match o {
            Obj::None => value("none", "None".into()),
            Obj::Bool(b) => value("bool", if *b { "True" } else { "False" }.into()),
            Obj::Int(i) => value(
                "int",
                match i {
                    super::pickle::Int::Small(v) => v.to_string(),
                    super::pickle::Int::Big(b) => format!("0x{} (two's complement, little-endian)", hex::encode(b)),
                },
            ),
            Obj::Float(b) => value("float", format!("{:?}", f64::from_bits(*b))),
            Obj::Complex(re, im) => value("complex", format!("({:?}+{:?}j)", f64::from_bits(*re), f64::from_bits(*im))),
            Obj::Str(s) if s.len() <= SHOWN => value("str", crate::text::escape_bytes(s)),
            Obj::Str(s) => value("str", format!("{} bytes, sha256 {}", s.len(), hex::encode(Sha256::digest(s)))),
            Obj::Bytes(b) => value("bytes", format!("{} bytes, sha256 {}", b.len(), hex::encode(Sha256::digest(b)))),
            Obj::Dtype(d) => value("dtype", d.name.into()),
            Obj::Device(ty, i) => value(
                "device",
                match i {
                    Some(i) => format!("{}:{i}", crate::text::escape_bytes(ty)),
                    None => crate::text::escape_bytes(ty),
                },
            ),
            Obj::Tensor(t) => {
                let no = self.tensor_no.get(&id).copied().unwrap_or(usize::MAX);
                let sha256 = digests.get(no).copied().unwrap_or([0; 32]);
                out.push((path.clone(), LeafValue::Tensor { dtype: t.dtype.name, shape: t.size.clone(), sha256 }));
                if let Some(a) = self.attrs(t.attrs) {
                    self.leaves_of(a, join(&path, "@attributes"), digests, out, depth.saturating_add(1));
                }
                return;
            }
            Obj::Tuple(items) | Obj::List(items) if !items.is_empty() => {
                for (i, &item) in items.iter().enumerate() {
                    self.leaves_of(item, join(&path, &i.to_string()), digests, out, depth.saturating_add(1));
                }
                return;
            }
            Obj::Tuple(_) => value("tuple", "()".into()),
            Obj::List(_) => value("list", "[]".into()),
            Obj::Set(_) => {
                let n = self.set_items.get(&id).map_or(0, Vec::len);
                let mut h = Sha256::new();
                for i in self.set_items.get(&id).into_iter().flatten() {
                    h.update(i);
                }
                value("set", format!("{n} items, sha256 {}", hex::encode(h.finalize())))
            }
            Obj::Dict(d) => {
                if d.entries.is_empty() {
                    out.push((path.clone(), value("mapping", "{}".into())));
                }
                for &(k, v) in &d.entries {
                    self.leaves_of(v, join(&path, &self.key_text(k)), digests, out, depth.saturating_add(1));
                }
                if let Some(a) = self.attrs(d.attrs) {
                    self.leaves_of(a, join(&path, "@attributes"), digests, out, depth.saturating_add(1));
                }
                return;
            }
            Obj::Global(_) | Obj::Storage(_) => return,
        };
        out.push((path, leaf));
    }
}
