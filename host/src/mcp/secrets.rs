//! Secret values of the MCP server settings, hidden wherever toolhost prints them.
//!
//! Pattern-based redaction ([`tools_core::redact`]) knows token shapes and key names;
//! it cannot know that `https://host/v1/3f9a.../mcp` carries a path token or that
//! `?key=abc123` is an API key. So every value a server's section makes secret is
//! remembered when the section is resolved, and [`redact`] replaces each occurrence of
//! it — exactly that substring, nothing around it — before the pattern rules run.
//!
//! Secret values of a section ([`section_secrets`]):
//! - every value filled in from `${VAR}` in `url` and `headers`, and in `env`/`args`
//!   when the variable's name says it is a credential (`KEY`, `TOKEN`, `SECRET`,
//!   `PASSWORD`, `PASS`, `AUTH`, `CREDENTIAL`, `COOKIE`, `SESSION`);
//! - every header value, and the credential after an auth scheme (`Bearer xyz`);
//! - the URL's user-info (`user:password@`) and every query value;
//! - `env` values whose variable name says it is a credential.
//!
//! Values shorter than [`MIN_SECRET_LEN`] are not remembered: replacing `1` or `on`
//! everywhere would destroy the text without protecting anything. A percent-encoded
//! spelling of each value is remembered too (errors quote URLs encoded).

use std::collections::BTreeSet;
use std::sync::{LazyLock, PoisonError, RwLock};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use tools_core::redact::REDACTED;

/// Shortest value treated as a secret.
pub const MIN_SECRET_LEN: usize = 4;

static SECRETS: LazyLock<RwLock<Vec<String>>> = LazyLock::new(|| RwLock::new(Vec::new()));

/// Remember `values` as secrets for the rest of the process.
pub fn remember(values: &[String]) {
    if values.is_empty() {
        return;
    }
    let mut all = SECRETS.write().unwrap_or_else(PoisonError::into_inner);
    let mut set: BTreeSet<String> = all.drain(..).collect();
    for value in values {
        if value.chars().count() >= MIN_SECRET_LEN {
            set.insert(value.clone());
            let encoded = percent_encode(value);
            if encoded != *value {
                set.insert(encoded);
            }
        }
    }
    // Longest first, so a secret containing another is replaced whole.
    let mut sorted: Vec<String> = set.into_iter().collect();
    sorted.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    *all = sorted;
}

/// `text` with every remembered secret and every credential-shaped value hidden.
pub fn redact(text: &str) -> String {
    let known = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    let replaced = replace_all(text, &known);
    tools_core::redact::redact(&replaced).into_owned()
}

fn replace_all(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// True when a variable or header name says its value is a credential.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASS",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
    ]
    .iter()
    .any(|word| upper.contains(word))
}

/// One `${VAR}` substitution made while resolving a section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Substitution {
    /// The variable.
    pub variable: String,
    /// Its value.
    pub value: String,
    /// True when it went into `url` or `headers` (always secret there).
    pub in_http: bool,
}

/// The secret values of a section: its substitutions, headers, URL and env.
pub fn section_secrets(
    substitutions: &[Substitution],
    url: Option<&str>,
    headers: &[(&str, &str)],
    env: &[(&str, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    for sub in substitutions {
        if sub.in_http || is_secret_name(&sub.variable) {
            out.push(sub.value.clone());
        }
    }
    for (_, value) in headers {
        out.push((*value).to_string());
        if let Some((scheme, credential)) = value.trim().split_once(' ')
            && scheme.chars().all(|c| c.is_ascii_alphabetic())
        {
            out.push(credential.trim().to_string());
        }
    }
    for (name, value) in env {
        if is_secret_name(name) {
            out.push((*value).to_string());
        }
    }
    if let Some(url) = url {
        out.extend(url_secrets(url));
    }
    out.retain(|v| v.chars().count() >= MIN_SECRET_LEN);
    out
}

/// User-info and query values of `url`.
fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority_end = after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len());
    let authority = &after_scheme[..authority_end];
    if let Some((userinfo, _host)) = authority.rsplit_once('@') {
        match userinfo.split_once(':') {
            Some((user, password)) => {
                out.push(password.to_string());
                out.push(user.to_string());
            }
            None => out.push(userinfo.to_string()),
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        let query = query.split('#').next().unwrap_or_default();
        for pair in query.split('&') {
            if let Some((_, value)) = pair.split_once('=') {
                out.push(value.to_string());
            }
        }
    }
    out
}

/// Bytes RFC 3986 leaves unencoded: the unreserved characters.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// RFC 3986 percent-encoding of everything but unreserved characters.
fn percent_encode(value: &str) -> String {
    utf8_percent_encode(value, UNRESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parts_are_secrets() {
        let got = url_secrets(
            "https://alice:s3cr3t-pw@api.example.com/v1/mcp?api_key=AbC123xyz&mode=fast#x",
        );
        assert!(got.contains(&"s3cr3t-pw".to_string()), "{got:?}");
        assert!(got.contains(&"AbC123xyz".to_string()), "{got:?}");
        assert!(got.contains(&"fast".to_string()), "{got:?}");
    }

    #[test]
    fn section_secrets_cover_substitutions_headers_and_env() {
        let subs = [
            Substitution {
                variable: "PATH_TOKEN".into(),
                value: "ptok-998877".into(),
                in_http: true,
            },
            Substitution {
                variable: "HOME".into(),
                value: "/home/me".into(),
                in_http: false,
            },
        ];
        let got = section_secrets(
            &subs,
            Some("https://h/ptok-998877/mcp"),
            &[("Authorization", "Bearer tok-abcdef")],
            &[("GITHUB_TOKEN", "gh-value-1"), ("TZ", "UTC")],
        );
        for want in [
            "ptok-998877",
            "Bearer tok-abcdef",
            "tok-abcdef",
            "gh-value-1",
        ] {
            assert!(got.contains(&want.to_string()), "{want}: {got:?}");
        }
        assert!(!got.contains(&"/home/me".to_string()));
        assert!(!got.contains(&"UTC".to_string()));
    }

    #[test]
    fn replacement_keeps_neighbouring_characters() {
        let secrets = vec!["k3y-VALUE-99".to_string(), "pw".to_string()];
        for (text, want) in [
            (
                "GET https://h/v1?api_key=k3y-VALUE-99&x=1 failed",
                "GET https://h/v1?api_key=[REDACTED]&x=1 failed",
            ),
            ("(k3y-VALUE-99)", "([REDACTED])"),
            ("/tok/k3y-VALUE-99/mcp", "/tok/[REDACTED]/mcp"),
        ] {
            assert_eq!(replace_all(text, &secrets), want);
        }
    }

    #[test]
    fn percent_encoded_spelling() {
        assert_eq!(percent_encode("a b/c"), "a%20b%2Fc");
        assert_eq!(percent_encode("plain-1"), "plain-1");
    }
}
