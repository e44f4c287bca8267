//! [`Name`]: the bytes of a tensor name or a key, held compactly. A model
//! may have a million tensors: a `Vec<u8>` per name is 24 bytes plus a heap
//! block (32 bytes or more) and an allocation each; nearly every real name
//! fits in 30 bytes, held here inline in 32.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Names up to this many bytes are held inline.
const INLINE: usize = 30;

/// The bytes of a name (not required to be UTF-8); compares, orders and
/// hashes as its bytes, and derefs to them.
#[derive(Clone)]
pub struct Name(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Name {
    /// A name of these bytes.
    pub fn new(bytes: &[u8]) -> Name {
        let mut inline = [0u8; INLINE];
        match (inline.get_mut(..bytes.len()), u8::try_from(bytes.len())) {
            (Some(head), Ok(len)) => {
                head.copy_from_slice(bytes);
                Name(Repr::Inline { len, bytes: inline })
            }
            _ => Name(Repr::Heap(bytes.into())),
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or(bytes),
            Repr::Heap(b) => b,
        }
    }
}

impl Deref for Name {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Name {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for Name {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<&[u8]> for Name {
    fn from(bytes: &[u8]) -> Name {
        Name::new(bytes)
    }
}

impl From<Name> for Vec<u8> {
    fn from(name: Name) -> Vec<u8> {
        name.as_slice().to_vec()
    }
}

/// As a `Vec<u8>` prints: a list of byte values.
impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

/// As its bytes hash, so that a set of names can be asked with a `&[u8]`.
impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl PartialEq<[u8]> for Name {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u8]> for Name {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Name {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<Vec<u8>> for Name {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<Name> for Vec<u8> {
    fn eq(&self, other: &Name) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<Name> for [u8] {
    fn eq(&self, other: &Name) -> bool {
        self == other.as_slice()
    }
}

impl PartialEq<Name> for &[u8] {
    fn eq(&self, other: &Name) -> bool {
        *self == other.as_slice()
    }
}

/// The names of a list seen so far, as their indices in it (4 bytes a
/// slot, at most half the slots full): the parser asks it for a repeated
/// name or key as each entry is read. A `HashSet<&[u8]>` would take 16
/// bytes and a control byte a slot, at up to 7/8 full: 35 MB for a million
/// tensor names, where this takes 8.
pub(crate) struct NameSet {
    /// `EMPTY`, or an entry's index modulo `modulus`: past `modulus`
    /// entries (4 billion: never in practice) each index with that rest
    /// is compared, so the set is exact at any size.
    slots: Vec<u32>,
    len: usize,
    modulus: usize,
    hasher: std::collections::hash_map::RandomState,
}

/// An empty slot.
const EMPTY: u32 = u32::MAX;

impl NameSet {
    pub(crate) fn new() -> NameSet {
        NameSet::with_modulus(EMPTY as usize)
    }

    fn with_modulus(modulus: usize) -> NameSet {
        NameSet { slots: Vec::new(), len: 0, modulus, hasher: std::collections::hash_map::RandomState::new() }
    }

    fn slot_of(&self, name: &[u8]) -> usize {
        use std::hash::BuildHasher;
        // The table's length is a power of two; the hash is keyed, so no
        // input can aim names at one slot.
        (self.hasher.hash_one(name) as usize) & self.slots.len().wrapping_sub(1)
    }

    /// The slot that holds `name`, or the empty slot where it would go.
    fn find<'a>(&self, name: &[u8], name_of: &impl Fn(usize) -> Option<&'a [u8]>) -> (usize, bool) {
        let mut at = self.slot_of(name);
        loop {
            match self.slots.get(at).copied() {
                Some(EMPTY) | None => return (at, false),
                Some(rest) => {
                    // The entries whose index has this rest: one, below 4 billion.
                    let mut i = rest as usize;
                    while i < self.len {
                        if name_of(i) == Some(name) {
                            return (at, true);
                        }
                        i = i.saturating_add(self.modulus);
                    }
                }
            }
            at = at.wrapping_add(1) & self.slots.len().wrapping_sub(1);
        }
    }

    /// Adds the next entry of the list (its index: how many were added), named
    /// `name`; false if an entry of that name was added before, which is
    /// then not added. `name_of(i)` is the name of entry `i` added before.
    pub(crate) fn insert<'a>(&mut self, name: &[u8], name_of: impl Fn(usize) -> Option<&'a [u8]>) -> bool {
        if self.len.saturating_mul(2) >= self.slots.len() {
            self.grow(&name_of);
        }
        let (at, found) = self.find(name, &name_of);
        if found {
            return false;
        }
        self.put(at, self.len);
        self.len = self.len.saturating_add(1);
        true
    }

    /// Marks slot `at` as entry `index`'s.
    fn put(&mut self, at: usize, index: usize) {
        let rest = index.checked_rem(self.modulus).and_then(|r| u32::try_from(r).ok());
        if let (Some(slot), Some(rest)) = (self.slots.get_mut(at), rest) {
            *slot = rest;
        }
    }

    /// Doubles the table (from 16 slots) and puts every entry back: the
    /// entries are 0 to `len`, the list's first.
    fn grow<'a>(&mut self, name_of: &impl Fn(usize) -> Option<&'a [u8]>) {
        let size = self.slots.len().saturating_mul(2).max(16);
        // The old table goes first: the two are never held at once.
        self.slots = Vec::new();
        self.slots = vec![EMPTY; size];
        let len = std::mem::replace(&mut self.len, 0);
        for i in 0..len {
            let name = name_of(i).unwrap_or_default();
            let (at, _) = self.find(name, name_of);
            self.put(at, i);
            self.len = i.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names_keep_their_bytes() {
        for len in [0, 1, 29, 30, 31, 200] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let name = Name::new(&bytes);
            assert_eq!(name.as_slice(), bytes.as_slice(), "{len}");
            assert_eq!(name, bytes);
            assert_eq!(format!("{name:?}"), format!("{bytes:?}"));
            assert_eq!(Vec::from(name.clone()), bytes);
        }
        assert!(matches!(Name::new(&[1; 30]).0, Repr::Inline { .. }));
        assert!(matches!(Name::new(&[1; 31]).0, Repr::Heap(_)));
        assert_eq!(std::mem::size_of::<Name>(), 32);
    }

    #[test]
    fn a_name_set_finds_every_repeat() {
        // The real modulus, and a tiny one: many indices share each rest.
        for modulus in [EMPTY as usize, 7] {
            let names: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("t{}", i % 3001).into_bytes()).collect();
            let mut set = NameSet::with_modulus(modulus);
            let mut kept: Vec<&[u8]> = Vec::new();
            for (i, n) in names.iter().enumerate() {
                let fresh = set.insert(n, |j| kept.get(j).copied());
                assert_eq!(fresh, i < 3001, "{i}, modulus {modulus}");
                if fresh {
                    kept.push(n);
                }
            }
            assert_eq!(set.len, 3001);
        }
        let mut set = NameSet::new();
        assert!(set.insert(b"", |_| Some(b"".as_slice())));
        assert!(!set.insert(b"", |_| Some(b"".as_slice())));
    }

    #[test]
    fn names_order_and_hash_as_bytes() {
        let (a, b) = (Name::new(b"blk.0.attn"), Name::new(&[b'z'; 40]));
        assert!(a < b && Name::new(b"") < a && Name::new(b"blk.0.attn\0") > a);
        let set: std::collections::HashSet<Name> = [a.clone(), b.clone()].into_iter().collect();
        assert!(set.contains(b"blk.0.attn".as_slice()) && set.contains([b'z'; 40].as_slice()));
    }
}
