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
use std::io;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::facts::Facts;
use crate::hash::{Digest, Job, PieceSizes, ProgressCallback, Sha256Digest, hash_job};
use crate::output::JsonWriter;
use crate::render::{DiffOptions, InspectOptions};
use crate::source::{ReadMode, Source};

pub mod directory_rule;

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
/// ([`FileFormat::approximate_bytes`]): 0 where it cannot be seen.
pub fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The parts of a shard's file name, `<prefix>-NNNNN-of-MMMMM<ext>` (five
/// digits each, as `llama.cpp` and `transformers` name split sets): the
/// prefix (possibly empty), the number and the count, from the name's
/// bytes. Which numbers a set may have is each format's own rule.
pub fn shard_name_parts<'n>(name: &'n [u8], ext: &str) -> Option<(&'n [u8], u64, u64)> {
    let stem = name.strip_suffix(ext.as_bytes())?;
    // "-NNNNN-of-MMMMM" is 15 bytes.
    let (prefix, tail) = stem.split_at_checked(stem.len().checked_sub(15)?)?;
    let no = five_digits(tail.get(1..6)?)?;
    let count = five_digits(tail.get(10..)?)?;
    (tail.first() == Some(&b'-') && tail.get(6..10)? == b"-of-").then_some((prefix, no, count))
}

/// Five ASCII digits as a number.
fn five_digits(s: &[u8]) -> Option<u64> {
    if s.len() == 5 && s.iter().all(u8::is_ascii_digit) { std::str::from_utf8(s).ok()?.parse().ok() } else { None }
}

/// Why `name`, a file name read from an input (an index's list of
/// files), is not a plain name of a file beside it, if it is not: empty,
/// `.` or `..`, or holding `/`, `\` or NUL. Only a plain name may become
/// a path.
pub fn not_plain_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name == "." || name == ".." {
        Some("names a directory")
    } else if name.contains(['/', '\\']) {
        Some("holds a path separator")
    } else if name.contains('\0') {
        Some("holds a NUL byte")
    } else {
        None
    }
}

/// A file format, as the registry (`formats::FORMATS` in the formats crate) lists it:
/// how a file of it is recognised and opened, what `inspect` shows of one
/// it could not label, and its place in a directory. Implemented once, in
/// the format's folder, on a unit type that stands for the format
/// (`gguf::Gguf`). What decides how a file is recognised and what a
/// directory makes of it is required, so a new format answers it or does
/// not compile (docs/adr/0032-one-registry-of-formats.md); the questions
/// most formats answer with "nothing" (no claim by name, no shard sets, no
/// estimate beyond the file, no partial text) have that answer as their
/// default, and a folder states only what differs.
pub trait FileFormat: Sync + 'static {
    /// What a model of the format is, in words: "a GGUF model".
    fn what(&self) -> &'static str;

    /// File name extensions (without the dot) that promise the format, for a
    /// file whose first bytes claim none (so that a broken file gets its
    /// format's error).
    fn extensions(&self) -> &'static [&'static str];

    /// Whether a file's first bytes carry the format's signature.
    fn claims_bytes(&self, head: &[u8]) -> bool;

    /// Whether a file is the format's by its name or place alone, whatever
    /// its bytes (a safetensors index, a manifest in an Ollama store). By
    /// default none is.
    fn claims_path(&self, _path: &Path) -> bool {
        false
    }

    /// Opens the model an open file holds: its other files are opened
    /// beside it, beneath the same root.
    fn open(&self, source: Source, opts: OpenOptions) -> Result<AnyModel>;

    /// For a later shard of a set (by its name), the set's first shard. By
    /// default the format has no shard sets.
    fn first_shard_of(&self, _later: &Path) -> Option<PathBuf> {
        None
    }

    /// About how many bytes labelling `path` reads, when its name says the
    /// format's files are more than itself (a first shard, an index);
    /// `None`, the default, leaves it to the file's own size.
    fn approximate_bytes(&self, _path: &Path) -> Option<u64> {
        None
    }

    /// The text `inspect` shows of a file of the format it could not label
    /// (read from the start, as a stream's metadata is); `None` when the
    /// format shows nothing of such a file (the default) or nothing could
    /// be read.
    fn partial(&self, _source: Source, _opts: &InspectOptions) -> Option<String> {
        None
    }

    /// The kind of a component of this format in a directory (directory
    /// contract §3), or `None` when a directory never holds the format as
    /// weights (its files are then `FILE` components).
    fn component_kind(&self) -> Option<DirectoryKind>;

    /// Which files of a directory form the format's components, and how one
    /// is opened (directory contract §3, docs/adr/0047); `None` when its
    /// files are `FILE` components.
    fn directory_rule(&self) -> Option<&'static dyn directory_rule::DirectoryRule>;
}

/// A kind of directory component (directory contract §3): its four bytes
/// in the skeleton, and the words `inspect` heads its section with.
/// Ordered by its bytes, as the skeleton sorts components.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DirectoryKind {
    /// The four bytes (`GGUF`, `SFTN`, `FILE`): ASCII letters, so they are
    /// their own text.
    pub bytes: &'static [u8; 4],
    /// What such a component holds, in words: "GGUF weights".
    pub words: &'static str,
}

impl DirectoryKind {
    /// `FILE`: any file that is not weights, by its bytes.
    pub const FILE: DirectoryKind = DirectoryKind { bytes: b"FILE", words: "a file" };

    /// The kind's four bytes in the skeleton.
    pub fn bytes(self) -> &'static [u8; 4] {
        self.bytes
    }

    /// The same four bytes as text, for `inspect`, `diff` and JSON.
    pub fn text(self) -> &'static str {
        std::str::from_utf8(self.bytes).unwrap_or("????")
    }
}

/// What `inspect` or `diff` shows, in the format's own words: rendered as
/// text for a person and as a JSON document. A format's section is
/// handed back boxed (docs/adr/0032: once per command, never per tensor).
pub trait Section: std::fmt::Debug + Send + Sync {
    /// The text report.
    fn text(&self) -> String;

    /// The JSON document.
    fn to_json(&self) -> serde_json::Value;
}

/// A `diff` section: a [`Section`] that also says whether the labels were equal.
pub trait DiffSection: Section {
    /// True when both labels are equal (and so no leaf differs).
    fn labels_equal(&self) -> bool;
}

/// Implements [`Section`] for a format's inspection type and [`Section`] and
/// [`DiffSection`] for its diff type, by the types' own inherent `text`,
/// `to_json` and `labels_equal` (every format folder had the same 25 lines).
#[macro_export]
macro_rules! sections {
    ($inspection:ty, $diff:ty) => {
        impl $crate::format::Section for $inspection {
            fn text(&self) -> String {
                <$inspection>::text(self)
            }

            fn to_json(&self) -> $crate::format::JsonValue {
                <$inspection>::to_json(self)
            }
        }

        impl $crate::format::Section for $diff {
            fn text(&self) -> String {
                <$diff>::text(self)
            }

            fn to_json(&self) -> $crate::format::JsonValue {
                <$diff>::to_json(self)
            }
        }

        impl $crate::format::DiffSection for $diff {
            fn labels_equal(&self) -> bool {
                <$diff>::labels_equal(self)
            }
        }
    };
}
pub use crate::sections;

/// The JSON value a section gives (serde_json's), named here so that
/// [`sections!`] needs nothing in scope where it is called.
pub type JsonValue = serde_json::Value;

/// Which of `diff`'s two arguments a model is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first (A): `self` is A, the other is B.
    First,
    /// The second (B): `self` is B, the other is A.
    Second,
}

/// An opened model of any kind, beyond what the core labels: what it is
/// in words, its `inspect` and `diff` sections, what it says of itself for
/// a BOM. Implemented once per format folder and per container (an Ollama
/// model, a directory), so that nothing outside a folder matches on
/// formats.
pub trait Opened: Labelled + Any {
    /// What the model is, in words: "a GGUF model", "a directory".
    fn what(&self) -> &'static str;

    /// The `inspect` section of the labelled model.
    fn inspect(&self, digest: &Digest, opts: &InspectOptions) -> Result<Box<dyn Section>>;

    /// The `diff` section of this model against `other`, this one being
    /// `side`; `None` when this model's kind cannot compare itself with
    /// `other`'s (then `other` is asked, the other way round; when neither
    /// can, the two are refused as different formats).
    fn diff(
        &self,
        mine: &Digest,
        other: &AnyModel,
        theirs: &Digest,
        side: Side,
        opts: &DiffOptions,
    ) -> Option<Result<Box<dyn DiffSection>>>;

    /// Adds what the model says of itself to `facts` (a field already
    /// set is kept: the first to say wins).
    fn facts(&self, facts: &mut Facts) -> Result<()>;

    /// Whether a later shard of this model, named alone, names this model
    /// too (through its index) rather than being refused for not being
    /// first.
    fn shard_alone_names_model(&self) -> bool;

    /// What labelling the model warns of, one line each (a directory's
    /// partial downloads); empty for most, the default.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The model as `Any`, for [`AnyModel::downcast_ref`].
    fn as_any(&self) -> &dyn Any;
}

/// The `diff` section of `me` against `other` when both are of one
/// format `M` (the usual answer of [`Opened::diff`]): `section(a, da, b,
/// db)` with A and B in the arguments' order; `None` when `other` is not
/// an `M`.
pub fn diff_same<M: Opened, D: DiffSection + 'static>(
    me: &M,
    mine: &Digest,
    other: &AnyModel,
    theirs: &Digest,
    side: Side,
    section: impl FnOnce(&M, &Digest, &M, &Digest) -> Result<D>,
) -> Option<Result<Box<dyn DiffSection>>> {
    let other = other.downcast_ref::<M>()?;
    let d = match side {
        Side::First => section(me, mine, other, theirs),
        Side::Second => section(other, theirs, me, mine),
    };
    Some(d.map(|d| Box::new(d) as Box<dyn DiffSection>))
}

/// An opened model of any format or container, as the core and the
/// commands hold it. Questions about its format go to the model
/// ([`Opened`]); a caller that wants one format's own items asks
/// [`AnyModel::downcast_ref`].
pub struct AnyModel(Box<dyn Opened>);

impl AnyModel {
    /// Holds `model`.
    pub fn new(model: impl Opened) -> AnyModel {
        AnyModel(Box::new(model))
    }

    /// The model, as every format answers.
    pub fn model(&self) -> &dyn Opened {
        self.0.as_ref()
    }

    /// The model as the core labels it.
    pub fn labelled(&self) -> &dyn Labelled {
        self.0.as_ref()
    }

    /// The model as format `M`'s own model, if it is one (`gguf::Model`
    /// for GGUF's string values).
    pub fn downcast_ref<M: Opened>(&self) -> Option<&M> {
        self.0.as_any().downcast_ref::<M>()
    }
}

impl std::ops::Deref for AnyModel {
    type Target = dyn Opened;

    fn deref(&self) -> &dyn Opened {
        self.0.as_ref()
    }
}

impl std::fmt::Debug for AnyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A model's files are its identity here; its tensors would be pages.
        let sources = self.0.sources();
        let paths: Vec<&Path> = sources.iter().map(|s| s.path()).collect();
        f.debug_struct("AnyModel").field("what", &self.0.what()).field("files", &paths).finish()
    }
}

impl Labelled for AnyModel {
    fn job_count(&self) -> usize {
        self.0.job_count()
    }

    fn job(&self, i: usize) -> Option<Job<'_>> {
        self.0.job(i)
    }

    fn sources(&self) -> Vec<&Source> {
        self.0.sources()
    }

    fn write_skeleton(&self, data_sha256: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.0.write_skeleton(data_sha256, sink)
    }

    fn write_json(&self, w: &mut JsonWriter<'_>, path: &Path, digest: &Digest) -> io::Result<()> {
        self.0.write_json(w, path, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        self.0.contract()
    }
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
        None => Err(crate::Error::internal(&format!("no hashing job #{i}"))),
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
    per_file(w, "read_lease_unavailable", sources, "why", |s| s.lease_unavailable())?;
    per_file(w, "cache", sources, "bytes", |s| s.bytes_from_cache().map(|c| bytes_word(c).to_string()))?;
    w.end_object()
}

/// The member `key` of an entry: one `{"path", field}` per file (each path
/// once) that `value` says something of; left out when it says nothing.
fn per_file(
    w: &mut JsonWriter<'_>,
    key: &str,
    sources: &[&Source],
    field: &str,
    value: impl Fn(&Source) -> Option<String>,
) -> io::Result<()> {
    let mut seen = std::collections::HashSet::new();
    let said: Vec<(&Path, String)> =
        sources.iter().filter_map(|s| Some((s.path(), value(s)?))).filter(|(p, _)| seen.insert(*p)).collect();
    if said.is_empty() {
        return Ok(());
    }
    w.key(key)?;
    w.begin_array()?;
    for (p, v) in said {
        w.begin_object()?;
        w.name_field("path", p.as_os_str().as_encoded_bytes())?;
        w.str_field(field, &v)?;
        w.end_object()?;
    }
    w.end_array()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_are_cut_into_prefix_number_and_count() {
        let parts = |n: &str, ext| shard_name_parts(n.as_bytes(), ext).map(|(p, no, c)| (p.to_vec(), no, c));
        assert_eq!(parts("m-00002-of-00003.bin", ".bin"), Some((b"m".to_vec(), 2, 3)));
        assert_eq!(parts("-00000-of-00000.gguf", ".gguf"), Some((Vec::new(), 0, 0)));
        assert_eq!(parts("a-b-99999-of-00001.x", ".x"), Some((b"a-b".to_vec(), 99_999, 1)));
        for bad in ["m-00002-of-00003.bin.x", "m-0002-of-00003.bin", "m-00002-of-0003.bin", "m_00002-of-00003.bin"] {
            assert_eq!(parts(bad, ".bin"), None, "{bad}");
        }
        for bad in ["m-00002_of-00003.bin", "m-0000a-of-00003.bin", "00002-of-00003.bin", "m-00002-of-00003.BIN"] {
            assert_eq!(parts(bad, ".bin"), None, "{bad}");
        }
    }

    #[test]
    fn only_plain_names_pass() {
        assert_eq!(not_plain_name("model-00001-of-00002.bin"), None);
        assert_eq!(not_plain_name(".hidden"), None);
        for (bad, why) in [
            ("", "is empty"),
            (".", "names a directory"),
            ("..", "names a directory"),
            ("../x", "holds a path separator"),
            ("a\\b", "holds a path separator"),
            ("a\0b", "holds a NUL byte"),
        ] {
            assert_eq!(not_plain_name(bad), Some(why), "{bad:?}");
        }
    }
}
