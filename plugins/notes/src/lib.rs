//! notes: a notebook of Markdown files in `$TOOLHOST_NOTES_DIR`.
//!
//! The tools are offered only while that variable is set (an availability check), so a
//! machine without a notebook never shows them to the model.

use std::path::{Path, PathBuf};

use toolhost_plugin_api::prelude::*;

/// The variable naming the notebook directory.
const NOTES_ENV: &str = "TOOLHOST_NOTES_DIR";

fn notes_dir() -> Result<PathBuf, ToolError> {
    match std::env::var_os(NOTES_ENV) {
        Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => Err(ToolError::unavailable(format!("{NOTES_ENV} is not set"))),
    }
}

/// `My Note!` → `my-note`.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').chars().take(80).collect()
}

fn note_path(dir: &Path, title: &str) -> Result<PathBuf, ToolError> {
    match slug(title) {
        s if s.is_empty() => Err(ToolError::invalid_arguments(
            "the title has no letters or digits",
        )),
        s => Ok(dir.join(format!("{s}.md"))),
    }
}

fn titles(dir: &Path) -> Result<Vec<String>, ToolError> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "md")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

fn add(args: Value, _ctx: &ToolContext<'_>) -> ToolResult {
    let dir = notes_dir()?;
    let title = args["title"].as_str().unwrap_or_default();
    let body = args["body"].as_str().unwrap_or_default();
    let path = note_path(&dir, title)?;
    std::fs::create_dir_all(&dir)?;
    let existing = std::fs::read_to_string(&path).unwrap_or_default();
    let text = if existing.is_empty() {
        format!("# {}\n\n{body}\n", title.trim())
    } else {
        format!("{}\n{body}\n", existing.trim_end())
    };
    std::fs::write(&path, text)?;
    Ok(json!({ "saved": slug(title), "appended": !existing.is_empty() }))
}

fn list(_args: Value, _ctx: &ToolContext<'_>) -> ToolResult {
    let dir = notes_dir()?;
    if !dir.exists() {
        return Ok(json!({ "notes": [] }));
    }
    Ok(json!({ "notes": titles(&dir)? }))
}

fn read(args: Value, _ctx: &ToolContext<'_>) -> ToolResult {
    let path = note_path(&notes_dir()?, args["title"].as_str().unwrap_or_default())?;
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(json!({ "text": text })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(tool_error(format!(
            "no note named {}",
            slug(args["title"].as_str().unwrap_or_default())
        ))),
        Err(e) => Err(e.into()),
    }
}

fn search(args: Value, ctx: &ToolContext<'_>) -> ToolResult {
    let dir = notes_dir()?;
    let query = args["query"].as_str().unwrap_or_default().to_lowercase();
    let mut hits = Vec::new();
    if dir.exists() {
        for name in titles(&dir)? {
            if ctx.is_cancelled() {
                break;
            }
            let text = std::fs::read_to_string(dir.join(format!("{name}.md")))?;
            for (n, line) in text.lines().enumerate() {
                if line.to_lowercase().contains(&query) {
                    hits.push(json!({ "note": name, "line": n + 1, "text": line }));
                }
            }
        }
    }
    Ok(json!({ "matches": hits }))
}

fn schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

fn plugin(_host: &Host) -> Plugin {
    let title = json!({ "type": "string", "description": "The note's title" });
    Plugin::new()
        .tool(
            Tool::new("note_add", "notes", add)
                .description("Save a note (appends when a note with this title exists)")
                .parameters(schema(
                    json!({ "title": title, "body": { "type": "string" } }),
                    &["title", "body"],
                ))
                .available_if_env(NOTES_ENV)
                .emoji("📝"),
        )
        .tool(
            Tool::new("note_list", "notes", list)
                .description("List the titles of all notes")
                .available_if_env(NOTES_ENV)
                .parallel_safe(true),
        )
        .tool(
            Tool::new("note_read", "notes", read)
                .description("Read one note")
                .parameters(schema(json!({ "title": title }), &["title"]))
                .available_if_env(NOTES_ENV)
                .parallel_safe(true),
        )
        .tool(
            Tool::new("note_search", "notes", search)
                .description("Find lines in any note containing a text (case-insensitive)")
                .parameters(schema(json!({ "query": { "type": "string" } }), &["query"]))
                .available_if_env(NOTES_ENV)
                .parallel_safe(true),
        )
}

toolhost_plugin_api::export_plugin!(plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        let cases = [
            ("My Note!", "my-note"),
            ("  a  b ", "a-b"),
            ("Ünïcode 2", "ünïcode-2"),
            ("../etc/passwd", "etc-passwd"),
            ("!!!", ""),
        ];
        for (title, expected) in cases {
            assert_eq!(slug(title), expected, "{title}");
        }
    }
}
