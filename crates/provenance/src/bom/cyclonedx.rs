//! The CycloneDX 1.6 JSON document of BOM entries: a pure function of the
//! entries and a timestamp (docs/adr/0028-ai-bom.md has the field mapping).

use serde_json::{Map, Value as JsonValue, json};
use sha2::{Digest as _, Sha256};

use super::{Entry, FileHash};
use crate::facts::{BaseModel, Facts};

/// The last second RFC 3339 can write (9999-12-31T23:59:59Z): a later
/// timestamp is refused by the command, not written.
pub const MAX_TIMESTAMP: u64 = 253_402_300_799;

/// Namespace of every property this tool writes (the CycloneDX property
/// taxonomy's rule: a tool's own names start with its name and a colon).
const NS: &str = "gguf-digest";

/// The BOM of `entries` made at `timestamp` (seconds since the Unix epoch,
/// at most [`MAX_TIMESTAMP`]; later ones are written as that second).
pub fn cyclonedx(entries: &[Entry], timestamp: u64) -> JsonValue {
    let components: Vec<JsonValue> =
        entries.iter().enumerate().map(|(i, e)| model_component(e, i.saturating_add(1))).collect();
    json!({
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": serial_number(entries),
        "version": 1,
        "metadata": {
            "timestamp": rfc3339(timestamp),
            "tools": {
                "components": [{
                    "type": "application",
                    "name": "gguf-digest",
                    "version": env!("CARGO_PKG_VERSION"),
                }],
            },
        },
        "components": components,
    })
}

/// `urn:uuid:` of a UUID version 8 (RFC 9562 §5.8, its SHA-256 form) made
/// from the entries' formats and labels in order: the same models, in the
/// same order, give the same serial number, whatever they were named and
/// whenever the BOM was made (CycloneDX: a BOM of the same subject keeps
/// its serial number).
pub fn serial_number(entries: &[Entry]) -> String {
    let mut h = Sha256::new();
    h.update(b"gguf-digest bom v1\0");
    for e in entries {
        h.update(e.format.as_bytes());
        h.update(b"\0");
        h.update(e.label.as_bytes());
        h.update(b"\0");
    }
    let d: [u8; 32] = h.finalize().into();
    let mut u = [0u8; 16];
    u.copy_from_slice(d.get(..16).unwrap_or(&[0; 16]));
    // Version 8 in the high nibble of byte 6, the RFC's variant (10) atop byte 8.
    if let Some(b) = u.get_mut(6) {
        *b = (*b & 0x0f) | 0x80;
    }
    if let Some(b) = u.get_mut(8) {
        *b = (*b & 0x3f) | 0x80;
    }
    let x = hex::encode(u);
    let part = |a: usize, b: usize| x.get(a..b).unwrap_or("");
    format!("urn:uuid:{}-{}-{}-{}-{}", part(0, 8), part(8, 12), part(12, 16), part(16, 20), part(20, 32))
}

/// `YYYY-MM-DDTHH:MM:SSZ` of seconds since the epoch (proleptic Gregorian,
/// UTC; Howard Hinnant's `civil_from_days`).
pub fn rfc3339(secs: u64) -> String {
    let secs = secs.min(MAX_TIMESTAMP);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // days ≤ 2,932,896 here: every step below stays far inside u64.
    let z = days.saturating_add(719_468);
    let era = z / 146_097;
    let doe = z.saturating_sub(era.saturating_mul(146_097));
    let yoe = doe.saturating_sub(doe / 1460).saturating_add(doe / 36_524).saturating_sub(doe / 146_096) / 365;
    let doy = doe.saturating_sub(yoe.saturating_mul(365).saturating_add(yoe / 4).saturating_sub(yoe / 100));
    let mp = doy.saturating_mul(5).saturating_add(2) / 153;
    let day = doy.saturating_sub(mp.saturating_mul(153).saturating_add(2) / 5).saturating_add(1);
    let month = if mp < 10 { mp.saturating_add(3) } else { mp.saturating_sub(9) };
    let year = yoe.saturating_add(era.saturating_mul(400)).saturating_add(u64::from(month <= 2));
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

fn property(name: &str, value: impl Into<String>) -> JsonValue {
    json!({ "name": format!("{NS}:{name}"), "value": value.into() })
}

fn model_component(e: &Entry, n: usize) -> JsonValue {
    let f = &e.facts;
    let bom_ref = format!("model-{n}");
    let mut c = Map::new();
    c.insert("type".into(), "machine-learning-model".into());
    c.insert("bom-ref".into(), bom_ref.clone().into());
    if let Some(org) = &f.organization {
        c.insert("supplier".into(), json!({ "name": org }));
    }
    c.insert("name".into(), f.name.clone().unwrap_or_else(|| e.reference.clone()).into());
    if let Some(v) = &f.version {
        c.insert("version".into(), v.clone().into());
    }
    if let Some(d) = &f.description {
        c.insert("description".into(), d.clone().into());
    }
    if let Some(l) = &f.license {
        // By name: an SPDX id would have to be one of the schema's list,
        // and a model's license field is free text.
        c.insert("licenses".into(), json!([{ "license": { "name": l } }]));
    }
    if !f.base_models.is_empty() {
        let ancestors: Vec<JsonValue> = f.base_models.iter().map(ancestor).collect();
        c.insert("pedigree".into(), json!({ "ancestors": ancestors }));
    }
    let files: Vec<JsonValue> =
        e.files.iter().enumerate().map(|(i, file)| file_component(file, &bom_ref, i.saturating_add(1))).collect();
    c.insert("components".into(), files.into());
    c.insert("modelCard".into(), model_card(f));
    c.insert("properties".into(), properties(e).into());
    JsonValue::Object(c)
}

fn properties(e: &Entry) -> Vec<JsonValue> {
    let f = &e.facts;
    let mut p = vec![
        property("label", e.label.clone()),
        property("contract", e.contract.clone()),
        property("format", e.format.clone()),
        property("reference", e.reference.clone()),
    ];
    if let Some(q) = &f.file_type {
        p.push(property("quantization", q.clone()));
    }
    if let Some(s) = &f.size_label {
        p.push(property("size-label", s.clone()));
    }
    for (t, n) in &f.tensor_types {
        p.push(property(&format!("tensor-type:{t}"), n.to_string()));
    }
    for (k, v) in &f.metadata {
        p.push(property(&format!("safetensors:metadata:{k}"), v.clone()));
    }
    p
}

fn model_card(f: &Facts) -> JsonValue {
    let mut params = Map::new();
    if let Some(a) = &f.architecture {
        params.insert("architectureFamily".into(), a.clone().into());
    }
    if let Some(a) = &f.model_architecture {
        params.insert("modelArchitecture".into(), a.clone().into());
    }
    if !f.datasets.is_empty() {
        let d: Vec<JsonValue> = f.datasets.iter().map(|n| json!({ "type": "dataset", "name": n })).collect();
        params.insert("datasets".into(), d.into());
    }
    json!({ "modelParameters": params })
}

fn ancestor(b: &BaseModel) -> JsonValue {
    let mut c = Map::new();
    c.insert("type".into(), "machine-learning-model".into());
    if let Some(org) = &b.organization {
        c.insert("supplier".into(), json!({ "name": org }));
    }
    let name = b.name.clone().or_else(|| b.repo_url.clone()).unwrap_or_else(|| "(unnamed base model)".into());
    c.insert("name".into(), name.into());
    if let Some(v) = &b.version {
        c.insert("version".into(), v.clone().into());
    }
    if let Some(url) = b.repo_url.as_deref().filter(|u| plain_url(u)) {
        c.insert("externalReferences".into(), json!([{ "type": "website", "url": url }]));
    }
    JsonValue::Object(c)
}

/// An `http(s)` URL of visible ASCII: one a validator takes as an IRI
/// reference (anything else from a file stays out of the BOM).
pub(super) fn plain_url(u: &str) -> bool {
    (u.starts_with("https://") || u.starts_with("http://"))
        && u.bytes().all(|b| b.is_ascii_graphic() && !b"<>\"{}|\\^`".contains(&b))
}

fn file_component(f: &FileHash, model_ref: &str, n: usize) -> JsonValue {
    json!({
        "type": "file",
        "bom-ref": format!("{model_ref}-file-{n}"),
        "name": f.path.to_string_lossy(),
        "hashes": [{ "alg": "SHA-256", "content": hex::encode(f.sha256) }],
        "properties": [property("size", f.size.to_string())],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn entry(label: &str) -> Entry {
        Entry {
            reference: "m.gguf".into(),
            format: "gguf".into(),
            contract: "gguf-digest/v1".into(),
            label: label.into(),
            files: vec![FileHash { path: PathBuf::from("m.gguf"), size: 3, sha256: [7; 32] }],
            facts: Facts::default(),
        }
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_764_104_399), "2025-11-25T20:59:59Z");
        assert_eq!(rfc3339(MAX_TIMESTAMP), "9999-12-31T23:59:59Z");
        assert_eq!(rfc3339(u64::MAX), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn serial_number_is_a_version_8_uuid_of_the_labels() {
        let a = serial_number(&[entry(&"a".repeat(64))]);
        assert_eq!(a.len(), "urn:uuid:".len() + 36);
        assert_eq!(a.get(23..24), Some("8"), "{a}");
        assert!(matches!(a.get(28..29), Some("8" | "9" | "a" | "b")), "{a}");
        let mut renamed = entry(&"a".repeat(64));
        renamed.reference = "elsewhere.gguf".into();
        assert_eq!(serial_number(&[renamed]), a, "names do not enter it");
        assert_ne!(serial_number(&[entry(&"b".repeat(64))]), a);
        assert_ne!(serial_number(&[entry(&"a".repeat(64)), entry(&"a".repeat(64))]), a);
    }

    #[test]
    fn document_shape() {
        let mut e = entry(&"c".repeat(64));
        e.facts.name = Some("Tiny".into());
        e.facts.license = Some("apache-2.0".into());
        e.facts.architecture = Some("llama".into());
        e.facts.model_architecture = Some("LlamaForCausalLM".into());
        e.facts.file_type = Some("Q4_K_M".into());
        e.facts.base_models = vec![BaseModel {
            name: Some("Base".into()),
            repo_url: Some("https://huggingface.co/org/base".into()),
            ..BaseModel::default()
        }];
        e.facts.datasets = vec!["web".into()];
        let doc = cyclonedx(&[e], 0);
        assert_eq!(doc["bomFormat"], "CycloneDX");
        assert_eq!(doc["specVersion"], "1.6");
        assert_eq!(doc["metadata"]["timestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(doc["metadata"]["tools"]["components"][0]["name"], "gguf-digest");
        let m = &doc["components"][0];
        assert_eq!(m["type"], "machine-learning-model");
        assert_eq!(m["bom-ref"], "model-1");
        assert_eq!(m["name"], "Tiny");
        assert_eq!(m["licenses"][0]["license"]["name"], "apache-2.0");
        assert_eq!(m["pedigree"]["ancestors"][0]["name"], "Base");
        assert_eq!(m["pedigree"]["ancestors"][0]["externalReferences"][0]["url"], "https://huggingface.co/org/base");
        assert_eq!(m["modelCard"]["modelParameters"]["architectureFamily"], "llama");
        assert_eq!(m["modelCard"]["modelParameters"]["datasets"][0]["name"], "web");
        assert_eq!(m["modelCard"]["modelParameters"]["modelArchitecture"], "LlamaForCausalLM");
        let file = &m["components"][0];
        assert_eq!(file["type"], "file");
        assert_eq!(file["bom-ref"], "model-1-file-1");
        assert_eq!(file["hashes"][0]["alg"], "SHA-256");
        assert_eq!(file["hashes"][0]["content"], "07".repeat(32));
        let props = m["properties"].as_array().unwrap();
        let prop = |n: &str| props.iter().find(|p| p["name"] == n).map(|p| p["value"].clone());
        assert_eq!(prop("gguf-digest:label"), Some("c".repeat(64).into()));
        assert_eq!(prop("gguf-digest:format"), Some("gguf".into()));
        assert_eq!(prop("gguf-digest:contract"), Some("gguf-digest/v1".into()));
        assert_eq!(prop("gguf-digest:quantization"), Some("Q4_K_M".into()));
    }

    #[test]
    fn unnamed_models_take_their_reference_and_odd_urls_stay_out() {
        let doc = cyclonedx(&[entry(&"d".repeat(64))], 0);
        assert_eq!(doc["components"][0]["name"], "m.gguf");
        assert!(doc["components"][0].get("licenses").is_none());
        assert!(doc["components"][0].get("pedigree").is_none());
        assert!(!plain_url("javascript:alert(1)"));
        assert!(!plain_url("https://a b"));
        assert!(plain_url("https://huggingface.co/x"));
    }
}
