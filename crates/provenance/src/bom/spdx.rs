//! The SPDX 3.0.1 JSON-LD document of BOM entries: one `ai_AIPackage` per
//! model, its files as `software_File`s it `contains` (docs/adr/0028-ai-bom.md).
//! A pure function of the entries and a timestamp, as [`super::cyclonedx`].

use serde_json::{Value as JsonValue, json};

use super::Entry;
use super::cyclonedx::{rfc3339, serial_number};
use crate::facts::BaseModel;

const CREATION_INFO: &str = "_:creationinfo";

/// The SPDX 3.0.1 document of `entries` made at `timestamp` (seconds since
/// the Unix epoch). Element ids are the serial number's URN and a fragment,
/// so they are as deterministic as it is.
pub fn spdx(entries: &[Entry], timestamp: u64) -> JsonValue {
    let base = serial_number(entries);
    let id = |frag: &str| format!("{base}#{frag}");
    let mut graph = vec![
        json!({
            "type": "CreationInfo",
            "@id": CREATION_INFO,
            "specVersion": "3.0.1",
            "created": rfc3339(timestamp),
            "createdBy": [id("gguf-digest")],
            "createdUsing": [id("tool")],
        }),
        json!({ "type": "SoftwareAgent", "spdxId": id("gguf-digest"), "creationInfo": CREATION_INFO, "name": "gguf-digest" }),
        json!({
            "type": "Tool",
            "spdxId": id("tool"),
            "creationInfo": CREATION_INFO,
            "name": format!("gguf-digest {}", env!("CARGO_PKG_VERSION")),
        }),
    ];
    let mut roots = Vec::with_capacity(entries.len());
    let mut elements = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let model = id(&format!("model-{}", i.saturating_add(1)));
        roots.push(JsonValue::from(model.clone()));
        let before = graph.len();
        model_elements(e, &model, &mut graph);
        elements.extend(graph.iter().skip(before).filter_map(|el| el.get("spdxId").cloned()));
    }
    graph.push(json!({
        "type": "SpdxDocument",
        "spdxId": id("document"),
        "creationInfo": CREATION_INFO,
        "name": "gguf-digest AI-BOM",
        "profileConformance": ["core", "software", "ai"],
        "rootElement": roots,
        "element": elements,
    }));
    json!({ "@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": graph })
}

/// The package of one model, its supplier, files, license and base models,
/// and the relationships between them, appended to `graph`.
fn model_elements(e: &Entry, model: &str, graph: &mut Vec<JsonValue>) {
    let f = &e.facts;
    let mut pkg = json!({
        "type": "ai_AIPackage",
        "spdxId": model,
        "creationInfo": CREATION_INFO,
        "name": f.name.clone().unwrap_or_else(|| e.reference.clone()),
        "software_primaryPurpose": "model",
        "externalIdentifier": [{
            "type": "ExternalIdentifier",
            "externalIdentifierType": "other",
            "identifier": format!("sha256:{}", e.label),
            "issuingAuthority": "gguf-digest",
            "comment": format!("gguf-digest label ({} contract {}) of {}", e.format, e.contract, e.reference),
        }],
        "comment": comment(e),
    });
    let mut set = |k: &str, v: JsonValue| {
        if let Some(o) = pkg.as_object_mut() {
            o.insert(k.to_owned(), v);
        }
    };
    if let Some(v) = &f.version {
        set("software_packageVersion", v.clone().into());
    }
    if let Some(d) = &f.description {
        set("description", d.clone().into());
    }
    let types: Vec<&String> = f.architecture.iter().chain(f.model_architecture.iter()).collect();
    if !types.is_empty() {
        set("ai_typeOfModel", json!(types));
    }
    if let Some(org) = &f.organization {
        let supplier = format!("{model}-supplier");
        graph.push(json!({ "type": "Organization", "spdxId": supplier, "creationInfo": CREATION_INFO, "name": org }));
        set("suppliedBy", supplier.into());
    }
    graph.push(pkg);
    let mut files = Vec::with_capacity(e.files.len());
    for (j, file) in e.files.iter().enumerate() {
        let fid = format!("{model}-file-{}", j.saturating_add(1));
        graph.push(json!({
            "type": "software_File",
            "spdxId": fid,
            "creationInfo": CREATION_INFO,
            "name": file.path.to_string_lossy(),
            "verifiedUsing": [{ "type": "Hash", "algorithm": "sha256", "hashValue": hex::encode(file.sha256) }],
            "comment": format!("{} bytes", file.size),
        }));
        files.push(fid);
    }
    if !files.is_empty() {
        graph.push(relationship(&format!("{model}-contains"), model, "contains", &files));
    }
    if let Some(l) = f.license.as_deref().filter(|l| license_token(l)) {
        let lid = format!("{model}-license");
        graph.push(json!({
            "type": "simplelicensing_LicenseExpression",
            "spdxId": lid,
            "creationInfo": CREATION_INFO,
            "simplelicensing_licenseExpression": l,
        }));
        graph.push(relationship(&format!("{model}-declared-license"), model, "hasDeclaredLicense", &[lid]));
    }
    for (k, b) in f.base_models.iter().enumerate() {
        let bid = format!("{model}-base-{}", k.saturating_add(1));
        graph.push(base_package(b, &bid));
        graph.push(relationship(&format!("{bid}-ancestor"), &bid, "ancestorOf", &[model.to_owned()]));
    }
}

fn base_package(b: &BaseModel, id: &str) -> JsonValue {
    let name = b.name.clone().or_else(|| b.repo_url.clone()).unwrap_or_else(|| "(unnamed base model)".into());
    let mut p = json!({
        "type": "ai_AIPackage",
        "spdxId": id,
        "creationInfo": CREATION_INFO,
        "name": name,
        "software_primaryPurpose": "model",
    });
    if let Some(o) = p.as_object_mut() {
        if let Some(v) = &b.version {
            o.insert("software_packageVersion".into(), v.clone().into());
        }
        if let Some(url) = b.repo_url.as_deref().filter(|u| super::cyclonedx::plain_url(u)) {
            o.insert("software_downloadLocation".into(), url.into());
        }
    }
    p
}

fn relationship(id: &str, from: &str, kind: &str, to: &[String]) -> JsonValue {
    json!({
        "type": "Relationship",
        "spdxId": id,
        "creationInfo": CREATION_INFO,
        "from": from,
        "relationshipType": kind,
        "to": to,
    })
}

/// One license identifier (`apache-2.0`, `MIT`, `LicenseRef-x`): what can be
/// written as a license expression without parsing one. Free text (`other:
/// see LICENSE`) stays out: SPDX 3 has no field for a license by name alone.
fn license_token(l: &str) -> bool {
    !l.is_empty() && l.len() <= 100 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.+".contains(&b))
}

/// What CycloneDX carries as `gguf-digest:*` properties and SPDX 3 has no
/// field for, as one line of text.
fn comment(e: &Entry) -> String {
    let f = &e.facts;
    let mut parts = vec![format!("gguf-digest format {}, contract {}, label {}", e.format, e.contract, e.label)];
    if let Some(q) = &f.file_type {
        parts.push(format!("quantization {q}"));
    }
    if let Some(s) = &f.size_label {
        parts.push(format!("size {s}"));
    }
    if !f.tensor_types.is_empty() {
        let t: Vec<String> = f.tensor_types.iter().map(|(k, n)| format!("{k}={n}")).collect();
        parts.push(format!("tensor types {}", t.join(" ")));
    }
    if !f.datasets.is_empty() {
        parts.push(format!("datasets {}", f.datasets.join("; ")));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bom::{Facts, FileHash};
    use std::path::PathBuf;

    #[test]
    fn document_shape() {
        let mut facts = Facts { name: Some("Tiny".into()), license: Some("apache-2.0".into()), ..Facts::default() };
        facts.base_models = vec![BaseModel { name: Some("Base".into()), ..BaseModel::default() }];
        let e = Entry {
            reference: "m.gguf".into(),
            format: "gguf".into(),
            contract: "canonical-skeleton-v1".into(),
            label: "ab".repeat(32),
            files: vec![FileHash { path: PathBuf::from("m.gguf"), size: 3, sha256: [1; 32] }],
            facts,
        };
        let doc = spdx(std::slice::from_ref(&e), 0);
        let graph = doc["@graph"].as_array().unwrap();
        let of = |t: &str| graph.iter().filter(|el| el["type"] == t).collect::<Vec<_>>();
        assert_eq!(of("CreationInfo")[0]["created"], "1970-01-01T00:00:00Z");
        let pkg = of("ai_AIPackage")[0];
        assert_eq!(pkg["name"], "Tiny");
        assert_eq!(pkg["externalIdentifier"][0]["identifier"], format!("sha256:{}", "ab".repeat(32)));
        assert_eq!(of("software_File")[0]["verifiedUsing"][0]["hashValue"], "01".repeat(32));
        assert_eq!(of("simplelicensing_LicenseExpression")[0]["simplelicensing_licenseExpression"], "apache-2.0");
        let kinds: Vec<&JsonValue> = of("Relationship").iter().map(|r| &r["relationshipType"]).collect();
        assert_eq!(kinds, ["contains", "hasDeclaredLicense", "ancestorOf"]);
        let document = of("SpdxDocument")[0];
        assert_eq!(document["rootElement"][0], pkg["spdxId"]);
        // Every element but the document, the creation info, the agent and tool is listed.
        assert_eq!(document["element"].as_array().unwrap().len(), graph.len() - 4);
        assert!(!license_token("other: see LICENSE"));
        assert_eq!(spdx(std::slice::from_ref(&e), 0), doc, "a pure function");
    }
}
