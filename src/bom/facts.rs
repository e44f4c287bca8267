//! What a model says about itself, as far as a BOM can use it: GGUF's
//! `general.*` keys, safetensors' `__metadata__`, an Ollama model's weights
//! and config. Read from the model already labelled (each GGUF string read
//! again is checked against the digest the label binds), so nothing here
//! can disagree with the label.

use std::collections::BTreeMap;

use crate::directory::model::Part;
use crate::gguf;
use crate::{AnyModel, Result};

/// Strings longer than this are left out: a BOM names, it does not quote.
const MAX_STRING: u64 = 4096;

/// A model this one was derived from (GGUF `general.base_model.N.*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaseModel {
    /// `name`.
    pub name: Option<String>,
    /// `organization`.
    pub organization: Option<String>,
    /// `version`.
    pub version: Option<String>,
    /// `repo_url`.
    pub repo_url: Option<String>,
}

/// The facts a BOM takes from a model's own metadata; every field is
/// `None` or empty when the model does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// `general.name`.
    pub name: Option<String>,
    /// `general.version`.
    pub version: Option<String>,
    /// `general.description`.
    pub description: Option<String>,
    /// `general.organization`.
    pub organization: Option<String>,
    /// `general.architecture` (GGUF), `model_family` (Ollama config),
    /// `model_type` (a Hugging Face `config.json`).
    pub architecture: Option<String>,
    /// A Hugging Face `config.json`'s `architectures` (e.g. `BertModel`), joined by ", ".
    pub model_architecture: Option<String>,
    /// `general.license`.
    pub license: Option<String>,
    /// `general.size_label`.
    pub size_label: Option<String>,
    /// `general.base_model.N.*`, in N's order.
    pub base_models: Vec<BaseModel>,
    /// `general.dataset.N.name`, in N's order.
    pub datasets: Vec<String>,
    /// `general.file_type` as llama.cpp names it (`Q4_K_M`), else its number.
    pub file_type: Option<String>,
    /// Tensor types and how many tensors have each (`Q4_K` or `BF16`), by name.
    pub tensor_types: BTreeMap<String, u64>,
    /// safetensors `__metadata__` entries (every group's, first one wins).
    pub metadata: BTreeMap<String, String>,
}

/// The facts of a labelled model.
pub fn of(model: &AnyModel) -> Result<Facts> {
    let mut facts = Facts::default();
    match model {
        AnyModel::Gguf(m) => gguf_facts(m, &mut facts)?,
        AnyModel::Safetensors(m) => safetensors_facts(m, &mut facts),
        AnyModel::Ollama(m) => {
            // The first weights file is the model (later ones: projectors, adapters).
            if let Some(g) = m.gguf(0) {
                gguf_facts(g, &mut facts)?;
            }
            if let Some(st) = m.tensors() {
                safetensors_facts(st, &mut facts);
            }
            let config = m.config_content();
            if facts.architecture.is_none() {
                facts.architecture = config.get("model_family").and_then(|v| v.as_str()).map(str::to_owned);
            }
            if facts.file_type.is_none() {
                facts.file_type = config.get("file_type").and_then(|v| v.as_str()).map(str::to_owned);
            }
        }
        AnyModel::Pytorch(m) => pytorch_facts(m, &mut facts),
        AnyModel::Directory(d) => {
            // Its weights components say what the model is (the first of
            // each kind, in skeleton order, wins a field), and a top-level
            // config.json its architecture, as transformers reads it.
            for c in d.components() {
                match &c.part {
                    Part::Gguf(g) => gguf_facts(g, &mut facts)?,
                    Part::Safetensors(st) => safetensors_facts(st, &mut facts),
                    Part::File(source) if c.name == b"config.json" && source.len() <= MAX_CONFIG_JSON => {
                        add_config_json(&source.head(source.len())?, &mut facts);
                    }
                    Part::File(_) => {}
                }
            }
        }
    }
    Ok(facts)
}

fn safetensors_facts(m: &crate::safetensors::Model, facts: &mut Facts) {
    for g in m.groups() {
        for (k, v) in &g.map {
            facts.metadata.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for t in m.tensors() {
        let n = facts.tensor_types.entry(t.entry.dtype.name.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
    }
}

fn gguf_facts(m: &gguf::Model, facts: &mut Facts) -> Result<()> {
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
        let n = facts.tensor_types.entry(t.info.ggml_type.name.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
    }
    Ok(())
}

/// The most of a `config.json` read for its facts: a model's is a few KiB.
pub const MAX_CONFIG_JSON: u64 = 1 << 20;

/// Adds what a Hugging Face `config.json` says (`model_type`,
/// `architectures`) to `facts`; text that is not such JSON adds nothing
/// (the file is still in the BOM, hashed, as a file of the model).
pub fn add_config_json(text: &[u8], facts: &mut Facts) {
    let Ok(json) = crate::json::parse_strict(text, 16) else { return };
    if facts.architecture.is_none() {
        facts.architecture = json.get("model_type").and_then(|v| v.as_str()).map(str::to_owned);
    }
    if facts.model_architecture.is_none() {
        let names: Vec<&str> = json
            .get("architectures")
            .and_then(|v| v.as_array())
            .unwrap_or(&[])
            .iter()
            .filter_map(|a| a.as_str())
            .collect();
        facts.model_architecture = (!names.is_empty()).then(|| names.join(", "));
    }
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

/// A PyTorch checkpoint's facts: its tensors' dtypes.
fn pytorch_facts(m: &crate::pytorch::Model, facts: &mut Facts) {
    let tree = m.tree();
    for leaf in &tree.tensors {
        if let Some(t) = tree.tensor(leaf) {
            let n = facts.tensor_types.entry(t.dtype.name.to_string()).or_default();
            *n = n.saturating_add(1);
        }
    }
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

    #[test]
    fn config_json_gives_family_and_architectures() {
        let mut f = Facts::default();
        add_config_json(br#"{"model_type": "bert", "architectures": ["BertModel", 3, "BertForX"]}"#, &mut f);
        assert_eq!(f.architecture.as_deref(), Some("bert"));
        assert_eq!(f.model_architecture.as_deref(), Some("BertModel, BertForX"));
        let mut g = Facts::default();
        add_config_json(b"{\"model_type\": 1, \"model_type\": 2}", &mut g);
        add_config_json(b"not json", &mut g);
        assert_eq!(g, Facts::default());
    }
}
