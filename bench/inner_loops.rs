//! Inner loops of tensor hashing, timed apart, to tell where the time of
//! `gguf-digest` goes between "SHA-256 itself" and "getting the bytes":
//!
//! * `sha2, L2-resident buffer`: the crate's SHA-256 on one 256 KiB buffer
//!   hashed over and over: the compression rate alone (compare with
//!   `openssl speed -evp sha256`: is sha2's SHA-NI path as fast as OpenSSL's?);
//! * `pread only`: every tensor read with `pread` in `CHUNK`s, not hashed:
//!   the kernel's copy out of the page cache;
//! * `pread + sha2`: the same reads hashed (the loop of a pread design);
//! * `mmap + sha2`: each tensor hashed straight from one read-only map of
//!   the file, in `CHUNK` slices: no copy, page faults instead;
//! * `mmap windows + sha2`: the same through short-lived maps of `WINDOW`
//!   bytes, unmapped once hashed, so resident memory stays at threads ×
//!   `WINDOW` however large the model;
//! * `Model::hash_tensor`: whatever the library does now, per tensor.
//!
//! The last four also run on two threads (tensors largest first, one shared
//! queue, as gguf-digest's pool does) to show how the loop scales to both
//! cores. Not a libtest bench (that needs nightly): a plain `main`, declared
//! with `harness = false`, that prints a Markdown table:
//!
//!   cargo bench --bench inner_loops -- MODEL.gguf [ROUNDS]
//!
//! bench/compare.sh runs it on its 2 GiB model when Cargo.toml declares it.

// A benchmark's own counting and slicing of buffers it made: no input's
// number reaches them, so the crate's byte-handling lints do not apply.
#![allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)]

use std::fs::File;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gguf_digest::gguf::Model;
use gguf_digest_core::hash::CHUNK;
use memmap2::{Advice, Mmap, MmapOptions};
use sha2::{Digest as _, Sha256};

type Job = (u64, u64); // (absolute file offset, byte count) of one tensor

/// Bytes mapped at a time by the windowed loop: big enough that mapping and
/// unmapping cost well under 1% of hashing, small enough that even 16
/// threads stay far below the 64 MiB RSS budget.
const WINDOW: u64 = 4 << 20;

fn main() {
    // `cargo bench` appends `--bench`; only the positional arguments matter.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let Some(path) = args.first() else {
        // `cargo test --all-targets` runs benches too, without arguments:
        // there is nothing to time then, which is not a failure.
        eprintln!("usage: cargo bench --bench inner_loops -- MODEL.gguf [ROUNDS] (no model given: nothing timed)");
        return;
    };
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let model = Model::open(path).unwrap_or_else(|e| fail(&e.to_string()));
    let shard = model.shards().first().unwrap_or_else(|| fail("model has no shard"));
    // Largest first, as gguf-digest orders its jobs.
    let mut jobs: Vec<Job> = shard.file.tensors.iter().map(|t| (shard.file.data_position(t), t.nbytes)).collect();
    jobs.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    let total: u64 = jobs.iter().map(|&(_, n)| n).sum();
    let file = File::open(path).unwrap_or_else(|e| fail(&e.to_string()));
    let chunk = usize::try_from(CHUNK).unwrap_or(1 << 18);

    println!(
        "inner loops on {path}: {} tensors, {:.3} GB, {rounds} rounds (median), CHUNK = {} KiB\n",
        jobs.len(),
        total as f64 / 1e9,
        CHUNK / 1024
    );
    println!("| loop | threads | GB/s |");
    println!("|---|---:|---:|");

    // Hash 1 GB worth of one cache-resident buffer.
    let buf = vec![0x5au8; chunk];
    let reps = (1_000_000_000 / chunk).max(1);
    let t = median(rounds, || {
        let mut h = Sha256::new();
        for _ in 0..reps {
            h.update(black_box(&buf));
        }
        black_box(h.finalize());
    });
    row("sha2, L2-resident buffer", 1, (reps * chunk) as u64, t);

    // Reads a tensor in CHUNKs with pread, handing each to `sink`.
    let pread_each = |job: Job, sink: &mut dyn FnMut(&[u8])| {
        let mut b = vec![0u8; chunk];
        let (mut off, end) = (job.0, job.0 + job.1);
        while off < end {
            let n = usize::try_from((end - off).min(CHUNK)).unwrap_or(chunk);
            let part = b.get_mut(..n).unwrap_or_default();
            std::os::unix::fs::FileExt::read_exact_at(&file, part, off).unwrap_or_else(|e| fail(&e.to_string()));
            sink(part);
            off += n as u64;
        }
    };
    let pread_only = |job: Job| {
        pread_each(job, &mut |part| {
            black_box(part);
        })
    };
    let pread_sha = |job: Job| {
        let mut h = Sha256::new();
        pread_each(job, &mut |part| h.update(part));
        black_box(h.finalize());
    };
    let tensors = model.tensors();
    let library_hash = |i: usize| {
        // The model's own tensor order differs from `jobs`: index it directly.
        if let Some(t) = tensors.get(i) {
            black_box(model.hash_tensor(t, &|_| Ok(())).unwrap_or_else(|e| fail(&e.to_string())));
        }
    };
    // A fresh map per round (below): its page faults are part of the cost,
    // as they would be for a gguf-digest process.
    let mmap_hash = |map: &Mmap, job: Job| {
        let start = usize::try_from(job.0).unwrap_or(usize::MAX);
        let len = usize::try_from(job.1).unwrap_or(0);
        let data = map.get(start..start.saturating_add(len)).unwrap_or_else(|| fail("tensor past the map"));
        let mut h = Sha256::new();
        for part in data.chunks(chunk) {
            h.update(part);
        }
        black_box(h.finalize());
    };
    let window_hash = |job: Job| {
        let mut h = Sha256::new();
        let (mut off, end) = (job.0, job.0 + job.1);
        while off < end {
            let len = usize::try_from((end - off).min(WINDOW)).unwrap_or(0);
            // SAFETY: as for `whole_map`; memmap2 aligns the offset itself.
            // MAP_POPULATE fills the window's page tables in one call
            // instead of one fault per 64 KiB.
            let w = unsafe { MmapOptions::new().offset(off).len(len).populate().map(&file) }
                .unwrap_or_else(|e| fail(&e.to_string()));
            for part in w.chunks(chunk) {
                h.update(part);
            }
            off += len as u64;
        }
        black_box(h.finalize());
    };
    // Model tensor indices, largest first, for the library's loop.
    let mut by_size: Vec<usize> = (0..tensors.len()).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(tensors.get(i).map_or(0, |t| t.info.nbytes)));

    row("pread only (kernel copy)", 1, total, median(rounds, || jobs.iter().for_each(|&j| pread_only(j))));
    for threads in [1, 2] {
        let t = median(rounds, || queue(&jobs, threads, |&j| pread_sha(j)));
        row("pread + sha2", threads, total, t);
        let t = median(rounds, || {
            let map = whole_map(&file);
            queue(&jobs, threads, |&j| mmap_hash(&map, j));
        });
        row("mmap + sha2 (no copy)", threads, total, t);
        let t = median(rounds, || queue(&jobs, threads, |&j| window_hash(j)));
        row("mmap 4 MiB windows + sha2", threads, total, t);
        let t = median(rounds, || queue(&by_size, threads, |&i| library_hash(i)));
        row("Model::hash_tensor (gguf-digest now)", threads, total, t);
    }
}

fn whole_map(file: &File) -> Mmap {
    // SAFETY: read-only map of a file nothing in this process writes; the
    // benchmark's own generated models are not changed while it runs.
    let map = unsafe { Mmap::map(file) }.unwrap_or_else(|e| fail(&e.to_string()));
    let _ = map.advise(Advice::Sequential);
    map
}

/// Runs `work` on every item with `threads` threads taking items in order
/// from one shared queue.
fn queue<T: Sync>(items: &[T], threads: usize, work: impl Fn(&T) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    work(item);
                }
            });
        }
    });
}

fn median(rounds: usize, mut f: impl FnMut()) -> Duration {
    f(); // Warm-up: page cache, page tables, CPU frequency.
    let mut times: Vec<Duration> = (0..rounds.max(1))
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed()
        })
        .collect();
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn row(name: &str, threads: usize, bytes: u64, t: Duration) {
    println!("| {name} | {threads} | {:.3} |", bytes as f64 / t.as_secs_f64().max(1e-9) / 1e9);
}

fn fail(msg: &str) -> ! {
    eprintln!("inner_loops: {msg}");
    std::process::exit(1);
}
