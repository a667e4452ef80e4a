//! The stable ABI between the toolhost host and a plugin library.
//!
//! Plugin authors never touch this module: the SDK ([`crate::Plugin`],
//! [`crate::export_plugin!`]) builds everything here. It is public because the host
//! loads it, and it is documented because it is a contract.
//!
//! The ABI is deliberately tiny and JSON-shaped. One root module with two functions
//! (`init`, `register`), and one trait object with three methods (`call_tool`,
//! `check_tool`, `run_hook`). Tool declarations, schemas, arguments, results and hook
//! events all cross as JSON strings, so most growth of the SDK never changes a type
//! here. A change here is a new minor version of `toolhost-plugin-api` (0.x), and
//! abi_stable refuses to load a library built against another layout.
//!
//! Panics never cross: every function the plugin exports runs its body under
//! `catch_unwind` in the plugin's own copy of std and returns an [`FfiError`] with kind
//! `"panic"` instead (abi_stable would otherwise terminate the host).
//!
//! This file depends only on `abi_stable` and `std`, so the test fixtures that simulate
//! older or changed ABIs can include it verbatim.

use std::sync::atomic::AtomicBool;

use abi_stable::{
    StableAbi, declare_root_module_statics,
    library::RootModule,
    package_version_strings, sabi_trait,
    sabi_types::VersionStrings,
    std_types::{RBox, RResult, RStr, RString},
};

/// The failure of an ABI call: a short machine-readable kind and a message.
///
/// Kinds used by the SDK: `panic` (the plugin code panicked; the host counts these),
/// `invalid_arguments`, `unavailable`, `failed`, `unknown_tool`, `unknown_hook`,
/// `invalid_json`. New kinds are new strings, never a layout change.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct FfiError {
    /// Short lowercase kind (`panic`, `invalid_arguments`, ...).
    pub kind: RString,
    /// Human-readable detail.
    pub message: RString,
}

impl FfiError {
    /// An error of `kind` with `message`.
    pub fn new(kind: &str, message: &str) -> Self {
        FfiError {
            kind: kind.into(),
            message: message.into(),
        }
    }

    /// True when the plugin code panicked.
    pub fn is_panic(&self) -> bool {
        self.kind.as_str() == PANIC_KIND
    }
}

/// The [`FfiError::kind`] of a caught panic.
pub const PANIC_KIND: &str = "panic";

/// Log levels crossing the ABI (`0` means off).
pub mod level {
    /// Errors.
    pub const ERROR: u8 = 1;
    /// Warnings.
    pub const WARN: u8 = 2;
    /// Information.
    pub const INFO: u8 = 3;
    /// Debugging detail.
    pub const DEBUG: u8 = 4;
    /// Tracing detail.
    pub const TRACE: u8 = 5;
}

/// The host's logger, handed to the plugin before `register`.
///
/// The plugin forwards its `tracing` events and panic messages to `log`; the host
/// re-emits them through its own subscriber, tagged with the plugin's name.
#[repr(C)]
#[derive(StableAbi, Copy, Clone)]
pub struct HostLogger {
    /// Opaque value the plugin passes back on every call (identifies the plugin).
    pub plugin_id: u64,
    /// Most verbose level the host wants (see [`level`]; 0 = nothing).
    pub max_level: u8,
    /// Emit one event. The host never unwinds out of this function.
    pub log: extern "C" fn(plugin_id: u64, level: u8, target: RStr<'_>, message: RStr<'_>),
}

/// The object a plugin hands the host from `register`. Implemented by the SDK only.
#[sabi_trait]
pub trait PluginObject: Send + Sync + 'static {
    /// Run tool number `index` (its position in the declaration's `tools` array).
    /// `args` is a JSON object, `context` the call context as JSON; `cancel` turns true
    /// when the host gives up on the call (timeout, interrupt). Returns the result JSON.
    fn call_tool(
        &self,
        index: u32,
        args: RStr<'_>,
        context: RStr<'_>,
        cancel: &AtomicBool,
    ) -> RResult<RString, FfiError>;

    /// Run the availability check of tool number `index`: `ROk` when usable now, an
    /// error of kind `unavailable` with the reason otherwise.
    fn check_tool(&self, index: u32) -> RResult<(), FfiError>;

    /// Run the plugin's hooks of `kind` (`pre_tool_call`, `post_tool_call`,
    /// `transform_tool_result`, `transform_terminal_output`, `pre_approval_request`,
    /// `post_approval_response`) on the JSON `event`. Returns the combined answer as JSON.
    #[sabi(last_prefix_field)]
    fn run_hook(&self, kind: RStr<'_>, event: RStr<'_>) -> RResult<RString, FfiError>;
}

/// The owned trait object behind [`PluginObject`].
pub type PluginObjectBox = PluginObject_TO<RBox<()>>;

/// What `register` returns: the declaration and the object that runs it.
#[repr(C)]
#[derive(StableAbi)]
pub struct PluginInstance {
    /// JSON: `{"sdk_version", "tools": [{name, toolset, description, parameters,
    /// requires_env, emoji, max_result_chars, parallel_safe, has_check}], "hooks": [kind]}`.
    pub declaration: RString,
    /// Runs tools, checks and hooks.
    pub object: PluginObjectBox,
}

/// The root module every plugin library exports.
///
/// `init` is called once, first; `register` once, after it. `host` is JSON:
/// `{"plugin", "host_version", "api_version", "home", "plugin_dir", "config"}`.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleRef)))]
pub struct PluginModule {
    /// Install the logger and panic bridge.
    pub init: extern "C" fn(logger: HostLogger),
    /// Build the plugin.
    #[sabi(last_prefix_field)]
    pub register: extern "C" fn(host: RStr<'_>) -> RResult<PluginInstance, FfiError>,
}

impl RootModule for PluginModuleRef {
    declare_root_module_statics! {PluginModuleRef}
    const BASE_NAME: &'static str = "toolhost_plugin";
    const NAME: &'static str = "toolhost_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
