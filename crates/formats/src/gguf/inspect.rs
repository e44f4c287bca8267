//! The GGUF section of `gguf-digest inspect`: each file's header, a summary
//! of tensor types, the KVs, the tensors and the warnings, as text or JSON.
//!
//! Everything shown comes from what labelling already computed (the parsed
//! headers, KVs and tensor infos, and each tensor's data digest) plus short
//! reads of string and array bytes (`arrays`).

use std::collections::{BTreeMap, HashSet};
use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde_json::{Map, Value as JsonValue, json};

use crate::error::Result;
use crate::gguf::arrays::show_value;
use crate::gguf::cursor::ByteOrder;
use crate::gguf::ggml_type::GgmlType;
use crate::gguf::json::value_json;
use crate::gguf::model::{Model, ModelKv, shard_of};
use crate::gguf::parse::SPLIT_PREFIX;
use crate::gguf::value::Value;
use crate::gguf::warnings::{Warning, WarningKind, kv_warnings, tensor_warnings};
use crate::hash::{Digest, Sha256Digest};
use crate::output::JSON_FORMAT;
use crate::render::InspectOptions;
use crate::render::{Shown, count, dims_text, path_text, table};
use crate::text::escape_bytes;

/// The header of one file of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHeader {
    /// The file's path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// GGUF version, 2 or 3.
    pub version: u32,
    /// Byte order of its numbers.
    pub byte_order: ByteOrder,
    /// Its effective alignment.
    pub alignment: u64,
    /// KVs in the file, `split.` keys included.
    pub kv_count: usize,
    /// Tensors in the file.
    pub tensor_count: usize,
    /// File position where the tensor infos end.
    pub tensor_info_end: u64,
    /// File position where tensor data starts.
    pub data_start: u64,
}

/// Tensors of one ggml type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeSummary {
    /// The type.
    pub ggml_type: &'static GgmlType,
    /// How many tensors have it.
    pub count: usize,
    /// Their data bytes in all.
    pub bytes: u64,
}

/// A KV as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct KvEntry {
    /// The key.
    pub key: Vec<u8>,
    /// The value as parsed (type, scalars, digests).
    pub value: Value,
    /// The value as shown.
    pub shown: Shown,
    /// Index of the file it was read from.
    pub shard: usize,
}

/// A tensor as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorEntry {
    /// The name.
    pub name: Vec<u8>,
    /// The canonical dims (the ones in the label).
    pub dims: Vec<u64>,
    /// The dims as stored.
    pub stored_dims: Vec<u64>,
    /// The ggml type.
    pub ggml_type: &'static GgmlType,
    /// Data size in bytes.
    pub nbytes: u64,
    /// The stored offset, relative to its file's data_start.
    pub stored_offset: u64,
    /// The offset in the canonical layout.
    pub offset: u64,
    /// Index of the file holding its data.
    pub shard: usize,
    /// SHA-256 of its data.
    pub sha256: Sha256Digest,
}

/// Everything `gguf-digest inspect` shows about a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The label.
    pub label: String,
    /// The effective alignment of the model.
    pub alignment: u64,
    /// KVs in the label (no `split.` keys).
    pub kv_count: usize,
    /// Tensors in the model.
    pub tensor_count: usize,
    /// Tensor data bytes in all.
    pub tensor_bytes: u64,
    /// One header per file; the first is the path given.
    pub files: Vec<FileHeader>,
    /// Tensor count and bytes per ggml type, by type id.
    pub types: Vec<TypeSummary>,
    /// The KVs in the label, in file order (file by file).
    pub kvs: Vec<KvEntry>,
    /// The `split.` keys of every file, in file order: layout, not content.
    pub split_kvs: Vec<KvEntry>,
    /// The tensors in file order, at most `limit` of them.
    pub tensors: Vec<TensorEntry>,
    /// Warnings, file by file.
    pub warnings: Vec<Warning>,
}

/// Inspects a model whose tensors were hashed into `digest`.
pub fn inspect(model: &Model, digest: &Digest, opts: &InspectOptions) -> Result<Inspection> {
    let shards = model.shards();
    let files = shards
        .iter()
        .map(|s| FileHeader {
            path: s.path().to_path_buf(),
            size: s.source.len(),
            version: s.file.version,
            byte_order: s.file.byte_order,
            alignment: s.file.alignment,
            kv_count: s.file.kvs.len(),
            tensor_count: s.file.tensors.len(),
            tensor_info_end: s.file.tensor_info_end,
            data_start: s.file.data_start,
        })
        .collect();

    let mut model_kvs: Vec<&ModelKv> = model.kvs().iter().collect();
    model_kvs.sort_by_key(|m| (m.shard, m.kv.file_offset));
    let mut kvs = Vec::with_capacity(model_kvs.len());
    for m in model_kvs {
        let shown = show_value(shard_of(model, m.shard)?, &m.kv.value, opts.width, opts.items)?;
        kvs.push(KvEntry { key: m.kv.key.clone(), value: m.kv.value.clone(), shown, shard: m.shard });
    }
    let mut split_kvs = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        for kv in s.file.kvs.iter().filter(|kv| kv.key.starts_with(SPLIT_PREFIX)) {
            let shown = show_value(s, &kv.value, opts.width, opts.items)?;
            split_kvs.push(KvEntry { key: kv.key.clone(), value: kv.value.clone(), shown, shard: i });
        }
    }

    let mut types: BTreeMap<u32, TypeSummary> = BTreeMap::new();
    for t in model.tensors() {
        let ty = t.info.ggml_type;
        let e = types.entry(ty.id).or_insert(TypeSummary { ggml_type: ty, count: 0, bytes: 0 });
        e.count = e.count.saturating_add(1);
        e.bytes = e.bytes.saturating_add(t.info.nbytes);
    }
    // File order: how the tensor infos list them, file by file.
    let mut in_file_order: Vec<_> = model.tensors().iter().zip(digest.tensor_sha256()).collect();
    in_file_order.sort_by_key(|(t, _)| (t.shard, t.info.file_offset));
    let mut tensors: Vec<TensorEntry> = in_file_order
        .into_iter()
        .map(|(t, sha)| TensorEntry {
            name: t.info.name.to_vec(),
            dims: t.info.shape().dims().to_vec(),
            stored_dims: t.info.stored_dims.to_vec(),
            ggml_type: t.info.ggml_type,
            nbytes: t.info.nbytes,
            stored_offset: t.info.stored_offset,
            offset: t.offset,
            shard: t.shard,
            sha256: *sha,
        })
        .collect();
    tensors.truncate(opts.limit.unwrap_or(usize::MAX));

    let mut warnings = Vec::new();
    let mut seen: HashSet<&[u8]> = HashSet::new();
    for (i, s) in shards.iter().enumerate() {
        if s.file.byte_order == ByteOrder::Big {
            warnings.push(Warning { shard: i, kind: WarningKind::BigEndian });
        }
        // A key repeated in a later shard holds the same value: warn once.
        for kv in &s.file.kvs {
            if seen.insert(&kv.key) {
                kv_warnings(i, s, kv, &mut warnings)?;
            }
        }
        tensor_warnings(i, &s.file, s.source.len(), &mut warnings);
    }

    Ok(Inspection {
        label: digest.label(),
        alignment: model.alignment(),
        kv_count: model.kvs().len(),
        tensor_count: model.tensors().len(),
        tensor_bytes: model.tensor_bytes(),
        files,
        types: types.into_values().collect(),
        kvs,
        split_kvs,
        tensors,
        warnings,
    })
}

impl Inspection {
    /// True when some warning means llama.cpp will not load the model.
    pub fn llama_cpp_refuses(&self) -> bool {
        self.warnings.iter().any(|w| w.kind.llama_cpp_refuses())
    }

    /// The codes of the warnings that keep llama.cpp from loading the model, each once.
    pub fn refusing_codes(&self) -> Vec<&'static str> {
        let mut codes: Vec<&'static str> = Vec::new();
        for w in self.warnings.iter().filter(|w| w.kind.llama_cpp_refuses()) {
            if !codes.contains(&w.kind.code()) {
                codes.push(w.kind.code());
            }
        }
        codes
    }

    fn path_of(&self, shard: usize) -> String {
        self.files.get(shard).map(|f| path_text(&f.path)).unwrap_or_default()
    }

    /// The text report: header, tensor types, KVs, tensors, warnings.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_text(&mut out);
        out
    }

    fn write_text(&self, out: &mut String) -> fmt::Result {
        let sharded = self.files.len() > 1;
        let split_note = |n: usize| {
            if n > 0 {
                format!(" (and {}, not in the label)", count(n as u64, "split.* key", "split.* keys"))
            } else {
                String::new()
            }
        };
        let tensors_line = format!("{} ({} of data)", self.tensor_count, count(self.tensor_bytes, "byte", "bytes"));
        match self.files.as_slice() {
            [f] => {
                let rows = [
                    ("file", path_text(&f.path)),
                    ("size", count(f.size, "byte", "bytes")),
                    ("version", f.version.to_string()),
                    ("byte order", f.byte_order.name().to_string()),
                    ("alignment", self.alignment.to_string()),
                    ("KVs", format!("{}{}", self.kv_count, split_note(self.split_kvs.len()))),
                    ("tensors", tensors_line),
                    ("data_start", f.data_start.to_string()),
                    ("label", self.label.clone()),
                ];
                for (k, v) in rows {
                    writeln!(out, "{k:<12}{v}")?;
                }
            }
            files => {
                let first = files.first().map(|f| path_text(&f.path)).unwrap_or_default();
                let rows = [
                    ("model", format!("{first} ({} shards)", files.len())),
                    ("alignment", self.alignment.to_string()),
                    ("KVs", format!("{}{}", self.kv_count, split_note(self.split_kvs.len()))),
                    ("tensors", tensors_line),
                    ("label", self.label.clone()),
                ];
                for (k, v) in rows {
                    writeln!(out, "{k:<12}{v}")?;
                }
                writeln!(out, "\nShards:")?;
                let rows: Vec<Vec<String>> = files
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        vec![
                            i.saturating_add(1).to_string(),
                            path_text(&f.path),
                            f.size.to_string(),
                            f.version.to_string(),
                            f.byte_order.name().to_string(),
                            f.alignment.to_string(),
                            f.kv_count.to_string(),
                            f.tensor_count.to_string(),
                            f.data_start.to_string(),
                        ]
                    })
                    .collect();
                let header =
                    ["shard", "path", "size", "version", "byte order", "alignment", "KVs", "tensors", "data_start"];
                let right = [true, false, true, true, false, true, true, true, true];
                table(out, &header, &right, &rows)?;
            }
        }

        writeln!(out, "\nTensor types:")?;
        let mut rows: Vec<Vec<String>> = self
            .types
            .iter()
            .map(|t| vec![t.ggml_type.name.to_string(), t.count.to_string(), t.bytes.to_string()])
            .collect();
        rows.push(vec!["total".into(), self.tensor_count.to_string(), self.tensor_bytes.to_string()]);
        table(out, &["type", "count", "bytes"], &[false, true, true], &rows)?;

        writeln!(out, "\nKVs ({}):", self.kvs.len())?;
        let kv_row = |e: &KvEntry| {
            let mut row = vec![escape_bytes(&e.key), e.value.value_type().name().to_string(), e.shown.to_string()];
            if sharded {
                row.insert(0, e.shard.saturating_add(1).to_string());
            }
            row
        };
        let (kv_header, kv_right): (&[&str], &[bool]) = if sharded {
            (&["shard", "key", "type", "value"], &[true, false, false, false])
        } else {
            (&["key", "type", "value"], &[false, false, false])
        };
        table(out, kv_header, kv_right, &self.kvs.iter().map(kv_row).collect::<Vec<_>>())?;
        if !self.split_kvs.is_empty() {
            writeln!(out, "\nSplit keys ({}, layout only, not in the label):", self.split_kvs.len())?;
            table(out, kv_header, kv_right, &self.split_kvs.iter().map(kv_row).collect::<Vec<_>>())?;
        }

        let listed = if self.tensors.len() < self.tensor_count {
            format!("{} of {}", self.tensors.len(), self.tensor_count)
        } else {
            self.tensor_count.to_string()
        };
        writeln!(out, "\nTensors ({listed}, in file order; offset as stored):")?;
        let rows: Vec<Vec<String>> = self
            .tensors
            .iter()
            .map(|t| {
                let mut row = vec![
                    escape_bytes(&t.name),
                    dims_text(&t.dims),
                    t.ggml_type.name.to_string(),
                    t.nbytes.to_string(),
                    t.stored_offset.to_string(),
                    hex::encode(t.sha256.get(..8).unwrap_or(&[])),
                ];
                if sharded {
                    row.insert(0, t.shard.saturating_add(1).to_string());
                }
                row
            })
            .collect();
        let mut header = vec!["name", "dims", "type", "nbytes", "offset", "sha256"];
        let mut right = vec![false, false, false, true, true, false];
        if sharded {
            header.insert(0, "shard");
            right.insert(0, true);
        }
        table(out, &header, &right, &rows)?;
        let more = self.tensor_count.saturating_sub(self.tensors.len());
        if more > 0 {
            writeln!(out, "  … {more} more (--limit)")?;
        }

        if self.warnings.is_empty() {
            writeln!(out, "\nWarnings: none")?;
        } else {
            writeln!(out, "\nWarnings ({}):", self.warnings.len())?;
            for w in &self.warnings {
                let file = if sharded { format!("shard {}: ", w.shard.saturating_add(1)) } else { String::new() };
                writeln!(out, "  {file}{}: {}", w.kind.code(), w.kind.message())?;
            }
        }
        if self.llama_cpp_refuses() {
            writeln!(
                out,
                "\nThe label is defined, but llama.cpp will not load this file ({}).",
                self.refusing_codes().join(", ")
            )?;
        }
        Ok(())
    }

    /// The JSON document (the same content as [`Inspection::text`]).
    pub fn to_json(&self) -> JsonValue {
        let kv_json = |e: &KvEntry| {
            let mut o = Map::new();
            crate::output::put_name(&mut o, "key", &e.key);
            o.insert("type".into(), json!(e.value.value_type().name()));
            o.extend(value_json(&e.value));
            match &e.shown {
                Shown::Str { prefix, len } => {
                    crate::output::put_name(&mut o, "value", prefix);
                    o.insert("truncated".into(), json!((prefix.len() as u64) < *len));
                }
                Shown::Array { elements, .. } => {
                    o.insert("elements".into(), json!(elements.iter().map(Shown::to_json).collect::<Vec<_>>()));
                }
                _ => {}
            }
            o.insert("shard".into(), json!(e.shard));
            JsonValue::Object(o)
        };
        let files: Vec<JsonValue> = self
            .files
            .iter()
            .map(|f| {
                json!({
                    "path": path_text(&f.path),
                    "size": f.size,
                    "version": f.version,
                    "byte_order": f.byte_order.name(),
                    "alignment": f.alignment,
                    "kv_count": f.kv_count,
                    "tensor_count": f.tensor_count,
                    "tensor_info_end": f.tensor_info_end,
                    "data_start": f.data_start,
                })
            })
            .collect();
        let types: Vec<JsonValue> = self
            .types
            .iter()
            .map(|t| json!({ "type": t.ggml_type.name, "type_id": t.ggml_type.id, "count": t.count, "bytes": t.bytes }))
            .collect();
        let tensors: Vec<JsonValue> = self
            .tensors
            .iter()
            .map(|t| {
                let mut o = Map::new();
                crate::output::put_name(&mut o, "name", &t.name);
                o.insert("dims".into(), json!(t.dims));
                o.insert("stored_dims".into(), json!(t.stored_dims));
                o.insert("type".into(), json!(t.ggml_type.name));
                o.insert("type_id".into(), json!(t.ggml_type.id));
                o.insert("nbytes".into(), json!(t.nbytes));
                o.insert("stored_offset".into(), json!(t.stored_offset));
                o.insert("offset".into(), json!(t.offset));
                o.insert("shard".into(), json!(t.shard));
                o.insert("sha256".into(), json!(hex::encode(t.sha256)));
                JsonValue::Object(o)
            })
            .collect();
        let warnings: Vec<JsonValue> = self
            .warnings
            .iter()
            .map(|w| {
                let mut o = Map::new();
                o.insert("code".into(), json!(w.kind.code()));
                o.insert("shard".into(), json!(w.shard));
                o.insert("path".into(), json!(self.path_of(w.shard)));
                o.insert("llama_cpp_refuses".into(), json!(w.kind.llama_cpp_refuses()));
                o.insert("message".into(), json!(w.kind.message()));
                w.kind.json_fields(&mut o);
                JsonValue::Object(o)
            })
            .collect();
        json!({
            "format": JSON_FORMAT,
            "tool": concat!("gguf-digest ", env!("CARGO_PKG_VERSION")),
            "path": self.path_of(0),
            "label": self.label,
            "alignment": self.alignment,
            "kv_count": self.kv_count,
            "tensor_count": self.tensor_count,
            "tensor_bytes": self.tensor_bytes,
            "shards": files,
            "types": types,
            "kvs": self.kvs.iter().map(kv_json).collect::<Vec<_>>(),
            "split_kvs": self.split_kvs.iter().map(kv_json).collect::<Vec<_>>(),
            "tensors_listed": self.tensors.len(),
            "tensors": tensors,
            "warnings": warnings,
            "llama_cpp_loads": !self.llama_cpp_refuses(),
        })
    }
}
