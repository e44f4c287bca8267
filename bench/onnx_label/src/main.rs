//! `onnx-label [-jN] FILE...`: the command's labelling path alone (see
//! Cargo.toml), for bench/onnx_speed.sh.

use std::path::PathBuf;
use std::process::ExitCode;

use gguf_digest_core::schedule::{BatchOptions, hashing_pool};
use gguf_digest_formats::input::digest_paths;

fn main() -> ExitCode {
    let mut threads = 0;
    let mut paths = Vec::new();
    for a in std::env::args().skip(1) {
        match a.strip_prefix("-j").map(str::parse) {
            Some(Ok(n)) => threads = n,
            Some(Err(e)) => {
                eprintln!("onnx-label: {a}: {e}");
                return ExitCode::from(2);
            }
            None => paths.push(PathBuf::from(a)),
        }
    }
    let pool = match hashing_pool(threads) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("onnx-label: {e}");
            return ExitCode::from(2);
        }
    };
    let mut code = ExitCode::SUCCESS;
    digest_paths(&paths, &BatchOptions::default(), &pool, |i, r| match r {
        Ok((_, d)) => println!("{}  {}", d.label(), paths.get(i).map_or(String::new(), |p| p.display().to_string())),
        Err(e) => {
            eprintln!("onnx-label: {e}");
            code = ExitCode::from(2);
        }
    });
    code
}
