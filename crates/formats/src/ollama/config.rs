//! The config component of an Ollama model (docs/SPEC.md, Part III): the
//! config JSON without what Ollama derives from the weights or the machine,
//! zero values pruned as Go's `omitempty` would, then a canonical encoding
//! `J` whose SHA-256 is the component's content digest.

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result, Subject};
use crate::hash::Sha256Digest;
use crate::json::Json;

/// Top-level members Ollama derives from the weights or from the machine
/// that created the model: never content, whatever their value.
pub const DERIVED: [&str; 12] = [
    "model_format",
    "model_family",
    "model_families",
    "model_type",
    "file_type",
    "architecture",
    "os",
    "rootfs",
    "context_length",
    "embedding_length",
    "base_name",
    "capabilities_explicit",
];

/// Members Ollama only accepts as a string or `null`.
pub const STRING_OR_NULL: [&str; 5] = ["renderer", "parser", "requires", "remote_host", "remote_model"];

/// The config's content digest: `H(J(pruned config))`.
pub fn config_digest(config: &Json) -> Result<Sha256Digest> {
    Ok(content_digest(&content(config)?))
}

/// `H(J(content))`, for content already pruned by [`content`].
pub fn content_digest(content: &Json) -> Sha256Digest {
    let mut out = Vec::new();
    encode(content, &mut out);
    Sha256::digest(&out).into()
}

/// The config's content: the object without derived members (and without
/// `capabilities` unless `capabilities_explicit` is `true`), zero values
/// pruned at every depth.
pub fn content(config: &Json) -> Result<Json> {
    let Some(members) = config.as_object() else {
        return Err(Error::schema(format!("the config is a JSON {}, not an object", config.kind())));
    };
    for (k, v) in members {
        if STRING_OR_NULL.contains(&k.as_str()) && !matches!(v, Json::Str(_) | Json::Null) {
            let what = format!("config member {k} must be a string or null, found a JSON {}", v.kind());
            return Err(Error::schema(what).about(Subject::Key(k.as_bytes().to_vec())));
        }
    }
    let explicit = matches!(config.get("capabilities_explicit"), Some(Json::Bool(true)));
    let kept = members
        .iter()
        .filter(|(k, _)| !DERIVED.contains(&k.as_str()) && (explicit || k != "capabilities"))
        .cloned()
        .collect();
    Ok(prune(Json::Object(kept)).unwrap_or(Json::Object(Vec::new())))
}

/// Whether a number token is written with only zero digits (`0`, `-0`,
/// `0.0`, `0e5`); `1e-400` is not zero.
fn zero_token(token: &str) -> bool {
    let mantissa = token.split(['e', 'E']).next().unwrap_or("");
    mantissa.bytes().all(|b| matches!(b, b'0' | b'-' | b'+' | b'.'))
}

/// The value with zero-valued members dropped from every object (after
/// their own members were dropped); `None` when the value itself is zero.
/// Array elements are never dropped: an element that prunes to zero stays,
/// pruned.
fn prune(v: Json) -> Option<Json> {
    match v {
        Json::Null | Json::Bool(false) => None,
        Json::Uint(0) => None,
        Json::Number(_, ref t) if zero_token(t) => None,
        Json::Str(ref s) if s.is_empty() => None,
        Json::Array(a) if a.is_empty() => None,
        Json::Array(a) => {
            Some(Json::Array(a.into_iter().map(|e| prune(e.clone()).unwrap_or(pruned_element(e))).collect()))
        }
        Json::Object(m) => {
            let kept: Vec<(String, Json)> = m.into_iter().filter_map(|(k, v)| prune(v).map(|v| (k, v))).collect();
            if kept.is_empty() { None } else { Some(Json::Object(kept)) }
        }
        other => Some(other),
    }
}

/// An array element that prunes to nothing: scalars stay as they are, an
/// object keeps only its non-zero members (so `{"b": 0}` becomes `{}`).
fn pruned_element(e: Json) -> Json {
    match e {
        Json::Object(_) => Json::Object(Vec::new()),
        other => other,
    }
}

/// `J`: one tag byte, then the value; object members in byte order of keys.
pub fn encode(v: &Json, out: &mut Vec<u8>) {
    match v {
        Json::Object(m) => {
            out.push(b'o');
            out.extend_from_slice(&(m.len() as u64).to_le_bytes());
            let mut sorted: Vec<&(String, Json)> = m.iter().collect();
            sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            for (k, v) in sorted {
                out.extend_from_slice(&Sha256::digest(k.as_bytes()));
                encode(v, out);
            }
        }
        Json::Array(a) => {
            out.push(b'a');
            out.extend_from_slice(&(a.len() as u64).to_le_bytes());
            for e in a {
                encode(e, out);
            }
        }
        Json::Str(s) => {
            out.push(b's');
            out.extend_from_slice(&Sha256::digest(s.as_bytes()));
        }
        Json::Uint(u) => number(&u.to_string(), out),
        Json::Number(_, t) => number(t, out),
        Json::Bool(true) => out.push(b't'),
        Json::Bool(false) => out.push(b'f'),
        Json::Null => out.push(b'z'),
    }
}

fn number(token: &str, out: &mut Vec<u8>) {
    out.push(b'n');
    out.extend_from_slice(&(token.len() as u64).to_le_bytes());
    out.extend_from_slice(token.as_bytes());
}

#[cfg(test)]
// Tests index their own fixtures, never input bytes.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::json::parse_strict;

    fn content_of(text: &str) -> Json {
        content(&parse_strict(text.as_bytes(), 64).unwrap()).unwrap()
    }

    fn digest(text: &str) -> Sha256Digest {
        config_digest(&parse_strict(text.as_bytes(), 64).unwrap()).unwrap()
    }

    #[test]
    fn derived_members_and_zero_values_are_not_content() {
        let base = r#"{"renderer": "r", "generation_defaults": {"temperature": 0.7}}"#;
        let noisy = r#"{"model_format": "gguf", "model_family": "llama", "os": "linux", "rootfs": {"type": "layers"},
            "file_type": "Q4_1", "capabilities": ["completion"], "context_length": 8192,
            "generation_defaults": {"temperature": 0.7, "top_k": 0, "stop": [], "x": {"y": null}},
            "renderer": "r", "parser": "", "draft": false, "extra": 0.0, "e2": -0, "e3": 0e5}"#;
        assert_eq!(digest(base), digest(noisy));
        // Order and spacing do not matter; written number forms do.
        assert_eq!(digest(r#"{"a":1,"b":"x"}"#), digest(r#"{ "b" : "x" , "a" : 1 }"#));
        assert_ne!(digest(r#"{"a":1.0}"#), digest(r#"{"a":1}"#));
        assert_ne!(digest(r#"{"a":1e-400}"#), digest("{}"), "1e-400 is not written as zero");
    }

    #[test]
    fn capabilities_are_content_only_when_declared() {
        assert_eq!(content_of(r#"{"capabilities": ["tools"]}"#), Json::Object(vec![]));
        let declared = content_of(r#"{"capabilities": ["tools"], "capabilities_explicit": true}"#);
        assert_eq!(declared.get("capabilities").and_then(Json::as_array).map(<[Json]>::len), Some(1));
        assert!(declared.get("capabilities_explicit").is_none());
    }

    #[test]
    fn only_the_top_level_is_derived_and_array_elements_stay() {
        let c = content_of(r#"{"draft": {"os": "x", "model_format": "y"}, "a": [0, null, {"b": 0}, ""]}"#);
        assert!(c.get("draft").and_then(|d| d.get("os")).is_some());
        let a = c.get("a").and_then(Json::as_array).unwrap();
        assert_eq!(a.len(), 4);
        assert_eq!(a[2], Json::Object(vec![]));
    }

    #[test]
    fn string_members_are_typed_before_pruning() {
        for bad in [r#"{"renderer": 0}"#, r#"{"parser": []}"#, r#"{"requires": {"a": 1}}"#, r#"{"remote_host": true}"#]
        {
            let e = content(&parse_strict(bad.as_bytes(), 64).unwrap()).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Schema(_)), "{bad}");
        }
        assert!(content(&parse_strict(br#"{"renderer": null, "parser": "p"}"#, 64).unwrap()).is_ok());
        assert!(content(&parse_strict(b"[]", 64).unwrap()).is_err());
    }

    #[test]
    fn encoding_is_tagged_and_sorted() {
        let mut out = Vec::new();
        encode(&parse_strict(br#"{"b": [true, false, null], "a": -1.50}"#, 64).unwrap(), &mut out);
        assert_eq!(out[0], b'o');
        assert_eq!(&out[1..9], &2u64.to_le_bytes());
        // "a" sorts first: its value is the number token as written.
        assert_eq!(&out[9..41], Sha256::digest(b"a").as_slice());
        assert_eq!(&out[41..55], [b"n".as_slice(), &5u64.to_le_bytes(), b"-1.50"].concat().as_slice());
        assert_eq!(&out[87..], [b"a".as_slice(), &3u64.to_le_bytes(), b"tfz"].concat().as_slice());
    }
}
