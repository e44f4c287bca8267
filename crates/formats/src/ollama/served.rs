//! Which of an Ollama model's components are the weights Ollama serves, as
//! its `GetModel` picks them from the manifest (docs/adr/0019): of several
//! `model` layers the *last* one wins; every `adapter` (LoRA) and
//! `projector` layer is applied; a `draft` layer is loaded beside the model;
//! tensor blobs are the weights of a safetensors-based model. A comparison
//! with an approved file must account for all of them, not only the first
//! model layer.

use crate::ollama::manifest::TENSOR_MEDIA_TYPE;
use crate::ollama::model::{Component, ComponentKind};

/// `application/vnd.ollama.image.model`: GGUF weights; the last one is served.
pub const MODEL_MEDIA_TYPE: &str = "application/vnd.ollama.image.model";

/// Media types whose layers are weights Ollama loads (or, for an earlier
/// `model` layer, could load in another version): everything an approved
/// weights file must account for.
const WEIGHTS_MEDIA_TYPES: [&str; 5] = [
    MODEL_MEDIA_TYPE,
    "application/vnd.ollama.image.adapter",
    "application/vnd.ollama.image.projector",
    "application/vnd.ollama.image.draft",
    TENSOR_MEDIA_TYPE,
];

/// Which weights a model file is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    /// A GGUF file: the last `model` layer.
    Gguf,
    /// A safetensors model: the tensor blobs, labelled together.
    Safetensors,
}

/// The weights components of a model, split by what a file is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The component compared with the file (index into the components), if
    /// the model has one of that kind.
    pub main: Option<usize>,
    /// Every other weights component: adapters, projectors, drafts, `model`
    /// layers before the last, tensor blobs beside GGUF weights (or GGUF
    /// weights beside tensor blobs). The file does not account for them.
    pub extra: Vec<usize>,
}

/// True when a component is weights Ollama loads.
pub fn is_weights(c: &Component) -> bool {
    WEIGHTS_MEDIA_TYPES.contains(&c.media_type.as_str())
}

/// Splits the components as Ollama's `GetModel` reads the manifest: in
/// layer order, each `model` layer replacing the one before it.
pub fn served(components: &[Component], against: Against) -> Served {
    let main = match against {
        Against::Gguf => components.iter().rposition(|c| c.media_type == MODEL_MEDIA_TYPE),
        Against::Safetensors => components.iter().position(|c| c.kind == ComponentKind::Tensors),
    };
    let extra =
        components.iter().enumerate().filter(|(i, c)| Some(*i) != main && is_weights(c)).map(|(i, _)| i).collect();
    Served { main, extra }
}

/// A short word for a component's media type (`adapter`, `template`, …).
pub fn kind_word(media_type: &str) -> &str {
    media_type.strip_prefix("application/vnd.ollama.image.").unwrap_or(if media_type.contains("container.image") {
        "config"
    } else {
        media_type
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(media_type: &str, kind: ComponentKind, layer: usize) -> Component {
        Component { media_type: media_type.into(), name: String::new(), kind, layers: vec![layer] }
    }

    #[test]
    fn the_last_model_layer_is_served_and_every_other_weights_layer_is_extra() {
        let comps = [
            c("application/vnd.docker.container.image.v1+json", ComponentKind::Config, 0),
            c(MODEL_MEDIA_TYPE, ComponentKind::Gguf(0), 0),
            c("application/vnd.ollama.image.template", ComponentKind::Blob, 1),
            c(MODEL_MEDIA_TYPE, ComponentKind::Gguf(1), 2),
            c("application/vnd.ollama.image.adapter", ComponentKind::Gguf(2), 3),
            c("application/vnd.ollama.image.projector", ComponentKind::Gguf(3), 4),
            c("application/vnd.ollama.image.draft", ComponentKind::Gguf(4), 5),
            c("application/vnd.ollama.image.license", ComponentKind::Blob, 6),
        ];
        assert_eq!(served(&comps, Against::Gguf), Served { main: Some(3), extra: vec![1, 4, 5, 6] });
        assert_eq!(served(&comps, Against::Safetensors), Served { main: None, extra: vec![1, 3, 4, 5, 6] });
    }

    #[test]
    fn tensor_blobs_are_the_weights_compared_with_a_safetensors_model() {
        let comps = [
            c("application/vnd.docker.container.image.v1+json", ComponentKind::Config, 0),
            c(TENSOR_MEDIA_TYPE, ComponentKind::Tensors, 0),
        ];
        assert_eq!(served(&comps, Against::Safetensors), Served { main: Some(1), extra: vec![] });
        assert_eq!(served(&comps, Against::Gguf), Served { main: None, extra: vec![1] });
    }

    #[test]
    fn kind_words() {
        assert_eq!(kind_word("application/vnd.ollama.image.adapter"), "adapter");
        assert_eq!(kind_word("application/vnd.docker.container.image.v1+json"), "config");
        assert_eq!(kind_word("text/plain"), "text/plain");
    }
}
