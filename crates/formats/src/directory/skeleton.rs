//! The directory skeleton (contract §4): `MDIR`, version 1, the number of
//! components, then each component sorted by (kind, name) as
//! `kind ‖ SHA-256(name) ‖ digest`.

use sha2::{Digest as _, Sha256};

use crate::hash::Sha256Digest;

/// The skeleton's first four bytes: a directory label never equals a GGUF,
/// safetensors or Ollama label.
pub const MAGIC: &[u8; 4] = b"MDIR";

/// A component's kind, four bytes: `FILE`, or a weights format's own
/// (`GGUF`, `SFTN`: the registry's `FileFormat::component_kind`).
pub use crate::format::DirectoryKind as Kind;

/// The skeleton of components `(kind, name, digest)`, in any order.
pub fn skeleton(components: &[(Kind, &[u8], Sha256Digest)]) -> Vec<u8> {
    let mut sorted: Vec<&(Kind, &[u8], Sha256Digest)> = components.iter().collect();
    // Raw bytes order: the kind's four bytes, then the name's.
    sorted.sort_by(|a, b| (a.0.bytes(), a.1).cmp(&(b.0.bytes(), b.1)));
    let mut out = Vec::with_capacity(16usize.saturating_add(components.len().saturating_mul(68)));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(components.len() as u64).to_le_bytes());
    for (kind, name, digest) in sorted {
        out.extend_from_slice(kind.bytes());
        out.extend_from_slice(&Sha256::digest(name));
        out.extend_from_slice(digest);
    }
    out
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    const GGUF: Kind = Kind { bytes: b"GGUF", words: "GGUF weights" };
    const SFTN: Kind = Kind { bytes: b"SFTN", words: "safetensors weights" };

    #[test]
    fn a_kind_s_text_is_its_bytes() {
        // The registry's own test checks every format's kind alike.
        for k in [Kind::FILE, GGUF, SFTN] {
            assert_eq!(k.text().as_bytes(), k.bytes());
        }
    }

    #[test]
    fn sorted_by_kind_bytes_then_name_bytes() {
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let one = skeleton(&[(SFTN, b"model", a), (Kind::FILE, b"config.json", b)]);
        let other = skeleton(&[(Kind::FILE, b"config.json", b), (SFTN, b"model", a)]);
        assert_eq!(one, other);
        assert_eq!(one.len(), 16 + 2 * 68);
        assert_eq!(&one[..16], b"MDIR\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00");
        // FILE < GGUF < SFTN as bytes.
        assert_eq!(&one[16..20], b"FILE");
        assert_eq!(&one[20..52], Sha256::digest(b"config.json").as_slice());
        assert_eq!(&one[52..84], &b);
        assert_eq!(&one[84..88], b"SFTN");
        let mut kinds = [SFTN, Kind::FILE, GGUF];
        kinds.sort_by_key(|k| k.bytes());
        assert_eq!(kinds, [Kind::FILE, GGUF, SFTN]);
    }
}
