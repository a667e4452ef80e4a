//! Out-of-process plugins: a native plugin that runs in a child process
//! (`toolhost plugin-host`, the same binary) behind the same registry, hooks and
//! limits as an in-process one.
//!
//! Which plugins run where is [`Isolation`], chosen by [`choose`]: `[plugins.isolation]`
//! per name, then the manifest's `isolation = "process"`, then in-process for bundled
//! plugins, then `plugins.default_isolation` (`process` unless configured). The child ([`child`]) loads the library with the same
//! loader and checks and answers over a framed pipe ([`protocol`]); the host side
//! ([`plugin::ProcessPlugin`]) turns a crash into an error naming the signal, restarts
//! the child with backoff, kills it when a call passes its timeout, and gives up after
//! `plugins.max_crashes`.

pub mod child;
pub mod exit;
pub mod launch;
pub mod memory;
pub mod nested;
pub mod plugin;
pub mod protocol;
pub mod shutdown;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use launch::Launch;
pub use plugin::{CallbackHandler, ProcessFault, ProcessLimits, ProcessPlugin};

use super::discovery::PluginSource;

/// Where a plugin's code runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Loaded into the host process (fastest; a crash takes the host down).
    #[default]
    InProcess,
    /// In its own `toolhost plugin-host` child process.
    Process,
}

impl Isolation {
    /// The name used in config and listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::InProcess => "in-process",
            Isolation::Process => "process",
        }
    }

    /// The isolation named `name`.
    pub fn parse(name: &str) -> Option<Isolation> {
        match name {
            "in-process" => Some(Isolation::InProcess),
            "process" => Some(Isolation::Process),
            _ => None,
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The isolation of plugin `name` from `source`: the config's per-name choice, else
/// `process` when the manifest asks for it, else in-process for bundled plugins, else
/// the config's default. A manifest cannot ask for `in-process`: where a third-party
/// plugin's code runs is the user's choice, not its author's (docs/plugin-isolation.md).
pub fn choose(
    config: &super::PluginsSettings,
    name: &str,
    source: PluginSource,
    manifest: Option<Isolation>,
) -> Isolation {
    if let Some(chosen) = config.isolation.get(name) {
        return *chosen;
    }
    if manifest == Some(Isolation::Process) {
        return Isolation::Process;
    }
    if source == PluginSource::Bundled {
        return Isolation::InProcess;
    }
    config.default_isolation
}

/// The variable naming the binary that serves `plugin-host` (for embedders and tests
/// whose own executable is not `toolhost`).
pub const HOST_BINARY_ENV: &str = "TOOLHOST_PLUGIN_HOST";

/// The `toolhost` binary to start plugin hosts with: `$TOOLHOST_PLUGIN_HOST`, else this
/// executable when it is `toolhost`, else a `toolhost` beside it or one directory up
/// (test and bench binaries live in `target/<profile>/deps`).
pub fn host_binary() -> PathBuf {
    if let Some(path) = std::env::var_os(HOST_BINARY_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("toolhost"));
    let file = format!("toolhost{}", std::env::consts::EXE_SUFFIX);
    if exe.file_name().is_some_and(|n| n == file.as_str()) {
        return exe;
    }
    let dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    [dir.join(&file), dir.join("..").join(&file)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or(exe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::PluginsSettings;

    #[test]
    fn isolation_choice_table() {
        let config: PluginsSettings = toml::from_str(
            "default_isolation = \"process\"\n[isolation]\npinned = \"in-process\"\n",
        )
        .unwrap();
        let default = PluginsSettings::default();
        let cases = [
            (
                &config,
                "pinned",
                PluginSource::User,
                Some(Isolation::Process),
                Isolation::InProcess,
            ),
            (
                &config,
                "x",
                PluginSource::User,
                Some(Isolation::InProcess),
                Isolation::Process,
            ),
            (&config, "x", PluginSource::User, None, Isolation::Process),
            (
                &config,
                "x",
                PluginSource::Bundled,
                None,
                Isolation::InProcess,
            ),
            (&default, "x", PluginSource::User, None, Isolation::Process),
            (
                &default,
                "x",
                PluginSource::Installed,
                Some(Isolation::InProcess),
                Isolation::Process,
            ),
            (
                &default,
                "x",
                PluginSource::Bundled,
                Some(Isolation::Process),
                Isolation::Process,
            ),
        ];
        for (config, name, source, manifest, expected) in cases {
            assert_eq!(
                choose(config, name, source, manifest),
                expected,
                "{name} {source}"
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for isolation in [Isolation::InProcess, Isolation::Process] {
            assert_eq!(Isolation::parse(isolation.as_str()), Some(isolation));
        }
        assert_eq!(Isolation::parse("thread"), None);
    }
}
