//! The `hpf-ls` crate: the command line (and, on top of `analysis`, the
//! language server). The binary in `main.rs` only dispatches.

pub mod cli;
pub mod config;
pub mod modules;
pub mod server;
pub mod sources;
