//! `[plugins]` in `config.toml`.
//!
//! ```toml
//! [plugins]
//! disabled = ["notes"]        # never loaded; wins over everything
//! enabled = ["policy"]        # plugins that are off by default (`enabled_by_default = false`)
//! project = false             # load ./.toolhost/plugins (or TOOLHOST_ENABLE_PROJECT_PLUGINS=1)
//! bundled = true              # load the plugins built with toolhost
//! paths = []                  # more directories of installed plugins
//! max_panics = 3              # panics before a plugin is disabled for the process (0 = never)
//! timeout_secs = 60           # per tool call (0 = no limit; the call runs inline)
//! check_timeout_secs = 5      # per availability check
//! max_hung_calls = 4          # calls still running past their timeout before the plugin's
//!                             # tools are refused
//! default_isolation = "process"  # every non-bundled plugin in a child process, so its
//!                             # crash cannot take the host down ("in-process": faster,
//!                             # unprotected; see docs/plugin-isolation.md)
//! max_crashes = 3             # crashes of a process plugin before it is given up (0 = never)
//! memory_limit_mb = 4096      # memory of each plugin process tree (0 = none)
//! confine = "off"             # Landlock/seccomp floor of plugin processes: "floor" or
//!                             # "workspace" (as terminal.local.confine; cwd = workspace)
//! writable = []               # more paths plugin processes may write when confined
//!
//! [plugins.python]            # Hermes Python plugins (always out of process)
//! interpreter = "~/venvs/hermes/bin/python"  # default: $VIRTUAL_ENV/bin/python, else python3
//! no_entry_points = false     # true: ignore pip packages' hermes_agent.plugins entry points
//! allow_tool_override = []    # Python plugins allowed to replace core tools
//!
//! [plugins.isolation]         # per plugin: "process" or "in-process"
//! thirdparty = "process"
//!
//! [plugins.config.policy]     # settings handed to the plugin named `policy`
//! audit_log = "audit/tools.jsonl"
//!
//! [plugins.limits.textkit]     # per-plugin overrides of the four limits above
//! timeout_secs = 0             # a trusted, quick plugin: run inline (no thread handoff)
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::process::Isolation;
use super::python::PythonSettings;
use tools_core::environments::confine::ConfineMode;

/// `[plugins]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct PluginsSettings {
    /// Plugins to load although their manifest says `enabled_by_default = false`.
    pub enabled: Vec<String>,
    /// Plugins never loaded.
    pub disabled: Vec<String>,
    /// Load project plugins (`./.toolhost/plugins`).
    pub project: bool,
    /// Load the plugins built with toolhost.
    pub bundled: bool,
    /// More installed-plugin directories (`~/` and home-relative paths allowed).
    pub paths: Vec<PathBuf>,
    /// Panics after which a plugin is disabled for the rest of the process; 0 = never.
    pub max_panics: u32,
    /// Time limit of one plugin tool call, in seconds; 0 = none (the call runs inline).
    pub timeout_secs: f64,
    /// Time limit of one availability check, in seconds; 0 = none.
    pub check_timeout_secs: f64,
    /// Calls still running past their timeout before a plugin's tools are refused.
    pub max_hung_calls: u32,
    /// Where plugins run unless `isolation` or their manifest says otherwise: by default
    /// every user, project, installed and pip plugin runs in its own process; bundled
    /// plugins stay in-process unless named.
    pub default_isolation: Isolation,
    /// Per-plugin isolation.
    pub isolation: BTreeMap<String, Isolation>,
    /// Crashes of a process plugin before it is given up; 0 = never.
    pub max_crashes: u32,
    /// Memory limit of each plugin process and its children, in MiB; 0 = none: a cgroup v2
    /// `memory.max` where the host can make one, else an address-space cap with room for
    /// JIT runtimes (docs/python-plugins.md, "Memory limit").
    pub memory_limit_mb: u64,
    /// The kernel floor of every plugin process (`off`, `floor`, `workspace`: the modes
    /// of `terminal.local.confine`, with the host's working directory as workspace).
    pub confine: ConfineMode,
    /// More paths plugin processes may write under `confine`.
    pub writable: Vec<PathBuf>,
    /// `[plugins.python]`: the interpreter and rules for Hermes Python plugins.
    pub python: PythonSettings,
    /// Per-plugin settings, handed to the plugin at registration.
    pub config: BTreeMap<String, toml::Value>,
    /// Per-plugin overrides of `max_panics`, `timeout_secs`, `check_timeout_secs` and
    /// `max_hung_calls`.
    pub limits: BTreeMap<String, LimitOverrides>,
}

/// `[plugins.limits.<name>]`: any of the limits, for one plugin.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct LimitOverrides {
    /// Overrides `plugins.max_panics`.
    pub max_panics: Option<u32>,
    /// Overrides `plugins.timeout_secs`.
    pub timeout_secs: Option<f64>,
    /// Overrides `plugins.check_timeout_secs`.
    pub check_timeout_secs: Option<f64>,
    /// Overrides `plugins.max_hung_calls`.
    pub max_hung_calls: Option<u32>,
}

impl Default for PluginsSettings {
    fn default() -> Self {
        PluginsSettings {
            enabled: Vec::new(),
            disabled: Vec::new(),
            project: false,
            bundled: true,
            paths: Vec::new(),
            max_panics: 3,
            timeout_secs: 60.0,
            check_timeout_secs: 5.0,
            max_hung_calls: 4,
            default_isolation: Isolation::Process,
            isolation: BTreeMap::new(),
            max_crashes: 3,
            memory_limit_mb: 4096,
            confine: ConfineMode::Off,
            writable: Vec::new(),
            python: PythonSettings::default(),
            config: BTreeMap::new(),
            limits: BTreeMap::new(),
        }
    }
}

impl PluginsSettings {
    /// True when `name` is listed in `disabled`.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|n| n == name)
    }

    /// True when `name` is listed in `enabled`.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.iter().any(|n| n == name)
    }

    /// The settings of plugin `name` as JSON (`null` when absent).
    pub fn settings_json(&self, name: &str) -> serde_json::Value {
        self.config
            .get(name)
            .and_then(|v| serde_json::to_value(v).ok())
            .unwrap_or(serde_json::Value::Null)
    }

    /// `writable`, with `~/` expanded and relative paths taken from `home`.
    pub fn resolved_writable(&self, home: &Path) -> Vec<PathBuf> {
        self.writable
            .iter()
            .map(|p| resolve_path(home, p))
            .collect()
    }

    /// `paths`, with `~/` expanded and relative paths taken from `home`.
    pub fn resolved_paths(&self, home: &Path) -> Vec<PathBuf> {
        self.paths.iter().map(|p| resolve_path(home, p)).collect()
    }
}

/// `~/x` → `$HOME/x`; a relative path → `home/path`; absolute paths unchanged.
pub fn resolve_path(home: &Path, path: &Path) -> PathBuf {
    if let Ok(rest) = path.strip_prefix("~")
        && let Some(user_home) = dirs::home_dir()
    {
        return user_home.join(rest);
    }
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        home.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_partial_tables() {
        let config: PluginsSettings =
            toml::from_str("disabled = [\"x\"]\nmax_panics = 0\n").unwrap();
        assert!(config.is_disabled("x"));
        assert_eq!(config.max_panics, 0);
        assert!(config.bundled);
        assert_eq!(config.timeout_secs, 60.0);
    }

    #[test]
    fn third_party_plugins_run_out_of_process_by_default() {
        assert_eq!(
            PluginsSettings::default().default_isolation,
            Isolation::Process
        );
    }

    #[test]
    fn plugin_settings_become_json() {
        let config: PluginsSettings =
            toml::from_str("[config.policy]\naudit_log = \"a.jsonl\"\nn = 3\n").unwrap();
        assert_eq!(
            config.settings_json("policy"),
            serde_json::json!({"audit_log": "a.jsonl", "n": 3})
        );
        assert!(config.settings_json("other").is_null());
    }

    #[test]
    fn per_plugin_limits_parse() {
        let config: PluginsSettings =
            toml::from_str("timeout_secs = 30\n[limits.fast]\ntimeout_secs = 0\n").unwrap();
        assert_eq!(config.limits["fast"].timeout_secs, Some(0.0));
        assert_eq!(config.limits["fast"].max_panics, None);
    }

    #[test]
    fn paths_resolve_against_home() {
        let home = Path::new("/h");
        assert_eq!(resolve_path(home, Path::new("p")), PathBuf::from("/h/p"));
        assert_eq!(resolve_path(home, Path::new("/abs")), PathBuf::from("/abs"));
    }
}
