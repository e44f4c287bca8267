//! What a manifest holds, by its media types: an Ollama model, a CNCF
//! ModelPack artifact, or a Docker Model Runner artifact. Anything else is
//! refused by name (its config's and layers' media types), never guessed.

use super::manifest::{Descriptor, Manifest};

/// The config media type of Ollama's manifests (Docker's image config).
pub const OLLAMA_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
/// The prefix of every Ollama layer media type (`.model`, `.template`,
/// `.system`, `.params`, `.license`, `.projector`, `.adapter`,
/// `.messages`, `.tensor`, ...).
pub const OLLAMA_LAYER: &str = "application/vnd.ollama.image.";

/// ModelPack's artifact type.
pub const MODELPACK_ARTIFACT: &str = "application/vnd.cncf.model.manifest.v1+json";
/// ModelPack's config media type.
pub const MODELPACK_CONFIG: &str = "application/vnd.cncf.model.config.v1+json";
/// The media type prefixes of ModelPack layers: the CNCF spec's, and the
/// CloudNativeAI draft's of mid-2025 artifacts.
pub const MODELPACK_LAYERS: [&str; 2] = ["application/vnd.cncf.model.", "application/vnd.cnai.model."];
/// The annotations naming a ModelPack layer's file, the current one first.
pub const MODELPACK_FILEPATH: [&str; 2] = ["org.cncf.model.filepath", "org.cnai.model.filepath"];

/// Docker Model Runner's config media types (v0.1 as pushed by `docker
/// model package`, the earlier v1 draft, and v0.2).
pub const DOCKER_AI_CONFIGS: [&str; 3] = [
    "application/vnd.docker.ai.model.config.v0.1+json",
    "application/vnd.docker.ai.model.config.v0.2+json",
    "application/vnd.docker.ai.model.config.v1+json",
];
/// Docker Model Runner's GGUF layers (current, and the first draft's).
pub const DOCKER_AI_GGUF: [&str; 2] =
    ["application/vnd.docker.ai.gguf.v3", "application/vnd.docker.ai.model.file.v1+gguf"];
/// Docker Model Runner's safetensors layer.
pub const DOCKER_AI_SAFETENSORS: &str = "application/vnd.docker.ai.safetensors";
/// The annotation some tools set to a layer's file name.
pub const TITLE: &str = "org.opencontainers.image.title";

/// What a manifest holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// An Ollama model: the manifest as Ollama stores it.
    Ollama,
    /// A ModelPack artifact: its files, each a path and the layer holding
    /// it, sorted by path.
    ModelPack(Vec<(String, Descriptor)>),
    /// A Docker Model Runner artifact: its weights, GGUF shards (in name
    /// order) or safetensors files.
    DockerModel(DockerWeights),
}

/// The weights of a Docker Model Runner artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DockerWeights {
    /// One GGUF file, or a shard set (each with its file name).
    Gguf(Vec<(String, Descriptor)>),
    /// Safetensors files, each with its file name.
    Safetensors(Vec<(String, Descriptor)>),
}

/// Classifies a manifest. `Err` says what it holds and why it is not read.
pub fn classify(m: &Manifest) -> Result<Layout, String> {
    let has_prefix = |p: &str| m.layers.iter().any(|l| l.media_type.starts_with(p));
    if m.config.media_type == OLLAMA_CONFIG && has_prefix(OLLAMA_LAYER) {
        return Ok(Layout::Ollama);
    }
    if m.artifact_type.as_deref() == Some(MODELPACK_ARTIFACT)
        || m.config.media_type == MODELPACK_CONFIG
        || m.config.media_type == "application/vnd.cnai.model.config.v1+json"
    {
        return modelpack(m).map(Layout::ModelPack);
    }
    if DOCKER_AI_CONFIGS.contains(&m.config.media_type.as_str()) || has_prefix("application/vnd.docker.ai.") {
        return docker_model(m).map(Layout::DockerModel);
    }
    let mut types: Vec<&str> = m.layers.iter().map(|l| l.media_type.as_str()).collect();
    types.dedup();
    Err(format!(
        "holds no model this tool reads (config {}, layers {}): Ollama, ModelPack and Docker Model Runner artifacts are",
        m.config.media_type,
        if types.is_empty() { "none".to_string() } else { types.join(", ") }
    ))
}

fn modelpack(m: &Manifest) -> Result<Vec<(String, Descriptor)>, String> {
    let mut files: Vec<(String, Descriptor)> = Vec::new();
    for (i, layer) in m.layers.iter().enumerate() {
        let Some(kind) = MODELPACK_LAYERS.iter().find_map(|p| layer.media_type.strip_prefix(p)) else {
            return Err(format!("layers[{i}] is a {} in a ModelPack artifact", layer.media_type));
        };
        if kind.ends_with(".tar+gzip") || kind.ends_with(".tar+zstd") {
            return Err(format!(
                "layers[{i}] is a {}: a compressed ModelPack layer cannot be read by ranges, only .raw and uncompressed .tar ones are read",
                layer.media_type
            ));
        }
        if !kind.ends_with(".raw") && !kind.ends_with(".tar") {
            return Err(format!("layers[{i}] is a {}: not a ModelPack layer this tool reads", layer.media_type));
        }
        let path = MODELPACK_FILEPATH
            .iter()
            .find_map(|k| layer.annotation(k))
            .ok_or_else(|| format!("layers[{i}] names no file ({} annotation)", MODELPACK_FILEPATH[0]))?;
        check_path(path).map_err(|why| format!("layers[{i}]: the file path {path:?} {why}"))?;
        files.push((path.to_string(), layer.clone()));
    }
    sorted_unique(files)
}

/// True for an uncompressed tar ModelPack layer (`....v1.tar`): its files
/// are the tar's regular files, read as slices of the blob (`tar.rs`).
pub fn is_tar(media_type: &str) -> bool {
    MODELPACK_LAYERS.iter().any(|p| media_type.strip_prefix(p).is_some_and(|k| k.ends_with(".tar")))
}

/// Checks a tar layer's file paths against the layer's annotated path
/// (docs/adr/0046): as `modctl` writes them, the annotation is the file's
/// path and the tar holds that path (or, for a directory, paths below it).
/// The tar's paths name the files (they are what extracting gives); an
/// entry that is neither the annotated path nor below it contradicts the
/// annotation and is refused.
pub fn check_tar_paths<'a>(annotated: &str, paths: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut any = false;
    for p in paths {
        any = true;
        let below = p.strip_prefix(annotated).is_some_and(|rest| rest.starts_with('/'));
        if p != annotated && !below {
            return Err(format!(
                "its tar holds {p:?}, which is neither the file {annotated:?} its annotation names nor below it"
            ));
        }
    }
    if any { Ok(()) } else { Err(format!("its tar holds no regular file (its annotation names {annotated:?})")) }
}

fn docker_model(m: &Manifest) -> Result<DockerWeights, String> {
    let named = |pick: &dyn Fn(&str) -> bool, ext: &str| -> Result<Vec<(String, Descriptor)>, String> {
        let chosen: Vec<&Descriptor> = m.layers.iter().filter(|l| pick(&l.media_type)).collect();
        let count = chosen.len();
        let files = chosen
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                let name = match l.annotation(TITLE).or_else(|| MODELPACK_FILEPATH.iter().find_map(|k| l.annotation(k)))
                {
                    Some(n) => {
                        check_path(n)
                            .map_err(|why| format!("the layer {} names its file {n:?}, which {why}", l.digest()))?;
                        n.to_string()
                    }
                    // Unnamed layers: named as the format's loaders name
                    // them, in manifest order.
                    None if count == 1 => format!("model.{ext}"),
                    None => format!("model-{:05}-of-{count:05}.{ext}", i.saturating_add(1)),
                };
                Ok((name, l.clone()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        sorted_unique(files)
    };
    let gguf = named(&|t| DOCKER_AI_GGUF.contains(&t), "gguf")?;
    let st = named(&|t| t == DOCKER_AI_SAFETENSORS, "safetensors")?;
    match (gguf.is_empty(), st.is_empty()) {
        (false, true) => Ok(DockerWeights::Gguf(gguf)),
        (true, false) => Ok(DockerWeights::Safetensors(st)),
        (false, false) => Err("a Docker model artifact with both GGUF and safetensors weights".into()),
        (true, true) => Err("a Docker model artifact with no GGUF or safetensors layer".into()),
    }
}

fn sorted_unique(mut files: Vec<(String, Descriptor)>) -> Result<Vec<(String, Descriptor)>, String> {
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(w) = files.windows(2).find(|w| matches!(w, [a, b] if a.0 == b.0)) {
        let name = w.first().map(|(n, _)| n.as_str()).unwrap_or("");
        return Err(format!("two layers name the file {name:?}"));
    }
    Ok(files)
}

/// A file path from an annotation: relative, `/`-separated, no empty, `.`
/// or `..` component, no backslash or NUL. It only names a file in the
/// label; nothing is ever opened by it.
pub fn check_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("is empty");
    }
    if path.starts_with('/') {
        return Err("is absolute");
    }
    if path.contains('\\') || path.contains('\0') {
        return Err("holds a backslash or NUL");
    }
    if path.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err("has an empty, '.' or '..' component");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(media: &str, n: u8, ann: &[(&str, &str)]) -> Descriptor {
        Descriptor {
            media_type: media.into(),
            hex: format!("{n:064x}"),
            size: 1,
            annotations: ann.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            artifact_type: None,
            platform: None,
        }
    }

    fn m(config: &str, artifact: Option<&str>, layers: Vec<Descriptor>) -> Manifest {
        Manifest { media_type: "x".into(), artifact_type: artifact.map(Into::into), config: d(config, 0, &[]), layers }
    }

    #[test]
    fn ollama_by_its_config_and_layers() {
        let l =
            vec![d("application/vnd.ollama.image.model", 1, &[]), d("application/vnd.ollama.image.template", 2, &[])];
        assert_eq!(classify(&m(OLLAMA_CONFIG, None, l)), Ok(Layout::Ollama));
        let e = classify(&m(OLLAMA_CONFIG, None, vec![d("application/vnd.oci.image.layer.v1.tar+gzip", 1, &[])]))
            .unwrap_err();
        assert!(e.contains("holds no model") && e.contains("tar+gzip"), "{e}");
    }

    #[test]
    fn modelpack_files_by_either_annotation() {
        let layers = vec![
            d("application/vnd.cncf.model.weight.v1.raw", 1, &[("org.cncf.model.filepath", "model.safetensors")]),
            d("application/vnd.cncf.model.weight.config.v1.raw", 2, &[("org.cnai.model.filepath", "config.json")]),
            d("application/vnd.cncf.model.doc.v1.raw", 3, &[("org.cncf.model.filepath", "docs/README.md")]),
        ];
        let Ok(Layout::ModelPack(files)) = classify(&m(MODELPACK_CONFIG, Some(MODELPACK_ARTIFACT), layers.clone()))
        else {
            panic!()
        };
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["config.json", "docs/README.md", "model.safetensors"]);
        for (bad, why) in [
            (d("application/vnd.cncf.model.weight.v1.tar+gzip", 4, &[("org.cncf.model.filepath", "w")]), "compressed"),
            (d("application/vnd.cnai.model.weight.v1.tar+zstd", 4, &[("org.cncf.model.filepath", "w")]), "by ranges"),
            (d("application/vnd.cncf.model.weight.v1.zip", 4, &[("org.cncf.model.filepath", "w")]), "not a ModelPack"),
            (d("application/vnd.cncf.model.weight.v1.raw", 4, &[]), "names no file"),
            (d("application/vnd.cncf.model.weight.v1.raw", 4, &[("org.cncf.model.filepath", "../x")]), "'..'"),
            (d("application/vnd.cncf.model.weight.v1.raw", 4, &[("org.cncf.model.filepath", "/x")]), "absolute"),
            (
                d("application/vnd.cncf.model.weight.v1.raw", 4, &[("org.cncf.model.filepath", "config.json")]),
                "two layers",
            ),
            (d("application/octet-stream", 4, &[]), "in a ModelPack"),
        ] {
            let mut l = layers.clone();
            l.push(bad);
            let e = classify(&m("c", Some(MODELPACK_ARTIFACT), l)).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn tar_layers_are_read_and_their_paths_held_to_the_annotation() {
        let layers = vec![
            d("application/vnd.cncf.model.weight.v1.tar", 1, &[("org.cncf.model.filepath", "model.safetensors")]),
            d("application/vnd.cnai.model.doc.v1.tar", 2, &[("org.cnai.model.filepath", "README.md")]),
            d("application/vnd.cncf.model.weight.config.v1.raw", 3, &[("org.cncf.model.filepath", "config.json")]),
        ];
        let Ok(Layout::ModelPack(files)) = classify(&m(MODELPACK_CONFIG, None, layers)) else { panic!() };
        let tars: Vec<bool> = files.iter().map(|(_, d)| is_tar(&d.media_type)).collect();
        assert_eq!(tars, [true, false, true]);
        assert!(!is_tar("application/vnd.cncf.model.weight.v1.tar+gzip") && !is_tar("application/x.tar"));
        assert_eq!(check_tar_paths("m.gguf", ["m.gguf"]), Ok(()));
        assert_eq!(check_tar_paths("docs", ["docs/a.md", "docs/b/c.md"]), Ok(()));
        for (paths, why) in [
            (&["model.gguf"][..], "neither"),
            (&["m.gguf2"][..], "neither"),
            (&["docsx/a"][..], "neither"),
            (&[][..], "no regular"),
        ] {
            let e = check_tar_paths(
                if paths.first() == Some(&"docsx/a") { "docs" } else { "m.gguf" },
                paths.iter().copied(),
            )
            .unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn docker_model_weights_and_names() {
        let cfg = DOCKER_AI_CONFIGS[0];
        let one = vec![d(DOCKER_AI_GGUF[0], 1, &[]), d("application/vnd.docker.ai.license", 2, &[])];
        assert_eq!(
            classify(&m(cfg, None, one)).unwrap(),
            Layout::DockerModel(DockerWeights::Gguf(vec![("model.gguf".into(), d(DOCKER_AI_GGUF[0], 1, &[]))]))
        );
        let shards = vec![d(DOCKER_AI_GGUF[0], 1, &[]), d(DOCKER_AI_GGUF[0], 2, &[])];
        let Ok(Layout::DockerModel(DockerWeights::Gguf(files))) = classify(&m(cfg, None, shards)) else { panic!() };
        assert_eq!(files[1].0, "model-00002-of-00002.gguf");
        let titled = vec![
            d(DOCKER_AI_SAFETENSORS, 1, &[(TITLE, "b.safetensors")]),
            d(DOCKER_AI_SAFETENSORS, 2, &[(TITLE, "a.safetensors")]),
        ];
        let Ok(Layout::DockerModel(DockerWeights::Safetensors(files))) = classify(&m(cfg, None, titled)) else {
            panic!()
        };
        assert_eq!(files[0].0, "a.safetensors");
        assert!(classify(&m(cfg, None, vec![d(DOCKER_AI_GGUF[0], 1, &[]), d(DOCKER_AI_SAFETENSORS, 2, &[])])).is_err());
        assert!(
            classify(&m(cfg, None, vec![d("application/vnd.docker.ai.license", 2, &[])]))
                .unwrap_err()
                .contains("no GGUF")
        );
    }
}
