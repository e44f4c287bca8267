//! Fuzz target: `verify`'s reading of a statement, on arbitrary bytes: the
//! DSSE payload reader (`provenance::subjects::read_payload`: strict JSON,
//! the in-toto type, this project's predicate type, the subjects), then,
//! for every subject, where `verify` would look for it
//! (`subjects::locate`) under a root that does not exist, so that only the
//! name rules decide.
//!
//! Oracles, besides no panic (debug assertions on: no overflow), abort,
//! out-of-memory or timeout: an accepted statement has subjects, each with
//! a label of 64 lowercase hex digits that its text spelled (in any case);
//! a located name is an `ollama:` reference or a path under the root that
//! holds no `..` and is not absolute.
#![no_main]

use std::path::{Component, Path};

use gguf_digest_core::json::{Json, parse_strict};
use gguf_digest_provenance::provenance::{MAX_DEPTH, PREDICATE_TYPE, STATEMENT_TYPE, subjects};
use libfuzzer_sys::fuzz_target;

/// A root that is never there: `locate` then checks names, and nothing more.
const ROOT: &str = "/nonexistent-gguf-digest-fuzz-root";

fuzz_target!(|data: &[u8]| {
    let list = match subjects::read_payload(data) {
        Ok(l) => l,
        Err(e) => {
            assert!(!e.detail().is_empty(), "an error without a message");
            assert!(e.path().is_none(), "a pure read named a file: {e}");
            return;
        }
    };
    let json = parse_strict(data, MAX_DEPTH).unwrap_or_else(|e| panic!("accepted text the JSON reader refuses: {e}"));
    assert_eq!(json.get("_type").and_then(Json::as_str), Some(STATEMENT_TYPE));
    assert_eq!(json.get("predicateType").and_then(Json::as_str), Some(PREDICATE_TYPE));
    let written = json.get("subject").and_then(Json::as_array).expect("accepted a statement without a subject list");
    assert!(!list.is_empty(), "accepted a statement without subjects");
    assert_eq!(written.len(), list.len(), "subjects lost or added");
    let root = Path::new(ROOT);
    for (s, w) in list.iter().zip(written) {
        assert_eq!(w.get("name").and_then(Json::as_str), Some(s.name.as_str()));
        let spelled = w.get("digest").and_then(|d| d.get("sha256")).and_then(Json::as_str).unwrap_or_default();
        assert!(spelled.eq_ignore_ascii_case(&s.label), "label {:?} is not the text's {spelled:?}", s.label);
        assert_eq!(s.label.len(), 64, "a label that is not 64 digits: {:?}", s.label);
        assert!(s.label.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')), "{:?}", s.label);
        let Ok(path) = subjects::locate(root, &s.name) else { continue };
        if s.name.starts_with("ollama:") {
            continue;
        }
        let rest = path.strip_prefix(root).unwrap_or_else(|_| panic!("{:?} located outside the root", s.name));
        assert!(!s.name.is_empty() && s.name != "-" && !s.name.contains('\0'), "{:?} located", s.name);
        assert!(
            rest.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)),
            "{:?} located as {path:?}",
            s.name
        );
    }
});
