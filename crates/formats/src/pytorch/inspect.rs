//! The PyTorch section of `inspect`: the layout, the pickle's protocol and
//! globals, the key tree's size, tensors by dtype, shared storages and
//! views, and what a user should know (a legacy file, trainer state).

use std::collections::BTreeMap;

use serde_json::{Value as JsonValue, json};

use super::model::{Layout, Model};
use super::pickle::Obj;
use crate::hash::Digest;
use crate::render::InspectOptions;

/// What `inspect` shows of a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The file.
    pub path: String,
    /// The label.
    pub label: String,
    /// `zip` or `legacy`.
    pub layout: &'static str,
    /// The zip's records (none for legacy).
    pub records: usize,
    /// The archive's folder name.
    pub folder: Option<String>,
    /// The pickle's protocol.
    pub protocol: u8,
    /// The globals it names.
    pub globals: Vec<String>,
    /// Leaves by key path (values and tensors).
    pub leaves: usize,
    /// Distinct tensors.
    pub tensors: usize,
    /// Tensors by dtype: count and bytes.
    pub by_dtype: BTreeMap<&'static str, (u64, u64)>,
    /// Storages read by more than one tensor.
    pub shared_storages: usize,
    /// Tensors hashed through a gather (views, shared or big-endian storages).
    pub views: usize,
    /// Times a tensor was reached again (tied weights).
    pub tied: u64,
    /// What a user should know.
    pub warnings: Vec<String>,
    /// A shard set's files, in the order opened (empty for one file).
    pub shards: Vec<String>,
}

/// Keys that say a checkpoint is a training state rather than weights.
const TRAINER_KEYS: &[&str] =
    &["optimizer", "optimizer_state_dict", "optimizer_states", "lr_scheduler", "scheduler", "epoch", "global_step"];

/// Inspects a labelled checkpoint.
pub fn inspect(model: &Model, digest: &Digest, _opts: &InspectOptions) -> Inspection {
    let tree = model.tree();
    let mut by_dtype: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    for leaf in &tree.tensors {
        if let Some(t) = tree.tensor(leaf) {
            let e = by_dtype.entry(t.dtype.name).or_default();
            e.0 = e.0.saturating_add(1);
            e.1 = e.1.saturating_add(t.nbytes());
        }
    }
    let views = (0..tree.tensors.len()).filter(|&i| model.is_gathered(i)).count();
    let shared_storages = model.placed().iter().filter(|p| p.users > 1).count();
    let (layout, records, folder) = match model.layout() {
        Layout::Zip(a) => ("zip", a.records.len(), Some(String::from_utf8_lossy(&a.folder).into_owned())),
        Layout::Legacy => ("legacy", 0, None),
    };
    let mut warnings = Vec::new();
    if layout == "legacy" {
        warnings.push("legacy format (torch.save before PyTorch 1.6, or _use_new_zipfile_serialization=False)".into());
    }
    if model.big_endian() {
        warnings.push("big-endian storages (the label reads them as little-endian elements)".into());
    }
    let root_keys: Vec<String> = match tree.objs.get(tree.root) {
        Some(Obj::Dict(d)) => d.entries.iter().map(|&(k, _)| tree.key_text(k)).collect(),
        _ => Vec::new(),
    };
    let trainer: Vec<&String> = root_keys.iter().filter(|k| TRAINER_KEYS.contains(&k.as_str())).collect();
    if !trainer.is_empty() {
        let keys: Vec<&str> = trainer.iter().map(|s| s.as_str()).collect();
        warnings.push(format!("trainer state, not a model alone (keys {})", keys.join(", ")));
    }
    if model.facts().requires_grad > 0 {
        warnings.push(format!("`requires_grad` set on {} tensors (not content)", model.facts().requires_grad));
    }
    if tree.tied > 0 {
        warnings.push(format!("{} tensors reached under more than one key (tied weights: hashed once)", tree.tied));
    }
    if views > 0 {
        warnings.push(format!("{views} tensors are views or share a storage (their elements are gathered)"));
    }
    Inspection {
        path: model.path().to_string_lossy().into_owned(),
        label: digest.label(),
        layout,
        records,
        folder,
        protocol: model.facts().protocol,
        globals: model.facts().globals.clone(),
        leaves: tree.leaves(digest.tensor_sha256()).len(),
        tensors: tree.tensors.len(),
        by_dtype,
        shared_storages,
        views,
        tied: tree.tied,
        warnings,
        shards: match model.sources().as_slice() {
            [_] => Vec::new(),
            many => many.iter().map(|s| s.path().to_string_lossy().into_owned()).collect(),
        },
    }
}

impl Inspection {
    /// The text report.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("{}\n", crate::text::escape_name(self.path.as_bytes())));
        s.push_str(&format!("  format: PyTorch checkpoint ({}), pytorch-skeleton-v1\n", self.layout));
        s.push_str(&format!("  label: {}\n", self.label));
        if !self.shards.is_empty() {
            let names: Vec<String> = self.shards.iter().map(|p| crate::text::escape_name(p.as_bytes())).collect();
            s.push_str(&format!("  shards: {} ({})\n", names.len(), names.join(", ")));
        }
        if let Some(f) = &self.folder {
            s.push_str(&format!(
                "  archive: {} records in folder '{}'\n",
                self.records,
                crate::text::escape_bytes(f.as_bytes())
            ));
        }
        s.push_str(&format!("  pickle: protocol {}, globals {}\n", self.protocol, self.globals.join(", ")));
        s.push_str(&format!("  leaves: {} (tensors: {})\n", self.leaves, self.tensors));
        for (d, (n, b)) in &self.by_dtype {
            s.push_str(&format!("    {d}: {n} tensors, {b} bytes\n"));
        }
        s.push_str(&format!("  shared storages: {}, views: {}\n", self.shared_storages, self.views));
        for w in &self.warnings {
            s.push_str(&format!("  warning: {w}\n"));
        }
        s
    }

    /// The JSON document.
    pub fn to_json(&self) -> JsonValue {
        let by_dtype: serde_json::Map<String, JsonValue> =
            self.by_dtype.iter().map(|(d, (n, b))| ((*d).to_string(), json!({"tensors": n, "bytes": b}))).collect();
        let mut j = json!({
            "path": self.path,
            "format": "pytorch",
            "spec": "pytorch-skeleton-v1",
            "label": self.label,
            "layout": self.layout,
            "records": self.records,
            "folder": self.folder,
            "pickle_protocol": self.protocol,
            "globals": self.globals,
            "leaves": self.leaves,
            "tensor_count": self.tensors,
            "tensors_by_dtype": by_dtype,
            "shared_storages": self.shared_storages,
            "views": self.views,
            "tied": self.tied,
            "warnings": self.warnings,
        });
        if let (false, Some(o)) = (self.shards.is_empty(), j.as_object_mut()) {
            o.insert("shards".into(), json!(self.shards));
        }
        j
    }
}
