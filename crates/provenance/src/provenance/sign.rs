//! `sign`: the statement `statement` writes for the same models, signed
//! into a Sigstore bundle (docs/adr/0026-signing.md), and the bundle
//! written whole or not at all.

use std::io::{self, Write as _};
use std::path::Path;

use crate::error::Result;
use crate::provenance::private_keys::SigningKey;
use crate::provenance::statement::{self, Subject};
use crate::provenance::{PAYLOAD_TYPE, bundle};

/// The bundle of the statement of these labelled models (byte for byte
/// what `gguf-digest statement` prints for them, final newline included),
/// signed by `key` and naming it by cosign's hint.
pub fn sign_statement(labelled: &[Subject<'_>], leaves: bool, key: &SigningKey) -> Result<Vec<u8>> {
    let payload = statement::statement_text(labelled, leaves)?;
    Ok(bundle::write(payload.as_bytes(), PAYLOAD_TYPE, key, &key.cosign_hint()?))
}

/// Writes `bytes` to `path` whole or not at all: into a new file beside
/// it, flushed to disk, then renamed over `path`. The new file's name is
/// random and created exclusively (retried on a clash, by `tempfile`), so
/// the file removed on an error is always the one this call made, never one
/// another process left under a guessable name; `path` is as it was.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| io::Error::other("names no file"))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    // 0666 before the umask, as `File::create` makes it: a signature is
    // not a secret.
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".partial")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    // On an error the new file is dropped, which removes it.
    temp.persist(path).map(drop).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_fails_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.sigstore.json");
        write_whole(&out, b"one").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"one");
        write_whole(&out, b"two").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"two");
        // A directory in the way: the rename fails, no partial file stays.
        let blocked = dir.path().join("d");
        std::fs::create_dir(&blocked).unwrap();
        std::fs::write(blocked.join("x"), b"").unwrap();
        assert!(write_whole(&blocked, b"three").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_file_someone_else_left_under_the_old_temporary_name_is_not_touched() {
        // The name the old code wrote to, and removed when it could not create it.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m.sig");
        let theirs = dir.path().join(format!(".m.sig.{}.partial", std::process::id()));
        std::fs::write(&theirs, b"not ours").unwrap();
        write_whole(&out, b"signed").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"signed");
        assert_eq!(std::fs::read(&theirs).unwrap(), b"not ours");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
