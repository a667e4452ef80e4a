//! `skill_manage`: the agent writing its own skills — create, edit (full rewrite),
//! patch (find and replace), delete, write_file and remove_file (supporting files) —
//! with Hermes' validation, messages and result shapes (docs/hermes/skills.md).
//!
//! Every write passes the guard ([`super::guard`]) after it lands; a blocked write is
//! rolled back and the model gets the report, a write with warnings succeeds and
//! carries them in `warnings`. New skills go to `<home>/skills`; existing ones are
//! changed where they live, except bundled skills, which are first copied to
//! `<home>/skills` (the copy then wins over the bundled one).

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use super::catalog::{LookupError, SUPPORT_DIRS, SkillCatalog, SkillEntry, SkillLocation};
use super::frontmatter::{self, MAX_NAME_LENGTH};
use super::guard;
use crate::atomic_file::write_atomic;
use crate::tools::fuzzy_match;

/// Largest `SKILL.md` or text file the agent may write (characters).
pub const MAX_SKILL_CONTENT_CHARS: usize = 100_000;
/// Largest supporting file (bytes).
pub const MAX_SKILL_FILE_BYTES: usize = 1_048_576;

/// The arguments of `skill_manage`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ManageArgs {
    /// create | edit | patch | delete | write_file | remove_file.
    pub action: String,
    /// The skill.
    pub name: String,
    /// Whole `SKILL.md` (create, edit).
    pub content: Option<String>,
    /// Folder to group a new skill under (create).
    pub category: Option<String>,
    /// Supporting file (write_file, remove_file; patch: defaults to `SKILL.md`).
    pub file_path: Option<String>,
    /// Supporting file text (write_file).
    pub file_content: Option<String>,
    /// Text to find (patch).
    pub old_string: Option<String>,
    /// Replacement (patch; may be empty).
    pub new_string: Option<String>,
    /// Replace every occurrence (patch).
    pub replace_all: bool,
    /// The skill this one was merged into (delete; informational).
    pub absorbed_into: Option<String>,
}

fn fail(error: impl Into<String>) -> Value {
    json!({"success": false, "error": error.into()})
}

/// Run one `skill_manage` call.
pub fn manage(catalog: &SkillCatalog, args: &ManageArgs) -> Value {
    let name = args.name.trim();
    let result = match args.action.as_str() {
        "create" => match args.content.as_deref().filter(|c| !c.is_empty()) {
            None => fail(
                "content is required for 'create'. Provide the full SKILL.md text (frontmatter + body).",
            ),
            Some(content) => create(catalog, name, content, args.category.as_deref()),
        },
        "edit" => match args.content.as_deref().filter(|c| !c.is_empty()) {
            None => fail("content is required for 'edit'. Provide the full updated SKILL.md text."),
            Some(content) => edit(catalog, name, content),
        },
        "patch" => match (
            args.old_string.as_deref().filter(|s| !s.is_empty()),
            args.new_string.as_deref(),
        ) {
            (None, _) => fail("old_string is required for 'patch'. Provide the text to find."),
            (_, None) => {
                fail("new_string is required for 'patch'. Use empty string to delete matched text.")
            }
            (Some(old), Some(new)) => patch(
                catalog,
                name,
                old,
                new,
                args.file_path.as_deref(),
                args.replace_all,
            ),
        },
        "delete" => delete(catalog, name, args.absorbed_into.as_deref()),
        "write_file" => match (
            args.file_path.as_deref().filter(|p| !p.is_empty()),
            args.file_content.as_deref(),
        ) {
            (None, _) => {
                fail("file_path is required for 'write_file'. Example: 'references/api-guide.md'")
            }
            (_, None) => fail("file_content is required for 'write_file'."),
            (Some(path), Some(text)) => write_file(catalog, name, path, text),
        },
        "remove_file" => match args.file_path.as_deref().filter(|p| !p.is_empty()) {
            None => fail("file_path is required for 'remove_file'."),
            Some(path) => remove_file(catalog, name, path),
        },
        other => fail(format!(
            "Unknown action '{other}'. Use: create, edit, patch, delete, write_file, remove_file"
        )),
    };
    catalog.invalidate();
    result
}

fn valid_segment(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("Skill name is required.".into());
    }
    if name.chars().count() > MAX_NAME_LENGTH {
        return Err(format!("Skill name exceeds {MAX_NAME_LENGTH} characters."));
    }
    if !valid_segment(name) {
        return Err(format!(
            "Invalid skill name '{name}'. Use lowercase letters, numbers, hyphens, dots, and underscores. Must start with a letter or digit."
        ));
    }
    Ok(())
}

fn validate_category(category: &str) -> Result<(), String> {
    if category.chars().count() > MAX_NAME_LENGTH {
        return Err(format!("Category exceeds {MAX_NAME_LENGTH} characters."));
    }
    if !valid_segment(category) {
        return Err(format!(
            "Invalid category '{category}'. Use lowercase letters, numbers, hyphens, dots, and underscores. Categories must be a single directory name."
        ));
    }
    Ok(())
}

/// Front matter, size, and the front matter's name agreeing with the skill's.
fn validate_skill_md(content: &str, name: &str) -> Result<(), String> {
    let doc = frontmatter::validate(content).map_err(|e| e.to_string())?;
    check_size(content, "SKILL.md")?;
    match doc.str_field("name") {
        Some(declared) if declared.trim() == name => Ok(()),
        Some(declared) => Err(format!(
            "The frontmatter name '{declared}' must match the skill name '{name}'."
        )),
        None => Err("Frontmatter must include 'name' field.".into()),
    }
}

fn check_size(content: &str, label: &str) -> Result<(), String> {
    let chars = content.chars().count();
    if chars > MAX_SKILL_CONTENT_CHARS {
        return Err(format!(
            "{label} content is {chars} characters (limit: {MAX_SKILL_CONTENT_CHARS}). Consider splitting into a smaller SKILL.md with supporting files in references/ or templates/."
        ));
    }
    Ok(())
}

/// A supporting-file path: relative, no `..`, under one of the support folders, with a
/// file name (or `SKILL.md` itself).
fn validate_file_path(file_path: &str) -> Result<(), String> {
    let path = Path::new(file_path);
    if path.components().any(|c| c == Component::ParentDir) {
        return Err("Path traversal ('..') is not allowed.".into());
    }
    if path.is_absolute() {
        return Err(format!(
            "file_path must be relative to the skill directory. Got: '{file_path}'"
        ));
    }
    let parts: Vec<&str> = file_path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts == ["SKILL.md"] {
        return Ok(());
    }
    match parts.first() {
        Some(first) if SUPPORT_DIRS.contains(first) => {}
        _ => {
            let mut allowed: Vec<&str> = SUPPORT_DIRS.to_vec();
            allowed.sort_unstable();
            return Err(format!(
                "File must be under one of: {}. Got: '{file_path}'",
                allowed.join(", ")
            ));
        }
    }
    if parts.len() < 2 {
        return Err(format!(
            "Provide a file path, not just a directory. Example: '{}/myfile.md'",
            parts[0]
        ));
    }
    Ok(())
}

fn not_found(name: &str, suffix: &str) -> String {
    format!("Skill '{name}' not found. Use skills_list() to see available skills.{suffix}")
}

/// The visible skill called exactly `name` (by name or directory name).
fn find(catalog: &SkillCatalog, name: &str, suffix: &str) -> Result<SkillEntry, Value> {
    match catalog.find(name) {
        Ok(entry) => Ok(entry),
        Err(LookupError::NotFound { .. }) => Err(fail(not_found(name, suffix))),
        Err(err) => Err(fail(err.to_string())),
    }
}

/// The skill's directory on disk, copying a bundled skill to `<home>/skills` first.
fn writable_dir(catalog: &SkillCatalog, entry: &SkillEntry) -> Result<PathBuf, Value> {
    match &entry.location {
        SkillLocation::Dir(dir) => Ok(dir.clone()),
        SkillLocation::Bundled(skill) => {
            let Some(user) = catalog.user_dir() else {
                return Err(fail("No user skills directory is configured."));
            };
            let dir = user.join(skill.dir);
            if dir.exists() {
                return Err(fail(format!(
                    "Cannot copy bundled skill '{}' to {}: the directory exists.",
                    entry.name,
                    dir.display()
                )));
            }
            for (rel, text) in skill.files {
                write_atomic(&dir.join(rel), text.as_bytes()).map_err(|e| {
                    fail(format!("Cannot copy bundled skill '{}': {e}", entry.name))
                })?;
            }
            catalog.invalidate();
            Ok(dir)
        }
    }
}

/// Scan `dir` after a write; on a block run `rollback` and return the error.
fn guard_after_write(
    dir: &Path,
    name: &str,
    rollback: impl FnOnce(),
) -> Result<Vec<String>, Value> {
    match guard::scan_dir(dir, name) {
        Ok(report) if report.blocked() => {
            rollback();
            Err(fail(format!(
                "Security scan blocked this skill ({}):\n{}",
                report.block_reason(),
                report.format()
            )))
        }
        Ok(report) => Ok(report.warnings()),
        Err(err) => {
            rollback();
            Err(fail(format!(
                "Security scan failed, change rolled back: {err}"
            )))
        }
    }
}

fn with_warnings(mut result: Value, warnings: Vec<String>) -> Value {
    if !warnings.is_empty() {
        result["warnings"] = json!(warnings);
    }
    result
}

fn write_text(path: &Path, text: &str) -> Result<(), Value> {
    write_atomic(path, text.as_bytes())
        .map_err(|e| fail(format!("Failed to write {}: {e}", path.display())))
}

fn description_of(content: &str) -> String {
    frontmatter::parse(content)
        .str_field("description")
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}

fn create(catalog: &SkillCatalog, name: &str, content: &str, category: Option<&str>) -> Value {
    if let Err(e) = validate_name(name) {
        return fail(e);
    }
    let category = category.map(str::trim).filter(|c| !c.is_empty());
    if let Some(Err(e)) = category.map(validate_category) {
        return fail(e);
    }
    if let Err(e) = validate_skill_md(content, name) {
        return fail(e);
    }
    if let Some(existing) = catalog.skills().iter().find(|s| s.name == name) {
        let at = existing.dir().map_or_else(
            || "(bundled with toolhost)".to_string(),
            |d| d.display().to_string(),
        );
        return fail(format!("A skill named '{name}' already exists at {at}."));
    }
    let Some(user) = catalog.user_dir() else {
        return fail("No user skills directory is configured.");
    };
    let rel = match category {
        Some(c) => format!("{c}/{name}"),
        None => name.to_string(),
    };
    let dir = user.join(&rel);
    if dir.exists() {
        return fail(format!(
            "A skill named '{name}' already exists at {}.",
            dir.display()
        ));
    }
    let skill_md = dir.join("SKILL.md");
    if let Err(e) = write_text(&skill_md, content) {
        return e;
    }
    let warnings = match guard_after_write(&dir, name, || {
        let _ = std::fs::remove_dir_all(&dir);
    }) {
        Ok(w) => w,
        Err(e) => return e,
    };
    let mut result = json!({
        "success": true,
        "message": format!("Skill '{name}' created."),
        "path": rel,
        "skill_md": skill_md.display().to_string(),
        "_change": {"description": description_of(content)},
    });
    if let Some(c) = category {
        result["category"] = json!(c);
    }
    result["hint"] = json!(format!(
        "To add reference files, templates, or scripts, use skill_manage(action='write_file', name='{name}', file_path='references/example.md', file_content='...')"
    ));
    with_warnings(result, warnings)
}

/// Replace the file at `target` with `new`, scan, and restore `original` on a block.
fn replace_guarded(
    dir: &Path,
    name: &str,
    target: &Path,
    original: Option<&str>,
    new: &str,
) -> Result<Vec<String>, Value> {
    write_text(target, new)?;
    guard_after_write(dir, name, || {
        let _ = match original {
            Some(text) => write_atomic(target, text.as_bytes()),
            None => std::fs::remove_file(target),
        };
    })
}

fn edit(catalog: &SkillCatalog, name: &str, content: &str) -> Value {
    let entry = match find(catalog, name, "") {
        Ok(e) => e,
        Err(e) => return e,
    };
    if let Err(e) = validate_skill_md(content, &entry.name) {
        return fail(e);
    }
    let dir = match writable_dir(catalog, &entry) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let skill_md = dir.join("SKILL.md");
    let original = std::fs::read_to_string(&skill_md).ok();
    match replace_guarded(&dir, &entry.name, &skill_md, original.as_deref(), content) {
        Ok(warnings) => with_warnings(
            json!({
                "success": true,
                "message": format!("Skill '{}' updated (full rewrite).", entry.name),
                "path": dir.display().to_string(),
                "_change": {"description": description_of(content)},
            }),
            warnings,
        ),
        Err(e) => e,
    }
}

fn patch(
    catalog: &SkillCatalog,
    name: &str,
    old: &str,
    new: &str,
    file_path: Option<&str>,
    replace_all: bool,
) -> Value {
    let file_path = file_path.map(str::trim).filter(|p| !p.is_empty());
    if let Some(Err(e)) = file_path.map(validate_file_path) {
        return fail(e);
    }
    let entry = match find(catalog, name, "") {
        Ok(e) => e,
        Err(e) => return e,
    };
    let label = file_path.unwrap_or("SKILL.md");
    let is_skill_md = label.trim_start_matches("./") == "SKILL.md";
    let dir = match writable_dir(catalog, &entry) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let target = dir.join(label);
    let Ok(content) = std::fs::read_to_string(&target) else {
        return fail(format!("File not found: {label}"));
    };
    let replaced = match fuzzy_match::find_and_replace(&content, old, new, replace_all) {
        Ok(r) => r,
        Err(err) => {
            let preview: String = content.chars().take(500).collect();
            let ellipsis = if content.chars().count() > 500 {
                "..."
            } else {
                ""
            };
            let hint = fuzzy_match::closest_sections(old, &content);
            let mut error = err.to_string();
            if !hint.is_empty() {
                error.push_str("\n\n");
                error.push_str(&hint);
            }
            return json!({"success": false, "error": error, "file_preview": format!("{preview}{ellipsis}")});
        }
    };
    if let Err(e) = check_size(&replaced.content, label) {
        return fail(e);
    }
    if is_skill_md && let Err(e) = validate_skill_md(&replaced.content, &entry.name) {
        return fail(format!("Patch would break SKILL.md structure: {e}"));
    }
    let clip = |s: &str| {
        let head: String = s.chars().take(200).collect();
        if s.chars().count() > 200 {
            format!("{head}…")
        } else {
            head
        }
    };
    match replace_guarded(
        &dir,
        &entry.name,
        &target,
        Some(&content),
        &replaced.content,
    ) {
        Ok(warnings) => with_warnings(
            json!({
                "success": true,
                "message": format!(
                    "Patched {label} in skill '{}' ({} replacement{}).",
                    entry.name,
                    replaced.count,
                    if replaced.count > 1 { "s" } else { "" }
                ),
                "_change": {"old": clip(old), "new": clip(new)},
            }),
            warnings,
        ),
        Err(e) => e,
    }
}

fn delete(catalog: &SkillCatalog, name: &str, absorbed_into: Option<&str>) -> Value {
    let entry = match find(catalog, name, "") {
        Ok(e) => e,
        Err(e) => return e,
    };
    let (SkillLocation::Dir(dir), Some(root)) = (&entry.location, &entry.root) else {
        return fail(format!(
            "Skill '{}' is bundled with toolhost and cannot be deleted. Add it to skills.disabled in config.toml to hide it.",
            entry.name
        ));
    };
    let absorbed = absorbed_into.map(str::trim).filter(|a| !a.is_empty());
    if let Some(target) = absorbed {
        if target == entry.name {
            return fail(format!(
                "absorbed_into='{target}' cannot equal the skill being deleted."
            ));
        }
        if catalog.find(target).is_err() {
            return fail(format!(
                "absorbed_into='{target}' does not exist. Create or patch the umbrella skill first, then retry the delete."
            ));
        }
    }
    // Defence in depth before a recursive delete: a real directory strictly inside its
    // source, holding a SKILL.md.
    let safe = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
        && matches!((dir.canonicalize(), root.canonicalize()), (Ok(d), Ok(r)) if d.starts_with(&r) && d != r)
        && dir.join("SKILL.md").is_file();
    if !safe {
        return fail(format!(
            "Refusing to delete {}: not a skill directory inside its source.",
            dir.display()
        ));
    }
    if let Err(err) = std::fs::remove_dir_all(dir) {
        return fail(format!("Failed to delete skill '{}': {err}", entry.name));
    }
    if let Some(parent) = dir.parent()
        && parent != root.as_path()
        && std::fs::read_dir(parent).is_ok_and(|mut d| d.next().is_none())
    {
        let _ = std::fs::remove_dir(parent);
    }
    let mut message = format!("Skill '{}' deleted.", entry.name);
    if let Some(target) = absorbed {
        message.push_str(&format!(" Content absorbed into '{target}'."));
    }
    json!({"success": true, "message": message})
}

/// `dir/rel`, after checking that the existing part of its parent chain stays inside
/// `dir` (no symlinked folder leading out).
fn resolve_inside(dir: &Path, rel: &str) -> Result<PathBuf, Value> {
    let target = dir.join(rel);
    let mut existing = target
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.to_path_buf());
    while !existing.exists() {
        match existing.parent() {
            Some(p) => existing = p.to_path_buf(),
            None => break,
        }
    }
    let inside = matches!((existing.canonicalize(), dir.canonicalize()), (Ok(e), Ok(d)) if e.starts_with(&d));
    let target_is_link =
        std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink());
    if !inside || target_is_link {
        return Err(fail(format!("Path escapes the skill directory: {rel}")));
    }
    Ok(target)
}

fn write_file(catalog: &SkillCatalog, name: &str, file_path: &str, text: &str) -> Value {
    if let Err(e) = validate_file_path(file_path) {
        return fail(e);
    }
    if file_path.trim_start_matches("./") == "SKILL.md" {
        return edit(catalog, name, text);
    }
    if text.len() > MAX_SKILL_FILE_BYTES {
        return fail(format!(
            "File content is {} bytes (limit: {MAX_SKILL_FILE_BYTES} bytes / 1 MiB). Consider splitting into smaller files.",
            text.len()
        ));
    }
    if let Err(e) = check_size(text, file_path) {
        return fail(e);
    }
    let entry = match find(catalog, name, " Create it first with action='create'.") {
        Ok(e) => e,
        Err(e) => return e,
    };
    let dir = match writable_dir(catalog, &entry) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let target = match resolve_inside(&dir, file_path) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let original = std::fs::read_to_string(&target).ok();
    match replace_guarded(&dir, &entry.name, &target, original.as_deref(), text) {
        Ok(warnings) => with_warnings(
            json!({
                "success": true,
                "message": format!("File '{file_path}' written to skill '{}'.", entry.name),
                "path": target.display().to_string(),
            }),
            warnings,
        ),
        Err(e) => e,
    }
}

fn remove_file(catalog: &SkillCatalog, name: &str, file_path: &str) -> Value {
    if let Err(e) = validate_file_path(file_path) {
        return fail(e);
    }
    if file_path.trim_start_matches("./") == "SKILL.md" {
        return fail("SKILL.md cannot be removed; delete the skill instead.");
    }
    let entry = match find(catalog, name, "") {
        Ok(e) => e,
        Err(e) => return e,
    };
    let dir = match writable_dir(catalog, &entry) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let target = match resolve_inside(&dir, file_path) {
        Ok(t) => t,
        Err(e) => return e,
    };
    if !target.is_file() {
        let mut available = Vec::new();
        for sub in SUPPORT_DIRS {
            if let Ok(entries) = std::fs::read_dir(dir.join(sub)) {
                available.extend(
                    entries
                        .flatten()
                        .filter(|e| e.path().is_file())
                        .map(|e| format!("{sub}/{}", e.file_name().to_string_lossy())),
                );
            }
        }
        available.sort();
        return json!({
            "success": false,
            "error": format!("File '{file_path}' not found in skill '{}'.", entry.name),
            "available_files": if available.is_empty() { Value::Null } else { json!(available) },
        });
    }
    if let Err(err) = std::fs::remove_file(&target) {
        return fail(format!("Failed to remove '{file_path}': {err}"));
    }
    if let Some(parent) = target.parent()
        && parent != dir
        && std::fs::read_dir(parent).is_ok_and(|mut d| d.next().is_none())
    {
        let _ = std::fs::remove_dir(parent);
    }
    json!({"success": true, "message": format!("File '{file_path}' removed from skill '{}'.", entry.name)})
}

#[cfg(test)]
#[path = "manage_tests.rs"]
mod tests;
