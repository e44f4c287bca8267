//! The pickle, read as data (docs/SPEC.md P4): an interpreter of the
//! contract's opcodes and globals only, over bytes, that builds objects in
//! an arena and never runs anything.
//!
//! Objects are shared as Python shares them: the stack, the memo and every
//! container hold indices into the arena, so a list appended after it was
//! memoized is the same list wherever it was reached, and a structure may
//! contain itself (refused later, when the tree is walked: `tree.rs`).
//! Nothing is allocated in proportion to a declared length before the
//! length is checked against the bytes left; the memo is a map, so a
//! `LONG_BINPUT` at index 2³²−1 is one entry.

use crate::pytorch::PytorchErrorKind;
use std::collections::{BTreeSet, HashMap};

use super::dtype::{self, Dtype};
use crate::error::{Error, ErrorKind};
use crate::source::Step;

/// The most opcodes one pickle may hold.
pub const MAX_OPCODES: u64 = 1 << 24;

/// The longest module or name line of a `GLOBAL` (no accepted name comes
/// near it).
const MAX_GLOBAL_LINE: usize = 256;

/// The highest rank of a tensor.
pub const MAX_RANK: usize = 64;

/// An object's index in [`Pickle::objs`].
pub type ObjId = usize;

/// An integer: an `i64` when it fits, else its minimal two's complement
/// bytes, little-endian.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Int {
    /// Fits 64 bits.
    Small(i64),
    /// Does not: its minimal two's complement bytes, little-endian.
    Big(Box<[u8]>),
}

impl Int {
    /// The integer of little-endian two's complement bytes.
    pub fn from_le(bytes: &[u8]) -> Int {
        let min = minimal(bytes);
        if min.len() <= 8 {
            let fill = if min.last().is_some_and(|b| b & 0x80 != 0) { 0xFF } else { 0 };
            let mut b = [fill; 8];
            for (o, v) in b.iter_mut().zip(min) {
                *o = *v;
            }
            Int::Small(i64::from_le_bytes(b))
        } else {
            Int::Big(min.into())
        }
    }

    /// Its minimal two's complement bytes, little-endian (0 is none).
    pub fn minimal_le(&self) -> Vec<u8> {
        match self {
            Int::Small(v) => minimal(&v.to_le_bytes()).to_vec(),
            Int::Big(b) => b.to_vec(),
        }
    }

    /// The value as a `u64`, when it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Int::Small(v) => u64::try_from(*v).ok(),
            Int::Big(_) => None,
        }
    }
}

/// The shortest prefix of little-endian two's complement `bytes` with the
/// same value.
fn minimal(bytes: &[u8]) -> &[u8] {
    let mut n = bytes.len();
    while let Some(top) = n.checked_sub(1).and_then(|i| bytes.get(i)) {
        let below = n.checked_sub(2).and_then(|i| bytes.get(i));
        let redundant = match (top, below) {
            (0x00, None) => true,
            (0x00, Some(b)) => b & 0x80 == 0,
            (0xFF, Some(b)) => b & 0x80 != 0,
            _ => false,
        };
        if !redundant {
            break;
        }
        n = n.saturating_sub(1);
    }
    bytes.get(..n).unwrap_or(&[])
}

/// A mapping's kind: not content, but `BUILD` applies only to an `OrderedDict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DictKind {
    /// `EMPTY_DICT`.
    Plain,
    /// `collections.OrderedDict`.
    Ordered,
    /// `collections.Counter`.
    Counter,
}

/// A mapping under construction or built.
#[derive(Debug, Clone)]
pub struct Dict {
    /// Its entries, as set (sorted by encoded key when the tree is walked).
    pub entries: Vec<(ObjId, ObjId)>,
    /// Which constructor made it.
    pub kind: DictKind,
    /// The state a `BUILD` gave it (its attributes when non-empty).
    pub attrs: Option<ObjId>,
}

/// A storage class named in a persistent id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageClass {
    /// `torch.FloatStorage` and the others of the table.
    Typed(&'static Dtype),
    /// `torch.UntypedStorage`: bytes.
    Untyped,
}

impl StorageClass {
    /// Bytes per element.
    pub fn elem(self) -> u64 {
        match self {
            StorageClass::Typed(d) => d.size,
            StorageClass::Untyped => 1,
        }
    }

    /// The class's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            StorageClass::Typed(d) => d.storage.unwrap_or(d.torch),
            StorageClass::Untyped => "UntypedStorage",
        }
    }
}

/// A storage the pickle names through a persistent id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageUse {
    /// Its key (the record `data/<key>`, or a legacy key).
    pub key: Box<[u8]>,
    /// Its class.
    pub class: StorageClass,
    /// Its element count, as the id states it.
    pub numel: u64,
    /// The offset of the first `BINPERSID` naming it.
    pub at: u64,
}

impl StorageUse {
    /// Its bytes (checked when the id was read).
    pub fn nbytes(&self) -> u64 {
        self.numel.saturating_mul(self.class.elem())
    }
}

/// A tensor: its storage, dtype and geometry (checked against the storage's
/// stated size when it was built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Index into [`Pickle::storages`].
    pub storage: usize,
    /// Its dtype.
    pub dtype: &'static Dtype,
    /// The storage offset, in elements of `dtype`.
    pub offset: u64,
    /// Its shape.
    pub size: Vec<u64>,
    /// Its strides, in elements.
    pub stride: Vec<u64>,
    /// Its attributes (a parameter's state), when any were given.
    pub attrs: Option<ObjId>,
    /// The offset of the call that built it.
    pub at: u64,
}

impl Tensor {
    /// The number of elements (checked when built).
    pub fn numel(&self) -> u64 {
        self.size.iter().try_fold(1u64, |a, &s| a.checked_mul(s)).unwrap_or(u64::MAX)
    }

    /// Bytes of its elements.
    pub fn nbytes(&self) -> u64 {
        self.numel().saturating_mul(self.dtype.size)
    }
}

/// What a `GLOBAL` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Global {
    /// `collections.OrderedDict`.
    OrderedDict,
    /// `collections.Counter`.
    Counter,
    /// `torch._utils._rebuild_tensor` (1), `_v2` (2), `_v3` (3).
    RebuildTensor(u8),
    /// `torch._utils._rebuild_parameter`.
    RebuildParameter,
    /// `torch._utils._rebuild_parameter_with_state`.
    RebuildParameterWithState,
    /// `torch._tensor._rebuild_from_type_v2`.
    RebuildFromType,
    /// `torch.Tensor`.
    TensorType,
    /// `torch.nn.parameter.Parameter`.
    ParameterType,
    /// A storage class.
    Storage(StorageClass),
    /// `torch.Size`.
    Size,
    /// `torch.<dtype>`.
    Dtype(&'static Dtype),
    /// `torch.device`.
    Device,
    /// `_codecs.encode`.
    Encode,
    /// `builtins.bytearray`.
    ByteArray,
    /// `builtins.set`.
    Set,
    /// `builtins.complex`.
    Complex,
}

impl Global {
    /// The accepted global `module.name`, or the error naming what loading would run.
    fn of(module: &[u8], name: &[u8]) -> Result<Global, PytorchErrorKind> {
        let g = match (module, name) {
            (b"collections", b"OrderedDict") => Global::OrderedDict,
            (b"collections", b"Counter") => Global::Counter,
            (b"torch._utils", b"_rebuild_tensor") => Global::RebuildTensor(1),
            (b"torch._utils", b"_rebuild_tensor_v2") => Global::RebuildTensor(2),
            (b"torch._utils", b"_rebuild_tensor_v3") => Global::RebuildTensor(3),
            (b"torch._utils", b"_rebuild_parameter") => Global::RebuildParameter,
            (b"torch._utils", b"_rebuild_parameter_with_state") => Global::RebuildParameterWithState,
            (b"torch._tensor", b"_rebuild_from_type_v2") => Global::RebuildFromType,
            (b"torch", b"Tensor") => Global::TensorType,
            (b"torch.nn.parameter", b"Parameter") => Global::ParameterType,
            (b"torch" | b"torch.storage", b"UntypedStorage") => Global::Storage(StorageClass::Untyped),
            (b"torch", b"Size") => Global::Size,
            (b"torch", b"device") => Global::Device,
            (b"_codecs", b"encode") => Global::Encode,
            (b"builtins" | b"__builtin__", b"bytearray") => Global::ByteArray,
            (b"builtins" | b"__builtin__", b"set") => Global::Set,
            (b"builtins" | b"__builtin__", b"complex") => Global::Complex,
            (b"torch", n) if dtype::by_storage(n).is_some() => {
                Global::Storage(StorageClass::Typed(dtype::by_storage(n).unwrap_or(&dtype::DTYPES[0])))
            }
            (b"torch", n) if dtype::by_torch_name(n).is_some() => {
                Global::Dtype(dtype::by_torch_name(n).unwrap_or(&dtype::DTYPES[0]))
            }
            _ => {
                let (module, name) = (String::from_utf8_lossy(module), String::from_utf8_lossy(name));
                if module.starts_with("torch") && name.starts_with("_rebuild_") {
                    return Err(PytorchErrorKind::Checkpoint(format!(
                        "the pickle rebuilds a tensor with `{module}.{name}`: this label covers dense tensors only \
                         (quantized, sparse, meta, nested and subclass tensors are refused)"
                    )));
                }
                return Err(PytorchErrorKind::RefusedGlobal { module: module.into_owned(), name: name.into_owned() });
            }
        };
        Ok(g)
    }

    /// Its name, for messages.
    pub fn name(self) -> String {
        match self {
            Global::OrderedDict => "collections.OrderedDict".into(),
            Global::Counter => "collections.Counter".into(),
            Global::RebuildTensor(1) => "torch._utils._rebuild_tensor".into(),
            Global::RebuildTensor(v) => format!("torch._utils._rebuild_tensor_v{v}"),
            Global::RebuildParameter => "torch._utils._rebuild_parameter".into(),
            Global::RebuildParameterWithState => "torch._utils._rebuild_parameter_with_state".into(),
            Global::RebuildFromType => "torch._tensor._rebuild_from_type_v2".into(),
            Global::TensorType => "torch.Tensor".into(),
            Global::ParameterType => "torch.nn.parameter.Parameter".into(),
            Global::Storage(c) => format!("torch.{}", c.name()),
            Global::Size => "torch.Size".into(),
            Global::Dtype(d) => format!("torch.{}", d.torch),
            Global::Device => "torch.device".into(),
            Global::Encode => "_codecs.encode".into(),
            Global::ByteArray => "builtins.bytearray".into(),
            Global::Set => "builtins.set".into(),
            Global::Complex => "builtins.complex".into(),
        }
    }
}

/// An object the pickle built.
#[derive(Debug, Clone)]
pub enum Obj {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An int.
    Int(Int),
    /// A float's bits.
    Float(u64),
    /// A complex number's two parts' bits.
    Complex(u64, u64),
    /// A string's bytes (UTF-8, surrogates as Python's `surrogatepass` writes them).
    Str(Box<[u8]>),
    /// Bytes.
    Bytes(Box<[u8]>),
    /// A tuple (`torch.Size` too).
    Tuple(Vec<ObjId>),
    /// A list.
    List(Vec<ObjId>),
    /// A set's items, as given.
    Set(Vec<ObjId>),
    /// A mapping.
    Dict(Dict),
    /// A name a `GLOBAL` pushed (a class or a function: no value).
    Global(Global),
    /// A storage (index into [`Pickle::storages`]): no value.
    Storage(usize),
    /// A tensor.
    Tensor(Tensor),
    /// A dtype.
    Dtype(&'static Dtype),
    /// A device: its type and index.
    Device(Box<[u8]>, Option<u64>),
}

impl Obj {
    /// What it is, in words.
    pub fn what(&self) -> &'static str {
        match self {
            Obj::None => "None",
            Obj::Bool(_) => "a bool",
            Obj::Int(_) => "an int",
            Obj::Float(_) => "a float",
            Obj::Complex(..) => "a complex number",
            Obj::Str(_) => "a string",
            Obj::Bytes(_) => "bytes",
            Obj::Tuple(_) => "a tuple",
            Obj::List(_) => "a list",
            Obj::Set(_) => "a set",
            Obj::Dict(_) => "a mapping",
            Obj::Global(_) => "a class or function",
            Obj::Storage(_) => "a storage",
            Obj::Tensor(_) => "a tensor",
            Obj::Dtype(_) => "a dtype",
            Obj::Device(..) => "a device",
        }
    }
}

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

/// A final error at file offset `at`.
fn fail(at: u64, msg: impl Into<String>) -> Step {
    Step::Fail(Error::new(PytorchErrorKind::Pickle(msg.into())).at(at))
}

fn fail_kind(at: u64, kind: impl Into<ErrorKind>) -> Step {
    Step::Fail(Error::new(kind).at(at))
}

/// The interpreter's state.
struct Machine<'b> {
    bytes: &'b [u8],
    pos: usize,
    opts: Options,
    objs: Vec<Obj>,
    stack: Vec<ObjId>,
    marks: Vec<usize>,
    memo: HashMap<u32, ObjId>,
    storages: Vec<StorageUse>,
    storage_keys: HashMap<Box<[u8]>, usize>,
    globals: BTreeSet<String>,
    protocol: u8,
    requires_grad: u64,
    /// The offset of the opcode being run.
    at: u64,
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
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], Step> {
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

    fn u8(&mut self, what: &str) -> Result<u8, Step> {
        Ok(self.take(1, what)?.first().copied().unwrap_or(0))
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Step> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn push(&mut self, o: Obj) {
        self.objs.push(o);
        self.stack.push(self.objs.len().saturating_sub(1));
    }

    fn new_obj(&mut self, o: Obj) -> ObjId {
        self.objs.push(o);
        self.objs.len().saturating_sub(1)
    }

    fn pop(&mut self) -> Result<ObjId, Step> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(fail(self.at, "stack underflow (past a MARK)"));
        }
        self.stack.pop().ok_or_else(|| fail(self.at, "stack underflow"))
    }

    fn top(&self) -> Result<ObjId, Step> {
        self.stack.last().copied().ok_or_else(|| fail(self.at, "stack underflow"))
    }

    /// The objects above the last mark, which is removed.
    fn pop_mark(&mut self, op: &str) -> Result<Vec<ObjId>, Step> {
        let m = self.marks.pop().ok_or_else(|| fail(self.at, format!("{op} without a MARK")))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }

    fn obj(&self, id: ObjId) -> Result<&Obj, Step> {
        self.objs.get(id).ok_or_else(|| Step::Fail(Error::internal("pickle object out of range")))
    }

    fn memo_put(&mut self, idx: u32) -> Result<(), Step> {
        let top = self.top()?;
        self.memo.insert(idx, top);
        Ok(())
    }

    fn memo_get(&mut self, idx: u32) -> Result<(), Step> {
        let id =
            *self.memo.get(&idx).ok_or_else(|| fail(self.at, format!("memo entry {idx} read before it was put")))?;
        self.stack.push(id);
        Ok(())
    }

    fn string(&mut self, n: usize, strict: bool) -> Result<Box<[u8]>, Step> {
        let at = self.at;
        let b = self.take(n, "a string")?;
        let ok = if strict { std::str::from_utf8(b).is_ok() } else { utf8_surrogatepass(b) };
        if !ok {
            return Err(fail(at, "a string that is not UTF-8"));
        }
        Ok(b.into())
    }

    fn step(&mut self, op: u8) -> Result<(), Step> {
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

    fn tuple_items(&self, id: ObjId, callee: &str) -> Result<Vec<ObjId>, Step> {
        match self.obj(id)? {
            Obj::Tuple(t) => Ok(t.clone()),
            o => Err(fail(self.at, format!("{callee} called with {} as its arguments (a tuple expected)", o.what()))),
        }
    }

    fn want_tensor(&self, id: ObjId, callee: &str) -> Result<(), Step> {
        match self.obj(id)? {
            Obj::Tensor(_) => Ok(()),
            o => Err(fail(self.at, format!("{callee}'s data is {} (a tensor expected)", o.what()))),
        }
    }

    fn str_of(&self, id: ObjId) -> Option<&[u8]> {
        match self.objs.get(id)? {
            Obj::Str(s) => Some(s),
            _ => None,
        }
    }

    fn u64_of(&self, id: ObjId) -> Option<u64> {
        match self.objs.get(id)? {
            Obj::Int(i) => i.as_u64(),
            _ => None,
        }
    }

    fn is_empty_mapping(&self, id: ObjId) -> bool {
        matches!(self.objs.get(id), Some(Obj::Dict(d)) if d.entries.is_empty() && d.attrs.is_none_or(|a| matches!(self.objs.get(a), Some(Obj::Dict(s)) if s.entries.is_empty())))
    }

    /// Calls an accepted global with its arguments (P4's table).
    fn call(&mut self, g: Global, args: &[ObjId]) -> Result<ObjId, Step> {
        let at = self.at;
        let bad = |what: &str| fail(at, format!("{} called with {what}", g.name()));
        match g {
            Global::OrderedDict | Global::Counter => {
                let kind = if g == Global::Counter { DictKind::Counter } else { DictKind::Ordered };
                let entries = match (g, args) {
                    (_, []) => Vec::new(),
                    (Global::OrderedDict, [l]) => {
                        let Obj::List(pairs) = self.obj(*l)? else {
                            return Err(bad("an argument that is not a list of pairs"));
                        };
                        let mut entries = Vec::with_capacity(pairs.len());
                        for p in pairs {
                            match self.obj(*p)? {
                                Obj::List(kv) | Obj::Tuple(kv) if kv.len() == 2 => {
                                    entries.push((*kv.first().unwrap_or(p), *kv.get(1).unwrap_or(p)));
                                }
                                _ => return Err(bad("a list item that is not a [key, value] pair")),
                            }
                        }
                        entries
                    }
                    (Global::Counter, [d]) => match self.obj(*d)? {
                        Obj::Dict(d) if d.attrs.is_none() => d.entries.clone(),
                        _ => return Err(bad("an argument that is not a mapping")),
                    },
                    _ => return Err(bad(&format!("{} arguments", args.len()))),
                };
                Ok(self.new_obj(Obj::Dict(Dict { entries, kind, attrs: None })))
            }
            Global::RebuildTensor(v) => self.rebuild_tensor(v, args),
            Global::RebuildParameter | Global::RebuildParameterWithState => {
                let (data, grad, hooks, state) = match (g, args) {
                    (Global::RebuildParameter, [d, r, h]) => (*d, *r, *h, None),
                    (Global::RebuildParameterWithState, [d, r, h, s]) => (*d, *r, *h, Some(*s)),
                    _ => return Err(bad(&format!("{} arguments", args.len()))),
                };
                self.want_tensor(data, &g.name())?;
                match self.obj(grad)? {
                    Obj::Bool(true) => self.requires_grad = self.requires_grad.saturating_add(1),
                    Obj::Bool(false) => {}
                    _ => return Err(bad("a requires_grad that is not a bool")),
                }
                self.check_hooks(hooks, &g.name())?;
                match state {
                    None => Ok(data),
                    Some(s) => self.with_state(data, s, &g.name()),
                }
            }
            Global::RebuildFromType => {
                let [func, ty, inner, state] = args else {
                    return Err(bad(&format!("{} arguments", args.len())));
                };
                let Obj::Global(f) = *self.obj(*func)? else {
                    return Err(bad("a function that is not a global"));
                };
                if !matches!(f, Global::RebuildTensor(_) | Global::RebuildParameter | Global::RebuildParameterWithState)
                {
                    return Err(bad(&format!("the function {}", f.name())));
                }
                if !matches!(self.obj(*ty)?, Obj::Global(Global::TensorType | Global::ParameterType)) {
                    return Err(bad("a type other than torch.Tensor or torch.nn.parameter.Parameter"));
                }
                let inner = self.tuple_items(*inner, &f.name())?;
                let t = self.call(f, &inner)?;
                self.want_tensor(t, &g.name())?;
                self.with_state(t, *state, &g.name())
            }
            Global::Size => {
                let [t] = args else { return Err(bad(&format!("{} arguments", args.len()))) };
                let Obj::Tuple(items) = self.obj(*t)? else { return Err(bad("an argument that is not a tuple")) };
                let items = items.clone();
                if items.iter().any(|&i| !matches!(self.objs.get(i), Some(Obj::Int(_)))) {
                    return Err(bad("a tuple holding something other than ints"));
                }
                Ok(self.new_obj(Obj::Tuple(items)))
            }
            Global::Device => {
                let dev = match args {
                    [s] => {
                        let s = self.str_of(*s).ok_or_else(|| bad("an argument that is not a string"))?;
                        parse_device(s).ok_or_else(|| bad("a string that is not `type` or `type:index`"))?
                    }
                    [s, i] => {
                        let s = self.str_of(*s).ok_or_else(|| bad("a type that is not a string"))?;
                        let i = self.u64_of(*i).ok_or_else(|| bad("an index that is not an int ≥ 0"))?;
                        if s.is_empty() || s.contains(&b':') {
                            return Err(bad("a type that is empty or holds ':'"));
                        }
                        (s.into(), Some(i))
                    }
                    _ => return Err(bad(&format!("{} arguments", args.len()))),
                };
                Ok(self.new_obj(Obj::Device(dev.0, dev.1)))
            }
            Global::Encode => {
                let [s, enc] = args else { return Err(bad(&format!("{} arguments", args.len()))) };
                if self.str_of(*enc) != Some(b"latin1") {
                    return Err(bad("an encoding other than 'latin1'"));
                }
                let s = self.str_of(*s).ok_or_else(|| bad("an argument that is not a string"))?;
                let b = latin1(s).ok_or_else(|| bad("a string holding a character above U+00FF"))?;
                Ok(self.new_obj(Obj::Bytes(b)))
            }
            Global::ByteArray => {
                let b: Box<[u8]> = match args {
                    [] => Box::new([]),
                    [b] => match self.obj(*b)? {
                        Obj::Bytes(b) => b.clone(),
                        _ => return Err(bad("an argument that is not bytes")),
                    },
                    [s, enc] => {
                        if !matches!(self.str_of(*enc), Some(b"latin-1" | b"latin1")) {
                            return Err(bad("an encoding other than 'latin-1'"));
                        }
                        let s = self.str_of(*s).ok_or_else(|| bad("an argument that is not a string"))?;
                        latin1(s).ok_or_else(|| bad("a string holding a character above U+00FF"))?
                    }
                    _ => return Err(bad(&format!("{} arguments", args.len()))),
                };
                Ok(self.new_obj(Obj::Bytes(b)))
            }
            Global::Set => {
                let items = match args {
                    [] => Vec::new(),
                    [l] => match self.obj(*l)? {
                        Obj::List(l) => l.clone(),
                        _ => return Err(bad("an argument that is not a list")),
                    },
                    _ => return Err(bad(&format!("{} arguments", args.len()))),
                };
                Ok(self.new_obj(Obj::Set(items)))
            }
            Global::Complex => {
                let [re, im] = args else { return Err(bad(&format!("{} arguments", args.len()))) };
                match (self.obj(*re)?, self.obj(*im)?) {
                    (Obj::Float(re), Obj::Float(im)) => {
                        let c = Obj::Complex(*re, *im);
                        Ok(self.new_obj(c))
                    }
                    _ => Err(bad("parts that are not two floats")),
                }
            }
            Global::TensorType | Global::ParameterType | Global::Storage(_) | Global::Dtype(_) => {
                Err(fail(at, format!("REDUCE calls {}, which this reader never calls", g.name())))
            }
        }
    }

    fn check_hooks(&self, hooks: ObjId, callee: &str) -> Result<(), Step> {
        if matches!(self.obj(hooks)?, Obj::None) || self.is_empty_mapping(hooks) {
            return Ok(());
        }
        Err(fail(self.at, format!("{callee} with backward hooks (only None or an empty mapping is accepted)")))
    }

    /// The tensor `t`, with `state` as its attributes when it is a
    /// non-empty mapping (a new object: the tensor without them may be
    /// reached elsewhere).
    fn with_state(&mut self, t: ObjId, state: ObjId, callee: &str) -> Result<ObjId, Step> {
        match self.obj(state)? {
            Obj::None => return Ok(t),
            Obj::Dict(_) if self.is_empty_mapping(state) => return Ok(t),
            Obj::Dict(_) => {}
            o => {
                return Err(fail(
                    self.at,
                    format!("{callee} with {} as a tensor's state (a mapping expected)", o.what()),
                ));
            }
        }
        let Obj::Tensor(mut tensor) = self.obj(t)?.clone() else {
            return Err(fail(self.at, format!("{callee}'s data is not a tensor")));
        };
        if tensor.attrs.is_some() {
            return Err(fail(self.at, format!("{callee} gives state to a tensor that has some")));
        }
        tensor.attrs = Some(state);
        Ok(self.new_obj(Obj::Tensor(tensor)))
    }

    /// `_rebuild_tensor` (1), `_v2` (2), `_v3` (3): P5's checks.
    fn rebuild_tensor(&mut self, v: u8, args: &[ObjId]) -> Result<ObjId, Step> {
        let callee = Global::RebuildTensor(v).name();
        let at = self.at;
        let bad = |what: String| fail(at, format!("{callee}: {what}"));
        let (storage, offset, size, stride, rest) = match args {
            [s, o, z, t, rest @ ..] => (*s, *o, *z, *t, rest),
            _ => return Err(bad(format!("{} arguments", args.len()))),
        };
        let (grad_hooks, dtype_arg, metadata) = match (v, rest) {
            (1, []) => (None, None, None),
            (2, [g, h]) => (Some((*g, *h)), None, None),
            (2, [g, h, m]) => (Some((*g, *h)), None, Some(*m)),
            (3, [g, h, d]) => (Some((*g, *h)), Some(*d), None),
            (3, [g, h, d, m]) => (Some((*g, *h)), Some(*d), Some(*m)),
            _ => return Err(bad(format!("{} arguments", args.len()))),
        };
        let Obj::Storage(si) = *self.obj(storage)? else {
            return Err(bad(format!("its storage is {}", self.obj(storage)?.what())));
        };
        let st = self.storages.get(si).cloned().ok_or_else(|| Step::Fail(Error::internal("storage out of range")))?;
        if let Some((g, h)) = grad_hooks {
            match self.obj(g)? {
                Obj::Bool(true) => self.requires_grad = self.requires_grad.saturating_add(1),
                Obj::Bool(false) => {}
                _ => return Err(bad("requires_grad is not a bool".into())),
            }
            self.check_hooks(h, &callee)?;
        }
        if metadata.is_some_and(|m| !self.is_empty_mapping(m)) {
            return Err(bad("tensor metadata (only an empty mapping is accepted)".into()));
        }
        let dtype = match (dtype_arg, st.class) {
            (Some(d), _) => match self.obj(d)? {
                Obj::Dtype(d) => *d,
                o => return Err(bad(format!("its dtype is {}", o.what()))),
            },
            (None, StorageClass::Typed(d)) => d,
            (None, StorageClass::Untyped) => {
                return Err(bad("an untyped storage without a dtype (only _rebuild_tensor_v3 gives one)".into()));
            }
        };
        let storage_bytes =
            st.numel.checked_mul(st.class.elem()).ok_or_else(|| bad("the storage's size overflows".into()))?;
        if storage_bytes.checked_rem(dtype.size) != Some(0) {
            return Err(bad(format!("{} elements do not divide the storage's {storage_bytes} bytes", dtype.name)));
        }
        let elems = storage_bytes.checked_div(dtype.size).unwrap_or(0);
        let offset = self.u64_of(offset).ok_or_else(|| bad("the storage offset is not an int ≥ 0".into()))?;
        let dims = |m: &Self, id: ObjId, what: &str| -> Result<Vec<u64>, Step> {
            let Obj::Tuple(items) = m.obj(id)? else {
                return Err(fail(at, format!("{callee}: its {what} is {} (a tuple expected)", m.obj(id)?.what())));
            };
            if items.len() > MAX_RANK {
                return Err(fail(at, format!("{callee}: a {what} of {} dimensions (at most {MAX_RANK})", items.len())));
            }
            items
                .iter()
                .map(|&i| {
                    m.u64_of(i)
                        .ok_or_else(|| fail(at, format!("{callee}: its {what} holds something other than an int ≥ 0")))
                })
                .collect()
        };
        let size = dims(self, size, "size")?;
        let stride = dims(self, stride, "stride")?;
        if size.len() != stride.len() {
            return Err(bad(format!("a size of {} dimensions and a stride of {}", size.len(), stride.len())));
        }
        let numel = size
            .iter()
            .try_fold(1u64, |a, &s| a.checked_mul(s))
            .ok_or_else(|| bad("its element count overflows".into()))?;
        numel.checked_mul(dtype.size).ok_or_else(|| bad("its byte size overflows".into()))?;
        if numel > 0 {
            let mut last = offset;
            for (s, t) in size.iter().zip(&stride) {
                let step = s.saturating_sub(1).checked_mul(*t).ok_or_else(|| bad("a stride overflows".into()))?;
                last = last.checked_add(step).ok_or_else(|| bad("a stride overflows".into()))?;
            }
            if last >= elems {
                return Err(bad(format!(
                    "its last element ({last}) lies past the end of its storage ({elems} {} elements)",
                    dtype.name
                )));
            }
        }
        let t = Tensor { storage: si, dtype, offset, size, stride, attrs: None, at };
        Ok(self.new_obj(Obj::Tensor(t)))
    }

    /// A persistent id: the storage it names.
    fn persistent(&mut self, pid: ObjId) -> Result<usize, Step> {
        let at = self.at;
        if self.opts.ids == Ids::None {
            return Err(fail(at, "a persistent id in a pickle that may hold none"));
        }
        let Obj::Tuple(items) = self.obj(pid)? else {
            return Err(fail(at, format!("a persistent id that is {} (a tuple expected)", self.obj(pid)?.what())));
        };
        let (tag, class, key, loc, numel, view) = match (self.opts.ids, &items[..]) {
            (Ids::Zip, [a, b, c, d, e]) => (*a, *b, *c, *d, *e, None),
            (Ids::Legacy, [a, b, c, d, e, f]) => (*a, *b, *c, *d, *e, Some(*f)),
            _ => return Err(fail(at, format!("a persistent id of {} items", items.len()))),
        };
        if self.str_of(tag) != Some(b"storage") {
            return Err(fail(at, "a persistent id that does not begin with 'storage'"));
        }
        let Obj::Global(Global::Storage(class)) = *self.obj(class)? else {
            return Err(fail(at, "a persistent id whose storage type is not a storage class"));
        };
        let key: Box<[u8]> =
            self.str_of(key).ok_or_else(|| fail(at, "a persistent id whose key is not a string"))?.into();
        if self.str_of(loc).is_none() {
            return Err(fail(at, "a persistent id whose location is not a string"));
        }
        let numel =
            self.u64_of(numel).ok_or_else(|| fail(at, "a persistent id whose element count is not an int ≥ 0"))?;
        if numel.checked_mul(class.elem()).is_none() {
            return Err(fail(at, "a persistent id whose storage's byte size overflows"));
        }
        if view.is_some_and(|v| !matches!(self.objs.get(v), Some(Obj::None))) {
            return Err(fail(at, "a legacy storage view (v1 accepts none)"));
        }
        if let Some(&i) = self.storage_keys.get(&key) {
            let first = self.storages.get(i).ok_or_else(|| Step::Fail(Error::internal("storage out of range")))?;
            if first.class != class || first.numel != numel {
                return Err(fail(
                    at,
                    format!(
                        "storage '{}' named as {} × {} here and as {} × {} before",
                        crate::text::escape_bytes(&key),
                        numel,
                        class.name(),
                        first.numel,
                        first.class.name()
                    ),
                ));
            }
            return Ok(i);
        }
        self.storages.push(StorageUse { key: key.clone(), class, numel, at });
        let i = self.storages.len().saturating_sub(1);
        self.storage_keys.insert(key, i);
        Ok(i)
    }
}

/// A device string `type` or `type:index` (index: digits, no leading zero).
fn parse_device(s: &[u8]) -> Option<(Box<[u8]>, Option<u64>)> {
    let (ty, index) = match s.iter().position(|&b| b == b':') {
        None => (s, None),
        Some(i) => {
            let (ty, rest) = (s.get(..i)?, s.get(i.saturating_add(1)..)?);
            let ok = !rest.is_empty()
                && rest.iter().all(u8::is_ascii_digit)
                && (rest == b"0" || rest.first() != Some(&b'0'));
            if !ok {
                return None;
            }
            (ty, Some(std::str::from_utf8(rest).ok()?.parse::<u64>().ok()?))
        }
    };
    if ty.is_empty() {
        return None;
    }
    Some((ty.into(), index))
}

/// The bytes of a string's code points, each below 256.
fn latin1(s: &[u8]) -> Option<Box<[u8]>> {
    let s = std::str::from_utf8(s).ok()?;
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
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
    use super::*;

    fn run(b: &[u8]) -> Result<Pickle, Error> {
        read(b, 0, Options { base: 0, more_in_file: false, file_len: 0, ids: Ids::Zip }).map_err(|s| match s {
            Step::Fail(e) => e,
            Step::NeedMore(n) => panic!("asked for {n}"),
        })
    }

    #[test]
    fn ints_are_minimal() {
        for (bytes, min) in [
            (&[][..], &[][..]),
            (&[0], &[]),
            (&[0x7F, 0], &[0x7F]),
            (&[0x80, 0], &[0x80, 0]),
            (&[0xFF, 0xFF], &[0xFF]),
            (&[0x7F, 0xFF], &[0x7F, 0xFF]),
        ] {
            assert_eq!(minimal(bytes), min, "{bytes:?}");
        }
        assert_eq!(Int::from_le(&[0xFF; 10]), Int::Small(-1));
        assert_eq!(Int::from_le(&[0x80, 0]).minimal_le(), vec![0x80, 0]);
        let big = Int::from_le(&[1; 255]);
        assert_eq!(big.minimal_le().len(), 255);
        assert_eq!(Int::Small(0).minimal_le(), Vec::<u8>::new());
        assert_eq!(Int::Small(-129).minimal_le(), vec![0x7F, 0xFF]);
    }

    #[test]
    fn memo_is_a_map_and_objects_are_shared() {
        // [] LONG_BINPUT 0xFFFFFFFF, LONG_BINGET it, APPEND onto itself: one
        // list holding itself, and no table of 2^32 slots.
        let p = run(b"\x80\x02]r\xff\xff\xff\xffj\xff\xff\xff\xffa.").unwrap();
        assert!(matches!(&p.objs[p.root], Obj::List(l) if l == &vec![p.root]));
    }

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

    #[test]
    fn devices() {
        assert_eq!(parse_device(b"cuda:0"), Some((b"cuda"[..].into(), Some(0))));
        assert_eq!(parse_device(b"cpu"), Some((b"cpu"[..].into(), None)));
        assert_eq!(parse_device(b"cuda:01"), None);
        assert_eq!(parse_device(b"cuda:"), None);
        assert_eq!(parse_device(b":1"), None);
        assert_eq!(parse_device(b"cuda:-1"), None);
    }
}
