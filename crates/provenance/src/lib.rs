//! Provenance over `gguf-digest` labels (docs/adr/0043-workspace-crates.md):
//! in-toto statements, signing and verifying them (keys, DSSE envelopes,
//! Sigstore bundles), OpenSSF model signatures (`provenance`), and AI-BOMs
//! in CycloneDX and SPDX (`bom`).
//!
//! Every signature and certificate crate of the project is a dependency of
//! this crate and of no other, so a library user who wants labels compiles
//! none of them. Above the core and the formats.
//!
//! Not meant to be used directly: the `gguf-digest` crate (feature
//! `provenance`) is the public face.

#![deny(unsafe_op_in_unsafe_fn)]
// Unit tests build inputs byte by byte and index what they read back: a
// panic there is a failed test. The lib's own build keeps the Cargo.toml lints.
#![cfg_attr(test, allow(clippy::arithmetic_side_effects, clippy::indexing_slicing))]

// The layers below, under the names this crate's files have always used.
pub(crate) use gguf_digest_core::format::AnyModel;
pub(crate) use gguf_digest_core::hash::Digest;
pub(crate) use gguf_digest_core::source::Source;
pub(crate) use gguf_digest_core::{
    Error, ErrorKind, Result, Subject, check, error, facts, format, hash, json, output, schedule, source,
};
pub(crate) use gguf_digest_formats::{directory, input};

pub mod bom;
pub mod provenance;
