//! Ollama model names and the store: `[host/][namespace/]model[:tag]` with
//! the defaults `registry.ollama.ai`, `library` and `latest`; the store root
//! `$OLLAMA_MODELS` or `~/.ollama/models`; manifests under
//! `manifests/<host>/<namespace>/<model>/<tag>` and blobs at
//! `blobs/sha256-<hex>`. The only functions that turn names and digests read
//! from an input into paths, and they refuse anything that could leave the
//! store.

use crate::ollama::OllamaErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::source::Root;

/// The prefix of an argument that names an Ollama model.
pub const SCHEME: &str = "ollama:";
/// The default registry host.
pub const DEFAULT_HOST: &str = "registry.ollama.ai";
/// The default namespace.
pub const DEFAULT_NAMESPACE: &str = "library";
/// The default tag.
pub const DEFAULT_TAG: &str = "latest";

/// A model name with every part filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelName {
    /// The registry host.
    pub host: String,
    /// The namespace.
    pub namespace: String,
    /// The model.
    pub model: String,
    /// The tag.
    pub tag: String,
}

fn bad_name(name: &str, why: impl Into<String>) -> Error {
    Error::new(OllamaErrorKind::OllamaName { name: name.to_string(), why: why.into() })
}

/// A part of a name or a path: not empty, not `.` or `..`, no `/`, `\` or NUL.
fn plain_part(name: &str, part: &str, what: &str) -> Result<()> {
    let why = if part.is_empty() {
        Some("is empty")
    } else if part == "." || part == ".." {
        Some("is . or ..")
    } else if part.contains(['/', '\\', '\0']) {
        Some("holds /, \\ or NUL")
    } else {
        None
    };
    match why {
        Some(why) => Err(bad_name(name, format!("its {what} '{}' {why}", crate::text::escape_bytes(part.as_bytes())))),
        None => Ok(()),
    }
}

impl ModelName {
    /// Parses `[host/][namespace/]model[:tag]` (the text after `ollama:`).
    pub fn parse(name: &str) -> Result<ModelName> {
        // The tag follows the last ':' after the last '/': a host may carry
        // a port (`localhost:11434/ns/m`).
        let last_slash = name.rfind('/').map_or(0, |i| i.saturating_add(1));
        let (path, tag) = match name.get(last_slash..).and_then(|tail| tail.rfind(':')) {
            Some(i) => {
                let at = last_slash.saturating_add(i);
                (name.get(..at).unwrap_or(""), name.get(at.saturating_add(1)..).unwrap_or(""))
            }
            None => (name, DEFAULT_TAG),
        };
        let parts: Vec<&str> = path.split('/').collect();
        let (host, namespace, model) = match parts.as_slice() {
            [m] => (DEFAULT_HOST, DEFAULT_NAMESPACE, *m),
            [ns, m] => (DEFAULT_HOST, *ns, *m),
            [h, ns, m] => (*h, *ns, *m),
            _ => return Err(bad_name(name, "it has more than three /-separated parts")),
        };
        plain_part(name, host, "host")?;
        plain_part(name, namespace, "namespace")?;
        plain_part(name, model, "model")?;
        plain_part(name, tag, "tag")?;
        Ok(ModelName { host: host.into(), namespace: namespace.into(), model: model.into(), tag: tag.into() })
    }

    /// The manifest's path in the store at `root`, as written.
    pub fn manifest_path(&self, root: &Path) -> PathBuf {
        root.join(self.manifest_rel())
    }

    /// The manifest's path inside the store, as written.
    fn manifest_rel(&self) -> PathBuf {
        Path::new("manifests").join(&self.host).join(&self.namespace).join(&self.model).join(&self.tag)
    }

    /// The manifest this name means in the store `store`, as Ollama finds
    /// it: the path as written if it exists, else the one path whose parts
    /// match the name's ignoring ASCII case (Ollama's server looks names up
    /// that way: `SmolLM2` finds `smollm2`). Two entries that differ only in
    /// case are an error naming both; none is the path as written (whose
    /// opening then says it is missing). Looked at and listed beneath the
    /// store: a directory linked out of it is never read.
    pub fn resolve(&self, store: &Root) -> Result<PathBuf> {
        let root = store.path();
        let exact = self.manifest_path(root);
        if store.file_type(&self.manifest_rel()).is_ok_and(|t| t == rustix::fs::FileType::RegularFile) {
            return Ok(exact);
        }
        let mut dir = PathBuf::from("manifests");
        for part in [&self.host, &self.namespace, &self.model, &self.tag] {
            let Ok(entries) = store.entries(&dir) else { return Ok(exact) };
            let matches: Vec<PathBuf> = entries
                .into_iter()
                .filter(|n| n.to_str().is_some_and(|n| n.eq_ignore_ascii_case(part)))
                .map(|n| dir.join(n))
                .collect();
            match matches.as_slice() {
                [] => return Ok(exact),
                [one] => dir = one.clone(),
                many => {
                    let list: Vec<String> = many.iter().map(|p| root.join(p).display().to_string()).collect();
                    let why =
                        format!("it matches {} entries that differ only in case: {}", many.len(), list.join(", "));
                    return Err(bad_name(&self.display(), why));
                }
            }
        }
        Ok(root.join(dir))
    }

    /// `host/namespace/model:tag`.
    pub fn display(&self) -> String {
        format!("{}/{}/{}:{}", self.host, self.namespace, self.model, self.tag)
    }
}

/// The store root: `$OLLAMA_MODELS` if set and not empty, else
/// `~/.ollama/models` (the home directory as Ollama's Go finds it: `$HOME`,
/// `%USERPROFILE%` on Windows; the same folder on macOS).
pub fn store_root() -> Result<PathBuf> {
    store_root_from(std::env::var_os("OLLAMA_MODELS"), crate::source::home_dir())
}

/// [`store_root`] from the variable's value and the home directory.
fn store_root_from(variable: Option<std::ffi::OsString>, home: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(root) = variable.filter(|r| !r.is_empty()) {
        return Ok(PathBuf::from(root));
    }
    match home {
        Some(home) => Ok(home.join(".ollama").join("models")),
        None => {
            let why = format!("neither OLLAMA_MODELS nor {} is set", crate::source::HOME_VAR);
            Err(Error::new(OllamaErrorKind::NoStore(why)))
        }
    }
}

/// The 64 lowercase hex digits of a layer digest `sha256:<hex>` (upper
/// case read as lower case); any other string is an error.
pub fn digest_hex(digest: &str) -> Result<String> {
    let hex = digest.strip_prefix("sha256:").filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    match hex {
        Some(h) => Ok(h.to_ascii_lowercase()),
        None => Err(Error::schema(format!(
            "layer digest '{}' is not sha256: and 64 hex digits",
            crate::text::escape_bytes(digest.as_bytes())
        ))),
    }
}

/// The blob of a layer digest in the store at `root`.
pub fn blob_path(root: &Path, digest: &str) -> Result<PathBuf> {
    Ok(root.join(blob_rel(digest)?))
}

/// The blob of a layer digest, inside its store.
pub(crate) fn blob_rel(digest: &str) -> Result<PathBuf> {
    Ok(Path::new("blobs").join(format!("sha256-{}", digest_hex(digest)?)))
}

#[cfg(test)]
// Tests index their own fixtures, never input bytes.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn full(name: &str) -> String {
        ModelName::parse(name).map(|n| n.display()).unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn no_store_without_the_variable_or_a_home() {
        for variable in [None, Some("".into())] {
            let e = store_root_from(variable, None).unwrap_err();
            assert!(matches!(e.kind().of::<OllamaErrorKind>(), Some(OllamaErrorKind::NoStore(_))), "{e}");
            assert!(e.to_string().starts_with("neither OLLAMA_MODELS nor "), "{e}");
        }
        assert_eq!(store_root_from(Some("s".into()), None).unwrap(), Path::new("s"));
        assert_eq!(store_root_from(None, Some("h".into())).unwrap(), Path::new("h/.ollama/models"));
    }

    #[test]
    fn names_take_ollamas_defaults() {
        assert_eq!(full("smollm2"), "registry.ollama.ai/library/smollm2:latest");
        assert_eq!(full("smollm2:135m"), "registry.ollama.ai/library/smollm2:135m");
        assert_eq!(full("me/m:v1"), "registry.ollama.ai/me/m:v1");
        assert_eq!(full("localhost:11434/me/m"), "localhost:11434/me/m:latest");
        assert_eq!(full("h/ns/m:t"), "h/ns/m:t");
        let n = ModelName::parse("smollm2").unwrap();
        assert_eq!(n.manifest_path(Path::new("R")), Path::new("R/manifests/registry.ollama.ai/library/smollm2/latest"));
    }

    #[test]
    fn names_that_could_leave_the_store_are_refused() {
        for bad in ["", ":t", "m:", "../m", "a/../m", "ns/..", "m:..", "./m", "a/b/c/d", "a\\b", "m\0", "a//m", "/m"] {
            let e = ModelName::parse(bad).unwrap_err();
            assert!(
                matches!(e.kind().of::<OllamaErrorKind>(), Some(OllamaErrorKind::OllamaName { .. })),
                "{bad:?}: {e}"
            );
        }
    }

    #[test]
    fn digests_are_sha256_and_64_hex_digits() {
        let hex = "a".repeat(64);
        assert_eq!(
            blob_path(Path::new("R"), &format!("sha256:{hex}")).unwrap(),
            Path::new(&format!("R/blobs/sha256-{hex}"))
        );
        assert_eq!(digest_hex(&format!("sha256:{}", "AB".repeat(32))).unwrap(), "ab".repeat(32));
        for bad in [
            String::new(),
            hex.clone(),
            format!("sha256:{}", &hex[1..]),
            format!("sha512:{hex}"),
            format!("sha256:{hex}0"),
            format!("sha256:{}/", &hex[1..]),
            format!("sha256-{hex}"),
            format!("sha256:../{}", &hex[3..]),
        ] {
            assert!(digest_hex(&bad).is_err(), "{bad}");
        }
    }
}
