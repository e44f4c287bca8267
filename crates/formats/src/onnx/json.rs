//! An ONNX model's entry in the `--json` document: its IR version,
//! producer and opsets, its external files, and every tensor (initializers,
//! attribute tensors, sparse parts) with where its elements lie and their
//! digest.

use std::io;
use std::path::Path;

use super::model::Model;
use super::tensor::Data;
use crate::hash::Digest;
use crate::output::JsonWriter;

/// How a tensor's elements are stored, in words.
pub fn storage(d: &Data) -> &'static str {
    match d {
        Data::Empty => "empty",
        Data::Raw { .. } => "raw_data",
        Data::Typed(_) => "typed",
        Data::External(_) => "external",
    }
}

/// Writes the JSON entry of one labelled model.
pub fn write_model_json(w: &mut JsonWriter<'_>, path: &Path, model: &Model, digest: &Digest) -> io::Result<()> {
    let proto = model.proto();
    w.begin_object()?;
    w.str_field("path", &path.to_string_lossy())?;
    w.str_field("format", "onnx")?;
    w.str_field("spec", "onnx-skeleton-v1")?;
    w.str_field("label", &digest.label())?;
    w.field("ir_version", proto.int(1))?;
    w.name_field("producer_name", proto.str(2))?;
    w.name_field("producer_version", proto.str(3))?;
    w.key("opset_import")?;
    w.begin_array()?;
    for o in proto.msgs(8) {
        w.begin_object()?;
        w.name_field("domain", o.str(1))?;
        w.field("version", o.int(2))?;
        w.end_object()?;
    }
    w.end_array()?;
    w.key("external_files")?;
    w.begin_array()?;
    for (loc, s) in model.locations().iter().zip(model.externals()) {
        w.begin_object()?;
        w.name_field("location", loc)?;
        w.field("size", s.len())?;
        w.end_object()?;
    }
    w.end_array()?;
    w.field("tensor_count", model.tensors().len())?;
    w.key("tensors")?;
    w.begin_array()?;
    for (i, t) in model.tensors().iter().enumerate() {
        w.begin_object()?;
        w.str_field("path", &t.path)?;
        w.name_field("name", &t.name)?;
        w.str_field("dtype", t.dtype.name)?;
        w.u64s_field("shape", &t.dims)?;
        w.field("nbytes", t.nbytes)?;
        w.str_field("storage", storage(&t.data))?;
        if let Some(k) = model.file_of(i).and_then(|k| model.locations().get(k)) {
            w.name_field("file", k)?;
        }
        w.str_field("sha256", &hex::encode(model.elements_sha256(i, digest.tensor_sha256())))?;
        w.end_object()?;
    }
    w.end_array()?;
    let sources = crate::format::Labelled::sources(model);
    crate::format::end_entry(w, &sources)
}
