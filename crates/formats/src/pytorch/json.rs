//! A checkpoint's entry in the `--json` document: its layout, its pickle,
//! every leaf by key path, every distinct tensor with its digest.

use std::io;
use std::path::Path;

use super::model::{Layout, Model};
use super::tree::LeafValue;
use crate::hash::Digest;
use crate::output::JsonWriter;

/// Writes the JSON entry of one labelled checkpoint.
pub fn write_model_json(w: &mut JsonWriter<'_>, path: &Path, model: &Model, digest: &Digest) -> io::Result<()> {
    w.begin_object()?;
    w.str_field("path", &path.to_string_lossy())?;
    w.str_field("format", "pytorch")?;
    w.str_field("spec", "pytorch-skeleton-v1")?;
    w.str_field("label", &digest.label())?;
    w.str_field(
        "layout",
        match model.layout() {
            Layout::Zip(_) => "zip",
            Layout::Legacy => "legacy",
        },
    )?;
    w.field("big_endian", model.big_endian())?;
    w.field("pickle_protocol", model.facts().protocol)?;
    w.key("globals")?;
    w.begin_array()?;
    for g in &model.facts().globals {
        w.str(g)?;
    }
    w.end_array()?;
    let tree = model.tree();
    w.field("tensor_count", tree.tensors.len())?;
    w.field("storage_count", tree.storages.len())?;
    w.key("tensors")?;
    w.begin_array()?;
    for (i, (leaf, sha)) in tree.tensors.iter().zip(digest.tensor_sha256()).enumerate() {
        let Some(t) = tree.tensor(leaf) else { continue };
        w.begin_object()?;
        w.name_field("name", leaf.path.as_bytes())?;
        w.str_field("dtype", t.dtype.name)?;
        w.u64s_field("shape", &t.size)?;
        w.field("nbytes", t.nbytes())?;
        w.field("view", model.is_gathered(i))?;
        w.str_field("sha256", &hex::encode(sha))?;
        w.end_object()?;
    }
    w.end_array()?;
    w.key("leaves")?;
    w.begin_array()?;
    for (path, v) in tree.leaves(digest.tensor_sha256()) {
        w.begin_object()?;
        w.name_field("path", path.as_bytes())?;
        match v {
            LeafValue::Tensor { dtype, shape, sha256 } => {
                w.str_field("kind", "tensor")?;
                w.str_field("dtype", dtype)?;
                w.u64s_field("shape", &shape)?;
                w.str_field("sha256", &hex::encode(sha256))?;
            }
            LeafValue::Value { kind, text } => {
                w.str_field("kind", kind)?;
                w.str_field("value", &text)?;
            }
        }
        w.end_object()?;
    }
    w.end_array()?;
    crate::format::end_entry(w, &model.sources())
}
