//! A tar layer's file as a slice of its blob, against a hand-made
//! registry that answers range requests: its bytes read at its offset,
//! reads past it refused, its blob's digest checked; the headers placing
//! it served otherwise the second time, refused.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest as _, Sha256};

use super::*;
use crate::oci::client::Options;
use crate::oci::reference::Reference;

/// A tar of one file `a` of `len` bytes of 7s, padded to 4096 bytes.
fn tar_of(len: usize) -> Vec<u8> {
    entries(&[("a", tar::EntryType::Regular, len)])
}

/// A tar of these entries (data: 7s), padded to 4096 bytes.
fn entries(list: &[(&str, tar::EntryType, usize)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, kind, len) in list {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(*kind);
        h.set_size(*len as u64);
        h.set_mode(0o644);
        if kind.is_symlink() {
            h.set_link_name("a").unwrap();
        }
        b.append_data(&mut h, name, &vec![7u8; *len][..]).unwrap();
    }
    let mut out = b.into_inner().unwrap();
    out.resize(4096, 0);
    out
}

/// Serves `first` to the first `switch` requests, `then` after, by ranges.
fn registry(first: Vec<u8>, then: Vec<u8>, switch: usize) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = AtomicUsize::new(0);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line.to_ascii_lowercase());
            }
            let bytes = if served.fetch_add(1, Ordering::SeqCst) < switch { &first } else { &then };
            let range = head.lines().find_map(|l| l.strip_prefix("range: bytes=")).unwrap_or("").trim();
            let (s, e) = range.split_once('-').unwrap_or(("0", ""));
            let s: usize = s.parse().unwrap_or(0);
            let e: usize = e.parse().unwrap_or(bytes.len() - 1);
            let body = &bytes[s..=e];
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {s}-{e}/{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len(),
                body.len()
            );
            let _ = out.write_all(body);
        }
    });
    port
}

fn layer(bytes: &[u8]) -> Descriptor {
    Descriptor {
        media_type: "application/vnd.cncf.model.weight.v1.tar".into(),
        hex: hex::encode(Sha256::digest(bytes)),
        size: bytes.len() as u64,
        annotations: vec![],
        artifact_type: None,
        platform: None,
    }
}

fn place(port: u16, d: &Descriptor) -> Result<Arc<Files>> {
    let r = Reference::parse(&format!("oci://127.0.0.1:{port}/a/b:t")).unwrap();
    let client = Arc::new(Client::new(&r, &Options { allow_http: true, ca_file: None, config: None }).unwrap());
    Files::modelpack(client, PathBuf::from("oci://x/a/b:t"), vec![("a".into(), d.clone())])
}

#[test]
fn a_tar_file_is_its_slice_of_the_blob_and_the_blob_is_checked() {
    let tar = tar_of(10);
    let d = layer(&tar);
    let files = place(registry(tar.clone(), tar.clone(), usize::MAX), &d).unwrap();
    assert_eq!(files.walk().unwrap(), vec![b"a".to_vec()]);
    let source = files.open_name("a").unwrap();
    let blob = source.ranged().unwrap();
    assert_eq!(blob.len(), 10);
    let mut buf = [0u8; 4];
    blob.read_at(6, &mut buf).unwrap();
    assert_eq!(buf, [7; 4]);
    let mut all = [0u8; 10];
    blob.read_range(0, 10).unwrap().read_next(&mut all).unwrap();
    assert_eq!(all, [7; 10]);
    let e = blob.read_at(7, &mut buf).unwrap_err().to_string();
    assert!(e.contains("past the file's 10 bytes"), "{e}");
    assert!(blob.read_range(5, 6).is_err());
    blob.check_unchanged().unwrap();
    // The same bytes under another digest: never labelled.
    let mut other = layer(&tar);
    other.hex = hex::encode(Sha256::digest(b"another blob"));
    let files = place(registry(tar.clone(), tar, usize::MAX), &other).unwrap();
    let e = files.open_name("a").unwrap().ranged().unwrap().check_unchanged().unwrap_err().to_string();
    assert!(e.contains("not the ones its digest names"), "{e}");
}

#[test]
fn headers_served_otherwise_the_second_time_are_refused() {
    // The index reads the first tar (one request: its look-ahead); the
    // open reads the bytes before the file again and finds another size.
    let (first, then) = (tar_of(10), tar_of(5));
    let files = place(registry(first.clone(), then, 1), &layer(&first)).unwrap();
    let e = files.open_name("a").unwrap_err().to_string();
    assert!(e.contains("changed between reads") && e.contains("\"a\""), "{e}");
    // What the first read showed between two files, or after the last,
    // served otherwise to the reads the digest checks: refused.
    use tar::EntryType::{Directory, Regular, Symlink};
    for (first, then, why) in [
        (
            entries(&[("a", Regular, 10), ("a/d", Directory, 0), ("a/c", Regular, 10)]),
            entries(&[("a", Regular, 10), ("a/b", Regular, 0), ("a/c", Regular, 10)]),
            "changed between reads",
        ),
        (entries(&[("a", Regular, 10)]), entries(&[("a", Regular, 10), ("a/b", Regular, 3)]), "\"a/b\" after"),
        (entries(&[("a", Regular, 10)]), entries(&[("a", Regular, 10), ("a/l", Symlink, 0)]), "symbolic link"),
    ] {
        let files = place(registry(first, then.clone(), 1), &layer(&then)).unwrap();
        let last = files.walk().unwrap().pop().unwrap();
        let e = match files.open_name(std::str::from_utf8(&last).unwrap()) {
            Err(e) => e,
            Ok(source) => source.ranged().unwrap().check_unchanged().unwrap_err(),
        };
        assert!(e.to_string().contains(why), "{why}: {e}");
    }
    // A tar holding another path than its annotation names.
    let port = registry(first.clone(), first.clone(), usize::MAX);
    let r = Reference::parse(&format!("oci://127.0.0.1:{port}/a/b:t")).unwrap();
    let client = Arc::new(Client::new(&r, &Options { allow_http: true, ca_file: None, config: None }).unwrap());
    let e = Files::modelpack(client, PathBuf::from("x"), vec![("b".into(), layer(&first))]).unwrap_err().to_string();
    assert!(e.contains("neither the file \"b\""), "{e}");
}
