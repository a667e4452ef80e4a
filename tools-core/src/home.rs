//! The toolhost home directory: `config.toml`, `plugins/`, and state.
//!
//! Resolution order: an explicit path (`--home`), then `TOOLHOST_HOME`, then
//! `<user config dir>/toolhost` (e.g. `~/.config/toolhost`). Resolving never creates
//! anything; directories are made when something is first written (Hermes creates its
//! home on import — merely listing tools should not touch the disk).

use std::path::{Path, PathBuf};

/// Environment variable that overrides the home directory.
pub const HOME_ENV: &str = "TOOLHOST_HOME";

/// The home directory could not be determined.
#[derive(Debug, thiserror::Error)]
#[error("cannot determine the toolhost home: set TOOLHOST_HOME or pass --home")]
pub struct HomeError;

/// Paths inside the toolhost home.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// Use `root` as the home.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Home { root: root.into() }
    }

    /// `explicit`, else `$TOOLHOST_HOME`, else `<config dir>/toolhost`.
    pub fn resolve(explicit: Option<&Path>) -> Result<Self, HomeError> {
        if let Some(path) = explicit {
            return Ok(Home::at(path));
        }
        if let Some(path) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Home::at(PathBuf::from(path)));
        }
        dirs::config_dir()
            .map(|dir| Home::at(dir.join("toolhost")))
            .ok_or(HomeError)
    }

    /// The home directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<home>/config.toml`.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `<home>/plugins` — user plugins, one directory each.
    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join("plugins")
    }

    /// `<home>/state` — todo lists, memory, approvals, process checkpoints.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join("state")
    }

    /// `<home>/skills` — the user's skills, one directory each.
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// `<home>/results` — tool results too large for the model's context.
    pub fn results_dir(&self) -> PathBuf {
        self.root.join("results")
    }

    /// `<home>/scripts` — scripts cron jobs run.
    pub fn scripts_dir(&self) -> PathBuf {
        self.root.join("scripts")
    }

    /// The home as given and, when it differs, with symlinks resolved (its nearest
    /// existing ancestor's real path): guards compare a path with both, so a symlinked
    /// `TOOLHOST_HOME` protects its real path too (docs/terminal.md, "Canonical home").
    pub fn spellings(&self) -> Vec<Home> {
        let real = crate::files::canonical_local(&self.root).unwrap_or_else(|| self.root.clone());
        if real == self.root {
            vec![self.clone()]
        } else {
            vec![self.clone(), Home::at(real)]
        }
    }
}
