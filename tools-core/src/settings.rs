//! Configuration sections that tools-core reads. The host parses `config.toml` and
//! hands these to [`crate::services::CoreServices`]; missing sections mean defaults.

use serde::Deserialize;

use crate::approval::ApprovalSettings;
#[cfg(unix)]
use crate::code_exec::CodeExecutionSettings;
use crate::cron::CronSettings;
use crate::environments::TerminalSettings;
use crate::skills::SkillsSettings;

/// `[tool_output]`: caps applied inside tools.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolOutputSettings {
    /// Foreground terminal output cap (characters, head 40 % + tail 60 %).
    pub max_bytes: usize,
    /// `read_file` page size (lines).
    pub max_lines: usize,
    /// `read_file` per-line cap (characters).
    pub max_line_length: usize,
    /// `read_file` cap on one page (characters, Hermes' `file_read_max_chars`): a
    /// longer page is cut at a line boundary and continues at `next_offset`.
    pub max_read_chars: usize,
}

impl Default for ToolOutputSettings {
    fn default() -> Self {
        ToolOutputSettings {
            max_bytes: 50_000,
            max_lines: 2_000,
            max_line_length: 2_000,
            max_read_chars: 100_000,
        }
    }
}

/// `[memory]`: the `memory` tool's budgets.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct MemorySettings {
    /// Character budget of the agent's notes (`MEMORY.md`).
    pub memory_char_limit: usize,
    /// Character budget of the user profile (`USER.md`).
    pub user_char_limit: usize,
}

impl Default for MemorySettings {
    fn default() -> Self {
        MemorySettings {
            memory_char_limit: 2_200,
            user_char_limit: 1_375,
        }
    }
}

/// `[clarify]`: the `clarify` tool.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ClarifySettings {
    /// Seconds to wait for the user's answer; 0 waits forever.
    pub timeout: u64,
}

impl Default for ClarifySettings {
    fn default() -> Self {
        ClarifySettings { timeout: 120 }
    }
}

/// `[files]`: what the file tools (`read_file`, `write_file`, `patch`, `search_files`)
/// treat as secret.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct FileToolSettings {
    /// Secret-file patterns, matched on the canonical target (symlinks followed),
    /// case-insensitively, in order, the last match winning. A pattern without `/`
    /// matches the file name (`.env.*`, `*.pem`); one with `/` matches the whole path
    /// (`~/.aws/credentials`, `**/secrets/*`; `~/` is the user's home); a leading `!`
    /// makes a match not secret (`!.env.example`). Setting the list replaces the
    /// default one.
    pub secret_files: Vec<String>,
}

/// The default secret-file patterns (see [`FileToolSettings::secret_files`]).
pub const DEFAULT_SECRET_FILES: &[&str] = &[
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "!.env.example",
    "!.env.sample",
    "!.env.template",
    "!.env.dist",
    "!*.env.example",
    "!*.env.sample",
    "!*.env.template",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*.ppk",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    "credentials.json",
    "service-account*.json",
    "~/.aws/credentials",
    "~/.docker/config.json",
    "~/.kube/config",
    "~/.config/gh/hosts.yml",
    "**/.ssh/*",
    "!**/.ssh/*.pub",
    "!**/.ssh/known_hosts",
    "!**/.ssh/config",
];

impl Default for FileToolSettings {
    fn default() -> Self {
        FileToolSettings {
            secret_files: DEFAULT_SECRET_FILES.iter().map(|p| p.to_string()).collect(),
        }
    }
}

/// Every section tools-core cares about.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct CoreSettings {
    /// `[tool_output]`.
    pub tool_output: ToolOutputSettings,
    /// `[approvals]`.
    pub approvals: ApprovalSettings,
    /// `[memory]`.
    pub memory: MemorySettings,
    /// `[clarify]`.
    pub clarify: ClarifySettings,
    /// `[terminal]` (backend, limits, per-backend sections).
    pub terminal: TerminalSettings,
    /// `[files]` (secret-file patterns).
    pub files: FileToolSettings,
    /// `[skills]` (skill sources, disabled skills).
    pub skills: SkillsSettings,
    /// `[code_execution]` (`execute_code` limits and allowed tools).
    #[cfg(unix)]
    pub code_execution: CodeExecutionSettings,
    /// `[cron]` (time zone, run timeout, history, delivery targets).
    pub cron: CronSettings,
}
