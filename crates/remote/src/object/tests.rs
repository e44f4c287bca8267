//! The unit tests of `object.rs`: parts, retries, the listing's bound.

use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

use super::*;
use object_store::PutPayload;
use object_store::memory::InMemory;

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 253) as u8).collect()
}

/// An answer for `range` of `data`: its first `give` bytes (all when
/// `None`), in chunks of `chunk` bytes, then `end` (an error, or the
/// body's clean end).
fn body(data: &[u8], range: Range<u64>, give: Option<usize>, chunk: usize, fail: bool) -> Body {
    let bytes = &data[range.start as usize..range.end as usize];
    let bytes = &bytes[..give.unwrap_or(bytes.len()).min(bytes.len())];
    let mut items: Vec<object_store::Result<Bytes>> =
        bytes.chunks(chunk).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    if fail {
        items.push(Err(object_store::Error::Generic { store: "test", source: "connection reset".into() }));
    }
    let permit = Arc::new(Semaphore::new(1)).try_acquire_owned().unwrap();
    Body { chunks: futures::stream::iter(items).boxed(), _permit: permit }
}

/// Runs `send_part` for `range` with `first` and `open`, returning what
/// reached the reader and the verdict.
fn run<O, F>(first: Body, range: Range<u64>, retries: usize, open: O) -> (Vec<u8>, Result<(), Option<Error>>)
where
    O: Fn(Range<u64>) -> F,
    F: std::future::Future<Output = Result<Body>>,
{
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (tx, mut rx) = mpsc::channel(1 << 20);
    let shown = PathBuf::from("http://h/m.gguf");
    let verdict = rt.block_on(send_part(Ok(first), range, retries, &open, &shown, &tx));
    drop(tx);
    let mut got = Vec::new();
    while let Some(chunk) = rx.blocking_recv() {
        got.extend_from_slice(&chunk.unwrap());
    }
    (got, verdict)
}

#[test]
fn a_short_body_is_asked_for_again_from_its_first_byte_not_yet_sent() {
    let d = data(10_000);
    for chunk in [1, 7, 64, 1000, 20_000] {
        let asked = Mutex::new(Vec::new());
        // Each answer but the last ends 1300 bytes in (or on an error
        // the store did not resume): the next starts where it stopped.
        let open = |r: Range<u64>| {
            asked.lock().unwrap().push(r.clone());
            let n = asked.lock().unwrap().len();
            let b = if n < 3 { body(&d, r, Some(1300), chunk, false) } else { body(&d, r, None, chunk, false) };
            async move { Ok(b) }
        };
        let (got, verdict) = run(body(&d, 100..9000, Some(777), chunk, false), 100..9000, 5, open);
        assert!(verdict.is_ok(), "chunk {chunk}: {verdict:?}");
        // Every byte once, in order: nothing sent twice.
        assert_eq!(got, &d[100..9000], "chunk {chunk}");
        assert_eq!(*asked.lock().unwrap(), vec![877..9000, 2177..9000, 3477..9000]);
    }
}

#[test]
fn short_bodies_past_the_retries_are_refused_and_never_sent_twice() {
    let d = data(4000);
    let open = |r: Range<u64>| {
        let b = body(&d, r, Some(10), 3, false);
        async move { Ok(b) }
    };
    let (got, verdict) = run(body(&d, 0..4000, Some(10), 3, false), 0..4000, 2, open);
    // What was sent is the range's first bytes, each once; the job fails.
    assert_eq!(got, &d[..30]);
    let e = verdict.unwrap_err().unwrap().to_string();
    assert!(e.contains("3970 bytes short of the 4000 asked for, 3 times") && e.contains("http://h/m.gguf"), "{e}");
}

#[test]
fn a_body_longer_than_asked_or_broken_is_refused() {
    let d = data(4000);
    let never = |_: Range<u64>| async { Err::<Body, _>(Error::internal("not asked again")) };
    // 0..2000 answered with 0..3000.
    let (got, verdict) = run(body(&d, 0..3000, None, 1000, false), 0..2000, 5, never);
    assert_eq!(got, &d[..2000]);
    let e = verdict.unwrap_err().unwrap().to_string();
    assert!(e.contains("more than the 2000 bytes asked for"), "{e}");
    // A body broken past the store's own retries fails the part.
    let (got, verdict) = run(body(&d, 0..2000, Some(500), 100, true), 0..2000, 5, never);
    assert_eq!(got, &d[..500]);
    let e = verdict.unwrap_err().unwrap().to_string();
    assert!(e.contains("connection reset"), "{e}");
    // A retry that fails (the object replaced) is the part's error.
    let replaced = |r: Range<u64>| async move { Err::<Body, _>(changed("replaced").at(r.start)) };
    let (_, verdict) = run(body(&d, 0..2000, Some(500), 100, false), 0..2000, 5, replaced);
    assert!(verdict.unwrap_err().unwrap().to_string().contains("replaced"));
}

#[test]
fn a_reader_gone_stops_the_part() {
    let d = data(4000);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let (tx, rx) = mpsc::channel(1);
    drop(rx);
    let never = |_: Range<u64>| async { Err::<Body, _>(Error::internal("not asked again")) };
    let shown = PathBuf::from("x");
    let verdict = rt.block_on(send_part(Ok(body(&d, 0..4000, None, 100, false)), 0..4000, 5, &never, &shown, &tx));
    assert!(matches!(verdict, Err(None)));
}

#[test]
fn parts_reach_the_hasher_lent_or_copied_in_pieces_of_any_length() {
    let d = data(50_000);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap();
    let want: [u8; 32] = Sha256::digest(&d).into();
    let shown = PathBuf::from("x");
    for chunk in [1, 63, 65, 4096, 60_000] {
        for piece in [1, 64, 100, 1000, 50_000] {
            let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
            let chunks: Vec<Bytes> = d.chunks(chunk).map(Bytes::copy_from_slice).collect();
            let task = rt.spawn(async move {
                for c in chunks {
                    if tx.send(Ok(c)).await.is_err() {
                        return;
                    }
                }
            });
            let mut reader = PartReader { rx, held: Bytes::new(), task, shown: &shown };
            let mut hasher = Sha256::new();
            let mut buf = vec![0u8; piece];
            let mut left = d.len();
            // Lent and copied pieces alternate: either way, in order.
            for i in 0.. {
                if left == 0 {
                    break;
                }
                let n = piece.min(left);
                if i % 2 == 0 {
                    reader.feed(&mut buf[..n], &mut |s| hasher.update(s)).unwrap();
                } else {
                    reader.read_next(&mut buf[..n]).unwrap();
                    hasher.update(&buf[..n]);
                }
                left -= n;
            }
            assert_eq!(<[u8; 32]>::from(hasher.finalize()), want, "chunk {chunk}, piece {piece}");
            // Past the range's end: an error, not a wait forever.
            let e = reader.feed(&mut [0u8; 1], &mut |_| {}).unwrap_err();
            assert!(e.to_string().contains("before its last part"), "{e}");
        }
    }
}

/// A store of `keys` in memory, as the opener builds one for a bucket.
fn store_of(keys: &[&str]) -> Arc<Store> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let memory = InMemory::new();
    runtime.block_on(async {
        for k in keys {
            memory.put(&Key::from(*k), PutPayload::from_static(b"x")).await.unwrap();
        }
    });
    Arc::new(Store {
        store: Arc::new(memory),
        runtime: Arc::new(runtime),
        connections: Arc::new(Semaphore::new(2)),
        shown: "s3://bucket/".into(),
        part: 4 << 20,
        retries: 1,
        dav: None,
    })
}

#[test]
fn a_listing_past_its_bound_is_refused_naming_the_prefix() {
    let store = store_of(&["p/a", "p/b", "p/sub/c", "q/d"]);
    let place = store.place("p/");
    assert_eq!(place.list_at_most(3).unwrap().len(), 3);
    let e = place.list_at_most(2).unwrap_err().to_string();
    assert!(e.contains("more than 2 objects") && e.contains("s3://bucket/p/"), "{e}");
    // The bound the listing of a directory URL runs under.
    assert_eq!(place.walk().unwrap(), vec![b"a".to_vec(), b"b".to_vec(), b"sub/c".to_vec()]);
    assert_eq!(place.names().unwrap(), vec![OsString::from("a"), OsString::from("b")]);
}

#[test]
fn a_range_read_in_parts_through_a_store_is_its_bytes_once_in_order() {
    // Parts of 1000 bytes, one permit: the next part's request waits for
    // it while a part streams, and every byte reaches the hasher once.
    let d = data(10_000);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let memory = InMemory::new();
    runtime.block_on(memory.put(&Key::from("m"), PutPayload::from(d.clone()))).unwrap();
    let store = Arc::new(Store {
        store: Arc::new(memory),
        runtime: Arc::new(runtime),
        connections: Arc::new(Semaphore::new(1)),
        shown: "s3://bucket/".into(),
        part: 1000,
        retries: 1,
        dav: None,
    });
    let object = store.head("m").unwrap();
    for (start, len, piece) in [(0u64, 10_000u64, 333usize), (17, 9000, 4096), (999, 2, 1), (5, 2500, 2500)] {
        let mut reader = object.read_range(start, len).unwrap();
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; piece];
        let mut left = len as usize;
        while left > 0 {
            let n = piece.min(left);
            reader.feed(&mut buf[..n], &mut |s| hasher.update(s)).unwrap();
            left -= n;
        }
        let want: [u8; 32] = Sha256::digest(&d[start as usize..(start + len) as usize]).into();
        assert_eq!(<[u8; 32]>::from(hasher.finalize()), want, "{start}+{len}");
    }
    // A range past the object's end is refused before any request.
    assert!(object.read_range(9000, 1001).is_err());
}
