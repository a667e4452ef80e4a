//! MCP both ways, with rmcp kept behind this module (its major version moves fast: a
//! bump should touch only `session.rs`, `resources.rs`, `rmcp_errors.rs`,
//! `client_handler.rs` and `server/`).
//!
//! - Client: `[mcp_servers.NAME]` sections ([`config`]) are connected concurrently,
//!   only those a command needs and, where a cached listing stands in, only at their
//!   first call ([`discovery`], [`failure_memory`], [`signals`]); each server's tools
//!   and its resource/prompt tools ([`resources`]) are registered as
//!   `mcp__<server>__<tool>` ([`naming`], [`registration`]) in toolset `mcp-<server>`.
//!   Calls go through [`client::ServerClient`] (circuit breaker, reconnect, timeouts,
//!   cancellation) and come back as `{"result"}` / `{"error"}` JSON ([`results`]). Stdio
//!   servers run in their own process group with a whitelisted environment and a
//!   bounded stderr buffer ([`process`], [`stderr_ring`]); [`manager::McpManager`]
//!   shuts them all down with the host.
//! - Server: [`server`] serves toolhost's own tools to any MCP client over stdio or
//!   streamable HTTP, every call running the whole dispatch pipeline.

pub mod breaker;
pub mod client;
pub mod client_handler;
pub mod config;
pub mod discovery;
pub mod error;
pub mod failure_memory;
pub mod http_client;
pub mod interpolate;
pub mod listing_cache;
pub mod listing_request;
pub mod manager;
pub mod naming;
pub mod process;
pub mod progress_relay;
pub mod readiness;
pub mod registration;
pub mod resources;
pub mod results;
pub mod rmcp_errors;
pub mod secrets;
pub mod server;
pub mod session;
pub mod signals;
pub mod status;
pub mod stderr_ring;
pub mod stdout_tap;
pub mod task_support;
pub mod upstream;

pub use config::McpServerSettings;
pub use discovery::{DiscoveryOptions, McpScope, discover, discover_async};
pub use error::McpError;
pub use manager::McpManager;
pub use status::{ServerState, ServerStatus};
