//! The interpreter's state: the bytes and position, the arena, the stack
//! and its marks, the memo (a map: no table in proportion to an index),
//! the storages named; the loop from the first opcode to `STOP`.

use std::collections::{BTreeSet, HashMap};

use super::value::{Obj, ObjId, StorageUse};
use super::{MAX_OPCODES, Options, Pickle};
use crate::error::{Error, ErrorKind};
use crate::pytorch::PytorchErrorKind;
use crate::source::Step;

/// A final error at file offset `at`.
pub(super) fn fail(at: u64, msg: impl Into<String>) -> Step {
    Step::Fail(Error::new(PytorchErrorKind::Pickle(msg.into())).at(at))
}

pub(super) fn fail_kind(at: u64, kind: impl Into<ErrorKind>) -> Step {
    Step::Fail(Error::new(kind).at(at))
}

/// The interpreter's state.
pub(super) struct Machine<'b> {
    pub(super) bytes: &'b [u8],
    pub(super) pos: usize,
    pub(super) opts: Options,
    pub(super) objs: Vec<Obj>,
    pub(super) stack: Vec<ObjId>,
    pub(super) marks: Vec<usize>,
    pub(super) memo: HashMap<u32, ObjId>,
    pub(super) storages: Vec<StorageUse>,
    pub(super) storage_keys: HashMap<Box<[u8]>, usize>,
    pub(super) globals: BTreeSet<String>,
    pub(super) protocol: u8,
    pub(super) requires_grad: u64,
    /// The offset of the opcode being run.
    pub(super) at: u64,
}

/// Reads one pickle starting at `start` in `bytes`.
pub(crate) fn read(bytes: &[u8], start: usize, opts: Options) -> Result<Pickle, Step> {
    let mut m = Machine {
        bytes,
        pos: start,
        opts,
        objs: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        storages: Vec::new(),
        storage_keys: HashMap::new(),
        globals: BTreeSet::new(),
        protocol: 0,
        requires_grad: 0,
        at: 0,
    };
    let mut opcodes = 0u64;
    loop {
        m.at = opts.base.saturating_add(m.pos as u64);
        if opcodes >= MAX_OPCODES {
            return Err(fail(m.at, format!("more than {MAX_OPCODES} opcodes")));
        }
        opcodes = opcodes.saturating_add(1);
        let op = m.take(1, "opcode")?.first().copied().unwrap_or(0);
        if op == b'.' {
            if !m.marks.is_empty() {
                return Err(fail(m.at, "STOP with a MARK left open"));
            }
            let [root] = m.stack[..] else {
                return Err(fail(m.at, format!("STOP with {} objects on the stack (one expected)", m.stack.len())));
            };
            return Ok(Pickle {
                objs: m.objs,
                root,
                storages: m.storages,
                end: m.pos,
                protocol: m.protocol,
                globals: m.globals,
                opcodes,
                requires_grad: m.requires_grad,
            });
        }
        m.step(op)?;
    }
}

impl Machine<'_> {
    /// The next `n` bytes, or a request for more, or the error that the
    /// pickle ends inside `what`.
    pub(super) fn take(&mut self, n: usize, what: &str) -> Result<&[u8], Step> {
        let end = self.pos.checked_add(n);
        match end.and_then(|e| self.bytes.get(self.pos..e)) {
            Some(b) => {
                self.pos = end.unwrap_or(self.pos);
                Ok(b)
            }
            None => {
                let left = self.bytes.len().saturating_sub(self.pos);
                let want = self.opts.base.saturating_add(self.pos as u64).saturating_add(n as u64);
                if self.opts.more_in_file && want <= self.opts.file_len {
                    return Err(Step::NeedMore(want));
                }
                let left = if self.opts.more_in_file {
                    self.opts.file_len.saturating_sub(self.opts.base.saturating_add(self.pos as u64))
                } else {
                    left as u64
                };
                Err(fail(self.at, format!("the pickle ends inside {what}: {n} bytes needed, {left} left (no STOP)")))
            }
        }
    }

    pub(super) fn u8(&mut self, what: &str) -> Result<u8, Step> {
        Ok(self.take(1, what)?.first().copied().unwrap_or(0))
    }

    pub(super) fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Step> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(super) fn push(&mut self, o: Obj) {
        self.objs.push(o);
        self.stack.push(self.objs.len().saturating_sub(1));
    }

    pub(super) fn new_obj(&mut self, o: Obj) -> ObjId {
        self.objs.push(o);
        self.objs.len().saturating_sub(1)
    }

    pub(super) fn pop(&mut self) -> Result<ObjId, Step> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(fail(self.at, "stack underflow (past a MARK)"));
        }
        self.stack.pop().ok_or_else(|| fail(self.at, "stack underflow"))
    }

    pub(super) fn top(&self) -> Result<ObjId, Step> {
        self.stack.last().copied().ok_or_else(|| fail(self.at, "stack underflow"))
    }

    /// The objects above the last mark, which is removed.
    pub(super) fn pop_mark(&mut self, op: &str) -> Result<Vec<ObjId>, Step> {
        let m = self.marks.pop().ok_or_else(|| fail(self.at, format!("{op} without a MARK")))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }

    pub(super) fn obj(&self, id: ObjId) -> Result<&Obj, Step> {
        self.objs.get(id).ok_or_else(|| Step::Fail(Error::internal("pickle object out of range")))
    }

    pub(super) fn memo_put(&mut self, idx: u32) -> Result<(), Step> {
        let top = self.top()?;
        self.memo.insert(idx, top);
        Ok(())
    }

    pub(super) fn memo_get(&mut self, idx: u32) -> Result<(), Step> {
        let id =
            *self.memo.get(&idx).ok_or_else(|| fail(self.at, format!("memo entry {idx} read before it was put")))?;
        self.stack.push(id);
        Ok(())
    }

    pub(super) fn string(&mut self, n: usize, strict: bool) -> Result<Box<[u8]>, Step> {
        let at = self.at;
        let b = self.take(n, "a string")?;
        let ok = if strict { std::str::from_utf8(b).is_ok() } else { utf8_surrogatepass(b) };
        if !ok {
            return Err(fail(at, "a string that is not UTF-8"));
        }
        Ok(b.into())
    }

    pub(super) fn str_of(&self, id: ObjId) -> Option<&[u8]> {
        match self.objs.get(id)? {
            Obj::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn u64_of(&self, id: ObjId) -> Option<u64> {
        match self.objs.get(id)? {
            Obj::Int(i) => i.as_u64(),
            _ => None,
        }
    }

    pub(super) fn is_empty_mapping(&self, id: ObjId) -> bool {
        matches!(self.objs.get(id), Some(Obj::Dict(d)) if d.entries.is_empty() && d.attrs.is_none_or(|a| matches!(self.objs.get(a), Some(Obj::Dict(s)) if s.entries.is_empty())))
    }
}

/// Whether `b` is UTF-8 as Python's `surrogatepass` reads it: standard
/// UTF-8, and also the three-byte forms of U+D800..U+DFFF.
pub fn utf8_surrogatepass(b: &[u8]) -> bool {
    let mut i = 0usize;
    while let Some(&c) = b.get(i) {
        let (n, lo, hi) = match c {
            0x00..=0x7F => (1, 0x80, 0xBF),
            0xC2..=0xDF => (2, 0x80, 0xBF),
            0xE0 => (3, 0xA0, 0xBF),
            0xE1..=0xEF => (3, 0x80, 0xBF),
            0xF0 => (4, 0x90, 0xBF),
            0xF1..=0xF3 => (4, 0x80, 0xBF),
            0xF4 => (4, 0x80, 0x8F),
            _ => return false,
        };
        // The second byte's range depends on the first; the rest are 80..BF.
        for k in 1..n {
            let Some(&x) = b.get(i.saturating_add(k)) else { return false };
            let (l, h) = if k == 1 { (lo, hi) } else { (0x80, 0xBF) };
            if x < l || x > h {
                return false;
            }
        }
        i = i.saturating_add(n);
    }
    true
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn memo_is_a_map_and_objects_are_shared() {
        // [] LONG_BINPUT 0xFFFFFFFF, LONG_BINGET it, APPEND onto itself: one
        // list holding itself, and no table of 2^32 slots.
        let p = run(b"\x80\x02]r\xff\xff\xff\xffj\xff\xff\xff\xffa.").unwrap();
        assert!(matches!(&p.objs[p.root], Obj::List(l) if l == &vec![p.root]));
    }

    #[test]
    fn strings_and_surrogates() {
        assert!(utf8_surrogatepass("héllo €𝄞".as_bytes()));
        assert!(utf8_surrogatepass(b"\xed\xa0\x80"));
        assert!(!utf8_surrogatepass(b"\xc0\x80"));
        assert!(!utf8_surrogatepass(b"\xe0\x80\x80"));
        assert!(!utf8_surrogatepass(b"\xf4\x90\x80\x80"));
        assert!(!utf8_surrogatepass(b"\xe2\x82"));
        assert!(run(b"U\x03\xed\xa0\x80.").is_err());
        assert!(run(b"X\x03\x00\x00\x00\xed\xa0\x80.").is_ok());
    }
}
