//! The skills guard's text patterns: prompt injection, exfiltration, destructive
//! instructions, persistence and obfuscation, each with a severity.
//!
//! Adapted from the threat classes of Hermes' `tools/skills_guard.py`
//! (docs/hermes/skills.md). Shell commands inside code fences and scripts are judged
//! by the approval detector instead (see `guard.rs`), so these patterns aim at what
//! a parser cannot see: prose that instructs the agent, and code in other languages.
//! Rust's regex engine runs in linear time, so unbounded gaps are safe.

use std::sync::LazyLock;

use regex::Regex;
use toolhost_text::compile_literal;

use super::guard::{Severity, ThreatCategory};

/// One compiled pattern.
pub struct ThreatPattern {
    /// Stable id shown in reports.
    pub id: &'static str,
    /// How bad a match is.
    pub severity: Severity,
    /// What kind of threat.
    pub category: ThreatCategory,
    /// One line for the report.
    pub description: &'static str,
    /// The expression (case-insensitive).
    pub regex: Regex,
}

/// Up to eight filler words between key words.
const F: &str = r"(?:[\w'-]+\s+){0,8}";

/// Secret-looking variable names.
const SECRET: &str = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIAL)";

/// Credential stores worth stealing.
const STORES: &str = r"(?:~|\$HOME|/root|/home/\w+)/(?:\.ssh/id_(?:rsa|dsa|ecdsa|ed25519)(?:\s|$|['\x22])|\.aws/credentials|\.netrc|\.pgpass|\.docker/config\.json|\.kube/config|\.config/gh/hosts\.yml|\.npmrc|\.pypirc|\.gnupg)|/etc/shadow";

#[rustfmt::skip]
fn table() -> Vec<(&'static str, Severity, ThreatCategory, &'static str, String)> {
    use Severity::*;
    use ThreatCategory::*;
    vec![
        // ── Prompt injection: text that tries to take over the agent ──
        ("ignore_instructions", High, Injection, "tells the agent to ignore its instructions",
            format!(r"\b(?:ignore|forget|override)\s+{F}(?:previous|prior|above|earlier|all|system|your)\s+{F}(?:instructions|rules|guidelines|prompts?)")),
        ("disregard_rules", High, Injection, "tells the agent to disregard its rules",
            format!(r"\bdisregard\s+{F}(?:your|all|any|the)\s+{F}(?:instructions|rules|guidelines|policies|safety)")),
        ("system_prompt_override", High, Injection, "claims to override the system prompt",
            r"\b(?:new|updated|real)\s+system\s+prompt\b|\bsystem\s+prompt\s+override".into()),
        ("role_hijack", High, Injection, "tries to switch the agent into an unrestricted persona",
            format!(r"\byou\s+are\s+now\s+{F}(?:DAN|jailbroken|unrestricted|unfiltered|in\s+developer\s+mode)")),
        ("no_restrictions", High, Injection, "tells the agent it has no restrictions",
            format!(r"\b(?:act|behave|respond)\s+as\s+(?:if|though)\s+{F}(?:no|without)\s+{F}(?:restrictions|limits|rules|filters)")),
        ("hide_from_user", High, Injection, "tells the agent to hide what it does from the user",
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|alert|notify|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to)\s+(?:the\s+)?user\b|\bwithout\s+(?:telling|informing|alerting|notifying)\s+(?:the\s+)?user\b|\b(?:keep|hide)\s+(?:this|it)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?user\b".into()),
        ("chat_template_tokens", Medium, Injection, "contains chat-template control tokens",
            r"<\|im_start\|>|<\|im_end\|>|<\|system\|>|\[/?INST\]|<<SYS>>".into()),
        ("hidden_html_comment", High, Injection, "hides instructions in an HTML comment",
            r"<!--[^>]*\b(?:ignore|override|system|secret|hidden|instruction)[^>]*-->".into()),
        ("hidden_html", High, Injection, "hides content with CSS",
            r#"<\s*(?:div|span|p)\s+style\s*=\s*["'][^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)"#.into()),
        ("disable_safety", High, Injection, "tells the agent to switch off approvals or safety checks",
            format!(r"\b(?:disable|bypass|skip|turn\s+off|circumvent)\s+{F}(?:approvals?|safety|security\s+checks?|guardrails?|sandbox(?:ing)?|yolo)\b")),

        // ── Exfiltration: secrets leaving the machine ──
        ("env_exfil_http", Critical, Exfiltration, "an HTTP client sends a secret environment variable",
            format!(r"\b(?:curl|wget|http|httpie|fetch|Invoke-WebRequest)\b[^\n]*{SECRET}")),
        ("env_exfil_python", Critical, Exfiltration, "a Python HTTP call sends a secret",
            r"\b(?:requests|httpx|urllib\.request|aiohttp)\.?\w*\.(?:get|post|put|patch|urlopen|request)\s*\([^\n]*(?:KEY|TOKEN|SECRET|PASSWORD|environ)".into()),
        ("dump_environment", Critical, Exfiltration, "sends the whole environment somewhere",
            r"\b(?:env|printenv|set)\b\s*(?:\|[^\n]*)?\|\s*(?:curl|wget|nc|ncat|netcat|socat|base64)\b|os\.environ\b[^\n]*(?:post|send|urlopen|requests)".into()),
        ("credential_store", Critical, Exfiltration, "reads a credential store",
            format!(r"\b(?:cat|less|more|head|tail|base64|xxd|scp|rsync|tar|zip|cp|curl|open\s*\(|read_text\s*\(|read_bytes\s*\()[^\n]*(?:{STORES})")),
        ("send_to_url", Medium, Exfiltration, "tells the agent to send data to a URL",
            format!(r"\b(?:send|post|upload|transmit|forward|exfiltrate)\s+{F}(?:to|at)\s+https?://")),
        ("context_exfil", Medium, Exfiltration, "asks for the conversation or system prompt to be disclosed",
            format!(r"\b(?:include|output|print|share|send|reveal|repeat)\s+{F}(?:conversation|chat\s+history|previous\s+messages|system\s+prompt|full\s+context|api\s+keys?)")),
        ("reverse_shell", Critical, Exfiltration, "opens a reverse shell",
            r"/dev/tcp/|\bnc(?:at)?\b[^\n]*\s-(?:e|c)\s|\bsocat\b[^\n]*exec:|\bbash\s+-i\s*>&".into()),

        // ── Destructive instructions ──
        ("wipe_prose", Medium, Destructive, "tells the agent to delete everything",
            format!(r"\b(?:delete|remove|wipe|erase|destroy)\s+{F}(?:all|every|entire)\s+{F}(?:files|data|repositor(?:y|ies)|home\s+directory|backups|databases?|disks?)\b")),
        ("rm_root", Critical, Destructive, "recursively deletes the root or home directory",
            r#"\brm\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*["']?(?:/|~/?|\$HOME/?|/\*|~/\*)["']?(?:\s|$|;)"#.into()),
        ("python_rmtree_root", Critical, Destructive, "deletes the root or home directory from code",
            r#"\bshutil\.rmtree\s*\(\s*(?:["']/["']|["']~|os\.path\.expanduser\(\s*["']~["']\s*\)|Path\.home\(\))"#.into()),
        ("format_disk", Critical, Destructive, "formats or overwrites a disk",
            r"\bmkfs(?:\.\w+)?\s+/dev/|\bdd\b[^\n]*\bof=/dev/(?:sd|nvme|hd|xvd|vd|disk)".into()),
        ("drop_database", Medium, Destructive, "drops a database or table",
            r"\bDROP\s+(?:DATABASE|SCHEMA|TABLE)\b".into()),

        // ── Persistence ──
        ("ssh_backdoor", High, Persistence, "adds an SSH key to authorized_keys",
            r">>?\s*\S*authorized_keys\b|\btee\s+(?:-a\s+)?\S*authorized_keys\b".into()),
        ("cron_persistence", Medium, Persistence, "installs a cron job",
            r"\bcrontab\s+(?:-[a-z]*\s+)*-\s*$|\bcrontab\s+-l[^\n]*\|\s*crontab|/etc/cron\.|/var/spool/cron".into()),
        ("shell_rc_append", Medium, Persistence, "appends to a shell start-up file",
            r">>\s*(?:~|\$HOME)/\.(?:bashrc|zshrc|profile|bash_profile)".into()),
        ("agent_config_mod", Medium, Persistence, "edits an agent's own instructions or configuration",
            r"\b(?:update|modify|edit|write|change|append|add\s+to|overwrite)\s+[^\n]*(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules|toolhost/config\.toml|\.hermes/config\.yaml)".into()),
        ("sudoers", High, Persistence, "grants password-less sudo",
            r">>?\s*/etc/sudoers|\bNOPASSWD\s*:".into()),

        // ── Obfuscation ──
        ("decode_and_run", Critical, Obfuscation, "decodes a payload and runs it",
            r"\bbase64\s+(?:-d|--decode)\b[^\n]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\beval\s*\(\s*(?:atob|base64\.b64decode|bytes\.fromhex|codecs\.decode)|\bexec\s*\(\s*(?:base64\.b64decode|zlib\.decompress|marshal\.loads|bytes\.fromhex)".into()),
        ("hardcoded_secret", Medium, Exfiltration, "contains what looks like a hard-coded secret",
            r#"\b(?:api[_-]?key|secret|token|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{24,}["']|\b(?:sk-[A-Za-z0-9]{32,}|ghp_[A-Za-z0-9]{36}|AKIA[0-9A-Z]{16}|xox[baprs]-[A-Za-z0-9-]{10,})\b|-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----"#.into()),
    ]
}

/// Every pattern, compiled once. A pattern that does not compile is logged and
/// left out (never expected: a unit test compiles them all).
pub static PATTERNS: LazyLock<Vec<ThreatPattern>> = LazyLock::new(|| {
    table()
        .into_iter()
        .filter_map(|(id, severity, category, description, pattern)| {
            compile_literal(&format!("(?im){pattern}")).map(|regex| ThreatPattern {
                id,
                severity,
                category,
                description,
                regex,
            })
        })
        .collect()
});

/// The number of patterns in the table (for the test that all compile).
#[cfg(test)]
pub fn table_len() -> usize {
    table().len()
}
