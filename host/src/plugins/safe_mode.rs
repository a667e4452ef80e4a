//! `TOOLHOST_SAFE_MODE=1`: start with nothing but toolhost's own code.
//!
//! Like Hermes' `HERMES_SAFE_MODE`, safe mode is the way back into a host that a
//! third-party plugin or MCP server breaks: user, project, installed and pip plugins
//! (native and Python) are listed as disabled and never loaded or imported, and no MCP
//! server is started (`crate::mcp::discovery`). Bundled plugins — built with toolhost —
//! still load. See docs/plugin-isolation.md ("Safe mode").

use std::sync::Once;

use super::discovery::PluginSource;

/// The variable that turns safe mode on (shared with MCP discovery).
pub const SAFE_MODE_VAR: &str = crate::mcp::discovery::SAFE_MODE_VAR;

/// The reason recorded for every plugin safe mode skips.
pub const SKIPPED_REASON: &str =
    "safe mode (TOOLHOST_SAFE_MODE): third-party plugins are not loaded";

/// True when `value` (of [`SAFE_MODE_VAR`]) turns safe mode on.
pub fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// True when this process runs in safe mode.
pub fn active() -> bool {
    std::env::var(SAFE_MODE_VAR).is_ok_and(|v| is_truthy(&v))
}

/// True when safe mode keeps a plugin from `source` out of the process.
pub fn skips(source: PluginSource) -> bool {
    source != PluginSource::Bundled
}

/// Say once per process, on stderr, that safe mode is on and what it leaves out.
pub fn announce() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        eprintln!(
            "toolhost: safe mode ({SAFE_MODE_VAR} is set): only bundled plugins are loaded \
             and no MCP servers are started"
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthy_values_turn_safe_mode_on() {
        for (value, on) in [
            ("1", true),
            ("true", true),
            (" YES ", true),
            ("on", true),
            ("0", false),
            ("", false),
            ("false", false),
            ("off", false),
        ] {
            assert_eq!(is_truthy(value), on, "{value:?}");
        }
    }

    #[test]
    fn only_bundled_plugins_survive_safe_mode() {
        assert!(!skips(PluginSource::Bundled));
        for source in [
            PluginSource::User,
            PluginSource::Project,
            PluginSource::Installed,
            PluginSource::Pip,
        ] {
            assert!(skips(source), "{source}");
        }
    }
}
