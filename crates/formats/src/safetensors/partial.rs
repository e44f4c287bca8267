//! What `inspect` shows of a safetensors file it could not label (its data
//! cut off, or its header malformed): the declared header length and, when
//! the header itself is whole and well formed, its metadata and tensors,
//! with no label. The error follows it.

use std::fmt::{self, Write as _};
use std::path::PathBuf;

use crate::render::{Shown, count, dims_text, path_text, table};
use crate::safetensors::header::{MAX_HEADER, SafetensorsFile, parse_prefix};
use crate::source::Step;
use crate::source::{Source, UNKNOWN_LEN};
use crate::text::escape_bytes;

/// What could be read of a safetensors file.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The declared header length.
    pub header_len: u64,
    /// The header, when it is whole and well formed.
    pub header: Option<SafetensorsFile>,
    /// Bytes of a string shown before it is elided.
    width: usize,
    /// Tensors listed.
    limit: Option<usize>,
}

/// Reads what it can of the safetensors file `source` (strings shown up to
/// `width` bytes, at most `limit` tensors listed). The header is read
/// as a stream's is, its length not yet known, so that tensors reaching
/// past the file's end do not stop it. `None` when not even the header's
/// length can be read, or it is past the limit.
pub fn partial(source: &Source, width: usize, limit: Option<usize>) -> Option<Partial> {
    let first = source.head(8).ok()?;
    let header_len = u64::from_le_bytes(first.get(..8)?.try_into().ok()?);
    if header_len > MAX_HEADER {
        return None;
    }
    let bytes = source.head(header_len.saturating_add(8)).ok()?;
    let header = match parse_prefix(&bytes, UNKNOWN_LEN) {
        Ok((file, _)) => Some(file),
        Err(Step::Fail(_) | Step::NeedMore(_)) => None,
    };
    Some(Partial { path: source.path().to_path_buf(), size: source.len(), header_len, header, width, limit })
}

impl Partial {
    /// The text shown before the error: as `inspect` shows a file, with no
    /// label.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        let header = match &self.header {
            Some(_) => count(self.header_len, "byte", "bytes"),
            None => format!("{} declared; could not be read whole", count(self.header_len, "byte", "bytes")),
        };
        let mut rows = vec![
            ("file", path_text(&self.path)),
            ("size", count(self.size, "byte", "bytes")),
            ("format", "safetensors".to_string()),
            ("header", header),
        ];
        if let Some(h) = &self.header {
            let bytes: u64 = h.tensors.iter().fold(0, |t, e| t.saturating_add(e.nbytes));
            rows.push(("tensors", format!("{} ({} of data)", h.tensors.len(), count(bytes, "byte", "bytes"))));
        }
        rows.push(("label", "none: the file could not be labelled (the error follows)".to_string()));
        for (k, v) in rows {
            writeln!(out, "{k:<12}{v}")?;
        }
        let Some(h) = &self.header else { return Ok(()) };
        if !h.metadata.is_empty() {
            writeln!(out, "\nMetadata ({}):", count(h.metadata.len() as u64, "key", "keys"))?;
            let rows: Vec<Vec<String>> = h
                .metadata
                .iter()
                .map(|(k, v)| vec![escape_bytes(k.as_bytes()), Shown::text(v, self.width).to_string()])
                .collect();
            table(out, &["key", "value"], &[false, false], &rows)?;
        }
        writeln!(out, "\nTensors ({}, in header order):", h.tensors.len())?;
        let rows: Vec<Vec<String>> = h
            .tensors
            .iter()
            .take(self.limit.unwrap_or(usize::MAX))
            .map(|t| {
                vec![
                    escape_bytes(t.name.as_bytes()),
                    t.dtype.name.to_string(),
                    dims_text(&t.shape),
                    t.nbytes.to_string(),
                    format!("[{}, {}]", t.begin, t.end),
                ]
            })
            .collect();
        if !rows.is_empty() {
            table(
                out,
                &["name", "dtype", "shape", "bytes", "data_offsets"],
                &[false, false, false, true, false],
                &rows,
            )?;
        }
        let more = h.tensors.len().saturating_sub(rows.len());
        if more > 0 {
            writeln!(out, "  … {more} more (--limit)")?;
        }
        Ok(())
    }
}
