//! Checkpoints of several files (docs/SPEC.md P8): `P-NNNNN-of-MMMMM.bin`
//! shard names and `P.bin.index.json`, read as the safetensors contract
//! reads its index and shard sets (plain names only, every key listed with
//! the file that holds it, `total_size` and `total_parameters` derived and
//! never content, any other `metadata` member refused).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use crate::error::{Error, Result, Subject};
use crate::json::{Json, parse_strict};
use crate::pytorch::PytorchErrorKind;

/// What an index file's name ends in.
pub const INDEX_SUFFIX: &str = ".bin.index.json";

/// The largest index read (the safetensors contract's limit on a header
/// and an index).
pub const MAX_INDEX: u64 = 100_000_000;

/// How deep an index's JSON may nest.
const MAX_INDEX_DEPTH: usize = 64;

/// A file named `<prefix>-NNNNN-of-MMMMM.bin`, `1 <= NNNNN <= MMMMM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardName {
    /// The name up to `-NNNNN` (may be empty).
    pub prefix: String,
    /// `NNNNN`, 1-based.
    pub no: u64,
    /// `MMMMM`.
    pub count: u64,
}

impl ShardName {
    /// The shard name a file name is, if it is one.
    pub fn parse(name: &OsStr) -> Option<ShardName> {
        let name = name.to_str()?;
        let (prefix, no, count) = crate::format::shard_name_parts(name.as_bytes(), ".bin")?;
        if no == 0 || no > count {
            return None;
        }
        Some(ShardName { prefix: std::str::from_utf8(prefix).ok()?.to_string(), no, count })
    }

    /// The file name of shard `no` of the same set.
    pub fn sibling(&self, no: u64) -> OsString {
        format!("{}-{no:05}-of-{:05}.bin", self.prefix, self.count).into()
    }

    /// `<prefix>.bin.index.json`, beside the shards.
    pub fn index_name(&self) -> OsString {
        format!("{}{INDEX_SUFFIX}", self.prefix).into()
    }
}

/// Whether a file name is an index's.
pub fn is_index_name(name: &OsStr) -> bool {
    name.as_encoded_bytes().ends_with(INDEX_SUFFIX.as_bytes())
}

/// What an index says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// The distinct file names of `weight_map`, sorted, each a plain name.
    pub files: Vec<String>,
    /// Key → file name.
    pub weight_map: BTreeMap<String, String>,
    /// `metadata.total_size`, when it is a non-negative integer (derived:
    /// never content, only shown).
    pub total_size: Option<u64>,
}

/// Parses an index's text (strict JSON: no repeated key, depth 64).
pub fn parse_index(text: &[u8]) -> Result<Index> {
    let json = parse_strict(text, MAX_INDEX_DEPTH)?;
    if json.as_object().is_none() {
        return Err(Error::schema(format!("the index is a JSON {}, not an object", json.kind())).at(0));
    }
    let Some(map) = json.get("weight_map") else {
        return Err(Error::schema("the index has no weight_map"));
    };
    let Some(entries) = map.as_object() else {
        return Err(Error::schema(format!("weight_map is a JSON {}, not an object", map.kind())));
    };
    let mut weight_map = BTreeMap::new();
    for (key, file) in entries {
        let about = |e: Error| e.about(Subject::Key(key.as_bytes().to_vec()));
        let Some(file) = file.as_str() else {
            return Err(about(Error::schema(format!(
                "a weight_map value must be a file name, found a JSON {}",
                file.kind()
            ))));
        };
        if let Some(why) = crate::format::not_plain_name(file) {
            return Err(about(Error::schema(format!(
                "weight_map names the file '{}', which {why}: an index names files beside it only",
                crate::text::escape_bytes(file.as_bytes())
            ))));
        }
        weight_map.insert(key.clone(), file.to_string());
    }
    let mut files: Vec<String> = weight_map.values().cloned().collect();
    files.sort_unstable();
    files.dedup();
    let mut total_size = None;
    // `null` is no metadata, as for a safetensors index.
    if let Some(m) = json.get("metadata").filter(|m| !matches!(m, Json::Null)) {
        let Some(members) = m.as_object() else {
            return Err(Error::schema(format!("metadata is a JSON {}, not an object", m.kind())));
        };
        for (k, v) in members {
            match k.as_str() {
                "total_size" => total_size = v.as_u64(),
                "total_parameters" => {}
                _ => {
                    return Err(Error::schema(format!(
                        "metadata member '{}': a PyTorch index's metadata holds only total_size and total_parameters \
                         (derived, not content) in pytorch-skeleton-v1",
                        crate::text::escape_bytes(k.as_bytes())
                    ))
                    .about(Subject::Key(k.as_bytes().to_vec())));
                }
            }
        }
    }
    Ok(Index { files, weight_map, total_size })
}

/// The error of an index and its files disagreeing.
pub fn mismatch(what: String, key: &[u8]) -> Error {
    Error::new(PytorchErrorKind::Checkpoint(what)).about(Subject::Key(key.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names() {
        let s = ShardName::parse(OsStr::new("pytorch_model-00002-of-00003.bin")).unwrap();
        assert_eq!((s.no, s.count, s.prefix.as_str()), (2, 3, "pytorch_model"));
        assert_eq!(s.sibling(1), "pytorch_model-00001-of-00003.bin");
        assert_eq!(s.index_name(), "pytorch_model.bin.index.json");
        assert_eq!(ShardName::parse(OsStr::new("x-00001-of-00001.bin")).map(|s| s.count), Some(1));
        assert_eq!(ShardName::parse(OsStr::new("-00001-of-00002.bin")).unwrap().index_name(), ".bin.index.json");
        for bad in [
            "pytorch_model.bin",
            "m-00000-of-00003.bin",
            "m-00004-of-00003.bin",
            "m-0001-of-00003.bin",
            "m-00001_of-00003.bin",
            "m-00001-of-00003.pt",
            "m-0000a-of-00003.bin",
            "00001-of-00003.bin",
        ] {
            assert!(ShardName::parse(OsStr::new(bad)).is_none(), "{bad}");
        }
    }

    #[test]
    fn indexes() {
        let i = parse_index(br#"{"metadata":{"total_size":8,"total_parameters":"x"},"weight_map":{"a":"f.bin","b":"e.bin","c":"f.bin"}}"#)
            .unwrap();
        assert_eq!(i.files, ["e.bin", "f.bin"]);
        assert_eq!(i.total_size, Some(8));
        assert!(parse_index(br#"{"metadata":null,"weight_map":{}}"#).is_ok());
        for bad in [
            &br#"[]"#[..],
            br#"{}"#,
            br#"{"weight_map":[]}"#,
            br#"{"weight_map":{"a":1}}"#,
            br#"{"weight_map":{"a":"../f.bin"}}"#,
            br#"{"weight_map":{"a":".."}}"#,
            br#"{"weight_map":{"a":""}}"#,
            br#"{"weight_map":{"a":"f.bin","a":"f.bin"}}"#,
            br#"{"weight_map":{},"metadata":{"format":"pt"}}"#,
            br#"{"weight_map":{},"metadata":[]}"#,
        ] {
            assert!(parse_index(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
