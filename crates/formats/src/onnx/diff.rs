//! The ONNX section of `diff`: two models compared by their model fields,
//! opsets and metadata (by domain and key), the main graph's initializers
//! (by name: dtype, shape, elements digest), inputs and outputs, and nodes
//! by position (op type, name, inputs, outputs, each attribute by name);
//! and against a safetensors model, the main graph's initializers tensor by
//! tensor (name, dtype, shape, elements digest).

use std::collections::BTreeMap;

use sha2::{Digest as _, Sha256};

use super::model::Model;
use super::skeleton::Writer;
use super::wire::{Msg, Slot, Val};
use crate::Result;
use crate::format::{AnyModel, DiffSection, FileFormat as _, Side, diff_same};
use crate::hash::Digest;
use crate::render::DiffOptions;
use crate::tensors_diff::{LeafDiff, LeafStyle, TensorRow, TensorsDiff, safetensors_rows};
use crate::text::escape_bytes;

/// How two ONNX models' diff is shown (its paths and values escaped as
/// they are made).
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxLeaves;

impl LeafStyle for OnnxLeaves {
    const FORMAT: &'static str = "onnx";
    const NONE_DIFFER: &'static str =
        "no compared field differs: a subgraph, a function or a doc string elsewhere does";
    const ESCAPE: bool = false;
}

/// What differs between two models: paths only in the first (`removed`),
/// only in the second (`added`), and in both with other values (`changed`).
pub type Diff = LeafDiff<OnnxLeaves>;

/// Every leaf compared: a path (`initializer 'w'`, `node[3].attribute 'axis'`) and its value as text.
fn leaves(model: &Model, digest: &Digest) -> BTreeMap<String, String> {
    let data = digest.tensor_sha256();
    let enc = |m: &Msg| -> String {
        let mut h = Sha256::new();
        let elements = |i: usize| model.elements_sha256(i, data);
        let mut sink = |b: &[u8]| h.update(b);
        Writer { tensors: model.tensors(), elements: &elements, sink: &mut sink }.message(m);
        hex::encode(h.finalize())
    };
    let text = |b: &[u8]| escape_bytes(b).to_string();
    let p = model.proto();
    let mut out = BTreeMap::new();
    out.insert("ir_version".to_string(), p.int(1).to_string());
    for (num, name) in [(2, "producer_name"), (3, "producer_version"), (4, "domain"), (6, "doc_string")] {
        out.insert(name.to_string(), text(p.str(num)));
    }
    out.insert("model_version".to_string(), p.int(5).to_string());
    for o in p.msgs(8) {
        out.insert(format!("opset_import '{}'", text(o.str(1))), o.int(2).to_string());
    }
    for kv in p.msgs(14) {
        out.insert(format!("metadata_props '{}'", text(kv.str(1))), text(kv.str(2)));
    }
    for (num, name) in [(20, "training_info"), (25, "functions"), (26, "configuration")] {
        for (i, m) in p.msgs(num).enumerate() {
            out.insert(format!("{name}[{i}]"), enc(m));
        }
    }
    let Some(g) = p.msg(7) else { return out };
    out.insert("graph.name".to_string(), text(g.str(2)));
    for v in g.many(5) {
        let Val::T(i) = v else { continue };
        let Some(t) = model.tensors().get(*i) else { continue };
        out.insert(
            format!("initializer '{}'", text(&t.name)),
            format!("{} {:?} sha256 {}", t.dtype.name, t.dims, hex::encode(model.elements_sha256(*i, data))),
        );
    }
    for (num, name) in [(11, "input"), (12, "output")] {
        for (i, v) in g.msgs(num).enumerate() {
            out.insert(format!("graph.{name}[{i}]"), format!("{} (type sha256 {})", text(v.str(1)), enc(v)));
        }
    }
    for (i, n) in g.msgs(1).enumerate() {
        let ins: Vec<String> = n.strs(1).map(text).collect();
        let outs: Vec<String> = n.strs(2).map(text).collect();
        let op = if n.str(7).is_empty() { text(n.str(4)) } else { format!("{}:{}", text(n.str(7)), text(n.str(4))) };
        out.insert(
            format!("node[{i}]"),
            format!("{op} '{}' ({}) -> ({})", text(n.str(3)), ins.join(", "), outs.join(", ")),
        );
        for a in n.msgs(5) {
            out.insert(format!("node[{i}].attribute '{}'", text(a.str(1))), attribute(a, &enc));
        }
    }
    for (num, name) in
        [(13, "value_info"), (14, "quantization_annotation"), (15, "sparse_initializer"), (16, "metadata_props")]
    {
        for (i, m) in g.msgs(num).enumerate() {
            out.insert(format!("graph.{name}[{i}]"), enc(m));
        }
    }
    out
}

/// An attribute's value as text: a number or string shown, anything else its digest.
fn attribute(a: &Msg, enc: &dyn Fn(&Msg) -> String) -> String {
    let text = |b: &[u8]| escape_bytes(b).to_string();
    let shown = match (a.slot(2), a.slot(3), a.slot(4)) {
        (Slot::One(Val::F(f), _), _, _) => Some(f32::from_bits(*f).to_string()),
        (_, Slot::One(Val::I(i), _), _) => Some(i.to_string()),
        (_, _, Slot::One(Val::S(s), _)) => Some(format!("'{}'", text(s))),
        _ => None,
    };
    let ints: Vec<String> =
        a.many(8).iter().filter_map(|v| if let Val::I(i) = v { Some(i.to_string()) } else { None }).collect();
    match shown {
        Some(s) => s,
        None if !ints.is_empty() => format!("[{}]", ints.join(", ")),
        None => format!("sha256 {}", enc(a)),
    }
}

/// Compares two labelled models.
pub fn diff(a: &Model, da: &Digest, b: &Model, db: &Digest, _opts: &DiffOptions) -> Diff {
    LeafDiff::new(da, db, &leaves(a, da), &leaves(b, db), String::clone)
}

/// The `diff` section of `me` against `other`: another ONNX model field by
/// field ([`diff`]), a safetensors model tensor by tensor (the main graph's
/// initializers against its tensors, [`TensorsDiff`]); `None` for any
/// other kind.
pub fn against(
    me: &Model,
    mine: &Digest,
    other: &AnyModel,
    theirs: &Digest,
    side: Side,
    opts: &DiffOptions,
) -> Option<Result<Box<dyn DiffSection>>> {
    if let Some(st) = other.downcast_ref::<crate::safetensors::Model>() {
        let d =
            TensorsDiff::sided(side, (super::Onnx.what(), other.what()), rows(me, mine), safetensors_rows(st, theirs));
        return Some(Ok(Box::new(d)));
    }
    diff_same(me, mine, other, theirs, side, |a, da, b, db| Ok(diff(a, da, b, db, opts)))
}

/// The main graph's initializers as rows (a name not in UTF-8 escaped).
pub fn rows(model: &Model, digest: &Digest) -> Vec<TensorRow> {
    let data = digest.tensor_sha256();
    let Some(g) = model.proto().msg(7) else { return Vec::new() };
    g.many(5)
        .iter()
        .filter_map(|v| {
            let Val::T(i) = v else { return None };
            let t = model.tensors().get(*i)?;
            let name = match std::str::from_utf8(&t.name) {
                Ok(n) => n.to_string(),
                Err(_) => escape_bytes(&t.name).to_string(),
            };
            Some(TensorRow {
                name,
                dtype: t.dtype.name.into(),
                shape: t.dims.clone(),
                sha256: hex::encode(model.elements_sha256(*i, data)),
            })
        })
        .collect()
}
