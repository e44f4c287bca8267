use super::*;

fn at(bytes: &[u8]) -> impl FnMut(u64, &mut [u8]) -> io::Result<()> + '_ {
    move |offset, buf| {
        let start = usize::try_from(offset).unwrap();
        let src = bytes.get(start..start + buf.len()).ok_or_else(|| io::Error::other("past the end"))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

fn index(bytes: &[u8]) -> Result<Vec<TarFile>, String> {
    files(Ranged::new(bytes.len() as u64, at(bytes)), bytes.len() as u64, None)
}

fn header(kind: tar::EntryType, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(0o644);
    h
}

/// A tar of `(path, data)` files, GNU headers (long names as `././@LongLink`).
fn tar_of(files: &[(&str, &[u8])], end_blocks: bool) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data) in files {
        b.append_data(&mut header(tar::EntryType::Regular, data.len() as u64), path, *data).unwrap();
    }
    let mut out = b.into_inner().unwrap();
    if !end_blocks {
        out.truncate(out.len() - 1024);
    }
    out
}

fn data_of<'a>(bytes: &'a [u8], f: &TarFile) -> &'a [u8] {
    &bytes[f.offset as usize..(f.offset + f.len) as usize]
}

#[test]
fn files_with_their_data_and_long_names() {
    let long = format!("{}/model.safetensors", "d".repeat(120));
    let bytes = tar_of(&[("config.json", b"{}"), (&long, &[7u8; 1000]), ("empty", b"")], true);
    let got = index(&bytes).unwrap();
    let names: Vec<&str> = got.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(names, ["config.json", long.as_str(), "empty"]);
    assert_eq!(data_of(&bytes, &got[0]), b"{}");
    assert_eq!(data_of(&bytes, &got[1]), &[7u8; 1000]);
    assert_eq!(got[2].len, 0);
    // Its own header follows the long name's (`././@LongLink`) entry.
    assert_eq!(got[1].offset - got[1].header, BLOCK);
    assert!(got[1].header >= 3 * BLOCK);
}

#[test]
fn pax_paths_and_directories() {
    let mut b = tar::Builder::new(Vec::new());
    b.append_data(&mut header(tar::EntryType::Directory, 0), "docs/", io::empty()).unwrap();
    let path = format!("docs/{}.md", "x".repeat(150));
    b.append_pax_extensions([("path", path.as_bytes())]).unwrap();
    let mut h = header(tar::EntryType::Regular, 3);
    h.set_path("short").unwrap();
    h.set_cksum();
    b.append(&h, &b"abc"[..]).unwrap();
    let bytes = b.into_inner().unwrap();
    let got = index(&bytes).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, path);
    assert_eq!(data_of(&bytes, &got[0]), b"abc");
}

#[test]
fn a_file_in_the_blobs_last_block_and_no_end_blocks() {
    let bytes = tar_of(&[("a", &[1u8; 512])], false);
    assert_eq!(bytes.len(), 1024);
    let got = index(&bytes).unwrap();
    assert_eq!((got[0].offset, got[0].len), (512, 512));
    assert_eq!(data_of(&bytes, &got[0]), &[1u8; 512]);
}

#[test]
fn links_devices_fifos_and_sparse_files_are_refused_by_name() {
    for (kind, what) in [
        (tar::EntryType::Symlink, "symbolic link"),
        (tar::EntryType::Link, "hard link"),
        (tar::EntryType::Char, "device"),
        (tar::EntryType::Block, "device"),
        (tar::EntryType::Fifo, "FIFO"),
        (tar::EntryType::XGlobalHeader, "PAX global header"),
    ] {
        let mut b = tar::Builder::new(Vec::new());
        b.append_data(&mut header(tar::EntryType::Regular, 1), "ok", &b"x"[..]).unwrap();
        let mut h = header(kind, 0);
        if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
            h.set_link_name("ok").unwrap();
        }
        b.append_data(&mut h, "weights.bin", io::empty()).unwrap();
        let e = index(&b.into_inner().unwrap()).unwrap_err();
        assert!(e.contains("\"weights.bin\"") && e.contains(what) && e.contains("byte offset 1024"), "{e}");
    }
    let mut b = tar::Builder::new(Vec::new());
    b.append_pax_extensions([("GNU.sparse.major", &b"1"[..]), ("GNU.sparse.minor", b"0")]).unwrap();
    b.append_data(&mut header(tar::EntryType::Regular, 1), "s", &b"x"[..]).unwrap();
    let e = index(&b.into_inner().unwrap()).unwrap_err();
    assert!(e.contains("sparse") && e.contains("\"s\""), "{e}");
}

#[test]
fn bad_paths_are_refused() {
    for (path, why) in [("../x", "'..'"), ("./x", "'.'"), ("a//b", "empty"), ("/abs", "absolute")] {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = header(tar::EntryType::Regular, 1);
        // Written raw: the builder itself refuses some of these.
        let name = &mut h.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_cksum();
        b.append(&h, &b"x"[..]).unwrap();
        let e = index(&b.into_inner().unwrap()).unwrap_err();
        assert!(e.contains(why), "{path}: {e}");
    }
}

#[test]
fn an_entry_past_the_blobs_end_is_refused_with_its_offset() {
    let bytes = tar_of(&[("a", b"x"), ("big", &[0u8; 5000])], true);
    let cut = &bytes[..3000];
    let e = index(cut).unwrap_err();
    assert!(e.contains("\"big\"") && e.contains("byte offset 1024") && e.contains("past the blob's end"), "{e}");
    // A declared size far beyond any blob: refused before anything is read.
    let mut h = header(tar::EntryType::Regular, 0);
    h.set_size(u64::MAX / 2);
    h.set_path("huge").unwrap();
    h.set_cksum();
    let mut bytes = h.as_bytes().to_vec();
    bytes.resize(2048, 0);
    assert!(index(&bytes).unwrap_err().contains("past the blob's end"));
}

#[test]
fn long_extensions_and_many_entries_are_bounded() {
    let mut b = tar::Builder::new(Vec::new());
    let long = vec![b'a'; (MAX_EXTENSION + 1) as usize];
    b.append_pax_extensions([("comment", long.as_slice())]).unwrap();
    b.append_data(&mut header(tar::EntryType::Regular, 1), "x", &b"x"[..]).unwrap();
    let bytes = b.into_inner().unwrap();
    let e = index(&bytes).unwrap_err();
    assert!(e.contains("longer than 65536 bytes"), "{e}");
    let bytes = tar_of(&[("a", b""), ("b", b""), ("c", b"")], true);
    let e = bounded(Ranged::new(bytes.len() as u64, at(&bytes)), bytes.len() as u64, None, 2).unwrap_err();
    assert!(e.contains("more than 2 entries"), "{e}");
    assert!(index(&[1u8; 1024]).unwrap_err().contains("not a tar"));
}

#[test]
fn every_shortened_tar_is_refused_or_read_within_its_bytes() {
    let long = "l".repeat(130);
    let bytes = tar_of(&[("a", &[1u8; 700]), (&long, b""), ("c", &[2u8; 512])], true);
    let whole = index(&bytes).unwrap();
    assert_eq!(whole.len(), 3);
    for cut in 0..=bytes.len() {
        let part = &bytes[..cut];
        if let Ok(got) = index(part) {
            for f in &got {
                assert!(f.offset + f.len <= cut as u64, "{cut}: {f:?}");
                assert!(whole.contains(f), "{cut}: {f:?}");
            }
        }
    }
}

#[test]
fn a_forward_read_stops_at_the_file_and_agrees_with_the_ranged_one() {
    let bytes = tar_of(&[("a", &[1u8; 70_000]), ("b/c", b"xyz"), ("d", b"")], true);
    let whole = index(&bytes).unwrap();
    for f in &whole {
        let mut at = 0usize;
        let mut reads = 0usize;
        let next = |buf: &mut [u8]| {
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            at += buf.len();
            reads += 1;
            Ok(())
        };
        let got = files(Forward::new(f.offset, next), bytes.len() as u64, Some(f.offset)).unwrap();
        assert_eq!(got.last(), Some(f));
        assert!(whole.starts_with(&got));
    }
    // A seek backwards or past its end is refused.
    let mut fw = Forward::new(10, |_: &mut [u8]| Ok(()));
    assert!(fw.seek(SeekFrom::Start(11)).is_err());
    fw.seek(SeekFrom::Start(5)).unwrap();
    assert!(fw.seek(SeekFrom::Start(4)).is_err());
}
