//! Which members of two JSON files differ: what `diff` says of a changed
//! `config.json` or `tokenizer_config.json` (`chat_template` changed,
//! `pooling_mode_mean_tokens` true → false) instead of "bytes differ". A
//! chat template is code that runs on every prompt: a person deciding
//! whether a change is harmless must see which member it is.

use std::fmt::Write as _;

use crate::json::{Json, parse_strict};
use crate::render::Shown;
use crate::text::escape_bytes;

/// The largest JSON file read to name its members (a tokenizer's vocabulary
/// is a few MB); a larger one is reported as bytes that differ.
pub const MAX_MEMBERS_FILE: usize = 64 << 20;

/// Nesting read to name members, as the safetensors header's limit.
const MAX_DEPTH: usize = 64;

/// At most this many members are named; the rest are counted.
pub const MAX_MEMBERS_SHOWN: usize = 32;

/// How one member differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Only in the second file: its value.
    Added(String),
    /// Only in the first file: its value.
    Removed(String),
    /// In both, with other values: the first's and the second's.
    Changed(String, String),
}

/// One member that differs: its path (`chat_template`,
/// `added_tokens_decoder["151643"].content`, `architectures[0]`; empty for
/// the whole value) and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Where it is, from the top of the document.
    pub path: String,
    /// How it differs.
    pub change: Change,
}

/// The members of two JSON texts that differ, at most
/// [`MAX_MEMBERS_SHOWN`] of them, and how many there are in all; values
/// shown cut to `width` bytes. `None` when either text is not strict JSON
/// (or larger than [`MAX_MEMBERS_FILE`]): then only its bytes can be said
/// to differ. An empty list: the same members and values, written
/// differently (spacing, order of members).
pub fn changed_members(a: &[u8], b: &[u8], width: usize) -> Option<(Vec<Member>, usize)> {
    if a.len() > MAX_MEMBERS_FILE || b.len() > MAX_MEMBERS_FILE {
        return None;
    }
    let (a, b) = (parse_strict(a, MAX_DEPTH).ok()?, parse_strict(b, MAX_DEPTH).ok()?);
    let mut found = Found { shown: Vec::new(), total: 0, width };
    compare(&a, &b, &mut String::new(), &mut found);
    Some((found.shown, found.total))
}

/// The members found so far.
struct Found {
    shown: Vec<Member>,
    total: usize,
    width: usize,
}

impl Found {
    fn push(&mut self, path: &str, change: Change) {
        self.total = self.total.saturating_add(1);
        if self.shown.len() < MAX_MEMBERS_SHOWN {
            self.shown.push(Member { path: path.to_string(), change });
        }
    }
}

/// Walks two values side by side, recording every member that differs.
/// Recursion is bounded by the reader's depth limit.
fn compare(a: &Json, b: &Json, path: &mut String, found: &mut Found) {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            for (key, va) in x {
                let at = path.len();
                push_key(path, key);
                match b.get(key) {
                    Some(vb) => compare(va, vb, path, found),
                    None => found.push(path, Change::Removed(shown(va, found.width))),
                }
                path.truncate(at);
            }
            for (key, vb) in y.iter().filter(|(k, _)| a.get(k).is_none()) {
                let at = path.len();
                push_key(path, key);
                found.push(path, Change::Added(shown(vb, found.width)));
                path.truncate(at);
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            let longest = x.len().max(y.len());
            for i in 0..longest {
                let at = path.len();
                let _ = write!(path, "[{i}]");
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => compare(va, vb, path, found),
                    (Some(va), None) => found.push(path, Change::Removed(shown(va, found.width))),
                    (None, Some(vb)) => found.push(path, Change::Added(shown(vb, found.width))),
                    (None, None) => {}
                }
                path.truncate(at);
            }
        }
        _ if same_value(a, b) => {}
        _ => found.push(path, Change::Changed(shown(a, found.width), shown(b, found.width))),
    }
}

/// Whether two values that are not both objects or both arrays are equal:
/// numbers by their tokens as written (`1.0` and `1` differ in the file, so
/// they are shown as a change).
fn same_value(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(_, x), Json::Number(_, y)) => x == y,
        _ => a == b,
    }
}

/// Appends a member name: bare after a dot when it reads as an identifier,
/// else quoted in brackets (escaped, so a name cannot forge output).
fn push_key(path: &mut String, key: &str) {
    let plain = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        let _ = write!(path, "[\"{}\"]", escape_bytes(key.as_bytes()));
    }
}

/// A value as `diff` shows it: a string quoted and cut to `width` bytes,
/// numbers as written, containers by their size.
fn shown(v: &Json, width: usize) -> String {
    match v {
        Json::Null => "null".into(),
        Json::Bool(b) => b.to_string(),
        Json::Uint(u) => u.to_string(),
        Json::Number(_, token) => token.clone(),
        Json::Str(s) => Shown::text(s, width).to_string(),
        Json::Array(a) => format!("[{}]", crate::render::count(a.len() as u64, "element", "elements")),
        Json::Object(o) => format!("{{{}}}", crate::render::count(o.len() as u64, "member", "members")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changes(a: &str, b: &str) -> Vec<(String, Change)> {
        let (list, _) = changed_members(a.as_bytes(), b.as_bytes(), 16).expect("JSON");
        list.into_iter().map(|m| (m.path, m.change)).collect()
    }

    #[test]
    fn names_the_member_that_changed() {
        let a = r#"{"pooling_mode_mean_tokens": true, "word_embedding_dimension": 384}"#;
        let b = r#"{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": false}"#;
        assert_eq!(
            changes(a, b),
            [("pooling_mode_mean_tokens".into(), Change::Changed("true".into(), "false".into()))]
        );
    }

    #[test]
    fn added_removed_nested_and_array_members() {
        let a = r#"{"a": {"b": [1, 2, 3]}, "gone": "x", "added_tokens_decoder": {"151643": {"content": "<a>"}}}"#;
        let b = r#"{"a": {"b": [1, 5]}, "chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}",
                   "added_tokens_decoder": {"151643": {"content": "<b>"}}}"#;
        assert_eq!(
            changes(a, b),
            [
                ("a.b[1]".into(), Change::Changed("2".into(), "5".into())),
                ("a.b[2]".into(), Change::Removed("3".into())),
                ("gone".into(), Change::Removed("'x'".into())),
                ("added_tokens_decoder[\"151643\"].content".into(), Change::Changed("'<a>'".into(), "'<b>'".into())),
                ("chat_template".into(), Change::Added("'{% for m in mess'… (50 bytes)".into())),
            ]
        );
    }

    #[test]
    fn formatting_alone_is_no_member_change_but_a_number_token_is() {
        assert_eq!(changes(r#"{"a":1,"b":[true]}"#, "{ \"b\" : [ true ] ,\n \"a\" : 1 }"), []);
        assert_eq!(
            changes(r#"{"x": 1.0}"#, r#"{"x": 1.00}"#),
            [("x".into(), Change::Changed("1.0".into(), "1.00".into()))]
        );
        assert_eq!(changes(r#"{"x": 1}"#, r#"{"x": "1"}"#), [("x".into(), Change::Changed("1".into(), "'1'".into()))]);
        assert_eq!(
            changes("[1]", r#"{"1": 1}"#),
            [("".into(), Change::Changed("[1 element]".into(), "{1 member}".into()))]
        );
    }

    #[test]
    fn not_json_or_too_many_changes() {
        assert!(changed_members(b"{", b"{}", 8).is_none());
        assert!(changed_members(br#"{"a":1,"a":2}"#, b"{}", 8).is_none(), "a repeated key has no one value");
        let a: String = format!("[{}]", vec!["0"; 100].join(","));
        let b: String = format!("[{}]", vec!["1"; 100].join(","));
        let (shown, total) = changed_members(a.as_bytes(), b.as_bytes(), 8).expect("JSON");
        assert_eq!((shown.len(), total), (MAX_MEMBERS_SHOWN, 100));
    }

    #[test]
    fn names_that_could_forge_output_are_escaped() {
        let got = changes("{\"a\\u001b[2Jb\": 1}", "{}");
        assert_eq!(got, [("[\"a\\u{1b}[2Jb\"]".into(), Change::Removed("1".into()))]);
    }
}
