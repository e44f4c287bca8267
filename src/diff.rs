//! Comparing two models leaf by leaf (`gguf-digest diff`).
