//! `*.safetensors.index.json`: which file holds each tensor, and the
//! metadata that applies to all of them. Read with the same strict JSON
//! rules and size limit as a header.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result, Subject};
use crate::json::{Json, parse_strict};
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
    /// `metadata` without its derived members (`total_size`,
    /// `total_parameters`).
    pub metadata: BTreeMap<String, String>,
    /// `metadata.total_size`, if present (derived: never in the label).
    pub total_size: Option<Declared>,
    /// `metadata.total_parameters`, if present (derived: never in the label).
    pub total_parameters: Option<Declared>,
}

/// The members of an index's `metadata` derived from the tensors, which
/// may hold any JSON value and never enter the label (safetensors contract
/// §5, revision 2): `transformers` writes both as integers.
pub const DERIVED: [&str; 2] = ["total_size", "total_parameters"];

/// What an index says of a derived quantity (`total_size`,
/// `total_parameters`): only ever compared, never labelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// A non-negative integer written without fraction or exponent.
    Integer(u64),
    /// Any other JSON value, by its kind (`string`, `null`, a fraction …).
    Other(&'static str),
}

impl Declared {
    fn of(v: &Json) -> Declared {
        v.as_u64().map_or(Declared::Other(v.kind()), Declared::Integer)
    }

    /// The integer, when it is one.
    pub fn integer(&self) -> Option<u64> {
        match self {
            Declared::Integer(n) => Some(*n),
            Declared::Other(_) => None,
        }
    }
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
    let (mut metadata, mut total_size, mut total_parameters) = (BTreeMap::new(), None, None);
    // `null` is no metadata (contract §5, revision 2).
    if let Some(m) = json.get("metadata").filter(|m| !matches!(m, Json::Null)) {
        let Some(members) = m.as_object() else {
            return Err(Error::schema(format!("metadata is a JSON {}, not an object", m.kind())));
        };
        for (k, v) in members {
            let about = |e: Error| e.about(Subject::Key(k.as_bytes().to_vec()));
            match k.as_str() {
                "total_size" => total_size = Some(Declared::of(v)),
                "total_parameters" => total_parameters = Some(Declared::of(v)),
                _ => {
                    let Some(s) = v.as_str() else {
                        return Err(about(Error::schema(format!(
                            "metadata values must be strings, found a JSON {} (only {} may hold any value)",
                            v.kind(),
                            DERIVED.join(" and ")
                        ))));
                    };
                    metadata.insert(k.clone(), s.to_string());
                }
            }
        }
    }
    Ok(Index { files, weight_map, metadata, total_size, total_parameters })
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
        assert_eq!(i.total_size, Some(Declared::Integer(12)));
        assert_eq!(i.total_parameters, None);
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
        assert!(kind(r#"{"weight_map": {}, "metadata": {"a": 1}}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {}, "metadata": []}"#).contains("Schema"));
        assert!(kind(r#"{"weight_map": {}, "weight_map": {}}"#).contains("Json"));
    }

    /// What `transformers` writes since mid-2025, and any value in the
    /// derived members: read, never refused (contract §5, revision 2).
    #[test]
    fn derived_members_hold_any_value_and_metadata_may_be_null() {
        let text = br#"{"metadata": {"total_parameters": 4022468096, "total_size": 8044936192, "a": "b"},
                        "weight_map": {"x": "m.st"}}"#;
        let i = parse_index(text, Path::new("d")).unwrap();
        assert_eq!(i.total_parameters, Some(Declared::Integer(4_022_468_096)));
        assert_eq!(i.total_size, Some(Declared::Integer(8_044_936_192)));
        assert_eq!(i.metadata.keys().collect::<Vec<_>>(), ["a"]);
        for (v, kind) in [("-1", "number"), ("\"12\"", "string"), ("1.5", "number"), ("null", "null"), ("[1]", "array")]
        {
            let text = format!(r#"{{"metadata": {{"total_size": {v}, "total_parameters": {v}}}, "weight_map": {{}}}}"#);
            let i = parse_index(text.as_bytes(), Path::new("d")).unwrap();
            assert!(matches!(i.total_size, Some(Declared::Other(k)) if k.contains(kind)), "{v}: {:?}", i.total_size);
            assert_eq!(i.total_size, i.total_parameters);
            assert!(i.metadata.is_empty());
        }
        let i = parse_index(br#"{"metadata": null, "weight_map": {}}"#, Path::new("d")).unwrap();
        assert!(i.metadata.is_empty() && i.total_size.is_none());
    }
}
