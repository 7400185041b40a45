//! Cross-crate integration tests live in `tests/`; this crate has no code.
