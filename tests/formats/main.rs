//! The formats through the library: GGUF and safetensors labels from the
//! logical model alone, what each reader rejects and why, pieces, the spec's
//! vectors, fixed regressions, and batches of paths. One test binary, one
//! module per concern.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

// The one test writer and runner every test binary shares.
#[path = "../common/mod.rs"]
mod common;

mod batch;
mod directory;
mod label;
mod pieces;
mod pytorch;
mod regressions;
mod rejections;
mod safetensors;
mod st_rejections;
mod vectors;
