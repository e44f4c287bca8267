//! URL inputs against real servers (`cargo test --test remote --features
//! remote`; docs/adr/0044-remote-inputs.md): Debian's nginx over HTTP and
//! HTTPS (a certificate authority made by openssl), a proxy of ours that
//! cuts connections or replaces the object mid-read, moto's S3 server,
//! Azurite (Azure Blob Storage) and fake-gcs-server (Google Cloud Storage).
//! Each test starts its servers on free ports of 127.0.0.1 and skips
//! without them (one `SKIPPED:` line) unless `CI=true`.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

#[path = "../common/mod.rs"]
mod common;

mod azure;
mod commands;
mod gcs;
mod http;
mod http_dir;
mod models;
mod oms;
mod progress;
mod s3;
mod servers;
