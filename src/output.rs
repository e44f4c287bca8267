//! What the command line prints: sha256sum-style lines and the JSON document.
//!
//! Kept in the library, apart from the parser, so that the binary only
//! parses flags and writes these bytes out, and tests can check the formats
//! without running it.

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde_json::{Map, Value as Json, json};

use crate::error::Error;
use crate::hash::Digest;
use crate::model::Model;
use crate::value::Value;

/// The JSON document's format version; bumped on any incompatible change.
pub const JSON_FORMAT: u32 = 1;

fn needs_escape(name: &[u8]) -> bool {
    name.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r'))
}

/// Escapes `\`, newline and carriage return as GNU coreutils does.
fn escape_name(name: &[u8], out: &mut Vec<u8>) {
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// One line of sha256sum output, `<label>  <path>\n`; a path holding `\`,
/// a newline or a carriage return is escaped and the line starts with `\`,
/// exactly as GNU sha256sum writes it, so `--check` reads it back.
pub fn sums_line(label: &str, path: &Path) -> Vec<u8> {
    let name = path.as_os_str().as_bytes();
    let mut out = Vec::with_capacity(label.len().saturating_add(name.len()).saturating_add(4));
    if needs_escape(name) {
        out.push(b'\\');
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(b"  ");
        escape_name(name, &mut out);
    } else {
        out.extend_from_slice(label.as_bytes());
        out.extend_from_slice(b"  ");
        out.extend_from_slice(name);
    }
    out.push(b'\n');
    out
}

/// A file name as `--check` prints it before `: OK`: escaped (with a leading
/// `\`) only when it holds a newline, as GNU sha256sum 9 does.
pub fn check_name(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len().saturating_add(1));
    if name.contains(&b'\n') {
        out.push(b'\\');
        escape_name(name, &mut out);
    } else {
        out.extend_from_slice(name);
    }
    out
}

/// A file name as coreutils quotes it in messages (its `quotef`): as it is
/// when it is plain, else in shell quotes, with control characters and bytes
/// that are not UTF-8 as `$'\t'` / `$'\377'`, so a hostile name cannot forge
/// a message.
pub fn quote_name(name: &[u8]) -> String {
    let unprintable = |b: u8| b < 0x20 || b == 0x7f;
    let special = |i: usize, b: u8| {
        matches!(b, b' ' | b'!' | b'"' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b':' | b';' | b'<' | b'=' | b'>')
            || matches!(b, b'?' | b'[' | b'\\' | b'^' | b'`' | b'|')
            || (i == 0 && matches!(b, b'#' | b'~'))
            || unprintable(b)
    };
    let valid = std::str::from_utf8(name).is_ok();
    if valid && !name.is_empty() && !name.iter().enumerate().any(|(i, &b)| special(i, b)) {
        return String::from_utf8_lossy(name).into_owned();
    }
    let escaped = !valid || name.iter().any(|&b| unprintable(b));
    if !escaped && name.contains(&b'\'') && !name.iter().any(|b| b"\"$`\\!".contains(b)) {
        return format!("\"{}\"", String::from_utf8_lossy(name));
    }
    // Plain runs go in '...', escapes in $'...'; switching closes one and
    // opens the other, as coreutils writes it.
    let mut out = String::from("'");
    let mut in_dollar = false;
    let escape = |out: &mut String, in_dollar: &mut bool, code: String| {
        if !*in_dollar {
            out.push_str("'$'");
            *in_dollar = true;
        }
        out.push_str(&code);
    };
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if (c as u32) < 0x20 || c == '\u{7f}' {
                let code = match c {
                    '\t' => "\\t".to_string(),
                    '\n' => "\\n".to_string(),
                    '\r' => "\\r".to_string(),
                    c => format!("\\{:03o}", c as u32),
                };
                escape(&mut out, &mut in_dollar, code);
                continue;
            }
            if in_dollar {
                out.push_str("''");
                in_dollar = false;
            }
            match c {
                '\'' => out.push_str("'\\''"),
                c => out.push(c),
            }
        }
        for &b in chunk.invalid() {
            escape(&mut out, &mut in_dollar, format!("\\{b:03o}"));
        }
    }
    out.push('\'');
    out
}

/// An error as the command line prints it after `gguf-digest: `: the
/// quoted file name, then where and what.
pub fn error_line(e: &Error) -> String {
    match e.path() {
        Some(p) => format!("{}: {}", quote_name(p.as_os_str().as_bytes()), e.detail()),
        None => e.detail(),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Names that are not UTF-8 are shown lossily, with their exact bytes in hex beside.
pub fn put_name(obj: &mut Map<String, Json>, field: &str, bytes: &[u8]) {
    obj.insert(field.to_string(), json!(text(bytes)));
    if std::str::from_utf8(bytes).is_err() {
        obj.insert(format!("{field}_hex"), json!(hex::encode(bytes)));
    }
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
                "size": s.file.file_len,
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

/// The JSON entry of a path that could not be labelled.
pub fn error_json(path: &Path, e: &Error) -> Json {
    json!({
        "path": text(path.as_os_str().as_bytes()),
        "error": e.to_string(),
    })
}

/// The whole `--json` document.
pub fn document_json(files: Vec<Json>) -> Json {
    json!({
        "format": JSON_FORMAT,
        "spec": "canonical-skeleton-v1",
        "tool": concat!("gguf-digest ", env!("CARGO_PKG_VERSION")),
        "files": files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_utf8_are_escaped() {
        assert_eq!(quote_name(b"\xff"), "''$'\\377'");
        assert_eq!(quote_name(b"a\xffb"), "'a'$'\\377''b'");
    }

    #[test]
    fn names_are_quoted_like_coreutils() {
        for (name, quoted) in [
            ("nope", "nope"),
            ("a b", "'a b'"),
            ("'q", "\"'q\""),
            ("a'b c", "\"a'b c\""),
            ("a'b$c", "'a'\\''b$c'"),
            ("a$b", "'a$b'"),
            ("a~b", "a~b"),
            ("~ab", "'~ab'"),
            ("#ab", "'#ab'"),
            ("a#b", "a#b"),
            ("a:b", "'a:b'"),
            ("a=b", "'a=b'"),
            ("a\tb", "'a'$'\\t''b'"),
            ("a\x01b", "'a'$'\\001''b'"),
            ("é", "é"),
            ("standard input", "'standard input'"),
            ("a\t", "'a'$'\\t'"),
            ("a\t\tb", "'a'$'\\t\\t''b'"),
            ("a{b}c-d,e@f%g+h]", "a{b}c-d,e@f%g+h]"),
        ] {
            assert_eq!(quote_name(name.as_bytes()), quoted, "{name:?}");
        }
    }

    #[test]
    fn sums_lines_escape_like_gnu() {
        let l = "ab";
        assert_eq!(sums_line(l, Path::new("m.gguf")), b"ab  m.gguf\n");
        assert_eq!(sums_line(l, Path::new("a\\b")), b"\\ab  a\\\\b\n");
        assert_eq!(sums_line(l, Path::new("a\nb")), b"\\ab  a\\nb\n");
        assert_eq!(sums_line(l, Path::new("a\rb")), b"\\ab  a\\rb\n");
    }

    #[test]
    fn check_names_escape_only_with_newline() {
        assert_eq!(check_name(b"a\\b"), b"a\\b");
        assert_eq!(check_name(b"a\\\nb"), b"\\a\\\\\\nb");
    }

    #[test]
    fn floats_keep_their_bits() {
        let m = value_json(&Value::Float32(f32::NAN));
        assert_eq!(m.get("value"), Some(&Json::Null));
        assert_eq!(m.get("bits"), Some(&json!("7fc00000")));
        let m = value_json(&Value::Float64(-0.0));
        assert_eq!(m.get("bits"), Some(&json!("8000000000000000")));
    }
}
