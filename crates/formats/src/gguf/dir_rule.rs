//! GGUF in a directory (directory contract §3 rule 2): `P.gguf` is a model
//! named `d/P`; the shards `P-NNNNN-of-MMMMM.gguf` of one `P` are one,
//! joined by their `split.*` keys, which must agree with their names.

use std::path::Path;

use crate::error::{Error, Result};
use crate::format::directory_rule::{Claims, DirectoryRule, Family, Held, ListHead, Placed, Planned, by_last_name};
use crate::format::{AnyModel, OpenOptions};
use crate::source::Source;

/// GGUF's rule (no index).
pub(super) struct Rule;

const FAMILY: Family = Family { suffix: b".gguf", prefix: None, index: None, words: "GGUF" };

impl DirectoryRule for Rule {
    fn list_head(&self, _path: &[u8]) -> Option<ListHead> {
        None
    }

    fn read_list(&self, _source: Source, _opts: OpenOptions) -> Result<(Vec<Vec<u8>>, Held)> {
        Err(Error::internal("a GGUF model lists no files"))
    }

    fn group(&self, files: &[Vec<u8>], claims: &Claims) -> Result<Vec<Planned>> {
        FAMILY.group(files, claims)
    }

    /// One file, or a complete shard set in shard order, as §3.2 reads it:
    /// a set of two or more joined by its `split.*` keys; one file by the
    /// single-file rule (`split.count` above 1 is an error).
    fn open(
        &self,
        planned: &Planned,
        _held: Option<Held>,
        files: Vec<(Vec<u8>, Source)>,
        dir: &Path,
        opts: OpenOptions,
    ) -> Result<Placed> {
        let count = files.len();
        let mut files = files.into_iter();
        let (_, first) = files.next().ok_or_else(|| Error::internal("a GGUF model of no file"))?;
        let mut rest = by_last_name(files.collect());
        let mut take = |sibling: &Path| -> Result<Source> {
            let n = sibling.file_name().unwrap_or_default().as_encoded_bytes();
            rest.remove(n)
                .ok_or_else(|| Error::from(std::io::Error::from(std::io::ErrorKind::NotFound)).in_file(sibling))
        };
        let join = OpenOptions { join_shards: true, ..opts };
        let model = super::Model::from_source_with(first, join, Some(&mut take))?;
        if model.shards().len() != count {
            let what = format!(
                "{}: its {count} files are named as a set, but split.count in its first shard is {}",
                crate::text::escape_bytes(&planned.name),
                model.shards().len()
            );
            return Err(Error::schema(what).in_file(dir));
        }
        Ok(Placed::Model { model: AnyModel::new(model), keep: None })
    }
}
