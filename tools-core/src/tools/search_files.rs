//! `search_files` (toolset `file`): regex search inside files, or find files by name.
//!
//! Hermes' behaviour (ripgrep-backed): `target='content'` searches file contents with a
//! regex (output modes `content`, `files_only`, `count`; `context` lines; `file_glob`
//! filter), `target='files'` finds files by glob, newest first; hidden files and
//! `.gitignore`d paths are skipped; `offset`/`limit` paginate; five or more content
//! matches come as a path-grouped text block (`matches_text`); results inside secret
//! files (the `[files] secret_files` patterns: `.env` and its variants, keys,
//! credential stores; Hermes: `.env` only) are omitted; matched lines are capped at 500 characters and redacted.
//!
//! Differences: the search runs in-process over the task's
//! [`FileSystem`](crate::files::FileSystem) (no `rg` binary needed, identical
//! on every backend); `total_count` is the real total (Hermes pipes through `head`, so
//! its total never exceeds `offset + limit` and `files_only` never reports truncation);
//! context lines are shown around matches but not counted or paginated as matches; the
//! continuation is a `next_offset` field inside the JSON (Hermes appends a plain-text
//! hint after the JSON, so the result is no longer JSON); a bare file name without glob
//! characters matches names containing it (`config` finds `app_config.yaml`), and
//! all-lowercase file patterns match case-insensitively (smart case); files are
//! streamed line by line (a multi-gigabyte log is searched in bounded memory; only the
//! first 4 MiB of a single line are searched).
//!
//! This file is the tool's front (schema, arguments, the checks on the root, the notes
//! added to a result); the walks are in `search_files_walk.rs`, the rendering of
//! content matches in `search_files_render.rs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use globset::{GlobBuilder, GlobMatcher};
use regex::RegexBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::entry::{Parallelism, ToolEntry};
use crate::error::{RegisterError, ToolError};
use crate::result::tool_error;
use crate::services::CoreServices;
use crate::tools::args::{self, lenient};
use crate::tools::file_guard::read_block_reason;
use crate::tools::file_lookup::similar_files;
use crate::tools::secret_files::{SecretFiles, configured, secret_refusal, spill_dirs};

/// Matched lines longer than this are cut.
const MAX_MATCH_LINE_CHARS: usize = 500;
/// Context lines are capped at this many per side.
const MAX_CONTEXT: i64 = 20;
/// A search gives up after this long.
const SEARCH_DEADLINE: Duration = Duration::from_secs(60);
/// From this many matches on a page, content results are path-grouped text.
const DENSIFY_MIN_MATCHES: usize = 5;

fn schema() -> Value {
    json!({
        "description": "Search file contents or find files by name. Use this instead of \
            grep/rg/find/ls in terminal.\n\nContent search (target='content'): Regex search \
            inside files. Output modes: full matches with line numbers, file paths only, or \
            match counts.\n\nFile search (target='files'): Find files by glob pattern (e.g., \
            '*.py', '*config*'). Also use this instead of ls — results sorted by modification \
            time.\n\nHidden files and .gitignore'd paths are skipped. When results are \
            truncated, continue with offset=next_offset.",
        "parameters": {
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Regex pattern for content search, or glob pattern (e.g., \
                        '*.py') for file search"
                },
                "target": {
                    "type": "string",
                    "enum": ["content", "files"],
                    "description": "'content' searches inside file contents, 'files' searches \
                        for files by name",
                    "default": "content"
                },
                "path": {
                    "type": "string",
                    "description": "Directory or file to search in (default: current working \
                        directory)",
                    "default": "."
                },
                "file_glob": {
                    "type": "string",
                    "description": "Filter files by pattern in grep mode (e.g., '*.py' to only \
                        search Python files)"
                },
                "limit": {
                    "type": "integer",
                    "description": "Maximum number of results to return (default: 50)",
                    "default": 50
                },
                "offset": {
                    "type": "integer",
                    "description": "Skip first N results for pagination (default: 0)",
                    "default": 0
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_only", "count"],
                    "description": "Output format for grep mode: 'content' shows matching lines \
                        with line numbers, 'files_only' lists file paths, 'count' shows match \
                        counts per file",
                    "default": "content"
                },
                "context": {
                    "type": "integer",
                    "description": "Number of context lines before and after each match (grep \
                        mode only)",
                    "default": 0
                }
            },
            "required": ["pattern"]
        }
    })
}

/// Build the `search_files` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let svc = Arc::clone(services);
    let secrets = configured(services, "search_files")?;
    ToolEntry::builder("search_files", "file")
        .schema(&schema())
        .emoji("🔎")
        .parallelism(Parallelism::Safe)
        .sync_handler(move |args, ctx| search(&svc, &secrets, args, ctx))
        .build()
}

/// The `search_files` tool's arguments (Hermes' names; see the schema above).
#[derive(Debug, Deserialize)]
pub struct SearchFilesArgs {
    /// A regex (content search) or a glob (file search).
    #[serde(default, deserialize_with = "lenient::string")]
    pattern: Option<String>,
    /// `content` (also `grep`) or `files` (also `find`).
    #[serde(default, deserialize_with = "lenient::string")]
    target: Option<String>,
    /// Directory or file to search (default `.`).
    #[serde(default, deserialize_with = "lenient::string")]
    path: Option<String>,
    /// Content search: only files matching this glob.
    #[serde(default, deserialize_with = "lenient::string")]
    file_glob: Option<String>,
    /// Results per page.
    #[serde(default, deserialize_with = "lenient::int")]
    limit: Option<i64>,
    /// Results skipped.
    #[serde(default, deserialize_with = "lenient::int")]
    offset: Option<i64>,
    /// Content search: `content`, `files_only` or `count`.
    #[serde(default, deserialize_with = "lenient::string")]
    output_mode: Option<String>,
    /// Content search: lines around each match.
    #[serde(default, deserialize_with = "lenient::int")]
    context: Option<i64>,
}

fn search(
    services: &CoreServices,
    secrets: &SecretFiles,
    args: Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let args: SearchFilesArgs = args::parse(args)?;
    let Some(pattern) = args.pattern.as_deref().filter(|p| !p.is_empty()) else {
        return Ok(tool_error("search_files: 'pattern' is required"));
    };
    let target = match args.target.as_deref().unwrap_or("content") {
        "content" | "grep" => "content",
        "files" | "find" => "files",
        other => {
            return Ok(tool_error(format!(
                "Unknown target '{other}'. Use 'content' or 'files'."
            )));
        }
    };
    let path = args
        .path
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(".");
    let limit = args.limit.unwrap_or(50).max(1) as usize;
    let offset = args.offset.unwrap_or(0).max(0) as usize;

    let fs = services.files.for_task(ctx.task_key());
    let root = fs.resolve(path);
    let real_root = fs.canonicalize(&root);
    if let Some(reason) =
        read_block_reason(&root, path).or_else(|| read_block_reason(&real_root, path))
    {
        return Ok(tool_error(reason));
    }
    let meta = match fs.metadata(&root) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let mut message = format!("Path not found: {path}");
            let similar = similar_files(fs.as_ref(), &root, path);
            if !similar.is_empty() {
                message.push_str(&format!(". Similar paths: {}", similar.join(", ")));
            }
            return Ok(json!({"error": message, "total_count": 0}));
        }
        Err(err) => return Ok(tool_error(format!("Cannot search '{path}': {err}"))),
    };
    match meta.kind {
        crate::files::FileKind::Other => {
            return Ok(tool_error(format!(
                "Cannot search '{path}': it is a device, FIFO or socket, not a file or \
                 directory."
            )));
        }
        crate::files::FileKind::File if secrets.is_secret(fs.as_ref(), &root) => {
            return Ok(tool_error(secret_refusal(path)));
        }
        _ => {}
    }
    let trimmed = path.trim_end_matches('/');
    let prefix = match trimmed {
        "" if path.starts_with('/') => "/".to_string(),
        "" | "." => String::new(),
        t => format!("{}/", t.strip_prefix("./").unwrap_or(t)),
    };
    let home = fs.home_dir();
    let mut search = Search {
        fs: fs.as_ref(),
        ctx,
        secrets,
        real_root,
        home,
        spill_dirs: spill_dirs(fs.as_ref(), &services.home),
        display: Display {
            root: root.clone(),
            prefix,
            root_is_file: meta.kind == crate::files::FileKind::File,
            as_given: path.to_string(),
        },
        root,
        limit,
        offset,
        deadline: Instant::now() + SEARCH_DEADLINE,
        omitted: 0,
        stop: None,
    };
    let mut result = if target == "files" {
        match glob_matcher(pattern, true) {
            Ok(matcher) => find_files(&mut search, pattern, &matcher),
            Err(err) => return Ok(tool_error(err)),
        }
    } else {
        let regex = match RegexBuilder::new(pattern).size_limit(50 << 20).build() {
            Ok(regex) => regex,
            Err(err) => return Ok(tool_error(format!("Search failed: invalid regex: {err}"))),
        };
        let file_glob = match args.file_glob.as_deref().filter(|g| !g.is_empty()) {
            Some(glob) => match glob_matcher(glob, false) {
                Ok(m) => Some((glob.contains('/'), m)),
                Err(err) => return Ok(tool_error(err)),
            },
            None => None,
        };
        let mode = args.output_mode.as_deref().unwrap_or("content");
        let context = args.context.unwrap_or(0).clamp(0, MAX_CONTEXT) as usize;
        let mut result = search_content(&mut search, &regex, file_glob.as_ref(), mode, context);
        if result.get("total_count") == Some(&json!(0)) && has_newline_escape(pattern) {
            result.insert(
                "warning".into(),
                json!(
                    "0 results found. Note: content search is line-oriented, so `\\n` in the \
                     regex does not match line breaks. Use context=N to see neighbouring \
                     lines, or escape as `\\\\n` to search for a literal backslash-n."
                ),
            );
        }
        result
    };
    if let Some(stop) = search.stop {
        result.insert("truncated".into(), json!(true));
        result.insert("limit_reason".into(), json!(stop.reason()));
    }
    if search.omitted > 0 {
        result.insert(
            "_omitted".into(),
            json!(format!(
                "{} result(s) omitted because they are in secret files (see the [files] \
                 secret_files setting).",
                search.omitted
            )),
        );
    }
    Ok(Value::Object(result))
}

/// Compile a glob. `for_names`: a bare word (no glob characters) matches names
/// containing it, and an all-lowercase pattern matches case-insensitively.
fn glob_matcher(pattern: &str, for_names: bool) -> Result<GlobMatcher, String> {
    let has_meta = pattern.contains(['*', '?', '[', '{']);
    let effective = if for_names && !has_meta {
        format!("*{pattern}*")
    } else {
        pattern.to_string()
    };
    let smart_case = for_names && !pattern.chars().any(char::is_uppercase);
    GlobBuilder::new(&effective)
        .literal_separator(true)
        .case_insensitive(smart_case)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|err| format!("Invalid glob pattern '{pattern}': {err}"))
}

/// True when a regex tries to match a line break (`\n` escape or a literal newline).
fn has_newline_escape(pattern: &str) -> bool {
    if pattern.contains('\n') {
        return true;
    }
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes.get(i + 1) == Some(&b'n') {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

#[path = "search_files_render.rs"]
mod render;
#[path = "search_files_walk.rs"]
mod walk;
use walk::{Display, Search, find_files, search_content};

#[cfg(test)]
#[path = "search_files_tests.rs"]
mod tests;
