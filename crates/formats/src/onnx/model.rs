//! An ONNX model file opened: its `ModelProto` read over the whole file
//! (the guarded map, or read into memory with `--no-mmap`), its external
//! files opened beneath its directory (X6), the work bound checked (X5),
//! and one hashing job per tensor whose elements lie in a file (`raw_data`
//! or external data), over the file's own bytes.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::read::{self, Parsed};
use super::tensor::{Data, Tensor, check_last_byte};
use super::wire::Msg;
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::format::OpenOptions;
use crate::hash::{Conversion, Job, Sha256Digest, Swap};
use crate::source::{Source, Step};

/// A tensor's hashing job: which file (0 the model, `k` external file
/// `k − 1`), where.
#[derive(Debug, Clone, Copy)]
struct JobSpec {
    tensor: usize,
    file: usize,
    start: u64,
    len: u64,
    conversion: Conversion,
}

/// One opened ONNX model.
#[derive(Debug)]
pub struct Model {
    source: Source,
    parsed: Parsed,
    externals: Vec<Source>,
    /// Each external file's location as the model names it.
    locations: Vec<Vec<u8>>,
    jobs: Vec<JobSpec>,
    /// Per tensor, its job, when its elements are hashed from a file.
    job_of: Vec<Option<usize>>,
    /// Per tensor, the external file its elements lie in.
    file_of: Vec<Option<usize>>,
}

fn onnx_err(msg: impl Into<String>) -> Error {
    Error::new(crate::onnx::OnnxErrorKind::Onnx(msg.into()))
}

/// The prefix parser: the whole file is the message.
fn parse_whole(bytes: &[u8], len: u64) -> std::result::Result<(Parsed, u64), Step> {
    if (bytes.len() as u64) < len {
        return Err(Step::NeedMore(len));
    }
    read::parse(bytes).map(|p| (p, len)).map_err(Step::Fail)
}

/// The SHA-256 of no bytes.
const EMPTY_SHA256: Sha256Digest = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41,
    0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

/// How a tensor's stored bytes are hashed: as stored, in whole elements;
/// a `BOOL`'s each checked to be 0 or 1.
fn conversion(t: &Tensor) -> Conversion {
    let block = (t.dtype.bits / 8).max(1);
    if t.dtype.code == 9 {
        Conversion { swap: Swap::Bool, ..Conversion::none(1, "BOOL") }
    } else {
        Conversion::none(block, t.dtype.name)
    }
}

impl Model {
    /// Opens the ONNX model an open file holds.
    pub fn from_source(source: Source, opts: OpenOptions) -> Result<Model> {
        let path = source.path().to_path_buf();
        Model::open(source, opts).map_err(|e| e.in_file(&path))
    }

    fn open(source: Source, opts: OpenOptions) -> Result<Model> {
        let parsed = read_file(&source)?;
        let beside = if parsed.tensors.iter().any(|t| matches!(t.data, Data::External(_))) {
            Some(source.beside()?)
        } else {
            None
        };
        let mut open_external = |location: &[u8]| -> Result<Source> {
            let beside = beside.as_ref().ok_or_else(|| Error::internal("external data without a directory"))?;
            beside.open_below(Path::new(OsStr::from_bytes(location)), opts.read_mode)
        };
        Model::from_read(source, parsed, &mut open_external)
    }

    /// The model of a file already read ([`read_file`]), each external
    /// file opened by `open_external` from its location as the model names
    /// it (once per location): beside the model, or, in a directory, the
    /// file the walk found there.
    pub(crate) fn from_read(
        source: Source,
        parsed: Parsed,
        open_external: &mut dyn FnMut(&[u8]) -> Result<Source>,
    ) -> Result<Model> {
        let mut model = Model {
            source,
            parsed,
            externals: Vec::new(),
            locations: Vec::new(),
            jobs: Vec::new(),
            job_of: Vec::new(),
            file_of: Vec::new(),
        };
        model.open_externals(open_external)?;
        model.check_work()?;
        model.make_jobs();
        Ok(model)
    }
}

/// Reads an open model file whole (X1 to X5; its external files are named,
/// not opened): standard input and an empty file refused.
pub(crate) fn read_file(source: &Source) -> Result<Parsed> {
    if source.is_stream() {
        return Err(onnx_err(
            "an ONNX model cannot be read from standard input: its external data is named from its directory; name the file instead",
        ));
    }
    if source.is_empty() {
        return Err(Error::new(ErrorKind::Empty));
    }
    source.parse(parse_whole)
}

/// The distinct external locations of a model read, in the order first
/// named: the files it needs beside it.
pub(crate) fn locations(parsed: &Parsed) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for t in &parsed.tensors {
        if let Data::External(ext) = &t.data
            && seen.insert(ext.location.as_slice())
        {
            out.push(ext.location.clone());
        }
    }
    out
}

impl Model {
    /// Opens every external file (once per location) and checks each
    /// tensor's range in it (X6).
    fn open_externals(&mut self, open_external: &mut dyn FnMut(&[u8]) -> Result<Source>) -> Result<()> {
        let mut by_location: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut file_of = vec![None; self.parsed.tensors.len()];
        for (i, t) in self.parsed.tensors.iter_mut().enumerate() {
            let Data::External(ext) = &t.data else { continue };
            let shown_loc = crate::text::escape_bytes(&ext.location);
            let k = match by_location.get(&ext.location) {
                Some(&k) => k,
                None => {
                    let s = open_external(&ext.location).map_err(|e| {
                        let why = match e.kind() {
                            ErrorKind::OutsideRoot { .. } => "leads outside the model's directory".to_string(),
                            k => k.to_string(),
                        };
                        t.err(format!("external location '{shown_loc}': {why}"))
                    })?;
                    self.externals.push(s);
                    self.locations.push(ext.location.clone());
                    let k = self.externals.len().saturating_sub(1);
                    by_location.insert(ext.location.clone(), k);
                    k
                }
            };
            let Some(file) = self.externals.get(k) else { continue };
            let size = file.len();
            if ext.offset > size {
                return Err(
                    t.err(format!("external offset {} past the end of '{shown_loc}' ({size} bytes)", ext.offset))
                );
            }
            let length = ext.length.unwrap_or(size.saturating_sub(ext.offset));
            if ext.offset.checked_add(length).is_none_or(|e| e > size) {
                return Err(t.err(format!(
                    "external range {} + {length} past the end of '{shown_loc}' ({size} bytes)",
                    ext.offset
                )));
            }
            if length != t.nbytes {
                return Err(
                    t.err(format!("external length {length}, {} elements of {} take {}", t.n, t.dtype.name, t.nbytes))
                );
            }
            if t.dtype.is_packed() && length > 0 {
                let mut last = [0u8; 1];
                file.read_exact_at(&mut last, ext.offset.saturating_add(length).saturating_sub(1))?;
                check_last_byte(t, Some(last[0]))?;
            }
            let (offset, len) = (ext.offset, length);
            t.data =
                Data::External(super::tensor::External { location: ext.location.clone(), offset, length: Some(len) });
            if let Some(slot) = file_of.get_mut(i) {
                *slot = Some(k);
            }
        }
        self.file_of = file_of;
        Ok(())
    }

    /// X5's work bound: the element bytes of all tensors at most 16 times
    /// the files' bytes, plus 1 MiB.
    fn check_work(&self) -> Result<()> {
        // One file reached by two names (a link, or the model itself) counts once.
        let mut seen = std::collections::HashSet::new();
        let files = std::iter::once(&self.source)
            .chain(&self.externals)
            .filter(|s| s.device_inode().is_none_or(|id| seen.insert(id)))
            .fold(0u64, |a, s| a.saturating_add(s.len()));
        let bound = files.saturating_mul(16).saturating_add(1 << 20);
        let mut total: u64 = 0;
        for t in &self.parsed.tensors {
            total = total.saturating_add(t.nbytes);
            if total > bound {
                return Err(t.err(format!("the elements of all tensors exceed the work bound ({bound} bytes)")));
            }
        }
        Ok(())
    }

    fn make_jobs(&mut self) {
        let mut job_of = vec![None; self.parsed.tensors.len()];
        for (i, t) in self.parsed.tensors.iter().enumerate() {
            let (file, start, len) = match &t.data {
                Data::Raw { start, len } => (0, *start, *len),
                Data::External(e) => {
                    let k = self.file_of.get(i).copied().flatten().map_or(0, |k| k.saturating_add(1));
                    (k, e.offset, e.length.unwrap_or(0))
                }
                Data::Empty | Data::Typed(_) => continue,
            };
            if len == 0 || (file == 0 && !matches!(t.data, Data::Raw { .. })) {
                continue;
            }
            if let Some(slot) = job_of.get_mut(i) {
                *slot = Some(self.jobs.len());
            }
            self.jobs.push(JobSpec { tensor: i, file, start, len, conversion: conversion(t) });
        }
        self.job_of = job_of;
    }

    /// The model file.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The external files, in the order first named.
    pub fn externals(&self) -> &[Source] {
        &self.externals
    }

    /// Each external file's location, as the model names it.
    pub fn locations(&self) -> &[Vec<u8>] {
        &self.locations
    }

    /// The `ModelProto`.
    pub fn proto(&self) -> &Msg {
        &self.parsed.model
    }

    /// Every tensor, in the order read.
    pub fn tensors(&self) -> &[Tensor] {
        &self.parsed.tensors
    }

    /// The external file tensor `i` lies in.
    pub fn file_of(&self, i: usize) -> Option<usize> {
        self.file_of.get(i).copied().flatten()
    }

    /// The number of hashing jobs.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Job `i`.
    pub fn job(&self, i: usize) -> Option<Job<'_>> {
        let spec = self.jobs.get(i)?;
        let source = match spec.file {
            0 => &self.source,
            k => self.externals.get(k.checked_sub(1)?)?,
        };
        let t = self.parsed.tensors.get(spec.tensor)?;
        Some(Job {
            source,
            start: spec.start,
            len: spec.len,
            conversion: spec.conversion,
            subject: Subject::Tensor(t.name.clone()),
            gather: None,
        })
    }

    /// Tensor `i`'s elements digest, from the jobs' digests.
    pub fn elements_sha256(&self, i: usize, data: &[Sha256Digest]) -> Sha256Digest {
        match (self.parsed.tensors.get(i).map(|t| &t.data), self.job_of.get(i).copied().flatten()) {
            (Some(Data::Typed(d)), _) => *d,
            (_, Some(j)) => data.get(j).copied().unwrap_or(EMPTY_SHA256),
            _ => EMPTY_SHA256,
        }
    }

    /// Writes the skeleton, given the jobs' digests.
    pub fn write_skeleton(&self, data: &[Sha256Digest], sink: &mut dyn FnMut(&[u8])) {
        let elements = |i: usize| self.elements_sha256(i, data);
        let mut w = super::skeleton::Writer { tensors: &self.parsed.tensors, elements: &elements, sink };
        w.model(&self.parsed.model);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_digest_is_sha256_of_nothing() {
        use sha2::Digest as _;
        let d: Sha256Digest = sha2::Sha256::digest(b"").into();
        assert_eq!(d, EMPTY_SHA256);
    }
}
