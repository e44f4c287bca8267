//! An AI-BOM of labelled models: CycloneDX 1.6 JSON, or SPDX 3.0.1
//! JSON-LD (docs/adr/0028-ai-bom.md).
//!
//! [`Entry::new`] gathers what the BOM says of one labelled model: its
//! label, format and contract, the SHA-256 of each of its files' bytes
//! (hashed again, on the hashing pool, through [`hash_job`]), and what its
//! own metadata says ([`Facts`], each format's own answer). [`cyclonedx`] turns entries into the
//! CycloneDX 1.6 document, [`spdx`] into an SPDX 3.0.1 one: each a pure
//! function of them and a timestamp, so the same models give the same BOM
//! byte for byte when the timestamp is fixed.

mod cyclonedx;
mod spdx;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::hash::{Conversion, Job, PieceSizes, Sha256Digest, hash_job};
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
        let labelled = model.labelled();
        let (format, contract) = labelled.contract();
        let files = hash_files(&labelled.sources(), pool)?;
        Ok(Entry {
            reference: reference.to_string_lossy().into_owned(),
            format: format.to_owned(),
            contract: contract.to_owned(),
            label: digest.label(),
            files,
            facts: {
                let mut facts = Facts::default();
                model.facts(&mut facts)?;
                facts
            },
        })
    }
}

/// The SHA-256 of every file's bytes, hashed on `pool` as tensor data is
/// (mapped or read in pieces, the guard against truncation), each file
/// then checked unchanged since it was opened.
pub fn hash_files(sources: &[&crate::Source], pool: &rayon::ThreadPool) -> Result<Vec<FileHash>> {
    if let Some(s) = sources.iter().find(|s| s.is_stream()) {
        // Its bytes went by once, for the label: there is nothing to hash again.
        return Err(Error::new(ErrorKind::NotRegularFile("a stream: a BOM hashes each file again; name a file"))
            .in_file(s.path()));
    }
    let pieces = PieceSizes::default();
    pool.install(|| {
        sources
            .par_iter()
            .map(|s| {
                let job = Job {
                    source: s,
                    start: 0,
                    len: s.len(),
                    conversion: Conversion::none(1, "file"),
                    subject: Subject::Key(b"the whole file".to_vec()),
                    gather: None,
                };
                let sha256 = hash_job(&job, &pieces, &|_| Ok(()))?;
                s.check_unchanged()?;
                Ok(FileHash { path: s.path().to_path_buf(), size: s.len(), sha256 })
            })
            .collect()
    })
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
}
