//! The ONNX section of `inspect`: IR version and opsets, producer, the
//! graph's inputs and outputs, nodes by op type, initializers by dtype,
//! and the external data files.

use std::collections::BTreeMap;

use serde_json::{Value as JsonValue, json};

use super::model::Model;
use super::wire::Val;
use crate::hash::Digest;
use crate::render::InspectOptions;
use crate::text::escape_bytes;

/// What `inspect` shows of an ONNX model.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The file.
    pub path: String,
    /// The label.
    pub label: String,
    /// `ir_version`.
    pub ir_version: i64,
    /// `opset_import`: domain and version, as written.
    pub opsets: Vec<(String, i64)>,
    /// `producer_name` and `producer_version`.
    pub producer: (String, String),
    /// The graph's inputs, by name.
    pub inputs: Vec<String>,
    /// The graph's outputs, by name.
    pub outputs: Vec<String>,
    /// The main graph's nodes.
    pub nodes: usize,
    /// Its nodes by op type (`domain:op` outside the default domain).
    pub by_op: BTreeMap<String, usize>,
    /// Its initializers by dtype: count and element bytes.
    pub by_dtype: BTreeMap<&'static str, (u64, u64)>,
    /// Every tensor of the model (subgraphs, attributes, functions too).
    pub tensors: usize,
    /// The external files: location and size.
    pub external: Vec<(String, u64)>,
}

/// Inspects a labelled ONNX model.
pub fn inspect(model: &Model, digest: &Digest, _opts: &InspectOptions) -> Inspection {
    let p = model.proto();
    let text = |b: &[u8]| escape_bytes(b).to_string();
    let names = |num: u32| -> Vec<String> {
        p.msg(7).map(|g| g.msgs(num).map(|v| text(v.str(1))).collect()).unwrap_or_default()
    };
    let mut by_op = BTreeMap::new();
    let mut nodes: usize = 0;
    let mut by_dtype: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    if let Some(g) = p.msg(7) {
        for n in g.msgs(1) {
            nodes = nodes.saturating_add(1);
            let domain = n.str(7);
            let op = if domain.is_empty() || domain == b"ai.onnx" {
                text(n.str(4))
            } else {
                format!("{}:{}", text(domain), text(n.str(4)))
            };
            let count = by_op.entry(op).or_insert(0usize);
            *count = count.saturating_add(1);
        }
        for v in g.many(5) {
            if let Val::T(i) = v {
                if let Some(t) = model.tensors().get(*i) {
                    let e = by_dtype.entry(t.dtype.name).or_default();
                    e.0 = e.0.saturating_add(1);
                    e.1 = e.1.saturating_add(t.nbytes);
                }
            }
        }
    }
    Inspection {
        path: model.source().path().display().to_string(),
        label: digest.label(),
        ir_version: p.int(1),
        opsets: p.msgs(8).map(|o| (text(o.str(1)), o.int(2))).collect(),
        producer: (text(p.str(2)), text(p.str(3))),
        inputs: names(11),
        outputs: names(12),
        nodes,
        by_op,
        by_dtype,
        tensors: model.tensors().len(),
        external: model.locations().iter().zip(model.externals()).map(|(l, s)| (text(l), s.len())).collect(),
    }
}

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("{}\n", self.path));
        s.push_str(&format!("  format:     ONNX (onnx-skeleton-v1)\n  label:      {}\n", self.label));
        s.push_str(&format!("  ir_version: {}\n", self.ir_version));
        let opsets: Vec<String> =
            self.opsets.iter().map(|(d, v)| format!("{}:{v}", if d.is_empty() { "ai.onnx" } else { d })).collect();
        s.push_str(&format!("  opsets:     {}\n", opsets.join(", ")));
        s.push_str(&format!("  producer:   {} {}\n", self.producer.0, self.producer.1));
        s.push_str(&format!("  inputs:     {}\n", self.inputs.join(", ")));
        s.push_str(&format!("  outputs:    {}\n", self.outputs.join(", ")));
        s.push_str(&format!("  nodes:      {}\n", self.nodes));
        for (op, n) in &self.by_op {
            s.push_str(&format!("    {op}: {n}\n"));
        }
        let inits: u64 = self.by_dtype.values().map(|v| v.0).sum();
        s.push_str(&format!("  initializers: {inits} ({} tensors in all)\n", self.tensors));
        for (d, (n, b)) in &self.by_dtype {
            s.push_str(&format!("    {d}: {n} ({b} bytes)\n"));
        }
        if !self.external.is_empty() {
            s.push_str("  external data:\n");
            for (l, size) in &self.external {
                s.push_str(&format!("    {l} ({size} bytes)\n"));
            }
        }
        s
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        json!({
            "path": self.path,
            "format": "onnx",
            "spec": "onnx-skeleton-v1",
            "label": self.label,
            "ir_version": self.ir_version,
            "opset_import": self.opsets.iter().map(|(d, v)| json!({"domain": d, "version": v})).collect::<Vec<_>>(),
            "producer_name": self.producer.0,
            "producer_version": self.producer.1,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "nodes": self.nodes,
            "nodes_by_op_type": self.by_op,
            "initializers_by_dtype": self.by_dtype.iter().map(|(d, (n, b))| (d.to_string(), json!({"count": n, "bytes": b}))).collect::<serde_json::Map<_, _>>(),
            "tensors": self.tensors,
            "external_files": self.external.iter().map(|(l, s)| json!({"location": l, "size": s})).collect::<Vec<_>>(),
        })
    }
}
