//! PyTorch checkpoints in a directory (directory contract §3 rule 3,
//! revision 3): `pytorch_model.bin`, its shards and its index
//! `pytorch_model.bin.index.json` form one model named `d/pytorch_model`,
//! grouped as a safetensors model is; any other `P.bin`, `P.pt` or `P.pth`
//! is a checkpoint named by its relative path when the contract accepts its
//! bytes, else a `FILE` saying why.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result};
use crate::format::directory_rule::{
    Claims, DirectoryRule, Family, Held, ListHead, Placed, Planned, by_last_name, split,
};
use crate::format::{AnyModel, OpenOptions};
use crate::source::Source;

/// PyTorch's rule.
pub(super) struct Rule;

const FAMILY: Family =
    Family { suffix: b".bin", prefix: Some(b"pytorch_model"), index: Some(b".bin.index.json"), words: "PyTorch" };

/// The suffixes of a file that is a checkpoint when its bytes say so.
const CANDIDATE: [&[u8]; 3] = [b".bin", b".pt", b".pth"];

/// A candidate: named by its path, one file, no index (a family's model is
/// named `d/pytorch_model`, which no candidate suffix ends).
fn is_candidate(p: &Planned) -> bool {
    p.head.is_none() && CANDIDATE.iter().any(|s| p.name.ends_with(s))
}

impl DirectoryRule for Rule {
    fn list_head(&self, path: &[u8]) -> Option<ListHead> {
        FAMILY.list_head(path)
    }

    fn read_list(&self, source: Source, _opts: OpenOptions) -> Result<(Vec<Vec<u8>>, Held)> {
        let index = super::Model::read_index(&source)?;
        let files = index.files.iter().map(|f| f.as_bytes().to_vec()).collect();
        Ok((files, Box::new((source, index))))
    }

    fn group(&self, files: &[Vec<u8>], claims: &Claims) -> Result<Vec<Planned>> {
        let mut out = FAMILY.group(files, claims)?;
        for path in files {
            let (_, name) = split(path);
            let family = FAMILY.member(name).is_some() || FAMILY.index_prefix(name).is_some();
            if !family && claims.owner(path).is_none() && CANDIDATE.iter().any(|s| name.ends_with(s)) {
                out.push(Planned { name: path.clone(), head: None, files: vec![path.clone()] });
            }
        }
        Ok(out)
    }

    fn open(
        &self,
        planned: &Planned,
        held: Option<Held>,
        files: Vec<(Vec<u8>, Source)>,
        _dir: &Path,
        opts: OpenOptions,
    ) -> Result<Placed> {
        if let Some(held) = held {
            let (source, index) = *held
                .downcast::<(Source, super::shards::Index)>()
                .map_err(|_| Error::internal("an index read as another"))?;
            let mut opened = by_last_name(files);
            let mut take =
                |n: &OsStr| opened.remove(n.as_bytes()).ok_or_else(|| Error::internal("an index file not opened"));
            let model = super::Model::from_index(source.path(), index, None, opts, &mut take)?;
            return Ok(Placed::Model { model: AnyModel::new(model), keep: Some(source) });
        }
        if is_candidate(planned) {
            let (_, source) = files.into_iter().next().ok_or_else(|| Error::internal("a candidate of no file"))?;
            return match super::Model::from_candidate(source, opts) {
                Ok(m) => Ok(Placed::Model { model: AnyModel::new(m), keep: None }),
                Err(failed) => {
                    let (source, e) = *failed;
                    if matches!(e.kind(), ErrorKind::Io(_)) {
                        return Err(e);
                    }
                    let note = format!("not a checkpoint pytorch-skeleton-v1 accepts, so its bytes: {}", e.kind());
                    Ok(Placed::File { source, note })
                }
            };
        }
        // A set of one (`pytorch_model-00001-of-00001.bin`) is still a set:
        // its root a mapping of strings without attributes (pytorch-skeleton-v1 §6).
        let set = planned
            .files
            .first()
            .is_some_and(|f| super::shards::ShardName::parse(OsStr::from_bytes(split(f).1)).is_some());
        let sources = files.into_iter().map(|(_, s)| s).collect();
        Ok(Placed::Model { model: AnyModel::new(super::Model::from_files(sources, set, opts)?), keep: None })
    }
}
