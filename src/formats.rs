//! The one list of formats. Each format describes itself once, in its
//! folder ([`Description`]: how its files are told apart, its shard names,
//! its approximate size, its `inspect` and `diff`); here a [`Format`] names
//! one and an [`AnyModel`] holds one opened model of any. Every question
//! about a format is a `match` on one of the two enums, so adding a format
//! is a folder and one variant of each, and the compiler lists every place
//! that must learn about it (docs/adr/0025-formats-behind-an-enum.md).

use std::path::{Path, PathBuf};

use crate::directory::{self, Directory};
use crate::error::Result;
use crate::format::{Description, Labelled, OpenOptions};
use crate::gguf::{self, Gguf};
use crate::ollama::{self, Ollama};
use crate::pytorch::{self, Pytorch};
use crate::safetensors::{self, Safetensors};
use crate::source::Source;

/// A format, as the core names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// GGUF: one file (magic `GGUF`) or a shard set.
    Gguf,
    /// safetensors: one file (a little-endian header length, then JSON), a
    /// shard set, or the files an index lists.
    Safetensors,
    /// A PyTorch checkpoint (`torch.save`): a zip archive or the legacy format.
    Pytorch,
    /// An Ollama model: a manifest in a store, and the blobs it names.
    Ollama,
    /// A directory: every file in it (docs/adr/0023-directory-label.md).
    Directory,
}

/// Evaluates `$body` with `$D` standing for `$format`'s [`Description`]:
/// the one `match` that maps a [`Format`] to its folder.
macro_rules! described {
    ($format:expr, $D:ident => $body:expr) => {
        match $format {
            Format::Gguf => {
                type $D = Gguf;
                $body
            }
            Format::Safetensors => {
                type $D = Safetensors;
                $body
            }
            Format::Pytorch => {
                type $D = Pytorch;
                $body
            }
            Format::Ollama => {
                type $D = Ollama;
                $body
            }
            Format::Directory => {
                type $D = Directory;
                $body
            }
        }
    };
}

impl Format {
    /// Every format, in the order a file's bytes and name are tried.
    pub const ALL: [Format; 5] =
        [Format::Gguf, Format::Safetensors, Format::Pytorch, Format::Ollama, Format::Directory];

    /// What a model of the format is, in words: "a GGUF model".
    pub fn what(self) -> &'static str {
        described!(self, D => D::WHAT)
    }

    /// The format whose signature `head` (a file's first bytes) carries.
    pub fn of_bytes(head: &[u8]) -> Option<Format> {
        Format::ALL.into_iter().find(|f| described!(*f, D => D::claims_bytes(head)))
    }

    /// The format a file is by its name or place alone, whatever its bytes
    /// (a safetensors index, a manifest in an Ollama store).
    pub fn of_path(path: &Path) -> Option<Format> {
        Format::ALL.into_iter().find(|f| described!(*f, D => D::claims_path(path)))
    }

    /// The format a file's extension promises.
    pub fn of_extension(path: &Path) -> Option<Format> {
        let ext = path.extension().and_then(|e| e.to_str())?;
        Format::ALL.into_iter().find(|f| described!(*f, D => D::EXTENSIONS.contains(&ext)))
    }

    /// Opens the model of this format an open file holds.
    pub fn open(self, source: Source, opts: OpenOptions) -> Result<AnyModel> {
        Ok(match self {
            Format::Gguf => AnyModel::Gguf(Gguf::from_source(source, opts)?),
            Format::Safetensors => AnyModel::Safetensors(Safetensors::from_source(source, opts)?),
            Format::Pytorch => AnyModel::Pytorch(Box::new(Pytorch::from_source(source, opts)?)),
            Format::Ollama => AnyModel::Ollama(Box::new(Ollama::from_source(source, opts)?)),
            Format::Directory => AnyModel::Directory(Box::new(Directory::from_source(source, opts)?)),
        })
    }

    /// For a later shard of a set of any format (by its name), the set's
    /// first shard.
    pub fn first_shard_of(later: &Path) -> Option<PathBuf> {
        Format::ALL.into_iter().find_map(|f| described!(f, D => D::first_shard_of(later)))
    }

    /// About how many bytes labelling `path` reads, when its name says a
    /// format's files are more than itself; `None` leaves it to the file's
    /// own size.
    pub fn approximate_bytes(path: &Path) -> Option<u64> {
        Format::ALL.into_iter().find_map(|f| described!(f, D => D::approximate_bytes(path)))
    }
}

/// The format whose signature `head` (a file's first bytes) carries, if any.
pub fn sniff(head: &[u8]) -> Option<Format> {
    Format::of_bytes(head)
}

/// An opened model of any format.
#[non_exhaustive]
pub enum AnyModel {
    /// A GGUF file or shard set.
    Gguf(gguf::Model),
    /// A safetensors file, shard set or index.
    Safetensors(safetensors::Model),
    /// A PyTorch checkpoint (boxed: it holds its pickle's objects).
    Pytorch(Box<pytorch::Model>),
    /// An Ollama model (boxed: it holds its components' models, and is
    /// several times the size of the others).
    Ollama(Box<ollama::Model>),
    /// A directory (boxed, as an Ollama model).
    Directory(Box<directory::Model>),
}

impl AnyModel {
    /// The model's format.
    pub fn format(&self) -> Format {
        match self {
            AnyModel::Gguf(_) => Format::Gguf,
            AnyModel::Safetensors(_) => Format::Safetensors,
            AnyModel::Pytorch(_) => Format::Pytorch,
            AnyModel::Ollama(_) => Format::Ollama,
            AnyModel::Directory(_) => Format::Directory,
        }
    }

    /// The model as the core labels it.
    pub fn labelled(&self) -> &dyn Labelled {
        match self {
            AnyModel::Gguf(m) => m,
            AnyModel::Safetensors(m) => m,
            AnyModel::Pytorch(m) => m.as_ref(),
            AnyModel::Ollama(m) => m.as_ref(),
            AnyModel::Directory(m) => m.as_ref(),
        }
    }

    /// Whether a later shard of this model, named alone, names this model
    /// too (through its index) rather than being refused.
    pub fn shard_alone_names_model(&self) -> bool {
        match self {
            AnyModel::Gguf(m) => Gguf::shard_alone_names_model(m),
            AnyModel::Safetensors(m) => Safetensors::shard_alone_names_model(m),
            AnyModel::Pytorch(m) => Pytorch::shard_alone_names_model(m),
            AnyModel::Ollama(m) => Ollama::shard_alone_names_model(m),
            AnyModel::Directory(m) => Directory::shard_alone_names_model(m),
        }
    }
}

impl std::fmt::Debug for AnyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A model's files are its identity here; its tensors would be pages.
        let sources = self.labelled().sources();
        let paths: Vec<&Path> = sources.iter().map(|s| s.path()).collect();
        f.debug_struct("AnyModel").field("format", &self.format()).field("files", &paths).finish()
    }
}

impl Labelled for AnyModel {
    fn job_count(&self) -> usize {
        self.labelled().job_count()
    }

    fn job(&self, i: usize) -> Option<crate::hash::Job<'_>> {
        self.labelled().job(i)
    }

    fn sources(&self) -> Vec<&Source> {
        self.labelled().sources()
    }

    fn write_skeleton(&self, data_sha256: &[crate::hash::Sha256Digest], sink: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.labelled().write_skeleton(data_sha256, sink)
    }

    fn write_json(
        &self,
        w: &mut crate::output::JsonWriter<'_>,
        path: &Path,
        digest: &crate::hash::Digest,
    ) -> std::io::Result<()> {
        self.labelled().write_json(w, path, digest)
    }

    fn contract(&self) -> (&'static str, &'static str) {
        self.labelled().contract()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_safetensors_by_header_start() {
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0{}"), Some(Format::Safetensors));
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0 {"), Some(Format::Safetensors));
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0["), None);
        assert_eq!(sniff(b"\xff\xff\xff\xff\xff\xff\xff\xff{"), None);
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0"), None);
        assert_eq!(Format::of_extension(Path::new("a.safetensors")), Some(Format::Safetensors));
        assert_eq!(Format::of_extension(Path::new("a.gguf")), Some(Format::Gguf));
        assert_eq!(Format::of_extension(Path::new("a.bin")), None);
        assert_eq!(Format::of_extension(Path::new("a.pth")), Some(Format::Pytorch));
        assert_eq!(sniff(b"PK\x03\x04\x00\x00\x08\x00\x00"), Some(Format::Pytorch));
        assert_eq!(sniff(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9"), Some(Format::Pytorch));
    }

    #[test]
    fn sniffs_gguf_by_magic_only() {
        assert_eq!(sniff(b"GGUF\x03\0\0\0"), Some(Format::Gguf));
        assert_eq!(sniff(b"GGUF"), Some(Format::Gguf));
        assert_eq!(sniff(b"GGU"), None);
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"FUGG\0\0\0\x03"), None);
    }

    #[test]
    fn every_format_is_listed() {
        // A variant missing from ALL would never be sniffed; the match stops
        // compiling when a variant is added, so this list stays whole.
        for f in [Format::Gguf, Format::Safetensors, Format::Pytorch, Format::Ollama, Format::Directory] {
            match f {
                Format::Gguf | Format::Safetensors | Format::Pytorch | Format::Ollama | Format::Directory => {
                    assert!(Format::ALL.contains(&f), "{f:?}")
                }
            }
        }
        assert_eq!(
            Format::ALL.map(Format::what),
            ["a GGUF model", "a safetensors model", "a PyTorch checkpoint", "an Ollama model", "a directory"]
        );
    }

    #[test]
    fn names_and_places_claim_before_bytes() {
        assert_eq!(Format::of_path(Path::new("m.safetensors.index.json")), Some(Format::Safetensors));
        assert_eq!(Format::of_path(Path::new("m.gguf")), None);
        assert_eq!(Format::first_shard_of(Path::new("m-00002-of-00003.gguf")), Some("m-00001-of-00003.gguf".into()));
        assert_eq!(
            Format::first_shard_of(Path::new("d/m-00003-of-00003.safetensors")),
            Some("d/m-00001-of-00003.safetensors".into())
        );
        assert_eq!(Format::first_shard_of(Path::new("m-00001-of-00003.gguf")), None);
    }
}
