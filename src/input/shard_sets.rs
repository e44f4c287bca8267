//! Later shards named beside their first shard (`gguf-digest *.gguf` in a
//! folder holding a split model): left out of the run when the set's line
//! covers them (ADR 0006).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{ErrorKind, Result};
use crate::format::OpenOptions;
use crate::gguf;
use crate::safetensors;
use crate::schedule::AnyModel;

use super::open_model;

/// The models a run's arguments name: the arguments without each later
/// shard that alone would be refused for not being the first, while its
/// first shard is also an argument (the same path as given but for the
/// shard number) whose model holds it. Both are read from the files, never
/// guessed from names: a file merely named like a shard, a shard the set
/// does not hold, or a safetensors shard its index lets stand alone stays,
/// labelled or refused on its own. The first shards opened to decide are
/// kept and handed to the run ([`NamedModels::open`]), so the model labelled
/// is the very one seen to hold the shards left out: no argument is dropped
/// unseen, even if files change meanwhile, and no label is of part of a
/// model. With `join_shards` off every shard is a model: nothing is left out.
pub struct NamedModels {
    paths: Vec<PathBuf>,
    opened: Mutex<HashMap<PathBuf, AnyModel>>,
}

impl NamedModels {
    /// Reads which later shards `args` holds beside their sets (opening
    /// their metadata and their first shards' models; nothing else).
    pub fn new(args: &[PathBuf], opts: &OpenOptions) -> NamedModels {
        let mut opened: HashMap<PathBuf, AnyModel> = HashMap::new();
        let mut unopenable: HashSet<PathBuf> = HashSet::new();
        let named: HashSet<&Path> = args.iter().map(PathBuf::as_path).collect();
        let mut covered = |arg: &PathBuf| {
            let first = match first_shard_named(arg, &named, opts) {
                Some(first) if !unopenable.contains(&first) => first,
                _ => return false,
            };
            if !opened.contains_key(&first) {
                let Ok(model) = open_model(&first, opts) else {
                    // It covers nothing; the run says why.
                    unopenable.insert(first);
                    return false;
                };
                opened.insert(first.clone(), model);
            }
            opened.get(&first).is_some_and(|m| m.sources().iter().any(|s| s.path() == arg.as_path()))
        };
        let paths =
            if opts.join_shards { args.iter().filter(|a| !covered(a)).cloned().collect() } else { args.to_vec() };
        NamedModels { paths, opened: Mutex::new(opened) }
    }

    /// The paths to label, in argument order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Opens `path` for the run: a first shard opened to decide what it
    /// covers comes as it was opened (once); anything else as
    /// [`open_model`] opens it.
    pub fn open(&self, path: &Path, opts: &OpenOptions) -> Result<AnyModel> {
        let kept = self.opened.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(path);
        kept.map_or_else(|| open_model(path, opts), Ok)
    }
}

/// The first shard `arg` names, when `arg` is a later shard refused alone
/// for not being the first and that first shard is among `named`.
fn first_shard_named(arg: &Path, named: &HashSet<&Path>, opts: &OpenOptions) -> Option<PathBuf> {
    // By name first, so no other argument is opened here.
    let gguf = gguf::ShardName::parse(arg).filter(|n| n.no > 1).map(|n| n.sibling(1));
    let by_name = gguf.or_else(|| safetensors::ShardName::parse(arg).filter(|n| n.no > 1).map(|n| n.sibling(1)))?;
    if !named.contains(by_name.as_path()) {
        return None;
    }
    let e = open_model(arg, opts).err()?;
    match e.kind() {
        ErrorKind::NotFirstShard { first, .. } if named.contains(first.as_path()) => Some(first.clone()),
        _ => None,
    }
}
