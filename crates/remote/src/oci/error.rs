//! The OCI registry error kinds: a reference, a registry's answers, a
//! manifest, and a blob whose bytes are not its digest's.
//!
//! Carried by the core's [`ErrorKind::Format`](crate::ErrorKind::Format) and
//! read back with [`ErrorKind::of`](crate::ErrorKind::of) (docs/adr/0041).
//! No message holds a credential: URLs are shown without their query
//! (a storage redirect's query is a signature) and never with a user or
//! password.

use crate::error::{Error, ErrorKind, LayerError, LayerKind};

/// Why an `oci://` input was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OciErrorKind {
    /// A malformed `oci://` reference.
    #[error("not a valid OCI reference {reference:?}: {why}")]
    Reference {
        /// The reference as given.
        reference: String,
        /// What is wrong.
        why: String,
    },
    /// The registry does not hold the manifest or blob (HTTP 404): the tag
    /// or digest named.
    #[error("{what} is not in the registry ({why})")]
    NotFound {
        /// The reference or blob, named.
        what: String,
        /// The registry's own words, if it gave an error code.
        why: String,
    },
    /// The registry refused the credentials, or asked for some none were
    /// found for.
    #[error("the registry {registry} refused access: {why}")]
    Unauthorized {
        /// The registry host.
        registry: String,
        /// What was tried, and where credentials would come from.
        why: String,
    },
    /// A request failed: the connection, a status, a redirect refused.
    #[error("{url}: {why}")]
    Http {
        /// The URL without its query.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// A manifest or index that breaks the spec, or holds no model this
    /// tool reads.
    #[error("{what}: {why}")]
    Manifest {
        /// The manifest (its reference or digest).
        what: String,
        /// What is wrong.
        why: String,
    },
    /// Bytes whose SHA-256 or length is not the one their descriptor
    /// declares: a tampered or damaged blob or manifest, never labelled.
    #[error("{what}: the registry's bytes are not the ones its digest names (expected {expected}, found {found})")]
    DigestMismatch {
        /// The blob or manifest, named.
        what: String,
        /// The declared digest or size.
        expected: String,
        /// What the bytes gave.
        found: String,
    },
}

impl LayerError for OciErrorKind {
    /// A tag or blob the registry does not hold is a missing input to
    /// `--ignore-missing`.
    fn is_not_found(&self) -> bool {
        matches!(self, OciErrorKind::NotFound { .. })
    }
}

impl From<OciErrorKind> for ErrorKind {
    fn from(kind: OciErrorKind) -> Self {
        ErrorKind::Format(LayerKind::new(kind))
    }
}

impl From<OciErrorKind> for Error {
    fn from(kind: OciErrorKind) -> Self {
        Error::new(kind)
    }
}

/// A URL as messages show it: scheme, host, port and path; no user, no
/// password, no query, no fragment.
pub fn shown_url(url: &reqwest::Url) -> String {
    let mut shown = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    shown.push_str(url.path());
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_manifest_or_blob_is_not_found() {
        assert!(Error::new(OciErrorKind::NotFound { what: "x".into(), why: String::new() }).is_not_found());
        assert!(!Error::new(OciErrorKind::Http { url: "u".into(), why: "w".into() }).is_not_found());
    }

    #[test]
    fn urls_are_shown_without_secrets() {
        let u = reqwest::Url::parse("https://user:pw@storage.example:8443/blob/x?X-Amz-Signature=abc#f").unwrap();
        assert_eq!(shown_url(&u), "https://storage.example:8443/blob/x");
    }
}
