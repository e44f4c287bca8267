//! [`Json`]: the value the strict reader returns.

/// A JSON value as the strict reader returns it. Object members keep file order; keys are unique.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A non-negative integer without fraction or exponent that fits a u64
    /// (its token is its decimal digits: JSON allows no other spelling).
    Uint(u64),
    /// Any other number (negative, fractional, exponent, or too large): its
    /// value as parsed, and its token exactly as written (`1e3`, `-0`,
    /// `1.50`), which a canonical encoding of the text needs.
    Number(f64, String),
    /// A string, unescaped.
    Str(String),
    /// An array, elements in file order.
    Array(Vec<Json>),
    /// An object: its members in file order, each key once.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The kind of value, for messages: "null", "boolean", "integer",
    /// "number", "string", "array" or "object".
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Uint(_) => "integer",
            Json::Number(..) => "number",
            Json::Str(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// The members of an object, in file order.
    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value of an integer in 0…2^64−1 written without fraction or
    /// exponent; `None` for every other value, `1.0` and `1e3` included.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Uint(n) => Some(*n),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The member of an object with this key (a linear search: to visit
    /// every member, iterate [`Json::as_object`] instead).
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object()?.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::json::parse_strict;

    fn ok(text: &str) -> Json {
        parse_strict(text.as_bytes(), 64).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn values_and_accessors() {
        let v = ok(r#"{"b":[1,-2.5,"x",true,null,{}],"a":"s\"\\\n\u00e9"}"#);
        let members = v.as_object().unwrap();
        assert_eq!(members.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["b", "a"], "file order");
        let b = v.get("b").unwrap().as_array().unwrap();
        assert_eq!(b[0], Json::Uint(1));
        assert_eq!(b[1], Json::Number(-2.5, "-2.5".into()));
        assert_eq!(b[2].as_str(), Some("x"));
        assert_eq!(b[3], Json::Bool(true));
        assert_eq!(b[4], Json::Null);
        assert_eq!(b[5], Json::Object(vec![]));
        assert_eq!(v.get("a").unwrap().as_str(), Some("s\"\\\né"));
        assert_eq!(v.get("c"), None);
        assert_eq!(b[0].get("a"), None);
        assert_eq!(b[0].as_u64(), Some(1));
        assert_eq!(b[2].as_u64(), None);
        assert_eq!((b[0].as_str(), b[0].as_array(), b[0].as_object()), (None, None, None));
        let kinds: Vec<_> = b.iter().map(Json::kind).collect();
        assert_eq!(kinds, ["integer", "number", "string", "boolean", "null", "object"]);
        assert_eq!(ok("[]").kind(), "array");
    }
}
