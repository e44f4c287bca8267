//! What `inspect` shows of a GGUF file it could not label (cut off, or
//! malformed partway): the header, the KVs and the tensor infos read before
//! the first that could not be, with no label. The error follows it.

use std::fmt::{self, Write as _};
use std::path::PathBuf;

use crate::gguf::arrays::show_value;
use crate::gguf::cursor::ByteOrder;
use crate::gguf::model::Shard;
use crate::gguf::parse::{DEFAULT_ALIGNMENT, GgufFile, parse_partial};
use crate::render::{Shown, count, dims_text, path_text, table};
use crate::source::{MAX_READ_METADATA, Source};
use crate::text::escape_bytes;

/// The first read of a file's metadata; doubled while more is needed.
const FIRST_READ: u64 = 1 << 20;

/// One KV read.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialKv {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// Its value type, e.g. `UINT32`.
    pub value_type: &'static str,
    /// The value as shown, or `None` when its bytes could not be read.
    pub shown: Option<Shown>,
}

/// One tensor info read.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialTensor {
    /// The name's bytes.
    pub name: Vec<u8>,
    /// The canonical dims.
    pub dims: Vec<u64>,
    /// The ggml type's name.
    pub ggml_type: &'static str,
    /// Its data's size.
    pub nbytes: u64,
    /// Its offset as stored.
    pub stored_offset: u64,
}

/// What could be read of a GGUF file.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// GGUF version.
    pub version: u32,
    /// Byte order of its numbers.
    pub byte_order: ByteOrder,
    /// Declared KVs and tensors, when the counts could be read.
    pub counts: Option<(u64, u64)>,
    /// The KVs read, in file order.
    pub kvs: Vec<PartialKv>,
    /// The tensor infos read, in file order, at most `limit` of them.
    pub tensors: Vec<PartialTensor>,
    /// Tensor infos read in all.
    pub tensors_read: usize,
}

/// Reads what it can of the GGUF file `source`: its metadata only, read
/// into memory a megabyte first and more while more is needed, up to
/// [`MAX_READ_METADATA`]. Values are shown as `inspect` shows them
/// (strings up to `width` bytes, `items` array elements), at most `limit`
/// tensors listed. `None` when not even its magic and version can be read.
pub fn partial(source: Source, width: usize, items: usize, limit: Option<usize>) -> Option<Partial> {
    let len = source.len();
    let cap = len.min(MAX_READ_METADATA);
    let mut want = cap.min(FIRST_READ);
    let read = loop {
        let bytes = source.head(want).ok()?;
        let read = parse_partial(&bytes, len);
        if read.wants_more && want < cap {
            want = want.saturating_mul(2).min(cap);
            continue;
        }
        break read;
    };
    let version = read.version?;
    let tensors_read = read.tensors.len();
    let tensors = read
        .tensors
        .iter()
        .take(limit.unwrap_or(usize::MAX))
        .map(|t| PartialTensor {
            name: t.name.to_vec(),
            dims: t.shape().dims().to_vec(),
            ggml_type: t.ggml_type.name,
            nbytes: t.nbytes,
            stored_offset: t.stored_offset,
        })
        .collect();
    // A shard of what was read, so that strings and arrays are shown as
    // `inspect` shows them, read from the file a piece at a time.
    let file = GgufFile {
        version,
        byte_order: read.byte_order,
        kvs: read.kvs,
        tensors: Vec::new(),
        alignment: DEFAULT_ALIGNMENT,
        tensor_info_end: 0,
        data_start: 0,
        file_len: len,
    };
    let shard = Shard { source, file };
    let kvs = shard
        .file
        .kvs
        .iter()
        .map(|kv| PartialKv {
            key: kv.key.clone(),
            value_type: kv.value.value_type().name(),
            shown: show_value(&shard, &kv.value, width, items).ok(),
        })
        .collect();
    Some(Partial {
        path: shard.path().to_path_buf(),
        size: len,
        version,
        byte_order: read.byte_order,
        counts: read.counts,
        kvs,
        tensors,
        tensors_read,
    })
}

/// `N` when all `declared` were read, else `N of M read`.
fn read_of(read: usize, declared: Option<u64>) -> String {
    match declared {
        Some(d) if d == read as u64 => read.to_string(),
        Some(d) => format!("{read} of {d} read"),
        None => format!("{read} read"),
    }
}

impl Partial {
    /// The text shown before the error: as `inspect` shows a file, with
    /// what was read of each list, and no label.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        let (kvs, tensors) = (self.counts.map(|c| c.0), self.counts.map(|c| c.1));
        let rows = [
            ("file", path_text(&self.path)),
            ("size", count(self.size, "byte", "bytes")),
            ("version", self.version.to_string()),
            ("byte order", self.byte_order.name().to_string()),
            ("KVs", read_of(self.kvs.len(), kvs)),
            ("tensors", read_of(self.tensors_read, tensors)),
            ("label", "none: the file could not be labelled (the error follows)".to_string()),
        ];
        for (k, v) in rows {
            writeln!(out, "{k:<12}{v}")?;
        }
        writeln!(out, "\nKVs ({}):", read_of(self.kvs.len(), kvs))?;
        let kv_rows: Vec<Vec<String>> = self
            .kvs
            .iter()
            .map(|kv| {
                let shown = kv.shown.as_ref().map_or_else(|| "(could not be read)".to_string(), Shown::to_string);
                vec![escape_bytes(&kv.key), kv.value_type.to_string(), shown]
            })
            .collect();
        if !kv_rows.is_empty() {
            table(out, &["key", "type", "value"], &[false, false, false], &kv_rows)?;
        }
        writeln!(out, "\nTensors ({}, in file order; offset as stored):", read_of(self.tensors_read, tensors))?;
        let rows: Vec<Vec<String>> = self
            .tensors
            .iter()
            .map(|t| {
                vec![
                    escape_bytes(&t.name),
                    dims_text(&t.dims),
                    t.ggml_type.to_string(),
                    t.nbytes.to_string(),
                    t.stored_offset.to_string(),
                ]
            })
            .collect();
        if !rows.is_empty() {
            table(out, &["name", "dims", "type", "nbytes", "offset"], &[false, false, false, true, true], &rows)?;
        }
        let more = self.tensors_read.saturating_sub(self.tensors.len());
        if more > 0 {
            writeln!(out, "  … {more} more (--limit)")?;
        }
        Ok(())
    }
}
