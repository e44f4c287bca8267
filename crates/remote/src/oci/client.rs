//! The registry client: manifests by tag or digest, blobs whole or by
//! ranges, the token flow, and redirects that never carry credentials to
//! another host.
//!
//! Requests go to the registry the reference names, over `https://`
//! (plain `http://` only when the caller allows it: the command's flag for
//! plain HTTP). A registry may send a blob GET to a storage URL elsewhere
//! (S3, a CDN): the redirect is followed by hand, and the `Authorization`
//! header is sent only to the registry's own scheme, host and port, so a
//! token or password never reaches the storage host. The token service a
//! `Bearer` challenge names gets the user's basic credentials, as Docker
//! sends them, only over `https://` (or the registry's own origin).
//!
//! The client is synchronous to its callers (the hashing runs on rayon
//! threads): each call runs on the client's own small tokio runtime.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_RANGE, CONTENT_TYPE, LOCATION, RANGE};
use reqwest::{StatusCode, Url};
use sha2::{Digest as _, Sha256};

use super::auth::{self, Found};
use super::check::BlobCheck;
use super::error::{OciErrorKind, shown_url};
use super::manifest::{self, Descriptor, Manifest, Parsed};
use super::reference::Reference;
use crate::http::error_words;
use crate::{Error, Result};

mod answer;
use answer::{challenges, read_limited, registry_error_code};

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;
/// The largest token response and error body read.
const MAX_SMALL_BODY: u64 = 1 << 20;
/// Tries of one request on a connection error, 5xx or 429.
pub(super) const TRIES: u32 = 3;

/// How the client may reach a registry.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Allow plain `http://` to a registry on this machine (`localhost`,
    /// `127.x.x.x`, `[::1]`: a local or test registry); every other
    /// registry is reached over `https://`.
    pub allow_http: bool,
    /// The Docker config file with `auths`; `None`: `$DOCKER_CONFIG` or
    /// `~/.docker/config.json`.
    pub config: Option<PathBuf>,
    /// Certificate authorities (a PEM file) trusted beside the system's.
    pub ca_file: Option<PathBuf>,
}

/// A manifest as resolved: the manifest, and the SHA-256 of its bytes (of
/// the manifest an index pointed to, when the reference named an index).
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The manifest.
    pub manifest: Manifest,
    /// Its digest's 64 hex digits.
    pub hex: String,
    /// Its bytes, as the registry served them (they hash to `hex`).
    pub text: Vec<u8>,
}

/// A client of one repository of one registry.
pub struct Client {
    pub(super) rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    reference: Reference,
    /// `scheme://host[:port]`.
    origin: Url,
    creds: Found,
    /// The `Authorization` value the registry accepted or asked for.
    auth: Mutex<Option<String>>,
    /// The token service (its URL as shown) the current Bearer token came
    /// from, for the message of a refusal.
    token_from: Mutex<Option<String>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("reference", &self.reference.to_string()).finish_non_exhaustive()
    }
}

pub(super) fn http_error(url: &Url, why: impl std::fmt::Display) -> Error {
    OciErrorKind::Http { url: shown_url(url), why: why.to_string() }.into()
}

impl Client {
    /// A client for the reference's repository. Reads the credentials for
    /// its registry (none is no error); makes no request yet.
    pub fn new(reference: &Reference, options: &Options) -> Result<Client> {
        // Plain HTTP only when allowed, and only to this machine (a local
        // or test registry): a registry elsewhere is reached over https
        // whatever the flag says.
        let scheme = if options.allow_http && reference.is_loopback() { "http" } else { "https" };
        let origin = Url::parse(&format!("{scheme}://{}/", reference.api_host())).map_err(|e| {
            Error::from(OciErrorKind::Reference { reference: reference.to_string(), why: e.to_string() })
        })?;
        let creds = match options.config.clone().or_else(auth::config_path) {
            Some(path) => auth::lookup(&path, reference.api_host())
                .map_err(|why| Error::from(OciErrorKind::Unauthorized { registry: reference.registry.clone(), why }))?,
            None => Found::default(),
        };
        let http = crate::http::client(options.ca_file.as_deref())?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("gguf-digest-oci")
            .enable_all()
            .build()
            .map_err(Error::from)?;
        Ok(Client {
            rt,
            http,
            reference: reference.clone(),
            origin,
            creds,
            auth: Mutex::new(None),
            token_from: Mutex::new(None),
        })
    }

    /// The reference this client reads.
    pub fn reference(&self) -> &Reference {
        &self.reference
    }

    pub(super) fn repo_url(&self, tail: &str) -> Result<Url> {
        let path = format!("v2/{}/{tail}", self.reference.api_repository());
        self.origin.join(&path).map_err(|e| http_error(&self.origin, e))
    }

    fn same_origin(&self, url: &Url) -> bool {
        url.scheme() == self.origin.scheme()
            && url.host_str() == self.origin.host_str()
            && url.port_or_known_default() == self.origin.port_or_known_default()
    }

    fn current_auth(&self) -> Result<Option<String>> {
        Ok(self.auth.lock().map_err(|_| Error::internal("the OCI client's credentials lock was poisoned"))?.clone())
    }

    fn set_auth(&self, value: String) -> Result<()> {
        *self.auth.lock().map_err(|_| Error::internal("the OCI client's credentials lock was poisoned"))? = Some(value);
        Ok(())
    }

    fn token_from(&self) -> Result<Option<String>> {
        Ok(self.token_from.lock().map_err(|_| Error::internal("the OCI client's token lock was poisoned"))?.clone())
    }

    /// One GET: credentials to the registry only, a 401 answered once by
    /// the challenge's scheme, redirects followed by hand, retried on a
    /// connection error, 5xx or 429. Returns the final response (any
    /// status but 401 and 3xx).
    async fn get(&self, url: Url, accept: Option<&str>, range: Option<(u64, u64)>) -> Result<reqwest::Response> {
        let mut url = url;
        let mut answered = false;
        let mut redirects = 0usize;
        loop {
            let response = self.send_retrying(&url, accept, range).await?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && self.same_origin(&url) && !answered {
                answered = true;
                self.answer_challenge(&response).await?;
                continue;
            }
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                return Err(self.refused_token(&response)?);
            }
            if status.is_redirection() {
                redirects = redirects.saturating_add(1);
                if redirects > MAX_REDIRECTS {
                    return Err(http_error(&url, format!("more than {MAX_REDIRECTS} redirects")));
                }
                let location = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .ok_or_else(|| http_error(&url, format!("HTTP {status} with no readable Location")))?;
                let next = url.join(location).map_err(|e| http_error(&url, format!("a redirect to a bad URL: {e}")))?;
                if next.scheme() != "https" && !(next.scheme() == "http" && self.origin.scheme() == "http") {
                    return Err(http_error(&url, format!("a redirect to {} refused (only https)", shown_url(&next))));
                }
                url = next;
                continue;
            }
            return Ok(response);
        }
    }

    async fn send_retrying(
        &self,
        url: &Url,
        accept: Option<&str>,
        range: Option<(u64, u64)>,
    ) -> Result<reqwest::Response> {
        let mut attempt = 0u32;
        loop {
            attempt = attempt.saturating_add(1);
            let mut request = self.http.get(url.clone());
            if let Some(a) = accept {
                request = request.header(ACCEPT, a);
            }
            if let Some((start, end)) = range {
                request = request.header(RANGE, format!("bytes={start}-{end}"));
            }
            // The registry's credentials go to the registry's origin only:
            // never to a storage host a blob GET is redirected to.
            if self.same_origin(url) {
                if let Some(value) = self.current_auth()? {
                    request = request.header(AUTHORIZATION, value);
                }
            }
            match request.send().await {
                Ok(r)
                    if (r.status().is_server_error() || r.status() == StatusCode::TOO_MANY_REQUESTS)
                        && attempt < TRIES => {}
                Ok(r) => return Ok(r),
                Err(e) if attempt < TRIES && (e.is_connect() || e.is_timeout() || e.is_request()) => {}
                Err(e) => return Err(http_error(url, error_words(&e))),
            }
            tokio::time::sleep(Duration::from_millis(200u64.saturating_mul(4u64.saturating_pow(attempt)))).await;
        }
    }

    /// Answers a 401's challenge: a `Bearer` token fetched from its realm
    /// (with basic credentials when the config holds some), or `Basic`
    /// credentials.
    async fn answer_challenge(&self, response: &reqwest::Response) -> Result<()> {
        let challenges = challenges(response);
        if let Some(bearer) = challenges.iter().find(|c| c.scheme == "bearer") {
            let (token, from) = self.fetch_token(bearer).await?;
            *self.token_from.lock().map_err(|_| Error::internal("the OCI client's token lock was poisoned"))? =
                Some(from);
            return self.set_auth(format!("Bearer {token}"));
        }
        if challenges.iter().any(|c| c.scheme == "basic") {
            return match &self.creds.basic {
                Some(b) => self.set_auth(b.header()),
                None => Err(self.refused(StatusCode::UNAUTHORIZED)),
            };
        }
        Err(OciErrorKind::Unauthorized {
            registry: self.reference.registry.clone(),
            why: "HTTP 401 without a Bearer or Basic challenge".into(),
        }
        .into())
    }

    /// A token from the challenge's realm, and the realm as messages show it.
    async fn fetch_token(&self, challenge: &auth::Challenge) -> Result<(String, String)> {
        let registry = || self.reference.registry.clone();
        let realm = challenge.param("realm").ok_or_else(|| {
            Error::from(OciErrorKind::Unauthorized {
                registry: registry(),
                why: "a Bearer challenge with no realm".into(),
            })
        })?;
        let mut url = Url::parse(realm).map_err(|e| {
            Error::from(OciErrorKind::Unauthorized {
                registry: registry(),
                why: format!("the token realm is no URL: {e}"),
            })
        })?;
        if url.scheme() != "https" && !self.same_origin(&url) {
            return Err(OciErrorKind::Unauthorized {
                registry: registry(),
                why: format!("the token realm {} is not https", shown_url(&url)),
            }
            .into());
        }
        {
            let mut q = url.query_pairs_mut();
            if let Some(service) = challenge.param("service") {
                q.append_pair("service", service);
            }
            q.append_pair("scope", &format!("repository:{}:pull", self.reference.api_repository()));
        }
        let mut request = self.http.get(url.clone());
        if let Some(b) = &self.creds.basic {
            let (user, password) = b.parts();
            request = request.basic_auth(user, Some(password));
        }
        let mut response = request.send().await.map_err(|e| http_error(&url, error_words(&e)))?;
        // Whatever is wrong with the token service's answer, the registry
        // is the one refused: the message names it and the service.
        let unusable = |why: String| {
            Error::from(OciErrorKind::Unauthorized {
                registry: registry(),
                why: format!("the token service {} answered {why}{}", shown_url(&url), self.creds_note()),
            })
        };
        if !response.status().is_success() {
            return Err(OciErrorKind::Unauthorized {
                registry: registry(),
                why: format!(
                    "the token service {} answered HTTP {}{}",
                    shown_url(&url),
                    response.status(),
                    self.creds_note()
                ),
            }
            .into());
        }
        let body = read_limited(&mut response, MAX_SMALL_BODY, &url).await?;
        let json = crate::json::parse_strict(&body, 16).map_err(|e| unusable(format!("not JSON: {e}")))?;
        // The spec's `token`, or OAuth 2's `access_token` (the same token
        // when both are given).
        let token = json
            .get("token")
            .or_else(|| json.get("access_token"))
            .and_then(crate::json::Json::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| unusable("JSON that holds no token".into()))?;
        Ok((token.to_string(), shown_url(&url)))
    }

    fn creds_note(&self) -> String {
        match (&self.creds.basic, &self.creds.file, &self.creds.helper) {
            (Some(_), Some(f), _) => format!(" (with the credentials of {})", f.display()),
            (None, _, Some(h)) => format!(
                " (anonymously: this registry's credentials are kept by {h}, a program this tool does not run; \
                 put them in the config file's auths)"
            ),
            (None, Some(f), None) => format!(" (anonymously: {} holds no credentials for it)", f.display()),
            _ => " (anonymously: no Docker config file)".to_string(),
        }
    }

    /// The registry's refusal of a request that carried our credentials:
    /// with a token, what its challenge says of it (the distribution
    /// registry's `error="invalid_token"`, a token it cannot verify or
    /// one expired, or `error="insufficient_scope"`, a token that grants
    /// no pull of the repository).
    fn refused_token(&self, response: &reqwest::Response) -> Result<Error> {
        let Some(from) = self.token_from()? else { return Ok(self.refused(response.status())) };
        let error = challenges(response)
            .iter()
            .filter(|c| c.scheme == "bearer")
            .find_map(|c| c.param("error").map(str::to_string));
        let what = match error.as_deref() {
            Some("insufficient_scope") => format!(
                "the token from {from} grants no pull of {} (insufficient_scope)",
                self.reference.api_repository()
            ),
            // Only the spec's codes are shown: the header is the registry's words.
            Some(e @ ("invalid_token" | "invalid_request")) => format!("it refused the token from {from} ({e})"),
            _ => format!("it refused the token from {from}"),
        };
        Ok(OciErrorKind::Unauthorized {
            registry: self.reference.registry.clone(),
            why: format!("HTTP {}: {what}{}", response.status(), self.creds_note()),
        }
        .into())
    }

    fn refused(&self, status: StatusCode) -> Error {
        OciErrorKind::Unauthorized {
            registry: self.reference.registry.clone(),
            why: format!("HTTP {status}{}", self.creds_note()),
        }
        .into()
    }

    /// Resolves the reference to its manifest: by tag or digest, an index
    /// followed by [`manifest::pick`]'s rule; every manifest's bytes
    /// checked against the digest that named it.
    pub fn resolve(&self) -> Result<Resolved> {
        self.rt.block_on(async {
            let named = self.reference.manifest_reference();
            let what = self.reference.to_string();
            let (parsed, hex, text) = self.fetch_manifest(&named, &what, self.reference.digest.as_deref()).await?;
            match parsed {
                Parsed::Manifest(manifest) => Ok(Resolved { manifest, hex, text }),
                Parsed::Index(list) => {
                    let chosen = manifest::pick(&list).map_err(|why| manifest_error(&what, why))?;
                    let inner_what = format!("{what} (its manifest sha256:{})", chosen.hex);
                    let (parsed, hex, text) =
                        self.fetch_manifest(&chosen.digest(), &inner_what, Some(&chosen.hex)).await?;
                    match parsed {
                        Parsed::Manifest(manifest) => Ok(Resolved { manifest, hex, text }),
                        Parsed::Index(_) => Err(manifest_error(&inner_what, "an index inside an index".into())),
                    }
                }
            }
        })
    }

    async fn fetch_manifest(
        &self,
        named: &str,
        what: &str,
        expected: Option<&str>,
    ) -> Result<(Parsed, String, Vec<u8>)> {
        let url = self.repo_url(&format!("manifests/{named}"))?;
        let mut response = self.get(url.clone(), Some(manifest::ACCEPT), None).await?;
        self.check_status(&mut response, &url, what).await?;
        let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
        let body = read_limited(&mut response, manifest::MAX_MANIFEST, &url).await?;
        let hex = hex::encode(Sha256::digest(&body));
        if let Some(expected) = expected.filter(|e| *e != hex) {
            return Err(OciErrorKind::DigestMismatch {
                what: what.to_string(),
                expected: format!("sha256:{expected}"),
                found: format!("sha256:{hex}"),
            }
            .into());
        }
        let parsed = manifest::parse(&body, content_type.as_deref()).map_err(|why| manifest_error(what, why))?;
        Ok((parsed, hex, body))
    }

    async fn check_status(&self, response: &mut reqwest::Response, url: &Url, what: &str) -> Result<()> {
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let code = registry_error_code(response, url).await;
        if status == StatusCode::NOT_FOUND {
            return Err(OciErrorKind::NotFound {
                what: what.to_string(),
                why: code.unwrap_or_else(|| "HTTP 404".into()),
            }
            .into());
        }
        Err(http_error(url, format!("HTTP {status}{}", code.map(|c| format!(" ({c})")).unwrap_or_default())))
    }

    /// A small blob (a config, a template) read whole, at most `limit`
    /// bytes, its SHA-256 and size checked.
    pub fn blob(&self, d: &Descriptor, limit: u64) -> Result<Vec<u8>> {
        if d.size > limit {
            return Err(manifest_error(
                &self.blob_name(d),
                format!("declares {} bytes, more than the {limit} read", d.size),
            ));
        }
        let mut out = Vec::new();
        self.stream_blob(d, &mut |piece| {
            out.extend_from_slice(piece);
            Ok(())
        })?;
        Ok(out)
    }

    /// The blob read front to back, each piece handed to `sink` as it
    /// arrives and hashed on the way: `Ok` only when its bytes are exactly
    /// `d.size` long and hash to `d`'s digest (the sink has then seen every
    /// byte once; on `Err` what it saw must not be used).
    pub fn stream_blob(&self, d: &Descriptor, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        self.rt.block_on(async {
            let url = self.repo_url(&format!("blobs/{}", d.digest()))?;
            let name = self.blob_name(d);
            let mut response = self.get(url.clone(), None, None).await?;
            self.check_status(&mut response, &url, &name).await?;
            let mut check = BlobCheck::new(d, &name);
            while let Some(piece) = response.chunk().await.map_err(|e| http_error(&url, error_words(&e)))? {
                check.update(&piece)?;
                sink(&piece)?;
            }
            check.finish()
        })
    }

    /// `len` bytes of the blob from `offset`, by a range request; a body of
    /// any other length is an error, never handed on. These bytes are not
    /// checked against the blob's digest here: the caller's
    /// [`BlobCheck`] or a whole read does that.
    pub fn blob_range(&self, d: &Descriptor, offset: u64, len: u64) -> Result<Vec<u8>> {
        let name = self.blob_name(d);
        let end = offset.checked_add(len).filter(|&e| e <= d.size).ok_or_else(|| {
            manifest_error(&name, format!("a read of {len} bytes at {offset} past its {} bytes", d.size))
        })?;
        if len == 0 {
            return Ok(Vec::new());
        }
        self.rt.block_on(async {
            let url = self.repo_url(&format!("blobs/{}", d.digest()))?;
            let last = end.saturating_sub(1);
            let mut response = self.get(url.clone(), None, Some((offset, last))).await?;
            self.check_status(&mut response, &url, &name).await?;
            match response.status() {
                StatusCode::PARTIAL_CONTENT => {
                    let want = format!("bytes {offset}-{last}/");
                    let got = response.headers().get(CONTENT_RANGE).and_then(|v| v.to_str().ok()).unwrap_or("");
                    if !got.starts_with(&want) {
                        return Err(http_error(
                            &url,
                            format!("asked for bytes {offset}-{last}, got a Content-Range of {got:?}"),
                        ));
                    }
                }
                StatusCode::OK if offset == 0 => {} // the whole blob: its first `len` bytes are the range
                s => return Err(http_error(&url, format!("HTTP {s} to a range request (ranges unsupported?)"))),
            }
            let mut out = Vec::new();
            while let Some(piece) = response.chunk().await.map_err(|e| http_error(&url, error_words(&e)))? {
                let room = usize::try_from(len).unwrap_or(usize::MAX).saturating_sub(out.len());
                out.extend_from_slice(piece.get(..room.min(piece.len())).unwrap_or(&piece));
                if out.len() as u64 >= len {
                    break;
                }
            }
            if out.len() as u64 != len {
                return Err(http_error(
                    &url,
                    format!("a short body: {} of the {len} bytes asked for at {offset}", out.len()),
                ));
            }
            Ok(out)
        })
    }

    pub(super) async fn open_range(&self, url: &Url, name: &str, start: u64, end: u64) -> Result<reqwest::Response> {
        let last = end.saturating_sub(1);
        let mut response = self.get(url.clone(), None, Some((start, last))).await?;
        self.check_status(&mut response, url, name).await?;
        match response.status() {
            StatusCode::PARTIAL_CONTENT => {
                let want = format!("bytes {start}-{last}/");
                let got = response.headers().get(CONTENT_RANGE).and_then(|v| v.to_str().ok()).unwrap_or("");
                if !got.starts_with(&want) {
                    return Err(http_error(
                        url,
                        format!("asked for bytes {start}-{last}, got a Content-Range of {got:?}"),
                    ));
                }
                Ok(response)
            }
            // The whole blob: its first bytes are the range.
            StatusCode::OK if start == 0 => Ok(response),
            s => Err(http_error(url, format!("HTTP {s} to a range request (ranges unsupported?)"))),
        }
    }

    pub(super) fn blob_name(&self, d: &Descriptor) -> String {
        format!("{} blob {}", self.reference, d.digest())
    }
}

pub(super) fn manifest_error(what: &str, why: String) -> Error {
    OciErrorKind::Manifest { what: what.to_string(), why }.into()
}

#[cfg(test)]
mod tests;
