//! The hand-written writer the product used before docs/adr/0045 (from
//! crates/core/src/output.rs at 2325519), kept here only to be measured
//! against its replacement.
#![allow(dead_code)]

use std::io::{self, Write};

use serde_json::Value as JsonValue;

/// Writes JSON a value at a time, byte for byte as serde_json prints the
/// same tree (pretty: two-space indent, `": "`; compact: no blanks), so that
/// a document of a million tensors is never held whole: each entry goes to
/// the output as it is made (its records from the model itself).
///
/// Callers pair every `begin_*` with its `end_*` and put a `key` before
/// each value in an object; the writer keeps only the nesting depth.
pub struct HandWriter<'w> {
    out: &'w mut dyn Write,
    pretty: bool,
    depth: usize,
    /// The container being written has a value already (a comma is due).
    has_value: bool,
    /// A key was written; its value follows without a separator.
    after_key: bool,
}

impl<'w> HandWriter<'w> {
    /// A writer of `serde_json::to_writer_pretty`'s format.
    pub fn pretty(out: &'w mut dyn Write) -> Self {
        HandWriter { out, pretty: true, depth: 0, has_value: false, after_key: false }
    }

    /// A writer of `serde_json::to_writer`'s (compact) format.
    pub fn compact(out: &'w mut dyn Write) -> Self {
        HandWriter { out, pretty: false, depth: 0, has_value: false, after_key: false }
    }

    /// The comma (after the first member) and, pretty, the new line and indent.
    fn separator(&mut self) -> io::Result<()> {
        if self.has_value {
            self.out.write_all(b",")?;
        }
        if self.pretty {
            self.newline()?;
        }
        Ok(())
    }

    fn newline(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n")?;
        for _ in 0..self.depth {
            self.out.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Before a value: nothing after a key or at the top; in an array, the separator.
    fn before_value(&mut self) -> io::Result<()> {
        if self.after_key {
            self.after_key = false;
            Ok(())
        } else if self.depth > 0 {
            self.separator()
        } else {
            Ok(())
        }
    }

    fn begin(&mut self, open: &[u8]) -> io::Result<()> {
        self.before_value()?;
        self.out.write_all(open)?;
        self.depth = self.depth.saturating_add(1);
        self.has_value = false;
        Ok(())
    }

    fn end(&mut self, close: &[u8]) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.has_value && self.pretty {
            self.newline()?;
        }
        self.out.write_all(close)?;
        self.has_value = true;
        Ok(())
    }

    /// Opens an object (as a value: after a key, in an array, or at the top).
    pub fn begin_object(&mut self) -> io::Result<()> {
        self.begin(b"{")
    }

    /// Closes the innermost object.
    pub fn end_object(&mut self) -> io::Result<()> {
        self.end(b"}")
    }

    /// Opens an array.
    pub fn begin_array(&mut self) -> io::Result<()> {
        self.begin(b"[")
    }

    /// Closes the innermost array.
    pub fn end_array(&mut self) -> io::Result<()> {
        self.end(b"]")
    }

    /// A member's key; its value is written next.
    pub fn key(&mut self, key: &str) -> io::Result<()> {
        self.separator()?;
        serde_json::to_writer(&mut *self.out, key)?;
        self.out.write_all(if self.pretty { b": " } else { b":" })?;
        self.after_key = true;
        Ok(())
    }

    /// A string value.
    pub fn str(&mut self, s: &str) -> io::Result<()> {
        self.before_value()?;
        serde_json::to_writer(&mut *self.out, s)?;
        self.has_value = true;
        Ok(())
    }

    /// A value: a number, bool, `null` (`None`), or a small tree written
    /// as serde_json would nest it here.
    pub fn value(&mut self, v: impl Into<JsonValue>) -> io::Result<()> {
        self.tree(&v.into())
    }

    /// A tree, as serde_json would print it at this depth.
    pub fn tree(&mut self, v: &JsonValue) -> io::Result<()> {
        match v {
            JsonValue::Object(m) => {
                self.begin_object()?;
                for (k, v) in m {
                    self.key(k)?;
                    self.tree(v)?;
                }
                self.end_object()
            }
            JsonValue::Array(a) => {
                self.begin_array()?;
                for v in a {
                    self.tree(v)?;
                }
                self.end_array()
            }
            scalar => {
                self.before_value()?;
                serde_json::to_writer(&mut *self.out, scalar)?;
                self.has_value = true;
                Ok(())
            }
        }
    }

    /// `key: value`.
    pub fn field(&mut self, key: &str, v: impl Into<JsonValue>) -> io::Result<()> {
        self.key(key)?;
        self.value(v)
    }

    /// `key: "string"`.
    pub fn str_field(&mut self, key: &str, s: &str) -> io::Result<()> {
        self.key(key)?;
        self.str(s)
    }

    /// `key: [numbers]`.
    pub fn u64s_field(&mut self, key: &str, values: &[u64]) -> io::Result<()> {
        self.key(key)?;
        self.begin_array()?;
        for &v in values {
            self.value(v)?;
        }
        self.end_array()
    }

    /// A name as [`put_name`] puts it: lossily as text, and when it is not
    /// UTF-8 its exact bytes in hex under `KEY_hex`.
    pub fn name_field(&mut self, key: &str, bytes: &[u8]) -> io::Result<()> {
        self.str_field(key, &String::from_utf8_lossy(bytes))?;
        if std::str::from_utf8(bytes).is_err() {
            self.str_field(&format!("{key}_hex"), &hex::encode(bytes))?;
        }
        Ok(())
    }
}
