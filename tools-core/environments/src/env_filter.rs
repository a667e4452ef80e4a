//! The environment local commands see: the host's, minus credentials the agent process
//! holds for itself (model provider keys, messaging tokens, cloud-backend credentials),
//! plus the names the user passes through on purpose.
//!
//! `TOOLHOST_FORCE_<NAME>=v` on the host exposes `<NAME>=v` to commands regardless of the
//! blocklist (an explicit opt-in for one variable).

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Variables never passed to commands unless listed in `terminal.env_passthrough`.
pub const BLOCKLIST: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OPENAI_ORG_ID",
    "OPENAI_ORGANIZATION",
    "OPENROUTER_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_TOKEN",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "VERTEX_CREDENTIALS_PATH",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "PERPLEXITY_API_KEY",
    "COHERE_API_KEY",
    "FIREWORKS_API_KEY",
    "XAI_API_KEY",
    "HELICONE_API_KEY",
    "FIRECRAWL_API_KEY",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "HASS_TOKEN",
    "EMAIL_PASSWORD",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "DAYTONA_API_KEY",
];

/// Markers of an activated Python environment that would confuse commands.
const ACTIVE_VENV_VARS: &[&str] = &["VIRTUAL_ENV", "CONDA_PREFIX"];

const FORCE_PREFIX: &str = "TOOLHOST_FORCE_";

/// Names matched by pattern: per-task auxiliary model credentials and relay secrets.
fn is_dynamic_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    (upper.starts_with("AUXILIARY_")
        && (upper.ends_with("_API_KEY") || upper.ends_with("_BASE_URL")))
        || (upper.starts_with("GATEWAY_RELAY_")
            && (upper.ends_with("_SECRET") || upper.ends_with("_KEY") || upper.ends_with("_TOKEN")))
}

/// True when `name` is withheld from commands (before passthrough).
pub fn is_blocked(name: &str) -> bool {
    BLOCKLIST.contains(&name) || is_dynamic_secret(name) || ACTIVE_VENV_VARS.contains(&name)
}

/// The environment for a local command, from `host` variables.
pub fn command_env<I>(host: I, passthrough: &[String]) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut out: BTreeMap<OsString, OsString> = BTreeMap::new();
    let mut forced = Vec::new();
    for (key, value) in host {
        let name = key.to_string_lossy().into_owned();
        if let Some(target) = name.strip_prefix(FORCE_PREFIX) {
            if !target.is_empty() {
                forced.push((OsString::from(target), value));
            }
            continue;
        }
        if !is_blocked(&name) || passthrough.iter().any(|p| p == &name) {
            out.insert(key, value);
        }
    }
    for (key, value) in forced {
        out.insert(key, value);
    }
    out.entry("PATH".into())
        .or_insert_with(|| "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin".into());
    out.insert("PYTHONUNBUFFERED".into(), "1".into());
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn get<'a>(env: &'a [(OsString, OsString)], key: &str) -> Option<&'a OsString> {
        env.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    #[test]
    fn secrets_are_withheld() {
        let out = command_env(
            env(&[
                ("HOME", "/root"),
                ("OPENAI_API_KEY", "sk-x"),
                ("AUXILIARY_VISION_API_KEY", "k"),
                ("GATEWAY_RELAY_URL", "https://relay"),
                ("VIRTUAL_ENV", "/venv"),
            ]),
            &[],
        );
        assert!(get(&out, "HOME").is_some());
        assert!(get(&out, "OPENAI_API_KEY").is_none());
        assert!(get(&out, "AUXILIARY_VISION_API_KEY").is_none());
        assert!(get(&out, "GATEWAY_RELAY_URL").is_some());
        assert!(get(&out, "VIRTUAL_ENV").is_none());
        assert_eq!(get(&out, "PYTHONUNBUFFERED").unwrap(), "1");
    }

    #[test]
    fn passthrough_and_force() {
        let out = command_env(
            env(&[("GH_TOKEN", "t"), ("TOOLHOST_FORCE_MODAL_TOKEN_ID", "m")]),
            &["GH_TOKEN".to_string()],
        );
        assert_eq!(get(&out, "GH_TOKEN").unwrap(), "t");
        assert_eq!(get(&out, "MODAL_TOKEN_ID").unwrap(), "m");
        assert!(get(&out, "TOOLHOST_FORCE_MODAL_TOKEN_ID").is_none());
    }
}
