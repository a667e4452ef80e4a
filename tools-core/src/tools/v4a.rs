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

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use crate::files::{FileKind, FileSystem};
use crate::tools::fuzzy_match::{MatchError, closest_sections, find_and_replace};
use crate::tools::text_file::{TextStyle, diff_label, unified_diff};

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

/// A file-system change the plan will make, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Atomically replace `path` with `content`.
    Write {
        /// Absolute path.
        path: PathBuf,
        /// Bytes to write (already in the file's style).
        content: String,
    },
    /// Delete `path`.
    Remove(PathBuf),
    /// Rename `from` to `to`.
    Rename {
        /// Absolute source.
        from: PathBuf,
        /// Absolute destination.
        to: PathBuf,
    },
}

/// A validated patch: what to do and what to report.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Changes, in order.
    pub actions: Vec<Action>,
    /// Per-operation diffs.
    pub diffs: Vec<String>,
    /// Absolute paths edited (moves as `from -> to`).
    pub modified: Vec<String>,
    /// Absolute paths created.
    pub created: Vec<String>,
    /// Absolute paths deleted.
    pub deleted: Vec<String>,
}

/// What a path holds while the plan is simulated.
#[derive(Clone, Debug)]
enum Entry {
    Text(String, TextStyle),
    Deleted,
    /// Unchanged content of another on-disk file (after a move).
    At(PathBuf),
}

struct Simulation<'a> {
    fs: &'a dyn FileSystem,
    overlay: HashMap<PathBuf, Entry>,
}

impl Simulation<'_> {
    fn on_disk(&self, path: &Path) -> PathBuf {
        match self.overlay.get(path) {
            Some(Entry::At(origin)) => origin.clone(),
            _ => path.to_path_buf(),
        }
    }

    fn exists(&self, path: &Path) -> bool {
        match self.overlay.get(path) {
            Some(Entry::Text(..)) => true,
            Some(Entry::Deleted) => false,
            Some(Entry::At(origin)) => self.fs.exists(origin),
            None => self.fs.exists(path),
        }
    }

    fn load(&self, path: &Path) -> Result<(String, TextStyle), String> {
        match self.overlay.get(path) {
            Some(Entry::Text(text, style)) => return Ok((text.clone(), *style)),
            Some(Entry::Deleted) => {
                return Err("file not found (deleted earlier in this patch)".into());
            }
            _ => {}
        }
        let disk = self.on_disk(path);
        match self.fs.metadata(&disk) {
            Ok(meta) if meta.kind != FileKind::File => return Err("not a regular file".into()),
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err("file not found".into());
            }
            Err(err) => return Err(err.to_string()),
        }
        let bytes = self.fs.read(&disk).map_err(|e| e.to_string())?;
        TextStyle::decode(&bytes)
            .ok_or_else(|| "not valid UTF-8 text; edit it with the terminal instead".to_string())
    }
}

/// Simulate `ops` against `fs` (paths resolved with `resolve`); all errors, or the plan.
pub fn plan(
    ops: &[Op],
    fs: &dyn FileSystem,
    resolve: &dyn Fn(&str) -> PathBuf,
) -> Result<Plan, Vec<String>> {
    let mut sim = Simulation {
        fs,
        overlay: HashMap::new(),
    };
    let mut plan = Plan::default();
    let mut errors = Vec::new();
    let mut real_changes = 0usize;
    let shown = |p: &Path| p.display().to_string();

    for op in ops {
        match op {
            Op::Add { path, lines } => {
                real_changes += 1;
                let abs = resolve(path);
                if sim.exists(&abs) {
                    errors.push(format!(
                        "{path}: already exists — use '*** Update File' or write_file to \
                         replace it"
                    ));
                    continue;
                }
                let mut text = lines.join("\n");
                if !text.is_empty() {
                    text.push('\n');
                }
                plan.diffs
                    .push(unified_diff("", &text, "/dev/null", &diff_label("b", path)));
                plan.actions.push(Action::Write {
                    path: abs.clone(),
                    content: text.clone(),
                });
                plan.created.push(shown(&abs));
                sim.overlay
                    .insert(abs, Entry::Text(text, TextStyle::default()));
            }
            Op::Delete { path } => {
                real_changes += 1;
                let abs = resolve(path);
                if !sim.exists(&abs) {
                    errors.push(format!("{path}: file not found for deletion"));
                    continue;
                }
                let diff = match sim.load(&abs) {
                    Ok((text, _)) => unified_diff(&text, "", &diff_label("a", path), "/dev/null"),
                    Err(_) => format!("# Deleted: {path}"),
                };
                plan.diffs.push(diff);
                plan.actions.push(Action::Remove(sim.on_disk(&abs)));
                plan.deleted.push(shown(&abs));
                sim.overlay.insert(abs, Entry::Deleted);
            }
            Op::Move { from, to } => {
                real_changes += 1;
                let (src, dst) = (resolve(from), resolve(to));
                if !sim.exists(&src) {
                    errors.push(format!("{from}: source file not found for move"));
                    continue;
                }
                if sim.exists(&dst) {
                    errors.push(format!(
                        "{to}: destination already exists — move would overwrite"
                    ));
                    continue;
                }
                plan.diffs.push(format!("# Moved: {from} -> {to}"));
                plan.actions.push(Action::Rename {
                    from: src.clone(),
                    to: dst.clone(),
                });
                plan.modified
                    .push(format!("{} -> {}", shown(&src), shown(&dst)));
                let moved = match sim.overlay.remove(&src) {
                    Some(Entry::At(origin)) => Entry::At(origin),
                    Some(entry @ Entry::Text(..)) => entry,
                    _ => Entry::At(src.clone()),
                };
                sim.overlay.insert(dst, moved);
                sim.overlay.insert(src, Entry::Deleted);
            }
            Op::Update {
                path,
                move_to,
                hunks,
            } => {
                let abs = resolve(path);
                let (original, style) = match sim.load(&abs) {
                    Ok(loaded) => loaded,
                    Err(reason) => {
                        errors.push(format!("{path}: {reason}"));
                        continue;
                    }
                };
                let mut text = original.clone();
                let mut failed = false;
                for (index, hunk) in hunks.iter().enumerate() {
                    match apply_hunk(&text, hunk) {
                        Ok(Some(next)) => {
                            text = next;
                            real_changes += 1;
                        }
                        Ok(None) => {}
                        Err(reason) => {
                            let label = hunk
                                .hint
                                .as_deref()
                                .map_or("(no hint)".to_string(), |h| format!("'{h}'"));
                            errors.push(format!("{path}: hunk {} {label}: {reason}", index + 1));
                            failed = true;
                            break;
                        }
                    }
                }
                if failed {
                    continue;
                }
                let target = match move_to {
                    Some(dest) => {
                        let dst = resolve(dest);
                        if dst != abs && sim.exists(&dst) {
                            errors.push(format!(
                                "{dest}: destination already exists — move would overwrite"
                            ));
                            continue;
                        }
                        real_changes += 1;
                        Some((dest.as_str(), dst))
                    }
                    None => None,
                };
                let new_name = target.as_ref().map_or(path.as_str(), |(d, _)| d);
                plan.diffs.push(unified_diff(
                    &original,
                    &text,
                    &diff_label("a", path),
                    &diff_label("b", new_name),
                ));
                match target {
                    Some((_, dst)) if dst != abs => {
                        plan.actions.push(Action::Write {
                            path: dst.clone(),
                            content: style.encode(&text),
                        });
                        plan.actions.push(Action::Remove(sim.on_disk(&abs)));
                        plan.modified
                            .push(format!("{} -> {}", shown(&abs), shown(&dst)));
                        sim.overlay.insert(dst, Entry::Text(text, style));
                        sim.overlay.insert(abs, Entry::Deleted);
                    }
                    _ => {
                        plan.actions.push(Action::Write {
                            path: abs.clone(),
                            content: style.encode(&text),
                        });
                        plan.modified.push(shown(&abs));
                        sim.overlay.insert(abs, Entry::Text(text, style));
                    }
                }
            }
        }
    }
    if errors.is_empty() && real_changes == 0 {
        errors.push("Patch contains no changes (only context lines were provided)".into());
    }
    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

/// Apply one hunk to `text`: `Ok(None)` for an inert hunk (context only).
fn apply_hunk(text: &str, hunk: &Hunk) -> Result<Option<String>, String> {
    let mut search = Vec::new();
    let mut replace = Vec::new();
    let mut changes = false;
    for line in &hunk.lines {
        match line {
            HunkLine::Context(t) => {
                search.push(t.as_str());
                replace.push(t.as_str());
            }
            HunkLine::Remove(t) => {
                search.push(t.as_str());
                changes = true;
            }
            HunkLine::Add(t) => {
                replace.push(t.as_str());
                changes = true;
            }
        }
    }
    if !changes {
        return Ok(None);
    }
    let replacement = replace.join("\n");
    if search.is_empty() {
        return insert_at_hint(text, hunk.hint.as_deref(), &replacement).map(Some);
    }
    let pattern = search.join("\n");
    match find_and_replace(text, &pattern, &replacement, false) {
        Ok(done) => Ok(Some(done.content)),
        Err(first) => {
            if let Some(hint) = hunk.hint.as_deref()
                && let Some(done) = replace_near_hint(text, hint, &pattern, &replacement)
            {
                return Ok(Some(done));
            }
            let mut reason = first.to_string();
            if first == MatchError::NotFound {
                let sections = closest_sections(&pattern, text);
                if !sections.is_empty() {
                    reason.push_str("\n\nDid you mean one of these sections?\n");
                    reason.push_str(&sections);
                }
            }
            Err(reason)
        }
    }
}

/// Retry a hunk inside a window around its (unique) hint: an ambiguous or fuzzy hunk
/// is often unique near the place the model named.
fn replace_near_hint(text: &str, hint: &str, pattern: &str, replacement: &str) -> Option<String> {
    let mut found = text.match_indices(hint);
    let (pos, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let mut start = pos.saturating_sub(500);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (pos + hint.len() + 2000).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let done = find_and_replace(&text[start..end], pattern, replacement, false).ok()?;
    Some(format!(
        "{}{}{}",
        &text[..start],
        done.content,
        &text[end..]
    ))
}

/// Insert an addition-only hunk after the line holding `hint`, or at the end.
fn insert_at_hint(text: &str, hint: Option<&str>, insert: &str) -> Result<String, String> {
    let Some(hint) = hint else {
        let mut out = text.trim_end_matches('\n').to_string();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(insert);
        out.push('\n');
        return Ok(out);
    };
    let hits: Vec<usize> = text.match_indices(hint).map(|(i, _)| i).collect();
    match hits.as_slice() {
        [] => Err(format!(
            "addition-only hunk context hint '{hint}' not found"
        )),
        [pos] => {
            let eol = text[*pos..].find('\n').map(|i| pos + i + 1);
            Ok(match eol {
                Some(eol) => format!("{}{insert}\n{}", &text[..eol], &text[eol..]),
                None => format!("{text}\n{insert}"),
            })
        }
        many => Err(format!(
            "addition-only hunk context hint '{hint}' is ambiguous ({} occurrences) — \
             provide a more unique hint",
            many.len()
        )),
    }
}

/// Carry out a plan; returns the failures (empty = all done).
pub fn apply(plan: &Plan, fs: &dyn FileSystem) -> Vec<String> {
    let mut failures = Vec::new();
    for action in &plan.actions {
        let outcome = match action {
            Action::Write { path, content } => fs
                .write_atomic(path, content.as_bytes())
                .map(|_| ())
                .map_err(|e| format!("write {}: {e}", path.display())),
            Action::Remove(path) => fs
                .remove_file(path)
                .map_err(|e| format!("delete {}: {e}", path.display())),
            Action::Rename { from, to } => fs
                .rename(from, to)
                .map_err(|e| format!("move {} -> {}: {e}", from.display(), to.display())),
        };
        if let Err(failure) = outcome {
            failures.push(failure);
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LocalFileSystem;

    #[test]
    fn parses_all_operation_kinds() {
        let patch = "*** Begin Patch\n*** Update File: a.py\n@@ def f(): @@\n x = 1\n-y = 2\n+y = 3\n\n*** Add File: b.py\n+hello\n*** Delete File: c.py\n*** Move File: d.py -> e.py\n*** End Patch\n";
        let ops = parse(patch).unwrap();
        assert_eq!(
            ops,
            vec![
                Op::Update {
                    path: "a.py".into(),
                    move_to: None,
                    hunks: vec![Hunk {
                        hint: Some("def f():".into()),
                        lines: vec![
                            HunkLine::Context("x = 1".into()),
                            HunkLine::Remove("y = 2".into()),
                            HunkLine::Add("y = 3".into()),
                        ],
                    }],
                },
                Op::Add {
                    path: "b.py".into(),
                    lines: vec!["hello".into()],
                },
                Op::Delete {
                    path: "c.py".into()
                },
                Op::Move {
                    from: "d.py".into(),
                    to: "e.py".into()
                },
            ]
        );
    }

    #[test]
    fn update_without_hunks_is_a_parse_error() {
        let err = parse("*** Begin Patch\n*** Update File: a.py\n*** End Patch").unwrap_err();
        assert!(err.contains("no hunks"), "{err}");
    }

    #[test]
    fn traversal_is_detected() {
        assert!(has_traversal("../etc/passwd"));
        assert!(has_traversal("a/../../b"));
        assert!(!has_traversal("a/b..c"));
    }

    fn sim_fs() -> (tempfile::TempDir, LocalFileSystem) {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem::new(dir.path());
        (dir, fs)
    }

    #[test]
    fn later_operations_see_earlier_ones() {
        let (dir, fs) = sim_fs();
        let patch = "*** Begin Patch\n*** Add File: n.txt\n+one\n*** Update File: n.txt\n-one\n+two\n*** End Patch";
        let ops = parse(patch).unwrap();
        let resolve = |p: &str| fs.resolve(p);
        let plan = plan(&ops, &fs, &resolve).unwrap();
        assert!(apply(&plan, &fs).is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("n.txt")).unwrap(),
            "two\n"
        );
    }

    #[test]
    fn blank_context_lines_match_blank_file_lines() {
        let (dir, fs) = sim_fs();
        std::fs::write(dir.path().join("f.txt"), "a\n\nb\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: f.txt\n a\n\n-b\n+c\n*** End Patch";
        let ops = parse(patch).unwrap();
        let resolve = |p: &str| fs.resolve(p);
        let plan = plan(&ops, &fs, &resolve).unwrap();
        assert!(apply(&plan, &fs).is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "a\n\nc\n"
        );
    }

    #[test]
    fn addition_only_hunk_inserts_after_hint() {
        assert_eq!(
            insert_at_hint("a\nb\nc\n", Some("b"), "x").unwrap(),
            "a\nb\nx\nc\n"
        );
        assert_eq!(insert_at_hint("a", None, "x").unwrap(), "a\nx\n");
        assert!(insert_at_hint("b\nb\n", Some("b"), "x").is_err());
    }
}
