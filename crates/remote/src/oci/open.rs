//! An `oci://` argument opened: the manifest resolved, then what it holds
//! by its media types: an Ollama model (the Ollama label, the model
//! built from the manifest and its blobs as from a store), a ModelPack
//! artifact (its annotated files as a place: the directory label), a
//! Docker Model Runner artifact (its GGUF or safetensors file, shards
//! beside it by name: that format's label).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gguf_digest_core::format::{AnyModel, OpenOptions};
use gguf_digest_formats::input::RemoteUrl;
use gguf_digest_formats::input::remote::Remote;
use gguf_digest_formats::ollama;

use super::blob::{Blob, Files};
use super::client::{Client, Options, Resolved};
use super::error::OciErrorKind;
use super::layout::{self, DockerWeights, Layout};
use super::manifest::Descriptor;
use super::reference::Reference;
use crate::source::{Beside, RangeDir, ReadMode, Source};
use crate::{Error, RemoteOptions, Result};

/// Opens an `oci://` URL input for the remote opener, with the command's
/// `--allow-http` and `--ca-file`: what it holds, as the formats crate
/// takes it.
pub fn open_url(url: &RemoteUrl, remote: &RemoteOptions, mode: ReadMode) -> Result<Remote> {
    // A registry's credentials come from the Docker config alone: a URL
    // that carries any (or a query) is refused as shown, before its raw
    // text can reach a message.
    if url.was_redacted() {
        return Err(
            url.refused("an oci:// reference carries no credentials or query: put them in the Docker config's `auths`")
        );
    }
    let reference = Reference::parse(url.raw())?;
    let options = Options { allow_http: remote.allow_http, config: None, ca_file: remote.ca_file.clone() };
    let opts = OpenOptions { read_mode: mode, ..OpenOptions::default() };
    Ok(match open(&reference, &options, opts)? {
        Held::Ollama(model) => Remote::Model(AnyModel::new(*model)),
        Held::Directory(place) => Remote::Prefix(place),
        Held::File(source) => Remote::Object(source),
    })
}

/// What an `oci://` argument holds, ready to label.
#[derive(Debug)]
pub enum Held {
    /// An Ollama model.
    Ollama(Box<ollama::Model>),
    /// A ModelPack artifact's files: a place the directory model reads.
    Directory(Beside),
    /// A Docker model's weights: the first (or only) file, its shards
    /// beside it.
    File(Box<Source>),
}

/// Opens `reference`: resolves its manifest and sorts out what it holds.
pub fn open(reference: &Reference, options: &Options, opts: OpenOptions) -> Result<Held> {
    let shown = PathBuf::from(reference.to_string());
    let client = Arc::new(Client::new(reference, options)?);
    let Resolved { manifest, hex, text } = client.resolve()?;
    let what = format!("{reference} (manifest sha256:{hex})");
    let layout = layout::classify(&manifest)
        .map_err(|why| Error::from(OciErrorKind::Manifest { what: what.clone(), why }).in_file(&shown))?;
    match layout {
        Layout::Ollama => {
            let none: Arc<dyn RangeDir> = Files::new(Arc::clone(&client), shown.clone(), Vec::new());
            let mut open_blob = |layer: &ollama::manifest::Layer| -> Result<Source> {
                let d = Descriptor {
                    media_type: layer.media_type.clone(),
                    hex: layer.hex.clone(),
                    size: layer.size,
                    annotations: Vec::new(),
                    artifact_type: None,
                    platform: None,
                };
                let at = blob_path(reference, &d);
                Ok(Blob::new(Arc::clone(&client), &d, Arc::clone(&none)).source(&at))
            };
            let model = ollama::Model::from_blobs(&reference.to_string(), &shown, &text, &mut open_blob, opts)?;
            Ok(Held::Ollama(Box::new(model)))
        }
        Layout::ModelPack(files) => Ok(Held::Directory(Beside::remote(Files::modelpack(client, shown, files)?))),
        Layout::DockerModel(weights) => {
            let files = match weights {
                DockerWeights::Gguf(f) | DockerWeights::Safetensors(f) => f,
            };
            let first = files.first().map(|(n, _)| n.clone()).ok_or_else(|| Error::internal("weights with no file"))?;
            Files::new(client, shown, files).open_name(&first).map(|s| Held::File(Box::new(s)))
        }
    }
}

/// How a blob is shown: `oci://REGISTRY/REPOSITORY/blobs/sha256:HEX`.
fn blob_path(reference: &Reference, d: &Descriptor) -> PathBuf {
    Path::new(&format!("oci://{}/{}", reference.registry, reference.repository)).join("blobs").join(d.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_or_a_query_in_an_oci_url_are_refused_unshown() {
        for given in ["oci://alice:pw-SECRET@127.0.0.1:1/r/m:v1", "oci://127.0.0.1:1/r/m:v1?token=SECRET"] {
            let url = RemoteUrl::parse(given).unwrap();
            let Err(e) = open_url(&url, &RemoteOptions::default(), ReadMode::Pread) else { panic!("{given} opened") };
            let e = e.to_string();
            assert!(!e.contains("SECRET") && e.contains("oci://127.0.0.1:1/r/m:v1") && e.contains("auths"), "{e}");
        }
    }
}
