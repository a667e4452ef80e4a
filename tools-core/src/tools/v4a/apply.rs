//! Planning and applying a parsed V4A patch: every operation simulated in memory
//! (later operations see earlier ones), all errors collected, and only a fully valid
//! plan is written — each file atomically, in order. An edited file is only replaced
//! if it still holds the bytes the plan read (else "file changed, re-read it").

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{Hunk, HunkLine, Op};
use crate::files::{ContentHash, FileKind, FileSystem};
use crate::tools::file_lookup::changed_message;
use crate::tools::fuzzy_match::{MatchError, closest_sections, find_and_replace};
use crate::tools::text_file::{TextStyle, diff_label, unified_diff};

/// A file-system change the plan will make, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Atomically replace `path` with `content`.
    Write {
        /// Absolute path.
        path: PathBuf,
        /// Bytes to write (already in the file's style).
        content: String,
        /// The hash of the file as the plan read it (`None`: a new file, or one this
        /// plan wrote earlier).
        expected: Option<ContentHash>,
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

    /// The text at `path`, its style, and the hash of its bytes when read from disk.
    fn load(&self, path: &Path) -> Result<(String, TextStyle, Option<ContentHash>), String> {
        match self.overlay.get(path) {
            Some(Entry::Text(text, style)) => return Ok((text.clone(), *style, None)),
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
        let (text, style) = TextStyle::decode(&bytes)
            .ok_or_else(|| "not valid UTF-8 text; edit it with the terminal instead".to_string())?;
        // A file reached through a move is read at its origin: not the path written.
        let hash = (disk == path).then(|| ContentHash::of(&bytes));
        Ok((text, style, hash))
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
                    expected: None,
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
                    Ok((text, _, _)) => {
                        unified_diff(&text, "", &diff_label("a", path), "/dev/null")
                    }
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
                let (original, style, disk_hash) = match sim.load(&abs) {
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
                            expected: None,
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
                            expected: disk_hash,
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
pub(super) fn insert_at_hint(
    text: &str,
    hint: Option<&str>,
    insert: &str,
) -> Result<String, String> {
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
            Action::Write {
                path,
                content,
                expected,
            } => match expected {
                Some(expected) => fs.write_atomic_if_unchanged(path, content.as_bytes(), expected),
                None => fs.write_atomic(path, content.as_bytes()),
            }
            .map(|_| ())
            .map_err(|e| {
                if crate::files::is_file_changed(&e) {
                    changed_message(&path.display().to_string())
                } else {
                    format!("write {}: {e}", path.display())
                }
            }),
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
