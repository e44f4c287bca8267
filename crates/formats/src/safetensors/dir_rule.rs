//! Safetensors in a directory (directory contract §3 rule 1): in each
//! directory `d`, `P.safetensors`, the shards `P-NNNNN-of-MMMMM.safetensors`
//! and the index `P.safetensors.index.json` form one model named `d/P`,
//! through its index when there is one (its files are its alone).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::directory_rule::{Claims, DirectoryRule, Family, Held, ListHead, Placed, Planned, by_last_name};
use crate::format::{AnyModel, OpenOptions};
use crate::source::Source;

/// Safetensors' rule.
pub(super) struct Rule;

const FAMILY: Family =
    Family { suffix: b".safetensors", prefix: None, index: Some(super::INDEX_SUFFIX.as_bytes()), words: "safetensors" };

impl DirectoryRule for Rule {
    fn list_head(&self, path: &[u8]) -> Option<ListHead> {
        FAMILY.list_head(path)
    }

    /// The index's files (its `weight_map`'s values, each once); the index,
    /// open, and its reading are kept for the model.
    fn read_list(&self, source: Source, _opts: OpenOptions) -> Result<(Vec<Vec<u8>>, Held)> {
        let index = super::read_index_from(&source)?;
        let files = index.files.iter().map(|f| f.as_bytes().to_vec()).collect();
        Ok((files, Box::new((source, index))))
    }

    fn group(&self, files: &[Vec<u8>], claims: &Claims) -> Result<Vec<Planned>> {
        FAMILY.group(files, claims)
    }

    fn open(
        &self,
        _planned: &Planned,
        held: Option<Held>,
        files: Vec<(Vec<u8>, Source)>,
        _dir: &Path,
        opts: OpenOptions,
    ) -> Result<Placed> {
        let Some(held) = held else {
            let sources = files.into_iter().map(|(_, s)| s).collect();
            return Ok(Placed::Model { model: AnyModel::new(super::Model::from_sources(sources, opts)?), keep: None });
        };
        let (source, index) =
            *held.downcast::<(Source, super::Index)>().map_err(|_| Error::internal("an index read as another"))?;
        let mut opened = by_last_name(files);
        let mut take =
            |n: &OsStr| opened.remove(n.as_bytes()).ok_or_else(|| Error::internal("an index file not opened"));
        let model = super::Model::from_index(source.path(), index, opts, &mut take)?;
        Ok(Placed::Model { model: AnyModel::new(model), keep: Some(source) })
    }
}
