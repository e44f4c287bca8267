//! What a directory says of itself for a BOM: its weights components'
//! facts (the first of each kind, in skeleton order, wins a field) and a
//! top-level `config.json`'s architecture, as transformers reads it.

use crate::directory::model::{Model, Part};
use crate::error::Result;
use crate::facts::Facts;

/// Adds every component's facts to `facts`, in skeleton order.
pub(super) fn facts(d: &Model, facts: &mut Facts) -> Result<()> {
    for c in d.components() {
        match &c.part {
            Part::Weights(m) => m.facts(facts)?,
            Part::File(source) if c.name == b"config.json" && source.len() <= MAX_CONFIG_JSON => {
                add_config_json(&source.head(source.len())?, facts);
            }
            Part::File(_) => {}
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
