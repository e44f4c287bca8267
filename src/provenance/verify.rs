//! `verify` up to the relabelling: read a statement, DSSE envelope or
//! Sigstore bundle, check its signature before a single subject is read,
//! then read every subject and locate it under the root before any is
//! opened. The command line and the Python API both relabel what this
//! returns, through `--check`'s rules, opening each subject with
//! [`Claims::open`]: beneath the root (docs/adr/0019).

#![deny(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::format::OpenOptions;
use crate::provenance::envelope::{self, Signed};
use crate::provenance::keys::PublicKey;
use crate::provenance::{MAX_STATEMENT, PAYLOAD_TYPE, subjects};
use crate::schedule::AnyModel;
use crate::source::Root;

/// What a statement claims, ready to be relabelled.
#[derive(Debug, Clone)]
pub struct Claims {
    /// Every subject: its name as the statement gives it, and its label.
    pub subjects: Vec<subjects::Subject>,
    /// Where each subject is read from, in the same order: opened with
    /// [`Claims::open`], never outside the root.
    pub paths: Vec<PathBuf>,
    /// True when a signature verified with one of the keys; false when no
    /// key was given (nothing about the signer is then known).
    pub signature_checked: bool,
    /// The root, held open: every subject, and every file a subject leads
    /// to, is opened beneath it.
    root: Arc<Root>,
}

impl Claims {
    /// Opens the model at `path`, one of [`Claims::paths`]: beneath the
    /// root, so that no link (however it changes meanwhile) leads a
    /// subject, its shards, an index's files or a directory's entries out
    /// of it; an `ollama:` reference in its store.
    pub fn open(&self, path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
        if path.to_str().is_some_and(|p| p.starts_with(crate::ollama::SCHEME)) {
            return crate::input::open_model(path, opts);
        }
        match path.strip_prefix(self.root.path()) {
            Ok(rel) => crate::input::open_model_beneath(&self.root, rel, path, opts),
            Err(_) => Err(Error::internal("a subject's path is not under the root").in_file(path)),
        }
    }
}

/// Reads `file` and checks it: with `keys`, one of its DSSE signatures must
/// verify with one of them (otherwise [`ErrorKind::SignatureFailed`], and
/// no subject is read); every subject must lie under `root` (by default the
/// file's directory).
pub fn claims(file: &Path, root: Option<&Path>, keys: &[PublicKey]) -> Result<Claims> {
    claims_of(file, root, keys).map_err(|e| e.in_file(file))
}

fn claims_of(file: &Path, root: Option<&Path>, keys: &[PublicKey]) -> Result<Claims> {
    let signed = envelope::read(&read_limited(file)?)?;
    if !keys.is_empty() {
        check_signature(&signed, keys)?;
    }
    let subjects = match &signed {
        Signed::Bare(statement) => subjects::of_statement(statement)?,
        Signed::Dsse { payload, .. } => subjects::read_payload(payload)?,
    };
    let root = root.or_else(|| file.parent()).unwrap_or(Path::new(""));
    // As `locate` joins names to it: the working directory as `.`.
    let root = if root.as_os_str().is_empty() { Path::new(".") } else { root };
    let paths = subjects.iter().map(|s| subjects::locate(root, &s.name)).collect::<Result<Vec<_>>>()?;
    let root = Root::open(root).map_err(|e| {
        let what = format!("the root {}: {}", root.display(), e.detail());
        Error::new(ErrorKind::Io(std::io::Error::other(what)))
    })?;
    Ok(Claims { subjects, paths, signature_checked: !keys.is_empty(), root })
}

fn check_signature(signed: &Signed, keys: &[PublicKey]) -> Result<()> {
    let failed = |what: String| Err(Error::new(ErrorKind::SignatureFailed(what)));
    match signed {
        Signed::Bare(_) => failed("a bare statement carries no signature".into()),
        Signed::Dsse { payload, signatures, .. } => {
            let pae = envelope::pae(PAYLOAD_TYPE, payload);
            if signatures.iter().any(|s| keys.iter().any(|k| k.verifies(&pae, &s.sig))) {
                return Ok(());
            }
            let kinds: Vec<&str> = keys.iter().map(PublicKey::kind).collect();
            failed(format!(
                "none of its {} signatures verifies with the given key ({})",
                signatures.len(),
                kinds.join(", ")
            ))
        }
    }
}

/// Reads at most [`MAX_STATEMENT`] bytes of `path`.
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_STATEMENT.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_STATEMENT {
        return Err(std::io::Error::other(format!("larger than {MAX_STATEMENT} bytes")));
    }
    Ok(bytes)
}
