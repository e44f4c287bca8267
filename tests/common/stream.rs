//! Streams for tests: a reader that hands its bytes over in pieces of
//! chosen, odd sizes (as a slow producer writing into a pipe would), and the
//! real binary fed through a pipe by such a producer.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The piece sizes the issue names (1 byte, 4095, 1 MiB + 1) and a few
/// more odd ones, cycled through.
pub const ODD_PIECES: [usize; 6] = [1, 4095, (1 << 20) + 1, 7, 65_537, 3];

/// A reader of `data` that returns at most `sizes[k]` bytes on its k-th
/// read (cycling).
pub struct Dribble {
    data: Vec<u8>,
    pos: usize,
    sizes: Vec<usize>,
    k: usize,
}

impl Dribble {
    pub fn new(data: Vec<u8>, sizes: &[usize]) -> Dribble {
        Dribble { data, pos: 0, sizes: sizes.to_vec(), k: 0 }
    }
}

impl Read for Dribble {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.k % self.sizes.len()].max(1);
        self.k += 1;
        let n = size.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A stream source named `-` over `data`, in pieces of `sizes`.
pub fn stream_source(data: &[u8], sizes: &[usize]) -> gguf_digest_core::source::Source {
    gguf_digest_core::source::Source::from_reader(Path::new("-"), Box::new(Dribble::new(data.to_vec(), sizes)))
}

/// Runs the binary with `args`, writing `data` into its standard input in
/// pieces of `sizes` (cycling) from another thread, flushing after each
/// (a producer that dies early is a shorter `data`). A reader that stops
/// early makes the writer see a broken pipe, which is not an error here.
pub fn run_piped(bin: &Path, args: &[&str], data: &[u8], sizes: &[usize]) -> Output {
    run_piped_counting(bin, args, data, sizes).0
}

/// As [`run_piped`], and how many bytes the producer managed to write
/// before the reader closed the pipe.
pub fn run_piped_counting(bin: &Path, args: &[&str], data: &[u8], sizes: &[usize]) -> (Output, usize) {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns the binary");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let data = data.to_vec();
    let sizes = sizes.to_vec();
    let writer = std::thread::spawn(move || {
        let (mut pos, mut k) = (0, 0);
        while pos < data.len() {
            let n = sizes[k % sizes.len()].max(1).min(data.len() - pos);
            k += 1;
            if stdin.write_all(&data[pos..pos + n]).and_then(|_| stdin.flush()).is_err() {
                return pos;
            }
            pos += n;
        }
        pos
    });
    let out = child.wait_with_output().expect("the binary runs");
    let written = writer.join().expect("the writer thread ends");
    (out, written)
}
