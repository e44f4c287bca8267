//! The crate's one strict JSON reader: safetensors headers, safetensors index
//! files and (later) Ollama manifests all go through [`parse_strict`].
//!
//! A label must not depend on which JSON reader a tool happens to use, so
//! text that readers disagree on is refused instead of read one way: it must
//! be UTF-8 and exactly one JSON value (RFC 8259) with only JSON whitespace
//! around it; no container nests deeper than the caller's limit; no object
//! holds a key twice (compared after unescaping); no string holds a lone
//! UTF-16 surrogate escape. Every number is kept, and a non-negative integer
//! written without fraction or exponent that fits in u64 stays apart
//! ([`Json::Uint`]) from every other number, so that callers can demand an
//! exact integer for shapes and offsets.
//!
//! serde_json does the parsing (syntax, escapes, surrogates, numbers,
//! trailing bytes): it is already a dependency, and the safetensors reference
//! implementation reads headers with it, so we agree with it on what JSON
//! is. A custom serde `Visitor` would be the natural place for the two rules
//! serde_json's `Value` cannot express, but serde's traits are not reachable
//! without adding `serde` as a dependency; so a small scan over the text
//! serde_json accepted checks them instead: nesting depth and repeated keys.
//! It never recurses and validates nothing else, and keys with escapes are
//! unescaped by serde_json too.
//!
//! One concept a file: `tree.rs` (the value returned), `read.rs`
//! ([`parse_strict`]: serde_json's parse, then ours), `scan.rs` (the rules
//! serde_json cannot express, and the count of values checked before
//! anything is built), `error.rs` ([`JsonError`], and serde_json's errors in
//! our words).

mod error;
mod read;
mod scan;
mod tree;

pub use error::JsonError;
pub use read::parse_strict;
pub use scan::MAX_VALUES;
pub use tree::Json;
