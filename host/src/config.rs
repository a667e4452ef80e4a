//! `config.toml`: loading, defaults and error reporting.
//!
//! A missing file means built-in defaults. A malformed file is an error naming the file,
//! line and column; so is a path that is not a regular file or holds more than 4 MiB
//! (`tools_core::bounded_read`: a link to `/dev/zero` is refused, not read). Unknown keys are warned about (a typo should not silently do
//! nothing) but do not stop the host.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tools_core::approval::ApprovalSettings;
use tools_core::bounded_read;
use tools_core::code_exec::CodeExecutionSettings;
use tools_core::cron::CronSettings;
use tools_core::environments::TerminalSettings;
use tools_core::settings::{
    ClarifySettings, CoreSettings, FileToolSettings, MemorySettings, ToolOutputSettings,
};
use tools_core::skills::SkillsSettings;

use crate::agent::{AgentSettings, DelegationSettings, ModelSettings};
use crate::dispatch::DispatchSettings;
use crate::mcp::McpServerSettings;
use crate::plugins::PluginsSettings;
use crate::results_prune::ResultsSettings;
use crate::toolsets::ToolsetsSettings;

/// The whole configuration file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// `[toolsets]` (or Hermes' bare list `toolsets = [...]`) — which toolsets are
    /// enabled or disabled, and user-defined toolsets.
    pub toolsets: ToolsetsSettings,
    /// `[tool_output]` — in-tool output caps.
    pub tool_output: ToolOutputSettings,
    /// `[approvals]` — dangerous-command approval.
    pub approvals: ApprovalSettings,
    /// `[dispatch]` — batch concurrency, deadlines, result limits.
    pub dispatch: DispatchSettings,
    /// `[mcp_servers.NAME]` — external MCP servers whose tools are registered.
    pub mcp_servers: std::collections::BTreeMap<String, McpServerSettings>,
    /// `[plugins]` — native plugin discovery, enable/disable, limits, settings.
    pub plugins: PluginsSettings,
    /// `[memory]` — the memory tool's character budgets.
    pub memory: MemorySettings,
    /// `[clarify]` — how long `clarify` waits for an answer.
    pub clarify: ClarifySettings,
    /// `[terminal]` — execution backend, limits, per-backend sections.
    pub terminal: TerminalSettings,
    /// `[files]` — secret-file patterns of the file tools.
    pub files: FileToolSettings,
    /// `[skills]` — skill sources and disabled skills.
    pub skills: SkillsSettings,
    /// `[model]`: the model the agent loop talks to.
    pub model: ModelSettings,
    /// `[agent]`: the agent loop's limits.
    pub agent: AgentSettings,
    /// `[delegation]`: `delegate_task` limits.
    pub delegation: DelegationSettings,
    /// `[code_execution]` — `execute_code` limits and the tools scripts may call.
    pub code_execution: CodeExecutionSettings,
    /// `[cron]` — scheduled jobs: time zone, run timeout, history, delivery targets.
    pub cron: CronSettings,
    /// `[results]` — size and age bounds of `<home>/results`.
    pub results: ResultsSettings,
}

impl Config {
    /// The sections tools-core reads.
    pub fn core_settings(&self) -> CoreSettings {
        CoreSettings {
            tool_output: self.tool_output.clone(),
            approvals: self.approvals.clone(),
            memory: self.memory.clone(),
            clarify: self.clarify.clone(),
            terminal: self.terminal.clone(),
            files: self.files.clone(),
            skills: self.skills.clone(),
            code_execution: self.code_execution.clone(),
            cron: self.cron.clone(),
        }
    }
}

/// A configuration that was loaded, with where it came from.
#[derive(Clone, Debug)]
pub struct LoadedConfig {
    /// The parsed configuration.
    pub config: Config,
    /// The file it came from; `None` when built-in defaults were used.
    pub path: Option<PathBuf>,
    /// Dotted keys present in the file but unknown to toolhost.
    pub unknown_keys: Vec<String>,
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists (or was named explicitly) but cannot be read, is not a regular
    /// file, or is larger than `tools_core::bounded_read::CONFIG_LIMIT`.
    #[error("config: {0}")]
    Read(#[source] bounded_read::BoundedReadError),
    /// The file is not valid TOML or has a value of the wrong type.
    #[error("{path}:{line}:{column}: {message}", path = .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
}

impl LoadedConfig {
    /// Load `explicit` (must exist) or else `default_path` (may be missing: defaults).
    pub fn load(explicit: Option<&Path>, default_path: &Path) -> Result<Self, ConfigError> {
        let (path, must_exist) = match explicit {
            Some(path) => (path, true),
            None => (default_path, false),
        };
        match bounded_read::read_to_string(path, bounded_read::CONFIG_LIMIT) {
            Ok(text) => Self::parse(&text, path),
            Err(err) if err.is_not_found() && !must_exist => Ok(LoadedConfig {
                config: Config::default(),
                path: None,
                unknown_keys: Vec::new(),
            }),
            Err(source) => Err(ConfigError::Read(source)),
        }
    }

    /// Parse `text` as the contents of `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let mut unknown_keys = Vec::new();
        let deserializer =
            toml::Deserializer::parse(text).map_err(|e| parse_error(text, path, &e))?;
        let config: Config = serde_ignored::deserialize(deserializer, |key| {
            unknown_keys.push(key.to_string());
        })
        .map_err(|e| parse_error(text, path, &e))?;
        unknown_keys.sort();
        for key in &unknown_keys {
            tracing::warn!(config = %path.display(), key = %key, "unknown configuration key (ignored)");
        }
        Ok(LoadedConfig {
            config,
            path: Some(path.to_path_buf()),
            unknown_keys,
        })
    }
}

fn parse_error(text: &str, path: &Path, err: &toml::de::Error) -> ConfigError {
    let (line, column) = err
        .span()
        .map(|span| line_column(text, span.start))
        .unwrap_or((1, 1));
    ConfigError::Parse {
        path: path.to_path_buf(),
        line,
        column,
        message: err.message().trim().to_string(),
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_default_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = LoadedConfig::load(None, &dir.path().join("config.toml")).unwrap();
        assert!(loaded.path.is_none());
        assert_eq!(loaded.config.tool_output.max_bytes, 50_000);
    }

    #[test]
    fn missing_explicit_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope.toml");
        let err = LoadedConfig::load(Some(&path), &path).unwrap_err();
        assert!(err.to_string().contains("nope.toml"), "{err}");
    }

    #[test]
    fn a_config_linked_to_dev_zero_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = LoadedConfig::load(None, &path).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn syntax_error_names_file_line_and_column() {
        let path = Path::new("/etc/toolhost/config.toml");
        let err = LoadedConfig::parse("[tool_output]\nmax_bytes = = 3\n", path).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/etc/toolhost/config.toml:2:"), "{text}");
    }

    #[test]
    fn type_error_names_line() {
        let path = Path::new("c.toml");
        let err = LoadedConfig::parse("\n[tool_output]\nmax_bytes = \"big\"\n", path).unwrap_err();
        match err {
            ConfigError::Parse { line, .. } => assert_eq!(line, 3),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn unknown_keys_are_reported_not_fatal() {
        let loaded = LoadedConfig::parse(
            "[tool_output]\nmax_bytez = 3\n[nonsense]\nx = 1\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(
            loaded.unknown_keys,
            vec!["nonsense", "tool_output.max_bytez"]
        );
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncdé f", 8), (2, 5));
    }
}
