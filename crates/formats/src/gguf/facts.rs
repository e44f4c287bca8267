//! What a GGUF model says of itself for a BOM: `general.*` keys, base
//! models, datasets, file type, tensor types.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::facts::{BaseModel, Facts, MAX_STRING};
use crate::gguf::Model;

/// Adds what a GGUF model's `general.*` keys and tensor types say to
/// `facts` (each string read again is checked against the digest the label
/// binds).
pub(super) fn facts(m: &Model, facts: &mut Facts) -> Result<()> {
    let mut bases: BTreeMap<u64, BaseModel> = BTreeMap::new();
    let mut datasets: BTreeMap<u64, String> = BTreeMap::new();
    for kv in m.kvs() {
        let Ok(key) = std::str::from_utf8(&kv.kv.key) else { continue };
        let Some(rest) = key.strip_prefix("general.") else { continue };
        if rest == "file_type" {
            facts.file_type = kv.kv.value.as_integer().map(file_type_name);
            continue;
        }
        let text = || -> Result<Option<String>> {
            Ok(m.string_bytes(kv, MAX_STRING)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
        };
        let slot = match rest {
            "name" => &mut facts.name,
            "version" => &mut facts.version,
            "description" => &mut facts.description,
            "organization" => &mut facts.organization,
            "architecture" => &mut facts.architecture,
            "license" => &mut facts.license,
            "size_label" => &mut facts.size_label,
            _ => {
                if let Some((n, field)) = numbered(rest, "base_model.") {
                    let base = bases.entry(n).or_default();
                    let slot = match field {
                        "name" => &mut base.name,
                        "organization" => &mut base.organization,
                        "version" => &mut base.version,
                        "repo_url" => &mut base.repo_url,
                        _ => continue,
                    };
                    *slot = text()?;
                } else if let Some((n, "name")) = numbered(rest, "dataset.") {
                    if let Some(t) = text()? {
                        datasets.insert(n, t);
                    }
                }
                continue;
            }
        };
        *slot = text()?;
    }
    facts.base_models = bases.into_values().filter(|b| b != &BaseModel::default()).collect();
    facts.datasets = datasets.into_values().collect();
    for t in m.tensors().iter() {
        facts.count_tensor_type(t.info.ggml_type.name);
    }
    Ok(())
}

/// `base_model.3.name` → `(3, "name")` for `prefix` `base_model.`.
fn numbered<'k>(key: &'k str, prefix: &str) -> Option<(u64, &'k str)> {
    let (n, field) = key.strip_prefix(prefix)?.split_once('.')?;
    Some((n.parse().ok()?, field))
}

/// llama.cpp's name of a `general.file_type` (`enum llama_ftype`), else the number.
fn file_type_name(n: i128) -> String {
    let name = match n {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        21 => "Q2_K_S",
        22 => "IQ3_XS",
        23 => "IQ3_XXS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        27 => "IQ3_M",
        28 => "IQ2_S",
        29 => "IQ2_M",
        30 => "IQ4_XS",
        31 => "IQ1_M",
        32 => "BF16",
        36 => "TQ1_0",
        37 => "TQ2_0",
        38 => "MXFP4_MOE",
        _ => return n.to_string(),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_keys_and_file_types() {
        assert_eq!(numbered("base_model.0.name", "base_model."), Some((0, "name")));
        assert_eq!(numbered("base_model.count", "base_model."), None);
        assert_eq!(numbered("base_model.x.name", "base_model."), None);
        assert_eq!(file_type_name(15), "Q4_K_M");
        assert_eq!(file_type_name(3), "Q4_1");
        assert_eq!(file_type_name(999), "999");
    }
}
