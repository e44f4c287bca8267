//! What each accepted opcode does (P4's opcode list); every other opcode
//! is refused by its name.

use super::globals::Global;
use super::machine::{Machine, fail, fail_kind};
use super::value::{Dict, DictKind, Int, Obj, ObjId};
use crate::error::Error;
use crate::source::Step;

/// The longest module or name line of a `GLOBAL` (no accepted name comes
/// near it).
const MAX_GLOBAL_LINE: usize = 256;

impl Machine<'_> {
    pub(super) fn step(&mut self, op: u8) -> Result<(), Step> {
        match op {
            0x80 => {
                let p = self.u8("PROTO")?;
                if p > 2 {
                    return Err(fail(self.at, format!("pickle protocol {p} (only 2 and lower are accepted)")));
                }
                self.protocol = self.protocol.max(p);
            }
            b'(' => self.marks.push(self.stack.len()),
            b'N' => self.push(Obj::None),
            0x88 => self.push(Obj::Bool(true)),
            0x89 => self.push(Obj::Bool(false)),
            b'J' => {
                let v = i32::from_le_bytes(self.array::<4>("BININT")?);
                self.push(Obj::Int(Int::Small(v.into())));
            }
            b'K' => {
                let v = self.u8("BININT1")?;
                self.push(Obj::Int(Int::Small(v.into())));
            }
            b'M' => {
                let v = u16::from_le_bytes(self.array::<2>("BININT2")?);
                self.push(Obj::Int(Int::Small(v.into())));
            }
            0x8A => {
                let n = self.u8("LONG1")?;
                let v = Int::from_le(self.take(n.into(), "LONG1")?);
                self.push(Obj::Int(v));
            }
            b'G' => {
                let v = u64::from_be_bytes(self.array::<8>("BINFLOAT")?);
                self.push(Obj::Float(v));
            }
            b'X' => {
                let n = u32::from_le_bytes(self.array::<4>("BINUNICODE")?);
                let s = self.string(usize::try_from(n).unwrap_or(usize::MAX), false)?;
                self.push(Obj::Str(s));
            }
            b'U' => {
                let n = self.u8("SHORT_BINSTRING")?;
                let s = self.string(n.into(), true)?;
                self.push(Obj::Str(s));
            }
            b')' => self.push(Obj::Tuple(Vec::new())),
            b't' => {
                let items = self.pop_mark("TUPLE")?;
                self.push(Obj::Tuple(items));
            }
            0x85..=0x87 => {
                let n = usize::from(op.saturating_sub(0x84));
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop()?);
                }
                items.reverse();
                self.push(Obj::Tuple(items));
            }
            b']' => self.push(Obj::List(Vec::new())),
            b'a' => {
                let v = self.pop()?;
                self.append(vec![v], "APPEND")?;
            }
            b'e' => {
                let items = self.pop_mark("APPENDS")?;
                self.append(items, "APPENDS")?;
            }
            b'}' => self.push(Obj::Dict(Dict { entries: Vec::new(), kind: DictKind::Plain, attrs: None })),
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                self.set_items(vec![k, v], "SETITEM")?;
            }
            b'u' => {
                let items = self.pop_mark("SETITEMS")?;
                if items.len() % 2 != 0 {
                    return Err(fail(self.at, "SETITEMS with an odd number of objects"));
                }
                self.set_items(items, "SETITEMS")?;
            }
            0x8F => self.push(Obj::Set(Vec::new())),
            b'q' => {
                let i = self.u8("BINPUT")?;
                self.memo_put(i.into())?;
            }
            b'r' => {
                let i = u32::from_le_bytes(self.array::<4>("LONG_BINPUT")?);
                self.memo_put(i)?;
            }
            b'h' => {
                let i = self.u8("BINGET")?;
                self.memo_get(i.into())?;
            }
            b'j' => {
                let i = u32::from_le_bytes(self.array::<4>("LONG_BINGET")?);
                self.memo_get(i)?;
            }
            b'c' => {
                let module = self.line()?;
                let name = self.line()?;
                self.globals.insert(format!("{}.{}", String::from_utf8_lossy(&module), String::from_utf8_lossy(&name)));
                let g = Global::of(&module, &name).map_err(|k| fail_kind(self.at, k))?;
                self.push(Obj::Global(g));
            }
            b'R' => {
                let args = self.pop()?;
                let f = self.pop()?;
                let Obj::Global(g) = *self.obj(f)? else {
                    return Err(fail(
                        self.at,
                        format!("REDUCE calls {}, not an accepted function", self.obj(f)?.what()),
                    ));
                };
                let args = self.tuple_items(args, &g.name())?;
                let r = self.call(g, &args)?;
                self.stack.push(r);
            }
            0x81 => {
                let args = self.pop()?;
                let cls = self.pop()?;
                if !matches!(self.obj(cls)?, Obj::Global(Global::ParameterType)) {
                    return Err(fail(
                        self.at,
                        format!("NEWOBJ builds only a Parameter, not {}", self.obj(cls)?.what()),
                    ));
                }
                let args = self.tuple_items(args, "Parameter")?;
                let r = match args[..] {
                    [t] => t,
                    [t, g] if matches!(self.obj(g)?, Obj::Bool(_)) => t,
                    _ => return Err(fail(self.at, "Parameter(data[, requires_grad]) with other arguments")),
                };
                self.want_tensor(r, "Parameter")?;
                self.stack.push(r);
            }
            b'b' => {
                let state = self.pop()?;
                let inst = self.top()?;
                if !matches!(self.obj(state)?, Obj::Dict(_)) {
                    return Err(fail(
                        self.at,
                        format!("BUILD with {} as its state (a mapping expected)", self.obj(state)?.what()),
                    ));
                }
                match self.objs.get_mut(inst) {
                    Some(Obj::Dict(d)) if d.kind == DictKind::Ordered && d.attrs.is_none() => d.attrs = Some(state),
                    Some(Obj::Dict(d)) if d.kind == DictKind::Ordered => {
                        return Err(fail(self.at, "BUILD applied twice to one OrderedDict"));
                    }
                    Some(o) => {
                        let what = o.what();
                        return Err(fail(self.at, format!("BUILD applies only to an OrderedDict, not to {what}")));
                    }
                    None => return Err(Step::Fail(Error::internal("pickle object out of range"))),
                }
            }
            b'Q' => {
                let pid = self.pop()?;
                let s = self.persistent(pid)?;
                self.push(Obj::Storage(s));
            }
            other => {
                let name = opcode_name(other);
                return Err(fail(self.at, format!("opcode {name} (0x{other:02x}) is not accepted")));
            }
        }
        Ok(())
    }

    /// One line of a `GLOBAL`, without its newline.
    fn line(&mut self) -> Result<Box<[u8]>, Step> {
        let rest = self.bytes.get(self.pos..).unwrap_or(&[]);
        let window = rest.get(..MAX_GLOBAL_LINE.saturating_add(1)).unwrap_or(rest);
        match window.iter().position(|&b| b == b'\n') {
            Some(n) => {
                let line = self.take(n.saturating_add(1), "GLOBAL")?;
                Ok(line.get(..n).unwrap_or(&[]).into())
            }
            None if window.len() > MAX_GLOBAL_LINE => {
                Err(fail(self.at, format!("a GLOBAL line longer than {MAX_GLOBAL_LINE} bytes")))
            }
            None => {
                // No newline in what is there: ask for more, or fail.
                self.take(window.len().saturating_add(1), "GLOBAL")?;
                Err(fail(self.at, "GLOBAL without its newline"))
            }
        }
    }

    fn append(&mut self, items: Vec<ObjId>, op: &str) -> Result<(), Step> {
        let at = self.at;
        let top = self.top()?;
        match self.objs.get_mut(top) {
            Some(Obj::List(l)) => {
                l.extend(items);
                Ok(())
            }
            Some(o) => {
                let what = o.what();
                Err(fail(at, format!("{op} onto {what} (only onto a list)")))
            }
            None => Err(Step::Fail(Error::internal("pickle object out of range"))),
        }
    }

    fn set_items(&mut self, items: Vec<ObjId>, op: &str) -> Result<(), Step> {
        let at = self.at;
        let top = self.top()?;
        match self.objs.get_mut(top) {
            Some(Obj::Dict(d)) => {
                d.entries.extend(items.chunks_exact(2).filter_map(|kv| Some((*kv.first()?, *kv.get(1)?))));
                Ok(())
            }
            Some(o) => {
                let what = o.what();
                Err(fail(at, format!("{op} into {what} (only into a mapping)")))
            }
            None => Err(Step::Fail(Error::internal("pickle object out of range"))),
        }
    }

    pub(super) fn tuple_items(&self, id: ObjId, callee: &str) -> Result<Vec<ObjId>, Step> {
        match self.obj(id)? {
            Obj::Tuple(t) => Ok(t.clone()),
            o => Err(fail(self.at, format!("{callee} called with {} as its arguments (a tuple expected)", o.what()))),
        }
    }

    pub(super) fn want_tensor(&self, id: ObjId, callee: &str) -> Result<(), Step> {
        match self.obj(id)? {
            Obj::Tensor(_) => Ok(()),
            o => Err(fail(self.at, format!("{callee}'s data is {} (a tensor expected)", o.what()))),
        }
    }
}

/// An opcode's name, for messages.
fn opcode_name(op: u8) -> &'static str {
    match op {
        b'I' => "INT",
        b'L' => "LONG",
        b'S' => "STRING",
        b'V' => "UNICODE",
        b'F' => "FLOAT",
        b'T' => "BINSTRING",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        b'P' => "PERSID",
        b'i' => "INST",
        b'o' => "OBJ",
        b'g' => "GET",
        b'p' => "PUT",
        b'l' => "LIST",
        b'd' => "DICT",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        0x82..=0x84 => "EXT",
        0x8B => "LONG4",
        0x8C => "SHORT_BINUNICODE",
        0x8D => "BINUNICODE8",
        0x8E => "BINBYTES8",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "unknown",
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::super::run;

    #[test]
    fn refusals_name_offsets_and_globals() {
        let e = run(b"\x80\x02cos\nsystem\n.").unwrap_err();
        assert_eq!(e.offset(), Some(2));
        assert!(e.to_string().contains("would import and call `os.system`"), "{e}");
        let e = run(b"\x80\x03N.").unwrap_err();
        assert!(e.to_string().contains("protocol 3"), "{e}");
        let e = run(b"\x80\x02X\xff\xff\xff\xff").unwrap_err();
        assert_eq!(e.offset(), Some(2));
        assert!(e.to_string().contains("4294967295 bytes needed"), "{e}");
        let e = run(b"\x80\x02N").unwrap_err();
        assert!(e.to_string().contains("no STOP"), "{e}");
        let e = run(b"\x80\x02NN.").unwrap_err();
        assert!(e.to_string().contains("2 objects"), "{e}");
        let e = run(b"\x80\x02h\x05.").unwrap_err();
        assert!(e.to_string().contains("memo entry 5"), "{e}");
        let e = run(b"\x80\x02(N0.").unwrap_err();
        assert!(e.to_string().contains("POP"), "{e}");
        let e = run(b"a.").unwrap_err();
        assert!(e.to_string().contains("underflow"), "{e}");
        let e = run(b"ctorch._utils\n_rebuild_qtensor\n.").unwrap_err();
        assert!(e.to_string().contains("dense tensors only"), "{e}");
    }
}
