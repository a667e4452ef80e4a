//! tools-core: toolhost's registry and core tools.
//!
//! The host (`toolhost` binary) builds a [`Registry`], registers the core tools with
//! [`tools::register_core_tools`], then plugins and MCP tools; its dispatch pipeline calls
//! into the registry. Everything here is usable on its own by embedders.
//!
//! Two subsystems are crates of their own (folders next to this one): the approval
//! analyser and engine (`toolhost-approval`, re-exported as [`approval`], with the
//! [`redact`]or and the async [`bridge`] it needs) and the execution environments
//! (`toolhost-environments`, re-exported as [`environments`]). The re-exports keep
//! `tools_core::approval::…` and `tools_core::environments::…` paths working.
// Tests start helper programs (bash, python3, pgrep) directly; the non-test build of
// this crate is where `clippy.toml`'s spawn rule applies (exec_policy.rs).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod agent_loop;
pub mod atomic_file;
pub mod availability;
pub mod bounded_read;
#[cfg(unix)]
pub mod code_exec;
pub mod config_allowlist;
pub mod config_edit;
pub mod context;
pub mod cron;
pub mod entry;
pub mod environment_files;
pub mod error;
pub mod file_lock;
pub mod files;
pub mod handler;
pub mod home;
pub mod hooks;
pub mod host_slot;
pub mod panic_safe;
pub mod prompter;
pub mod registry;
pub mod result;
pub mod services;
pub mod settings;
pub mod skills;
pub mod stable_hash;
pub mod tools;

pub use toolhost_approval as approval;
pub use toolhost_approval::{bridge, redact};
pub use toolhost_environments as environments;

pub use agent_loop::AgentLoopState;
pub use availability::{Availability, AvailabilityCheck, AvailabilityPass};
pub use config_allowlist::ConfigAllowlist;
pub use context::ToolContext;
pub use entry::{Parallelism, SchemaPatch, ToolBuilder, ToolEntry, ToolSource};
pub use error::{RegisterError, ToolError};
pub use files::{FileSystem, FileSystemProvider, LocalFileSystem, LocalFileSystemProvider};
pub use handler::{ToolHandler, ToolOutcome};
pub use home::Home;
pub use hooks::{CallStatus, Hooks, PreToolDecision};
pub use prompter::{
    PromptAnswer, PromptError, PromptRequest, Prompter, ScriptedPrompter, TerminalPrompter,
};
pub use registry::{DispatchResult, RegisterOutcome, Registry};
pub use services::CoreServices;
