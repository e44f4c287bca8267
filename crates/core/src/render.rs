//! Showing leaves to a person: values cut to a width, names escaped, dims,
//! paths and column-aligned tables. Shared by every format's `inspect` and
//! `diff` sections, so both commands show a leaf the same way; knows no
//! format.

use std::fmt::{self, Write as _};
use std::path::Path;

use serde_json::{Map, Value as JsonValue, json};

use crate::text::escape_bytes;

// How much `inspect` and `diff` show: below every format's section, so a
// section imports them without importing the command that calls it.

/// How much of a model `inspect` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InspectOptions {
    /// Bytes of a string shown before it is elided (its length is shown).
    pub width: usize,
    /// Array elements shown per KV, nested elements included.
    pub items: usize,
    /// Tensors listed, in file order; `None` lists all of them.
    pub limit: Option<usize>,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions { width: 64, items: 8, limit: None }
    }
}

/// How much of a changed value `diff` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffOptions {
    /// Strings up to this many bytes are shown; longer ones by length and digest only.
    pub width: usize,
    /// Array elements shown for an added or removed array KV.
    pub items: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions { width: 64, items: 8 }
    }
}

/// A value prepared for showing: numbers as they are, strings and arrays cut
/// to what is shown, with their full length or count kept beside.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// UINT8, UINT16, UINT32 or UINT64.
    Uint(u64),
    /// INT8, INT16, INT32 or INT64.
    Int(i64),
    /// FLOAT32, bit for bit.
    F32(f32),
    /// FLOAT64, bit for bit.
    F64(f64),
    /// BOOL.
    Bool(bool),
    /// A string: its first bytes (never a partial UTF-8 character when the
    /// cut falls inside one) and its whole length.
    Str {
        /// The bytes shown.
        prefix: Vec<u8>,
        /// The string's length in bytes.
        len: u64,
    },
    /// An array: element type, count and the first elements.
    Array {
        /// The element type.
        elem_type: &'static str,
        /// Number of elements in the file.
        count: u64,
        /// The elements shown (a prefix of all of them).
        elements: Vec<Shown>,
    },
}

impl Shown {
    /// A string cut to `width` bytes (never inside a UTF-8 character).
    pub fn text(v: &str, width: usize) -> Shown {
        let bytes = v.as_bytes();
        let mut cut = width.min(bytes.len());
        while !v.is_char_boundary(cut) {
            cut = cut.saturating_sub(1);
        }
        Shown::Str { prefix: bytes.get(..cut).unwrap_or_default().to_vec(), len: bytes.len() as u64 }
    }

    /// The JSON form: numbers and bools as JSON values (non-finite floats as
    /// the strings `NaN`, `inf`, `-inf`); a string as a JSON string when it is
    /// whole and valid UTF-8, else as `{text, len, hex?}`; an array as
    /// `{elem_type, count, elements}`.
    pub fn to_json(&self) -> JsonValue {
        match self {
            Shown::Uint(v) => json!(v),
            Shown::Int(v) => json!(v),
            Shown::F32(v) => float_json(&format!("{v:?}"), v.is_finite()),
            Shown::F64(v) => float_json(&format!("{v:?}"), v.is_finite()),
            Shown::Bool(v) => json!(v),
            Shown::Str { prefix, len } => match std::str::from_utf8(prefix) {
                Ok(s) if prefix.len() as u64 == *len => json!(s),
                _ => {
                    let mut o = Map::new();
                    crate::output::put_name(&mut o, "text", prefix);
                    o.insert("len".into(), json!(len));
                    JsonValue::Object(o)
                }
            },
            Shown::Array { elem_type, count, elements } => json!({
                "elem_type": elem_type,
                "count": count,
                "elements": elements.iter().map(Shown::to_json).collect::<Vec<_>>(),
            }),
        }
    }
}

/// A float as its shortest decimal form, which is what `Debug` prints; JSON
/// has no NaN or infinity, so those stay text.
fn float_json(text: &str, finite: bool) -> JsonValue {
    match text.parse::<f64>() {
        Ok(v) if finite => json!(v),
        _ => json!(text),
    }
}

impl fmt::Display for Shown {
    /// Strings in single quotes, escaped with [`escape_bytes`]; a cut string is
    /// followed by `… (N bytes)`; an array is `TYPE[count] [e0, e1, … N more]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Uint(v) => write!(f, "{v}"),
            Shown::Int(v) => write!(f, "{v}"),
            Shown::F32(v) => write!(f, "{v:?}"),
            Shown::F64(v) => write!(f, "{v:?}"),
            Shown::Bool(v) => write!(f, "{v}"),
            Shown::Str { prefix, len } => {
                write!(f, "'{}'", escape_bytes(prefix))?;
                if (prefix.len() as u64) < *len {
                    write!(f, "… ({len} bytes)")?;
                }
                Ok(())
            }
            Shown::Array { elem_type, count, elements } => {
                write!(f, "{elem_type}[{count}] [")?;
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                let more = count.saturating_sub(elements.len() as u64);
                if more > 0 {
                    if !elements.is_empty() {
                        f.write_str(", ")?;
                    }
                    write!(f, "… {more} more")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// A count and its noun in the form that agrees with it: `1 tensor`,
/// `2 tensors`, `0 tensors`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Dims as `[a, b, c]`.
pub fn dims_text(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// A path as text, escaped like any name from a file (a path may hold
/// control bytes too).
pub fn path_text(p: &Path) -> String {
    escape_bytes(p.as_os_str().as_encoded_bytes())
}

/// A digest as printed in text: the first 16 hex digits are plenty to tell two apart.
pub fn short_digest(sha: &[u8; 32]) -> String {
    hex::encode(sha.get(..8).unwrap_or(&[]))
}

/// Padding for columns is capped so that one very long name does not push
/// every other row off the screen.
const MAX_COLUMN: usize = 48;

/// Writes rows as column-aligned text, two spaces between columns, numbers
/// right-aligned where `right` says so; the last column is not padded. A
/// cell longer than its column (capped at `MAX_COLUMN`, 48) is shown whole,
/// and the rest of its row goes on the next line, in its columns, so that
/// every column stays aligned.
pub fn table(out: &mut String, header: &[&str], right: &[bool], rows: &[Vec<String>]) -> fmt::Result {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count().min(MAX_COLUMN));
        }
    }
    // Where each column starts: two spaces of indent, two between columns.
    let starts: Vec<usize> = widths
        .iter()
        .scan(2usize, |at, w| {
            let start = *at;
            *at = at.saturating_add(*w).saturating_add(2);
            Some(start)
        })
        .collect();
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&head).chain(rows) {
        let mut line = String::new();
        let mut len = 0usize;
        for (i, cell) in row.iter().enumerate() {
            let n = cell.chars().count();
            let w = widths.get(i).copied().unwrap_or(0);
            let lead = if right.get(i).copied().unwrap_or(false) { w.saturating_sub(n) } else { 0 };
            let at = starts.get(i).copied().unwrap_or(len).saturating_add(lead);
            // The cell before ran into this one's place: go on below it.
            if i > 0 && len.saturating_add(2) > at {
                writeln!(out, "{}", line.trim_end())?;
                line.clear();
                len = 0;
            }
            line.extend(std::iter::repeat_n(' ', at.saturating_sub(len)));
            line.push_str(cell);
            len = at.max(len).saturating_add(n);
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_text() {
        let s = Shown::Array {
            elem_type: "STRING",
            count: 3,
            elements: vec![
                Shown::Str { prefix: b"a\n".to_vec(), len: 2 },
                Shown::Str { prefix: b"xy".to_vec(), len: 9 },
            ],
        };
        assert_eq!(s.to_string(), "STRING[3] ['a\\n', 'xy'… (9 bytes), … 1 more]");
        assert_eq!(Shown::F32(0.1).to_string(), "0.1");
        assert_eq!(Shown::F32(0.1).to_json(), json!(0.1));
        assert_eq!(Shown::F64(f64::NAN).to_json(), json!("NaN"));
        let e = Shown::Array { elem_type: "UINT8", count: 0, elements: vec![] };
        assert_eq!(e.to_string(), "UINT8[0] []");
    }

    #[test]
    fn tables_align_columns() {
        let mut out = String::new();
        let rows = vec![vec!["a".to_string(), "1".to_string()], vec!["long name".to_string(), "100".to_string()]];
        table(&mut out, &["name", "n"], &[false, true], &rows).unwrap();
        assert_eq!(out, "  name         n\n  a            1\n  long name  100\n");
    }

    #[test]
    fn a_cell_longer_than_its_column_puts_the_rest_of_its_row_below() {
        let long = "x".repeat(MAX_COLUMN + 2);
        let rows = vec![
            vec![long.clone(), "[4]".into(), "7".into(), "end".into()],
            vec!["a".into(), "[4, 4]".into(), "100".into(), "end".into()],
        ];
        let mut out = String::new();
        table(&mut out, &["name", "dims", "n", "last"], &[false, false, true, false], &rows).unwrap();
        let pad = " ".repeat(MAX_COLUMN);
        let want = format!(
            "  name{}  dims      n  last\n  {long}\n  {pad}  [4]       7  end\n  a{}  [4, 4]  100  end\n",
            &pad[4..],
            &pad[1..]
        );
        assert_eq!(out, want);
        // Every column starts where its heading does.
        let heading = out.lines().next().unwrap();
        for line in out.lines().filter(|l| l.contains("end")) {
            assert_eq!(line.find("end"), heading.find("last"), "{out}");
        }
    }
}
