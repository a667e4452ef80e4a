//! The `memory` tool's state: two bounded stores of short entries that persist across
//! sessions — `memory` (the agent's notes, `MEMORY.md`) and `user` (the user profile,
//! `USER.md`) — in Hermes' file format (entries joined by `\n§\n`).
//!
//! Hermes' semantics: `add` appends (exact duplicates are a no-op), `replace` and
//! `remove` pick the one entry containing `old_text` (several identical entries count
//! as one); a character budget per store (2,200 / 1,375 by default) is checked on the
//! result, and an over-budget or unmatched call returns the current entries so the
//! model can consolidate; `operations` applies a batch all-or-nothing against the final
//! budget; content is screened for injection; a file edited outside the tool in a way
//! that would not survive a rewrite ("drift") is backed up and the rewrite refused.
//! Every call re-reads the file under a lock, so concurrent sessions never lose writes.
//!
//! Differences: Hermes' per-turn "stop retrying" counter needs turn boundaries toolhost
//! does not see and is not reproduced; no write-approval gate (off by default in Hermes).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolhost_text::thousands;

use super::read_state;
use super::threat_scan::{first_threat_message, scan_for_threats};
use crate::atomic_file::write_atomic;
use crate::file_lock::FileLock;
use crate::tools::args::{self, Given, lenient};

/// The `memory` tool's arguments (Hermes' names; the schema is in `tools/memory.rs`).
/// Batch items are read one by one, leniently, as Hermes reads them.
#[derive(Debug, Deserialize)]
pub struct MemoryArgs {
    /// `memory` (default) or `user`.
    #[serde(default)]
    target: Option<Given<String>>,
    /// The batch shape: `{action, content?, old_text?}` items applied all-or-nothing.
    #[serde(default)]
    operations: Option<Given<Vec<Value>>>,
    /// The single-op shape: `add`, `replace` or `remove`.
    #[serde(default, deserialize_with = "lenient::string")]
    action: Option<String>,
    /// The single-op shape: the entry text.
    #[serde(default, deserialize_with = "lenient::string")]
    content: Option<String>,
    /// The single-op shape: a substring of the entry to change.
    #[serde(default, deserialize_with = "lenient::string")]
    old_text: Option<String>,
}

/// Separates entries in the files.
pub const ENTRY_DELIMITER: &str = "\n§\n";

/// Which store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Memory,
    User,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Memory => "memory",
            Target::User => "user",
        }
    }
    fn file_name(self) -> &'static str {
        match self {
            Target::Memory => "MEMORY.md",
            Target::User => "USER.md",
        }
    }
}

/// The two memory stores on disk.
#[derive(Debug)]
pub struct MemoryStore {
    dir: PathBuf,
    memory_limit: usize,
    user_limit: usize,
    lock: Mutex<()>,
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

fn total_chars(entries: &[String]) -> usize {
    if entries.is_empty() {
        0
    } else {
        chars(&entries.join(ENTRY_DELIMITER))
    }
}

fn failure(message: impl Into<String>) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("success".into(), json!(false));
    out.insert("error".into(), json!(message.into()));
    out
}

/// One-line previews for an ambiguous match.
fn previews(entries: &[&String]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            let head: String = e.chars().take(80).collect();
            if chars(e) > 80 {
                format!("{head}...")
            } else {
                head
            }
        })
        .collect()
}

/// Parse a memory file: entries trimmed, empties dropped, duplicates removed.
fn parse_entries(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for entry in raw.split(ENTRY_DELIMITER).map(str::trim) {
        if !entry.is_empty() && !out.iter().any(|e| e == entry) {
            out.push(entry.to_string());
        }
    }
    out
}

/// The advisory lock of the memory file at `path` (`<file>.md.lock`).
fn lock_memory_file(path: &Path) -> std::io::Result<FileLock> {
    FileLock::acquire(&path.with_extension("md.lock"))
}

/// An operation of a batch (or a single call).
struct MemOp {
    action: String,
    content: String,
    old_text: String,
}

impl MemoryStore {
    /// Stores under `dir` with the two character budgets.
    pub fn new(dir: PathBuf, memory_limit: usize, user_limit: usize) -> Self {
        MemoryStore {
            dir,
            memory_limit,
            user_limit,
            lock: Mutex::new(()),
        }
    }

    fn path(&self, target: Target) -> PathBuf {
        self.dir.join(target.file_name())
    }

    fn limit(&self, target: Target) -> usize {
        match target {
            Target::Memory => self.memory_limit,
            Target::User => self.user_limit,
        }
    }

    /// The entries of a store (`"memory"` or `"user"`); unknown names give `None`.
    pub fn entries(&self, target: &str) -> Option<Vec<String>> {
        let target = parse_target(target)?;
        Some(self.load(target).unwrap_or_default())
    }

    fn load(&self, target: Target) -> Result<Vec<String>, String> {
        let path = self.path(target);
        match read_state(&path) {
            Ok(text) => Ok(text.map(|t| parse_entries(&t)).unwrap_or_default()),
            Err(err) => Err(format!("cannot read {}: {err}", path.display())),
        }
    }

    fn save(&self, target: Target, entries: &[String]) -> Result<(), String> {
        let path = self.path(target);
        write_atomic(&path, entries.join(ENTRY_DELIMITER).as_bytes())
            .map_err(|e| format!("cannot save memory to {}: {e}", path.display()))
    }

    /// When the file holds text a rewrite would lose (it does not round-trip, or one
    /// entry is larger than the whole budget — someone appended free text), back it
    /// up and return the backup path.
    fn drift_backup(&self, target: Target) -> Option<String> {
        let path = self.path(target);
        let raw = read_state(&path).ok()??;
        if raw.trim().is_empty() {
            return None;
        }
        let parsed: Vec<&str> = raw
            .split(ENTRY_DELIMITER)
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        let round_trip = parsed.join(ENTRY_DELIMITER);
        let oversized = parsed.iter().any(|e| chars(e) > self.limit(target));
        if raw.trim() == round_trip && !oversized {
            return None;
        }
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let backup = path.with_file_name(format!("{}.bak.{stamp}", target.file_name()));
        match std::fs::write(&backup, &raw) {
            Ok(()) => Some(backup.display().to_string()),
            Err(_) => Some(format!(
                "{} (BACKUP FAILED — file unchanged on disk)",
                backup.display()
            )),
        }
    }

    fn usage(&self, target: Target, entries: &[String]) -> String {
        format!(
            "{}/{}",
            thousands(total_chars(entries) as u64),
            thousands(self.limit(target) as u64)
        )
    }

    fn success(&self, target: Target, entries: &[String], message: &str) -> Map<String, Value> {
        let current = total_chars(entries);
        let limit = self.limit(target);
        let pct = (current * 100).checked_div(limit).map_or(0, |p| p.min(100));
        let mut out = Map::new();
        out.insert("success".into(), json!(true));
        out.insert("done".into(), json!(true));
        out.insert("target".into(), json!(target.name()));
        out.insert(
            "usage".into(),
            json!(format!("{pct}% — {}", self.usage(target, entries))),
        );
        out.insert("entry_count".into(), json!(entries.len()));
        out.insert("message".into(), json!(message));
        out.insert(
            "note".into(),
            json!("Write saved. This update is complete — do not repeat it."),
        );
        out
    }

    fn with_entries(
        &self,
        mut out: Map<String, Value>,
        target: Target,
        entries: &[String],
    ) -> Map<String, Value> {
        out.insert("current_entries".into(), json!(entries));
        out.insert("usage".into(), json!(self.usage(target, entries)));
        out
    }

    /// The `memory` tool.
    pub fn handle(&self, args: &Value) -> Value {
        match args::parse::<MemoryArgs>(args.clone()) {
            Ok(args) => Value::Object(self.handle_map(args)),
            Err(err) => err.to_result(),
        }
    }

    fn handle_map(&self, args: MemoryArgs) -> Map<String, Value> {
        let target = match &args.target {
            None => Target::Memory,
            Some(Given::Ok(name)) => match parse_target(name) {
                Some(target) => target,
                None => {
                    return failure(format!("Invalid target '{name}'. Use 'memory' or 'user'."));
                }
            },
            Some(Given::Other(_)) => return failure("Invalid target. Use 'memory' or 'user'."),
        };
        match &args.operations {
            None => {}
            Some(Given::Ok(ops)) if ops.is_empty() => {}
            Some(Given::Ok(ops)) => return self.batch(target, ops),
            Some(Given::Other(_)) => {
                return failure(
                    "operations must be a list of {action, content?, old_text?} objects.",
                );
            }
        }
        let text =
            |field: &Option<String>| field.as_deref().map(str::trim).unwrap_or("").to_string();
        let op = MemOp {
            action: text(&args.action),
            content: text(&args.content),
            old_text: text(&args.old_text),
        };
        match op.action.as_str() {
            "add" if op.content.is_empty() => failure("Content is required for 'add' action."),
            "replace" | "remove" if op.old_text.is_empty() => {
                self.missing_old_text(target, &op.action)
            }
            "replace" if op.content.is_empty() => {
                failure("content is required for 'replace' action. Use 'remove' to delete entries.")
            }
            "add" | "replace" | "remove" => self.single(target, &op),
            "" => failure("action is required: add, replace or remove (or pass 'operations')."),
            other => failure(format!(
                "Unknown action '{other}'. Use: add, replace, remove"
            )),
        }
    }

    fn missing_old_text(&self, target: Target, action: &str) -> Map<String, Value> {
        let entries = self.load(target).unwrap_or_default();
        self.with_entries(
            failure(format!(
                "'{action}' needs old_text -- a short unique substring of the entry to \
                 {action}. None was provided. Reissue the {action} with old_text set to part \
                 of one of the current_entries below."
            )),
            target,
            &entries,
        )
    }

    fn single(&self, target: Target, op: &MemOp) -> Map<String, Value> {
        if op.action != "remove"
            && let Some(threat) = first_threat_message(&op.content)
        {
            return failure(threat);
        }
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let _file_lock = match lock_memory_file(&self.path(target)) {
            Ok(lock) => lock,
            Err(err) => return failure(format!("cannot lock the memory file: {err}")),
        };
        // Appending never rewrites existing entries, so only replace/remove need the
        // drift guard.
        if op.action != "add"
            && let Some(backup) = self.drift_backup(target)
        {
            return self.drift_error(target, &backup);
        }
        let mut entries = match self.load(target) {
            Ok(entries) => entries,
            Err(err) => return failure(err),
        };
        let limit = self.limit(target);
        let message = match op.action.as_str() {
            "add" => {
                if entries.contains(&op.content) {
                    return self.success(
                        target,
                        &entries,
                        "Entry already exists (no duplicate added).",
                    );
                }
                let mut next = entries.clone();
                next.push(op.content.clone());
                if total_chars(&next) > limit {
                    return self.with_entries(
                        failure(format!(
                            "Memory at {}/{} chars. Adding this entry ({} chars) would exceed \
                             the limit. Consolidate now: use 'replace' to merge overlapping \
                             entries into shorter ones or 'remove' stale or less important \
                             entries (see current_entries below), then retry this add — or do \
                             it all in one 'operations' batch.",
                            thousands(total_chars(&entries) as u64),
                            thousands(limit as u64),
                            chars(&op.content)
                        )),
                        target,
                        &entries,
                    );
                }
                entries = next;
                "Entry added."
            }
            action => {
                let index = match self.find_one(&entries, &op.old_text) {
                    Ok(index) => index,
                    Err(mut err) => {
                        if !err.contains_key("matches") {
                            err = self.with_entries(err, target, &entries);
                        }
                        return err;
                    }
                };
                if action == "replace" {
                    let mut next = entries.clone();
                    next[index] = op.content.clone();
                    if total_chars(&next) > limit {
                        return self.with_entries(
                            failure(format!(
                                "Replacement would put memory at {}/{} chars. Shorten the new \
                                 content, or 'remove' other stale entries to make room (see \
                                 current_entries below), then retry.",
                                thousands(total_chars(&next) as u64),
                                thousands(limit as u64)
                            )),
                            target,
                            &entries,
                        );
                    }
                    entries = next;
                    "Entry replaced."
                } else {
                    entries.remove(index);
                    "Entry removed."
                }
            }
        };
        if let Err(err) = self.save(target, &entries) {
            return failure(err);
        }
        self.success(target, &entries, message)
    }

    /// The index of the one entry containing `needle` (identical duplicates count as
    /// one), or an error map.
    fn find_one(&self, entries: &[String], needle: &str) -> Result<usize, Map<String, Value>> {
        let hits: Vec<usize> = (0..entries.len())
            .filter(|&i| entries[i].contains(needle))
            .collect();
        match hits.as_slice() {
            [] => Err(failure(format!(
                "No entry matched '{needle}'. Check current_entries below and retry with the \
                 exact text of the entry you want to change."
            ))),
            [first, rest @ ..] if rest.iter().all(|&i| entries[i] == entries[*first]) => Ok(*first),
            _ => {
                let matched: Vec<&String> = hits.iter().map(|&i| &entries[i]).collect();
                let mut err = failure(format!(
                    "Multiple entries matched '{needle}'. Be more specific."
                ));
                err.insert("matches".into(), json!(previews(&matched)));
                Err(err)
            }
        }
    }

    fn drift_error(&self, target: Target, backup: &str) -> Map<String, Value> {
        let mut out = failure(format!(
            "Refusing to write {}: the file on disk has content that would not survive a \
             rewrite by the memory tool (edited by hand, by a file tool, or by another \
             program). A snapshot was saved to {backup}. Resolve it first — rewrite the \
             file as a clean §-delimited list of entries, or move the extra content out — \
             then retry.",
            target.file_name()
        ));
        out.insert("drift_backup".into(), json!(backup));
        out
    }

    fn batch(&self, target: Target, ops: &[Value]) -> Map<String, Value> {
        let parsed: Vec<MemOp> = ops
            .iter()
            .map(|op| {
                let text = |key: &str| {
                    op.get(key)
                        .and_then(Value::as_str)
                        .map(str::trim)
                        .unwrap_or("")
                };
                MemOp {
                    action: text("action").to_string(),
                    content: text("content").to_string(),
                    old_text: text("old_text").to_string(),
                }
            })
            .collect();
        for (i, op) in parsed.iter().enumerate() {
            if matches!(op.action.as_str(), "add" | "replace")
                && let Some(threat) = first_threat_message(&op.content)
            {
                return failure(format!("Operation {}: {threat}", i + 1));
            }
        }
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let _file_lock = match lock_memory_file(&self.path(target)) {
            Ok(lock) => lock,
            Err(err) => return failure(format!("cannot lock the memory file: {err}")),
        };
        if let Some(backup) = self.drift_backup(target) {
            return self.drift_error(target, &backup);
        }
        let entries = match self.load(target) {
            Ok(entries) => entries,
            Err(err) => return failure(err),
        };
        let abort = |message: String| {
            self.with_entries(
                failure(format!(
                    "{message} No operations were applied (batch is all-or-nothing)."
                )),
                target,
                &entries,
            )
        };
        let mut working = entries.clone();
        for (i, op) in parsed.iter().enumerate() {
            let pos = format!(
                "Operation {} ({})",
                i + 1,
                if op.action.is_empty() {
                    "unknown"
                } else {
                    &op.action
                }
            );
            match op.action.as_str() {
                "add" => {
                    if op.content.is_empty() {
                        return abort(format!("{pos}: content is required."));
                    }
                    if !working.contains(&op.content) {
                        working.push(op.content.clone());
                    }
                }
                "replace" | "remove" => {
                    if op.old_text.is_empty() {
                        return abort(format!("{pos}: old_text is required."));
                    }
                    if op.action == "replace" && op.content.is_empty() {
                        return abort(format!(
                            "{pos}: content is required (use action='remove' to delete)."
                        ));
                    }
                    let index = match self.find_one(&working, &op.old_text) {
                        Ok(index) => index,
                        Err(err) => {
                            let reason = err
                                .get("error")
                                .and_then(Value::as_str)
                                .unwrap_or("no unique match")
                                .to_string();
                            return abort(format!("{pos}: {reason}"));
                        }
                    };
                    if op.action == "replace" {
                        working[index] = op.content.clone();
                    } else {
                        working.remove(index);
                    }
                }
                _ => {
                    return abort(format!(
                        "{pos}: unknown action. Use add, replace, or remove."
                    ));
                }
            }
        }
        let limit = self.limit(target);
        let total = total_chars(&working);
        if total > limit {
            return self.with_entries(
                failure(format!(
                    "After applying all {} operations, memory would be at {}/{} chars -- over \
                     the limit. Remove or shorten more entries in the same batch (see \
                     current_entries below), then retry.",
                    parsed.len(),
                    thousands(total as u64),
                    thousands(limit as u64)
                )),
                target,
                &entries,
            );
        }
        if let Err(err) = self.save(target, &working) {
            return failure(err);
        }
        self.success(
            target,
            &working,
            &format!("Applied {} operation(s).", parsed.len()),
        )
    }

    /// Both stores rendered as system-prompt blocks (Hermes' layout); entries that trip
    /// the threat scanner are replaced by a placeholder. `None` when both are empty.
    pub fn render_for_system_prompt(&self) -> Option<String> {
        let blocks: Vec<String> = [Target::User, Target::Memory]
            .into_iter()
            .filter_map(|target| {
                let entries = self.load(target).ok()?;
                if entries.is_empty() {
                    return None;
                }
                let shown: Vec<String> = entries
                    .iter()
                    .map(|entry| {
                        let findings = scan_for_threats(entry);
                        if findings.is_empty() {
                            entry.clone()
                        } else {
                            format!(
                                "[BLOCKED: {} entry contained threat pattern(s): {}. Removed \
                                 from system prompt; use memory(action=remove) to delete the \
                                 original.]",
                                target.file_name(),
                                findings.join(", ")
                            )
                        }
                    })
                    .collect();
                let limit = self.limit(target);
                let current = total_chars(&entries);
                let pct = (current * 100).checked_div(limit).map_or(0, |p| p.min(100));
                let title = match target {
                    Target::Memory => "MEMORY (your personal notes)",
                    Target::User => "USER PROFILE (who the user is)",
                };
                let rule = "═".repeat(46);
                Some(format!(
                    "{rule}\n{title} [{pct}% — {}/{} chars]\n{rule}\n{}",
                    thousands(current as u64),
                    thousands(limit as u64),
                    shown.join(ENTRY_DELIMITER)
                ))
            })
            .collect();
        (!blocks.is_empty()).then(|| blocks.join("\n\n"))
    }
}

fn parse_target(name: &str) -> Option<Target> {
    match name {
        "memory" => Some(Target::Memory),
        "user" => Some(Target::User),
        _ => None,
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;
