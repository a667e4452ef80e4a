//! The toolhost host: discovery (core tools, plugins, MCP servers), toolsets, tool
//! definitions, the dispatch pipeline (hooks, approval, concurrency) and the CLI.
// Tests start helper programs (bash, python3, pgrep) directly; the non-test build of
// this crate is where `clippy.toml`'s spawn rule applies (exec_policy.rs).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod agent;
pub mod app;
pub mod batch;
pub mod cli;
pub mod coerce;
pub mod config;
pub mod cron;
pub mod definitions;
pub mod dispatch;
pub mod mcp;
pub mod plugins;
pub mod results_prune;
pub mod schema_sanitize;
pub mod spill;
pub mod tls;
pub mod toolsets;
pub mod validation;

pub use app::{StartOptions, Toolhost};
pub use batch::{ToolCall, ToolMessage, dispatch_batch};
pub use dispatch::Dispatcher;
