//! Every way tensor data is cut into pieces, against a one-shot oracle.
//!
//! The wrong label of issue #11 came from a big-endian block straddling an
//! 8 MiB map window: the conversion saw part of a block and left it as
//! stored. Here the window, the `pread` chunk and the read/map threshold are
//! shrunk to a few bytes or a few blocks, so that small tensors cross every
//! boundary; each tensor's digest must equal the oracle's (read all, convert
//! all, hash once: `common::oracle_tensor_sha256`) and its little-endian
//! twin's, and each label the one derived from the logical model alone.
//!
//! Reading front to back (a file not in the page cache, a stream on
//! standard input) is a third way of cutting: the same checks run on it,
//! from the file with 1 and 3 hashing threads, and from a stream whose
//! producer hands its bytes over in odd pieces (1 byte, 4095, 1 MiB + 1, ...).
use crate::common;

use std::path::Path;

use common::*;
use gguf_digest::gguf::Model;
use gguf_digest::{OpenOptions, PieceSizes, ReadMode};
use proptest::prelude::*;

/// The types whose big-endian conversion changes bytes (spec §6).
const SWAPPED_TYPES: [u32; 11] = [0, 1, 2, 8, 12, 14, 25, 26, 27, 28, 30];

fn open(path: &Path, read_mode: ReadMode, pieces: PieceSizes) -> Model {
    let opts = OpenOptions { read_mode, pieces, ..OpenOptions::default() };
    Model::open_with(path, opts).unwrap_or_else(|e| panic!("opens: {e}"))
}

/// Labels `g` (written to `d`) with these pieces and read mode, and checks
/// the label and every tensor's digest against the oracle and `g`'s
/// little-endian twin.
fn check(d: &Dir, g: &Gguf, read_mode: ReadMode, pieces: PieceSizes, what: &str) {
    let (bytes, layout) = g.build_with_layout();
    let path = d.write("m.gguf", &bytes);
    let model = open(&path, read_mode, pieces);
    let digest = model.digest().unwrap_or_else(|e| panic!("{what}: {e}"));
    for (t, got) in model.tensors().iter().zip(digest.tensor_sha256()) {
        let i = g.tensors.iter().position(|w| w.name == t.info.name).expect("tensor of the model");
        let oracle = oracle_tensor_sha256(g, &bytes, &layout, i);
        let twin = sha(&g.tensors[i].data);
        let name = String::from_utf8_lossy(&t.info.name);
        assert_eq!(hex(got), hex(&oracle), "{what}: tensor {name} against the one-shot oracle");
        assert_eq!(hex(&oracle), hex(&twin), "{what}: tensor {name}: oracle against the little-endian twin");
    }
    assert_eq!(digest.label(), g.expected_label(), "{what}: label");

    // Front to back from the file, as a cold file is read, and around the
    // page cache (O_DIRECT, in whole 4 KiB blocks), as a huge one is.
    for threads in [1, 3] {
        for direct in [gguf_digest_core::pipeline::DirectReads::Auto, gguf_digest_core::pipeline::DirectReads::Always] {
            let front =
                gguf_digest_core::pipeline::hash_front_to_back_with(&model, &pieces, threads, direct, &|_| Ok(()))
                    .unwrap_or_else(|e| panic!("{what}, front to back, {direct:?}: {e}"));
            assert_eq!(front, digest.tensor_sha256(), "{what}: front to back with {threads} threads, {direct:?}");
        }
    }
    // From a stream in odd pieces, as standard input is read.
    let opts = OpenOptions { read_mode, pieces, ..OpenOptions::default() };
    for sizes in [&stream::ODD_PIECES[..], &[1][..]] {
        let streamed = Model::from_source(stream::stream_source(&bytes, sizes), opts)
            .and_then(|m| m.digest())
            .unwrap_or_else(|e| panic!("{what}, stream in pieces {sizes:?}: {e}"));
        assert_eq!(streamed.tensor_sha256(), digest.tensor_sha256(), "{what}: stream in pieces {sizes:?}");
        assert_eq!(streamed.label(), digest.label(), "{what}: stream label");
    }
}

/// Block counts around the boundaries of a piece of `size` bytes, for
/// blocks of `block` bytes: the piece holds either floor or ceil blocks.
fn counts_around(size: u64, block: u64) -> Vec<u64> {
    let mut n = vec![0, 1, 2];
    for k in [size / block, size.div_ceil(block), 2 * size / block, (2 * size).div_ceil(block)] {
        n.extend([k.saturating_sub(1), k, k + 1]);
    }
    n.sort_unstable();
    n.dedup();
    n
}

/// One model per type and piece setting: one tensor per block count
/// around the chunk and the window, written in both byte orders, read in
/// both modes. Piece sizes that are and are not multiples of the block.
#[test]
fn every_swapped_type_at_every_piece_boundary() {
    let d = Dir::new();
    for t in SWAPPED_TYPES {
        let (elements_per_block, block) = type_size(t).unwrap();
        let settings = [
            (3 * block, 7 * block),
            (3 * block + 1, 5 * block + 7),
            (2 * block - 1, 2 * block + 1),
            (100, 250),
            (1, 1),
        ];
        for (chunk, window) in settings {
            let mut g = Gguf::new().kv("general.alignment", Val::U32(8));
            let mut counts = counts_around(chunk, block);
            counts.extend(counts_around(window, block));
            // The pieces read front to back: READ_CHUNKS whole-block chunks.
            let read_piece = (chunk / block).max(1) * block * gguf_digest_core::hash::READ_CHUNKS as u64;
            counts.extend(counts_around(read_piece, block));
            counts.sort_unstable();
            counts.dedup();
            for (k, &n) in counts.iter().enumerate() {
                let name = format!("t.{n}");
                g = g.tensor(Tensor::filled(&name, &[n * elements_per_block], t, k as u8));
            }
            for big_endian in [false, true] {
                let g = Gguf { big_endian, ..g.clone() };
                for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
                    // min_mapped 1: every non-empty tensor takes the mapped path.
                    let pieces = PieceSizes { window, chunk, min_mapped: 1 };
                    let what = format!("type {t}, chunk {chunk}, window {window}, BE {big_endian}, {read_mode:?}");
                    check(&d, &g, read_mode, pieces, &what);
                }
            }
        }
    }
}

/// The regression itself at the default sizes: quantized big-endian
/// tensors over 8 MiB, whose blocks (34, 144, 210 bytes) do not divide the
/// window, in both read modes (this failed in the mapped mode).
#[test]
fn default_window_big_endian_quantized_over_8_mib() {
    let d = Dir::new();
    let g = Gguf::new()
        .tensor(Tensor::filled("q8_0", &[32 * ((9 << 20) / 34)], 8, 1))
        .tensor(Tensor::filled("q4_k", &[256 * ((9 << 20) / 144)], 12, 2))
        .tensor(Tensor::filled("q6_k", &[256 * ((17 << 20) / 210)], 14, 3))
        .tensor(Tensor::filled("q4_0", &[32 * ((8 << 20) / 18 + 1)], 2, 4));
    assert!(g.tensors.iter().all(|t| t.data.len() as u64 > gguf_digest_core::hash::WINDOW));
    for big_endian in [false, true] {
        for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
            let g = Gguf { big_endian, ..g.clone() };
            check(&d, &g, read_mode, PieceSizes::default(), &format!("BE {big_endian}, {read_mode:?}"));
        }
    }
}

/// Sizes that decide nothing else: tiny or huge pieces, a threshold that
/// reads every tensor or maps every one, all give the same label.
#[test]
fn extreme_piece_sizes_give_the_same_label() {
    let d = Dir::new();
    let g = Gguf { big_endian: true, ..rich_model(&BE_TYPES) };
    for pieces in [
        PieceSizes { window: 0, chunk: 0, min_mapped: 0 },
        PieceSizes { window: u64::MAX, chunk: u64::MAX, min_mapped: u64::MAX },
        PieceSizes { window: u64::MAX, chunk: 1, min_mapped: 0 },
        PieceSizes { window: 1, chunk: u64::MAX, min_mapped: 0 },
    ] {
        for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
            check(&d, &g, read_mode, pieces, &format!("{pieces:?}, {read_mode:?}"));
        }
    }
}

proptest! {
    // Failures are reported in the test output, not written into the source tree.
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random types, tensor sizes, piece sizes and read modes.
    #[test]
    fn random_pieces_match_the_oracle(
        t in proptest::sample::select(BE_TYPES.to_vec()),
        blocks in prop::collection::vec(0u64..300, 1..4),
        chunk in 0u64..3000,
        window in 0u64..9000,
        min_mapped in 0u64..4000,
        big_endian in any::<bool>(),
        pread in any::<bool>(),
    ) {
        let d = Dir::new();
        let (elements_per_block, _) = type_size(t).unwrap();
        let mut g = Gguf { big_endian, ..Gguf::new() };
        for (k, n) in blocks.iter().enumerate() {
            g = g.tensor(Tensor::filled(&format!("t{k}"), &[n * elements_per_block], t, k as u8));
        }
        let read_mode = if pread { ReadMode::Pread } else { ReadMode::Mmap };
        let pieces = PieceSizes { window, chunk, min_mapped };
        check(&d, &g, read_mode, pieces, &format!("type {t}, {blocks:?}, {pieces:?}, {read_mode:?}, BE {big_endian}"));
    }
}

/// Progress is counted per piece: for every piece setting and read mode,
/// the pieces reported for a tensor add up to exactly its bytes.
#[test]
fn progress_adds_up_to_every_tensor_s_bytes() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let d = Dir::new();
    let g = Gguf { big_endian: true, ..rich_model(&BE_TYPES) }
        .tensor(Tensor::filled("big.q6_k", &[256 * 40], 14, 9))
        .tensor(Tensor::filled("big.f32", &[3001], 0, 8));
    let path = d.write("m.gguf", &g.build());
    for (chunk, window) in [(1, 1), (100, 250), (1000, 999), (CHUNK_DEFAULT, WINDOW_DEFAULT)] {
        for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
            let model = open(&path, read_mode, PieceSizes { window, chunk, min_mapped: 1 });
            for t in model.tensors() {
                let (total, calls) = (AtomicU64::new(0), AtomicU64::new(0));
                model
                    .hash_tensor(t, &|n| {
                        total.fetch_add(n, Ordering::Relaxed);
                        calls.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    })
                    .unwrap();
                let what = format!(
                    "{} with chunk {chunk}, window {window}, {read_mode:?}",
                    String::from_utf8_lossy(&t.info.name)
                );
                assert_eq!(total.into_inner(), t.info.nbytes, "{what}");
                // No empty pieces, and no more pieces than bytes.
                assert!(calls.into_inner() <= t.info.nbytes, "{what}");
            }
        }
    }
}

const CHUNK_DEFAULT: u64 = gguf_digest_core::hash::CHUNK;
const WINDOW_DEFAULT: u64 = gguf_digest_core::hash::WINDOW;

/// Shards are another cut: a big-endian model split three ways, hashed in
/// tiny pieces from both read modes, is the unsplit model.
#[test]
fn big_endian_shard_sets_in_tiny_pieces() {
    let g = Gguf { big_endian: true, ..rich_model(&BE_TYPES) };
    let n = g.tensors.len();
    for sizes in [vec![1, n - 2, 1], vec![0, n, 0], vec![n / 2, 0, n - n / 2]] {
        let d = Dir::new();
        let paths = write_set(&d, "m", &g.split(&sizes));
        for read_mode in [ReadMode::Mmap, ReadMode::Pread] {
            for pieces in [PieceSizes { window: 37, chunk: 5, min_mapped: 1 }, PieceSizes::default()] {
                let label = open(&paths[0], read_mode, pieces).label().unwrap();
                assert_eq!(label, g.expected_label(), "split {sizes:?}, {read_mode:?}, {pieces:?}");
            }
        }
    }
}
