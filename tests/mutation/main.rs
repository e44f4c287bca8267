//! Mutation testing of the GGUF and safetensors readers. A binary of its
//! own: the counting allocator below sees every thread of the process, so
//! only tests that hold `common::harness::serial()` from first line to last
//! (all of these do) may share it.

// The one test writer and runner every test binary shares.
#[path = "../common/mod.rs"]
mod common;

mod mutation;
mod st_mutation;

use common::harness::Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;
