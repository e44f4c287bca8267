//! `-`: labels from standard input, through the real binary and a pipe.
//!
//! Every label test case of tests/formats/gguf_label.rs and tests/formats/st_label.rs already
//! runs through a library stream in odd pieces; here the binary reads a
//! real pipe whose producer writes in pieces of 1 byte, 4095 bytes and
//! 1 MiB + 1, and the label, sums line, JSON, skeleton, `inspect`, `diff`
//! and every refusal of a stream are checked with their exit codes.
use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::stream::{ODD_PIECES, run_piped, run_piped_counting};
use common::*;

fn bin() -> &'static Path {
    Path::new(gguf_digest_bin())
}

fn run(args: &[&str]) -> Output {
    Command::new(gguf_digest_bin()).args(args).output().expect("runs the binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The label the binary prints for a file.
fn file_label(path: &Path) -> String {
    let o = run(&[path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o).split_whitespace().next().unwrap().to_string()
}

/// The binary fed `bytes` on standard input in pieces of `sizes`.
fn piped(args: &[&str], bytes: &[u8], sizes: &[usize]) -> Output {
    run_piped(bin(), args, bytes, sizes)
}

/// GGUF models in several layouts: both byte orders, v2, gaps, trailing
/// bytes, tensors stored out of order, no tensors at all.
fn gguf_layouts() -> Vec<(String, Gguf)> {
    let base = rich_model(&[0, 1, 8, 14, 24, 30]).tensor(Tensor::filled("big", &[3 << 18], 0, 7));
    let n = base.tensors.len();
    vec![
        ("le".into(), base.clone()),
        ("be".into(), Gguf { big_endian: true, ..rich_model(&[0, 1, 8, 14]) }),
        ("v2".into(), Gguf { version: 2, ..base.clone() }),
        ("gaps".into(), Gguf { gaps: vec![1, 4096, 33], align_data: false, pad_byte: 0xAB, ..base.clone() }),
        ("trailing".into(), Gguf { trailing: vec![9; 5000], ..base.clone() }),
        ("reversed".into(), Gguf { data_order: Some((0..n).rev().collect()), ..base.clone() }),
        ("empty".into(), Gguf::new().kv("general.name", Val::Str(b"x".to_vec()))),
    ]
}

#[test]
fn a_pipe_in_odd_pieces_gives_the_file_s_label_for_every_layout() {
    let d = Dir::new();
    for (what, g) in gguf_layouts() {
        let bytes = g.build();
        let path = d.write(&format!("{what}.gguf"), &bytes);
        let expected = file_label(&path);
        assert_eq!(expected, g.expected_label(), "{what}: the file's label is the contract's");
        for sizes in [&ODD_PIECES[..], &[1][..], &[4095][..], &[(1 << 20) + 1][..]] {
            if sizes == [1] && bytes.len() > 2 << 20 {
                continue; // a byte at a time through a pipe: small files only
            }
            let o = piped(&["-"], &bytes, sizes);
            assert_eq!(o.status.code(), Some(0), "{what}, pieces {sizes:?}: {}", stderr(&o));
            assert_eq!(stdout(&o), format!("{expected}  -\n"), "{what}, pieces {sizes:?}");
        }
    }
}

/// A zero-length tensor may sit anywhere, even inside another tensor's
/// data (GGUF's reader checks only tensors that have bytes; safetensors
/// tiles `[X, X)` beside `[X, Y)`). Read front to back, past the first
/// MiB, it once sent the stream back ("a stream cannot go back").
#[test]
fn a_zero_length_tensor_behind_the_stream_s_position_is_labelled() {
    let d = Dir::new();
    let g = Gguf::new()
        .tensor(Tensor::filled("a", &[600_000], 0, 1))
        .tensor(Tensor::filled("z", &[0], 0, 2))
        .tensor(Tensor::filled("b", &[8], 0, 3));
    let (mut bytes, layout) = g.build_with_layout();
    // z's offset, the last 8 bytes of its 33-byte info: 64 bytes before
    // the end of a's data, so that b (right after a) is read with it.
    let at = usize::try_from(layout.info_offsets[1]).unwrap() + 25;
    bytes[at..at + 8].copy_from_slice(&(600_000u64 * 4 - 64).to_le_bytes());
    let path = d.write("z.gguf", &bytes);
    assert_eq!(file_label(&path), g.expected_label());
    let st = st::St {
        data_order: Some(vec![0, 2, 1, 3]),
        ..st::St::new()
            .tensor(st::StTensor::filled("a", "F32", &[600_000], 1))
            .tensor(st::StTensor::filled("b", "F32", &[16], 2))
            .tensor(st::StTensor::filled("c", "F32", &[0], 3))
            .tensor(st::StTensor::filled("d", "F32", &[16], 4))
    };
    let st_bytes = st.build();
    assert_eq!(file_label(&d.write("z.safetensors", &st_bytes)), st.expected_label());
    for (bytes, want) in [(&bytes, g.expected_label()), (&st_bytes, st.expected_label())] {
        let o = piped(&["-"], bytes, &ODD_PIECES);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), format!("{want}  -\n"));
    }
}

#[test]
fn safetensors_through_a_pipe() {
    let d = Dir::new();
    let st = st::St::new()
        .meta("format", "pt")
        .tensor(st::StTensor::filled("a", "F32", &[3, 5], 1))
        .tensor(st::StTensor::filled("b", "BF16", &[300_000], 2))
        .tensor(st::StTensor::filled("c", "U8", &[0], 3));
    let bytes = st.build();
    let path = d.write("m.safetensors", &bytes);
    let expected = file_label(&path);
    assert_eq!(expected, st.expected_label());
    for sizes in [&ODD_PIECES[..], &[4095][..]] {
        let o = piped(&["-"], &bytes, sizes);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), format!("{expected}  -\n"));
    }
    // Bytes after the last tensor are forbidden in a safetensors file, so
    // in a stream: the file's own words, at the stream's true length.
    let mut garbage = bytes.clone();
    garbage.extend_from_slice(b"xyz");
    let o = piped(&["-"], &garbage, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("-: ") && stderr(&o).contains("3 bytes after the last tensor"), "{}", stderr(&o));
    let file = run(&[d.write("g.safetensors", &garbage).to_str().unwrap()]);
    assert_eq!(file.status.code(), Some(2));
}

#[test]
fn a_stream_that_stops_mid_tensor_is_an_error_naming_the_tensor() {
    let g = Gguf::new().tensor(Tensor::filled("first", &[1000], 0, 1)).tensor(Tensor::filled("second", &[1000], 0, 2));
    let bytes = g.build();
    // Cut inside the second tensor's data (the last 4000 bytes, aligned).
    let cut = bytes.len() - 1000;
    let o = run_piped(bin(), &["-"], &bytes[..cut], &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("-: ") && e.contains("'second'") && e.contains("outside the file"), "{e}");
    assert!(stdout(&o).is_empty(), "no label for a cut stream: {}", stdout(&o));
    // Cut inside the metadata: the parser's own truncation error.
    let o = run_piped(bin(), &["-"], &bytes[..30], &[1]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("gguf-digest: -: "), "{}", stderr(&o));
    // Metadata declared past the in-memory bound (a 200 MB key): refused
    // before it is read, with the --no-mmap bound's message.
    let mut huge = b"GGUF".to_vec();
    huge.extend(3u32.to_le_bytes());
    huge.extend(0u64.to_le_bytes());
    huge.extend(1u64.to_le_bytes());
    huge.extend(200_000_000u64.to_le_bytes());
    huge.extend(vec![b'k'; 3 << 20]); // more than the first read: the end is not yet known
    let o = run_piped(bin(), &["-"], &huge, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    // Word for word: the flag is the command line's hint (output.rs), not
    // the library's message.
    let want = "gguf-digest: -: byte 1048576: metadata reaches byte 200000032, past the 134217728-byte limit for \
                reading it into memory (--no-mmap, or a stream); a file in the default mode is read in place\n";
    assert_eq!(stderr(&o), want);
    // Nothing at all.
    let o = run_piped(bin(), &["-"], &[], &[1]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-: ") && stderr(&o).contains("empty"), "{}", stderr(&o));
}

/// A refused stream is still read to its end, so that a producer such as
/// `tee model.gguf` upstream is never cut off by a broken pipe.
#[test]
fn a_refused_stream_is_read_to_its_end() {
    let mut bad = b"GGUX".to_vec();
    bad.extend(vec![7u8; 8 << 20]);
    let (o, written) = run_piped_counting(bin(), &["-"], &bad, &[(1 << 20) + 1]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-: "), "{}", stderr(&o));
    assert_eq!(written, bad.len(), "the producer was cut off");
    // A shard, refused after its metadata was read: the same.
    let g = rich_model(&[0, 1]);
    let n = g.tensors.len();
    let d = Dir::new();
    let paths = write_set(&d, "m", &g.split(&[1, n - 1]));
    let mut first = std::fs::read(&paths[0]).unwrap();
    first.extend(vec![0u8; 4 << 20]);
    let (o, written) = run_piped_counting(bin(), &["-"], &first, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(written, first.len(), "the producer was cut off");
}

#[test]
fn a_shard_on_standard_input_says_how_to_label_it() {
    let g = rich_model(&[0, 1, 8]);
    let n = g.tensors.len();
    let shards = g.split(&[1, n - 1]);
    let d = Dir::new();
    let paths = write_set(&d, "m", &shards);
    let first = std::fs::read(&paths[0]).unwrap();
    let o = piped(&["-"], &first, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    // Word for word: the flag is the command line's hint (output.rs), not
    // the library's message.
    let want = "gguf-digest: -: byte 1017, key 'split.count': this is shard 1 of 2 of a split model; label the set \
                by its first file's path (…-00001-of-00002.gguf), or this shard alone with --no-join\n";
    assert_eq!(e, want);
    // --no-join labels the shard alone, as it labels the file.
    let o = piped(&["--no-join", "-"], &first, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let alone = run(&["--no-join", paths[0].to_str().unwrap()]);
    assert_eq!(stdout(&o).split_whitespace().next(), stdout(&alone).split_whitespace().next());
}

#[test]
fn json_skeleton_and_inspect_work_on_a_stream() {
    let d = Dir::new();
    let g = Gguf { trailing: vec![1; 100], ..rich_model(&[0, 8]) };
    let bytes = g.build();
    let path = d.write("m.gguf", &bytes);
    let p = path.to_str().unwrap();

    let o = piped(&["--json", "-"], &bytes, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let streamed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let file: serde_json::Value = serde_json::from_slice(&run(&["--json", p]).stdout).unwrap();
    let entry = &streamed["files"][0];
    assert_eq!(entry["path"], "-");
    assert_eq!(entry["label"], file["files"][0]["label"]);
    assert_eq!(entry["tensors"], file["files"][0]["tensors"]);
    assert_eq!(entry["shards"][0]["size"], bytes.len() as u64, "{entry}");

    let o = piped(&["--skeleton", "-"], &bytes, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, run(&["--skeleton", p]).stdout);

    let o = piped(&["inspect", "-"], &bytes, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let from_file = stdout(&run(&["inspect", p]));
    assert!(text.contains(&format!("size        {} bytes", bytes.len())), "{text}");
    assert!(text.contains("trailing_bytes: "), "{text}");
    // The same inspection but for the file's name.
    assert_eq!(text.replace("file        -\n", ""), from_file.replace(&format!("file        {p}\n"), ""));
}

#[test]
fn diff_against_a_stream_and_the_refusals() {
    let d = Dir::new();
    let g = rich_model(&[0, 8]);
    let bytes = g.build();
    let path = d.write("m.gguf", &bytes);
    let p = path.to_str().unwrap();
    let o = piped(&["diff", "-", p], &bytes, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("labels equal"), "{}", stdout(&o));

    let o = piped(&["diff", "-", "-"], &bytes, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("standard input can be read only once"), "{}", stderr(&o));

    // Two `-` in one run: the first reads it, the second is refused.
    let o = piped(&["-", "-"], &bytes, &ODD_PIECES);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).starts_with(&g.expected_label()), "{}", stdout(&o));
    assert!(stderr(&o).contains("-: standard input can be read only once"), "{}", stderr(&o));

    // `./-` is a file named `-`, as for sha256sum.
    let dash = d.write("-", &bytes);
    let o = Command::new(gguf_digest_bin()).arg("./-").current_dir(dash.parent().unwrap()).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{}  ./-\n", g.expected_label()));
}

#[test]
fn a_stream_mixed_with_files_keeps_argument_order() {
    let d = Dir::new();
    let a = Gguf::new().tensor(Tensor::filled("a", &[5000], 0, 1));
    let b = Gguf::new().tensor(Tensor::filled("b", &[7000], 0, 2));
    let pa = d.write("a.gguf", &a.build());
    let o = piped(&[pa.to_str().unwrap(), "-", pa.to_str().unwrap()], &b.build(), &ODD_PIECES);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let expected =
        format!("{la}  {p}\n{lb}  -\n{la}  {p}\n", la = a.expected_label(), lb = b.expected_label(), p = pa.display());
    assert_eq!(stdout(&o), expected);
}

/// The real 98 MB model through a pipe (CI installs it; elsewhere skipped
/// with a message).
#[test]
fn smollm2_through_a_pipe() {
    let Some(py) = py::prerequisites("smollm2 through a pipe") else { return };
    let model = py.path("model");
    let bytes = std::fs::read(model).unwrap();
    let o = piped(&["-"], &bytes, &[(1 << 20) + 1, 4095]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{}  -\n", file_label(model)));
}

/// A pipe on standard input is enlarged to 1 MiB (or the system's largest
/// pipe, if smaller), so that each read hands over up to 1 MiB.
// F_SETPIPE_SZ is Linux's: the portable path leaves the pipe as it is.
#[cfg(not(feature = "portable"))]
#[test]
fn a_pipe_on_standard_input_is_enlarged() {
    // Close-on-exec: a write end the child inherited would keep it waiting.
    let (reader, writer) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
    let before = rustix::pipe::fcntl_getpipe_size(&reader).unwrap();
    let kept = reader.try_clone().unwrap();
    let child = Command::new(bin())
        .arg("-")
        .stdin(std::process::Stdio::from(reader))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(writer);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "an empty stream is refused: {}", stderr(&o));
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap().trim().parse().unwrap();
    let after = rustix::pipe::fcntl_getpipe_size(&kept).unwrap();
    assert_eq!(after, (1usize << 20).min(max).max(before), "from {before}");
}
