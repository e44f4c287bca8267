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
mod bom;
mod bounded;
mod cli;
mod containment;
mod directory;
mod directory_views;
mod docs;
mod error_arguments;
mod faults;
mod first_hour;
mod golden;
mod hf;
mod inspect_diff;
mod inspect_truncated;
mod lease;
mod names_in_output;
mod ollama;
mod oms;
mod oms_keyless;
mod oms_relayout;
mod provenance;
mod pt_cli;
mod sign;
mod st_cli;
mod stream;
