//! The walk that checks a pickle's tree (docs/SPEC.md P7): kinds the
//! contract encodes, cycles, depth and value bounds, mappings sorted by
//! encoded key once, sets sorted with Python's equality, tensors listed
//! where first reached.

use std::collections::HashMap;

use sha2::{Digest as _, Sha256};

use super::{Leaf, MAX_DEPTH, MAX_VALUES, err, int_value, join, key_text, str_value, u64_value};
use crate::error::{Error, Result};
use crate::pytorch::pickle::{Int, Obj, ObjId};

/// The walk's state over the arena.
pub(super) struct Walk<'t> {
    pub(super) objs: &'t mut Vec<Obj>,
    pub(super) on_path: Vec<bool>,
    pub(super) sorted: Vec<bool>,
    pub(super) tensors: Vec<Leaf>,
    pub(super) tensor_no: HashMap<ObjId, usize>,
    pub(super) set_items: HashMap<ObjId, Vec<Vec<u8>>>,
    pub(super) values: u64,
    pub(super) tied: u64,
}

impl Walk<'_> {
    fn get(&self, id: ObjId) -> Result<&Obj> {
        self.objs.get(id).ok_or_else(|| Error::internal("an object out of range"))
    }

    pub(super) fn walk(&mut self, id: ObjId, depth: usize, path: &str) -> Result<()> {
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
        return Num::Int(Int::Small(i).minimal_le());
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
            Obj::Bool(b) => {
                Hashable::Num(vec![if *b { 0x02 } else { 0x01 }], Num::Int(Int::Small(i64::from(*b)).minimal_le()))
            }
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
