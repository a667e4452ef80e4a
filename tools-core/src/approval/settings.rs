//! `[approvals]` configuration.
//!
//! ```toml
//! [approvals]
//! mode = "manual"            # manual (default) | smart | off | strict
//! timeout = 60               # seconds a human has to answer
//! deny = ["sudo *", "*curl*|*sh*"]   # globs: blocked before anything else, in every mode
//! command_allowlist = ["git.force_push"]   # rule keys approved for good ("always")
//! no_human = "deny"          # deny (default) | approve: when nobody can be asked
//!
//! [approvals.smart]
//! base_url = "https://api.openai.com/v1"
//! model = "gpt-4o-mini"
//! api_key_env = "OPENAI_API_KEY"
//! timeout = 30
//! ```

use serde::Deserialize;

/// The approval mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Ask a human for every flagged command (default).
    #[default]
    Manual,
    /// Ask a model first; it may approve, deny, or escalate to a human.
    Smart,
    /// Run flagged commands without asking (the hardline floor and deny rules still apply).
    Off,
    /// Only commands proven read-only run without asking; everything else needs a human
    /// each time (no session or permanent approval), and nobody to ask means denied.
    Strict,
}

/// What happens when a flagged command needs approval and no human can be asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoHumanPolicy {
    /// Block it with a message telling the model why (default).
    #[default]
    Deny,
    /// Run it (Hermes' behaviour; only for trusted batch jobs).
    Approve,
}

/// `[approvals.smart]`: the OpenAI-compatible model that pre-screens flagged commands.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct SmartSettings {
    /// Base URL of the API (`.../v1`); `/chat/completions` is appended. Falls back to
    /// `$OPENAI_BASE_URL`, then `https://api.openai.com/v1`.
    pub base_url: Option<String>,
    /// Model name. Falls back to `$TOOLHOST_APPROVAL_MODEL`, then `gpt-4o-mini`.
    pub model: Option<String>,
    /// Environment variable holding the API key (preferred).
    pub api_key_env: String,
    /// The API key itself, when it cannot come from the environment (keep config.toml
    /// private then). `api_key_env` wins when both are set.
    pub api_key: Option<String>,
    /// Request timeout, seconds.
    pub timeout: u64,
}

impl Default for SmartSettings {
    fn default() -> Self {
        SmartSettings {
            base_url: None,
            model: None,
            api_key_env: "OPENAI_API_KEY".to_string(),
            api_key: None,
            timeout: 30,
        }
    }
}

/// `[approvals]` in `config.toml`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ApprovalSettings {
    /// `manual` (default), `smart`, `off` or `strict`; see [`ApprovalSettings::mode`].
    pub mode: Option<String>,
    /// Seconds a human has to answer a prompt (default 60).
    pub timeout: u64,
    /// Deny globs, matched against the command and against every command in it with the
    /// executable's path removed (`/usr/bin/sudo x` is matched as `sudo x`).
    pub deny: Vec<String>,
    /// Rule keys approved permanently (what "always" writes). Entries that are not rule
    /// keys are whole-command globs (`"podman *"`), honoured only for a single plain
    /// command without shell operators.
    pub command_allowlist: Vec<String>,
    /// When nobody can be asked.
    pub no_human: NoHumanPolicy,
    /// Smart-mode model.
    pub smart: SmartSettings,
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings {
            mode: None,
            timeout: 60,
            deny: Vec::new(),
            command_allowlist: Vec::new(),
            no_human: NoHumanPolicy::Deny,
            smart: SmartSettings::default(),
        }
    }
}

impl ApprovalSettings {
    /// The mode; unknown values mean `manual` (logged), never `off`.
    pub fn mode(&self) -> ApprovalMode {
        match self.mode.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("manual") | Some("ask") => ApprovalMode::Manual,
            Some("smart") => ApprovalMode::Smart,
            Some("off") | Some("yolo") => ApprovalMode::Off,
            Some("strict") => ApprovalMode::Strict,
            Some(other) => {
                tracing::warn!(mode = other, "unknown approvals.mode; using manual");
                ApprovalMode::Manual
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_defaults() {
        let s: ApprovalSettings = toml::from_str("").unwrap();
        assert_eq!(s, ApprovalSettings::default());
        assert_eq!(s.mode(), ApprovalMode::Manual);
        assert_eq!(s.timeout, 60);
        let s: ApprovalSettings = toml::from_str(
            "mode = \"smart\"\ndeny = [\"sudo *\"]\nno_human = \"approve\"\n[smart]\nmodel = \"m\"\n",
        )
        .unwrap();
        assert_eq!(s.mode(), ApprovalMode::Smart);
        assert_eq!(s.deny, vec!["sudo *"]);
        assert_eq!(s.no_human, NoHumanPolicy::Approve);
        assert_eq!(s.smart.model.as_deref(), Some("m"));
        assert_eq!(s.smart.api_key_env, "OPENAI_API_KEY");
        let s = ApprovalSettings {
            mode: Some("sometimes".into()),
            ..ApprovalSettings::default()
        };
        assert_eq!(s.mode(), ApprovalMode::Manual);
    }
}
