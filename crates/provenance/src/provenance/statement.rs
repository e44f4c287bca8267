//! Building an in-toto Statement v1 from labelled models, written as it is
//! built: with `--leaves` every KV and tensor of every model goes straight
//! to the output, never into a tree of the whole statement.

use std::io;
use std::path::Path;

use crate::format::Labelled;
use crate::hash::Digest;
use crate::output::JsonWriter;
use crate::provenance::{PREDICATE_TYPE, STATEMENT_TYPE};

/// One labelled model of a statement: the path it was named by (its
/// subject), the model, its digest.
pub type Subject<'a> = (&'a Path, &'a dyn Labelled, &'a Digest);

/// Writes the statement of models labelled from these paths, each subject
/// named by its path as given (lossily as UTF-8; a relative path stays
/// relative, `ollama:NAME` stays a reference): what `gguf-digest statement`
/// prints and Python's `statement()` returns. With `leaves`, each model's
/// predicate entry carries its `--json` entry (every KV and tensor leaf).
pub fn write_statement(w: &mut JsonWriter<'_>, labelled: &[Subject<'_>], leaves: bool) -> io::Result<()> {
    w.begin_object()?;
    w.str_field("_type", STATEMENT_TYPE)?;
    w.key("subject")?;
    w.begin_array()?;
    for (path, _, digest) in labelled {
        w.begin_object()?;
        w.str_field("name", &path.to_string_lossy())?;
        w.key("digest")?;
        w.begin_object()?;
        w.str_field("sha256", &digest.label())?;
        w.end_object()?;
        w.end_object()?;
    }
    w.end_array()?;
    w.str_field("predicateType", PREDICATE_TYPE)?;
    w.key("predicate")?;
    w.begin_object()?;
    w.key("tool")?;
    w.begin_object()?;
    w.str_field("name", "gguf-digest")?;
    w.str_field("version", env!("CARGO_PKG_VERSION"))?;
    w.end_object()?;
    w.key("models")?;
    w.begin_array()?;
    for &(path, model, digest) in labelled {
        write_model_entry(w, path, model, digest, leaves)?;
    }
    w.end_array()?;
    w.end_object()?;
    w.end_object()
}

fn write_model_entry(
    w: &mut JsonWriter<'_>,
    path: &Path,
    model: &dyn Labelled,
    digest: &Digest,
    leaves: bool,
) -> io::Result<()> {
    let name = path.to_string_lossy();
    let (format, contract) = model.contract();
    w.begin_object()?;
    w.str_field("subject", &name)?;
    w.str_field("format", format)?;
    w.str_field("contract", contract)?;
    w.str_field("label", &digest.label())?;
    w.key("files")?;
    w.begin_array()?;
    for s in model.sources() {
        w.begin_object()?;
        w.str_field("path", &s.path().to_string_lossy())?;
        w.field("size", s.len())?;
        // With the cache on (docs/adr/0033): were its bytes read in this run?
        if let Some(from_cache) = s.bytes_from_cache() {
            w.str_field("bytes", crate::format::bytes_word(from_cache))?;
        }
        w.end_object()?;
    }
    w.end_array()?;
    if leaves {
        w.key("leaves")?;
        // The entry names the subject as the statement does (lossily).
        model.write_json(w, Path::new(name.as_ref()), digest)?;
    }
    w.end_object()
}

/// The statement [`write_statement`] writes, pretty-printed with a final
/// newline, as one string (for Python).
pub fn statement_text(labelled: &[Subject<'_>], leaves: bool) -> io::Result<String> {
    let mut out = Vec::new();
    write_statement(&mut JsonWriter::pretty(&mut out), labelled, leaves)?;
    out.push(b'\n');
    String::from_utf8(out).map_err(io::Error::other)
}
