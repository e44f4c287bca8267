//! The `gguf-digest` binary: the command of [`cli`], run with this
//! process's arguments.

mod cli;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cli::main(std::env::args_os()))
}
