//! Remote inputs of `gguf-digest` (docs/adr/0044-remote-inputs.md):
//! `s3://`, `gs://`, `az://`, `https://` (and, when allowed, `http://`)
//! objects read by ranges through the `object_store` crate, handed to the
//! core as [`RangeSource`](gguf_digest_core::source::RangeSource)s, so that
//! every format's parser and model label them unchanged.
//!
//! The program that wants URLs read calls [`register`] once with its
//! [`RemoteOptions`] (the command does, with the feature `remote`); the
//! formats crate's `input::remote::open` then reaches this crate's opener
//! through the trait it defines, without naming a transport.
//!
//! `store.rs` builds one `object_store` client per bucket, container or
//! host (credentials from each service's usual environment); `object.rs`
//! is one object (its version pinned, reads at a position, ranges
//! streamed in bounded parts) and one place (a prefix: its objects opened
//! by plain names, listed); `redact.rs` keeps credentials out of every
//! message.

#![cfg_attr(test, allow(clippy::arithmetic_side_effects, clippy::indexing_slicing))]

mod http;
mod object;
pub mod oci;
mod redact;
mod store;

// The core's modules under the names the oci folder uses (`crate::source`,
// `crate::json`, ...), as in the formats crate.
pub(crate) use gguf_digest_core::{Error, Result, error, json, source};

use std::path::PathBuf;
use std::sync::Arc;

pub use store::RemoteOpener;

/// How URL inputs are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptions {
    /// The most requests in flight at once across every object (the
    /// command's `--connections`).
    pub connections: usize,
    /// Bytes asked for by one range request of a job's range. Its body
    /// is streamed to the hashing thread chunk by chunk, so memory does
    /// not grow with it (docs/adr/0044, "Speed").
    pub part: u64,
    /// Whether `http://` URLs (and services reached over plain HTTP,
    /// such as emulators) are read (the command's `--allow-http`).
    pub allow_http: bool,
    /// Certificate authorities (a PEM file) trusted beside the system's
    /// (the command's `--ca-file`).
    pub ca_file: Option<PathBuf>,
    /// Retries of a request that failed on a reset connection, a timeout
    /// or a 5xx answer, with exponential backoff.
    pub retries: usize,
}

/// Requests in flight by default: measured on the local nginx
/// (docs/BENCHMARKS.md, "Remote"): more gained nothing on 2 cores.
pub const CONNECTIONS: usize = 8;

/// Bytes per range request by default: large enough that a request's
/// round trip costs little next to its transfer (the next part's request
/// is sent while one streams), small enough that a tensor's range is cut
/// into a few; memory does not grow with it (a part's body is streamed).
/// Measured on the local nginx (docs/BENCHMARKS.md, "Remote").
pub const PART: u64 = 4 << 20;

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions { connections: CONNECTIONS, part: PART, allow_http: false, ca_file: None, retries: 5 }
    }
}

/// Makes URL inputs readable in this process with `options`: the opener
/// registered with the formats crate (a later call replaces it).
pub fn register(options: RemoteOptions) -> gguf_digest_core::Result<()> {
    let opener = RemoteOpener::new(options)?;
    gguf_digest_formats::input::remote::register(Arc::new(opener));
    Ok(())
}
