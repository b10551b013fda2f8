//! The command-line front end's pieces: arguments, input/output and one module per
//! subcommand family; `main.rs` only dispatches.

pub(crate) mod args;
pub(crate) mod commands;
pub(crate) mod io;
pub(crate) mod run;
