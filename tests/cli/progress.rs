//! The progress bar through the real binary, drawn as plain lines where
//! stderr is no terminal when `GGUF_DIGEST_PROGRESS=1` asks for it: a
//! file's bar is its size and full once labelled, a failed run's ends
//! where it stood, a stream counts the bytes read; no bar off a terminal
//! unless asked, nor with `=0` or `--json`. (URL inputs:
//! `tests/remote/progress.rs`.)

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use crate::common::progress::{bar_lines, big_model, bytes_of, count_lines, shown_bytes};
use crate::common::{Dir, gguf_digest_bin, text};

/// Runs the binary with `args`, `GGUF_DIGEST_PROGRESS` set to `var` (or
/// unset), `stdin` piped in when given.
fn run(var: Option<&str>, args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut c = Command::new(gguf_digest_bin());
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    c.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    match var {
        Some(v) => c.env("GGUF_DIGEST_PROGRESS", v),
        None => c.env_remove("GGUF_DIGEST_PROGRESS"),
    };
    let mut child = c.spawn().unwrap();
    let feeder = stdin.map(|data| {
        let mut pipe = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        })
    });
    let out = child.wait_with_output().unwrap();
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    out
}

#[test]
fn a_file_s_bar_is_its_size_and_full_once_labelled() {
    let d = Dir::new();
    let path = d.write("m.gguf", &big_model());
    let total = shown_bytes(std::fs::metadata(&path).unwrap().len());
    assert_eq!(total, "16.50 MiB");
    let out = run(Some("1"), &[path.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let bars = bar_lines(&err);
    assert!(bars.iter().all(|(_, t)| *t == total), "{err}");
    assert_eq!(bars.last(), Some(&(total.clone(), total.clone())), "{err}");
}

/// A run with a model that failed leaves the bar where the count stood:
/// the good model's tensor bytes, not its file's whole size.
#[test]
fn a_failed_run_s_bar_ends_where_it_stood() {
    let d = Dir::new();
    let path = d.write("m.gguf", &big_model());
    let missing = d.path("missing.gguf");
    let out = run(Some("1"), &[path.to_str().unwrap(), missing.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("missing.gguf"), "{err}");
    assert_eq!(bar_lines(&err).last(), Some(&("16.00 MiB".to_string(), "16.50 MiB".to_string())), "{err}");
}

/// A stream has no length: the bar counts the bytes read, all of them by
/// the end.
#[test]
fn a_stream_s_bar_counts_every_byte_read() {
    let bytes = big_model();
    let size = bytes.len() as u64;
    let out = run(Some("1"), &["-"], Some(bytes));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(bar_lines(&err).is_empty(), "{err}");
    let counts = count_lines(&err);
    assert_eq!(counts.last().map(|c| bytes_of(c)), Some(bytes_of(&shown_bytes(size))), "{err}");
}

#[test]
fn no_bar_off_a_terminal_unless_asked_nor_where_output_must_stay_clean() {
    let d = Dir::new();
    let path = d.write("m.gguf", &big_model());
    let p = path.to_str().unwrap();
    for (var, args) in [(None, vec![p]), (Some("0"), vec![p]), (Some("1"), vec!["--json", p]), (Some("yes"), vec![p])] {
        let out = run(var, &args, None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "{var:?} {args:?}");
    }
}

#[test]
fn shown_bytes_is_the_bar_s_spelling() {
    assert_eq!(shown_bytes(0), "0 B");
    assert_eq!(shown_bytes(1023), "1023 B");
    assert_eq!(shown_bytes(1024), "1.00 KiB");
    assert_eq!(shown_bytes(2 << 20), "2.00 MiB");
    assert_eq!(shown_bytes((16 << 20) + (512 << 10)), "16.50 MiB");
    assert_eq!(bytes_of("0 B"), 0.0);
    assert_eq!(bytes_of("8.00 MiB"), (8 << 20) as f64);
    assert_eq!(bytes_of("16.00 MiB"), (16 << 20) as f64);
    assert_eq!(count_lines("⠁ 0 B read 0 B/s 0s\n⠉ 4.00 MiB read 1 MiB/s 1s"), vec!["0 B", "4.00 MiB"]);
    let line = "███░░ 8.00 MiB/16.50 MiB 3.10 MiB/s eta 2s";
    assert_eq!(bar_lines(line), vec![("8.00 MiB".to_string(), "16.50 MiB".to_string())]);
    assert_eq!(bar_lines("⠁ 0 B read 0 B/s 0s\ngguf-digest: x"), Vec::<(String, String)>::new());
    assert_eq!(bar_lines("░░ 0 B/1.00 KiB 0 B/s eta 0s"), vec![("0 B".to_string(), "1.00 KiB".to_string())]);
}
