//! The command's own documentation, generated from its clap definition so
//! that it cannot drift from the flags: `gguf-digest completions SHELL`
//! (bash, zsh, fish, PowerShell, elvish) and `gguf-digest man` (a roff
//! page for `man -l`, or to install as `gguf-digest.1`).

use std::io::{self, Write};

use clap::CommandFactory;
use clap_complete::Shell;

use super::{Args, EXIT_OK};

/// `completions SHELL`.
#[derive(clap::Args, Debug)]
pub(super) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

/// `man`.
#[derive(clap::Args, Debug)]
pub(super) struct ManArgs {}

/// Writes the completion script for `args.shell` to standard output.
pub(super) fn run_completions(args: &CompletionsArgs) -> io::Result<u8> {
    // Into memory first: clap_complete panics when its writer fails (a
    // closed pipe), and the script is a few kilobytes.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Args::command(), "gguf-digest", &mut script);
    if args.shell == Shell::Bash {
        script = mend_bash_states(&script);
    }
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// Writes the man page (roff) to standard output: synopsis, description,
/// options, subcommands, examples and exit status, as `--help` says them.
pub(super) fn run_man(_: &ManArgs) -> io::Result<u8> {
    let mut out = io::stdout().lock();
    clap_mangen::Man::new(Args::command()).render(&mut out)?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// clap_complete's bash script spells a subcommand's state two ways when the
/// command's name holds a hyphen: the loop that reads the words sets
/// `gguf__digest__subcmd__inspect`, the `case` arms test
/// `gguf__subcmd__digest__subcmd__inspect`, so nothing after a subcommand
/// ever completed (clap-rs/clap#6421, open as of clap_complete 4.6.11). The
/// arms are respelled as the loop spells them; the test of `completions`
/// (tests/cli/docs.rs) fails if either spelling changes.
fn mend_bash_states(script: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(script).replace("gguf__subcmd__digest__subcmd__", "gguf__digest__subcmd__").into_bytes()
}
