//! `execute_code`: the model writes a Python script whose tool calls are functions of a
//! generated module (`from toolhost_tools import read_file, terminal`); each call
//! travels back to the host over a Unix socket and runs through the host's whole
//! dispatch pipeline (validation, hooks, approval) exactly like a direct call. Only
//! the script's stdout returns to the model (docs/hermes/code-execution.md).
//!
//! - [`stubs`] — the generated `toolhost_tools` module;
//! - [`rpc`] — the socket server that answers the script's calls;
//! - [`run`] — the child process, its limits, and the result;
//! - [`settings`] — the `[code_execution]` section.
//!
//! tools-core cannot see the host's pipeline, so the host installs a [`ToolCaller`]
//! in [`ToolCallerSlot`] when it starts (`host/src/app.rs`); without one the tool
//! answers with an error instead of bypassing the pipeline.

pub mod approval;
pub mod rpc;
pub mod run;
pub mod settings;
pub mod stubs;

use crate::context::ToolContext;

pub use settings::CodeExecutionSettings;

/// Runs one tool call through the host's pipeline, for scripts.
pub trait ToolCaller: Send + Sync {
    /// Run `name` with `args` (a JSON object) and return the result text (JSON).
    fn call(&self, name: &str, args: &serde_json::Value, ctx: &ToolContext) -> String;
    /// Whether `name` is registered and available now.
    fn available(&self, name: &str) -> bool;
}

/// Where the host puts its [`ToolCaller`]; cleared on shutdown (the caller holds the
/// registry, which holds the tool that holds this slot).
pub type ToolCallerSlot = crate::host_slot::HostSlot<dyn ToolCaller>;

#[cfg(test)]
mod tests;
