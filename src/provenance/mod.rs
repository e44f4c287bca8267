//! Provenance: labels as in-toto statements that signing tools sign, and
//! their verification (issue #16). A statement names each model as a
//! subject whose `sha256` digest is its label (the label *is* a SHA-256: of
//! the model's skeleton), with a predicate saying how to reproduce it.
//!
//! - `statement`: building a statement from labelled models;
//! - `envelope`: reading what a signing tool hands back (a bare statement,
//!   a DSSE envelope, a Sigstore bundle holding one) and DSSE's
//!   pre-authentication encoding;
//! - `keys`: public keys (Ed25519, ECDSA P-256) and signature checks, with
//!   RustCrypto's crates: nothing hand-written;
//! - `subjects`: a statement's subjects, and where each may be looked for
//!   (never outside the root);
//! - `verify`: a signed statement checked and its subjects located, ready
//!   to be relabelled.
//!
//! See docs/adr/0017-provenance.md and docs/statement-predicate.schema.json.

pub mod envelope;
pub mod keys;
pub mod oms;
pub mod statement;
pub mod subjects;
pub mod verify;

/// The in-toto statement type.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// This project's predicate type.
pub const PREDICATE_TYPE: &str = "https://gguf-digest.dev/label/v1";

/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// JSON nesting allowed in a statement, envelope or bundle.
pub const MAX_DEPTH: usize = 64;

/// The most bytes of a statement, envelope or bundle read.
pub const MAX_STATEMENT: u64 = 16 << 20;
