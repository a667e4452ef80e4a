//! `[mcp_servers.NAME]`: the configuration of one external MCP server, and its
//! resolution into a concrete transport (with `${VAR}` placeholders filled in).
//!
//! ```toml
//! [mcp_servers.time]                      # stdio: toolhost spawns the server
//! command = "uvx"
//! args = ["mcp-server-time", "--local-timezone=UTC"]
//! env = { TZ = "UTC" }                    # added to a whitelisted parent environment
//! cwd = "/srv"
//! timeout = 120                           # per call, seconds
//! connect_timeout = 30                    # connect + initialize + list tools, seconds
//! tools = { include = ["get_current_time"] }   # include wins over exclude
//! supports_parallel_tool_calls = true
//!
//! [mcp_servers.docs]                      # streamable HTTP
//! url = "https://mcp.example.com/mcp"
//! headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
//! enabled = false
//! ```
//!
//! Booleans also accept Hermes' bool-ish strings (`"yes"`, `"off"`, ...); `tools.include`
//! and `tools.exclude` accept one string or a list. A server whose section is unusable
//! (neither or both of `command` and `url`, an unsupported `transport`) is reported by
//! `toolhost mcp list` and skipped; it never stops the host.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::interpolate::interpolate;
use super::secrets::{Substitution, section_secrets};

/// Default per-call timeout (seconds). Hermes uses 300 s, codex 60 s: long enough for a
/// slow build-type tool, short enough that a hung server is noticed within a turn.
pub const DEFAULT_CALL_TIMEOUT_SECS: f64 = 120.0;
/// Default connect timeout (seconds). Codex's 10 s is a well-known source of spurious
/// failures when `npx`/`uvx` fetch a package on first start; Hermes' 60 s stalls startup.
pub const DEFAULT_CONNECT_TIMEOUT_SECS: f64 = 30.0;
/// Consecutive failures that open the circuit breaker.
pub const DEFAULT_BREAKER_THRESHOLD: u32 = 3;
/// How long an open breaker refuses calls (seconds).
pub const DEFAULT_BREAKER_COOLDOWN_SECS: f64 = 60.0;

/// `[mcp_servers.NAME]` as written in `config.toml`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct McpServerSettings {
    /// stdio: the program to spawn.
    pub command: Option<String>,
    /// stdio: its arguments.
    pub args: Vec<String>,
    /// stdio: variables added to the whitelisted parent environment.
    pub env: BTreeMap<String, String>,
    /// stdio: working directory.
    pub cwd: Option<String>,
    /// Streamable HTTP: the endpoint.
    pub url: Option<String>,
    /// Streamable HTTP: extra request headers.
    pub headers: BTreeMap<String, String>,
    /// Explicit transport (`stdio`, `http`, `streamable_http`); inferred when absent.
    pub transport: Option<String>,
    /// False skips the server.
    #[serde(deserialize_with = "boolish")]
    pub enabled: bool,
    /// Per-call timeout in seconds.
    pub timeout: f64,
    /// Connect + initialize + list-tools timeout in seconds.
    pub connect_timeout: f64,
    /// Which of the server's tools to register.
    pub tools: ToolFilter,
    /// Calls of this server's tools may run concurrently within one batch.
    #[serde(deserialize_with = "boolish")]
    pub supports_parallel_tool_calls: bool,
    /// Consecutive failures that open the circuit breaker.
    pub breaker_threshold: u32,
    /// Seconds an open breaker refuses calls before the next call may try again.
    pub breaker_cooldown: f64,
}

impl Default for McpServerSettings {
    fn default() -> Self {
        McpServerSettings {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            transport: None,
            enabled: true,
            timeout: DEFAULT_CALL_TIMEOUT_SECS,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT_SECS,
            tools: ToolFilter::default(),
            supports_parallel_tool_calls: false,
            breaker_threshold: DEFAULT_BREAKER_THRESHOLD,
            breaker_cooldown: DEFAULT_BREAKER_COOLDOWN_SECS,
        }
    }
}

/// `tools.include` / `tools.exclude`: raw MCP tool names; `tools.resources` /
/// `tools.prompts`: whether the server's resource and prompt tools are registered
/// (Hermes' keys, both on by default; `resources.rs`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolFilter {
    /// When non-empty, only these tools (and `exclude` is ignored).
    #[serde(deserialize_with = "string_or_list")]
    pub include: Vec<String>,
    /// Tools to leave out.
    #[serde(deserialize_with = "string_or_list")]
    pub exclude: Vec<String>,
    /// Register `list_resources` / `read_resource` when the server offers resources.
    #[serde(deserialize_with = "boolish")]
    pub resources: bool,
    /// Register `list_prompts` / `get_prompt` when the server offers prompts.
    #[serde(deserialize_with = "boolish")]
    pub prompts: bool,
}

impl Default for ToolFilter {
    fn default() -> Self {
        ToolFilter {
            include: Vec::new(),
            exclude: Vec::new(),
            resources: true,
            prompts: true,
        }
    }
}

impl ToolFilter {
    /// True when the raw MCP tool `name` should be registered.
    pub fn allows(&self, name: &str) -> bool {
        if !self.include.is_empty() {
            return self.include.iter().any(|n| n == name);
        }
        !self.exclude.iter().any(|n| n == name)
    }
}

/// How to reach a server, with placeholders filled in.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportOptions {
    /// Spawn a process and speak JSON-RPC over its stdin/stdout.
    Stdio {
        /// Program.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// Variables added to the whitelisted parent environment.
        env: BTreeMap<String, String>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// Endpoint.
        url: String,
        /// Extra headers.
        headers: BTreeMap<String, String>,
    },
}

impl TransportOptions {
    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self {
            TransportOptions::Stdio { .. } => "stdio",
            TransportOptions::Http { .. } => "http",
        }
    }
}

/// A server section that is ready to connect.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedServer {
    /// The section name (`NAME` of `[mcp_servers.NAME]`).
    pub name: String,
    /// How to reach it.
    pub transport: TransportOptions,
    /// Per-call timeout.
    pub call_timeout: Duration,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Tool filter.
    pub tools: ToolFilter,
    /// Parallel-safe tools.
    pub parallel: bool,
    /// Failures that open the breaker.
    pub breaker_threshold: u32,
    /// How long the breaker stays open.
    pub breaker_cooldown: Duration,
    /// Values of this section never to be printed (see [`super::secrets`]).
    pub secrets: Vec<String>,
}

/// Why a server section cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ServerSettingsError {
    /// Neither `command` nor `url`.
    #[error("mcp_servers.{server}: set `command` (stdio) or `url` (streamable HTTP)")]
    NoTransport {
        /// Server name.
        server: String,
    },
    /// Both `command` and `url`.
    #[error("mcp_servers.{server}: `command` and `url` are mutually exclusive")]
    BothTransports {
        /// Server name.
        server: String,
    },
    /// `transport` names something we do not speak.
    #[error(
        "mcp_servers.{server}: transport {transport:?} is not supported (use \"stdio\" or \"http\"; the legacy SSE transport is not supported)"
    )]
    UnsupportedTransport {
        /// Server name.
        server: String,
        /// What was asked for.
        transport: String,
    },
    /// `transport` contradicts `command` / `url`.
    #[error("mcp_servers.{server}: transport {transport:?} needs `{needs}`")]
    TransportMismatch {
        /// Server name.
        server: String,
        /// What was asked for.
        transport: String,
        /// The key it needs.
        needs: &'static str,
    },
    /// A timeout is not a positive finite number.
    #[error("mcp_servers.{server}: `{key}` must be a positive number of seconds, got {value}")]
    BadTimeout {
        /// Server name.
        server: String,
        /// `timeout`, `connect_timeout` or `breaker_cooldown`.
        key: &'static str,
        /// The value.
        value: f64,
    },
}

impl McpServerSettings {
    /// Check the section and fill in `${VAR}` placeholders from `lookup`.
    pub fn resolve(
        &self,
        name: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ResolvedServer, ServerSettingsError> {
        let substitutions = std::cell::RefCell::new(Vec::<Substitution>::new());
        let in_http = std::cell::Cell::new(false);
        let recording = |variable: &str| {
            let value = lookup(variable);
            if let Some(value) = &value {
                substitutions.borrow_mut().push(Substitution {
                    variable: variable.to_string(),
                    value: value.clone(),
                    in_http: in_http.get(),
                });
            }
            value
        };
        let fill = |text: &str| interpolate(text, &recording, name);
        let transport = match self.transport.as_deref().map(str::to_ascii_lowercase) {
            None => None,
            Some(t) if t == "stdio" => Some("stdio"),
            Some(t)
                if [
                    "http",
                    "streamable_http",
                    "streamable-http",
                    "streamablehttp",
                ]
                .contains(&t.as_str()) =>
            {
                Some("http")
            }
            Some(_) => {
                return Err(ServerSettingsError::UnsupportedTransport {
                    server: name.to_string(),
                    transport: self.transport.clone().unwrap_or_default(),
                });
            }
        };
        let transport = match (&self.command, &self.url, transport) {
            (Some(_), Some(_), _) => {
                return Err(ServerSettingsError::BothTransports {
                    server: name.to_string(),
                });
            }
            (None, None, _) => {
                return Err(ServerSettingsError::NoTransport {
                    server: name.to_string(),
                });
            }
            (Some(_), None, Some("http")) | (None, Some(_), Some("stdio")) => {
                return Err(ServerSettingsError::TransportMismatch {
                    server: name.to_string(),
                    transport: self.transport.clone().unwrap_or_default(),
                    needs: if transport == Some("http") {
                        "url"
                    } else {
                        "command"
                    },
                });
            }
            (Some(command), None, _) => TransportOptions::Stdio {
                command: fill(command),
                args: self.args.iter().map(|a| fill(a)).collect(),
                env: self.env.iter().map(|(k, v)| (k.clone(), fill(v))).collect(),
                cwd: self.cwd.as_deref().map(|c| PathBuf::from(fill(c))),
            },
            (None, Some(url), _) => {
                in_http.set(true);
                TransportOptions::Http {
                    url: fill(url),
                    headers: self
                        .headers
                        .iter()
                        .map(|(k, v)| (k.clone(), fill(v)))
                        .collect(),
                }
            }
        };
        let secrets = transport_secrets(&substitutions.borrow(), &transport);
        Ok(ResolvedServer {
            name: name.to_string(),
            transport,
            call_timeout: seconds(name, "timeout", self.timeout)?,
            connect_timeout: seconds(name, "connect_timeout", self.connect_timeout)?,
            tools: self.tools.clone(),
            parallel: self.supports_parallel_tool_calls,
            breaker_threshold: self.breaker_threshold.max(1),
            breaker_cooldown: seconds(name, "breaker_cooldown", self.breaker_cooldown)?,
            secrets,
        })
    }
}

/// The secret values of a resolved transport (see [`super::secrets`]).
fn transport_secrets(substitutions: &[Substitution], transport: &TransportOptions) -> Vec<String> {
    match transport {
        TransportOptions::Stdio { env, .. } => {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            section_secrets(substitutions, None, &[], &env)
        }
        TransportOptions::Http { url, headers } => {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            section_secrets(substitutions, Some(url), &headers, &[])
        }
    }
}

fn seconds(server: &str, key: &'static str, value: f64) -> Result<Duration, ServerSettingsError> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| ServerSettingsError::BadTimeout {
            server: server.to_string(),
            key,
            value,
        })
}

/// A bool, or one of Hermes' bool-ish strings.
fn boolish<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum BoolOrString {
        Bool(bool),
        Int(i64),
        Text(String),
    }
    match BoolOrString::deserialize(deserializer)? {
        BoolOrString::Bool(b) => Ok(b),
        BoolOrString::Int(i) => Ok(i != 0),
        BoolOrString::Text(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" | "y" => Ok(true),
            "false" | "no" | "off" | "0" | "n" | "" => Ok(false),
            other => Err(serde::de::Error::custom(format!(
                "expected a boolean, got {other:?}"
            ))),
        },
    }
}

/// One string or a list of strings.
fn string_or_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(name) => vec![name],
        OneOrMany::Many(names) => names,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> McpServerSettings {
        toml::from_str(text).unwrap()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults() {
        let c = parse("command = \"x\"");
        assert!(c.enabled);
        assert!(!c.supports_parallel_tool_calls);
        let r = c.resolve("s", &no_env).unwrap();
        assert_eq!(r.call_timeout, Duration::from_secs(120));
        assert_eq!(r.connect_timeout, Duration::from_secs(30));
        assert_eq!(r.breaker_threshold, 3);
        assert_eq!(r.breaker_cooldown, Duration::from_secs(60));
        assert_eq!(r.transport.kind(), "stdio");
    }

    #[test]
    fn include_wins_over_exclude() {
        let f = ToolFilter {
            include: vec!["a".into()],
            exclude: vec!["a".into(), "b".into()],
            ..ToolFilter::default()
        };
        assert!(f.allows("a"));
        assert!(!f.allows("b"));
        assert!(!f.allows("c"));
        let f = ToolFilter {
            include: vec![],
            exclude: vec!["b".into()],
            ..ToolFilter::default()
        };
        assert!(f.allows("a"));
        assert!(!f.allows("b"));
    }

    #[test]
    fn include_accepts_a_single_string() {
        let c =
            parse("url = \"http://x\"\ntools = { include = \"echo\", exclude = [\"a\", \"b\"] }");
        assert_eq!(c.tools.include, vec!["echo"]);
        assert_eq!(c.tools.exclude, vec!["a", "b"]);
    }

    #[test]
    fn boolish_strings() {
        for (text, want) in [
            ("\"yes\"", true),
            ("\"off\"", false),
            ("true", true),
            ("0", false),
            ("\"TRUE\"", true),
        ] {
            let c = parse(&format!("command = \"x\"\nenabled = {text}"));
            assert_eq!(c.enabled, want, "{text}");
        }
        assert!(toml::from_str::<McpServerSettings>("enabled = \"maybe\"").is_err());
    }

    #[test]
    fn transport_errors() {
        let cases = [
            ("", "set `command`"),
            ("command = \"a\"\nurl = \"http://x\"", "mutually exclusive"),
            (
                "url = \"http://x\"\ntransport = \"sse\"",
                "SSE transport is not supported",
            ),
            ("command = \"a\"\ntransport = \"http\"", "needs `url`"),
            (
                "url = \"http://x\"\ntransport = \"stdio\"",
                "needs `command`",
            ),
            (
                "command = \"a\"\ntimeout = 0",
                "`timeout` must be a positive",
            ),
            ("command = \"a\"\nconnect_timeout = -1", "`connect_timeout`"),
        ];
        for (text, want) in cases {
            let err = parse(text).resolve("s", &no_env).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn placeholders_are_filled_everywhere() {
        let lookup = |name: &str| match name {
            "TOKEN" => Some("t0k".to_string()),
            "DIR" => Some("/srv".to_string()),
            _ => None,
        };
        let r = parse(
            "command = \"${DIR}/bin/server\"\nargs = [\"--token=${env:TOKEN}\"]\ncwd = \"${DIR}\"\nenv = { T = \"${TOKEN}\" }",
        )
        .resolve("s", &lookup)
        .unwrap();
        match r.transport {
            TransportOptions::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                assert_eq!(command, "/srv/bin/server");
                assert_eq!(args, vec!["--token=t0k"]);
                assert_eq!(env.get("T").map(String::as_str), Some("t0k"));
                assert_eq!(cwd, Some(PathBuf::from("/srv")));
            }
            other => panic!("{other:?}"),
        }
        let r = parse(
            "url = \"http://h/${MISSING}\"\nheaders = { Authorization = \"Bearer ${TOKEN}\" }",
        )
        .resolve("s", &lookup)
        .unwrap();
        assert_eq!(
            r.transport,
            TransportOptions::Http {
                url: "http://h/${MISSING}".into(),
                headers: [("Authorization".to_string(), "Bearer t0k".to_string())].into(),
            }
        );
    }
}
