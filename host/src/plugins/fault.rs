//! [`PluginFault`]: why a plugin's availability check or hook gave no usable answer.
//!
//! Tool calls report through [`tools_core::ToolError`], which the model reads; checks and
//! hooks answer the host itself, which needs to tell a plugin that is switched off from
//! one that is slow, crashed or said no — a disabled plugin no longer has a say in
//! `pre_tool_call`, while a failing one blocks the call (fail closed).

/// Why a check or hook of a plugin gave no answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PluginFault {
    /// The plugin was taken out of service (too many panics).
    #[error("plugin {plugin} is disabled: {reason}")]
    Disabled {
        /// The plugin.
        plugin: String,
        /// Why it was disabled.
        reason: String,
    },
    /// Too many earlier calls are still running past their timeout.
    #[error("plugin {plugin} has {count} calls still running past their timeout")]
    Hung {
        /// The plugin.
        plugin: String,
        /// Calls still running.
        count: u32,
    },
    /// This check or hook ran past its timeout.
    #[error("{what} timed out after {seconds}s")]
    Timeout {
        /// `check` or `<kind> hook`.
        what: String,
        /// The limit.
        seconds: f64,
    },
    /// The plugin's code panicked (the SDK caught it).
    #[error("{what} panicked: {message}")]
    Panicked {
        /// `check` or `<kind> hook`.
        what: String,
        /// The panic message.
        message: String,
    },
    /// The tool's availability check says it cannot be used now.
    #[error("{0}")]
    Unavailable(String),
    /// The plugin answered with an error, or the call could not be made.
    #[error("{kind}: {message}")]
    Failed {
        /// The error kind (`invalid_json`, `unknown_hook`, `executor`, ...).
        kind: String,
        /// What went wrong.
        message: String,
    },
}

impl PluginFault {
    /// A failure of kind `kind`.
    pub fn failed(kind: &str, message: impl Into<String>) -> Self {
        PluginFault::Failed {
            kind: kind.to_string(),
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_plugin_and_what_failed() {
        let cases = [
            (
                PluginFault::Disabled {
                    plugin: "p".into(),
                    reason: "3 panics".into(),
                },
                "plugin p is disabled: 3 panics",
            ),
            (
                PluginFault::Hung {
                    plugin: "p".into(),
                    count: 2,
                },
                "plugin p has 2 calls still running past their timeout",
            ),
            (
                PluginFault::Timeout {
                    what: "check".into(),
                    seconds: 0.5,
                },
                "check timed out after 0.5s",
            ),
            (
                PluginFault::Panicked {
                    what: "check".into(),
                    message: "boom".into(),
                },
                "check panicked: boom",
            ),
            (PluginFault::Unavailable("no key".into()), "no key"),
            (
                PluginFault::failed("invalid_json", "eof"),
                "invalid_json: eof",
            ),
        ];
        for (fault, text) in cases {
            assert_eq!(fault.to_string(), text);
        }
    }
}
