//! An AI-BOM of labelled models: CycloneDX 1.6 JSON, or SPDX 3.0.1
//! JSON-LD (docs/adr/0028-ai-bom.md).
//!
//! [`Entry::new`] gathers what the BOM says of one labelled model: its
//! label, format and contract, the SHA-256 of each of its files' bytes
//! (hashed again by the scheduler, every file of every model of a run
//! in one run of it: [`Entry::all`]), and what its
//! own metadata says ([`Facts`], each format's own answer). [`cyclonedx`] turns entries into the
//! CycloneDX 1.6 document, [`spdx`] into an SPDX 3.0.1 one: each a pure
//! function of them and a timestamp, so the same models give the same BOM
//! byte for byte when the timestamp is fixed.

mod cyclonedx;
mod spdx;

use std::path::{Path, PathBuf};

use crate::hash::{Conversion, Job, PieceSizes, Sha256Digest};
use crate::schedule::{HashJobs, JobList, hash_sets};
use crate::{AnyModel, Digest, Error, ErrorKind, Result, Subject};

pub use crate::facts::{BaseModel, Facts};
pub use cyclonedx::{MAX_TIMESTAMP, cyclonedx, rfc3339, serial_number};
pub use spdx::spdx;

/// One file of a model: its path as opened, its size, the SHA-256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHash {
    /// The path it was opened by.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes.
    pub sha256: Sha256Digest,
}

/// What the BOM says of one labelled model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The model as it was named (a path as given, `ollama:NAME`), lossily as UTF-8.
    pub reference: String,
    /// Its format (`gguf`, `safetensors`, `ollama`).
    pub format: String,
    /// The contract its label follows.
    pub contract: String,
    /// Its label, in hex.
    pub label: String,
    /// Its files, in the order the model lists them.
    pub files: Vec<FileHash>,
    /// What its metadata says.
    pub facts: Facts,
}

impl Entry {
    /// The entry of `model`, labelled `digest` from the argument `reference`:
    /// each of its files hashed whole on `pool`. A model read from a stream
    /// is refused (its bytes were read once, for the label).
    pub fn new(reference: &Path, model: &AnyModel, digest: &Digest, pool: &rayon::ThreadPool) -> Result<Entry> {
        let mut all = Entry::all(&[(reference, model, digest)], pool);
        all.pop().unwrap_or_else(|| Err(Error::internal("a BOM entry went missing")))
    }

    /// The entries of every labelled model of a run, in their order: every
    /// file of every model hashed whole in one run of the scheduler
    /// (largest first across all of them), each model's files then checked
    /// unchanged. One model's error is its own entry's.
    pub fn all(models: &[(&Path, &AnyModel, &Digest)], pool: &rayon::ThreadPool) -> Vec<Result<Entry>> {
        let sources: Vec<Vec<&crate::Source>> = models.iter().map(|(_, m, _)| m.labelled().sources()).collect();
        let files = hash_files_of(&sources, pool);
        models
            .iter()
            .zip(files)
            .map(|(&(reference, model, digest), files)| entry(reference, model, digest, files?))
            .collect()
    }
}

fn entry(reference: &Path, model: &AnyModel, digest: &Digest, files: Vec<FileHash>) -> Result<Entry> {
    let (format, contract) = model.labelled().contract();
    let mut facts = Facts::default();
    model.facts(&mut facts)?;
    Ok(Entry {
        reference: reference.to_string_lossy().into_owned(),
        format: format.to_owned(),
        contract: contract.to_owned(),
        label: digest.label(),
        files,
        facts,
    })
}

/// The SHA-256 of every file's bytes, hashed on `pool` as tensor data is
/// (mapped or read in pieces, the guard against truncation), each file
/// then checked unchanged since it was opened.
pub fn hash_files(sources: &[&crate::Source], pool: &rayon::ThreadPool) -> Result<Vec<FileHash>> {
    let mut all = hash_files_of(&[sources.to_vec()], pool);
    all.pop().unwrap_or_else(|| Err(Error::internal("a BOM's files went missing")))
}

/// The whole-file jobs of one model's files: refused for a stream, whose
/// bytes went by once, for the label.
fn file_jobs<'a>(sources: &[&'a crate::Source]) -> Result<JobList<'a>> {
    if let Some(s) = sources.iter().find(|s| s.is_stream()) {
        return Err(Error::new(ErrorKind::NotRegularFile("a stream: a BOM hashes each file again; name a file"))
            .in_file(s.path()));
    }
    let job = |s: &&'a crate::Source| Job {
        source: s,
        start: 0,
        len: s.len(),
        conversion: Conversion::none(1, "file"),
        subject: Subject::Key(b"the whole file".to_vec()),
        gather: None,
    };
    Ok(JobList(sources.iter().map(job).collect()))
}

/// Every file of every model (`models`: each one's files) hashed in one
/// run of the scheduler, then each model's files checked unchanged.
fn hash_files_of(models: &[Vec<&crate::Source>], pool: &rayon::ThreadPool) -> Vec<Result<Vec<FileHash>>> {
    let mut refused: Vec<Option<Error>> = Vec::with_capacity(models.len());
    let mut lists: Vec<JobList<'_>> = Vec::with_capacity(models.len());
    for sources in models {
        let (list, why) = match file_jobs(sources) {
            Ok(list) => (list, None),
            Err(e) => (JobList::default(), Some(e)),
        };
        lists.push(list);
        refused.push(why);
    }
    let sets: Vec<&dyn HashJobs> = lists.iter().map(|l| l as &dyn HashJobs).collect();
    let hashed = hash_sets(&sets, Some(pool), &PieceSizes::default(), &|_| Ok(()));
    refused
        .into_iter()
        .zip(hashed)
        .zip(models)
        .map(|((refused, hashed), sources)| {
            if let Some(e) = refused {
                return Err(e);
            }
            sources
                .iter()
                .zip(hashed?)
                .map(|(s, sha256)| {
                    s.check_unchanged()?;
                    Ok(FileHash { path: s.path().to_path_buf(), size: s.len(), sha256 })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_refused_and_files_are_hashed_whole() {
        let pool = crate::schedule::hashing_pool(2).unwrap();
        let stream = crate::Source::from_reader(Path::new("-"), Box::new(std::io::Cursor::new(b"GGUF".to_vec())));
        let e = hash_files(&[&stream], &pool).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::NotRegularFile(_)), "{e}");
        assert!(e.to_string().contains("a BOM hashes each file again"), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"abc").unwrap();
        std::fs::write(&b, vec![7u8; 3 << 20]).unwrap();
        let sa = crate::Source::open(&a, crate::source::ReadMode::Mmap).unwrap();
        let sb = crate::Source::open(&b, crate::source::ReadMode::Pread).unwrap();
        let h = hash_files(&[&sa, &sb], &pool).unwrap();
        use sha2::Digest as _;
        assert_eq!(h[0].sha256, <[u8; 32]>::from(sha2::Sha256::digest(b"abc")));
        assert_eq!(h[1].sha256, <[u8; 32]>::from(sha2::Sha256::digest(vec![7u8; 3 << 20])));
        assert_eq!((h[0].size, &h[1].path), (3, &b));
    }

    #[test]
    fn every_model_s_files_are_whole_file_jobs_of_one_run_and_a_refusal_is_its_model_s_own() {
        let pool = crate::schedule::hashing_pool(2).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"abc").unwrap();
        std::fs::write(&b, vec![9u8; 1 << 20]).unwrap();
        let sa = crate::Source::open(&a, crate::source::ReadMode::Mmap).unwrap();
        let sb = crate::Source::open(&b, crate::source::ReadMode::Mmap).unwrap();
        let jobs = file_jobs(&[&sa, &sb]).unwrap();
        let whole: Vec<(u64, u64, bool)> = jobs.0.iter().map(|j| (j.start, j.len, j.gather.is_none())).collect();
        assert_eq!(whole, [(0, 3, true), (0, 1 << 20, true)]);

        let stream = crate::Source::from_reader(Path::new("-"), Box::new(std::io::Cursor::new(b"GGUF".to_vec())));
        let r = hash_files_of(&[vec![&sb], vec![&stream], vec![&sa, &sb]], &pool);
        use sha2::Digest as _;
        let sha = |bytes: &[u8]| <[u8; 32]>::from(sha2::Sha256::digest(bytes));
        let sums = |r: &Result<Vec<FileHash>>| r.as_ref().unwrap().iter().map(|f| f.sha256).collect::<Vec<_>>();
        assert_eq!(sums(&r[0]), [sha(&[9u8; 1 << 20])]);
        assert!(matches!(r[1].as_ref().unwrap_err().kind(), ErrorKind::NotRegularFile(_)));
        assert_eq!(sums(&r[2]), [sha(b"abc"), sha(&[9u8; 1 << 20])]);
    }
}
