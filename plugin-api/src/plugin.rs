//! [`Plugin`]: everything one plugin library offers, and [`Host`]: what the host tells
//! it at registration.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::hooks::{ApprovalEvent, HookSet, PreDecision, TerminalOutput, ToolCall, ToolCallRecord};
use crate::tool::Tool;

/// The tools and hooks of a plugin. Build one in the function you pass to
/// [`export_plugin!`](crate::export_plugin).
#[derive(Default)]
pub struct Plugin {
    pub(crate) tools: Vec<Tool>,
    pub(crate) hooks: HookSet,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("tools", &self.tools)
            .field("hooks", &self.hooks.kinds())
            .finish()
    }
}

impl Plugin {
    /// A plugin with no tools and no hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offer `tool`.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Allow, block or rewrite calls before they run.
    pub fn pre_tool_call<F>(mut self, hook: F) -> Self
    where
        F: Fn(&ToolCall) -> PreDecision + Send + Sync + 'static,
    {
        self.hooks.pre.push(Box::new(hook));
        self
    }

    /// Observe every finished call (name, args, result, status, duration).
    pub fn post_tool_call<F>(mut self, hook: F) -> Self
    where
        F: Fn(&ToolCallRecord) + Send + Sync + 'static,
    {
        self.hooks.post.push(Box::new(hook));
        self
    }

    /// Replace a call's result: return `Some(new_result)`; it should be JSON (other text
    /// is wrapped in a JSON string by the host).
    pub fn transform_tool_result<F>(mut self, hook: F) -> Self
    where
        F: Fn(&ToolCallRecord) -> Option<String> + Send + Sync + 'static,
    {
        self.hooks.transform_result.push(Box::new(hook));
        self
    }

    /// Replace the output of a foreground terminal command: return `Some(text)`.
    pub fn transform_terminal_output<F>(mut self, hook: F) -> Self
    where
        F: Fn(&TerminalOutput) -> Option<String> + Send + Sync + 'static,
    {
        self.hooks.transform_terminal.push(Box::new(hook));
        self
    }

    /// Observe approval requests (before the user is asked).
    pub fn pre_approval_request<F>(mut self, hook: F) -> Self
    where
        F: Fn(&ApprovalEvent) + Send + Sync + 'static,
    {
        self.hooks.pre_approval.push(Box::new(hook));
        self
    }

    /// Observe approval decisions.
    pub fn post_approval_response<F>(mut self, hook: F) -> Self
    where
        F: Fn(&ApprovalEvent) + Send + Sync + 'static,
    {
        self.hooks.post_approval.push(Box::new(hook));
        self
    }
}

/// What the host tells a plugin when it registers it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Host {
    /// The plugin's name (from its manifest).
    pub plugin: String,
    /// The `toolhost` version.
    pub host_version: String,
    /// The host's `toolhost-plugin-api` version.
    pub api_version: String,
    /// The toolhost home directory (config, state).
    pub home: PathBuf,
    /// The directory the plugin was loaded from.
    pub plugin_dir: PathBuf,
    /// The plugin's settings: the `[plugins.config.<name>]` table of `config.toml`, as
    /// JSON (`null` when absent).
    pub config: Value,
}

impl Host {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.plugin
    }

    /// The toolhost home directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Setting `key` of the plugin's configuration table.
    pub fn setting(&self, key: &str) -> Option<&Value> {
        self.config.get(key)
    }

    /// The plugin's configuration deserialized into `T`. A missing table reads as an
    /// empty one, so a `#[serde(default)]` struct gets its defaults.
    pub fn settings<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.config {
            Value::Null => serde_json::from_value(Value::Object(Default::default())),
            config => serde_json::from_value(config.clone()),
        }
    }
}

/// What a plugin's build function may return: a [`Plugin`], or a `Result` whose error
/// explains why the plugin cannot start (the host lists it as failed).
pub trait IntoPlugin {
    /// Convert.
    fn into_plugin(self) -> Result<Plugin, String>;
}

impl IntoPlugin for Plugin {
    fn into_plugin(self) -> Result<Plugin, String> {
        Ok(self)
    }
}

impl<E: std::fmt::Display> IntoPlugin for Result<Plugin, E> {
    fn into_plugin(self) -> Result<Plugin, String> {
        self.map_err(|e| e.to_string())
    }
}
