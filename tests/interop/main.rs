//! Interoperability with other implementations and tools (gguf-py, the
//! `safetensors` package, Ollama's layout, in-toto and minisign), through the
//! Python venv of scripts/setup-python.sh; each test skips without it unless
//! `CI=true`. One test binary, one module per counterpart.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

// The one test writer and runner every test binary shares.
#[path = "../common/mod.rs"]
mod common;

mod bom;
mod dir;
mod gguf;
mod hf;
// Needs the command's URL inputs (feature `remote`): `.ci/run` runs it.
#[cfg(feature = "remote")]
mod oci;
#[cfg(feature = "remote")]
mod oci_oms;
#[cfg(feature = "remote")]
mod oci_token;
mod ollama;
mod onnx;
mod precommit;
mod pt;
mod sign_bundle;
mod sign_oms;
mod sign_statement;
mod st;
