//! `skills_list` and `skill_view` results: Hermes' shapes (docs/hermes/skills.md),
//! built from the catalog.
//!
//! Additions: every skill says which source it came from, and `skill_view` reports the
//! guard's findings (`security_warnings`) for skills that are not bundled, so the model
//! knows when a skill it is about to follow contains something risky (Hermes only logs
//! a warning).

use std::path::{Component, Path};

use serde_json::{Map, Value, json};

use super::catalog::{LookupError, SkillCatalog, SkillEntry, SkillLocation, matches_platform};
use super::frontmatter;
use super::guard;

/// `skills_list(category)`.
pub fn list(catalog: &SkillCatalog, category: Option<&str>) -> Value {
    let skills = catalog.skills();
    if skills.is_empty() {
        let dir = catalog
            .user_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        return json!({
            "success": true,
            "skills": [],
            "categories": [],
            "message": format!("No skills found. Create one with skill_manage(action='create') or put skill folders in {dir}."),
        });
    }
    let category = category.map(str::trim).filter(|c| !c.is_empty());
    let listed: Vec<&SkillEntry> = skills
        .iter()
        .filter(|s| category.is_none() || s.category.as_deref() == category)
        .collect();
    let mut categories: Vec<&str> = listed
        .iter()
        .filter_map(|s| s.category.as_deref())
        .collect();
    categories.dedup();
    categories.sort_unstable();
    categories.dedup();
    json!({
        "success": true,
        "skills": listed
            .iter()
            .map(|s| json!({"name": s.name, "description": s.description, "category": s.category}))
            .collect::<Vec<_>>(),
        "categories": categories,
        "count": listed.len(),
        "hint": "Use skill_view(name) to see full content, tags, and linked files",
    })
}

fn failure(error: impl Into<String>) -> Value {
    json!({"success": false, "error": error.into()})
}

/// `skill_view(name, file_path)`.
pub fn view(catalog: &SkillCatalog, name: &str, file_path: Option<&str>) -> Value {
    let entry = match catalog.find(name) {
        Ok(entry) => entry,
        Err(err @ LookupError::NotFound { .. }) => {
            let LookupError::NotFound { available, .. } = &err else {
                return failure(err.to_string());
            };
            return json!({
                "success": false,
                "error": err.to_string(),
                "available_skills": available,
                "hint": "Use skills_list to see all available skills",
            });
        }
        Err(err) => {
            return json!({
                "success": false,
                "error": err.to_string(),
                "hint": "Use a skill name or relative path within the skills directory.",
            });
        }
    };
    match file_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(rel) => view_file(&entry, name, rel),
        None => view_main(&entry),
    }
}

/// Every file of a skill other than `SKILL.md`, relative, sorted.
fn skill_files(entry: &SkillEntry) -> Vec<String> {
    match &entry.location {
        SkillLocation::Bundled(skill) => skill
            .files
            .iter()
            .map(|(p, _)| p.to_string())
            .filter(|p| p != "SKILL.md")
            .collect(),
        SkillLocation::Dir(dir) => {
            let mut out = Vec::new();
            let mut stack = vec![dir.clone()];
            while let Some(current) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&current) else {
                    continue;
                };
                for e in entries.flatten() {
                    let path = e.path();
                    let Ok(kind) = e.file_type() else { continue };
                    if kind.is_dir() {
                        if out.len() < 1000 && e.file_name() != ".git" {
                            stack.push(path);
                        }
                    } else if let Ok(rel) = path.strip_prefix(dir) {
                        let rel = rel.to_string_lossy().replace('\\', "/");
                        if rel != "SKILL.md" {
                            out.push(rel);
                        }
                    }
                }
            }
            out.sort();
            out
        }
    }
}

/// Files grouped the way Hermes shows them (`references`, `templates`, `assets`,
/// `scripts`, `other`); empty groups left out.
fn grouped(files: &[String]) -> Map<String, Value> {
    let mut groups: Map<String, Value> = Map::new();
    for file in files {
        let group = ["references", "templates", "assets", "scripts"]
            .into_iter()
            .find(|g| file.starts_with(&format!("{g}/")))
            .unwrap_or("other");
        if let Value::Array(list) = groups.entry(group).or_insert_with(|| json!([])) {
            list.push(Value::String(file.clone()));
        }
    }
    groups
}

fn view_file(entry: &SkillEntry, name: &str, rel: &str) -> Value {
    let path = Path::new(rel);
    if path.components().any(|c| c == Component::ParentDir) {
        return json!({"success": false, "error": "Path traversal ('..') is not allowed.", "hint": "Use a relative path within the skill directory"});
    }
    if path.is_absolute() {
        return json!({"success": false, "error": "file_path must be relative to the skill directory.", "hint": "Use a relative path within the skill directory"});
    }
    let not_found = || {
        json!({
            "success": false,
            "error": format!("File '{rel}' not found in skill '{name}'."),
            "available_files": grouped(&skill_files(entry)),
            "hint": "Use one of the available file paths listed above",
        })
    };
    let (bytes, file_type) = match &entry.location {
        SkillLocation::Bundled(skill) => match skill.file(rel) {
            Some(text) => (text.as_bytes().to_vec(), extension(rel)),
            None => return not_found(),
        },
        SkillLocation::Dir(dir) => {
            let target = dir.join(rel);
            if !target.is_file() {
                return not_found();
            }
            // Symlinks must not lead out of the skill.
            let inside = match (target.canonicalize(), dir.canonicalize()) {
                (Ok(t), Ok(d)) => t.starts_with(d),
                _ => false,
            };
            if !inside {
                return json!({"success": false, "error": format!("Path escapes the skill directory: {rel}"), "hint": "Use a relative path within the skill directory"});
            }
            match std::fs::read(&target) {
                Ok(bytes) => (bytes, extension(rel)),
                Err(err) => return failure(format!("Failed to read '{rel}': {err}")),
            }
        }
    };
    match String::from_utf8(bytes) {
        Ok(content) => json!({
            "success": true, "name": name, "file": rel, "content": content, "file_type": file_type,
        }),
        Err(err) => json!({
            "success": true,
            "name": name,
            "file": rel,
            "content": format!("[Binary file: {}, size: {} bytes]",
                path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
                err.as_bytes().len()),
            "is_binary": true,
        }),
    }
}

fn extension(rel: &str) -> String {
    Path::new(rel)
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default()
}

/// A list of strings from a front-matter value: a list, `"[a, b]"` or `"a, b"`.
fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(s.trim().to_string()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(|t| t.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// `required_environment_variables` (strings or `{name, prompt, help, optional}`)
/// plus the legacy `prerequisites.env_vars`, as `{name, prompt, help?, optional?}`.
fn required_env(fields: &Map<String, Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut push = |item: &Value| {
        let (name, extra) = match item {
            Value::String(s) => (s.trim().to_string(), Map::new()),
            Value::Object(map) => (
                map.get("name")
                    .or_else(|| map.get("env_var"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
                map.clone(),
            ),
            _ => return,
        };
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid || out.iter().any(|e| e["name"] == name.as_str()) {
            return;
        }
        let mut entry = Map::new();
        entry.insert("name".into(), json!(name));
        entry.insert(
            "prompt".into(),
            extra
                .get("prompt")
                .cloned()
                .unwrap_or_else(|| json!(format!("Enter value for {name}"))),
        );
        for key in ["help", "optional"] {
            if let Some(v) = extra.get(key) {
                entry.insert(key.into(), v.clone());
            }
        }
        out.push(Value::Object(entry));
    };
    if let Some(Value::Array(items)) = fields.get("required_environment_variables") {
        items.iter().for_each(&mut push);
    }
    if let Some(Value::Object(pre)) = fields.get("prerequisites")
        && let Some(Value::Array(items)) = pre.get("env_vars")
    {
        items.iter().for_each(&mut push);
    }
    out
}

fn linked_files(files: &[String]) -> Map<String, Value> {
    let mut linked = Map::new();
    let pick = |prefix: &str, exts: &[&str]| -> Vec<String> {
        files
            .iter()
            .filter(|f| f.starts_with(prefix))
            .filter(|f| exts.is_empty() || exts.iter().any(|e| f.ends_with(e)))
            .cloned()
            .collect()
    };
    let groups = [
        ("references", pick("references/", &[])),
        ("templates", pick("templates/", &[])),
        ("assets", pick("assets/", &[])),
        ("scripts", pick("scripts/", &[])),
    ];
    for (key, list) in groups {
        if !list.is_empty() {
            linked.insert(key.into(), json!(list));
        }
    }
    linked
}

fn view_main(entry: &SkillEntry) -> Value {
    let content = match &entry.location {
        SkillLocation::Bundled(skill) => skill.skill_md().to_string(),
        SkillLocation::Dir(dir) => match crate::bounded_read::read_to_string(
            &dir.join("SKILL.md"),
            super::manage::MAX_SKILL_FILE_BYTES as u64,
        ) {
            Ok(text) => text,
            Err(err) => return failure(format!("Failed to read skill '{}': {err}", entry.name)),
        },
    };
    let doc = frontmatter::parse(&content);
    if !matches_platform(&doc.fields) {
        return json!({
            "success": false,
            "error": format!("Skill '{}' is not supported on this platform.", entry.name),
            "readiness_status": "unsupported",
        });
    }
    let metadata = doc.fields.get("metadata").and_then(Value::as_object);
    let hermes = metadata
        .and_then(|m| m.get("hermes"))
        .and_then(Value::as_object);
    let from_meta = |key: &str| {
        let list = string_list(hermes.and_then(|h| h.get(key)));
        if list.is_empty() {
            string_list(doc.fields.get(key))
        } else {
            list
        }
    };
    let files = skill_files(entry);
    let linked = linked_files(&files);
    let required = required_env(&doc.fields);
    let missing: Vec<String> = required
        .iter()
        .filter(|e| e.get("optional") != Some(&Value::Bool(true)))
        .filter_map(|e| e["name"].as_str())
        .filter(|name| std::env::var_os(name).is_none_or(|v| v.is_empty()))
        .map(str::to_string)
        .collect();
    let setup_needed = !missing.is_empty();
    let mut result = json!({
        "success": true,
        "name": entry.name,
        "description": doc.str_field("description").unwrap_or_default(),
        "tags": from_meta("tags"),
        "related_skills": from_meta("related_skills"),
        "content": content,
        "path": format!("{}/SKILL.md", entry.rel_path),
        "skill_dir": entry.dir().map(|d| d.display().to_string()),
        "source": entry.source.as_str(),
        "linked_files": if linked.is_empty() { Value::Null } else { Value::Object(linked.clone()) },
        "usage_hint": if linked.is_empty() { Value::Null } else {
            json!("To view linked files, call skill_view(name, file_path) where file_path is e.g. 'references/api.md' or 'assets/config.yaml'")
        },
        "required_environment_variables": required,
        "required_commands": [],
        "missing_required_environment_variables": missing,
        "missing_credential_files": [],
        "missing_required_commands": [],
        "setup_needed": setup_needed,
        "setup_skipped": false,
        "readiness_status": if setup_needed { "setup_needed" } else { "available" },
    });
    if let Some(obj) = result.as_object_mut() {
        if setup_needed {
            obj.insert(
                "setup_note".into(),
                json!(format!(
                    "Setup needed before using this skill: missing {}.",
                    missing
                        .iter()
                        .map(|m| format!("env ${m}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
        if let Some(help) = obj["required_environment_variables"]
            .as_array()
            .and_then(|l| l.iter().find_map(|e| e.get("help").cloned()))
        {
            obj.insert("setup_help".into(), help);
        }
        if let Some(compat) = doc.fields.get("compatibility") {
            obj.insert("compatibility".into(), compat.clone());
        }
        if let Some(meta) = metadata {
            obj.insert("metadata".into(), Value::Object(meta.clone()));
        }
        if let SkillLocation::Dir(dir) = &entry.location {
            let warnings = security_warnings(dir, &entry.name);
            if !warnings.is_empty() {
                obj.insert("security_warnings".into(), json!(warnings));
            }
        }
    }
    result
}

/// The guard's findings for a skill on disk, one line each (blocking ones included:
/// a skill put on disk by hand was never checked).
fn security_warnings(dir: &Path, name: &str) -> Vec<String> {
    match guard::scan_dir(dir, name) {
        Ok(report) => report
            .findings
            .iter()
            .map(|f| {
                let at = if f.line > 0 {
                    format!("{}:{}", f.file, f.line)
                } else {
                    f.file.clone()
                };
                format!("[{}] {at}: {}", f.severity.as_str(), f.description)
            })
            .collect(),
        Err(err) => vec![format!("the skill could not be scanned: {err}")],
    }
}
