//! A safetensors model's entry in the `--json` document: its files, its
//! metadata groups, every tensor with its digest.

use std::path::Path;

use serde_json::{Map, Value as Json, json};

use crate::hash::Digest;
use crate::output::put_name;
use crate::safetensors::model::Model;

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The JSON entry of one labelled safetensors model (schema in README.md).
pub fn model_json(path: &Path, model: &Model, digest: &Digest) -> Json {
    let files: Vec<Json> = model
        .files()
        .iter()
        .map(|f| {
            json!({
                "path": text(f.path()),
                "size": f.source.len(),
                "header_len": f.file.header_len,
                "data_start": f.file.data_start,
                "tensor_count": f.file.tensors.len(),
                "metadata_group": f.group,
            })
        })
        .collect();
    let groups: Vec<Json> = model
        .groups()
        .iter()
        .map(|g| {
            let metadata: Map<String, Json> = g.map.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            json!({ "sha256": hex::encode(g.digest), "metadata": metadata })
        })
        .collect();
    let tensors: Vec<Json> = model
        .tensors()
        .iter()
        .zip(digest.tensor_sha256())
        .map(|(t, sha)| {
            let mut o = Map::new();
            put_name(&mut o, "name", t.entry.name.as_bytes());
            o.insert("dtype".into(), json!(t.entry.dtype.name));
            o.insert("shape".into(), json!(t.entry.shape));
            o.insert("nbytes".into(), json!(t.entry.nbytes));
            o.insert("offset".into(), json!(t.offset));
            o.insert("data_offsets".into(), json!([t.entry.begin, t.entry.end]));
            o.insert("file".into(), json!(t.file));
            o.insert("metadata_group".into(), json!(model.files().get(t.file).map(|f| f.group)));
            o.insert("sha256".into(), json!(hex::encode(sha)));
            Json::Object(o)
        })
        .collect();
    let mut entry = json!({
        "path": text(path),
        "format": "safetensors",
        "spec": "safetensors-skeleton-v1",
        "label": digest.label(),
        "tensor_count": model.tensors().len(),
        "tensor_bytes": model.tensor_bytes(),
        "files": files,
        "metadata_groups": groups,
        "tensors": tensors,
    });
    if let (Some(index), Json::Object(o)) = (model.index(), &mut entry) {
        o.insert("index".into(), json!({ "path": text(&index.path), "total_size": index.total_size }));
    }
    entry
}
