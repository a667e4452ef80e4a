//! Hermes Agent's Python plugins, running unchanged in a child Python process behind the
//! same registry, hooks and limits as native process plugins.
//!
//! Two kinds of Hermes plugin are found (docs/python-plugins.md):
//! - **directory plugins**: `<dir>/<name>/plugin.yaml` (or `plugin.yml`) with an
//!   `__init__.py` exposing `register(ctx)`, in the same directories as native plugins
//!   (`<home>/plugins`, `./.toolhost/plugins` when project plugins are on, the installed
//!   directories); a directory with a `plugin.toml` is a native plugin;
//! - **pip packages** declaring an entry point in the `hermes_agent.plugins` group of the
//!   configured interpreter's environment (source `pip`, scanned last, so it wins name
//!   collisions as in Hermes).
//!
//! Like Hermes, a Python plugin loads only when `plugins.enabled` lists it. Each one runs
//! in its own `python -c <hermes_host.py> <spec>` child ([`shim`]), which imports it
//! there — its import-time side effects never happen in the host — calls `register(ctx)`
//! and answers over the framed protocol of native plugin hosts; so restart with
//! backoff, timeouts that kill, `max_crashes`, the memory cap and the confinement all
//! apply unchanged. What a plugin registers that toolhost cannot serve is listed as
//! "unsupported: …" by `plugins info`.

pub mod hermes_home;
pub mod load;
pub mod manifest;
pub mod pep440;
pub mod shim;

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `[plugins.python]`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct PythonSettings {
    /// The Python interpreter that runs Python plugins (and whose environment is
    /// scanned for entry points). Default: `$VIRTUAL_ENV/bin/python` when a virtualenv
    /// is active, else `python3` on `PATH`.
    pub interpreter: Option<PathBuf>,
    /// Do not look for pip-installed plugins (`hermes_agent.plugins` entry points).
    pub no_entry_points: bool,
    /// Python plugins that may replace core tools (`register_tool(..., override=True)`);
    /// Hermes' `plugins.entries.<name>.allow_tool_override`.
    pub allow_tool_override: Vec<String>,
    /// What `ctx.profile_name` answers (default `default`).
    pub profile_name: Option<String>,
}

impl PythonSettings {
    /// The interpreter to run: the configured one (home-relative paths resolved), else
    /// the active virtualenv's, else `python3` found on `PATH`; `None` when there is none.
    pub fn resolve_interpreter(&self, home: &Path) -> Option<PathBuf> {
        if let Some(path) = &self.interpreter {
            if path.components().count() == 1 && !path.starts_with("~") {
                return find_on_path(path);
            }
            return Some(super::config::resolve_path(home, path));
        }
        if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
            let python = PathBuf::from(venv).join("bin").join("python");
            if python.is_file() {
                return Some(python);
            }
        }
        find_on_path(Path::new("python3"))
    }

    /// True when plugin `name` may replace core tools.
    pub fn may_override(&self, name: &str) -> bool {
        self.allow_tool_override.iter().any(|n| n == name)
    }
}

/// `name` looked up in `$PATH`.
fn find_on_path(name: &Path) -> Option<PathBuf> {
    if name.components().count() != 1 {
        return Some(name.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_interpreter_paths_resolve_against_home() {
        let config = PythonSettings {
            interpreter: Some(PathBuf::from("venv/bin/python")),
            ..PythonSettings::default()
        };
        assert_eq!(
            config.resolve_interpreter(Path::new("/h")),
            Some(PathBuf::from("/h/venv/bin/python"))
        );
        let config = PythonSettings {
            interpreter: Some(PathBuf::from("sh")),
            ..PythonSettings::default()
        };
        assert!(
            config
                .resolve_interpreter(Path::new("/h"))
                .is_some_and(|p| p.is_absolute())
        );
        let config = PythonSettings {
            interpreter: Some(PathBuf::from("/usr/bin/python3.11")),
            ..PythonSettings::default()
        };
        assert_eq!(
            config.resolve_interpreter(Path::new("/h")),
            Some(PathBuf::from("/usr/bin/python3.11"))
        );
    }

    #[test]
    fn bare_names_are_found_on_path() {
        let found = find_on_path(Path::new("sh")).expect("sh is on PATH");
        assert!(found.is_absolute(), "{}", found.display());
        assert_eq!(find_on_path(Path::new("no-such-program-toolhost")), None);
    }

    #[test]
    fn config_parses() {
        let config: PythonSettings = toml::from_str(
            "interpreter = \"/opt/venv/bin/python\"\nallow_tool_override = [\"x\"]\n",
        )
        .unwrap();
        assert!(config.may_override("x"));
        assert!(!config.may_override("y"));
        assert!(!config.no_entry_points);
    }
}
