//! V4A multi-file patches (`patch` with `mode="patch"`), the format codex and other
//! coding agents emit:
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! @@ def main(): @@
//!  context line
//! -removed line
//! +added line
//! *** Add File: src/new.py
//! +first line
//! *** Delete File: old.py
//! *** Move File: a.py -> b.py
//! *** End Patch
//! ```
//!
//! The whole patch is planned in memory first — every hunk located (with the same fuzzy
//! matching as replace mode), later operations seeing earlier ones — and nothing is
//! written unless every operation validates. Then the writes run in order, each atomic.
//!
//! Differences from Hermes: Hermes validates, then re-applies hunks from scratch (the
//! two passes use different fallbacks, so a patch can validate and then fail half-way);
//! here the planned content is exactly what gets written. `*** Add File` on an existing
//! file is an error instead of a silent overwrite; added files end with a newline; a
//! blank line inside a hunk is a blank context line (Hermes drops it, so hunks around
//! blank lines failed to match); codex's `*** Move to:` after `*** Update File` and
//! `@@ hint` without a closing `@@` are understood; a non-UTF-8 file is refused instead
//! of being rewritten lossily.

mod apply;

use std::path::{Component, Path};

pub use apply::{Action, Plan, apply, plan};

/// One line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkLine {
    /// Unchanged (` ` prefix, or no known prefix).
    Context(String),
    /// Removed (`-`).
    Remove(String),
    /// Added (`+`).
    Add(String),
}

/// A group of changes in one file, optionally located by a hint (`@@ hint @@`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hunk {
    /// Text of a line near the change.
    pub hint: Option<String>,
    /// The lines.
    pub lines: Vec<HunkLine>,
}

/// One file operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Create a file with these lines.
    Add {
        /// Path as written in the patch.
        path: String,
        /// Content lines.
        lines: Vec<String>,
    },
    /// Edit a file (and maybe move it).
    Update {
        /// Path as written in the patch.
        path: String,
        /// Codex's `*** Move to:`.
        move_to: Option<String>,
        /// The edits.
        hunks: Vec<Hunk>,
    },
    /// Delete a file.
    Delete {
        /// Path as written in the patch.
        path: String,
    },
    /// Rename a file.
    Move {
        /// Source path.
        from: String,
        /// Destination path.
        to: String,
    },
}

fn header<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let rest = line.strip_prefix("***")?.trim_start();
    let mut words = keyword.split(' ');
    let mut rest = rest;
    for word in words.by_ref() {
        rest = rest.strip_prefix(word)?.trim_start();
    }
    Some(rest.trim())
}

fn file_header<'a>(line: &'a str, verb: &str) -> Option<&'a str> {
    let rest = line.strip_prefix("***")?.trim_start().strip_prefix(verb)?;
    let rest = rest.trim_start().strip_prefix("File:")?;
    Some(rest.trim())
}

/// Parse a V4A patch. Errors name every malformed operation.
pub fn parse(patch: &str) -> Result<Vec<Op>, String> {
    let lines: Vec<&str> = patch
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let begin = lines
        .iter()
        .position(|l| header(l, "Begin Patch").is_some());
    let start = begin.map_or(0, |i| i + 1);
    let end = lines[start..]
        .iter()
        .position(|l| header(l, "End Patch").is_some())
        .map_or(lines.len(), |i| start + i);

    let mut ops: Vec<Op> = Vec::new();
    let mut current: Option<Op> = None;
    let mut hunk: Option<Hunk> = None;

    fn finish_hunk(current: &mut Option<Op>, hunk: &mut Option<Hunk>) {
        if let Some(mut h) = hunk.take() {
            while matches!(h.lines.last(), Some(HunkLine::Context(c)) if c.is_empty()) {
                h.lines.pop();
            }
            if let Some(Op::Update { hunks, .. }) = current
                && !h.lines.is_empty()
            {
                hunks.push(h);
            }
        }
    }
    fn finish_op(ops: &mut Vec<Op>, current: &mut Option<Op>, hunk: &mut Option<Hunk>) {
        finish_hunk(current, hunk);
        if let Some(op) = current.take() {
            ops.push(op);
        }
    }

    for &line in &lines[start..end] {
        if let Some(path) = file_header(line, "Update") {
            finish_op(&mut ops, &mut current, &mut hunk);
            current = Some(Op::Update {
                path: path.to_string(),
                move_to: None,
                hunks: Vec::new(),
            });
        } else if let Some(path) = file_header(line, "Add") {
            finish_op(&mut ops, &mut current, &mut hunk);
            current = Some(Op::Add {
                path: path.to_string(),
                lines: Vec::new(),
            });
        } else if let Some(path) = file_header(line, "Delete") {
            finish_op(&mut ops, &mut current, &mut hunk);
            ops.push(Op::Delete {
                path: path.to_string(),
            });
        } else if let Some(spec) = file_header(line, "Move") {
            finish_op(&mut ops, &mut current, &mut hunk);
            let (from, to) = spec.split_once("->").unwrap_or((spec, ""));
            ops.push(Op::Move {
                from: from.trim().to_string(),
                to: to.trim().to_string(),
            });
        } else if let Some(dest) = header(line, "Move to:") {
            if let Some(Op::Update { move_to, .. }) = &mut current {
                *move_to = Some(dest.to_string());
            }
        } else if header(line, "End of File").is_some() {
            continue;
        } else if let Some(rest) = line.strip_prefix("@@") {
            if matches!(current, Some(Op::Update { .. })) {
                finish_hunk(&mut current, &mut hunk);
                let hint = rest.trim().trim_end_matches("@@").trim();
                hunk = Some(Hunk {
                    hint: (!hint.is_empty()).then(|| hint.to_string()),
                    lines: Vec::new(),
                });
            }
        } else {
            match &mut current {
                Some(Op::Add { lines, .. }) => {
                    if let Some(text) = line.strip_prefix('+') {
                        lines.push(text.to_string());
                    }
                }
                Some(Op::Update { .. }) => {
                    if line.starts_with('\\') {
                        continue;
                    }
                    let parsed = if let Some(t) = line.strip_prefix('+') {
                        HunkLine::Add(t.to_string())
                    } else if let Some(t) = line.strip_prefix('-') {
                        HunkLine::Remove(t.to_string())
                    } else if let Some(t) = line.strip_prefix(' ') {
                        HunkLine::Context(t.to_string())
                    } else {
                        HunkLine::Context(line.to_string())
                    };
                    hunk.get_or_insert_with(Hunk::default).lines.push(parsed);
                }
                _ => {}
            }
        }
    }
    finish_op(&mut ops, &mut current, &mut hunk);

    let mut errors = Vec::new();
    for op in &ops {
        match op {
            Op::Add { path, .. } | Op::Delete { path } if path.is_empty() => {
                errors.push("operation with an empty file path".to_string());
            }
            Op::Update { path, hunks, .. } => {
                if path.is_empty() {
                    errors.push("operation with an empty file path".to_string());
                } else if hunks.is_empty() {
                    errors.push(format!("UPDATE {path:?}: no hunks found"));
                }
            }
            Op::Move { from, to } if from.is_empty() || to.is_empty() => {
                errors.push(format!(
                    "MOVE {from:?}: missing source or destination (expected 'src -> dst')"
                ));
            }
            _ => {}
        }
    }
    if errors.is_empty() {
        Ok(ops)
    } else {
        Err(errors.join("; "))
    }
}

/// Every path the patch touches, as written (for guards and path-scoped locking).
pub fn paths(ops: &[Op]) -> Vec<&str> {
    let mut out = Vec::new();
    for op in ops {
        match op {
            Op::Add { path, .. } | Op::Delete { path } => out.push(path.as_str()),
            Op::Update { path, move_to, .. } => {
                out.push(path.as_str());
                if let Some(dest) = move_to {
                    out.push(dest.as_str());
                }
            }
            Op::Move { from, to } => {
                out.push(from.as_str());
                out.push(to.as_str());
            }
        }
    }
    out
}

/// True when `path` climbs with `..` (refused in patch headers: a patch's paths come
/// from content the model may have read, not from the model's own `path` argument).
pub fn has_traversal(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|c| matches!(c, Component::ParentDir))
}

#[cfg(test)]
#[path = "v4a/tests.rs"]
mod tests;
