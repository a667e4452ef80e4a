//! `execute_code`: the model writes a Python script whose tool calls are functions of a
//! generated module (`from toolhost_tools import read_file, terminal`); each call
//! travels back to the host — over a Unix socket when the script runs on the host,
//! through request and response files when it runs in another execution environment
//! (docker, ssh, ...) — and runs through the host's whole dispatch pipeline
//! (validation, hooks, approval) exactly like a direct call. Only the script's stdout
//! returns to the model (docs/hermes/code-execution.md).
//!
//! - [`stubs`] — the generated `toolhost_tools` module (both transports);
//! - [`dispatch`] — answering one request: token, allowlist, call limit, pipeline;
//! - [`rpc`] — the socket server (host);
//! - [`relay`] — the file channel (other environments);
//! - [`run`] — the child process on the host, its limits;
//! - [`remote`] — the script in the task's environment, the same limits;
//! - `outcome` — captured output and the result shape, shared by both runners;
//! - [`approval`] — the whole-script check;
//! - [`settings`] — the `[code_execution]` section.
//!
//! tools-core cannot see the host's pipeline, so the host installs a [`ToolCaller`]
//! in [`ToolCallerSlot`] when it starts (`host/src/app.rs`); without one the tool
//! answers with an error instead of bypassing the pipeline.

pub mod approval;
pub mod colocate;
pub mod dispatch;
mod outcome;
pub mod relay;
pub mod remote;
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
mod floor_tests;
#[cfg(test)]
mod remote_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
