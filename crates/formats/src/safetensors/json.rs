//! A safetensors model's entry in the `--json` document: its files, its
//! metadata groups, every tensor with its digest.

use std::io;
use std::path::Path;

use crate::hash::Digest;
use crate::output::JsonWriter;
use crate::safetensors::model::Model;

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Writes the JSON entry of one labelled safetensors model (schema in
/// README.md), a tensor at a time.
pub fn write_model_json(w: &mut JsonWriter<'_>, path: &Path, model: &Model, digest: &Digest) -> io::Result<()> {
    w.begin_object()?;
    w.str_field("path", &text(path))?;
    w.str_field("format", "safetensors")?;
    w.str_field("spec", "safetensors-skeleton-v1")?;
    w.str_field("label", &digest.label())?;
    w.field("tensor_count", model.tensors().len())?;
    w.field("tensor_bytes", model.tensor_bytes())?;
    w.key("files")?;
    w.begin_array()?;
    for f in model.files() {
        w.begin_object()?;
        w.str_field("path", &text(f.path()))?;
        w.field("size", f.source.len())?;
        w.field("header_len", f.file.header_len)?;
        w.field("data_start", f.file.data_start)?;
        w.field("tensor_count", f.file.tensors.len())?;
        w.field("metadata_group", f.group)?;
        w.end_object()?;
    }
    w.end_array()?;
    w.key("metadata_groups")?;
    w.begin_array()?;
    for g in model.groups() {
        w.begin_object()?;
        w.str_field("sha256", &hex::encode(g.digest))?;
        w.key("metadata")?;
        w.begin_object()?;
        for (k, v) in &g.map {
            w.str_field(k, v)?;
        }
        w.end_object()?;
        w.end_object()?;
    }
    w.end_array()?;
    w.key("tensors")?;
    w.begin_array()?;
    for (t, sha) in model.tensors().iter().zip(digest.tensor_sha256()) {
        w.begin_object()?;
        w.name_field("name", t.entry.name.as_bytes())?;
        w.str_field("dtype", t.entry.dtype.name)?;
        w.u64s_field("shape", &t.entry.shape)?;
        w.field("nbytes", t.entry.nbytes)?;
        w.field("offset", t.offset)?;
        w.u64s_field("data_offsets", &[t.entry.begin, t.entry.end])?;
        w.field("file", t.file)?;
        w.field("metadata_group", model.files().get(t.file).map(|f| f.group))?;
        w.str_field("sha256", &hex::encode(sha))?;
        w.end_object()?;
    }
    w.end_array()?;
    if let Some(index) = model.index() {
        w.key("index")?;
        w.begin_object()?;
        w.str_field("path", &text(&index.path))?;
        w.field("total_size", index.total_size.as_ref().and_then(crate::safetensors::Declared::integer))?;
        w.end_object()?;
    }
    crate::format::end_entry(w, &crate::format::Labelled::sources(model))
}
