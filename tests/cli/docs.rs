//! `completions` and `man`: generated from the clap definition, so they are
//! checked by what reads them. bash sources the script and completes the
//! subcommands and flags; `man -l` renders the page without a warning.
use crate::common;

use std::process::Command;

use common::*;

/// What bash's completion offers for `line` (the words typed so far, the
/// last one being completed), with the script the binary printed sourced.
fn bash_completes(line: &str) -> Vec<String> {
    let d = Dir::new();
    let script = gd_in(&d.path(""), &["completions", "bash"]);
    assert_eq!(script.status.code(), Some(0), "{}", text(&script.stderr));
    d.write("gguf-digest.bash", &script.stdout);
    // As bash's programmable completion calls the function `complete -F`
    // registered for the command.
    let program = format!(
        r#"source gguf-digest.bash
f=$(complete -p gguf-digest | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
"$f" gguf-digest "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
    );
    let o = Command::new("bash").args(["-c", &program]).current_dir(d.path("")).output().expect("bash runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout).lines().map(str::to_string).collect()
}

#[test]
fn bash_completes_subcommands_and_flags() {
    assert_eq!(bash_completes("gguf-digest ins"), ["inspect"]);
    assert_eq!(bash_completes("gguf-digest --no-"), ["--no-join", "--no-mmap"]);
    let subcommands = bash_completes("gguf-digest ");
    for s in ["inspect", "diff", "statement", "verify", "completions", "man"] {
        assert!(subcommands.contains(&s.to_string()), "{s} in {subcommands:?}");
    }
    let shells = bash_completes("gguf-digest completions ");
    for s in ["bash", "zsh", "fish", "powershell"] {
        assert!(shells.contains(&s.to_string()), "{s} in {shells:?}");
    }
    let verify = bash_completes("gguf-digest verify --");
    assert!(verify.contains(&"--key".to_string()) && verify.contains(&"--root".to_string()), "{verify:?}");
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_one_is_a_usage_error() {
    let d = Dir::new();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef gguf-digest"),
        ("fish", "complete -c gguf-digest"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = gd_in(&d.path(""), &["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains(marker), "{shell}: {marker}");
    }
    let o = gd_in(&d.path(""), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("invalid value 'tcsh'"), "{}", text(&o.stderr));
}

#[test]
fn man_renders_without_a_warning() {
    let d = Dir::new();
    let o = gd_in(&d.path(""), &["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "{section}");
    }
    assert!(page.contains("\\-\\-verify\\-blobs"), "every flag is on the page");
    d.write("gguf-digest.1", &o.stdout);
    let rendered = Command::new("man")
        .args(["--warnings", "-l", "gguf-digest.1"])
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .current_dir(d.path(""))
        .output();
    match rendered {
        Ok(r) => {
            assert!(r.status.success(), "{}", text(&r.stderr));
            assert_eq!(text(&r.stderr), "", "man -l warns");
            assert!(text(&r.stdout).contains("gguf-digest"), "the page renders");
        }
        Err(_) if !py::in_ci() => eprintln!("SKIPPED: man not found"),
        Err(e) => panic!("man is needed under CI (.ci/run installs man-db): {e}"),
    }
}

/// Issue #31, item 18: the first thing `--help`, `-h` and the README say
/// names every kind of model the tool labels, directories among them.
#[test]
fn help_and_readme_begin_with_every_kind_of_model() {
    let kinds = ["GGUF", "safetensors", "directory", "Ollama"];
    for flag in ["--help", "-h"] {
        let o = gd_in(std::path::Path::new("."), &[flag]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        let first = out.lines().next().unwrap_or_default();
        for kind in kinds {
            assert!(first.contains(kind), "{flag}'s first line names {kind}: {first:?}");
        }
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    let first = readme.split("\n\n").nth(1).expect("a paragraph after the title");
    for kind in kinds {
        assert!(first.contains(kind), "the README's first paragraph names {kind}: {first:?}");
    }
}
