//! The model file read into a tree (SPEC Part VI, X2 to X4): every message
//! by the schema's tables over `wire`'s records, tensors by their own loop
//! (`tensor` checks them), and the checks that span a message: sorted lists
//! without duplicate keys, sparse tensors, sparse initializers named as
//! dense ones. Pure: no I/O.

use super::schema::{M, Order, Ty, tensor as f};
use super::tensor::{self, Tensor};
use super::wire::{FieldPath, Msg, Rec, Slot, Val, Wire, err};
use crate::error::{Result, Subject};

/// The deepest message level read: the `ModelProto` is level 1.
pub const MAX_DEPTH: u32 = 100;

/// What the model file parsed into: the `ModelProto` and every tensor.
#[derive(Debug)]
pub struct Parsed {
    /// The model.
    pub model: Msg,
    /// Every `TensorProto`, in the order read.
    pub tensors: Vec<Tensor>,
}

/// The reader: the file's records and the tensors read so far.
pub struct Reader<'a> {
    /// The file's records.
    pub w: Wire<'a>,
    /// Every tensor read so far.
    pub tensors: Vec<Tensor>,
}

/// Parses the whole of `buf` as a `ModelProto` (X2), checking its version
/// and that it has a graph (X1, X4).
pub fn parse(buf: &[u8]) -> Result<Parsed> {
    let mut r = Reader { w: Wire { buf }, tensors: Vec::new() };
    let model = r.message(M::Model, 0, buf.len(), &FieldPath::ROOT, 1)?;
    let ir = match model.slot(1) {
        Slot::One(Val::I(v), _) => Some(*v),
        _ => None,
    };
    if !ir.is_some_and(|v| (3..=13).contains(&v)) {
        let shown = ir.map_or_else(|| "absent".to_string(), |v| v.to_string());
        return Err(err("ModelProto.ir_version", 0, format!("{shown}: only IR versions 3 to 13 are read")));
    }
    if model.msg(7).is_none() {
        return Err(err("ModelProto", 0, "no graph"));
    }
    Ok(Parsed { model, tensors: r.tensors })
}

impl Reader<'_> {
    /// Reads the message `m` in `start..end`, at nesting level `depth`.
    pub fn message(&mut self, m: M, start: usize, end: usize, path: &FieldPath<'_>, depth: u32) -> Result<Msg> {
        if depth > MAX_DEPTH {
            return Err(err(path, start as u64, format!("a message nested more than {MAX_DEPTH} deep")));
        }
        let fields = m.fields();
        let mut slots: Vec<Slot> = vec![Slot::Absent; fields.len()];
        let mut oneofs: Vec<(&'static str, &'static str)> = Vec::new();
        let mut pos = start;
        while pos < end {
            let at = pos;
            let (num, rec, next) = self.w.record(pos, end, path)?;
            pos = next;
            let Some((i, f)) = u32::try_from(num).ok().and_then(|n| m.field(n)) else {
                return Err(err(path, at as u64, format!("field number {num} is not in {}", m.name())));
            };
            let index = match slots.get(i) {
                Some(Slot::Many(v)) => v.len(),
                _ => 0,
            };
            let fpath = path.child(f.name, None);
            if !f.rep {
                if !matches!(slots.get(i), Some(Slot::Absent)) {
                    return Err(err(fpath, at as u64, "a non-repeated field written in two records"));
                }
                if let Some(group) = f.oneof {
                    if let Some((_, other)) = oneofs.iter().find(|(g, _)| *g == group) {
                        return Err(err(
                            fpath,
                            at as u64,
                            format!("two members of oneof {group} written ({other}, {})", f.name),
                        ));
                    }
                    oneofs.push((group, f.name));
                }
            }
            let mut vals: Vec<Val> = Vec::new();
            match (f.ty, rec) {
                (Ty::Msg(inner), Rec::Len(s, e)) => {
                    let ipath = path.child(f.name, f.rep.then_some(index));
                    let v = match inner {
                        M::Tensor => Val::T(read_tensor(self, s, e, &ipath, depth.saturating_add(1))?),
                        M::Segment => return Err(err(fpath, at as u64, "a segment: v1 labels whole tensors only")),
                        _ => Val::M(Box::new(self.message(inner, s, e, &ipath, depth.saturating_add(1))?)),
                    };
                    vals.push(v);
                }
                (Ty::Bytes, Rec::Len(s, e)) => {
                    vals.push(Val::S(self.w.buf.get(s..e).unwrap_or(&[]).to_vec()));
                }
                (Ty::Msg(_) | Ty::Bytes, r) => {
                    return Err(err(
                        fpath,
                        at as u64,
                        format!("wire type {}, the field's type takes 2", r.wire_type()),
                    ));
                }
                _ => self.w.numbers(f, rec, at, &fpath, &mut |v, _| {
                    vals.push(v);
                    Ok(())
                })?,
            }
            let Some(slot) = slots.get_mut(i) else { continue };
            if f.rep {
                match slot {
                    Slot::Many(v) => v.extend(vals),
                    _ => *slot = Slot::Many(vals),
                }
            } else if let Some(v) = vals.pop() {
                *slot = Slot::One(v, at as u64);
            }
        }
        let msg = Msg { m, at: start as u64, path: path.to_string(), slots };
        check_sorted(&msg, &self.tensors)?;
        match m {
            M::Sparse => check_sparse(&msg)?,
            M::Graph => check_graph(&msg, &self.tensors)?,
            _ => {}
        }
        Ok(msg)
    }
}

/// Reads the `TensorProto` in `start..end` and adds it to the reader's
/// tensors: its index there.
pub fn read_tensor(r: &mut Reader<'_>, start: usize, end: usize, path: &FieldPath<'_>, depth: u32) -> Result<usize> {
    if depth > MAX_DEPTH {
        return Err(err(path, start as u64, format!("a message nested more than {} deep", MAX_DEPTH)));
    }
    let mut w = tensor::Written::default();
    let mut pos = start;
    let shown = path.to_string();
    while pos < end {
        let at = pos;
        let (num, rec, next) = r.w.record(pos, end, path)?;
        pos = next;
        let Some((_, field)) = u32::try_from(num).ok().and_then(|n| M::Tensor.field(n)) else {
            return Err(err(path, at as u64, format!("field number {num} is not in TensorProto")));
        };
        let fpath = format!("{shown}.{}", field.name);
        let once = |written: bool| -> Result<()> {
            if written { Err(err(&fpath, at as u64, "a non-repeated field written in two records")) } else { Ok(()) }
        };
        let len = |rec: Rec| -> Result<(usize, usize)> {
            match rec {
                Rec::Len(s, e) => Ok((s, e)),
                _ => Err(err(&fpath, at as u64, "a length-delimited field written with another wire type")),
            }
        };
        let bytes = |rec: Rec| -> Result<Vec<u8>> {
            let (s, e) = len(rec)?;
            Ok(r.w.buf.get(s..e).unwrap_or(&[]).to_vec())
        };
        match field.num {
            f::DIMS => r.w.numbers(field, rec, at, path, &mut |v, _| {
                if let Val::I(d) = v {
                    w.dims.push(d);
                }
                Ok(())
            })?,
            f::DATA_TYPE | f::DATA_LOCATION => {
                let slot = if field.num == f::DATA_TYPE { &mut w.data_type } else { &mut w.location };
                once(slot.is_some())?;
                let mut got = None;
                r.w.numbers(field, rec, at, path, &mut |v, _| {
                    if let Val::I(i) = v {
                        got = Some(i);
                    }
                    Ok(())
                })?;
                *slot = got;
            }
            f::SEGMENT => {
                return Err(err(&shown, at as u64, "a segment: v1 labels whole tensors only"));
            }
            f::NAME => {
                once(w.name.is_some())?;
                w.name = Some(bytes(rec)?);
            }
            f::DOC_STRING => {
                once(w.doc.is_some())?;
                w.doc = Some(bytes(rec)?);
            }
            f::RAW_DATA => {
                once(w.raw.is_some())?;
                w.raw = Some(len(rec)?);
            }
            f::EXTERNAL_DATA | f::METADATA_PROPS => {
                let (s, e) = len(rec)?;
                if field.num == f::EXTERNAL_DATA {
                    let list = w.external.get_or_insert_with(Vec::new);
                    let child = format!("{shown}.external_data[{}]", list.len());
                    list.push(r.message(M::StrStr, s, e, &FieldPath::named(&child), depth.saturating_add(1))?);
                } else {
                    let child = format!("{shown}.metadata_props[{}]", w.meta.len());
                    let m = r.message(M::StrStr, s, e, &FieldPath::named(&child), depth.saturating_add(1))?;
                    w.meta.push(Val::M(Box::new(m)));
                }
            }
            _ => {
                // A typed field: the wire type checked now, the values when
                // the type and shape are known.
                let packed = matches!(rec, Rec::Len(..));
                let want = match field.ty {
                    Ty::Float => 5,
                    Ty::Double => 1,
                    Ty::Bytes => 2,
                    _ => 0,
                };
                let wt = match rec {
                    Rec::Varint(_) => 0,
                    Rec::Fixed64(_) => 1,
                    Rec::Len(..) => 2,
                    Rec::Fixed32(_) => 5,
                };
                if wt != want && !packed {
                    return Err(err(&fpath, at as u64, format!("wire type {wt}, the field's type takes {want}")));
                }
                w.typed.push((field.num, rec, at));
            }
        }
    }
    let t = tensor::finish(&r.w, w, start as u64, shown)?;
    r.tensors.push(t);
    Ok(r.tensors.len().saturating_sub(1))
}

/// The key a repeated message is sorted by.
fn key<'a>(v: &'a Val, order: Order, tensors: &'a [Tensor]) -> Vec<&'a [u8]> {
    let name = |i: usize| tensors.get(i).map_or(&[][..], |t| t.name.as_slice());
    match (order, v) {
        (Order::By(fields), Val::M(m)) => fields.iter().map(|&k| m.str(k)).collect(),
        (Order::TensorName, Val::T(i)) => vec![name(*i)],
        (Order::SparseName, Val::M(m)) => vec![m.msg_tensor(1).map_or(&[][..], name)],
        _ => Vec::new(),
    }
}

/// The first key two values share in the skeleton's order, and the later
/// of the two in the file (the duplicate).
pub type Duplicate<'a> = (Vec<&'a [u8]>, &'a Val);

/// The values of a repeated message field in the skeleton's order, and the
/// first key two of them share, if any.
pub fn sorted<'a>(vals: &'a [Val], order: Order, tensors: &'a [Tensor]) -> (Vec<&'a Val>, Option<Duplicate<'a>>) {
    let mut items: Vec<&Val> = vals.iter().collect();
    if order == Order::Keep {
        return (items, None);
    }
    // A stable sort: of two values with one key, the later in the file stays second.
    items.sort_by(|a, b| key(a, order, tensors).cmp(&key(b, order, tensors)));
    let dup = items.windows(2).find_map(|w| match (w.first(), w.get(1)) {
        (Some(a), Some(b)) if key(a, order, tensors) == key(b, order, tensors) => Some((key(a, order, tensors), *b)),
        _ => None,
    });
    (items, dup)
}

/// Refuses two entries of one key in a sorted list of `m` (X3.1).
pub fn check_sorted(m: &Msg, tensors: &[Tensor]) -> Result<()> {
    for (f, slot) in m.m.fields().iter().zip(&m.slots) {
        if let (Slot::Many(vals), true) = (slot, f.order != Order::Keep) {
            if let (_, Some((k, second))) = sorted(vals, f.order, tensors) {
                let shown: Vec<String> = k.iter().map(|b| crate::text::escape_bytes(b)).collect();
                // The duplicate's own message, not the list's first entry.
                let at = match second {
                    Val::M(x) => x.at,
                    Val::T(i) => tensors.get(*i).map_or(m.at, |t| t.at),
                    _ => m.at,
                };
                let path = if m.path.is_empty() { f.name.to_string() } else { format!("{}.{}", m.path, f.name) };
                return Err(err(path, at, format!("two entries with the key '{}'", shown.join("', '"))));
            }
        }
    }
    Ok(())
}

/// Checks a read `SparseTensorProto`: values and indices written, dims ≥ 0.
pub fn check_sparse(m: &Msg) -> Result<()> {
    if m.msg_tensor(1).is_none() || m.msg_tensor(2).is_none() {
        return Err(err(&m.path, m.at, "a sparse tensor without values or indices"));
    }
    for v in m.many(3) {
        if let Val::I(d) = v {
            if *d < 0 {
                return Err(err(format!("{}.dims", m.path), m.at, format!("a negative dim {d}")));
            }
        }
    }
    Ok(())
}

/// Checks a read `GraphProto`: no sparse initializer named as a dense one.
pub fn check_graph(m: &Msg, tensors: &[Tensor]) -> Result<()> {
    let dense: Vec<&[u8]> = m
        .many(5)
        .iter()
        .filter_map(|v| match v {
            Val::T(i) => tensors.get(*i).map(|t| t.name.as_slice()),
            _ => None,
        })
        .collect();
    for (i, s) in m.msgs(15).enumerate() {
        if let Some(v) = s.msg_tensor(1).and_then(|i| tensors.get(i)) {
            if dense.contains(&v.name.as_slice()) {
                return Err(err(
                    format!("{}.sparse_initializer[{i}]", m.path),
                    s.at,
                    format!("a sparse initializer named as a dense one ('{}')", crate::text::escape_bytes(&v.name)),
                )
                .about(Subject::Tensor(v.name.clone())));
            }
        }
    }
    Ok(())
}
