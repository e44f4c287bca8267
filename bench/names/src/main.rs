//! The parser's check for repeated names on 10^6 tensor names as
//! bench/memory.py writes them (`blk.%07d`, held inline as the parser's
//! `Name` holds them): the hand-written table of crates/formats/src/gguf/name.rs against
//! the same table on `hashbrown::HashTable<u32>` (the candidate of
//! docs/adr/0037), interleaved round by round; the median of each and the
//! ratio hashbrown / hand-written, and each table's allocation.
#![allow(dead_code)]

use std::time::Instant;

use hashbrown::HashTable;

/// The product's table, as it is.
#[path = "../../../crates/formats/src/gguf/name.rs"]
mod name;

/// The candidate: an entry's index in a `HashTable<u32>`, the name read
/// back from the list, a keyed hash (as the product's).
struct Candidate {
    table: HashTable<u32>,
    hasher: std::collections::hash_map::RandomState,
}

impl Candidate {
    fn insert<'a>(&mut self, index: usize, name: &[u8], name_of: impl Fn(usize) -> Option<&'a [u8]>) -> bool {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(name);
        if self.table.find(hash, |&i| name_of(i as usize) == Some(name)).is_some() {
            return false;
        }
        let hasher = &self.hasher;
        let index = u32::try_from(index).expect("under 4 billion names here");
        self.table.insert_unique(hash, index, |&i| hasher.hash_one(name_of(i as usize).unwrap_or_default()));
        true
    }
}

/// name.rs's table after `n` names: 4-byte slots, doubled from 16 before
/// an insert would leave it more than half full (`NameSet::insert`).
fn slot_bytes(n: usize) -> usize {
    let mut slots = 0usize;
    for len in 0..n {
        if len * 2 >= slots {
            slots = (slots * 2).max(16);
        }
    }
    slots * 4
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(1_000_000, |s| s.parse().expect("NAMES"));
    let reps: usize = args.next().map_or(7, |s| s.parse().expect("REPS"));
    let names: Vec<(u8, [u8; 31])> = (0..n)
        .map(|i| {
            let s = format!("blk.{i:07}");
            let mut b = [0u8; 31];
            b[..s.len()].copy_from_slice(s.as_bytes());
            (s.len() as u8, b)
        })
        .collect();
    let name = |i: usize| names.get(i).map(|(l, b)| &b[..*l as usize]);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut our_bytes, mut their_bytes) = (0, 0);
    for _ in 0..reps {
        let t = Instant::now();
        let mut set = name::NameSet::new();
        for i in 0..n {
            assert!(set.insert(name(i).expect("a name"), |j| if j < i { name(j) } else { None }));
        }
        ours.push(t.elapsed().as_secs_f64());
        our_bytes = slot_bytes(n);
        drop(set);
        let t = Instant::now();
        let mut set = Candidate { table: HashTable::new(), hasher: Default::default() };
        for i in 0..n {
            assert!(set.insert(i, name(i).expect("a name"), |j| if j < i { name(j) } else { None }));
        }
        theirs.push(t.elapsed().as_secs_f64());
        their_bytes = set.table.allocation_size();
    }
    ours.sort_by(f64::total_cmp);
    theirs.sort_by(f64::total_cmp);
    let (o, t) = (ours[reps / 2], theirs[reps / 2]);
    println!(
        "{n} names, median of {reps}: name.rs {:.1} ms ({:.1} MB), hashbrown {:.1} ms ({:.1} MB): hashbrown / name.rs {:.2}",
        o * 1e3,
        our_bytes as f64 / 1e6,
        t * 1e3,
        their_bytes as f64 / 1e6,
        t / o
    );
}
