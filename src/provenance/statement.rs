//! Building an in-toto Statement v1 from labelled models.

use serde_json::{Value as Json, json};

use crate::format::Labelled;
use crate::hash::Digest;
use crate::provenance::{PREDICATE_TYPE, STATEMENT_TYPE};

/// One labelled model for a statement.
struct Entry<'a> {
    /// The subject's name: the path as given (a relative path stays
    /// relative; `ollama:NAME` stays a reference).
    name: String,
    model: &'a dyn Labelled,
    digest: &'a Digest,
}

/// The statement of models labelled from these paths, each subject named
/// by its path as given (lossily as UTF-8): what `gguf-digest statement`
/// prints and Python's `statement()` returns. With `leaves`, each model's
/// predicate entry carries its `--json` entry (every KV and tensor leaf).
pub fn of_labelled<'a>(
    labelled: impl IntoIterator<Item = (&'a std::path::Path, &'a dyn Labelled, &'a Digest)>,
    leaves: bool,
) -> Json {
    let entries: Vec<Entry<'_>> = labelled
        .into_iter()
        .map(|(path, model, digest)| Entry { name: path.to_string_lossy().into_owned(), model, digest })
        .collect();
    let subjects: Vec<Json> =
        entries.iter().map(|e| json!({ "name": e.name, "digest": { "sha256": e.digest.label() } })).collect();
    let models: Vec<Json> = entries.iter().map(|e| model_entry(e, leaves)).collect();
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "tool": { "name": "gguf-digest", "version": env!("CARGO_PKG_VERSION") },
            "models": models,
        },
    })
}

fn model_entry(e: &Entry<'_>, leaves: bool) -> Json {
    let (format, contract) = e.model.contract();
    let files: Vec<Json> =
        e.model.sources().iter().map(|s| json!({ "path": s.path().to_string_lossy(), "size": s.len() })).collect();
    let mut m = json!({
        "subject": e.name,
        "format": format,
        "contract": contract,
        "label": e.digest.label(),
        "files": files,
    });
    if leaves {
        if let Some(obj) = m.as_object_mut() {
            obj.insert("leaves".to_string(), e.model.json(std::path::Path::new(&e.name), e.digest));
        }
    }
    m
}
