//! tools-core: toolhost's registry, core tools, approval system and execution
//! environments.
//!
//! The host (`toolhost` binary) builds a [`Registry`], registers the core tools with
//! [`tools::register_core_tools`], then plugins and MCP tools; its dispatch pipeline calls
//! into the registry. Everything here is usable on its own by embedders.

pub mod agent_loop;
pub mod ansi;
pub mod approval;
pub mod atomic_file;
pub mod availability;
pub mod bridge;
#[cfg(unix)]
pub mod code_exec;
pub mod config_edit;
pub mod context;
pub mod cron;
pub mod entry;
pub mod environments;
pub mod error;
pub mod file_lock;
pub mod files;
pub mod handler;
pub mod home;
pub mod hooks;
pub mod panic_safe;
pub mod prompter;
pub mod redact;
pub mod registry;
pub mod result;
pub mod services;
pub mod settings;
pub mod skills;
pub mod stable_hash;
pub mod tools;

pub use agent_loop::AgentLoopState;
pub use availability::{Availability, AvailabilityCheck, AvailabilityPass};
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
