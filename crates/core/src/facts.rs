//! What a model says about itself, as far as a BOM can use it: the fields
//! every format fills from its own metadata ([`Model::facts`](crate::format::Opened::facts),
//! in its folder: GGUF's `general.*` keys, safetensors' `__metadata__`, an
//! Ollama model's weights and config, a directory's `config.json`). Read
//! from the model already labelled, so nothing here can disagree with the
//! label.

use std::collections::BTreeMap;

/// Strings longer than this are left out: a BOM names, it does not quote.
pub const MAX_STRING: u64 = 4096;

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

impl Facts {
    /// Counts one more tensor of type `name`.
    pub fn count_tensor_type(&mut self, name: &str) {
        let n = self.tensor_types.entry(name.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
    }
}
