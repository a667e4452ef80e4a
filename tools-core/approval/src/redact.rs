//! Secret redaction for text shown to the model or a human (terminal output, approval
//! prompts, MCP error messages, logs).
//!
//! Redaction is conservative: it hides values that look like credentials (known token
//! prefixes, `Authorization: Bearer ...`, `KEY=value` assignments whose name says
//! secret/token/password/key, private key blocks, credentials inside URLs) and leaves
//! everything else byte-for-byte intact.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use toolhost_text::compile_literal;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

struct Rule {
    re: Regex,
    /// Capture group holding the secret (0 = whole match).
    group: usize,
}

/// The redaction patterns with the capture group holding the secret (0 = whole match).
const PATTERNS: &[(&str, usize)] = &[
    // -----BEGIN ... PRIVATE KEY----- blocks.
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
        0,
    ),
    // Well-known token shapes.
    (
        r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|glpat-[A-Za-z0-9_\-]{20,}|hf_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{30,})",
        0,
    ),
    // Authorization headers.
    (
        r"(?i)\b(?:bearer|token|basic)\s+([A-Za-z0-9_\-\.=+/]{12,})",
        1,
    ),
    // user:password@ in URLs.
    (r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s@/]+)@", 1),
    // NAME=value / NAME: value where NAME looks secret.
    (
        r#"(?i)\b[A-Z0-9_\-]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)[A-Z0-9_\-]*\s*[=:]\s*["']?([^\s"'&;]{4,})"#,
        1,
    ),
    // key=... / password=... query parameters.
    (
        r"(?i)[?&](?:key|token|password|secret|api_key|access_token)=([^&\s]{4,})",
        1,
    ),
];

/// [`PATTERNS`], compiled. A pattern that does not compile is left out (logged; the
/// `every_pattern_compiles` test keeps that from shipping).
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .filter_map(|&(pattern, group)| compile_literal(pattern).map(|re| Rule { re, group }))
        .collect()
});

/// How many of [`RULES`] (from the start) recognise a secret by its own shape (key
/// blocks, token prefixes, auth headers, URL credentials); the rest key on names
/// (`PASSWORD=…`, `?token=…`) and misfire on source code.
const SHAPE_RULES: usize = 4;

/// Replace every secret-looking value in `text` with `[REDACTED]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    apply(&RULES, text)
}

/// Redaction for file content shown to the model (`read_file`, `search_files`): only
/// secrets recognisable by their own shape. Name-based rules are skipped because in
/// source and config files they hit code (`API_KEY = os.getenv("X")`) and would make
/// the shown text disagree with the file the model is about to patch.
pub fn redact_file_content(text: &str) -> Cow<'_, str> {
    apply(&RULES[..SHAPE_RULES.min(RULES.len())], text)
}

fn apply<'a>(rules: &[Rule], text: &'a str) -> Cow<'a, str> {
    let mut out: Cow<'a, str> = Cow::Borrowed(text);
    for rule in rules {
        if !rule.re.is_match(&out) {
            continue;
        }
        let replaced = rule
            .re
            .replace_all(&out, |caps: &Captures<'_>| {
                let whole = caps.get(0).map_or("", |m| m.as_str());
                match caps.get(rule.group) {
                    Some(secret) if rule.group != 0 => {
                        let start = secret.start() - caps.get(0).map_or(0, |m| m.start());
                        let end = start + secret.len();
                        format!("{}{REDACTED}{}", &whole[..start], &whole[end..])
                    }
                    _ => REDACTED.to_string(),
                }
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for (pattern, _) in PATTERNS {
            assert!(regex::Regex::new(pattern).is_ok(), "{pattern}");
        }
        assert_eq!(RULES.len(), PATTERNS.len());
    }

    #[test]
    fn redacts_secrets() {
        let cases = [
            (
                "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv",
                "export OPENAI_API_KEY=[REDACTED]",
            ),
            (
                "token ghp_abcdefghijklmnopqrstuvwxyz0123",
                "token [REDACTED]",
            ),
            (
                "curl -H 'Authorization: Bearer abcdef123456789xyz' x",
                "curl -H 'Authorization: Bearer [REDACTED]' x",
            ),
            (
                "git clone https://bob:hunter22@example.com/r.git",
                "git clone https://bob:[REDACTED]@example.com/r.git",
            ),
            (
                "DB_PASSWORD=correcthorse ./run",
                "DB_PASSWORD=[REDACTED] ./run",
            ),
            ("GET /api?key=abcd1234&x=1", "GET /api?key=[REDACTED]&x=1"),
            ("aws AKIAABCDEFGHIJKLMNOP", "aws [REDACTED]"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "input: {input}");
        }
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for input in [
            "ls -la /tmp",
            "git commit -m 'rotate token handling'",
            "echo $HOME",
            "password policy: at least 12 chars",
            "",
        ] {
            assert!(
                matches!(redact(input), Cow::Borrowed(_)),
                "changed: {input}"
            );
        }
    }

    #[test]
    fn file_content_keeps_name_based_matches() {
        let code = "API_KEY = os.getenv(\"API_KEY\")\nurl = base + \"?token=abcd1234\"";
        assert!(matches!(redact_file_content(code), Cow::Borrowed(_)));
        assert_eq!(
            redact_file_content("key: sk-abcdefghijklmnopqrstuv"),
            "key: [REDACTED]"
        );
    }

    #[test]
    fn private_key_block() {
        let text = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(redact(text), "a\n[REDACTED]\nb");
    }
}
