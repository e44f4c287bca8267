//! The core of `gguf-digest`: everything that does not depend on a
//! model's format (docs/adr/0043-workspace-crates.md).
//!
//! Opening an input beneath a root and mapping or reading it with the
//! truncation guard (`source`), the hashing jobs and their pieces (`hash`),
//! the one scheduler and the front-to-back pipeline (`schedule`,
//! `pipeline`), the verified-leaf cache (`cache`), the error type
//! (`error`), the strict JSON reader (`json`), names made safe to print
//! (`text`), sums lines, JSON output and `--check` (`output`, `check`),
//! the renderer `inspect` and `diff` share (`render`), and the seam the
//! formats implement (`format`, `facts`). This crate names no format: the
//! compiler holds it to that, since the formats are a crate above it.
//!
//! Not meant to be used directly: the `gguf-digest` crate is the public
//! face, and re-exports what a library user needs.

#![deny(unsafe_op_in_unsafe_fn)]
// Unit tests build inputs byte by byte and index what they read back: a
// panic there is a failed test. The lib's own build keeps the Cargo.toml lints.
#![cfg_attr(test, allow(clippy::arithmetic_side_effects, clippy::indexing_slicing))]

pub mod cache;
pub mod check;
pub mod error;
pub mod facts;
pub mod format;
pub mod hash;
pub mod json;
pub mod output;
pub mod pipeline;
pub mod render;
pub mod schedule;
pub mod source;
pub mod text;

pub use error::{Error, ErrorKind, Result, SYMBOLIC_LINK, Subject};
