//! The formats through the library: GGUF and safetensors labels from the
//! logical model alone, what each reader rejects and why, pieces, the spec's
//! vectors, fixed regressions, and batches of paths. One test binary, one
//! module per concern.

// The one test writer and runner every test binary shares.
#[path = "../common/mod.rs"]
mod common;

mod batch;
mod label;
mod pieces;
mod regressions;
mod rejections;
mod safetensors;
mod st_rejections;
mod vectors;
