//! What the client reads of an answer besides its status: the
//! authentication challenges, a bounded body, a registry's error code.

use reqwest::Url;
use reqwest::header::WWW_AUTHENTICATE;

use super::http_error;
use crate::Result;
use crate::http::error_words;
use crate::oci::auth;

/// The challenges of a response's `WWW-Authenticate` headers.
pub(super) fn challenges(response: &reqwest::Response) -> Vec<auth::Challenge> {
    response
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(auth::parse_challenges)
        .flatten()
        .collect()
}

/// The body, refused past `limit` bytes (never held whole first).
pub(super) async fn read_limited(response: &mut reqwest::Response, limit: u64, url: &Url) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(piece) = response.chunk().await.map_err(|e| http_error(url, error_words(&e)))? {
        if (out.len() as u64).saturating_add(piece.len() as u64) > limit {
            return Err(http_error(url, format!("a body longer than {limit} bytes")));
        }
        out.extend_from_slice(&piece);
    }
    Ok(out)
}

/// The first `errors[].code` of a registry's error body, if it has one.
pub(super) async fn registry_error_code(response: &mut reqwest::Response, url: &Url) -> Option<String> {
    let body = read_limited(response, 64 << 10, url).await.ok()?;
    let json = crate::json::parse_strict(&body, 8).ok()?;
    let first = json.get("errors")?.as_array()?.first()?;
    let code = first.get("code")?.as_str()?;
    Some(match first.get("message").and_then(crate::json::Json::as_str) {
        Some(m) => format!("{code}: {m}"),
        None => code.to_string(),
    })
}
