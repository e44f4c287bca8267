//! A directory as one model (directory contract), once opened
//! (`directory::open`): its components (each format's model, or a file
//! hashed whole), their jobs and, with `--verify-blobs`, a whole-file job
//! per file a snapshot links to a blob, all hashed in one schedule. The
//! skeleton is written from the jobs' digests: each weights component's raw
//! label through its format's own skeleton writer, then the directory
//! skeleton ([`skeleton`]), as an Ollama model composes its layers.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::directory::skeleton::{Kind, skeleton};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::{AnyModel, Labelled, OpenOptions};
use crate::hash::{Conversion, Digest, Job, Sha256Digest};
use crate::output::JsonWriter;
use crate::source::Source;
use crate::text::escape_name;

/// How a component's digest is computed.
#[derive(Debug)]
pub enum Part {
    /// A weights model of a format in the registry (a safetensors model's
    /// index, when it has one, is held beside): its jobs, skeleton,
    /// sections and facts are the model's own.
    Weights(AnyModel),
    /// Any other file, hashed whole.
    File(Box<Source>),
}

/// One component of the directory.
#[derive(Debug)]
pub struct Component {
    /// Its kind.
    pub kind: Kind,
    /// Its name: `d/P` for weights, the relative path for a file.
    pub name: Vec<u8>,
    /// Its files' relative paths (an index first).
    pub files: Vec<Vec<u8>>,
    /// What it is opened as.
    pub part: Part,
    /// Why a file that could have been a weights component by its name is
    /// a `FILE` (a `.pt` the PyTorch contract refuses: what it refused).
    pub note: Option<String>,
}

impl Component {
    /// The open files it is hashed from (an index is not one: see
    /// [`Model::sources`]).
    pub(crate) fn sources(&self) -> Vec<&Source> {
        match &self.part {
            Part::Weights(m) => m.sources(),
            Part::File(s) => vec![s],
        }
    }

    pub(super) fn job_count(&self) -> usize {
        match &self.part {
            Part::Weights(m) => m.job_count(),
            Part::File(_) => 1,
        }
    }
}

/// A file checked against the name of the blob it links to
/// (`--verify-blobs`).
#[derive(Debug)]
pub struct Audit {
    /// The file's relative path.
    pub name: Vec<u8>,
    /// The blob's name: 64 hex digits (SHA-256) or 40 (Git blob SHA-1).
    pub blob: String,
    pub(super) source: SourceAt,
}

/// Where an audited file's open source is.
#[derive(Debug, Clone, Copy)]
pub(super) enum SourceAt {
    /// File `f` of component `c`.
    Component(usize, usize),
    /// Index file `i` of [`Model::indexes`].
    Index(usize),
}

#[derive(Debug, Clone, Copy)]
pub(super) enum JobRef {
    /// Job `t` of component `c`.
    Part(usize, usize),
    /// Audit `a`.
    Audit(usize),
}

/// An opened directory.
#[derive(Debug)]
pub struct Model {
    pub(super) shown: PathBuf,
    pub(super) components: Vec<Component>,
    /// The files its components' formats keep beside them (an index:
    /// its `metadata` is in the label), held open while the model is and
    /// checked unchanged.
    pub(super) indexes: Vec<Source>,
    pub(super) audits: Vec<Audit>,
    /// With `--verify-blobs`, the files of a snapshot that lead to no blob
    /// (a regular file, or a link that stays in the snapshot): not checked.
    pub(super) unaudited: Vec<PathBuf>,
    pub(super) incomplete: Vec<PathBuf>,
    pub(super) jobs: Vec<JobRef>,
    pub(super) opts: OpenOptions,
}

impl Model {
    /// The directory as it was named.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// The components, in the order they were grouped.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The files checked against their blobs' names (`--verify-blobs`).
    pub fn audits(&self) -> &[Audit] {
        &self.audits
    }

    /// With `--verify-blobs`, the files of a snapshot that are no link into
    /// its `blobs/`, so no blob name says what they should hold: not checked.
    pub fn unaudited(&self) -> &[PathBuf] {
        &self.unaudited
    }

    /// The partial downloads (`*.incomplete`) of a snapshot's repository.
    pub fn incomplete(&self) -> &[PathBuf] {
        &self.incomplete
    }

    /// Warnings about the directory, one line each, for standard error.
    pub fn warnings(&self) -> Vec<String> {
        let line = |p: &PathBuf| {
            format!("{}: a partial download, not part of the label", escape_name(p.as_os_str().as_bytes()))
        };
        let unchecked = |p: &PathBuf| {
            format!(
                "{}: not a link into the repository's blobs/, so --verify-blobs could not check it \
                 (no blob name says what it should hold)",
                escape_name(p.as_os_str().as_bytes())
            )
        };
        self.unaudited.iter().map(unchecked).chain(self.incomplete.iter().map(line)).collect()
    }

    fn audit_source(&self, a: &Audit) -> Option<&Source> {
        match a.source {
            SourceAt::Component(c, f) => self.components.get(c)?.sources().get(f).copied(),
            SourceAt::Index(i) => self.indexes.get(i),
        }
    }

    /// Hashes every job on the current rayon pool and finishes the model.
    pub fn digest(&self) -> Result<Digest> {
        crate::schedule::digest(self, &self.opts.pieces)
    }

    /// Each component's digest (in [`Model::components`] order) from the
    /// jobs' digests (in job order), after checking every audited file
    /// against its blob's name.
    pub fn component_digests(&self, data: &[Sha256Digest]) -> Result<Vec<Sha256Digest>> {
        let mut next = 0usize;
        let mut take = |n: usize| -> &[Sha256Digest] {
            let start = next;
            next = next.saturating_add(n);
            data.get(start..next).unwrap_or(&[])
        };
        let mut digests = Vec::with_capacity(self.components.len());
        for c in &self.components {
            let d = take(c.job_count());
            let mut hasher = Sha256::new();
            let digest = match &c.part {
                Part::Weights(m) => {
                    m.write_skeleton(d, &mut |piece| hasher.update(piece))?;
                    hasher.finalize().into()
                }
                Part::File(_) => *d.first().ok_or_else(|| Error::internal("a file was not hashed"))?,
            };
            digests.push(digest);
        }
        for (a, d) in self.audits.iter().zip(take(self.audits.len())) {
            let got = hex::encode(d.get(..a.blob.len() / 2).unwrap_or_default());
            if got != a.blob {
                let algorithm = if a.blob.len() == 64 { "SHA-256" } else { "Git blob SHA-1" };
                let what = format!("its {algorithm} is {got}, not the name of the blob it links to ({})", a.blob);
                let shown = self.shown.join(OsStr::from_bytes(&a.name));
                return Err(Error::new(ErrorKind::DamagedStore(what)).in_file(&shown));
            }
        }
        Ok(digests)
    }

    /// Each component's own digest (its label, and the data digests of its
    /// jobs), in [`Model::components`] order: what `inspect` and `diff`
    /// hand a weights component's own section.
    pub fn sub_digests(&self, data: &[Sha256Digest]) -> Result<Vec<Digest>> {
        let labels = self.component_digests(data)?;
        let mut next = 0usize;
        let mut out = Vec::with_capacity(labels.len());
        for (c, label) in self.components.iter().zip(labels) {
            let start = next;
            next = next.saturating_add(c.job_count());
            out.push(Digest::from_label(label, data.get(start..next).unwrap_or(&[]).to_vec()));
        }
        Ok(out)
    }

    /// The hashing job `i`: the components' jobs, then the audits'.
    pub fn job(&self, i: usize) -> Option<Job<'_>> {
        match *self.jobs.get(i)? {
            JobRef::Part(c, t) => match &self.components.get(c)?.part {
                Part::Weights(m) => m.job(t),
                Part::File(source) => Some(whole(source, Conversion::none(1, "file"))),
            },
            JobRef::Audit(a) => {
                let audit = self.audits.get(a)?;
                let source = self.audit_source(audit)?;
                let conversion = if audit.blob.len() == 64 {
                    Conversion::none(1, "blob")
                } else {
                    Conversion::git_blob(source.len())
                };
                Some(whole(source, conversion))
            }
        }
    }

    /// The number of hashing jobs.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Every file read, once: each component's files, then the indexes.
    pub fn sources(&self) -> Vec<&Source> {
        let mut s: Vec<&Source> = self.components.iter().flat_map(Component::sources).collect();
        s.extend(self.indexes.iter());
        s
    }

    /// Writes the skeleton from the jobs' digests.
    pub fn write_skeleton(&self, data: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        let digests = self.component_digests(data)?;
        let records: Vec<(Kind, &[u8], Sha256Digest)> =
            self.components.iter().zip(digests).map(|(c, d)| (c.kind, c.name.as_slice(), d)).collect();
        sink(&skeleton(&records));
        Ok(())
    }

    /// Writes the model's `--json` entry.
    pub fn write_json(&self, w: &mut JsonWriter<'_>, path: &Path, digest: &Digest) -> io::Result<()> {
        let digests = self.component_digests(digest.tensor_sha256()).map_err(io::Error::other)?;
        w.begin_object()?;
        w.str_field("path", &path.to_string_lossy())?;
        w.str_field("format", "directory")?;
        w.str_field("spec", "directory-skeleton-v1")?;
        w.str_field("label", &digest.label())?;
        w.key("components")?;
        w.begin_array()?;
        let mut order: Vec<(&Component, Sha256Digest)> = self.components.iter().zip(digests).collect();
        order.sort_by(|a, b| (a.0.kind.bytes(), &a.0.name).cmp(&(b.0.kind.bytes(), &b.0.name)));
        for (c, d) in order {
            w.begin_object()?;
            w.str_field("kind", c.kind.text())?;
            w.name_field("name", &c.name)?;
            w.str_field("digest", &hex::encode(d))?;
            w.key("files")?;
            w.begin_array()?;
            for f in &c.files {
                w.begin_object()?;
                w.name_field("path", f)?;
                w.end_object()?;
            }
            w.end_array()?;
            w.end_object()?;
        }
        w.end_array()?;
        if !self.audits.is_empty() {
            w.field("blobs_verified", self.audits.len())?;
        }
        if !self.unaudited.is_empty() {
            w.key("blobs_unverified")?;
            w.begin_array()?;
            for p in &self.unaudited {
                w.begin_object()?;
                w.name_field("path", p.as_os_str().as_bytes())?;
                w.end_object()?;
            }
            w.end_array()?;
        }
        if !self.incomplete.is_empty() {
            w.key("incomplete_blobs")?;
            w.begin_array()?;
            for p in &self.incomplete {
                w.str(&p.to_string_lossy())?;
            }
            w.end_array()?;
        }
        crate::format::end_entry(w, &self.sources())
    }
}

/// A whole file as one job.
fn whole(source: &Source, conversion: Conversion) -> Job<'_> {
    Job {
        source,
        start: 0,
        len: source.len(),
        conversion,
        subject: Subject::Key(format!("file {}", source.path().display()).into_bytes()),
        gather: None,
    }
}
