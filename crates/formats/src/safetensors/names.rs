//! File names of safetensors models: shard names, the index beside a shard,
//! and the one function that turns a name read from an index into a path.

use crate::safetensors::SafetensorsErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What an index file's name ends in.
pub const INDEX_SUFFIX: &str = ".safetensors.index.json";

/// A file named `<prefix>-NNNNN-of-MMMMM.safetensors`, `1 <= NNNNN <= MMMMM`.
/// The prefix may be empty, as for GGUF (`-00001-of-00002.safetensors`,
/// whose index is `.safetensors.index.json`): the contract names a shard by
/// its tail alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardName {
    /// The directory and the name up to `-NNNNN` (for an empty prefix, the
    /// directory alone, with its trailing `/`).
    pub prefix: PathBuf,
    /// `NNNNN`, 1-based.
    pub no: u64,
    /// `MMMMM`.
    pub count: u64,
}

impl ShardName {
    /// The shard name in `path`, if it is one.
    pub fn parse(path: &Path) -> Option<ShardName> {
        let name = path.file_name()?.to_str()?;
        let (prefix, no, count) = crate::format::shard_name_parts(name.as_bytes(), ".safetensors")?;
        if no == 0 || no > count {
            return None;
        }
        let prefix = std::str::from_utf8(prefix).ok()?;
        Some(ShardName { prefix: path.with_file_name(prefix), no, count })
    }

    /// The path of shard `no` of the same set.
    pub fn sibling(&self, no: u64) -> PathBuf {
        let mut s = self.prefix.clone().into_os_string();
        s.push(format!("-{no:05}-of-{:05}.safetensors", self.count));
        PathBuf::from(s)
    }

    /// `<prefix>.safetensors.index.json`, beside the shards.
    pub fn index_path(&self) -> PathBuf {
        let mut s = self.prefix.clone().into_os_string();
        s.push(INDEX_SUFFIX);
        PathBuf::from(s)
    }
}

/// The path of `name` in `dir`, for a file name read from an index: only a
/// plain name is accepted (not empty, not `.` or `..`, no `/`, `\` or NUL),
/// so an index can never make the tool open a file outside its directory.
/// This is the only place where a name read from an input becomes a path.
pub fn plain_name_in(dir: &Path, name: &str) -> Result<PathBuf> {
    match crate::format::not_plain_name(name) {
        Some(why) => Err(Error::new(SafetensorsErrorKind::NotPlainName { name: name.to_string(), why })),
        None => Ok(dir.join(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names() {
        let s = ShardName::parse(Path::new("d/model-00002-of-00003.safetensors")).unwrap();
        assert_eq!((s.no, s.count), (2, 3));
        assert_eq!(s.sibling(1), Path::new("d/model-00001-of-00003.safetensors"));
        assert_eq!(s.index_path(), Path::new("d/model.safetensors.index.json"));
        for bad in [
            "model.safetensors",
            "model-00000-of-00003.safetensors",
            "model-00004-of-00003.safetensors",
            "model-0001-of-00003.safetensors",
            "model-00001_of-00003.safetensors",
            "model-00001-of-00003.gguf",
            "model-0000a-of-00003.safetensors",
            "00001-of-00003.safetensors",
        ] {
            assert!(ShardName::parse(Path::new(bad)).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_prefix_may_be_empty() {
        for (given, first, index) in [
            ("d/-00002-of-00003.safetensors", "d/-00001-of-00003.safetensors", "d/.safetensors.index.json"),
            ("-00002-of-00003.safetensors", "-00001-of-00003.safetensors", ".safetensors.index.json"),
            ("/-00002-of-00003.safetensors", "/-00001-of-00003.safetensors", "/.safetensors.index.json"),
        ] {
            let s = ShardName::parse(Path::new(given)).unwrap();
            assert_eq!((s.no, s.count), (2, 3));
            assert_eq!(s.sibling(1), Path::new(first), "{given}");
            assert_eq!(s.index_path(), Path::new(index), "{given}");
        }
    }

    #[test]
    fn only_plain_names_become_paths() {
        assert_eq!(plain_name_in(Path::new("d"), "a.safetensors").unwrap(), Path::new("d/a.safetensors"));
        for bad in ["", ".", "..", "../x", "/etc/passwd", "a/b", "a\\b", "a\0b"] {
            let e = plain_name_in(Path::new("d"), bad).unwrap_err();
            assert!(
                matches!(e.kind().of::<SafetensorsErrorKind>(), Some(SafetensorsErrorKind::NotPlainName { .. })),
                "{bad:?}"
            );
        }
    }
}
