//! Later shards named beside their first shard (`gguf-digest *.gguf` in a
//! folder holding a split model): left out of the run when the set's line
//! covers them (ADR 0006).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::Result;
use crate::format::{Labelled, OpenOptions};
use crate::gguf;
use crate::safetensors;
use crate::schedule::AnyModel;

use super::open_model;

/// The models a run's arguments name: the arguments without each later
/// shard whose first shard is also an argument (the same path as given but
/// for the shard number) and whose model holds it, so that alone it would
/// be refused for not being the first. That is read from the files, never
/// guessed from names: a file merely named like a shard, a shard the set
/// does not hold, or a safetensors shard its index lets stand alone stays,
/// labelled or refused on its own. The first shards opened to decide are
/// kept and handed to the run ([`NamedModels::open`]), so the model
/// labelled is the very one seen to hold the shards left out: no argument
/// is dropped unseen, even if files change meanwhile, and no label is of
/// part of a model. They stay open until the run reaches them (a price of
/// that promise). With `join_shards` off every shard is a model: nothing
/// is left out.
pub struct NamedModels {
    paths: Vec<PathBuf>,
    opts: OpenOptions,
    /// Each first shard opened to decide (`None`: it could not be opened,
    /// so it covers nothing; the run says why), handed over once.
    opened: Mutex<HashMap<PathBuf, Option<AnyModel>>>,
}

impl NamedModels {
    /// Reads which later shards `args` holds beside their sets, opening the
    /// models of the first shards named beside them (nothing else).
    pub fn new(args: &[PathBuf], opts: &OpenOptions) -> NamedModels {
        let mut opened: HashMap<PathBuf, Option<AnyModel>> = HashMap::new();
        let paths = if opts.join_shards {
            let named: HashSet<&Path> = args.iter().map(PathBuf::as_path).collect();
            let mut covered = |arg: &PathBuf| {
                let Some(first) = first_shard_by_name(arg).filter(|f| named.contains(f.as_path())) else {
                    return false;
                };
                let model = opened.entry(first).or_insert_with_key(|first| open_model(first, opts).ok());
                model.as_deref().is_some_and(|m| covers(m, arg))
            };
            args.iter().filter(|arg| !covered(arg)).cloned().collect()
        } else {
            args.to_vec()
        };
        NamedModels { paths, opts: *opts, opened: Mutex::new(opened) }
    }

    /// The paths to label, in argument order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Opens `path` for the run: a first shard opened to decide what it
    /// covers comes as it was opened (once, and only with the options it was
    /// opened with); anything else as [`open_model`] opens it.
    pub fn open(&self, path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
        let kept = if *opts == self.opts {
            self.opened.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(path).flatten()
        } else {
            None
        };
        kept.map_or_else(|| open_model(path, opts), Ok)
    }
}

/// The first shard a later shard's name points to (GGUF or safetensors).
fn first_shard_by_name(path: &Path) -> Option<PathBuf> {
    let gguf = gguf::ShardName::parse(path).filter(|n| n.no > 1).map(|n| n.sibling(1));
    gguf.or_else(|| safetensors::ShardName::parse(path).filter(|n| n.no > 1).map(|n| n.sibling(1)))
}

/// Whether `model`, opened from a first shard, holds the later shard
/// `shard` such that `shard` alone is refused: a GGUF set holds a later
/// shard only when its `split.` keys say it is one (alone: not the first);
/// a safetensors set without an index refuses its later shards alone by
/// their names. Opened through an index, any shard stands for the model
/// alone, so each named one keeps its line.
fn covers(model: &dyn Labelled, shard: &Path) -> bool {
    let through_index = model.as_any().downcast_ref::<safetensors::Model>().is_some_and(|m| m.index().is_some());
    !through_index && model.sources().iter().any(|s| s.path() == shard)
}
