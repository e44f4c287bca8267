//! A GGUF model's entry in the `--json` document (schema in README.md):
//! its files, every KV in skeleton order, every tensor with its digest.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Map, Value as Json, json};

use crate::gguf::model::Model;
use crate::gguf::value::Value;
use crate::hash::Digest;
use crate::output::put_name;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn float_json(bits_hex: String, v: f64) -> Json {
    if v.is_finite() {
        json!({ "value": v, "bits": bits_hex })
    } else {
        json!({ "value": Json::Null, "bits": bits_hex })
    }
}

/// The JSON fields of one KV value: the value for scalars (floats also as
/// their exact bits), `len` + `sha256` for strings, and `elem_type` +
/// `count` + `sha256` for arrays.
pub fn value_json(v: &Value) -> Map<String, Json> {
    let mut m = Map::new();
    let fields = match v {
        Value::Uint8(x) => json!({ "value": x }),
        Value::Int8(x) => json!({ "value": x }),
        Value::Uint16(x) => json!({ "value": x }),
        Value::Int16(x) => json!({ "value": x }),
        Value::Uint32(x) => json!({ "value": x }),
        Value::Int32(x) => json!({ "value": x }),
        Value::Uint64(x) => json!({ "value": x }),
        Value::Int64(x) => json!({ "value": x }),
        Value::Bool(x) => json!({ "value": x }),
        Value::Float32(x) => float_json(format!("{:08x}", x.to_bits()), f64::from(*x)),
        Value::Float64(x) => float_json(format!("{:016x}", x.to_bits()), *x),
        Value::String(s) => json!({ "len": s.len, "sha256": hex::encode(s.sha256) }),
        Value::Array(a) => json!({
            "elem_type": a.elem_type.name(),
            "count": a.count,
            "sha256": hex::encode(a.sha256),
        }),
    };
    if let Json::Object(f) = fields {
        m.extend(f);
    }
    m
}

/// The JSON entry of one labelled model (schema in README.md).
pub fn model_json(path: &Path, model: &Model, digest: &Digest) -> Json {
    let first = model.shards().first().map(|s| &s.file);
    let shards: Vec<Json> = model
        .shards()
        .iter()
        .map(|s| {
            json!({
                "path": text(s.path().as_os_str().as_bytes()),
                "size": s.source.len(),
                "version": s.file.version,
                "byte_order": s.file.byte_order.name(),
                "alignment": s.file.alignment,
                "data_start": s.file.data_start,
                "kv_count": s.file.kvs.len(),
                "tensor_count": s.file.tensors.len(),
            })
        })
        .collect();
    let kvs: Vec<Json> = model
        .kvs()
        .iter()
        .map(|m| {
            let mut o = Map::new();
            put_name(&mut o, "key", &m.kv.key);
            o.insert("type".into(), json!(m.kv.value.value_type().name()));
            o.extend(value_json(&m.kv.value));
            Json::Object(o)
        })
        .collect();
    let tensors: Vec<Json> = model
        .tensors()
        .iter()
        .zip(digest.tensor_sha256())
        .map(|(t, sha)| {
            let mut o = Map::new();
            put_name(&mut o, "name", &t.info.name);
            o.insert("dims".into(), json!(t.info.shape().dims()));
            o.insert("stored_dims".into(), json!(t.info.stored_dims));
            o.insert("type".into(), json!(t.info.ggml_type.name));
            o.insert("type_id".into(), json!(t.info.ggml_type.id));
            o.insert("nbytes".into(), json!(t.info.nbytes));
            o.insert("offset".into(), json!(t.offset));
            o.insert("stored_offset".into(), json!(t.info.stored_offset));
            o.insert("shard".into(), json!(t.shard));
            o.insert("sha256".into(), json!(hex::encode(sha)));
            Json::Object(o)
        })
        .collect();
    json!({
        "path": text(path.as_os_str().as_bytes()),
        "label": digest.label(),
        "version": first.map(|f| f.version),
        "byte_order": first.map(|f| f.byte_order.name()),
        "alignment": model.alignment(),
        "data_start": first.map(|f| f.data_start),
        "kv_count": model.kvs().len(),
        "tensor_count": model.tensors().len(),
        "tensor_bytes": model.tensor_bytes(),
        "shards": shards,
        "kvs": kvs,
        "tensors": tensors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_their_bits() {
        let m = value_json(&Value::Float32(f32::NAN));
        assert_eq!(m.get("value"), Some(&Json::Null));
        assert_eq!(m.get("bits"), Some(&json!("7fc00000")));
        let m = value_json(&Value::Float64(-0.0));
        assert_eq!(m.get("bits"), Some(&json!("8000000000000000")));
    }
}
