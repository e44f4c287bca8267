//! A GGUF model's entry in the `--json` document (schema in README.md):
//! its files, every KV in skeleton order, every tensor with its digest.

use std::io;
use std::path::Path;

use serde_json::{Map, Value as JsonValue, json};

use crate::gguf::model::Model;
use crate::gguf::value::Value;
use crate::hash::Digest;
use crate::output::JsonWriter;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn float_json(bits_hex: String, v: f64) -> JsonValue {
    if v.is_finite() {
        json!({ "value": v, "bits": bits_hex })
    } else {
        json!({ "value": JsonValue::Null, "bits": bits_hex })
    }
}

/// The JSON fields of one KV value: the value for scalars (floats also as
/// their exact bits), `len` + `sha256` for strings, and `elem_type` +
/// `count` + `sha256` for arrays.
pub fn value_json(v: &Value) -> Map<String, JsonValue> {
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
    if let JsonValue::Object(f) = fields {
        m.extend(f);
    }
    m
}

/// Writes the JSON entry of one labelled model (schema in README.md), a
/// KV and a tensor at a time.
pub fn write_model_json(w: &mut JsonWriter<'_>, path: &Path, model: &Model, digest: &Digest) -> io::Result<()> {
    let first = model.shards().first().map(|s| &s.file);
    w.begin_object()?;
    w.str_field("path", &text(path.as_os_str().as_encoded_bytes()))?;
    w.str_field("label", &digest.label())?;
    w.field("version", first.map(|f| f.version))?;
    w.field("byte_order", first.map(|f| f.byte_order.name()))?;
    w.field("alignment", model.alignment())?;
    w.field("data_start", first.map(|f| f.data_start))?;
    w.field("kv_count", model.kvs().len())?;
    w.field("tensor_count", model.tensors().len())?;
    w.field("tensor_bytes", model.tensor_bytes())?;
    w.key("shards")?;
    w.begin_array()?;
    for s in model.shards() {
        w.begin_object()?;
        w.str_field("path", &text(s.path().as_os_str().as_encoded_bytes()))?;
        w.field("size", s.source.len())?;
        w.field("version", s.file.version)?;
        w.str_field("byte_order", s.file.byte_order.name())?;
        w.field("alignment", s.file.alignment)?;
        w.field("data_start", s.file.data_start)?;
        w.field("kv_count", s.file.kvs.len())?;
        w.field("tensor_count", s.file.tensors.len())?;
        w.end_object()?;
    }
    w.end_array()?;
    w.key("kvs")?;
    w.begin_array()?;
    for m in model.kvs() {
        w.begin_object()?;
        w.name_field("key", &m.kv.key)?;
        w.str_field("type", m.kv.value.value_type().name())?;
        for (k, v) in value_json(&m.kv.value) {
            w.key(&k)?;
            w.tree(&v)?;
        }
        w.end_object()?;
    }
    w.end_array()?;
    w.key("tensors")?;
    w.begin_array()?;
    for (t, sha) in model.tensors().iter().zip(digest.tensor_sha256()) {
        w.begin_object()?;
        w.name_field("name", &t.info.name)?;
        w.u64s_field("dims", t.info.shape().dims())?;
        w.u64s_field("stored_dims", &t.info.stored_dims)?;
        w.str_field("type", t.info.ggml_type.name)?;
        w.field("type_id", t.info.ggml_type.id)?;
        w.field("nbytes", t.info.nbytes)?;
        w.field("offset", t.offset)?;
        w.field("stored_offset", t.info.stored_offset)?;
        w.field("shard", t.shard)?;
        w.str_field("sha256", &hex::encode(sha))?;
        w.end_object()?;
    }
    w.end_array()?;
    crate::format::end_entry(w, &crate::format::Labelled::sources(model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_their_bits() {
        let m = value_json(&Value::Float32(f32::NAN));
        assert_eq!(m.get("value"), Some(&JsonValue::Null));
        assert_eq!(m.get("bits"), Some(&json!("7fc00000")));
        let m = value_json(&Value::Float64(-0.0));
        assert_eq!(m.get("bits"), Some(&json!("8000000000000000")));
    }
}
