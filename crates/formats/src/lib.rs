//! The formats of `gguf-digest`, each in a folder of its own behind one
//! registry (docs/adr/0032-one-registry-of-formats.md,
//! docs/adr/0043-workspace-crates.md).
//!
//! GGUF, safetensors, PyTorch checkpoints and Ollama models
//! (`gguf`, `safetensors`, `pytorch`, `ollama`), the Hugging Face cache
//! (`hf`) and directories (`directory`); the registry (`formats`); what an
//! argument is, parsed once (`input`); and the `inspect` and `diff`
//! commands over any of them. Above the core (`gguf-digest-core`), whose
//! traits each format implements; below provenance, which this crate
//! cannot name.
//!
//! Not meant to be used directly: the `gguf-digest` crate is the public
//! face, and re-exports what a library user needs.

#![deny(unsafe_op_in_unsafe_fn)]
// Unit tests build inputs byte by byte and index what they read back: a
// panic there is a failed test. The lib's own build keeps the Cargo.toml lints.
#![cfg_attr(test, allow(clippy::arithmetic_side_effects, clippy::indexing_slicing))]

// The core's modules, under the names the formats have always used
// (`crate::hash`, `crate::source`, ...): a format file reads the same in
// this crate as it did beside the core.
pub(crate) use gguf_digest_core::{
    Error, ErrorKind, Result, error, facts, format, hash, json, output, render, schedule, source, text,
};

pub mod directory;
pub mod formats;
pub mod gguf;
pub mod hf;
pub mod input;
pub mod ollama;
pub mod onnx;
pub mod pytorch;
pub mod safetensors;
pub mod tensors_diff;

// What inspect and diff show, on one renderer.
pub mod diff;
pub mod inspect;
