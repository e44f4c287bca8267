//! The `gguf-digest` binary: the library's command ([`gguf_digest::cli`]),
//! run with this process's arguments.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(gguf_digest::cli::main(std::env::args_os()))
}
