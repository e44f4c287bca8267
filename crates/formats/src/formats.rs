//! The registry: the one list of file formats. Each format describes
//! itself once, in its folder ([`FileFormat`]: how its files are told
//! apart, opened, sharded, sized, shown when broken, and its place in a
//! directory; its opened model answers `inspect`, `diff` and the BOM's
//! facts through [`Model`](crate::format::Opened)). Adding a format is its
//! folder, `mod` in `lib.rs` and one line in [`FORMATS`]
//! (docs/adr/0032-one-registry-of-formats.md). Inputs that are not files
//! (a directory, `-`, `ollama:`, `hf:`) are the input layer's (`input`).

use std::path::{Path, PathBuf};

use crate::format::FileFormat;

/// Every file format, in the order a file's name and first bytes are
/// tried: one line each, the format's folder named in full (nothing else
/// here names it).
#[rustfmt::skip]
pub static FORMATS: &[&dyn FileFormat] = &[
    &crate::gguf::Gguf,
    &crate::safetensors::Safetensors,
    &crate::pytorch::Pytorch,
    &crate::onnx::Onnx,
    &crate::ollama::Ollama,
];

/// The format a file no format claims is read as: GGUF, whose parser says
/// precisely what is wrong with it (empty, bad magic, ...).
pub static FALLBACK: &dyn FileFormat = &crate::gguf::Gguf;

/// The format whose signature `head` (a file's first bytes) carries.
pub fn of_bytes(head: &[u8]) -> Option<&'static dyn FileFormat> {
    FORMATS.iter().copied().find(|f| f.claims_bytes(head))
}

/// The format a file is by its name or place alone, whatever its bytes
/// (a safetensors index, a manifest in an Ollama store).
pub fn of_path(path: &Path) -> Option<&'static dyn FileFormat> {
    FORMATS.iter().copied().find(|f| f.claims_path(path))
}

/// The format a file's extension promises.
pub fn of_extension(path: &Path) -> Option<&'static dyn FileFormat> {
    let ext = path.extension().and_then(|e| e.to_str())?;
    FORMATS.iter().copied().find(|f| f.extensions().contains(&ext))
}

/// For a later shard of a set of any format (by its name), the set's
/// first shard.
pub fn first_shard_of(later: &Path) -> Option<PathBuf> {
    FORMATS.iter().find_map(|f| f.first_shard_of(later))
}

/// About how many bytes labelling `path` reads, when its name says a
/// format's files are more than itself; `None` leaves it to the file's
/// own size.
pub fn approximate_bytes(path: &Path) -> Option<u64> {
    FORMATS.iter().find_map(|f| f.approximate_bytes(path))
}

/// The format whose signature `head` (a file's first bytes) carries, in
/// words ("a GGUF model"), if any.
pub fn sniff(head: &[u8]) -> Option<&'static str> {
    of_bytes(head).map(|f| f.what())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::DirectoryKind;

    fn what(f: Option<&'static dyn FileFormat>) -> Option<&'static str> {
        f.map(|f| f.what())
    }

    #[test]
    fn sniffs_safetensors_by_header_start() {
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0{}"), Some("a safetensors model"));
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0 {"), Some("a safetensors model"));
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0["), None);
        assert_eq!(sniff(b"\xff\xff\xff\xff\xff\xff\xff\xff{"), None);
        assert_eq!(sniff(b"\x02\0\0\0\0\0\0\0"), None);
        assert_eq!(what(of_extension(Path::new("a.safetensors"))), Some("a safetensors model"));
        assert_eq!(what(of_extension(Path::new("a.gguf"))), Some("a GGUF model"));
        assert_eq!(what(of_extension(Path::new("a.bin"))), None);
    }

    #[test]
    fn sniffs_gguf_by_magic_only() {
        assert_eq!(sniff(b"GGUF\x03\0\0\0"), Some("a GGUF model"));
        assert_eq!(sniff(b"GGUF"), Some("a GGUF model"));
        assert_eq!(sniff(b"GGU"), None);
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"FUGG\0\0\0\x03"), None);
    }

    #[test]
    fn every_format_is_listed_once_with_a_directory_kind_of_its_own() {
        // Not a copy of the list (a new format adds its line and nothing
        // else): the formats here are in it, once, and every kind is four
        // ASCII capitals, `FILE` and no other format's.
        let whats: Vec<&str> = FORMATS.iter().map(|f| f.what()).collect();
        for what in ["a GGUF model", "a safetensors model", "an Ollama model"] {
            assert_eq!(whats.iter().filter(|w| **w == what).count(), 1, "{whats:?}");
        }
        let mut unique = whats.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), whats.len(), "{whats:?}");
        let kinds: Vec<DirectoryKind> = FORMATS.iter().filter_map(|f| f.component_kind()).collect();
        let texts: Vec<&str> = kinds.iter().map(|k| k.text()).collect();
        assert!(texts.contains(&"GGUF") && texts.contains(&"SFTN"), "{texts:?}");
        let mut all = texts.clone();
        all.push(DirectoryKind::FILE.text());
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), texts.len() + 1, "{texts:?}");
        for k in kinds {
            assert!(k.bytes.iter().all(u8::is_ascii_uppercase), "{k:?}");
            assert_eq!(k.text().as_bytes(), k.bytes(), "{k:?}");
            assert!(!k.words.is_empty(), "{k:?}");
        }
        assert_eq!(FALLBACK.what(), "a GGUF model");
    }

    #[test]
    fn names_and_places_claim_before_bytes() {
        assert_eq!(what(of_path(Path::new("m.safetensors.index.json"))), Some("a safetensors model"));
        assert_eq!(what(of_path(Path::new("m.gguf"))), None);
        assert_eq!(first_shard_of(Path::new("m-00002-of-00003.gguf")), Some("m-00001-of-00003.gguf".into()));
        assert_eq!(
            first_shard_of(Path::new("d/m-00003-of-00003.safetensors")),
            Some("d/m-00001-of-00003.safetensors".into())
        );
        assert_eq!(first_shard_of(Path::new("m-00001-of-00003.gguf")), None);
    }
}
