//! Mutation testing of the GGUF and safetensors readers. A binary of its
//! own: the counting allocator below sees every thread of the process, so
//! only tests that hold `common::harness::serial()` from first line to last
//! (all of these do) may share it.

// A test builds its inputs byte by byte and indexes what it reads back: a
// panic there is a failed test, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

// The one test writer and runner every test binary shares.
#[path = "../common/mod.rs"]
mod common;

mod gguf_mutation;
mod pt_mutation;
mod st_mutation;

use common::harness::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;
