//! The SDK and stable ABI for **toolhost** native tool plugins.
//!
//! A plugin is a `cdylib` crate with a `plugin.toml`. You write plain Rust: tools are
//! closures over `serde_json::Value`, hooks are closures over small event structs, and
//! one macro, [`export_plugin!`], exports it all. You never implement an ABI trait, and
//! a panic in your code never takes the host down: it becomes an error for that call
//! (and the host disables a plugin that keeps panicking).
//!
//! # Example
//!
//! `src/lib.rs` (this is what `toolhost plugins new my_plugin` writes):
#![doc = concat!("```rust,ignore\n", include_str!("../template/lib.rs"), "```")]
//!
//! `plugin.toml`, next to `Cargo.toml`:
//!
//! ```toml
//! name = "my_plugin"           # unique; the host's config refers to it by this name
//! version = "0.1.0"
//! description = "Greets people"
//! library = "my_plugin"        # file name; without an extension: libmy_plugin.so, my_plugin.dll, ...
//! api = "^0.1"                 # the toolhost-plugin-api versions this plugin works with
//! # override = ["read_file"]   # core tools this plugin may replace
//! ```
//!
//! `Cargo.toml` needs `crate-type = ["cdylib"]` and a dependency on this crate. Build
//! with `cargo build --release`, then `toolhost plugins install .`, then
//! `toolhost call my_plugin_greet '{"name":"Ada"}'`.
//!
//! # What a plugin can do
//!
//! - **Tools** ([`Tool`]): a name, a toolset, a JSON Schema (from [`json!`] or, with the
//!   `schemars` feature, derived with `Tool::typed`), a handler
//!   `Fn(Value, &ToolContext) -> Result<Value, ToolError>`, and optionally an
//!   availability check, required environment variables, an emoji, a result size limit
//!   and a parallel-safe flag.
//! - **Hooks** (see [`hooks`]): `pre_tool_call` (allow / block / rewrite arguments),
//!   `post_tool_call`, `transform_tool_result`, `transform_terminal_output`,
//!   `pre_approval_request`, `post_approval_response`.
//! - **Logging**: `tracing` events (use [`tracing`], re-exported) and panic messages go
//!   to the host's log, tagged with the plugin's name.
//! - **Settings**: the `[plugins.config.<name>]` table of the user's `config.toml` is
//!   handed to your build function in [`Host::config`].
//!
//! # Rules of the road
//!
//! - Handlers are synchronous. The host runs them on a worker thread with a timeout;
//!   check [`ToolContext::is_cancelled`] in long loops. Do not use the host's async
//!   runtime (you cannot: a plugin has its own copy of every library); if you need
//!   async IO, run your own runtime inside the plugin.
//! - Never build with `panic = "abort"`.
//! - The crate version of `toolhost-plugin-api` is the ABI version: a plugin built
//!   against 0.1.x loads into a host built with 0.1.y for y ≥ x; 0.2 is a new ABI and
//!   plugins must be rebuilt. `plugin.toml`'s `api` states what you built for.
//! - A library, once loaded, stays loaded until the host exits.

// `#[sabi_trait]` expansions trip this lint on current compilers.
#![allow(non_local_definitions)]
#![warn(missing_docs)]

// abi_stable's `#[sabi_trait]` generates the trait object's vtable with unsafe code; the
// module holds no unsafe code of its own.
#[allow(unsafe_code)]
pub mod abi;
pub mod context;
pub mod embed;
pub mod error;
mod export;
mod ffi;
pub mod hooks;
mod log_bridge;
pub mod plugin;
pub mod tool;
pub mod wire;

pub use context::{CallInfo, ToolContext};
pub use error::ToolError;
pub use hooks::{ApprovalEvent, CallStatus, PreDecision, TerminalOutput, ToolCall, ToolCallRecord};
pub use plugin::{Host, IntoPlugin, Plugin};
pub use tool::{Tool, ToolResult, tool_error};

pub use serde;
pub use serde_json;
pub use serde_json::{Value, json};
pub use tracing;

#[cfg(feature = "schemars")]
pub use schemars;

/// The version of this crate, which is the plugin ABI version.
pub const API_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything a plugin usually needs: `use toolhost_plugin_api::prelude::*;`.
pub mod prelude {
    pub use crate::{
        ApprovalEvent, CallStatus, Host, Plugin, PreDecision, TerminalOutput, Tool, ToolCall,
        ToolCallRecord, ToolContext, ToolError, ToolResult, Value, export_plugin, json, tool_error,
        tracing,
    };
}

/// Implementation details used by [`export_plugin!`] and by the host. Not part of the
/// public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::ffi::{BuildFn, panic_text, root_module};
    pub use abi_stable;
    pub use std::string::String;

    /// Where this crate's sources were when it was compiled (used by
    /// `toolhost plugins new` to point new plugins at the same SDK).
    pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");

    /// The `src/lib.rs` that `toolhost plugins new` writes (`my_plugin` is replaced by
    /// the new plugin's name).
    pub const TEMPLATE_LIB_RS: &str = include_str!("../template/lib.rs");
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_module_symbol_matches_abi_stable() {
        // `export_plugin!` spells out the symbol abi_stable looks for.
        assert_eq!(
            abi_stable::library::ROOT_MODULE_LOADER_NAME,
            "_1as_0lib_1header_0root_bmodule_bloader"
        );
    }
}
