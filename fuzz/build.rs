//! The seed generator (examples/gen_seeds.rs) compiles the test suite's
//! helpers (tests/common/), some of which read variables cargo defines only
//! when it compiles integration tests (`env!` at compile time). The seed
//! generator never calls those helpers; the variables are defined here so
//! that it compiles, with values that say where they came from.
fn main() {
    println!("cargo:rustc-env=CARGO_BIN_EXE_gguf-digest=gguf-digest");
    let tmp = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rustc-env=CARGO_TARGET_TMPDIR={tmp}");
    println!("cargo:rerun-if-changed=build.rs");
}
