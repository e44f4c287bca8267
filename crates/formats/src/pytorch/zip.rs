//! The zip archive `torch.save` writes, read by its central directory
//! (docs/SPEC.md P2): every rule that makes two zip readers see one
//! archive, and nothing more. Stored entries only: a record's bytes are a
//! range of the file, hashed where they lie.
//!
//! Pure: the archive is read through `read(offset, len)`, which hands back
//! those bytes of the file (the model reads them from its `Source`; tests
//! from a vector). Nothing is read or allocated in proportion to a size
//! the archive declares before the size is checked against the file.

use crate::pytorch::PytorchErrorKind;
use std::collections::HashSet;

use crate::error::{Error, Result};

/// The most central directory this reader holds in memory (a real
/// checkpoint's is about 100 bytes a tensor).
pub const MAX_DIRECTORY: u64 = 128 << 20;

/// Reads `len` bytes at a file offset.
pub type ReadAt<'a> = dyn FnMut(u64, u64) -> Result<Vec<u8>> + 'a;

/// One entry of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its whole name, `<a>/<rest>`.
    pub name: Box<[u8]>,
    /// The file offset of its local header.
    pub header: u64,
    /// The file offset of its first byte of data.
    pub data: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its compression method (0: stored), kept so that a TorchScript
    /// archive, whose code entries `torch.jit.save` deflates, is named as
    /// TorchScript before any entry is refused for its method.
    pub method: u16,
    /// Its compressed size (the size, for a stored entry).
    pub compressed: u64,
}

/// An archive whose directory and local headers agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// The top-level folder every name is in.
    pub folder: Box<[u8]>,
    /// Its records, in the directory's order.
    pub records: Vec<Record>,
    /// Whether it needed Zip64 records.
    pub zip64: bool,
}

impl Archive {
    /// The record `<a>/<rest>`.
    pub fn get(&self, rest: &[u8]) -> Option<&Record> {
        let prefix = self.folder.len().saturating_add(1);
        self.records.iter().find(|r| r.name.get(prefix..) == Some(rest))
    }
}

fn zip_err(at: u64, msg: impl Into<String>) -> Error {
    Error::new(PytorchErrorKind::Zip(msg.into())).at(at)
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    let mut a = [0u8; 2];
    if let Some(s) = b.get(i..i.saturating_add(2)) {
        a.copy_from_slice(s);
    }
    u16::from_le_bytes(a)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(i..i.saturating_add(4)) {
        a.copy_from_slice(s);
    }
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(i..i.saturating_add(8)) {
        a.copy_from_slice(s);
    }
    u64::from_le_bytes(a)
}

const EOCD: &[u8; 4] = b"PK\x05\x06";
const LOCATOR: &[u8; 4] = b"PK\x06\x07";
const EOCD64: &[u8; 4] = b"PK\x06\x06";
const CENTRAL: &[u8; 4] = b"PK\x01\x02";
const LOCAL: &[u8; 4] = b"PK\x03\x04";
const ESC16: u64 = 0xFFFF;
const ESC32: u64 = 0xFFFF_FFFF;

/// Where the central directory is, as the end records say.
#[derive(Debug, Clone, Copy)]
struct End {
    count: u64,
    size: u64,
    offset: u64,
    /// Where the directory must end (the Zip64 end record, or the end record).
    ends_at: u64,
    zip64: bool,
}

/// Reads the archive of a file of `len` bytes.
pub fn read_archive(len: u64, read: &mut ReadAt<'_>) -> Result<Archive> {
    let end = find_end(len, read)?;
    if end.size > MAX_DIRECTORY {
        return Err(zip_err(
            end.offset,
            format!("a central directory of {} bytes (this reader holds at most {MAX_DIRECTORY})", end.size),
        ));
    }
    if end.offset.checked_add(end.size) != Some(end.ends_at) {
        return Err(zip_err(
            end.ends_at,
            format!(
                "the central directory ({} bytes at {}) does not end where the end record begins ({})",
                end.size, end.offset, end.ends_at
            ),
        ));
    }
    if end.count > end.size / 46 {
        return Err(zip_err(
            end.offset,
            format!("{} entries cannot fit in a central directory of {} bytes", end.count, end.size),
        ));
    }
    let cd = read(end.offset, end.size)?;
    let mut records = Vec::with_capacity(usize::try_from(end.count).unwrap_or(0));
    let mut seen: HashSet<Box<[u8]>> = HashSet::new();
    let mut pos = 0usize;
    for n in 0..end.count {
        let at = end.offset.saturating_add(pos as u64);
        let (entry, used) = central_entry(&cd, pos, at, n)?;
        pos = pos.saturating_add(used);
        if !seen.insert(entry.name.clone()) {
            return Err(zip_err(at, format!("two entries named '{}'", crate::text::escape_bytes(&entry.name))));
        }
        records.push(entry);
    }
    if pos != cd.len() {
        return Err(zip_err(
            end.offset.saturating_add(pos as u64),
            format!("{} bytes in the central directory after its {} entries", cd.len().saturating_sub(pos), end.count),
        ));
    }
    let folder = folder_of(&records)?;
    if let Some(r) = records.iter().find(|r| is_torchscript(&r.name, &folder)) {
        return Err(
            Error::new(PytorchErrorKind::TorchScript(String::from_utf8_lossy(&r.name).into_owned())).at(r.header)
        );
    }
    // Only now, so that a TorchScript archive is named as such first.
    for r in &records {
        let shown = crate::text::escape_bytes(&r.name);
        if r.method != 0 {
            let what = if r.method == 8 { " (deflated)" } else { "" };
            return Err(zip_err(
                r.header,
                format!(
                    "entry '{shown}' is compressed with method {}{what}: only stored entries are read (torch.save never compresses)",
                    r.method
                ),
            ));
        }
        if r.compressed != r.size {
            return Err(zip_err(
                r.header,
                format!("entry '{shown}' has a compressed size {} and a size {}", r.compressed, r.size),
            ));
        }
    }
    for r in &mut records {
        r.data = local_header(r, end.offset, read)?;
    }
    check_overlaps(&records)?;
    Ok(Archive { folder, records, zip64: end.zip64 })
}

fn find_end(len: u64, read: &mut ReadAt<'_>) -> Result<End> {
    let tail_len = len.min(22 + 65535);
    let tail_start = len.saturating_sub(tail_len);
    let tail = read(tail_start, tail_len)?;
    let found = (0..tail.len().saturating_sub(21)).rev().find(|&i| {
        tail.get(i..i.saturating_add(4)) == Some(&EOCD[..])
            && usize::from(u16_at(&tail, i.saturating_add(20))) == tail.len().saturating_sub(i).saturating_sub(22)
    });
    let Some(i) = found else {
        return Err(zip_err(len, "no end-of-central-directory record ends the file"));
    };
    let e = tail.get(i..).unwrap_or(&[]);
    let eocd_at = tail_start.saturating_add(i as u64);
    let (disk, cd_disk) = (u16_at(e, 4), u16_at(e, 6));
    let (on_disk, count) = (u64::from(u16_at(e, 8)), u64::from(u16_at(e, 10)));
    let (size, offset) = (u64::from(u32_at(e, 12)), u64::from(u32_at(e, 16)));
    if disk != 0 || cd_disk != 0 || on_disk != count {
        return Err(zip_err(eocd_at, "a multi-disk archive"));
    }
    let escaped = count == ESC16 || size == ESC32 || offset == ESC32;
    let locator_at = eocd_at.checked_sub(20);
    let locator = match locator_at {
        Some(l) => Some(read(l, 20)?).filter(|b| b.get(..4) == Some(&LOCATOR[..])),
        None => None,
    };
    let (Some(loc), Some(loc_at)) = (locator, locator_at) else {
        if escaped {
            return Err(zip_err(eocd_at, "the end record needs Zip64 values, and no Zip64 locator precedes it"));
        }
        return Ok(End { count, size, offset, ends_at: eocd_at, zip64: false });
    };
    let (z_disk, z_off, z_disks) = (u32_at(&loc, 4), u64_at(&loc, 8), u32_at(&loc, 16));
    if z_disk != 0 || z_disks != 1 {
        return Err(zip_err(loc_at, "a Zip64 locator of a multi-disk archive"));
    }
    if z_off.checked_add(56) != Some(loc_at) {
        return Err(zip_err(loc_at, format!("the Zip64 locator points at {z_off}, not at the 56 bytes before it")));
    }
    let r = read(z_off, 56)?;
    if r.get(..4) != Some(&EOCD64[..]) || u64_at(&r, 4) != 44 {
        return Err(zip_err(z_off, "no Zip64 end record (of 56 bytes) where the locator points"));
    }
    let (d, cd_d) = (u32_at(&r, 16), u32_at(&r, 20));
    let (on_disk64, count64, size64, offset64) = (u64_at(&r, 24), u64_at(&r, 32), u64_at(&r, 40), u64_at(&r, 48));
    if d != 0 || cd_d != 0 || on_disk64 != count64 {
        return Err(zip_err(z_off, "a Zip64 end record of a multi-disk archive"));
    }
    let agree = |v32: u64, esc: u64, v64: u64| v32 == esc || v32 == v64;
    if !agree(count, ESC16, count64) || !agree(size, ESC32, size64) || !agree(offset, ESC32, offset64) {
        return Err(zip_err(z_off, "the Zip64 end record and the end record disagree"));
    }
    Ok(End { count: count64, size: size64, offset: offset64, ends_at: z_off, zip64: true })
}

/// One central directory header at `pos`: the record and the bytes it uses.
fn central_entry(cd: &[u8], pos: usize, at: u64, n: u64) -> Result<(Record, usize)> {
    let h = cd.get(pos..).unwrap_or(&[]);
    if h.len() < 46 || h.get(..4) != Some(&CENTRAL[..]) {
        return Err(zip_err(at, format!("central directory entry #{n} is not a central directory header")));
    }
    let (flags, method) = (u16_at(h, 8), u16_at(h, 10));
    let (csize, usize_) = (u64::from(u32_at(h, 20)), u64::from(u32_at(h, 24)));
    let (nlen, xlen, clen) = (usize::from(u16_at(h, 28)), usize::from(u16_at(h, 30)), usize::from(u16_at(h, 32)));
    let (disk, local) = (u16_at(h, 34), u64::from(u32_at(h, 42)));
    let used = 46usize.saturating_add(nlen).saturating_add(xlen).saturating_add(clen);
    let (Some(name), Some(extra)) = (
        h.get(46..46usize.saturating_add(nlen)),
        h.get(46usize.saturating_add(nlen)..46usize.saturating_add(nlen).saturating_add(xlen)),
    ) else {
        return Err(zip_err(at, format!("central directory entry #{n} runs past the directory")));
    };
    if h.len() < used {
        return Err(zip_err(at, format!("central directory entry #{n} runs past the directory")));
    }
    let shown = crate::text::escape_bytes(name);
    if flags & 1 != 0 {
        return Err(zip_err(at, format!("entry '{shown}' is encrypted")));
    }
    let mut want = Vec::new();
    if usize_ == ESC32 {
        want.push("size");
    }
    if csize == ESC32 {
        want.push("compressed size");
    }
    if local == ESC32 {
        want.push("offset");
    }
    let z = zip64_extra(extra, want.len()).map_err(|m| zip_err(at, format!("entry '{shown}': {m}")))?;
    let mut vals = z.into_iter();
    let mut take = |v: u64| if v == ESC32 { vals.next().unwrap_or(v) } else { v };
    let (usize_, csize, local) = (take(usize_), take(csize), take(local));
    if disk != 0 {
        return Err(zip_err(at, format!("entry '{shown}' is on disk {disk}")));
    }
    Ok((Record { name: name.into(), header: local, data: 0, size: usize_, method, compressed: csize }, used))
}

/// The values of a Zip64 extra field (id 1) holding exactly `n` escaped
/// values; none when `n` is 0 and there is no such field.
fn zip64_extra(extra: &[u8], n: usize) -> std::result::Result<Vec<u64>, String> {
    let mut found: Option<&[u8]> = None;
    let mut i = 0usize;
    while i < extra.len() {
        let (id, size) = (u16_at(extra, i), usize::from(u16_at(extra, i.saturating_add(2))));
        let start = i.saturating_add(4);
        let Some(data) = extra.get(start..start.saturating_add(size)) else {
            return Err("an extra field runs past its header's extra bytes".into());
        };
        if id == 1 {
            if found.is_some() {
                return Err("two Zip64 extra fields".into());
            }
            found = Some(data);
        }
        i = start.saturating_add(size);
    }
    match found {
        None if n == 0 => Ok(Vec::new()),
        None => Err("Zip64 sizes are needed and there is no Zip64 extra field".into()),
        Some(d) if d.len() == n.saturating_mul(8) => Ok(d.chunks_exact(8).map(|c| u64_at(c, 0)).collect()),
        Some(d) => Err(format!("a Zip64 extra field of {} bytes where {} values are escaped", d.len(), n)),
    }
}

/// The folder every name is in; each name is `<a>/<rest>` with both parts non-empty.
fn folder_of(records: &[Record]) -> Result<Box<[u8]>> {
    let mut folder: Option<&[u8]> = None;
    for r in records {
        let split = r.name.iter().position(|&b| b == b'/');
        let ok = split.filter(|&i| i > 0 && i.saturating_add(1) < r.name.len());
        let Some(i) = ok else {
            return Err(zip_err(
                r.header,
                format!("entry '{}' is not in a top-level folder", crate::text::escape_bytes(&r.name)),
            ));
        };
        let f = r.name.get(..i).unwrap_or(&[]);
        match folder {
            None => folder = Some(f),
            Some(g) if g == f => {}
            Some(g) => {
                return Err(zip_err(
                    r.header,
                    format!(
                        "entries in two top-level folders ('{}' and '{}')",
                        crate::text::escape_bytes(g),
                        crate::text::escape_bytes(f)
                    ),
                ));
            }
        }
    }
    folder.map(Into::into).ok_or_else(|| zip_err(0, "an archive with no entries"))
}

fn is_torchscript(name: &[u8], folder: &[u8]) -> bool {
    let rest = name.get(folder.len().saturating_add(1)..).unwrap_or(&[]);
    rest == b"constants.pkl" || rest.starts_with(b"code/")
}

/// Checks the local header of `r` against the directory; its data's offset.
fn local_header(r: &Record, cd_offset: u64, read: &mut ReadAt<'_>) -> Result<u64> {
    let shown = crate::text::escape_bytes(&r.name);
    let fits = |end: Option<u64>| end.is_some_and(|e| e <= cd_offset);
    if !fits(r.header.checked_add(30)) {
        return Err(zip_err(
            r.header,
            format!("entry '{shown}''s local header lies outside the entries' area (before {cd_offset})"),
        ));
    }
    let h = read(r.header, 30)?;
    if h.get(..4) != Some(&LOCAL[..]) {
        return Err(zip_err(r.header, format!("no local header where the directory puts entry '{shown}'")));
    }
    let (flags, method) = (u16_at(&h, 6), u16_at(&h, 8));
    let (csize, usize_) = (u64::from(u32_at(&h, 18)), u64::from(u32_at(&h, 22)));
    let (nlen, xlen) = (u64::from(u16_at(&h, 26)), u64::from(u16_at(&h, 28)));
    let var = nlen.saturating_add(xlen);
    let data = r.header.saturating_add(30).saturating_add(var);
    if !fits(Some(data)) {
        return Err(zip_err(r.header, format!("entry '{shown}''s local header runs into the central directory")));
    }
    let v = read(r.header.saturating_add(30), var)?;
    let (name, extra) = v.split_at(usize::try_from(nlen).unwrap_or(0).min(v.len()));
    if name != &*r.name {
        return Err(zip_err(
            r.header,
            format!("the local header names '{}' where the directory names '{shown}'", crate::text::escape_bytes(name)),
        ));
    }
    if flags & 1 != 0 || method != 0 {
        return Err(zip_err(
            r.header,
            format!("entry '{shown}''s local header disagrees with the directory (method or encryption)"),
        ));
    }
    let escaped = usize::from(usize_ == ESC32).saturating_add(usize::from(csize == ESC32));
    let z =
        zip64_extra(extra, escaped).map_err(|m| zip_err(r.header, format!("entry '{shown}''s local header: {m}")))?;
    let mut vals = z.into_iter();
    let mut take = |v: u64| if v == ESC32 { vals.next().unwrap_or(v) } else { v };
    let (usize_, csize) = (take(usize_), take(csize));
    let same = usize_ == r.size && csize == r.size;
    let deferred = flags & 8 != 0 && usize_ == 0 && csize == 0;
    if !same && !deferred {
        return Err(zip_err(
            r.header,
            format!("entry '{shown}''s local header gives sizes {csize}/{usize_} where the directory gives {}", r.size),
        ));
    }
    if !fits(data.checked_add(r.size)) {
        return Err(zip_err(
            r.header,
            format!("entry '{shown}''s {} bytes of data run past the entries' area", r.size),
        ));
    }
    Ok(data)
}

fn check_overlaps(records: &[Record]) -> Result<()> {
    let mut spans: Vec<(u64, u64, &Record)> =
        records.iter().map(|r| (r.header, r.data.saturating_add(r.size), r)).collect();
    spans.sort_unstable_by_key(|&(s, e, _)| (s, e));
    for w in spans.windows(2) {
        let [(_, end, a), (start, _, b)] = w else { continue };
        if start < end {
            return Err(zip_err(
                *start,
                format!(
                    "entries '{}' and '{}' overlap",
                    crate::text::escape_bytes(&a.name),
                    crate::text::escape_bytes(&b.name)
                ),
            ));
        }
    }
    Ok(())
}
