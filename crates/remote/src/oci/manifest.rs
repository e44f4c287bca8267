//! Manifests and indexes, read with the strict JSON rules: an OCI image
//! manifest or Docker v2 schema 2 manifest (a config and layers), or an
//! OCI index or Docker manifest list (manifests to pick from).
//!
//! Which manifest of an index: entries Docker marks as attestations
//! (`vnd.docker.reference.type`) are left out; one left is taken; several
//! are an error listing their digests and platforms, so the user names one
//! by `@sha256:`. An index is never guessed through: a label is of the
//! bytes the user meant, or none.

use crate::json::{Json, parse_strict};

use super::reference::check_digest;

/// The largest manifest read (the distribution registry's own limit).
pub const MAX_MANIFEST: u64 = 4 << 20;
/// The deepest nesting read.
const MAX_DEPTH: usize = 32;

/// OCI image manifest.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// Docker image manifest v2 schema 2 (what Ollama's registry serves).
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker manifest list.
pub const DOCKER_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// The `Accept` header of a manifest request: every kind read here.
pub const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json";

/// A content descriptor: what a manifest says of a blob or manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    /// `mediaType`.
    pub media_type: String,
    /// The SHA-256 of the content: 64 lowercase hex digits.
    pub hex: String,
    /// `size`, in bytes.
    pub size: u64,
    /// `annotations`, in file order.
    pub annotations: Vec<(String, String)>,
    /// `artifactType`, when given.
    pub artifact_type: Option<String>,
    /// `platform` as `os/architecture[/variant]`, when given.
    pub platform: Option<String>,
}

impl Descriptor {
    /// An annotation's value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// `sha256:HEX`.
    pub fn digest(&self) -> String {
        format!("sha256:{}", self.hex)
    }
}

/// A manifest: a config and layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The manifest's media type (its own field, else the response's).
    pub media_type: String,
    /// `artifactType`, when given.
    pub artifact_type: Option<String>,
    /// The config descriptor.
    pub config: Descriptor,
    /// The layers, in manifest order.
    pub layers: Vec<Descriptor>,
}

/// What a manifest request returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A manifest.
    Manifest(Manifest),
    /// An index's manifests.
    Index(Vec<Descriptor>),
}

/// Parses a manifest or index; `content_type` is the response's, used when
/// the body has no `mediaType` (the spec makes it optional). A body whose
/// `mediaType` contradicts the response's is refused.
pub fn parse(text: &[u8], content_type: Option<&str>) -> Result<Parsed, String> {
    if text.len() as u64 > MAX_MANIFEST {
        return Err(format!("larger than {} MiB", MAX_MANIFEST >> 20));
    }
    let json = parse_strict(text, MAX_DEPTH).map_err(|e| e.to_string())?;
    if json.as_object().is_none() {
        return Err(format!("a JSON {}, not an object", json.kind()));
    }
    match json.get("schemaVersion") {
        Some(Json::Uint(2)) => {}
        Some(Json::Uint(1)) => return Err("a Docker schema 1 manifest (not read: it has no digests of its own)".into()),
        Some(v) => return Err(format!("schemaVersion must be 2, found a JSON {}", v.kind())),
        None => return Err("no schemaVersion".into()),
    }
    let declared = opt_str(&json, "mediaType")?;
    let header = content_type.map(|c| c.split(';').next().unwrap_or(c).trim()).filter(|c| is_known(c));
    let media_type = match (declared, header) {
        (Some(d), Some(h)) if d != h => {
            return Err(format!("its mediaType {d} is not the {h} the registry served it as"));
        }
        (Some(d), _) => d.to_string(),
        (None, Some(h)) => h.to_string(),
        (None, None) if json.get("manifests").is_some() => OCI_INDEX.to_string(),
        (None, None) => OCI_MANIFEST.to_string(),
    };
    match media_type.as_str() {
        OCI_INDEX | DOCKER_LIST => {
            let list =
                json.get("manifests").and_then(Json::as_array).ok_or("an index whose manifests is not an array")?;
            let manifests = list
                .iter()
                .enumerate()
                .map(|(i, d)| descriptor(d, &format!("manifests[{i}]")))
                .collect::<Result<_, _>>()?;
            Ok(Parsed::Index(manifests))
        }
        OCI_MANIFEST | DOCKER_MANIFEST => {
            if json.get("manifests").is_some() {
                return Err("a manifest that holds manifests".into());
            }
            let config = descriptor(json.get("config").ok_or("no config")?, "config")?;
            let list = json.get("layers").and_then(Json::as_array).ok_or("layers is not an array")?;
            let layers = list
                .iter()
                .enumerate()
                .map(|(i, d)| descriptor(d, &format!("layers[{i}]")))
                .collect::<Result<_, _>>()?;
            let artifact_type = opt_str(&json, "artifactType")?.map(str::to_string);
            Ok(Parsed::Manifest(Manifest { media_type, artifact_type, config, layers }))
        }
        other => Err(format!("the media type {other} is neither a manifest nor an index")),
    }
}

fn is_known(media_type: &str) -> bool {
    matches!(media_type, OCI_MANIFEST | OCI_INDEX | DOCKER_MANIFEST | DOCKER_LIST)
}

fn opt_str<'a>(v: &'a Json, key: &str) -> Result<Option<&'a str>, String> {
    match v.get(key) {
        None => Ok(None),
        Some(Json::Str(s)) => Ok(Some(s)),
        Some(other) => Err(format!("{key} must be a string, found a JSON {}", other.kind())),
    }
}

fn descriptor(v: &Json, what: &str) -> Result<Descriptor, String> {
    if v.as_object().is_none() {
        return Err(format!("{what} is a JSON {}, not an object", v.kind()));
    }
    let at = |why: String| format!("{what}: {why}");
    let media_type = opt_str(v, "mediaType").map_err(at)?.ok_or_else(|| format!("{what} has no mediaType"))?;
    let digest = opt_str(v, "digest").map_err(at)?.ok_or_else(|| format!("{what} has no digest"))?;
    let hex = check_digest(digest).map_err(at)?;
    let size = v
        .get("size")
        .ok_or_else(|| format!("{what} has no size"))?
        .as_u64()
        .ok_or_else(|| format!("{what}: size must be an integer in 0..2^64-1"))?;
    let mut annotations = Vec::new();
    if let Some(a) = v.get("annotations") {
        let members = a.as_object().ok_or_else(|| format!("{what}: annotations is not an object"))?;
        for (k, val) in members {
            let val = val.as_str().ok_or_else(|| format!("{what}: annotation {k:?} is not a string"))?;
            annotations.push((k.clone(), val.to_string()));
        }
    }
    let artifact_type = opt_str(v, "artifactType").map_err(at)?.map(str::to_string);
    let platform = match v.get("platform") {
        None => None,
        Some(p) => {
            let os = opt_str(p, "os").map_err(at)?.unwrap_or("?");
            let arch = opt_str(p, "architecture").map_err(at)?.unwrap_or("?");
            Some(match opt_str(p, "variant").map_err(at)? {
                Some(var) => format!("{os}/{arch}/{var}"),
                None => format!("{os}/{arch}"),
            })
        }
    };
    Ok(Descriptor { media_type: media_type.to_string(), hex, size, annotations, artifact_type, platform })
}

/// The one manifest of an index this tool follows (see the module's
/// rule): the entry, or why none is picked.
pub fn pick(manifests: &[Descriptor]) -> Result<&Descriptor, String> {
    let candidates: Vec<&Descriptor> = manifests
        .iter()
        .filter(|d| d.annotation("vnd.docker.reference.type").is_none())
        .filter(|d| is_known(&d.media_type))
        .collect();
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => Err("an index with no manifest to follow".into()),
        many => {
            let list: Vec<String> = many
                .iter()
                .map(|d| format!("@{} ({})", d.digest(), d.platform.as_deref().unwrap_or("no platform")))
                .collect();
            Err(format!("an index of {} manifests: name one by its digest: {}", many.len(), list.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(media: &str, hex: char, extra: &str) -> String {
        format!(r#"{{"mediaType": "{media}", "digest": "sha256:{}", "size": 3{extra}}}"#, hex.to_string().repeat(64))
    }

    #[test]
    fn reads_manifests_by_their_own_type_or_the_response() {
        let m = format!(
            r#"{{"schemaVersion": 2, "mediaType": "{OCI_MANIFEST}", "artifactType": "application/vnd.cncf.model.manifest.v1+json",
                "config": {}, "layers": [{}]}}"#,
            desc("application/vnd.cncf.model.config.v1+json", 'a', ""),
            desc(
                "application/vnd.cncf.model.weight.v1.raw",
                'b',
                r#", "annotations": {"org.cncf.model.filepath": "m.gguf"}"#
            )
        );
        let Parsed::Manifest(m) = parse(m.as_bytes(), Some("application/vnd.oci.image.manifest.v1+json")).unwrap()
        else {
            panic!("not a manifest")
        };
        assert_eq!(m.artifact_type.as_deref(), Some("application/vnd.cncf.model.manifest.v1+json"));
        assert_eq!(m.layers[0].annotation("org.cncf.model.filepath"), Some("m.gguf"));
        assert_eq!(m.layers[0].digest(), format!("sha256:{}", "b".repeat(64)));
        // No mediaType: the response's.
        let bare = format!(r#"{{"schemaVersion": 2, "config": {}, "layers": []}}"#, desc("c", 'a', ""));
        let Parsed::Manifest(m) = parse(bare.as_bytes(), Some(DOCKER_MANIFEST)).unwrap() else { panic!() };
        assert_eq!(m.media_type, DOCKER_MANIFEST);
        let Parsed::Manifest(m) = parse(bare.as_bytes(), Some("text/plain")).unwrap() else { panic!() };
        assert_eq!(m.media_type, OCI_MANIFEST);
    }

    #[test]
    fn refuses_what_breaks_the_spec() {
        let cfg = desc("c", 'a', "");
        for (bad, why) in [
            ("[]".to_string(), "not an object"),
            (format!(r#"{{"schemaVersion": 1, "config": {cfg}, "layers": []}}"#), "schema 1"),
            (format!(r#"{{"config": {cfg}, "layers": []}}"#), "no schemaVersion"),
            (r#"{"schemaVersion": 2, "layers": []}"#.to_string(), "no config"),
            (format!(r#"{{"schemaVersion": 2, "config": {cfg}}}"#), "layers"),
            (format!(r#"{{"schemaVersion": 2, "mediaType": "x/y", "config": {cfg}, "layers": []}}"#), "neither"),
            (
                format!(r#"{{"schemaVersion": 2, "mediaType": "{OCI_INDEX}", "config": {cfg}, "layers": []}}"#),
                "not an array",
            ),
            (format!(r#"{{"schemaVersion": 2, "config": {}, "layers": []}}"#, desc("c", 'A', "")), "64 lowercase"),
            (
                format!(
                    r#"{{"schemaVersion": 2, "config": {}, "layers": []}}"#,
                    desc("c", 'a', r#", "annotations": {"k": 1}"#)
                ),
                "not a string",
            ),
            (format!(r#"{{"schemaVersion": 2, "config": {cfg}, "config": {cfg}, "layers": []}}"#), "repeated key"),
        ] {
            let e = parse(bad.as_bytes(), None).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let m = format!(r#"{{"schemaVersion": 2, "mediaType": "{OCI_MANIFEST}", "config": {cfg}, "layers": []}}"#);
        let e = parse(m.as_bytes(), Some(DOCKER_MANIFEST)).unwrap_err();
        assert!(e.contains("served it as"), "{e}");
        assert!(parse(&vec![b' '; (MAX_MANIFEST + 1) as usize], None).unwrap_err().contains("larger"));
    }

    #[test]
    fn an_index_is_followed_only_when_one_manifest_is_left() {
        let att = r#", "annotations": {"vnd.docker.reference.type": "attestation-manifest"}"#;
        let plat = r#", "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}"#;
        let text = format!(
            r#"{{"schemaVersion": 2, "mediaType": "{OCI_INDEX}", "manifests": [{}, {}]}}"#,
            desc(OCI_MANIFEST, 'a', ""),
            desc(OCI_MANIFEST, 'b', att)
        );
        let Parsed::Index(list) = parse(text.as_bytes(), None).unwrap() else { panic!() };
        assert_eq!(pick(&list).unwrap().hex, "a".repeat(64));
        let two = [list[0].clone(), Descriptor { hex: "c".repeat(64), ..list[0].clone() }];
        let e = pick(&two).unwrap_err();
        assert!(e.contains("name one by its digest") && e.contains(&"c".repeat(64)), "{e}");
        assert!(pick(&list[1..]).unwrap_err().contains("no manifest"));
        let text = format!(r#"{{"schemaVersion": 2, "manifests": [{}]}}"#, desc(DOCKER_MANIFEST, 'd', plat));
        let Parsed::Index(list) = parse(text.as_bytes(), Some(DOCKER_LIST)).unwrap() else { panic!() };
        assert_eq!(list[0].platform.as_deref(), Some("linux/arm64/v8"));
    }
}
