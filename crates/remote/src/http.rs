//! The HTTP client of the requests `object_store` does not make for us
//! (an OCI registry's API, a WebDAV listing): one builder, so that every
//! such client trusts the same authorities, follows no redirect by
//! itself and gives up on the same timeouts.

use std::path::Path;
use std::time::Duration;

use crate::{Error, Result};

/// A client trusting the system's roots and those of `ca_file` (a PEM
/// bundle), following no redirect (each caller decides, so credentials
/// never follow one), with connect and read timeouts.
pub(crate) fn client(ca_file: Option<&Path>) -> Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder();
    if let Some(file) = ca_file {
        let pem = std::fs::read(file).map_err(|e| Error::from(e).in_file(file))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
            let why = std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not PEM certificates: {e}"));
            Error::from(why).in_file(file)
        })?;
        for c in certs {
            builder = builder.add_root_certificate(c);
        }
    }
    builder
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(120))
        .user_agent(concat!("gguf-digest/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::from(std::io::Error::other(format!("no HTTP client: {e}"))))
}

/// A reqwest error's words and its causes', without the URL it carries
/// (which may hold a storage signature in its query).
pub(crate) fn error_words(e: &reqwest::Error) -> String {
    let mut s = String::new();
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    s.push_str(if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_body() || e.is_decode() {
        "the body could not be read"
    } else {
        "the request failed"
    });
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_missing_or_not_pem_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = client(Some(&missing)).unwrap_err().to_string();
        assert!(e.contains("missing.pem"), "{e}");
        let bad = dir.path().join("bad.pem");
        std::fs::write(&bad, "-----BEGIN CERTIFICATE-----\n@@not base64@@\n-----END CERTIFICATE-----\n").unwrap();
        let e = client(Some(&bad)).unwrap_err().to_string();
        assert!(e.contains("bad.pem") && e.contains("not PEM certificates"), "{e}");
        assert!(client(None).is_ok());
    }

    #[test]
    fn an_error_s_words_say_what_failed_without_its_url() {
        // A port nothing listens on: refused at once. The URL's query (a
        // storage signature, say) must not reach the words.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let _in = rt.enter();
        let http = client(None).unwrap();
        let url = format!("http://127.0.0.1:{port}/blob?X-Amz-Signature=s3cr3t");
        let e = rt.block_on(http.get(url).send()).unwrap_err();
        let words = error_words(&e);
        assert!(words.starts_with("could not connect"), "{words}");
        assert!(!words.contains("s3cr3t") && !words.contains("127.0.0.1"), "{words}");
    }
}
