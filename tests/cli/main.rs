//! The command line through the real binary (or the command
//! `GGUF_DIGEST_BIN` names: `common::gguf_digest_bin`): sums lines, JSON,
//! `--check`, `inspect`, `diff`, `statement`/`verify`, Ollama references,
//! stdin, names in output, exit codes, faults and leases while a file is
//! read, and the golden outputs. One test binary, one module per concern.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

// The one test writer and runner every test binary shares.
#[path = "../common/mod.rs"]
mod common;

mod action;
mod architecture;
mod bom;
mod bounded;
// The cache stores only files read under a lease (ADR 0033): the portable
// read path takes none, so it never caches, and these tests of hits and
// misses are the lease's platform's.
#[cfg(not(feature = "portable"))]
mod cache;
mod containment;
mod dir_inspect_diff;
mod dir_label;
mod dir_onnx;
mod docs;
mod error_arguments;
mod faults;
mod first_use_messages;
mod gguf_cli;
mod gguf_inspect_diff;
mod golden;
mod hf_refs;
mod inspect_truncated;
mod lease;
mod modgraph;
mod names_in_output;
mod ollama_label;
mod onnx_cli;
mod onnx_provenance;
mod progress;
mod pt_cli;
mod sign_bundle;
mod sign_oms;
mod sign_oms_keyless;
mod sign_oms_relayout;
mod sign_statement;
mod st_cli;
mod stream;
