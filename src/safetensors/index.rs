//! `*.safetensors.index.json`: which file holds each tensor, and the
//! metadata that applies to all of them. Read with the same strict JSON
//! rules and size limit as a header.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::json::parse_strict;
use crate::safetensors::header::{MAX_DEPTH, MAX_HEADER};
use crate::safetensors::names::plain_name_in;
use crate::source::{ReadMode, Source};

/// What an index says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// The distinct file names of `weight_map`, sorted, each checked to be a
    /// plain name in the index's directory.
    pub files: Vec<String>,
    /// Tensor name → file name.
    pub weight_map: BTreeMap<String, String>,
    /// `metadata` without `total_size`.
    pub metadata: BTreeMap<String, String>,
    /// `metadata.total_size`, if present.
    pub total_size: Option<u64>,
}

/// Reads and checks an index file. Nothing else is opened: every file name
/// is checked to be plain before the caller opens anything.
pub fn read_index(path: &Path, mode: ReadMode) -> Result<Index> {
    read_index_from(&Source::open(path, mode)?)
}

/// Reads and checks an index file already open (its files are then opened
/// beside it: [`Source::beside`]).
pub(crate) fn read_index_from(source: &Source) -> Result<Index> {
    let path = source.path();
    let located = |e: Error| e.in_file(path);
    if source.len() > MAX_HEADER {
        let kind = ErrorKind::HeaderTooLarge { declared: source.len(), limit: MAX_HEADER };
        return Err(located(Error::new(kind).at(0)));
    }
    let text = source.head(source.len())?;
    parse_index(&text, path.parent().unwrap_or(Path::new(""))).map_err(located)
}

/// Parses index text; `dir` is where its files are.
pub fn parse_index(text: &[u8], dir: &Path) -> Result<Index> {
    let json = parse_strict(text, MAX_DEPTH)?;
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
    for (tensor, file) in entries {
        let about = |e: Error| e.about(Subject::Tensor(tensor.as_bytes().to_vec()));
        let Some(file) = file.as_str() else {
            return Err(about(Error::schema(format!(
                "a weight_map value must be a file name, found a JSON {}",
                file.kind()
            ))));
        };
        plain_name_in(dir, file).map_err(about)?;
        weight_map.insert(tensor.clone(), file.to_string());
    }
    let mut files: Vec<String> = weight_map.values().cloned().collect();
    files.sort_unstable();
    files.dedup();
    let (mut metadata, mut total_size) = (BTreeMap::new(), None);
    if let Some(m) = json.get("metadata") {
        let Some(members) = m.as_object() else {
            return Err(Error::schema(format!("metadata is a JSON {}, not an object", m.kind())));
        };
        for (k, v) in members {
            let about = |e: Error| e.about(Subject::Key(k.as_bytes().to_vec()));
            if k == "total_size" {
                let n = v.as_u64().ok_or_else(|| {
                    about(Error::schema(format!(
                        "total_size must be a non-negative integer, found a JSON {}",
                        v.kind()
                    )))
                })?;
                total_size = Some(n);
            } else {
                let Some(s) = v.as_str() else {
                    return Err(about(Error::schema(format!(
                        "metadata values must be strings, found a JSON {}",
                        v.kind()
                    ))));
                };
                metadata.insert(k.clone(), s.to_string());
            }
        }
    }
    Ok(Index { files, weight_map, metadata, total_size })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> String {
        format!("{:?}", parse_index(text.as_bytes(), Path::new("d")).unwrap_err().kind())
    }

    #[test]
    fn reads_weight_map_and_metadata() {
        let i = parse_index(
            br#"{"metadata": {"total_size": 12, "a": "b"}, "weight_map": {"x": "m-2.st", "y": "m-1.st", "z": "m-2.st"}, "other": [1.5]}"#,
            Path::new("d"),
        )
        .unwrap();
        assert_eq!(i.files, ["m-1.st", "m-2.st"]);
        assert_eq!(i.total_size, Some(12));
        assert_eq!(i.metadata.get("a").map(String::as_str), Some("b"));
        assert!(!i.metadata.contains_key("total_size"));
    }

    #[test]
    fn refuses_what_the_contract_refuses() {
        assert!(kind("[]").contains("Schema"));
        assert!(kind("{}").contains("Schema"));
        assert!(kind(r#"{"weight_map": []}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {"x": 1}}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {"x": "../y"}}"#).contains("NotPlainName"));
        assert!(kind(r#"{"weight_map": {"x": "/etc/passwd"}}"#).contains("NotPlainName"));
        assert!(kind(r#"{"weight_map": {}, "metadata": {"total_size": -1}}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {}, "metadata": {"total_size": "1"}}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {}, "metadata": {"a": 1}}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {}, "metadata": []}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {}, "weight_map": {}}"#).contains("Json"));
    }
}
