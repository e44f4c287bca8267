//! Names that could rewrite a terminal never reach it raw: every place a
//! file name, a key, a tensor name, an Ollama name or a media type is
//! printed for a person (errors, warnings, `--check` and `verify` result
//! lines, `inspect`, `diff`) escapes control characters and bidirectional
//! overrides; sums lines keep sha256sum's own rules (README, "Names in
//! output"). One test per message.
use crate::common;

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::ollama::{CONFIG, MODEL, Store, TEMPLATE};
use common::*;

/// A name that, printed raw, returns to the line's start, erases it and
/// writes on: a line saying FAILED would read `OK`.
const FORGING: &str = "ok\r\x1b[2Kevil.gguf";
/// A right-to-left override: what follows is shown reversed.
const RLO: char = '\u{202e}';

fn run(dir: &Path, args: &[&OsStr], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(gguf_digest_bin());
    cmd.args(args).current_dir(dir).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("runs gguf-digest")
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// Output a terminal shows as written: no control character but the
/// newline ending each line, no DEL, no C1 control, no bidirectional
/// embedding, override or isolate.
fn assert_safe(what: &str, bytes: &[u8]) {
    let t = String::from_utf8_lossy(bytes);
    let bad = t.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    });
    assert_eq!(bad, None, "{what} holds a raw {bad:?}: {t:?}");
}

fn model(seed: u8) -> Gguf {
    Gguf::new().kv("general.architecture", Val::str("llama")).kv("general.seed", Val::U8(seed)).tensor(Tensor::filled(
        "w",
        &[8, 2],
        0,
        seed,
    ))
}

#[test]
fn a_bad_entry_of_a_directory_is_named_escaped() {
    let d = Dir::new();
    std::fs::create_dir(d.path("dir")).unwrap();
    for (i, name) in [FORGING, "b\nline.gguf"].iter().enumerate() {
        d.write(&format!("dir/{name}"), &model(i as u8).build());
    }
    // A directory is labelled whole (docs/adr/0023): its dangling link,
    // named to forge output, is the error, escaped.
    std::os::unix::fs::symlink("gone", d.path(&format!("dir/c{RLO}z.gguf"))).unwrap();
    let o = run(&d.path(""), &[os("dir")], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_safe("the error", &o.stderr);
    assert_eq!(
        text(&o.stderr),
        "gguf-digest: dir: 'dir/c'$'\\342\\200\\256''z.gguf': is a dangling symbolic link: its target gone does not \
         exist\n"
    );
}

#[test]
fn an_ollama_name_that_is_not_in_the_store_is_escaped() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let o = run(&d.path(""), &[os("ollama:a\x1b[2Kb")], &[("OLLAMA_MODELS", &store.root)]);
    assert_eq!(o.status.code(), Some(2));
    assert_safe("the error", &o.stderr);
    let e = text(&o.stderr);
    assert!(e.starts_with("gguf-digest: 'ollama:a'$'\\033''[2Kb': no such model in the store"), "{e}");
    assert!(e.contains("/a\\u{1b}[2Kb/latest)"), "{e}");
}

#[test]
fn a_damaged_store_names_its_blob_escaped() {
    let d = Dir::new();
    let store = Store::new(&d.path("s\x1b]0;title\x07"));
    let layers = [store.blob(MODEL, &model(1).build())];
    store.manifest("m", &store.config(""), &layers);
    std::fs::remove_file(store.blob_path(&layers[0])).unwrap();
    let o = run(&d.path(""), &[os("ollama:m")], &[("OLLAMA_MODELS", &store.root)]);
    assert_eq!(o.status.code(), Some(2));
    assert_safe("the error", &o.stderr);
    assert!(text(&o.stderr).contains("is missing: "), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("/s\\u{1b}]0;title\\u{7}/blobs/sha256-"), "{}", text(&o.stderr));
}

#[test]
fn check_results_escape_a_name_that_could_make_failed_read_ok() {
    let d = Dir::new();
    let p = d.write(FORGING, &model(1).build());
    let o = run(&d.path(""), &[os(FORGING)], &[]);
    assert_eq!(o.status.code(), Some(0));
    // The sums line is sha256sum's: only `\`, newline and carriage return escaped.
    let label = &text(&o.stdout)[1..65];
    assert_eq!(o.stdout, format!("\\{label}  ok\\r\x1b[2Kevil.gguf\n").into_bytes());
    d.write("sums", &o.stdout);
    flip_last_byte(&p);
    let o = run(&d.path(""), &[os("-c"), os("sums")], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_safe("the result line", &o.stdout);
    assert_eq!(text(&o.stdout), "\\ok\\r\\u{1b}[2Kevil.gguf: FAILED\n");
    // An unreadable file: its error and its result line.
    std::fs::remove_file(&p).unwrap();
    let o = run(&d.path(""), &[os("-c"), os("sums")], &[]);
    assert_safe("the error", &o.stderr);
    assert_safe("the result line", &o.stdout);
    assert_eq!(text(&o.stdout), "\\ok\\r\\u{1b}[2Kevil.gguf: FAILED open or read\n");
    assert!(text(&o.stderr).starts_with("gguf-digest: 'ok'$'\\r\\033''[2Kevil.gguf': No such file"));
}

#[test]
fn check_results_escape_bidirectional_overrides() {
    let d = Dir::new();
    let name = format!("{RLO}KO.gguf");
    d.write(&name, &model(1).build());
    let o = run(&d.path(""), &[os(&name)], &[]);
    d.write("sums", &o.stdout);
    let o = run(&d.path(""), &[os("-c"), os("sums")], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout), "\\\\u{202e}KO.gguf: OK\n");
}

#[test]
fn verify_results_and_its_warning_escape_names() {
    let d = Dir::new();
    let name = format!("m\r{RLO}.gguf");
    d.write(&name, &model(1).build());
    let o = run(&d.path(""), &[os("statement"), os(&name)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let statement = format!("s\x1b[2K{RLO}.json");
    d.write(&statement, &o.stdout);
    let o = run(&d.path(""), &[os("verify"), os("--no-signature"), os(&statement)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_safe("the result lines", &o.stdout);
    assert_eq!(
        text(&o.stdout),
        "'s'$'\\033''[2K'$'\\342\\200\\256''.json': signature NOT CHECKED (--no-signature)\n\\m\\r\\u{202e}.gguf: OK\n"
    );
    // Refused without a key: the refusal names the statement safely too.
    let o = run(&d.path(""), &[os("verify"), os(&statement)], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_safe("the refusal", &o.stderr);
    assert!(
        text(&o.stderr)
            .starts_with("gguf-digest: verify: 's'$'\\033''[2K'$'\\342\\200\\256''.json': signature: no public key")
    );
}

#[test]
fn error_lines_quote_file_names_with_bidirectional_overrides() {
    let d = Dir::new();
    let name = format!("a{RLO}b.gguf");
    let o = run(&d.path(""), &[os(&name)], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr), "gguf-digest: 'a'$'\\342\\200\\256''b.gguf': No such file or directory\n");
}

#[test]
fn shard_messages_escape_the_shard_they_name() {
    let d = Dir::new();
    let g = model(1).tensor(Tensor::filled("v", &[8], 0, 2));
    let shards = g.split(&[1, 1]);
    let paths = write_set(&d, "x\ry", &shards);
    let second = paths[1].file_name().unwrap();
    let o = run(&d.path(""), &[second], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_safe("the error", &o.stderr);
    assert!(
        text(&o.stderr).ends_with("pass the first shard instead: x\\ry-00001-of-00002.gguf\n"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_file(&paths[1]).unwrap();
    let o = run(&d.path(""), &[paths[0].file_name().unwrap()], &[]);
    assert_safe("the error", &o.stderr);
    assert!(text(&o.stderr).ends_with("shard 2 of 2 is missing: x\\ry-00002-of-00002.gguf\n"), "{}", text(&o.stderr));
}

#[test]
fn an_index_naming_a_file_with_control_characters_is_shown_escaped() {
    let d = Dir::new();
    let shard = "b\x1b[2K.safetensors";
    let st = |name, seed| common::st::St::new().tensor(common::st::StTensor::filled(name, "F32", &[2], seed)).build();
    d.write("a.safetensors", &st("w", 1));
    d.write(shard, &st("v", 2));
    let index = r#"{"weight_map": {"w": "b\u001b[2K.safetensors", "v": "b\u001b[2K.safetensors"}}"#;
    d.write("m.safetensors.index.json", index.as_bytes());
    let o = run(&d.path(""), &[os("m.safetensors.index.json")], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_safe("the error", &o.stderr);
    assert!(text(&o.stderr).contains("lists this tensor in b\\u{1b}[2K.safetensors, which"), "{}", text(&o.stderr));
    // A file it names that is missing: quoted as the file of the error.
    std::fs::remove_file(d.path(shard)).unwrap();
    let o = run(&d.path(""), &[os("m.safetensors.index.json")], &[]);
    assert_safe("the error", &o.stderr);
    assert!(text(&o.stderr).contains(": 'b'$'\\033''[2K.safetensors': No such file"), "{}", text(&o.stderr));
}

#[test]
fn check_warnings_quote_the_list_name() {
    let d = Dir::new();
    let list = format!("l{RLO}");
    d.write(&list, b"junk\n");
    let o = run(&d.path(""), &[os("-c"), os("-w"), os(&list)], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_safe("the warning", &o.stderr);
    assert!(text(&o.stderr).starts_with("gguf-digest: 'l'$'\\342\\200\\256': 1: improperly formatted"));
}

/// A model whose key, tensor name and string value could forge output.
fn hostile() -> Gguf {
    Gguf::new()
        .kv("general.architecture", Val::str("llama"))
        .kv(&format!("general.k{RLO}x"), Val::str("v\r\x1b[2K"))
        .tensor(Tensor::filled(&format!("t\x1b[2K{RLO}"), &[8], 0, 1))
}

#[test]
fn inspect_escapes_names_keys_and_values() {
    let d = Dir::new();
    let name = format!("m{RLO}\r.gguf");
    d.write(&name, &hostile().build());
    let o = run(&d.path(""), &[os("inspect"), os(&name)], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_safe("inspect", &o.stdout);
    let t = text(&o.stdout);
    for shown in ["m\\u{202e}\\r.gguf", "general.k\\u{202e}x", "'v\\r\\u{1b}[2K'", "t\\u{1b}[2K\\u{202e}"] {
        assert!(t.contains(shown), "{shown} in {t}");
    }
}

#[test]
fn diff_escapes_names_keys_and_values() {
    let d = Dir::new();
    d.write(&format!("a{RLO}.gguf"), &hostile().build());
    d.write("b\x1b[2K.gguf", &model(1).build());
    let o = run(&d.path(""), &[os("diff"), os(&format!("a{RLO}.gguf")), os("b\x1b[2K.gguf")], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_safe("diff", &o.stdout);
    let t = text(&o.stdout);
    for shown in ["a\\u{202e}.gguf", "b\\u{1b}[2K.gguf", "general.k\\u{202e}x", "t\\u{1b}[2K\\u{202e}"] {
        assert!(t.contains(shown), "{shown} in {t}");
    }
}

#[test]
fn ollama_inspect_escapes_media_types_and_layer_names() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let mut template = store.named(TEMPLATE, b"{{ .Prompt }}", "n\x1b[2K");
    template.media_type = "application/x\\u001b[2K".to_string();
    template.name = Some("n\\u001b[2K".to_string());
    let layers = [store.blob(MODEL, &model(1).build()), template];
    store.manifest("m", &store.config(""), &layers);
    let o = run(&d.path(""), &[os("inspect"), os("ollama:m")], &[("OLLAMA_MODELS", &store.root)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_safe("inspect", &o.stdout);
    let t = text(&o.stdout);
    assert!(t.contains("application/x\\u{1b}[2K"), "{t}");
    assert!(t.contains("n\\u{1b}[2K"), "{t}");
    assert!(t.contains(CONFIG), "{t}");
}

#[test]
fn ollama_diff_escapes_media_types() {
    let d = Dir::new();
    let store = Store::new(&d.path("models"));
    let weights = store.blob(MODEL, &model(1).build());
    let mut other = store.blob(TEMPLATE, b"x");
    other.media_type = "application/vnd.ollama.image.\\u001b[2K".to_string();
    store.manifest("a", &store.config(""), std::slice::from_ref(&weights));
    store.manifest("b", &store.config(""), &[weights, other]);
    d.write("w.gguf", &model(1).build());
    let env = [("OLLAMA_MODELS", store.root.as_path())];
    for (a, b) in [("ollama:a", "ollama:b"), ("ollama:b", "w.gguf")] {
        let o = run(&d.path(""), &[os("diff"), os(a), os(b)], &env);
        assert!(o.status.code().is_some_and(|c| c < 2), "{}", text(&o.stderr));
        assert_safe("diff", &o.stdout);
        assert!(text(&o.stdout).contains("\\u{1b}[2K"), "{}", text(&o.stdout));
    }
}

#[test]
fn sums_lines_keep_sha256sum_rules() {
    // sha256sum escapes only `\`, newline and carriage return in a sums
    // line, and so does gguf-digest, so that either reads the other's
    // lists: any other byte of a name is written as it is.
    let d = Dir::new();
    let name = format!("e\x1b[2K{RLO}\t.gguf");
    d.write(&name, &model(1).build());
    let o = run(&d.path(""), &[os(&name)], &[]);
    assert_eq!(o.status.code(), Some(0));
    let t = text(&o.stdout);
    assert_eq!(&t[64..], format!("  {name}\n"));
}
