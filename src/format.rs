//! The seam between the core and the formats: what an opened model of any
//! format hands the core, and what the core hands back.
//!
//! A format hands over hashing [`Job`]s (a file, a byte range, a
//! conversion: one per tensor) and, given their digests, its skeleton bytes
//! and its `--json` entry. The core opens files, schedules and runs the
//! jobs of all models of all arguments on one thread pool, checks that no
//! file changed, and hashes the skeleton into the label. See
//! docs/adr/0011-one-core-one-folder-per-format.md.

use std::any::Any;
use std::path::Path;

use serde_json::Value as Json;

use crate::error::Result;
use crate::hash::{Digest, Job, PieceSizes, Progress, Sha256Digest, hash_job};
use crate::source::{ReadMode, Source};

/// How to open a model, whatever its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Join the shards of a split model (the default); when false, a shard
    /// is labelled alone as a model of its own.
    pub join_shards: bool,
    /// How metadata and data are read.
    pub read_mode: ReadMode,
    /// The pieces tensor data is hashed in (speed and memory only).
    pub pieces: PieceSizes,
    /// Ollama models: also hash every weights blob whole and check it
    /// against its layer's digest (a store audit; the label is the same).
    pub verify_blobs: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { join_shards: true, read_mode: ReadMode::Mmap, pieces: PieceSizes::default(), verify_blobs: false }
    }
}

/// An opened, parsed model of some format: everything the core needs to
/// label it. Implemented once per format folder.
pub trait Labelled: Send + Sync {
    /// The number of hashing jobs (one per tensor).
    fn job_count(&self) -> usize;

    /// Job `i`, `0 <= i < job_count()`, in the format's tensor order.
    fn job(&self, i: usize) -> Option<Job<'_>>;

    /// Every file the model was read from; the first is the path given.
    fn sources(&self) -> Vec<&Source>;

    /// The skeleton bytes, from the jobs' data digests in job order. An
    /// error when a digest contradicts the input (an Ollama blob whose bytes
    /// are not its layer's digest).
    fn skeleton(&self, data_sha256: &[Sha256Digest]) -> Result<Vec<u8>>;

    /// The model's entry in the `--json` document.
    fn json(&self, path: &Path, digest: &Digest) -> Json;

    /// The format's name and the contract its label follows (for the
    /// predicate of a statement): `("gguf", "canonical-skeleton-v1")`.
    fn contract(&self) -> (&'static str, &'static str);

    /// The model as its own type, for the per-format sections of `inspect`
    /// and `diff`.
    fn as_any(&self) -> &dyn Any;
}

/// Job indices, largest first: the order that keeps every core busy until
/// the end when one tensor dominates.
pub fn hash_order(model: &dyn Labelled) -> Vec<usize> {
    // Each job's length once: a key function would build a job (and clone
    // its tensor's name) O(n log n) times.
    let mut order: Vec<(u64, usize)> = (0..model.job_count()).map(|i| (model.job(i).map_or(0, |j| j.len), i)).collect();
    order.sort_by_key(|&(len, i)| (std::cmp::Reverse(len), i));
    order.into_iter().map(|(_, i)| i).collect()
}

/// Hashes job `i` of `model`.
pub fn run_job(model: &dyn Labelled, i: usize, pieces: &PieceSizes, progress: &Progress<'_>) -> Result<Sha256Digest> {
    match model.job(i) {
        Some(job) => hash_job(&job, pieces, progress),
        None => Err(std::io::Error::other(format!("no hashing job #{i}")).into()),
    }
}

/// The model's entry in the `--json` document: the format's entry
/// ([`Labelled::json`]), and, only when some file of the model was read
/// without a read lease (docs/adr/0021-read-lease.md), the member
/// `read_lease_unavailable`: one `{"path", "why"}` per such file, in
/// [`Labelled::sources`] order. A model all of whose files held a lease
/// gets exactly the format's entry.
pub fn json_entry(model: &dyn Labelled, path: &Path, digest: &Digest) -> Json {
    let mut entry = model.json(path, digest);
    let mut seen = std::collections::HashSet::new();
    let unleased: Vec<Json> = model
        .sources()
        .into_iter()
        .filter_map(|s| Some((s.path(), s.lease_unavailable()?)))
        .filter(|(p, _)| seen.insert(*p))
        .map(|(p, why)| {
            let mut note = serde_json::Map::new();
            crate::output::put_name(&mut note, "path", std::os::unix::ffi::OsStrExt::as_bytes(p.as_os_str()));
            note.insert("why".to_string(), Json::from(why));
            Json::Object(note)
        })
        .collect();
    if let (Json::Object(obj), false) = (&mut entry, unleased.is_empty()) {
        obj.insert("read_lease_unavailable".to_string(), Json::Array(unleased));
    }
    entry
}

/// The digest of a model whose jobs were hashed into `data_sha256` (in job
/// order), after checking that no file changed while it was read.
pub fn finish(model: &dyn Labelled, data_sha256: Vec<Sha256Digest>) -> Result<Digest> {
    for s in model.sources() {
        s.check_unchanged()?;
    }
    Ok(Digest::from_skeleton(model.skeleton(&data_sha256)?, data_sha256))
}
