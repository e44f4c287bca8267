//! What a `REDUCE` of an accepted global builds (P4's table): mappings,
//! sizes, devices, bytes, sets, complex numbers, and the tensors of P5,
//! each checked against the storage a persistent id names.

use super::globals::Global;
use super::globals::StorageClass;
use super::machine::{Machine, fail};
use super::value::{Dict, DictKind, Obj, ObjId, StorageUse, Tensor};
use super::{Ids, MAX_RANK};
use crate::error::Error;
use crate::source::Step;

impl Machine<'_> {
    /// Calls an accepted global with its arguments (P4's table).
    pub(super) fn call(&mut self, g: Global, args: &[ObjId]) -> Result<ObjId, Step> {
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
    pub(super) fn persistent(&mut self, pid: ObjId) -> Result<usize, Step> {
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

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]
mod tests {
    use super::*;

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
