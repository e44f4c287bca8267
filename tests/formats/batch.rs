//! Labelling many paths at once: every path is answered exactly once, in
//! argument order, whatever mix of good files, bad files, empty models and
//! shard sets it holds, and whatever the thread count.
use crate::common;

use std::path::PathBuf;

use common::*;
use gguf_digest::gguf::Model;
use gguf_digest::{BatchOptions, OpenOptions, ReadMode, digest_paths};
use gguf_digest_formats::input::{Named, NamedModels};

/// Runs a batch on its own thread, so that a scheduler that stops making
/// progress fails the test instead of hanging it.
fn run(paths: &[PathBuf], threads: usize) -> Vec<(usize, Result<String, String>)> {
    run_with(paths, threads, BatchOptions::default())
}

fn run_with(paths: &[PathBuf], threads: usize, opts: BatchOptions) -> Vec<(usize, Result<String, String>)> {
    let paths = paths.to_vec();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut seen = Vec::new();
        digest_paths(&paths, &opts, &pool, |i, r| {
            seen.push((i, r.map(|(_, d)| d.label()).map_err(|e| e.to_string())));
        });
        let _ = tx.send(seen);
    });
    rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the batch finished within a minute")
}

#[test]
fn every_path_answered_once_in_order() {
    let d = Dir::new();
    let good = rich_model(&[0, 1, 8]);
    let empty = Gguf::new().kv("general.name", Val::str("empty"));
    let shards = good.split(&[2, 1]);
    d.write("set-00001-of-00002.gguf", &shards[0].build());
    d.write("set-00002-of-00002.gguf", &shards[1].build());
    let kinds: Vec<(PathBuf, Option<String>)> = vec![
        (d.write("good.gguf", &good.build()), Some(good.expected_label())),
        (d.write("empty.gguf", &empty.build()), Some(empty.expected_label())),
        (d.path("missing.gguf"), None),
        (d.write("junk.gguf", b"not a gguf file"), None),
        (d.path("set-00001-of-00002.gguf"), Some(good.expected_label())),
        (d.path("set-00002-of-00002.gguf"), None),
        (d.dir.path().to_path_buf(), None),
    ];
    // Long runs of errors and of tensor-less models are what once left the
    // scheduler waiting with nothing in flight.
    let pattern = [0, 2, 3, 2, 1, 1, 6, 5, 1, 3, 4, 2, 2, 2, 0, 3, 1, 1, 1, 1, 6, 0];
    let paths: Vec<PathBuf> = pattern.iter().map(|&k| kinds[k].0.clone()).collect();
    for threads in [1, 2, 3] {
        let seen = run(&paths, threads);
        assert_eq!(seen.iter().map(|(i, _)| *i).collect::<Vec<_>>(), (0..paths.len()).collect::<Vec<_>>());
        for ((i, r), &k) in seen.iter().zip(&pattern) {
            match &kinds[k].1 {
                Some(label) => assert_eq!(r.as_ref().ok(), Some(label), "path {i} with {threads} threads"),
                None => assert!(r.is_err(), "path {i} with {threads} threads should fail"),
            }
        }
    }
}

#[test]
fn batch_agrees_with_single_model_digest() {
    let d = Dir::new();
    let g = rich_model(&ALL_TYPES);
    let p = d.write("m.gguf", &g.build());
    let single = Model::open(&p).unwrap().digest().unwrap().label();
    let seen = run(&[p.clone(), p], 2);
    assert_eq!(seen.len(), 2);
    for (_, r) in seen {
        assert_eq!(r.unwrap(), single);
    }
}

#[test]
fn no_paths_no_calls() {
    assert!(run(&[], 2).is_empty());
}

#[test]
fn read_and_mapped_tensors_of_every_size_agree_on_two_threads() {
    // Tensors under 64 KiB are read; larger ones are hashed from the file's
    // one map in 8 MiB windows whose pages are dropped behind the hasher.
    // With alignment 32 neighbours share pages, so one thread dropping its
    // tensor's pages must not disturb another hashing the next tensor.
    // Sizes straddle the read/map threshold and the window; element types
    // of 1, 2 and 4 bytes; little- and big-endian files.
    let sizes: [(u64, u32); 9] = [
        (65_535, 24),
        (32_768, 1),
        (65_537, 24),
        (16_385, 0),
        (300_001, 24),
        (524_291, 1),
        ((8 << 20) - 7, 24),
        ((4 << 20) + 3, 1),
        ((17 << 20) + 9, 24),
    ];
    let mut g = Gguf::new();
    for (i, &(elements, ggml_type)) in sizes.iter().enumerate() {
        g = g.tensor(Tensor::filled(&format!("t.{i}"), &[elements], ggml_type, i as u8));
    }
    let be = Gguf { big_endian: true, ..g.clone() };
    let d = Dir::new();
    let paths = [d.write("le.gguf", &g.build()), d.write("be.gguf", &be.build())];
    let want = g.expected_label();
    for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
        for threads in [1, 2] {
            let opts =
                BatchOptions { open: OpenOptions { read_mode, ..OpenOptions::default() }, ..BatchOptions::default() };
            for (i, r) in run_with(&paths, threads, opts) {
                assert_eq!(r.as_deref(), Ok(want.as_str()), "file {i}, {read_mode:?}, {threads} threads");
            }
        }
    }
}

#[test]
fn a_cancelled_run_answers_every_path_with_cancelled() {
    let d = Dir::new();
    let bytes = rich_model(&[0, 1, 8]).build();
    let paths = vec![d.write("a.gguf", &bytes), d.write("b.gguf", &bytes)];
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let opts = BatchOptions { cancel: Some(cancel), ..BatchOptions::default() };
    let seen = run_with(&paths, 2, opts);
    assert_eq!(seen.len(), 2);
    for (i, r) in seen {
        let e = r.expect_err("cancelled");
        assert!(e.contains("cancelled"), "path {i}: {e}");
    }
}

#[test]
fn cancelling_stops_hashing_inside_a_tensor() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    // One 64 MiB tensor hashed in 4 KiB pieces: the flag, set as soon as the
    // first piece is counted, must stop it long before its end.
    let d = Dir::new();
    let g = Gguf::new().tensor(Tensor::filled("big", &[64 << 20], 24, 7));
    let path = d.write("big.gguf", &g.build());
    for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
        let (cancel, counted) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
        let mut open = OpenOptions { read_mode, ..OpenOptions::default() };
        open.pieces = gguf_digest::PieceSizes { window: 64 << 10, chunk: 4096, min_mapped: 1 };
        let opts =
            BatchOptions { open, progress: Some(Arc::clone(&counted)), cancel: Some(Arc::clone(&cancel)), cache: None };
        let watcher = {
            let (cancel, counted) = (Arc::clone(&cancel), Arc::clone(&counted));
            std::thread::spawn(move || {
                while counted.load(Ordering::Relaxed) == 0 {
                    std::hint::spin_loop();
                }
                cancel.store(true, Ordering::Relaxed);
            })
        };
        let seen = run_with(std::slice::from_ref(&path), 1, opts);
        watcher.join().unwrap();
        let e = seen[0].1.clone().expect_err("cancelled");
        assert!(e.contains("cancelled") && e.contains("tensor 'big'"), "{read_mode:?}: {e}");
        assert!(counted.load(Ordering::Relaxed) < 64 << 20, "{read_mode:?}: hashed to the end");
    }
}

#[test]
fn cancelling_stops_a_front_to_back_read_naming_the_tensor() {
    use std::sync::atomic::{AtomicU64, Ordering};
    // The reader side (a cold file or a stream): a progress callback that
    // cancels after the first piece stops the read, and the error names
    // the tensor as the mapped path's does.
    let d = Dir::new();
    let g = Gguf::new().tensor(Tensor::filled("big", &[16 << 20], 24, 7));
    let path = d.write("big.gguf", &g.build());
    let model = Model::open(&path).unwrap();
    let pieces = gguf_digest::PieceSizes { window: 64 << 10, chunk: 4096, min_mapped: 1 };
    for direct in [gguf_digest_core::pipeline::DirectReads::Auto, gguf_digest_core::pipeline::DirectReads::Always] {
        let counted = AtomicU64::new(0);
        let cancel_after_first = |n: u64| {
            if counted.fetch_add(n, Ordering::Relaxed) > 0 {
                return Err(gguf_digest::Error::new(gguf_digest::ErrorKind::Cancelled));
            }
            Ok(())
        };
        let e = gguf_digest_core::pipeline::hash_front_to_back_with(&model, &pieces, 2, direct, &cancel_after_first)
            .expect_err("cancelled");
        assert!(e.to_string().contains("cancelled") && e.to_string().contains("tensor 'big'"), "{direct:?}: {e}");
        assert!(counted.load(Ordering::Relaxed) < 16 << 20, "{direct:?}: read to the end");
    }
}

/// A later shard left out of a run is covered by the very model the run
/// labels: the first shard opened to decide is handed over. Were the first
/// shard replaced in between, that model says so (the file changed), so the
/// run fails rather than printing the new file's label for the set.
#[test]
fn the_model_that_covers_a_left_out_shard_is_the_one_labelled() {
    let d = Dir::new();
    let mut g = Gguf::new().kv("general.architecture", Val::str("llama"));
    for i in 0..4u8 {
        g = g.tensor(Tensor::filled(&format!("t.{i}"), &[8], 0, i));
    }
    let paths = write_set(&d, "m", &g.split(&[2, 2]));
    let opts = OpenOptions::default();
    let pieces = gguf_digest::PieceSizes::default();
    let files = |m: &gguf_digest::AnyModel| {
        gguf_digest::Labelled::sources(m).iter().map(|s| s.path().to_path_buf()).collect::<Vec<_>>()
    };

    let named = NamedModels::new(&paths, &opts);
    assert_eq!(named.paths(), &paths[..1], "the second shard is the set's");
    let model = named.open(&paths[0], &opts).unwrap();
    assert_eq!(files(&model), paths, "the model handed over holds the shard left out");
    assert_eq!(gguf_digest::digest(&model, &pieces).unwrap().label(), g.expected_label());

    let named = NamedModels::new(&paths, &opts);
    let other = Gguf::new().tensor(Tensor::filled("x", &[8], 0, 9));
    std::fs::rename(d.write("replacement.gguf", &other.build()), &paths[0]).unwrap();
    // Asked with other options, the path is opened afresh: what it now holds.
    let pread = OpenOptions { read_mode: ReadMode::Pread, ..opts };
    assert_eq!(files(&named.open(&paths[0], &pread).unwrap()), &paths[..1]);
    let model = named.open(&paths[0], &opts).unwrap();
    assert_eq!(files(&model), paths, "still the set that was seen");
    let e = gguf_digest::digest(&model, &pieces).unwrap_err();
    assert!(matches!(e.kind(), gguf_digest::ErrorKind::FileChanged(_)), "{e}");
    // Handed over once: opened again, the path is what it now holds.
    assert_eq!(files(&named.open(&paths[0], &opts).unwrap()), &paths[..1]);

    // Not joined, nothing is left out.
    let apart = NamedModels::new(&paths, &OpenOptions { join_shards: false, ..opts });
    assert_eq!(apart.paths(), &paths[..]);
}

/// What a run makes of each argument: a later shard is its first shard's
/// line, and whether alone it names the same model (a shard of an indexed
/// safetensors set) or is refused (GGUF, safetensors without an index)
/// is read from the first shard's model.
#[test]
fn each_argument_is_a_line_or_the_line_of_its_first_shard() {
    use common::st::{St, StTensor};
    let d = Dir::new();
    let mut g = Gguf::new();
    for i in 0..3u8 {
        g = g.tensor(Tensor::filled(&format!("t.{i}"), &[8], 0, i));
    }
    let gguf = write_set(&d, "g", &g.split(&[1, 1, 1]));
    let st = St::new().meta("format", "pt");
    let st = (0..3u8).fold(st, |st, i| st.tensor(StTensor::filled(&format!("t.{i}"), "U8", &[4], i)));
    let (files, index) = st.sharded("s", &[1, 1, 1]);
    let shards: Vec<PathBuf> = files.iter().map(|(n, b)| d.write(n, b)).collect();
    let other = d.write("other.gguf", &rich_model(&[0]).build());

    let opts = OpenOptions::default();
    let args =
        vec![gguf[2].clone(), shards[1].clone(), gguf[0].clone(), shards[0].clone(), other.clone(), gguf[1].clone()];
    let named = NamedModels::new(&args, &opts);
    assert_eq!(named.paths(), [gguf[0].clone(), shards[0].clone(), other.clone()]);
    use Named::*;
    assert_eq!(named.arguments(), [LaterShard(0), LaterShard(1), Line(0), Line(1), Line(2), LaterShard(0)]);
    d.write("s.safetensors.index.json", index.as_bytes());
    let named = NamedModels::new(&args, &opts);
    assert_eq!(named.paths(), [gguf[0].clone(), shards[0].clone(), other.clone()]);
    assert_eq!(named.arguments(), [LaterShard(0), SameModel(1), Line(0), Line(1), Line(2), LaterShard(0)]);
    let apart = NamedModels::new(&args, &OpenOptions { join_shards: false, ..opts });
    assert_eq!(apart.arguments(), (0..6).map(Line).collect::<Vec<_>>());
}
