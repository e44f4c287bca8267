//! The pickle, read as data (docs/SPEC.md P4): an interpreter of the
//! contract's opcodes and globals only, over bytes, that builds objects in
//! an arena and never runs anything.
//!
//! Objects are shared as Python shares them: the stack, the memo and every
//! container hold indices into the arena, so a list appended after it was
//! memoized is the same list wherever it was reached, and a structure may
//! contain itself (refused later, when the tree is walked: `tree`).
//! Nothing is allocated in proportion to a declared length before the
//! length is checked against the bytes left; the memo is a map, so a
//! `LONG_BINPUT` at index 2³²−1 is one entry.
//!
//! `value` holds what a pickle builds; `globals` the names a `GLOBAL` may
//! give and the error naming any other; `machine` the interpreter's state,
//! its stack and memo, and the loop; `opcodes` what each accepted opcode
//! does; `calls` what a `REDUCE` of an accepted global builds (tensors and
//! storages among them).

mod calls;
mod globals;
mod machine;
mod opcodes;
mod value;

pub use globals::{Global, StorageClass};
pub(crate) use machine::read;
pub use machine::utf8_surrogatepass;
pub use value::{Dict, DictKind, Int, Obj, ObjId, StorageUse, Tensor};

use std::collections::BTreeSet;

/// The most opcodes one pickle may hold.
pub const MAX_OPCODES: u64 = 1 << 24;

/// The highest rank of a tensor.
pub const MAX_RANK: usize = 64;

/// How a pickle is read.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The file position of the bytes' first byte (errors name file offsets).
    pub base: u64,
    /// Whether more bytes than those handed may follow in the file (a
    /// prefix): running out then asks for more instead of failing, unless
    /// what is asked runs past `file_len`.
    pub more_in_file: bool,
    /// The file's length (used with `more_in_file`).
    pub file_len: u64,
    /// Which persistent ids are accepted: none, the zip's five-tuple, or the
    /// legacy six-tuple.
    pub ids: Ids,
}

/// The persistent ids a pickle may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ids {
    /// None (the legacy format's other pickles).
    None,
    /// `("storage", class, key, location, numel)`.
    Zip,
    /// `("storage", class, key, location, numel, None)`.
    Legacy,
}

/// A pickle read: its objects, its root, the storages it names.
#[derive(Debug, Clone)]
pub struct Pickle {
    /// Every object built, in the order built.
    pub objs: Vec<Obj>,
    /// The object `STOP` returned.
    pub root: ObjId,
    /// The storages named, in the order first named.
    pub storages: Vec<StorageUse>,
    /// The offset (relative to the bytes handed) just past `STOP`.
    pub end: usize,
    /// The highest `PROTO` seen (0 without one).
    pub protocol: u8,
    /// Every global named, as `module.name`.
    pub globals: BTreeSet<String>,
    /// Opcodes read.
    pub opcodes: u64,
    /// Calls that set `requires_grad` (not content; `inspect` says it).
    pub requires_grad: u64,
}

#[cfg(test)]
/// Runs a whole pickle of the zip format's ids, from offset 0.
fn run(b: &[u8]) -> Result<Pickle, crate::error::Error> {
    read(b, 0, Options { base: 0, more_in_file: false, file_len: 0, ids: Ids::Zip }).map_err(|s| match s {
        crate::source::Step::Fail(e) => e,
        crate::source::Step::NeedMore(n) => panic!("asked for {n}"),
    })
}
