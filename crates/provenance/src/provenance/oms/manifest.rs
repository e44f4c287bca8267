//! The statement an OpenSSF model signature signs (model_signing v1.0): one
//! subject (the model's name, and the SHA-256 over every resource digest in
//! the order listed), the predicate's `serialization` (how the model was cut
//! into resources) and `resources` (each file, or each shard `path:start:end`
//! of each file, with its digest). Read strictly: a duplicate key, a second
//! subject, a resource named twice, a name that could leave the model's
//! directory, a root digest that is not the resources' are refused here,
//! before a single file is looked at.

use std::collections::HashSet;
use std::path::{Component, Path};

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result};
use crate::json::{Json, parse_strict};
use crate::provenance::{MAX_DEPTH, STATEMENT_TYPE};

/// The predicate type of model_signing v1.0.
pub const PREDICATE_TYPE: &str = "https://model_signing/signature/v1.0";

/// The largest shard size accepted: a JSON float is exact up to 2^53.
const MAX_SHARD: u64 = 1 << 53;

/// How the model was cut into resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// One resource per file, named by its path.
    Files,
    /// Each file cut at multiples of the shard size, each piece a resource
    /// named `path:start:end` (an empty file has none).
    Shards(u64),
}

/// The `serialization` member: everything needed to recompute the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Serialization {
    /// Files or shards.
    pub method: Method,
    /// Whether symbolic links were followed when signing (else refused).
    pub allow_symlinks: bool,
    /// Paths (relative to the model) left out, with everything beneath them.
    pub ignore_paths: Vec<String>,
}

/// One resource: a file, or a byte range of one, and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The file's path relative to the model, `/`-separated.
    pub path: String,
    /// The byte range `start..end` (shards), or `None` (the whole file).
    pub range: Option<(u64, u64)>,
    /// The digest.
    pub digest: [u8; 32],
}

/// The `gguf_digest` member `gguf-digest sign --format oms` adds: the
/// directory's label and its components' (model_signing ignores it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relayout {
    /// The contract the labels follow (`directory-skeleton-v1`).
    pub contract: String,
    /// The directory label, 64 hex digits.
    pub label: String,
    /// Each weights component's kind (`SFTN`, `GGUF`), name (`d/P`) and
    /// label (64 hex digits): what `--accept-relayout` may excuse.
    pub components: Vec<(String, String, String)>,
}

/// A signed model manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The subject's name (informational: the model directory's name).
    pub model_name: String,
    /// How to recompute it.
    pub serialization: Serialization,
    /// Every resource, in the statement's order.
    pub resources: Vec<Resource>,
    /// The gguf-digest labels, when the signer added them.
    pub relayout: Option<Relayout>,
}

fn refuse<T>(why: impl std::fmt::Display) -> Result<T> {
    Err(Error::schema(format!("OpenSSF model signature: {why}")))
}

fn member<'a>(obj: &'a Json, key: &str, what: &str) -> Result<&'a Json> {
    match obj.get(key) {
        Some(v) => Ok(v),
        None => refuse(format!("{what} has no member \"{key}\"")),
    }
}

fn string<'a>(obj: &'a Json, key: &str, what: &str) -> Result<&'a str> {
    match member(obj, key, what)?.as_str() {
        Some(s) => Ok(s),
        None => refuse(format!("{what}'s \"{key}\" is not a string")),
    }
}

fn hex32(text: &str, what: &str) -> Result<[u8; 32]> {
    let mut out = [0u8; 32];
    if text.len() != 64 || hex::decode_to_slice(text, &mut out).is_err() {
        return refuse(format!("{what} is not 64 hex digits"));
    }
    Ok(out)
}

/// Whether `payload` (a DSSE payload) is a model_signing statement: only its
/// predicate type is looked at, to choose how to verify it.
pub fn is_model_signing(payload: &[u8]) -> bool {
    parse_strict(payload, MAX_DEPTH)
        .ok()
        .is_some_and(|j| j.get("predicateType").and_then(Json::as_str) == Some(PREDICATE_TYPE))
}

/// The subject's sha256 (the root digest) of a statement, read before its
/// signature is checked only to hand it to the keyless verifier, which
/// checks that the signed statement names it.
pub fn subject_digest(payload: &[u8]) -> Result<[u8; 32]> {
    let st = parse_strict(payload, MAX_DEPTH)?;
    let subjects = st.get("subject").and_then(Json::as_array).unwrap_or_default();
    let [subject] = subjects else {
        return refuse(format!("{} subjects; a model signature has exactly one", subjects.len()));
    };
    hex32(string(member(subject, "digest", "the subject")?, "sha256", "the subject's digest")?, "the subject's sha256")
}

/// Reads the statement (a verified DSSE payload).
pub fn read(payload: &[u8]) -> Result<Manifest> {
    let st = parse_strict(payload, MAX_DEPTH)?;
    if st.as_object().is_none() {
        return refuse("the statement is not a JSON object");
    }
    if string(&st, "_type", "the statement")? != STATEMENT_TYPE {
        return refuse(format!("the statement's _type is not {STATEMENT_TYPE}"));
    }
    let pt = string(&st, "predicateType", "the statement")?;
    if pt != PREDICATE_TYPE {
        return refuse(format!("predicate type \"{pt}\", not {PREDICATE_TYPE}"));
    }
    let subjects = member(&st, "subject", "the statement")?.as_array().unwrap_or_default();
    let [subject] = subjects else {
        return refuse(format!("{} subjects; a model signature has exactly one", subjects.len()));
    };
    let model_name = string(subject, "name", "the subject")?.to_string();
    let root = hex32(
        string(member(subject, "digest", "the subject")?, "sha256", "the subject's digest")?,
        "the subject's sha256",
    )?;
    let predicate = member(&st, "predicate", "the statement")?;
    let serialization = serialization(member(predicate, "serialization", "the predicate")?)?;
    let Some(list) = member(predicate, "resources", "the predicate")?.as_array() else {
        return refuse("the predicate's resources is not an array");
    };
    let mut resources = Vec::with_capacity(list.len());
    let mut seen = HashSet::with_capacity(list.len());
    let mut hasher = Sha256::new();
    for r in list {
        let name = string(r, "name", "a resource")?;
        let algorithm = string(r, "algorithm", "a resource")?;
        // A shard's digest is named for its cut by model_signing.
        let sharded = match serialization.method {
            Method::Shards(n) => algorithm.strip_prefix("sha256-sharded-") == Some(n.to_string().as_str()),
            Method::Files => false,
        };
        if algorithm != "sha256" && !sharded {
            return refuse(format!("resource {name:?} is hashed with {algorithm:?}; only sha256 is supported"));
        }
        let digest = hex32(string(r, "digest", "a resource")?, &format!("resource {name:?}'s digest"))?;
        hasher.update(digest);
        let resource = resource(name, serialization.method, digest)?;
        if !seen.insert((resource.path.clone(), resource.range)) {
            return refuse(format!("resource {name:?} is listed twice"));
        }
        resources.push(resource);
    }
    if <[u8; 32]>::from(hasher.finalize()) != root {
        return refuse("the subject's sha256 is not the digest of the resources' digests");
    }
    let relayout = match predicate.get("gguf_digest") {
        None => None,
        Some(g) => {
            let mut components = Vec::new();
            if let Some(list) = g.get("components") {
                let Some(list) = list.as_array() else { return refuse("gguf_digest's components is not an array") };
                for c in list {
                    let what = "a gguf_digest component";
                    let label = hex::encode(hex32(string(c, "label", what)?, "a gguf_digest component's label")?);
                    components.push((
                        string(c, "kind", what)?.to_string(),
                        string(c, "name", what)?.to_string(),
                        label,
                    ));
                }
            }
            Some(Relayout {
                contract: string(g, "contract", "gguf_digest")?.to_string(),
                label: hex::encode(hex32(string(g, "label", "gguf_digest")?, "gguf_digest's label")?),
                components,
            })
        }
    };
    Ok(Manifest { model_name, serialization, resources, relayout })
}

fn serialization(s: &Json) -> Result<Serialization> {
    let what = "the serialization";
    let hash = string(s, "hash_type", what)?;
    if hash != "sha256" {
        return refuse(format!("hash_type {hash:?}; only sha256 is supported"));
    }
    let allow_symlinks = match member(s, "allow_symlinks", what)? {
        Json::Bool(b) => *b,
        _ => return refuse("allow_symlinks is not true or false"),
    };
    let method = match string(s, "method", what)? {
        "files" => Method::Files,
        "shards" => Method::Shards(shard_size(member(s, "shard_size", what)?)?),
        other => return refuse(format!("serialization method {other:?}; files and shards are known")),
    };
    let mut ignore_paths = Vec::new();
    if let Some(list) = s.get("ignore_paths") {
        let Some(list) = list.as_array() else { return refuse("ignore_paths is not an array") };
        for p in list {
            let Some(p) = p.as_str() else { return refuse("an ignore path is not a string") };
            ignore_paths.push(p.to_string());
        }
    }
    Ok(Serialization { method, allow_symlinks, ignore_paths })
}

/// A shard size: a positive integer, written `16777216` or (as model_signing
/// writes it) `16777216.0`.
fn shard_size(v: &Json) -> Result<u64> {
    let n = match v {
        Json::Uint(n) => Some(*n),
        Json::Number(f, _) if f.fract() == 0.0 && *f >= 1.0 && *f <= MAX_SHARD as f64 => Some(*f as u64),
        _ => None,
    };
    match n {
        Some(n) if n > 0 && n <= MAX_SHARD => Ok(n),
        _ => refuse("shard_size is not a positive whole number"),
    }
}

fn resource(name: &str, method: Method, digest: [u8; 32]) -> Result<Resource> {
    let (path, range) = match method {
        Method::Files => (name, None),
        Method::Shards(size) => {
            let mut parts = name.split(':');
            let (Some(path), Some(start), Some(end), None) = (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return refuse(format!("resource {name:?} is not path:start:end"));
            };
            let number = |t: &str| t.parse::<u64>().ok().filter(|_| t.bytes().all(|b| b.is_ascii_digit()));
            let (Some(start), Some(end)) = (number(start), number(end)) else {
                return refuse(format!("resource {name:?}: start and end are not whole numbers"));
            };
            if end <= start || end.saturating_sub(start) > size || start.checked_rem(size) != Some(0) {
                return refuse(format!("resource {name:?} is not a shard of size {size}"));
            }
            (path, Some((start, end)))
        }
    };
    if let Some(why) = unsafe_name(path) {
        return refuse(format!("resource {name:?} is refused: {why}; nothing was opened"));
    }
    Ok(Resource { path: path.to_string(), range, digest })
}

/// Why a resource path may not be looked for beneath the model: `None`
/// when it is a plain relative path of normal components.
pub fn unsafe_name(path: &str) -> Option<&'static str> {
    let p = Path::new(path);
    if path.is_empty() || path.contains('\0') {
        Some("not a file name")
    } else if p.is_absolute() {
        Some("an absolute path")
    } else if p.components().any(|c| c == Component::ParentDir) {
        Some("it holds '..'")
    } else if p.components().any(|c| !matches!(c, Component::Normal(_))) || path.ends_with('/') || path.contains("//") {
        Some("not a plain relative path")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn statement(serialization: &str, resources: &[(&str, [u8; 32])]) -> String {
        let mut h = Sha256::new();
        let list: Vec<String> = resources
            .iter()
            .map(|(n, d)| {
                h.update(d);
                format!(r#"{{"name":"{n}","algorithm":"sha256","digest":"{}"}}"#, hex::encode(d))
            })
            .collect();
        format!(
            r#"{{"_type":"{STATEMENT_TYPE}","subject":[{{"name":"m","digest":{{"sha256":"{}"}}}}],"predicateType":"{PREDICATE_TYPE}","predicate":{{"serialization":{serialization},"resources":[{}]}}}}"#,
            hex::encode(h.finalize()),
            list.join(",")
        )
    }

    const FILES: &str =
        r#"{"method":"files","hash_type":"sha256","allow_symlinks":false,"ignore_paths":["model.sig"]}"#;
    const SHARDS: &str = r#"{"method":"shards","hash_type":"sha256","shard_size":4.0,"allow_symlinks":false}"#;

    #[test]
    fn reads_files_and_shards() {
        let m = read(statement(FILES, &[("a/b", [1; 32]), ("c", [2; 32])]).as_bytes()).unwrap();
        assert_eq!(m.serialization.method, Method::Files);
        assert_eq!(m.serialization.ignore_paths, ["model.sig"]);
        assert_eq!(m.resources.len(), 2);
        let m = read(statement(SHARDS, &[("w:0:4", [1; 32]), ("w:4:6", [2; 32])]).as_bytes()).unwrap();
        assert_eq!(m.serialization.method, Method::Shards(4));
        assert_eq!(m.resources[1].range, Some((4, 6)));
        assert!(is_model_signing(statement(FILES, &[]).as_bytes()));
    }

    #[test]
    fn refuses_what_could_leave_the_model_or_is_ambiguous() {
        for bad in ["/etc/passwd", "../x", "a/../../x", "", "a//b", "./a"] {
            let e = read(statement(FILES, &[(bad, [1; 32])]).as_bytes()).unwrap_err().to_string();
            assert!(e.contains("refused"), "{bad:?}: {e}");
        }
        let twice = statement(FILES, &[("a", [1; 32]), ("a", [2; 32])]);
        assert!(read(twice.as_bytes()).unwrap_err().to_string().contains("listed twice"));
        for bad in ["w:0", "w:0:4:5", "w:4:2", "w:1:5", "w:0:9", "w:x:4", "w:+0:4"] {
            assert!(read(statement(SHARDS, &[(bad, [1; 32])]).as_bytes()).is_err(), "{bad}");
        }
        let dup = statement(FILES, &[]).replacen(r#""_type""#, r#""_type":"x","_type""#, 1);
        assert!(read(dup.as_bytes()).is_err());
        let two = statement(FILES, &[]).replace(r#""subject":[{"#, r#""subject":[{"name":"n","digest":{}},{"#);
        assert!(read(two.as_bytes()).unwrap_err().to_string().contains("2 subjects"));
        let wrong_root = statement(FILES, &[("a", [1; 32])]).replace(&hex::encode([1u8; 32]), &hex::encode([3u8; 32]));
        assert!(read(wrong_root.as_bytes()).unwrap_err().to_string().contains("not the digest"));
        let blake = statement(&FILES.replace("\"sha256\"", "\"blake2b\""), &[]);
        assert!(read(blake.as_bytes()).unwrap_err().to_string().contains("only sha256"));
        for size in ["0.0", "-4", "4.5", "\"4\"", "1e300"] {
            let s = statement(&SHARDS.replace("4.0", size), &[]);
            assert!(read(s.as_bytes()).unwrap_err().to_string().contains("shard_size"), "{size}");
        }
        let other = statement(FILES, &[]).replace(PREDICATE_TYPE, "https://x/y");
        assert!(read(other.as_bytes()).unwrap_err().to_string().contains("predicate type"));
    }
}
