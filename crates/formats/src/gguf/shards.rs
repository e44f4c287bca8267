//! Shard file names: `<prefix>-NNNNN-of-MMMMM.gguf` (spec §5). Only names
//! here; opening and checking the files is the model's job.

use std::path::{Path, PathBuf};

/// The shard number and count a file name says, with the prefix to build
/// sibling names from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardName {
    /// The directory the shards are in (empty for a bare file name).
    dir: PathBuf,
    /// The file name before `-NNNNN-of-MMMMM.gguf`.
    stem: std::ffi::OsString,
    /// 1-based shard number from the name.
    pub no: u64,
    /// Shard count from the name.
    pub count: u64,
}

impl ShardName {
    /// Reads the shard number and count from a path, if its file name ends
    /// in exactly `-%05d-of-%05d.gguf`.
    pub fn parse(path: &Path) -> Option<ShardName> {
        use std::os::unix::ffi::OsStrExt;
        let (stem, no, count) = crate::format::shard_name_parts(path.file_name()?.as_bytes(), ".gguf")?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = std::ffi::OsStr::from_bytes(stem).to_os_string();
        Some(ShardName { dir, stem, no, count })
    }

    /// The path of shard `no` (1-based) of this set.
    pub fn sibling(&self, no: u64) -> PathBuf {
        let mut name = self.stem.clone();
        name.push(format!("-{no:05}-of-{:05}.gguf", self.count));
        self.dir.join(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gguf_split_names() {
        let s = ShardName::parse(Path::new("/m/Grok-Q4_0-00003-of-00009.gguf")).unwrap();
        assert_eq!((s.no, s.count), (3, 9));
        assert_eq!(s.sibling(1), Path::new("/m/Grok-Q4_0-00001-of-00009.gguf"));
        let bare = ShardName::parse(Path::new("x-00001-of-00002.gguf")).unwrap();
        assert_eq!(bare.sibling(2), Path::new("x-00002-of-00002.gguf"));
    }

    #[test]
    fn rejects_other_names() {
        for p in [
            "m.gguf",
            "m-1-of-2.gguf",
            "m-00001-of-00002.GGUF",
            "m-00001-of-000002.gguf",
            "m_00001-of-00002.gguf",
            "m-0000a-of-00002.gguf",
            "-00001-of-00002.ggu",
        ] {
            assert!(ShardName::parse(Path::new(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn empty_prefix_is_a_name() {
        let s = ShardName::parse(Path::new("dir/-00001-of-00002.gguf")).unwrap();
        assert_eq!(s.sibling(2), Path::new("dir/-00002-of-00002.gguf"));
    }
}
