//! An Ollama manifest: `schemaVersion` 2, a `config` layer and `layers`,
//! each layer a media type, a `sha256:` digest, a size and maybe a name.
//! Read with the strict JSON rules, at most 16 MiB.

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::json::{Json, parse_strict};
use crate::ollama::name::digest_hex;

/// The largest manifest (and config blob) read.
pub const MAX_MANIFEST: u64 = 16 << 20;
/// The deepest nesting a manifest or config may have.
pub const MAX_DEPTH: usize = 64;

/// The media types of GGUF weights.
pub const GGUF_MEDIA_TYPES: [&str; 4] = [
    "application/vnd.ollama.image.model",
    "application/vnd.ollama.image.projector",
    "application/vnd.ollama.image.adapter",
    "application/vnd.ollama.image.draft",
];
/// The media type of a safetensors tensor blob.
pub const TENSOR_MEDIA_TYPE: &str = "application/vnd.ollama.image.tensor";

/// One layer (or the config) of a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// `mediaType`.
    pub media_type: String,
    /// `digest`, as written.
    pub digest: String,
    /// Its 64 lowercase hex digits.
    pub hex: String,
    /// `size`.
    pub size: u64,
    /// `name`, or empty.
    pub name: String,
}

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The config layer.
    pub config: Layer,
    /// The layers, in manifest order.
    pub layers: Vec<Layer>,
}

fn layer(v: &Json, what: &str) -> Result<Layer> {
    if v.as_object().is_none() {
        return Err(Error::schema(format!("{what} is a JSON {}, not an object", v.kind())));
    }
    let string = |key: &str| -> Result<Option<String>> {
        match v.get(key) {
            None => Ok(None),
            Some(Json::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(Error::schema(format!("{what}: {key} must be a string, found a JSON {}", other.kind()))),
        }
    };
    let media_type = string("mediaType")?.ok_or_else(|| Error::schema(format!("{what} has no mediaType")))?;
    let digest = string("digest")?.ok_or_else(|| Error::schema(format!("{what} has no digest")))?;
    let hex = digest_hex(&digest).map_err(|e| e.about(Subject::Key(what.as_bytes().to_vec())))?;
    let size = match v.get("size") {
        Some(s) => s.as_u64().ok_or_else(|| {
            Error::schema(format!("{what}: size must be an integer in 0..2^64-1, found a JSON {}", s.kind()))
        })?,
        None => return Err(Error::schema(format!("{what} has no size"))),
    };
    let name = string("name")?.unwrap_or_default();
    Ok(Layer { media_type, digest, hex, size, name })
}

/// Parses manifest text.
pub fn parse_manifest(text: &[u8]) -> Result<Manifest> {
    if text.len() as u64 > MAX_MANIFEST {
        return Err(Error::new(ErrorKind::HeaderTooLarge { declared: text.len() as u64, limit: MAX_MANIFEST }));
    }
    let json = parse_strict(text, MAX_DEPTH)?;
    if json.as_object().is_none() {
        return Err(Error::schema(format!("the manifest is a JSON {}, not an object", json.kind())).at(0));
    }
    match json.get("schemaVersion") {
        Some(Json::Uint(2)) => {}
        Some(v) => return Err(Error::schema(format!("schemaVersion must be 2, found {}", shown(v)))),
        None => return Err(Error::schema("the manifest has no schemaVersion")),
    }
    let config = layer(json.get("config").ok_or_else(|| Error::schema("the manifest has no config"))?, "config")?;
    let Some(list) = json.get("layers").and_then(Json::as_array) else {
        return Err(Error::schema("the manifest's layers must be an array"));
    };
    let layers = list.iter().enumerate().map(|(i, l)| layer(l, &format!("layer #{i}"))).collect::<Result<Vec<_>>>()?;
    Ok(Manifest { config, layers })
}

fn shown(v: &Json) -> String {
    match v {
        Json::Uint(u) => u.to_string(),
        Json::Number(_, t) => t.clone(),
        other => format!("a JSON {}", other.kind()),
    }
}

#[cfg(test)]
// Tests index their own fixtures, never input bytes.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn layer_json(media: &str, hex: &str, size: u64) -> String {
        format!(r#"{{"mediaType": "{media}", "digest": "sha256:{hex}", "size": {size}}}"#)
    }

    #[test]
    fn reads_config_and_layers() {
        let (a, b) = ("a".repeat(64), "B".repeat(64));
        let text = format!(
            r#"{{"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
               "config": {}, "layers": [{}, {{"mediaType": "t", "digest": "sha256:{a}", "size": 0, "name": "x", "from": "y"}}]}}"#,
            layer_json("application/vnd.docker.container.image.v1+json", &a, 5),
            layer_json("application/vnd.ollama.image.model", &b, 7)
        );
        let m = parse_manifest(text.as_bytes()).unwrap();
        assert_eq!(m.config.size, 5);
        assert_eq!(m.layers.len(), 2);
        assert_eq!(m.layers[0].hex, "b".repeat(64));
        assert_eq!(m.layers[1].name, "x");
    }

    #[test]
    fn refuses_wrong_schemas() {
        let a = "a".repeat(64);
        let cfg = layer_json("c", &a, 1);
        for bad in [
            "[]".to_string(),
            format!(r#"{{"config": {cfg}, "layers": []}}"#),
            format!(r#"{{"schemaVersion": 1, "config": {cfg}, "layers": []}}"#),
            format!(r#"{{"schemaVersion": 2.0, "config": {cfg}, "layers": []}}"#),
            r#"{"schemaVersion": 2, "layers": []}"#.to_string(),
            format!(r#"{{"schemaVersion": 2, "config": {cfg}}}"#),
            format!(r#"{{"schemaVersion": 2, "config": {cfg}, "layers": {{}}}}"#),
            format!(r#"{{"schemaVersion": 2, "config": {cfg}, "layers": [{}]}}"#, layer_json("m", "zz", 1)),
            format!(
                r#"{{"schemaVersion": 2, "config": {cfg}, "layers": [{}]}}"#,
                r#"{"mediaType": "m", "digest": 1, "size": 1}"#
            ),
            format!(
                r#"{{"schemaVersion": 2, "config": {cfg}, "layers": [{{"mediaType": "m", "digest": "sha256:{a}", "size": -1}}]}}"#
            ),
            format!(r#"{{"schemaVersion": 2, "schemaVersion": 2, "config": {cfg}, "layers": []}}"#),
        ] {
            assert!(parse_manifest(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
