//! The opener the formats crate calls for a URL ([`RemoteOpener`]): one
//! `object_store` client per bucket, container or host, built once, its
//! credentials from the service's usual environment (`AWS_*`, `GOOGLE_*`,
//! `AZURE_*`; for HTTP a URL's `user:password@` as a Basic
//! `Authorization` header, which the HTTP client drops on a redirect to
//! another host); retries with backoff on resets, timeouts and 5xx. An
//! HTTP(S) host also gets a WebDAV client, for listing a prefix.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::http::HttpBuilder;
use object_store::{BackoffConfig, Certificate, ClientOptions, HeaderMap, HeaderValue, ObjectStore, RetryConfig};
use tokio::sync::Semaphore;

use gguf_digest_core::source::ReadMode;
use gguf_digest_core::{Error, Result};
use gguf_digest_formats::input::RemoteUrl;
use gguf_digest_formats::input::remote::{Opener, Remote, Scheme};

use crate::RemoteOptions;
use crate::object::Store;
use crate::object::list::Dav;
use crate::redact::{io_error, scrub};

/// Opens URL inputs through `object_store` (registered with the formats
/// crate by [`crate::register`]).
pub struct RemoteOpener {
    options: RemoteOptions,
    runtime: Arc<tokio::runtime::Runtime>,
    connections: Arc<Semaphore>,
    /// One client per scheme and authority (and credentials), built once.
    stores: Mutex<HashMap<(String, String), Arc<Store>>>,
}

impl std::fmt::Debug for RemoteOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteOpener").field("options", &self.options).finish_non_exhaustive()
    }
}

impl RemoteOpener {
    /// An opener reading with `options`: its runtime (two threads: they
    /// only wait on sockets; hashing stays on the scheduler's pool).
    pub fn new(mut options: RemoteOptions) -> Result<RemoteOpener> {
        // For bench/remote.sh only (not a flag): the part size measured
        // against the default, in MiB.
        if let Some(v) = std::env::var_os("GGUF_DIGEST_BENCH_PART_MIB") {
            let mib = v.to_str().and_then(|v| v.parse::<u64>().ok()).filter(|m| (1..=64).contains(m));
            let mib = mib.ok_or_else(|| {
                Error::from(std::io::Error::other("GGUF_DIGEST_BENCH_PART_MIB is a number of MiB from 1 to 64"))
            })?;
            options.part = mib << 20;
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("gguf-digest-remote")
            .enable_all()
            .build()
            .map_err(Error::from)?;
        let connections = Arc::new(Semaphore::new(options.connections.max(1)));
        Ok(RemoteOpener { options, runtime: Arc::new(runtime), connections, stores: Mutex::new(HashMap::new()) })
    }

    fn client_options(&self, url: &RemoteUrl) -> Result<ClientOptions> {
        let mut client = ClientOptions::new()
            .with_allow_http(self.options.allow_http)
            .with_connect_timeout(Duration::from_secs(30))
            .with_timeout_disabled();
        if let Some(file) = &self.options.ca_file {
            let pem = std::fs::read(file).map_err(|e| Error::from(e).in_file(file))?;
            let certs = Certificate::from_pem_bundle(&pem).map_err(|e| io_error(&e.to_string(), file, None))?;
            for c in certs {
                client = client.with_root_certificate(c);
            }
        }
        if let Some(auth) = basic_auth(url) {
            let mut headers = HeaderMap::new();
            headers.insert("authorization", auth);
            client = client.with_default_headers(headers);
        }
        Ok(client)
    }

    fn retry(&self) -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(5),
                base: 2.0,
            },
            max_retries: self.options.retries,
            retry_timeout: Duration::from_secs(180),
        }
    }

    /// The client for `url`'s scheme and authority, built on first use.
    fn store(&self, url: &RemoteUrl) -> Result<Arc<Store>> {
        let creds = url.raw().split('/').nth(2).unwrap_or("").to_string();
        let id = (url.scheme().prefix().to_string(), creds);
        let mut stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = stores.get(&id) {
            return Ok(Arc::clone(s));
        }
        let client = self.client_options(url)?;
        let authority = url.authority();
        let built: object_store::Result<Arc<dyn ObjectStore>> = match url.scheme() {
            Scheme::S3 => AmazonS3Builder::from_env()
                .with_bucket_name(authority)
                .with_allow_http(self.options.allow_http)
                .with_client_options(client)
                .with_retry(self.retry())
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
            Scheme::Gcs => GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(authority)
                .with_client_options(client)
                .with_retry(self.retry())
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
            Scheme::Azure => MicrosoftAzureBuilder::from_env()
                .with_container_name(authority)
                .with_allow_http(self.options.allow_http)
                .with_client_options(client)
                .with_retry(self.retry())
                .build()
                .map(|s| Arc::new(s) as Arc<dyn ObjectStore>),
            Scheme::Oci => return Err(Error::internal("an oci:// URL reached the object store opener")),
            Scheme::Https | Scheme::Http => {
                if url.scheme() == Scheme::Http && !self.options.allow_http {
                    return Err(url.refused(
                        "http:// is read only with --allow-http (its bytes and credentials travel in the clear)",
                    ));
                }
                HttpBuilder::new()
                    .with_url(format!("{}{}", url.scheme().prefix(), authority))
                    .with_client_options(client)
                    .with_retry(self.retry())
                    .build()
                    .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
            }
        };
        let built = built.map_err(|e| io_error(&scrub(&e.to_string()), url.shown(), None))?;
        let shown = format!("{}{}/", url.scheme().prefix(), authority);
        // A prefix over HTTP is listed through WebDAV, one folder at a
        // time (object.rs's list: `object_store` asks for Depth infinity).
        let dav = match url.scheme() {
            Scheme::Https | Scheme::Http => {
                Some(Dav::new(&shown, self.options.ca_file.as_deref(), basic_auth(url), self.options.retries)?)
            }
            _ => None,
        };
        let store = Arc::new(Store {
            store: built,
            runtime: Arc::clone(&self.runtime),
            connections: Arc::clone(&self.connections),
            shown,
            part: self.options.part,
            retries: self.options.retries,
            dav,
        });
        stores.insert(id, Arc::clone(&store));
        Ok(store)
    }
}

/// A URL's `user:password@` as a Basic `Authorization` value, marked
/// sensitive (never logged by the HTTP stack); `None` without one. Only
/// for `http(s)://`: the cloud services take their credentials from
/// their own environment.
fn basic_auth(url: &RemoteUrl) -> Option<HeaderValue> {
    if !matches!(url.scheme(), Scheme::Https | Scheme::Http) {
        return None;
    }
    let authority = url.raw().split('/').nth(2)?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    use base64::Engine as _;
    let token = base64::engine::general_purpose::STANDARD.encode(userinfo.as_bytes());
    let mut value = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

impl Opener for RemoteOpener {
    fn open(&self, url: &RemoteUrl, mode: ReadMode) -> Result<Remote> {
        if url.scheme() == Scheme::Oci {
            return crate::oci::open_url(url, &self.options, mode);
        }
        let store = self.store(url)?;
        if url.is_prefix() {
            return Ok(Remote::Prefix(store.place(url.path()).into_beside()));
        }
        Ok(Remote::Object(Box::new(store.head(url.path())?.into_source())))
    }

    fn approximate_bytes(&self, url: &RemoteUrl) -> u64 {
        // A registry's manifest is not asked for twice.
        if url.is_prefix() || url.scheme() == Scheme::Oci {
            return 0;
        }
        self.store(url).and_then(|s| s.head(url.path())).map_or(0, |o| {
            use gguf_digest_core::source::RangeSource as _;
            o.len()
        })
    }
}
