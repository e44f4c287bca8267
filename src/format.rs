//! The seam between the core and the formats: what an opened model of any
//! format hands the core, and what the core hands back.
//!
//! A format hands over hashing [`Job`]s (a file, a byte range, a
//! conversion: one per tensor) and, given their digests, its skeleton bytes
//! and its `--json` entry. The core opens files, schedules and runs the
//! jobs of all models of all arguments on one thread pool, checks that no
//! file changed, and hashes the skeleton into the label. See
//! docs/adr/0011-one-core-one-folder-per-format.md.

use std::io;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::hash::{Digest, Job, PieceSizes, ProgressCallback, Sha256Digest, hash_job};
use crate::output::JsonWriter;
use crate::render::{DiffOptions, InspectOptions};
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

    /// Hands the skeleton bytes, from the jobs' data digests in job order,
    /// to `sink` a record at a time (the label's hasher: the skeleton is
    /// never whole in memory to be labelled). An error when a digest
    /// contradicts the input (an Ollama blob whose bytes are not its
    /// layer's digest).
    fn write_skeleton(&self, data_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()>;

    /// The skeleton bytes, whole (`--skeleton`, Python).
    fn skeleton(&self, data_sha256: &[Sha256Digest]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_skeleton(data_sha256, &mut |piece| out.extend_from_slice(piece))?;
        Ok(out)
    }

    /// Writes the model's entry in the `--json` document, a record at a
    /// time (a model of a million tensors is never a tree in memory).
    fn write_json(&self, w: &mut JsonWriter<'_>, path: &Path, digest: &Digest) -> io::Result<()>;

    /// The model's `--json` entry as compact JSON text (for Python).
    fn json_text(&self, path: &Path, digest: &Digest) -> io::Result<String> {
        let mut out = Vec::new();
        self.write_json(&mut JsonWriter::compact(&mut out), path, digest)?;
        String::from_utf8(out).map_err(io::Error::other)
    }

    /// The format's name and the contract its label follows (for the
    /// predicate of a statement): `("gguf", "canonical-skeleton-v1")`.
    fn contract(&self) -> (&'static str, &'static str);
}

/// A file's size for a progress bar's estimate
/// ([`Description::approximate_bytes`]): 0 where it cannot be seen.
pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// What the core knows of a format besides its opened models, described
/// once, in the format's folder, on a type that stands for the format
/// (`gguf::Gguf`). `formats.rs` holds the one list of them; adding a format
/// is a folder with this description and one variant there
/// (docs/adr/0025-formats-behind-an-enum.md).
pub trait Description {
    /// The format's opened model.
    type Model: Labelled;
    /// What `inspect` shows of one model.
    type Inspection;
    /// What `diff` shows of two models of the format.
    type Diff;

    /// What a model of the format is, in words: "a GGUF model".
    const WHAT: &'static str;

    /// File name extensions (without the dot) that promise the format, for a
    /// file whose first bytes claim none (so that a broken file gets its
    /// format's error).
    const EXTENSIONS: &'static [&'static str];

    /// Whether a file's first bytes carry the format's signature.
    fn claims_bytes(head: &[u8]) -> bool;

    /// Whether a file is the format's by its name or place alone, whatever
    /// its bytes (a safetensors index, a manifest in an Ollama store).
    fn claims_path(path: &Path) -> bool;

    /// Opens the model an open file holds: its other files are opened
    /// beside it, beneath the same root.
    fn from_source(source: Source, opts: OpenOptions) -> Result<Self::Model>;

    /// For a later shard of a set (by its name), the set's first shard.
    fn first_shard_of(later: &Path) -> Option<PathBuf>;

    /// Whether a later shard of `model`, named alone, names `model` too
    /// (through its index) rather than being refused for not being first.
    fn shard_alone_names_model(model: &Self::Model) -> bool;

    /// About how many bytes labelling `path` reads, when its name says the
    /// format's files are more than itself (a first shard, an index, a
    /// store reference); `None` leaves it to the file's own size.
    fn approximate_bytes(path: &Path) -> Option<u64>;

    /// The `inspect` section of a labelled model.
    fn inspect(model: &Self::Model, digest: &Digest, opts: &InspectOptions) -> Result<Self::Inspection>;

    /// The `diff` section of two labelled models of the format.
    fn diff(a: &Self::Model, da: &Digest, b: &Self::Model, db: &Digest, opts: &DiffOptions) -> Result<Self::Diff>;
}

/// Job indices, largest first: the order that keeps every core busy until
/// the end when one tensor dominates.
pub fn hash_order(model: &dyn Labelled) -> Vec<usize> {
    // Each job's length once: a key function would build a job (and clone
    // its tensor's name) O(n log n) times.
    let mut sizes: Vec<(u64, usize)> = (0..model.job_count()).map(|i| (model.job(i).map_or(0, |j| j.len), i)).collect();
    sizes.sort_unstable_by_key(|&(len, i)| (std::cmp::Reverse(len), i));
    // A list of its own: collected in place, it would keep the pairs' room
    // (16 bytes a job, for as long as the file is hashed).
    let mut order = Vec::with_capacity(sizes.len());
    order.extend(sizes.iter().map(|&(_, i)| i));
    order
}

/// Hashes job `i` of `model`.
pub fn run_job(
    model: &dyn Labelled,
    i: usize,
    pieces: &PieceSizes,
    progress: &ProgressCallback<'_>,
) -> Result<Sha256Digest> {
    match model.job(i) {
        Some(job) => hash_job(&job, pieces, progress),
        None => Err(std::io::Error::other(format!("no hashing job #{i}")).into()),
    }
}

/// Ends a model's `--json` entry: only when some file of the model was
/// read without a read lease (docs/adr/0021-read-lease.md), the member
/// `read_lease_unavailable` first, one `{"path", "why"}` per such file in
/// [`Labelled::sources`] order; then, only with the verified-leaf cache on
/// (docs/adr/0033), `cache`: one `{"path", "bytes"}` per file, `"bytes"`
/// being `"cache"` when none of its data was read in this run (every job
/// from the cache) and `"read"` otherwise; then the closing brace. Every
/// format's entry ends here, so a model all of whose files held a lease,
/// labelled without the cache, gets exactly the format's members.
pub fn end_entry(w: &mut JsonWriter<'_>, sources: &[&Source]) -> io::Result<()> {
    let mut seen = std::collections::HashSet::new();
    let unleased: Vec<(&Path, String)> = sources
        .iter()
        .filter_map(|s| Some((s.path(), s.lease_unavailable()?)))
        .filter(|(p, _)| seen.insert(*p))
        .collect();
    if !unleased.is_empty() {
        w.key("read_lease_unavailable")?;
        w.begin_array()?;
        for (p, why) in unleased {
            w.begin_object()?;
            w.name_field("path", p.as_os_str().as_encoded_bytes())?;
            w.str_field("why", &why)?;
            w.end_object()?;
        }
        w.end_array()?;
    }
    let mut seen = std::collections::HashSet::new();
    let cached: Vec<(&Path, bool)> = sources
        .iter()
        .filter_map(|s| Some((s.path(), s.bytes_from_cache()?)))
        .filter(|(p, _)| seen.insert(*p))
        .collect();
    if !cached.is_empty() {
        w.key("cache")?;
        w.begin_array()?;
        for (p, from_cache) in cached {
            w.begin_object()?;
            w.name_field("path", p.as_os_str().as_encoded_bytes())?;
            w.str_field("bytes", bytes_word(from_cache))?;
            w.end_object()?;
        }
        w.end_array()?;
    }
    w.end_object()
}

/// How a file's bytes were had, in `--json` and statements: `"cache"` or `"read"`.
pub fn bytes_word(from_cache: bool) -> &'static str {
    if from_cache { "cache" } else { "read" }
}

/// The digest of a model whose jobs were hashed into `data_sha256` (in job
/// order), after checking that no file changed while it was read.
pub fn finish(model: &dyn Labelled, data_sha256: Vec<Sha256Digest>) -> Result<Digest> {
    for s in model.sources() {
        s.check_unchanged()?;
    }
    Digest::of_skeleton(data_sha256, |data, sink| model.write_skeleton(data, sink))
}
