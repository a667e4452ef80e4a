//! Checks and notes around a terminal command: foreground commands that would never
//! return (shell backgrounding, dev servers) are refused with advice to use
//! `background=true`; `workdir` must be a plain path; some exit codes get a meaning
//! ("grep 1 = no matches").

use std::sync::LazyLock;

use regex::Regex;
use toolhost_text::{LiteralRegex, compile_literal};

/// Quoted spans and what they are replaced by before looking for `&` and friends.
const QUOTED_PATTERNS: [(&str, &str); 3] = [
    (r"'[^']*'", "''"),
    (r#""(?:[^"\\]|\\.)*""#, "\"\""),
    (r"`[^`]*`", "``"),
];

static QUOTED: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    QUOTED_PATTERNS
        .into_iter()
        .filter_map(|(p, r)| compile_literal(p).map(|re| (re, r)))
        .collect()
});

static SHELL_BACKGROUND: LiteralRegex =
    LiteralRegex::new(r"(?im)(?:^|[;&|]\s*|\$\(\s*)(?:nohup|disown|setsid)\b");
static INLINE_AMP: LiteralRegex = LiteralRegex::new(r"\s&\s");
static TRAILING_AMP: LiteralRegex = LiteralRegex::new(r"\s&\s*(?:#.*)?$");

/// Commands that start servers and watchers.
const LONG_LIVED_PATTERNS: [&str; 8] = [
    r"(?i)\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|watch)\b",
    r"(?i)\bdocker[\s-]+compose\s+up\b",
    r"(?i)\bnext\s+dev\b",
    r"(?i)\bvite(?:\s|$)",
    r"(?i)\bnodemon\b",
    r"(?i)\buvicorn\b",
    r"(?i)\bgunicorn\b",
    r"(?i)\bpython(?:3)?\s+-m\s+http\.server\b",
];

static LONG_LIVED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    LONG_LIVED_PATTERNS
        .into_iter()
        .filter_map(compile_literal)
        .collect()
});
static WORKDIR_OK: LiteralRegex = LiteralRegex::new(r"^[A-Za-z0-9/\\:_\-.~ +@=,]+$");

fn strip_quotes(command: &str) -> String {
    let mut out = command.to_string();
    for (re, replacement) in QUOTED.iter() {
        out = re.replace_all(&out, *replacement).into_owned();
    }
    out
}

fn is_help_or_version(command: &str) -> bool {
    let normalized = command
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    normalized.contains(" --help")
        || normalized.contains(" --version")
        || normalized.ends_with(" -h")
        || normalized.ends_with(" -v")
}

fn matches(re: &LiteralRegex, text: &str) -> bool {
    re.get().is_some_and(|re| re.is_match(text))
}

/// Advice when a foreground `command` would start something that never returns.
pub fn foreground_guidance(command: &str) -> Option<&'static str> {
    if is_help_or_version(command) {
        return None;
    }
    let unquoted = strip_quotes(command);
    if matches(&SHELL_BACKGROUND, &unquoted) {
        return Some(
            "Foreground command uses shell-level background wrappers (nohup/disown/setsid). \
             Use terminal(background=true) so toolhost can track the process, then run \
             readiness checks and tests in separate commands.",
        );
    }
    if matches(&INLINE_AMP, &unquoted) || matches(&TRAILING_AMP, &unquoted) {
        return Some(
            "Foreground command uses '&' backgrounding. Use terminal(background=true) for \
             long-lived processes, then run health checks and tests in follow-up terminal calls.",
        );
    }
    if LONG_LIVED.iter().any(|re| re.is_match(&unquoted)) {
        return Some(
            "This foreground command appears to start a long-lived server/watch process. \
             Run it with background=true, verify readiness (health endpoint/log signal), \
             then execute tests in a separate command.",
        );
    }
    None
}

/// The first character of `workdir` outside the allowed set, if any.
pub fn bad_workdir_char(workdir: &str) -> Option<char> {
    if matches(&WORKDIR_OK, workdir) {
        return None;
    }
    workdir
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "/\\:_-.~ +@=,".contains(*c)))
        .or(Some(' '))
}

/// What a non-zero exit code of `command` usually means, for the common "not an error"
/// cases (judged by the last pipeline segment's command word).
pub fn exit_code_meaning(command: &str, code: i32) -> Option<&'static str> {
    let last = command
        .rsplit(['|', ';', '&'])
        .find(|s| !s.trim().is_empty())
        .unwrap_or(command);
    let word = last
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('-'))
        .unwrap_or("");
    let base = word.rsplit('/').next().unwrap_or(word);
    match (base, code) {
        ("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack", 1) => {
            Some("No matches found (not an error)")
        }
        ("diff" | "colordiff", 1) => Some("Files differ (expected, not an error)"),
        ("find", 1) => {
            Some("Some directories were inaccessible (partial results may still be valid)")
        }
        ("test" | "[", 1) => Some("Condition evaluated to false (expected, not an error)"),
        ("curl", 6) => Some("Could not resolve host"),
        ("curl", 7) => Some("Failed to connect to host"),
        ("curl", 22) => Some("HTTP response code indicated error (e.g. 404, 500)"),
        ("curl", 28) => Some("Operation timed out"),
        ("git", 1) => {
            Some("Non-zero exit (often normal — e.g. 'git diff' returns 1 when files differ)")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for pattern in [&SHELL_BACKGROUND, &INLINE_AMP, &TRAILING_AMP, &WORKDIR_OK] {
            assert!(pattern.check().is_ok(), "{pattern:?}");
        }
        assert_eq!(QUOTED.len(), QUOTED_PATTERNS.len());
        assert_eq!(LONG_LIVED.len(), LONG_LIVED_PATTERNS.len());
    }

    #[test]
    fn guidance_table() {
        let refused = [
            "nohup python server.py",
            "cd app && setsid ./run",
            "python server.py &",
            "sleep 10 & echo started",
            "npm run dev",
            "yarn start",
            "docker compose up",
            "uvicorn app:app --reload",
            "python3 -m http.server 8000",
        ];
        for cmd in refused {
            assert!(foreground_guidance(cmd).is_some(), "should refuse: {cmd}");
        }
        let allowed = [
            "ls -la",
            "git commit -m 'use nohup & setsid'",
            "make 2>&1 | tail",
            "a && b",
            "npm --version",
            "uvicorn --help",
            "echo \"npm run dev\"",
            "npm test",
        ];
        for cmd in allowed {
            assert!(foreground_guidance(cmd).is_none(), "should allow: {cmd}");
        }
    }

    #[test]
    fn workdir_characters() {
        assert_eq!(bad_workdir_char("/home/me/my project"), None);
        assert_eq!(bad_workdir_char("~/a-b_c.d"), None);
        assert_eq!(bad_workdir_char("/tmp;rm -rf /"), Some(';'));
        assert_eq!(bad_workdir_char("/tmp/$(id)"), Some('$'));
    }

    #[test]
    fn exit_code_meanings() {
        assert_eq!(
            exit_code_meaning("grep foo file", 1),
            Some("No matches found (not an error)")
        );
        assert_eq!(
            exit_code_meaning("cat x | /usr/bin/grep foo", 1),
            Some("No matches found (not an error)")
        );
        assert_eq!(
            exit_code_meaning("LANG=C diff a b", 1),
            Some("Files differ (expected, not an error)")
        );
        assert!(exit_code_meaning("curl -f http://x", 22).is_some());
        assert_eq!(exit_code_meaning("grep foo file", 2), None);
        assert_eq!(exit_code_meaning("ls", 1), None);
    }
}
