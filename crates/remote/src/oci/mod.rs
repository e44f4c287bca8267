//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX]`: models held in OCI
//! registries (docs/adr/0046-oci-registries.md), labelled without being
//! pulled first.
//!
//! `reference` parses the argument; `client` speaks the distribution API
//! (manifests, blobs whole or by ranges, the token flow, redirects without
//! credentials); `auth` reads challenges and `~/.docker/config.json`;
//! `manifest` reads manifests and indexes strictly; `layout` tells an
//! Ollama model, a ModelPack artifact and a Docker Model Runner artifact
//! apart by their media types; `blob` makes each blob a `RangeSource`
//! checked against its digest; `open` turns an argument into what it
//! holds.

pub mod auth;
pub mod blob;
pub mod check;
pub mod client;
pub mod error;
pub mod layout;
pub mod manifest;
pub mod open;
pub mod reference;
pub mod stream;
pub mod tar;

pub use check::BlobCheck;
pub use client::{Client, Options, Resolved};
pub use error::OciErrorKind;
pub use layout::{DockerWeights, Layout};
pub use manifest::{Descriptor, Manifest};
pub use open::{Held, open, open_url};
pub use reference::Reference;
