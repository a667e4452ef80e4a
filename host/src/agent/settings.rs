//! `[model]`, `[agent]` and `[delegation]` in `config.toml`, and the environment
//! variables that override them (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `TOOLHOST_MODEL`).
//!
//! The API key is never stored in the file: `api_key_env` names the variable that holds
//! it, and the resolved key lives in an [`ApiKey`] whose `Debug` never shows it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// `[model]`: which OpenAI-compatible endpoint and model the agent talks to.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ModelSettings {
    /// Base URL up to and including the API version (`https://api.openai.com/v1`);
    /// requests go to `<base_url>/chat/completions`.
    pub base_url: String,
    /// Model name sent in every request.
    pub model: String,
    /// Environment variable holding the API key (none sent when it is unset).
    pub api_key_env: String,
    /// Extra HTTP headers (e.g. OpenRouter's `HTTP-Referer`, `X-Title`).
    pub headers: BTreeMap<String, String>,
    /// Request timeout in seconds (the whole request, streamed body included).
    pub timeout: f64,
    /// Retries after a 429, a 5xx or a connection failure.
    pub max_retries: u32,
    /// First retry delay in seconds, doubled per retry (a `Retry-After` header wins).
    pub retry_base_delay: f64,
    /// Longest wait between retries, in seconds.
    pub retry_max_delay: f64,
    /// Stream responses (SSE).
    pub stream: bool,
    /// Let the model call several tools in one message.
    pub parallel_tool_calls: bool,
    /// The model's context length in tokens; when unset a small built-in table is used.
    pub context_length: Option<usize>,
    /// Sampling temperature (omitted from requests when unset).
    pub temperature: Option<f64>,
    /// Most tokens per reply (omitted when unset).
    pub max_tokens: Option<u32>,
    /// The model accepts images: images in tool results are sent to it as image
    /// content parts (false: only their text is sent).
    pub vision: bool,
    /// Largest reply read from the server, in bytes (a streamed reply counts its SSE
    /// framing): past it the reply is dropped and the call fails (docs/model-servers.md).
    pub max_reply_bytes: usize,
}

impl Default for ModelSettings {
    fn default() -> Self {
        ModelSettings {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: "OPENAI_API_KEY".into(),
            headers: BTreeMap::new(),
            timeout: 600.0,
            max_retries: 3,
            retry_base_delay: 1.0,
            retry_max_delay: 60.0,
            stream: true,
            parallel_tool_calls: true,
            context_length: None,
            temperature: None,
            max_tokens: None,
            vision: true,
            max_reply_bytes: 32 * 1024 * 1024,
        }
    }
}

/// `[agent]`: the loop's limits.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct AgentSettings {
    /// Most model calls in one turn (Hermes' `max_iterations`).
    pub max_turns: usize,
    /// System prompt placed before the conversation (memory blocks are appended).
    pub system_prompt: Option<String>,
    /// Tool results of one turn together may not exceed this many characters; the
    /// largest are spilled to files first (0 = scaled to the context length).
    pub turn_result_budget: usize,
    /// The Tool Search bridge: `auto` (when the deferrable tools' schemas would take
    /// `tool_search_threshold_pct` % of the context), `on` or `off`.
    pub tool_search: String,
    /// The share of the context that activates Tool Search in `auto` mode.
    pub tool_search_threshold_pct: f64,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            max_turns: 90,
            system_prompt: None,
            turn_result_budget: 0,
            tool_search: "auto".into(),
            tool_search_threshold_pct: 10.0,
        }
    }
}

/// `[delegation]`: limits for `delegate_task`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct DelegationSettings {
    /// How deep children may nest (1: children cannot delegate).
    pub max_spawn_depth: usize,
    /// Most children of one `delegate_task` call (and most `delegate_task` calls kept
    /// from one assistant message).
    pub max_concurrent_children: usize,
    /// Most model calls of a child.
    pub max_iterations: usize,
}

impl Default for DelegationSettings {
    fn default() -> Self {
        DelegationSettings {
            max_spawn_depth: 1,
            max_concurrent_children: 3,
            max_iterations: 50,
        }
    }
}

/// An API key. `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wrap a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }
    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// The model endpoint in effect: settings with the environment applied.
#[derive(Clone, Debug)]
pub struct ModelEndpoint {
    /// `<base_url>/chat/completions`.
    pub url: String,
    /// Model name.
    pub model: String,
    /// The key, when its variable is set and not empty.
    pub api_key: Option<ApiKey>,
    /// Everything else from `[model]`.
    pub settings: ModelSettings,
}

impl ModelEndpoint {
    /// Resolve `settings` against the process environment.
    pub fn from_env(settings: &ModelSettings) -> Self {
        Self::resolve(settings, |name| std::env::var(name).ok())
    }

    /// Resolve `settings` with `env` as the environment: `OPENAI_BASE_URL` replaces
    /// `base_url`, `TOOLHOST_MODEL` replaces `model`; the key comes from
    /// `api_key_env`, falling back to `OPENAI_API_KEY`.
    pub fn resolve(settings: &ModelSettings, env: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let base = set("OPENAI_BASE_URL").unwrap_or_else(|| settings.base_url.clone());
        let model = set("TOOLHOST_MODEL").unwrap_or_else(|| settings.model.clone());
        let api_key = set(&settings.api_key_env)
            .or_else(|| set("OPENAI_API_KEY"))
            .map(|k| ApiKey::new(k.trim()));
        ModelEndpoint {
            url: format!("{}/chat/completions", base.trim().trim_end_matches('/')),
            model,
            api_key,
            settings: settings.clone(),
        }
    }

    /// The request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.settings.timeout.clamp(0.001, 86_400.0))
    }

    /// The context length: configured, else from the built-in table.
    pub fn context_length(&self) -> usize {
        self.settings
            .context_length
            .unwrap_or_else(|| context_length_for(&self.model))
    }
}

/// Context lengths of well-known model families (by substring of the model name);
/// 32,768 for anything else.
pub fn context_length_for(model: &str) -> usize {
    const TABLE: &[(&str, usize)] = &[
        ("gpt-4.1", 1_047_576),
        ("gpt-5", 400_000),
        ("gpt-4o", 128_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("claude", 200_000),
        ("gemini", 1_048_576),
        ("llama-3", 131_072),
        ("llama3", 131_072),
        ("qwen", 131_072),
        ("mistral", 32_768),
        ("deepseek", 128_000),
    ];
    let lower = model.to_ascii_lowercase();
    TABLE
        .iter()
        .find(|(key, _)| lower.contains(key))
        .map_or(32_768, |(_, len)| *len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn environment_overrides_base_url_model_and_key() {
        let settings = ModelSettings {
            base_url: "http://file/v1".into(),
            model: "file-model".into(),
            api_key_env: "MY_KEY".into(),
            ..ModelSettings::default()
        };
        let e = ModelEndpoint::resolve(
            &settings,
            env(&[
                ("OPENAI_BASE_URL", "http://env:8000/v1/"),
                ("TOOLHOST_MODEL", "env-model"),
                ("MY_KEY", "sk-secret"),
                ("OPENAI_API_KEY", "sk-other"),
            ]),
        );
        assert_eq!(e.url, "http://env:8000/v1/chat/completions");
        assert_eq!(e.model, "env-model");
        assert_eq!(e.api_key.as_ref().map(ApiKey::expose), Some("sk-secret"));
    }

    #[test]
    fn file_settings_apply_without_environment() {
        let e = ModelEndpoint::resolve(&ModelSettings::default(), env(&[]));
        assert_eq!(e.url, "https://api.openai.com/v1/chat/completions");
        assert_eq!(e.model, "gpt-4o-mini");
        assert!(e.api_key.is_none());
    }

    #[test]
    fn key_falls_back_to_openai_api_key() {
        let settings = ModelSettings {
            api_key_env: "UNSET_KEY".into(),
            ..ModelSettings::default()
        };
        let e = ModelEndpoint::resolve(&settings, env(&[("OPENAI_API_KEY", "sk-x")]));
        assert_eq!(e.api_key.as_ref().map(ApiKey::expose), Some("sk-x"));
    }

    #[test]
    fn debug_never_shows_the_key() {
        let e = ModelEndpoint::resolve(
            &ModelSettings::default(),
            env(&[("OPENAI_API_KEY", "sk-very-secret")]),
        );
        let shown = format!("{e:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("ApiKey(***)"));
    }

    #[test]
    fn context_lengths_from_table_or_config() {
        for (model, len) in [
            ("gpt-4o-mini", 128_000),
            ("openai/gpt-4.1", 1_047_576),
            ("anthropic/claude-sonnet-4", 200_000),
            ("Qwen2.5-7B-Instruct", 131_072),
            ("tinyllama", 32_768),
        ] {
            assert_eq!(context_length_for(model), len, "{model}");
        }
        let settings = ModelSettings {
            context_length: Some(8_192),
            ..ModelSettings::default()
        };
        assert_eq!(
            ModelEndpoint::resolve(&settings, env(&[])).context_length(),
            8_192
        );
    }
}
