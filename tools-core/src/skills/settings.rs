//! `[skills]` in `config.toml`: where skills come from and which are hidden.
//!
//! ```toml
//! [skills]
//! project = false                   # read ./.toolhost/skills (or TOOLHOST_ENABLE_PROJECT_SKILLS=1)
//! extra_dirs = ["~/.claude/skills"] # more skill folders, searched last (they win)
//! disabled = ["some-skill"]         # never listed nor loaded
//! bundled = true                    # the skills shipped with toolhost
//! ```

use std::path::PathBuf;

use serde::Deserialize;

/// Environment variable that turns project skills on (like project plugins).
pub const PROJECT_ENV: &str = "TOOLHOST_ENABLE_PROJECT_SKILLS";

/// `[skills]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct SkillsSettings {
    /// Read `./.toolhost/skills` (a cloned repository's skills are opt-in).
    pub project: bool,
    /// More skill directories (`~/` allowed), after the others: a skill here wins.
    /// Hermes calls these `external_dirs`.
    #[serde(alias = "external_dirs")]
    pub extra_dirs: Vec<PathBuf>,
    /// Skill names never listed nor loaded.
    pub disabled: Vec<String>,
    /// Offer the skills bundled with toolhost.
    pub bundled: bool,
}

impl Default for SkillsSettings {
    fn default() -> Self {
        SkillsSettings {
            project: false,
            extra_dirs: Vec::new(),
            disabled: Vec::new(),
            bundled: true,
        }
    }
}

impl SkillsSettings {
    /// Whether project skills are read: the setting, or the environment variable.
    pub fn project_enabled(&self) -> bool {
        self.project
            || std::env::var(PROJECT_ENV)
                .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
    }
}

/// `~/x` → `<user home>/x`; anything else unchanged.
pub fn expand_tilde(path: &std::path::Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => dirs::home_dir().map_or_else(|| path.to_path_buf(), |home| home.join(rest)),
        Err(_) => path.to_path_buf(),
    }
}
