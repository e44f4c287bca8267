//! URL inputs for Python (docs/adr/0044-remote-inputs.md): the options a
//! call gives (`allow_http`, `connections`, `ca_file`, as the command's
//! `--allow-http`, `--connections` and `--ca-file`) reach the opener that
//! reads its URLs, whichever thread opens them.
//!
//! The formats crate asks one process-wide opener for every URL. The
//! command registers one per run, with its flags; Python's calls may run
//! at once on several threads with different options, so the wheel
//! registers [`PerCall`] instead: it reads the options the opening thread
//! was given by [`with`] and opens through the opener made for them
//! (made on first use and kept, so that its clients and connections are
//! reused by later calls). Only the top-level open of an argument asks
//! the registered opener: the files beside an object (shards, an index's
//! files, external data, a prefix's objects) are opened through the place
//! the object was found in.
//!
//! Built without the feature `remote`, the options are accepted and
//! ignored, and a URL is refused by the library with a message naming the
//! feature.

use std::path::{Path, PathBuf};

/// How a call's URL inputs are read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UrlOptions {
    /// Read `http://` URLs (and services reached over plain HTTP).
    pub allow_http: bool,
    /// At most this many range requests in flight at once (`None`: the
    /// command's default).
    pub connections: Option<usize>,
    /// Certificate authorities (a PEM file) trusted beside the system's.
    pub ca_file: Option<PathBuf>,
}

/// `path` as errors and results show it: a URL without its credentials
/// or query (kept aside for the opener alone), else `path` unchanged.
/// Every path a Python function is given goes through this first, so no
/// message, result or exception attribute can hold a password.
pub(crate) fn hidden(path: PathBuf) -> PathBuf {
    #[cfg(feature = "remote")]
    {
        PathBuf::from(gguf_digest::remote::hide_credentials(path.as_os_str()))
    }
    #[cfg(not(feature = "remote"))]
    {
        path
    }
}

/// True when `path` is spelled as a URL.
pub(crate) fn is_url(path: &Path) -> bool {
    matches!(gguf_digest::Input::by_spelling(path), Some(gguf_digest::Input::Url(_)))
}

/// The hashing threads of a call that gave none: as the command, as many
/// as requests may be in flight when an argument is a URL (its jobs mostly
/// wait on the network), else `None` (one per core).
pub(crate) fn default_threads(urls: &UrlOptions, paths: &[PathBuf]) -> Option<usize> {
    if cfg!(feature = "remote") && paths.iter().any(|p| is_url(p)) {
        Some(connections(urls).clamp(1, gguf_digest::MAX_THREADS))
    } else {
        None
    }
}

#[cfg(feature = "remote")]
fn connections(urls: &UrlOptions) -> usize {
    urls.connections.unwrap_or(gguf_digest::remote::CONNECTIONS)
}

#[cfg(not(feature = "remote"))]
fn connections(urls: &UrlOptions) -> usize {
    urls.connections.unwrap_or(1)
}

/// Runs `f` with `urls` as the options of every URL this thread opens
/// meanwhile (those before are restored after, also on a panic).
pub(crate) fn with<T>(urls: &UrlOptions, f: impl FnOnce() -> T) -> T {
    #[cfg(feature = "remote")]
    {
        imp::with(urls, f)
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = urls;
        f()
    }
}

#[cfg(feature = "remote")]
mod imp {
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex};

    use gguf_digest::remote::RemoteOptions;
    use gguf_digest_core::Result;
    use gguf_digest_core::source::ReadMode;
    use gguf_digest_formats::input::RemoteUrl;
    use gguf_digest_formats::input::remote::{Opener, Remote, register};
    use gguf_digest_remote::RemoteOpener;

    use super::UrlOptions;

    thread_local! {
        /// The options of the call this thread opens models for.
        static CURRENT: RefCell<Option<RemoteOptions>> = const { RefCell::new(None) };
    }

    /// Openers made so far, by their options, the most recent last: a
    /// few at most in practice (a runtime of two threads and a client per
    /// host each); past [`KEPT`] the oldest is dropped.
    static OPENERS: Mutex<Vec<(RemoteOptions, Arc<RemoteOpener>)>> = Mutex::new(Vec::new());

    /// Openers kept at once.
    const KEPT: usize = 8;

    fn options(urls: &UrlOptions) -> RemoteOptions {
        RemoteOptions {
            connections: super::connections(urls).max(1),
            allow_http: urls.allow_http,
            ca_file: urls.ca_file.clone(),
            ..RemoteOptions::default()
        }
    }

    /// The opener for `options`, made on first use.
    fn opener(options: &RemoteOptions) -> Result<Arc<RemoteOpener>> {
        let mut kept = OPENERS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, o)) = kept.iter().find(|(k, _)| k == options) {
            return Ok(Arc::clone(o));
        }
        let made = Arc::new(RemoteOpener::new(options.clone())?);
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((options.clone(), Arc::clone(&made)));
        Ok(made)
    }

    /// The opener the wheel registers: the opening thread's options.
    struct PerCall;

    impl Opener for PerCall {
        fn open(&self, url: &RemoteUrl, mode: ReadMode) -> Result<Remote> {
            // A thread no call set options for (a library call outside
            // `with`) reads with the command's defaults: `http://` refused.
            let options = CURRENT.with(|c| c.borrow().clone()).unwrap_or_default();
            opener(&options)?.open(url, mode)
        }

        fn approximate_bytes(&self, url: &RemoteUrl) -> u64 {
            let options = CURRENT.with(|c| c.borrow().clone()).unwrap_or_default();
            opener(&options).map_or(0, |o| o.approximate_bytes(url))
        }
    }

    /// Puts the previous options back when dropped.
    struct Restore(Option<RemoteOptions>);

    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }

    pub(super) fn with<T>(urls: &UrlOptions, f: impl FnOnce() -> T) -> T {
        // Registered on every call, not once: the wheel's command
        // (`_native.main`, `cli::main`) registers an opener of its flags,
        // which would otherwise stay in place after it in this process.
        register(Arc::new(PerCall));
        let previous = CURRENT.with(|c| c.borrow_mut().replace(options(urls)));
        let _restore = Restore(previous);
        f()
    }
}
