//! What is in a model, and what a user should know about it (`gguf-digest inspect`).
