//! The skills guard: every skill that is created, edited or installed is scanned for
//! prompt injection, exfiltration, destructive instructions, persistence and
//! obfuscation before it is accepted (docs/hermes/skills.md, "The guard").
//!
//! Three kinds of checks:
//! - text patterns over every text file (`guard_patterns.rs`);
//! - shell code — fenced `bash`/`sh`/`shell`/`zsh`/`console` blocks in Markdown and
//!   shell scripts — judged by the dangerous-command detector
//!   ([`crate::approval::detect`]), the same one the terminal uses: a hardline command
//!   is critical, any other dangerous command a warning (it would still need approval
//!   when run);
//! - structure: symlinks that leave the skill, executables, too many or too large files,
//!   invisible Unicode.
//!
//! Severity decides: `critical` and `high` findings block, `medium` and `low` warn.
//! Hermes applies its scan to agent-written skills only when configured to (off by
//! default) and decides by the skill's source; toolhost always scans and decides by
//! severity alone.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};
use toolhost_text::INVISIBLE_CHARS;

use super::guard_patterns::PATTERNS;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Low,
    /// Warn: legitimate skills do this, but the user should know.
    Medium,
    /// Block.
    High,
    /// Block.
    Critical,
}

impl Severity {
    /// Whether a finding of this severity blocks the skill.
    pub fn blocks(self) -> bool {
        self >= Severity::High
    }

    /// `low`, `medium`, `high` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// What kind of threat a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ThreatCategory {
    /// Text that tries to take over the agent.
    Injection,
    /// Secrets or context leaving the machine.
    Exfiltration,
    /// Deleting or overwriting things.
    Destructive,
    /// Surviving beyond the task (keys, cron, start-up files).
    Persistence,
    /// Hiding what runs.
    Obfuscation,
    /// The shape of the skill itself (symlinks, binaries, sizes).
    Structure,
}

/// One thing the guard found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id (`rm_root`, `shell:fs.recursive_delete`, ...).
    pub pattern_id: String,
    /// How bad it is.
    pub severity: Severity,
    /// What kind of threat.
    pub category: ThreatCategory,
    /// The file, relative to the skill.
    pub file: String,
    /// 1-based line (0 for whole-file findings).
    pub line: usize,
    /// The matching text (at most 120 characters).
    #[serde(rename = "match")]
    pub matched: String,
    /// One line for the report.
    pub description: String,
}

/// The overall outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardVerdict {
    /// Nothing found.
    Safe,
    /// Only warnings: accepted, and the warnings are reported.
    Caution,
    /// At least one blocking finding: refused.
    Dangerous,
}

/// Every finding for one skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanReport {
    /// The skill's name (or directory).
    pub skill: String,
    /// Findings, in file and line order.
    pub findings: Vec<Finding>,
}

impl ScanReport {
    /// Safe, caution or dangerous.
    pub fn verdict(&self) -> GuardVerdict {
        if self.blocked() {
            GuardVerdict::Dangerous
        } else if self.findings.is_empty() {
            GuardVerdict::Safe
        } else {
            GuardVerdict::Caution
        }
    }

    /// Whether any finding blocks.
    pub fn blocked(&self) -> bool {
        self.findings.iter().any(|f| f.severity.blocks())
    }

    /// The non-blocking findings as one line each (`file:line: description`).
    pub fn warnings(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|f| !f.severity.blocks())
            .map(Finding::line_text)
            .collect()
    }

    /// A short reason for a blocked skill: the blocking findings' descriptions.
    pub fn block_reason(&self) -> String {
        let mut reasons: Vec<&str> = self
            .findings
            .iter()
            .filter(|f| f.severity.blocks())
            .map(|f| f.description.as_str())
            .collect();
        reasons.dedup();
        reasons.join("; ")
    }

    /// The report as text, one finding a line, most severe first.
    pub fn format(&self) -> String {
        let mut findings: Vec<&Finding> = self.findings.iter().collect();
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        let mut out = format!(
            "Scan of '{}': {} ({} finding{})",
            self.skill,
            match self.verdict() {
                GuardVerdict::Safe => "safe",
                GuardVerdict::Caution => "caution",
                GuardVerdict::Dangerous => "dangerous",
            },
            findings.len(),
            if findings.len() == 1 { "" } else { "s" }
        );
        for f in findings {
            out.push_str(&format!("\n  [{}] {}", f.severity.as_str(), f.line_text()));
        }
        out
    }

    /// `{"skill","verdict","findings":[...]}`.
    pub fn to_json(&self) -> Value {
        json!({"skill": self.skill, "verdict": self.verdict(), "findings": self.findings})
    }
}

impl Finding {
    fn line_text(&self) -> String {
        let at = if self.line > 0 {
            format!("{}:{}", self.file, self.line)
        } else {
            self.file.clone()
        };
        format!(
            "{at}: {} ({}): {}",
            self.description, self.pattern_id, self.matched
        )
    }
}

/// Why a directory could not be scanned.
#[derive(Debug, thiserror::Error)]
#[error("cannot scan {path}: {source}", path = .path.display())]
pub struct GuardError {
    /// What was being read.
    pub path: std::path::PathBuf,
    /// The I/O error.
    #[source]
    pub source: std::io::Error,
}

/// Most files a skill should have.
pub const MAX_FILE_COUNT: usize = 50;
/// Largest total size of a skill's files.
pub const MAX_TOTAL_BYTES: u64 = 1024 * 1024;
/// Largest single file.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn line_of(content: &str, byte: usize) -> usize {
    content[..byte.min(content.len())].matches('\n').count() + 1
}

/// Findings of the text patterns and the invisible-character check in one file.
fn scan_patterns(rel: &str, content: &str, out: &mut Vec<Finding>) {
    for pattern in PATTERNS.iter() {
        if let Some(m) = pattern.regex.find(content) {
            out.push(Finding {
                pattern_id: pattern.id.to_string(),
                severity: pattern.severity,
                category: pattern.category,
                file: rel.to_string(),
                line: line_of(content, m.start()),
                matched: clip(m.as_str()),
                description: pattern.description.to_string(),
            });
        }
    }
    // A BOM at the very start is an editor's doing, not hidden text.
    let body = content.strip_prefix('\u{feff}').unwrap_or(content);
    if let Some((i, c)) = body
        .char_indices()
        .find(|(_, c)| INVISIBLE_CHARS.contains(c))
    {
        out.push(Finding {
            pattern_id: format!("invisible_unicode_U+{:04X}", c as u32),
            severity: Severity::High,
            category: ThreatCategory::Obfuscation,
            file: rel.to_string(),
            line: line_of(body, i),
            matched: format!("U+{:04X}", c as u32),
            description: "contains invisible Unicode that can hide instructions".into(),
        });
    }
}

/// Shell code blocks of a Markdown file: (first line number, code).
fn shell_fences(content: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String, String)> = None; // (line, fence, code)
    for (index, line) in content.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut current {
            None => {
                let fence_len = trimmed
                    .chars()
                    .take_while(|&c| c == '`' || c == '~')
                    .count();
                if fence_len >= 3 {
                    let fence = &trimmed[..fence_len];
                    let lang = trimmed[fence_len..].trim().to_ascii_lowercase();
                    let lang = lang.split([' ', '{', ',']).next().unwrap_or_default();
                    let shell = matches!(
                        lang,
                        "bash" | "sh" | "shell" | "zsh" | "console" | "shell-session" | "terminal"
                    );
                    current = Some((
                        index + 2,
                        if shell {
                            fence.to_string()
                        } else {
                            format!("!{fence}")
                        },
                        String::new(),
                    ));
                }
            }
            Some((start, fence, code)) => {
                let closing = fence.trim_start_matches('!');
                if trimmed.starts_with(closing)
                    && trimmed.trim_end().chars().all(|c| c == '`' || c == '~')
                {
                    if !fence.starts_with('!') {
                        blocks.push((*start, std::mem::take(code)));
                    }
                    current = None;
                } else if !fence.starts_with('!') {
                    // `console` blocks show prompts: keep only the commands.
                    let command = line.strip_prefix("$ ").unwrap_or(line);
                    code.push_str(command);
                    code.push('\n');
                }
            }
        }
    }
    blocks
}

fn shell_finding(
    rel: &str,
    line: usize,
    command: &str,
    verdict: &crate::approval::Verdict,
) -> Finding {
    let rule = verdict.rule().unwrap_or("dangerous");
    Finding {
        pattern_id: format!("shell:{rule}"),
        severity: if verdict.hardline() {
            Severity::Critical
        } else {
            Severity::Medium
        },
        category: ThreatCategory::Destructive,
        file: rel.to_string(),
        line,
        matched: clip(
            command
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or(command),
        ),
        description: format!(
            "shell command flagged by the approval detector: {}",
            verdict.description().unwrap_or("dangerous command")
        ),
    }
}

/// Judge shell code with the approval detector. A block the parser rejects as a whole
/// (Markdown often shows fragments) is judged line by line, and lines that still do
/// not parse are left to the text patterns.
fn scan_shell(rel: &str, first_line: usize, code: &str, out: &mut Vec<Finding>) {
    let verdict = crate::approval::detect(code);
    if !verdict.dangerous() {
        return;
    }
    if verdict.rule() != Some("parse.unparseable") {
        // Point at the first line that is dangerous on its own, when there is one.
        let located = code.lines().enumerate().find_map(|(offset, line)| {
            let command = line.trim();
            let v = crate::approval::detect(command);
            (!command.starts_with('#') && v.dangerous() && v.rule() != Some("parse.unparseable"))
                .then(|| (first_line + offset, command))
        });
        let (line, command) = located.unwrap_or((first_line, code));
        out.push(shell_finding(rel, line, command, &verdict));
        return;
    }
    for (offset, line) in code.lines().enumerate() {
        let command = line.trim();
        if command.is_empty() || command.starts_with('#') {
            continue;
        }
        let verdict = crate::approval::detect(command);
        if verdict.dangerous() && verdict.rule() != Some("parse.unparseable") {
            out.push(shell_finding(rel, first_line + offset, command, &verdict));
        }
    }
}

fn is_shell_script(rel: &str, content: &str) -> bool {
    let ext = Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    if matches!(ext, "sh" | "bash" | "zsh" | "ksh") {
        return true;
    }
    content.lines().next().is_some_and(|first| {
        first.starts_with("#!")
            && [
                "/sh", "/bash", "/zsh", "/dash", "/ksh", "env sh", "env bash", "env zsh",
            ]
            .iter()
            .any(|shell| first.contains(shell))
    })
}

/// Findings in one text file of a skill (`rel` is its path inside the skill).
pub fn scan_text(rel: &str, content: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    scan_patterns(rel, content, &mut findings);
    if is_shell_script(rel, content) {
        scan_shell(rel, 1, content, &mut findings);
    } else if rel.ends_with(".md") || rel.ends_with(".markdown") {
        for (line, code) in shell_fences(content) {
            scan_shell(rel, line, &code, &mut findings);
        }
    }
    findings
}

/// Scan in-memory files (`(relative path, text)`), e.g. a bundled skill.
pub fn scan_files<'a>(
    skill: &str,
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> ScanReport {
    let findings = files
        .into_iter()
        .flat_map(|(rel, text)| scan_text(rel, text))
        .collect();
    ScanReport {
        skill: skill.to_string(),
        findings,
    }
}

fn structure(rel: &str, id: &str, severity: Severity, description: String) -> Finding {
    Finding {
        pattern_id: id.to_string(),
        severity,
        category: ThreatCategory::Structure,
        file: rel.to_string(),
        line: 0,
        matched: String::new(),
        description,
    }
}

fn is_executable_binary(rel: &str, head: &[u8]) -> bool {
    let ext = Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        ext.as_str(),
        "exe" | "dll" | "so" | "dylib" | "bin" | "msi" | "scr" | "com"
    ) || head.starts_with(b"\x7fELF")
        || head.starts_with(b"MZ")
        || head.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
}

/// Scan a skill directory: every file, symlinks not followed.
pub fn scan_dir(dir: &Path, skill: &str) -> Result<ScanReport, GuardError> {
    let mut findings = Vec::new();
    let root = dir.canonicalize().map_err(|source| GuardError {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(current) = stack.pop() {
        let entries = std::fs::read_dir(&current).map_err(|source| GuardError {
            path: current.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                let inside = path.canonicalize().is_ok_and(|t| t.starts_with(&root));
                if !inside {
                    findings.push(structure(
                        &rel,
                        "symlink_escape",
                        Severity::Critical,
                        "symlink points outside the skill directory".into(),
                    ));
                }
            } else if kind.is_dir() {
                if !matches!(entry.file_name().to_str(), Some(".git" | "__pycache__")) {
                    stack.push(path);
                }
            } else if kind.is_file() {
                files.push((rel, path));
            }
        }
    }
    files.sort();
    if files.len() > MAX_FILE_COUNT {
        findings.push(structure(
            ".",
            "too_many_files",
            Severity::Medium,
            format!(
                "{} files (a skill rarely needs more than {MAX_FILE_COUNT})",
                files.len()
            ),
        ));
    }
    let mut total = 0u64;
    for (rel, path) in &files {
        let bytes = std::fs::read(path).map_err(|source| GuardError {
            path: path.clone(),
            source,
        })?;
        total += bytes.len() as u64;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            findings.push(structure(
                rel,
                "large_file",
                Severity::Low,
                format!("{} KiB file", bytes.len() / 1024),
            ));
        }
        if is_executable_binary(rel, &bytes[..bytes.len().min(4)]) {
            findings.push(structure(
                rel,
                "binary_executable",
                Severity::High,
                "contains an executable binary".into(),
            ));
            continue;
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            findings.extend(scan_text(rel, text));
        }
    }
    if total > MAX_TOTAL_BYTES {
        findings.push(structure(
            ".",
            "large_skill",
            Severity::Medium,
            format!("{} KiB in total", total / 1024),
        ));
    }
    Ok(ScanReport {
        skill: skill.to_string(),
        findings,
    })
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
