//! The progress bar read back from stderr, as `GGUF_DIGEST_PROGRESS=1`
//! draws it where stderr is no terminal (one plain line a draw): each
//! line's bytes done and total, spelt as indicatif's `binary_bytes`; and
//! a model whose file and tensor bytes the bar tells apart.

use super::{Gguf, Tensor, Val};

/// A GGUF of one 16 MiB tensor (four range requests of the remote
/// crate's default 4 MiB part) after half a MiB of metadata, so that the
/// file's size and its tensor bytes differ as the bar shows them
/// (16.50 MiB against 16.00).
pub fn big_model() -> Vec<u8> {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv("padding", Val::str(&"p".repeat(512 << 10)))
        .tensor(Tensor::filled("big", &[4 << 20], 0, 7))
        .build()
}

/// A byte count as the bar shows it (indicatif's `binary_bytes`).
pub fn shown_bytes(n: u64) -> String {
    let mut v = n as f64;
    if v < 1024.0 {
        return format!("{n} B");
    }
    let mut unit = 0;
    while v >= 1024.0 && unit < 4 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {}iB", ["", "K", "M", "G", "T"][unit])
}

/// The bytes a [`shown_bytes`] spelling stands for (to two decimals).
pub fn bytes_of(shown: &str) -> f64 {
    let (number, unit) = shown.split_once(' ').unwrap();
    let scale = ["B", "KiB", "MiB", "GiB", "TiB"].iter().position(|u| *u == unit).unwrap();
    number.parse::<f64>().unwrap() * 1024f64.powi(scale as i32)
}

/// Each line of the bar in `stderr`: the bytes it shows done and its total
/// (`"8.00 MiB"`, `"16.50 MiB"`); lines that are not the bar are skipped.
pub fn bar_lines(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let i = words.iter().position(|w| w.contains("B/") && !w.ends_with("B/s"))?;
            let (unit, total_number) = words[i].split_once('/')?;
            let done = format!("{} {unit}", words.get(i.checked_sub(1)?)?);
            Some((done, format!("{total_number} {}", words.get(i + 1)?)))
        })
        .collect()
}

/// Each line of the byte counter (no length: a stream, URLs not yet
/// open) in `stderr`: the bytes it shows read.
pub fn count_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let i = words.iter().position(|w| *w == "read")?;
            Some(format!("{} {}", words.get(i.checked_sub(2)?)?, words.get(i.checked_sub(1)?)?))
        })
        .collect()
}
