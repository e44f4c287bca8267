//! A checkpoint file's layout (docs/SPEC.md P2, P3): `torch.save`'s zip
//! archive (its `data.pkl`, `byteorder` and `data/<key>` records) or the
//! legacy format (five pickles, then each storage after its count), every
//! storage placed where its bytes lie and checked against its id.

use std::collections::HashMap;

use super::{LEGACY_MAGIC, Layout, Placed, checkpoint_err, is_legacy, is_zip};
use crate::error::{Error, ErrorKind, Result, Subject};
use crate::pytorch::PytorchErrorKind;
use crate::pytorch::pickle::{self, Ids, Obj, Options};
use crate::pytorch::zip;
use crate::source::{MAX_READ_METADATA, Source, Step};

const LFS: &[u8] = b"version https://git-lfs.github.com/spec/v1";

/// The file read: its layout, its pickle, where its storages lie, and
/// whether they are big-endian.
pub(super) type Read = (Layout, pickle::Pickle, Vec<Placed>, bool);

/// Reads the file's layout by its first bytes.
pub(super) fn read_layout(source: &Source) -> Result<Read> {
    let head = source.head(512)?;
    if is_zip(&head) {
        read_zip(source)
    } else if is_legacy(&head) {
        read_legacy(source)
    } else if head.starts_with(LFS) {
        Err(Error::new(ErrorKind::LfsPointer))
    } else if head.get(257..262) == Some(b"ustar") {
        Err(checkpoint_err(
            "a checkpoint in the older tar format (PyTorch before 1.6's first format), which this label does not read",
        ))
    } else if head.is_empty() {
        Err(Error::new(ErrorKind::Empty))
    } else {
        Err(checkpoint_err("not a PyTorch checkpoint: neither a zip archive nor the legacy format").at(0))
    }
}

/// Reads `len` bytes at `offset` of `source`, bounded by what metadata may hold.
fn read_at(source: &Source, offset: u64, len: u64) -> Result<Vec<u8>> {
    if len > MAX_READ_METADATA {
        return Err(
            crate::source::metadata_too_big(len, usize::try_from(MAX_READ_METADATA).unwrap_or(usize::MAX)).at(offset)
        );
    }
    let end = offset.checked_add(len);
    if end.is_none_or(|e| e > source.len()) {
        return Err(Error::new(ErrorKind::Truncated {
            what: "zip archive",
            needed: len,
            available: source.len().saturating_sub(offset),
        })
        .at(offset));
    }
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
    source.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

fn step_err(s: Step) -> Error {
    match s {
        Step::Fail(e) => e,
        Step::NeedMore(_) => Error::internal("a whole record asked for more bytes"),
    }
}

fn read_zip(source: &Source) -> Result<Read> {
    let archive = zip::read_archive(source.len(), &mut |o, l| read_at(source, o, l))?;
    let pkl = archive
        .get(b"data.pkl")
        .ok_or_else(|| Error::new(PytorchErrorKind::Zip("no 'data.pkl' record in the archive's folder".into())))?;
    let bytes = read_at(source, pkl.data, pkl.size)?;
    let pickle = pickle::read(&bytes, 0, Options { base: pkl.data, more_in_file: false, file_len: 0, ids: Ids::Zip })
        .map_err(step_err)?;
    if pickle.end != bytes.len() {
        return Err(Error::new(PytorchErrorKind::Pickle(format!(
            "{} bytes after STOP in data.pkl",
            bytes.len().saturating_sub(pickle.end)
        )))
        .at(pkl.data.saturating_add(pickle.end as u64)));
    }
    let big_endian = match archive.get(b"byteorder") {
        None => false,
        Some(r) if r.size > 16 => {
            return Err(
                Error::new(PytorchErrorKind::Zip("a 'byteorder' record of more than 16 bytes".into())).at(r.data)
            );
        }
        Some(r) => match &read_at(source, r.data, r.size)?[..] {
            b"little" => false,
            b"big" => true,
            other => {
                return Err(Error::new(PytorchErrorKind::Zip(format!(
                    "a 'byteorder' record holding '{}' (little or big expected)",
                    crate::text::escape_bytes(other)
                )))
                .at(r.data));
            }
        },
    };
    let mut placed = Vec::with_capacity(pickle.storages.len());
    for s in &pickle.storages {
        let mut name = b"data/".to_vec();
        name.extend_from_slice(&s.key);
        let shown = crate::text::escape_bytes(&s.key);
        let r = archive.get(&name).ok_or_else(|| {
            Error::new(PytorchErrorKind::Checkpoint(format!(
                "storage '{shown}' has no record 'data/{shown}' in the archive"
            )))
            .at(s.at)
        })?;
        if r.size != s.nbytes() {
            return Err(Error::new(PytorchErrorKind::Checkpoint(format!(
                "storage '{shown}' is named as {} × {} ({} bytes) and its record holds {} bytes",
                s.numel,
                s.class.name(),
                s.nbytes(),
                r.size
            )))
            .at(s.at));
        }
        placed.push(Placed { start: r.data, len: r.size, users: 0, file: 0, big_endian });
    }
    Ok((Layout::Zip(archive), pickle, placed, big_endian))
}

/// The legacy format's five pickles, read from a prefix of the file.
#[derive(Debug)]
struct LegacyHead {
    root: pickle::Pickle,
    keys: Vec<Box<[u8]>>,
    end: u64,
}

fn legacy_prefix(bytes: &[u8], len: u64) -> std::result::Result<(LegacyHead, u64), Step> {
    let more = (bytes.len() as u64) < len;
    let opts = |ids| Options { base: 0, more_in_file: more, file_len: len, ids };
    let mut pos = 0usize;
    let mut next = |ids: Ids| -> std::result::Result<pickle::Pickle, Step> {
        let p = pickle::read(bytes, pos, opts(ids))?;
        pos = p.end;
        Ok(p)
    };
    let fail = |at: usize, m: &str| Step::Fail(checkpoint_err(m).at(at as u64));
    let magic = next(Ids::None)?;
    if !matches!(magic.objs.get(magic.root), Some(Obj::Int(i)) if *i == pickle::Int::from_le(&LEGACY_MAGIC)) {
        return Err(fail(0, "the legacy format's first pickle is not its magic number"));
    }
    let at = magic.end;
    let version = next(Ids::None)?;
    if !matches!(version.objs.get(version.root), Some(Obj::Int(pickle::Int::Small(1001)))) {
        return Err(fail(at, "the legacy format's protocol version is not 1001"));
    }
    let at = version.end;
    let sys = next(Ids::None)?;
    if !matches!(sys.objs.get(sys.root), Some(Obj::Dict(_))) {
        return Err(fail(at, "the legacy format's sys_info is not a mapping"));
    }
    let root = next(Ids::Legacy)?;
    let at = root.end;
    let list = next(Ids::None)?;
    let keys = match list.objs.get(list.root) {
        Some(Obj::List(items)) => items
            .iter()
            .map(|&i| match list.objs.get(i) {
                Some(Obj::Str(s)) => Ok(s.clone()),
                _ => Err(fail(at, "the legacy format's storage key list holds something other than strings")),
            })
            .collect::<std::result::Result<Vec<_>, _>>()?,
        _ => return Err(fail(at, "the legacy format's fifth pickle is not a list of storage keys")),
    };
    let end = list.end as u64;
    Ok((LegacyHead { root, keys, end }, end))
}

fn read_legacy(source: &Source) -> Result<Read> {
    let head = source.parse(legacy_prefix)?;
    let pickle = head.root;
    let index: HashMap<&[u8], usize> = pickle.storages.iter().enumerate().map(|(i, s)| (&*s.key, i)).collect();
    let mut placed: Vec<Option<Placed>> = vec![None; pickle.storages.len()];
    let mut pos = head.end;
    for key in &head.keys {
        let shown = crate::text::escape_bytes(key);
        let i = *index.get(&**key).ok_or_else(|| {
            checkpoint_err(format!(
                "the storage key list names '{shown}', which no tensor uses (torch.load would fail)"
            ))
            .at(pos)
        })?;
        let s = pickle.storages.get(i).ok_or_else(|| Error::internal("storage out of range"))?;
        let count = read_at(source, pos, 8).map_err(|_| {
            Error::new(ErrorKind::Truncated {
                what: "legacy storage count",
                needed: 8,
                available: source.len().saturating_sub(pos),
            })
            .at(pos)
        })?;
        let mut n = [0u8; 8];
        n.copy_from_slice(count.get(..8).unwrap_or(&[0; 8]));
        let n = i64::from_le_bytes(n);
        if u64::try_from(n).ok() != Some(s.numel) {
            return Err(
                checkpoint_err(format!("storage '{shown}' holds {n} elements where its id says {}", s.numel)).at(pos)
            );
        }
        let start = pos.saturating_add(8);
        let end = start.checked_add(s.nbytes()).filter(|&e| e <= source.len()).ok_or_else(|| {
            Error::new(ErrorKind::Truncated {
                what: "legacy storage",
                needed: s.nbytes(),
                available: source.len().saturating_sub(start),
            })
            .at(start)
            .about(Subject::Key(key.to_vec()))
        })?;
        let slot = placed.get_mut(i).ok_or_else(|| Error::internal("storage out of range"))?;
        if slot.is_some() {
            return Err(checkpoint_err(format!("the storage key list names '{shown}' twice")).at(pos));
        }
        *slot = Some(Placed { start, len: s.nbytes(), users: 0, file: 0, big_endian: false });
        pos = end;
    }
    if pos != source.len() {
        return Err(
            checkpoint_err(format!("{} bytes after the last storage", source.len().saturating_sub(pos))).at(pos)
        );
    }
    let placed = placed
        .into_iter()
        .zip(&pickle.storages)
        .map(|(p, s)| {
            p.ok_or_else(|| {
                checkpoint_err(format!(
                    "storage '{}' is used and not in the storage key list",
                    crate::text::escape_bytes(&s.key)
                ))
                .at(s.at)
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((Layout::Legacy, pickle, placed, false))
}
