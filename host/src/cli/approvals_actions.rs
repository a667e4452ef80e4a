//! The logic behind `toolhost approvals check|list|revoke`, on readers and writers so the
//! CLI layer is only argument parsing.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Value, json};

use tools_core::approval::{ALLOWLIST_KEYS, Verdict, detect, rules};
use tools_core::config_edit::{self, ConfigEditError};

/// Why an `approvals` command failed.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalsCliError {
    /// Reading input or writing output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The config file could not be read or edited.
    #[error(transparent)]
    Config(#[from] ConfigEditError),
    /// `revoke` of a key that is not in the allowlist.
    #[error("`{key}` is not in approvals.command_allowlist of {path}")]
    NotAllowlisted {
        /// The key.
        key: String,
        /// The config file.
        path: String,
    },
    /// A hardline rule was named (they are never allowlisted).
    #[error("`{0}` is a hardline rule: it can never be approved or allowlisted")]
    Hardline(String),
}

/// The JSON line for one command: the command echoed, the verdict's four fields, and every
/// rule key that fired (`rules`).
pub fn verdict_json(command: &str, verdict: &Verdict) -> Value {
    json!({
        "command": command,
        "dangerous": verdict.dangerous(),
        "hardline": verdict.hardline(),
        "description": verdict.description(),
        "rule": verdict.rule(),
        "rules": verdict.rule_keys(),
    })
}

/// `approvals check CMD`: write the verdict line; returns it.
pub fn check_one(command: &str, out: &mut dyn Write) -> Result<Verdict, ApprovalsCliError> {
    let verdict = detect(command);
    writeln!(out, "{}", verdict_json(command, &verdict))?;
    Ok(verdict)
}

/// Counts from a `--jsonl` run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckSummary {
    /// Lines judged.
    pub commands: usize,
    /// Of which dangerous.
    pub dangerous: usize,
    /// Lines that were not a JSON string or `{"command": string}` (an `error` line was
    /// written for each).
    pub bad_lines: usize,
}

/// `approvals check --jsonl`: each input line is a JSON string or `{"command": "..."}`;
/// one output line per input line, in order. Blank lines are skipped; a bad line gets
/// `{"line": N, "error": "..."}` and the run goes on.
pub fn check_jsonl(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<CheckSummary, ApprovalsCliError> {
    let mut summary = CheckSummary::default();
    let mut line = String::new();
    let mut number = 0usize;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        number += 1;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let command = match serde_json::from_str::<Value>(text) {
            Ok(Value::String(s)) => Ok(s),
            Ok(Value::Object(map)) => match map.get("command") {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err("expected {\"command\": string}".to_string()),
            },
            Ok(_) => Err("expected a JSON string or {\"command\": string}".to_string()),
            Err(e) => Err(format!("invalid JSON: {e}")),
        };
        match command {
            Ok(command) => {
                let verdict = check_one(&command, out)?;
                summary.commands += 1;
                summary.dangerous += usize::from(verdict.dangerous());
            }
            Err(error) => {
                summary.bad_lines += 1;
                writeln!(out, "{}", json!({"line": number, "error": error}))?;
            }
        }
    }
    out.flush()?;
    Ok(summary)
}

/// `approvals list`: the permanent approvals in `config_file`, with descriptions.
/// `as_json` prints one array of `{"key","description","kind"}` (kind `rule` or
/// `command_glob`).
pub fn list(
    config_file: &Path,
    as_json: bool,
    out: &mut dyn Write,
) -> Result<usize, ApprovalsCliError> {
    let entries = config_edit::read_array(config_file, &ALLOWLIST_KEYS)?;
    let rows: Vec<Value> = entries
        .iter()
        .map(|entry| match rules::by_key(entry) {
            Some(rule) => json!({"key": entry, "description": rule.description, "kind": "rule"}),
            None => {
                json!({"key": entry, "description": "whole-command glob", "kind": "command_glob"})
            }
        })
        .collect();
    if as_json {
        writeln!(out, "{}", Value::Array(rows))?;
    } else if rows.is_empty() {
        writeln!(out, "No permanent approvals in {}.", config_file.display())?;
    } else {
        for row in &rows {
            writeln!(
                out,
                "{}\t{}",
                row["key"].as_str().unwrap_or_default(),
                row["description"].as_str().unwrap_or_default()
            )?;
        }
    }
    Ok(entries.len())
}

/// `approvals list --rules`: every rule the detector knows.
pub fn list_rules(as_json: bool, out: &mut dyn Write) -> Result<(), ApprovalsCliError> {
    if as_json {
        let rows: Vec<Value> = rules::ALL
            .iter()
            .map(|r| json!({"key": r.key, "description": r.description, "hardline": r.hardline}))
            .collect();
        writeln!(out, "{}", Value::Array(rows))?;
        return Ok(());
    }
    for rule in rules::ALL {
        let mark = if rule.hardline { " (hardline)" } else { "" };
        writeln!(out, "{}\t{}{mark}", rule.key, rule.description)?;
    }
    Ok(())
}

/// `approvals revoke KEY`: remove a permanent approval, keeping the file's comments.
pub fn revoke(config_file: &Path, key: &str, out: &mut dyn Write) -> Result<(), ApprovalsCliError> {
    if rules::by_key(key).is_some_and(|r| r.hardline) {
        return Err(ApprovalsCliError::Hardline(key.to_string()));
    }
    if !config_edit::remove_from_array(config_file, &ALLOWLIST_KEYS, key)? {
        return Err(ApprovalsCliError::NotAllowlisted {
            key: key.to_string(),
            path: config_file.display().to_string(),
        });
    }
    writeln!(out, "Revoked `{key}` ({}).", config_file.display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_check_jsonl_echoes_commands() {
        let input = "\"rm -rf /\"\n{\"command\": \"ls\"}\n\nnot json\n{\"cmd\": 1}\n";
        let mut out = Vec::new();
        let summary = check_jsonl(&mut input.as_bytes(), &mut out).unwrap();
        assert_eq!(summary.commands, 2);
        assert_eq!(summary.dangerous, 1);
        assert_eq!(summary.bad_lines, 2);
        let lines: Vec<serde_json::Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["command"], "rm -rf /");
        assert_eq!(lines[0]["hardline"], true);
        assert_eq!(lines[0]["rule"], "hardline.rm_root");
        assert_eq!(lines[1]["command"], "ls");
        assert_eq!(lines[1]["dangerous"], false);
        assert_eq!(lines[2]["line"], 4);
        assert!(lines[3]["error"].is_string());
    }

    #[test]
    fn cli_list_shows_keys_with_descriptions() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            "[approvals]\ncommand_allowlist = [\"git.force_push\", \"podman *\"]\n",
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(list(&config, false, &mut out).unwrap(), 2);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("git.force_push\tgit force push"), "{text}");
        assert!(text.contains("podman *\twhole-command glob"), "{text}");
        let mut out = Vec::new();
        list_rules(true, &mut out).unwrap();
        let listed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(listed.as_array().unwrap().len(), rules::ALL.len());
    }

    #[test]
    fn revoke_removes_a_key_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(
            &config,
            "[approvals]\n# rules I trust\ncommand_allowlist = [\"git.force_push\"]  # keep\n",
        )
        .unwrap();
        let mut out = Vec::new();
        revoke(&config, "git.force_push", &mut out).unwrap();
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(
            !text.contains("git.force_push") && text.contains("# rules I trust"),
            "{text}"
        );
        assert!(revoke(&config, "git.force_push", &mut out).is_err());
        assert!(revoke(&config, "hardline.rm_root", &mut out).is_err());
    }
}
