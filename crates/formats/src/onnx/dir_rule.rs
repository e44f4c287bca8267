//! ONNX in a directory (directory contract §3 rule 4, revision 3; SPEC
//! Part VI, X8): each `P.onnx` is a model named `d/P.onnx` together with
//! the external data files it names, which then belong to it alone (a file
//! named by two models, or missing from the directory, is an error the
//! directory reports from the claims: docs/adr/0047).

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::directory_rule::{Claims, DirectoryRule, Held, ListHead, Placed, Planned, joined, split};
use crate::format::{AnyModel, OpenOptions};
use crate::source::Source;

use super::model::{self, Model};
use super::read::Parsed;

/// ONNX's rule.
pub(super) struct Rule;

/// What a model file's name ends in.
const SUFFIX: &[u8] = b".onnx";

impl DirectoryRule for Rule {
    /// Every `P.onnx` lists its external data files, relative to its own
    /// directory and possibly below it (`weights/w.bin`).
    fn list_head(&self, path: &[u8]) -> Option<ListHead> {
        path.ends_with(SUFFIX).then(|| ListHead {
            model: path.to_vec(),
            lists: "its external data names",
            nested: true,
            index: false,
        })
    }

    fn read_list(&self, source: Source, _opts: OpenOptions) -> Result<(Vec<Vec<u8>>, Held)> {
        let path = source.path().to_path_buf();
        let parsed = model::read_file(&source).map_err(|e| e.in_file(&path))?;
        Ok((model::locations(&parsed), Box::new((source, parsed))))
    }

    /// Each model file with the files its list names.
    fn group(&self, files: &[Vec<u8>], claims: &Claims) -> Result<Vec<Planned>> {
        let models = files.iter().filter(|p| p.ends_with(SUFFIX));
        Ok(models.map(|p| Planned { name: p.clone(), head: Some(p.clone()), files: claims.list(p).to_vec() }).collect())
    }

    fn open(
        &self,
        planned: &Planned,
        held: Option<Held>,
        files: Vec<(Vec<u8>, Source)>,
        _dir: &Path,
        _opts: OpenOptions,
    ) -> Result<Placed> {
        let held = held.ok_or_else(|| Error::internal("an ONNX model not read"))?;
        let (source, parsed) =
            *held.downcast::<(Source, Parsed)>().map_err(|_| Error::internal("an ONNX model read as another"))?;
        let path = source.path().to_path_buf();
        let (dir, _) = split(&planned.name);
        let mut opened: HashMap<Vec<u8>, Source> = files.into_iter().collect();
        let mut open_external = |location: &[u8]| -> Result<Source> {
            opened.remove(&joined(dir, location)).ok_or_else(|| Error::internal("an external data file not opened"))
        };
        let model = Model::from_read(source, parsed, &mut open_external).map_err(|e| e.in_file(&path))?;
        Ok(Placed::Model { model: AnyModel::new(model), keep: None })
    }
}
