//! toolhost's store for "always" approvals: `approvals.command_allowlist` in
//! `config.toml`, edited in place so the user's comments and layout survive.
//!
//! The approval engine (`toolhost-approval`) only knows the [`AllowlistStore`] trait;
//! this is the implementation the host gives it (the file is the host's `--config`, by
//! default `<home>/config.toml`).

use std::path::{Path, PathBuf};

use crate::approval::{ALLOWLIST_KEYS, AllowlistStore, StoreError};
use crate::config_edit;

/// "Always" approvals appended to a `config.toml`.
#[derive(Clone, Debug)]
pub struct ConfigAllowlist {
    config_file: PathBuf,
}

impl ConfigAllowlist {
    /// Save to `config_file` (created on first save if missing).
    pub fn new(config_file: impl Into<PathBuf>) -> Self {
        ConfigAllowlist {
            config_file: config_file.into(),
        }
    }

    /// The file edited.
    pub fn config_file(&self) -> &Path {
        &self.config_file
    }
}

impl AllowlistStore for ConfigAllowlist {
    fn add(&self, key: &str) -> Result<(), StoreError> {
        config_edit::add_to_array(&self.config_file, &ALLOWLIST_KEYS, key)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::approval::{
        ApprovalEngine, ApprovalGate, ApprovalSettings, CommandCheck, GateDecision, NoObserver,
        Surfaces,
    };

    fn check(command: &str) -> CommandCheck {
        CommandCheck {
            command: command.to_string(),
            session_key: "s1".into(),
            task_id: "t".into(),
            tool_call_id: "call_1".into(),
            env_type: "local".into(),
            host_access: true,
        }
    }

    fn saved_settings(config: &Path) -> ApprovalSettings {
        let text = std::fs::read_to_string(config).unwrap();
        let table: toml::Table = toml::from_str(&text).unwrap();
        table["approvals"].clone().try_into().unwrap()
    }

    #[test]
    fn adds_the_key_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            "# my settings\n[approvals]\n# rules I trust\ncommand_allowlist = []  # keep\n",
        )
        .unwrap();
        ConfigAllowlist::new(&config).add("git.force_push").unwrap();
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(
            text.contains("# my settings")
                && text.contains("# rules I trust")
                && text.contains("# keep"),
            "{text}"
        );
        assert_eq!(
            saved_settings(&config).command_allowlist,
            vec!["git.force_push"]
        );
    }

    #[test]
    fn an_engine_built_from_the_saved_file_approves_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        ConfigAllowlist::new(&config).add("git.force_push").unwrap();
        // Manual mode with nobody to ask: only the saved key can approve.
        let mut settings = saved_settings(&config);
        settings.mode = Some("manual".into());
        let engine = ApprovalEngine::new(
            settings,
            Arc::new(ConfigAllowlist::new(&config)),
            Arc::new(NoObserver),
            Surfaces::none(),
        );
        let decision = engine.check(&check("git push -f origin main"));
        assert!(
            matches!(decision, GateDecision::Approved { .. }),
            "{decision:?}"
        );
    }

    #[test]
    fn a_file_that_is_not_toml_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "[approvals\n").unwrap();
        assert!(ConfigAllowlist::new(&config).add("git.force_push").is_err());
    }
}
