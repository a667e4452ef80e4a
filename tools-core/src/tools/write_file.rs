//! `write_file` (toolset `file`): replace a file's whole content, atomically.
//!
//! Hermes' behaviour: parent directories are created; an existing file's CRLF line
//! endings and UTF-8 byte-order mark are kept; system, credential and configuration
//! paths are refused; content that is really `read_file` display text (`12|code`) is
//! refused; the result reports bytes written and the absolute path.
//!
//! Differences: the write is a temporary file + rename through the task's
//! [`FileSystem`] (never half-written; a symlink keeps
//! pointing at its target); `dirs_created` is true only when directories were actually
//! created (Hermes reports true for any path with a directory part); writing the
//! `[REDACTED]` marker over a file that does not contain it is refused (the model would
//! be replacing a secret it was never shown); JSON and TOML are syntax-checked after
//! the write and reported in `lint` but never refused (Hermes refuses invalid `.json`,
//! which blocks `tsconfig.json`-style files with comments); Hermes' cross-profile guard
//! has no toolhost equivalent (the `cross_profile` parameter is gone); an optional
//! `expected_hash` (the `content_hash` `read_file` reported) makes the write fail with
//! "file changed, re-read it" when the file was modified since; overwriting a secret
//! file (`[files] secret_files`) is refused (creating one is not); the path checked by
//! the guards is the canonical target, and the write follows no symlink after the
//! check (see `crate::files`).

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::entry::{Parallelism, ToolEntry};
use crate::error::{RegisterError, ToolError};
use crate::files::{ContentHash, FileKind, FileSystem};
use crate::redact::REDACTED;
use crate::result::tool_error;
use crate::services::CoreServices;
use crate::tools::args::{self, Given, lenient};
use crate::tools::file_guard::checked_write_target;
use crate::tools::file_lookup::{io_failure, write_failure};
use crate::tools::guarded_write::{approve_write, guarded_area};
use crate::tools::secret_files::{SecretFiles, configured};
use crate::tools::text_file::{BOM, detect_line_ending, normalize_line_endings};

fn schema() -> Value {
    json!({
        "description": "Write content to a file, completely replacing existing content. Use this \
            instead of echo/cat heredoc in terminal. Creates parent directories automatically. \
            OVERWRITES the entire file — use 'patch' for targeted edits. JSON and TOML files \
            are syntax-checked after writing (see 'lint' in the result).",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to write (will be created if it doesn't \
                        exist, overwritten if it does)"
                },
                "content": {
                    "type": "string",
                    "description": "Complete content to write to the file"
                },
                "expected_hash": {
                    "type": "string",
                    "description": "Optional: the content_hash read_file returned for this \
                        file. The write fails (nothing is written) if the file changed since."
                }
            },
            "required": ["path", "content"]
        }
    })
}

/// Build the `write_file` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let svc = Arc::clone(services);
    let secrets = configured(services, "write_file")?;
    ToolEntry::builder("write_file", "file")
        .schema(&schema())
        .emoji("✍️")
        .parallelism(Parallelism::PathScoped("path".into()))
        .sync_handler(move |args, ctx| write_file(&svc, &secrets, args, ctx))
        .build()
}

/// The `write_file` tool's arguments (Hermes' names; see the schema above).
#[derive(Debug, Deserialize)]
pub struct WriteFileArgs {
    /// The file (blank or not a string: the tool's "missing required field" error).
    #[serde(default, deserialize_with = "lenient::string")]
    path: Option<String>,
    /// The whole new content; a value of another type is reported by its type.
    #[serde(default, deserialize_with = "args::present")]
    content: Option<Given<String>>,
    /// `read_file`'s `content_hash` the file must still have (blank: no check).
    #[serde(default, deserialize_with = "lenient::string")]
    expected_hash: Option<String>,
}

fn write_file(
    services: &CoreServices,
    secrets: &SecretFiles,
    args: Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let args: WriteFileArgs = args::parse(args)?;
    let Some(path) = args.path.as_deref().filter(|p| !p.trim().is_empty()) else {
        return Ok(tool_error(
            "write_file: missing required field 'path'. Re-emit the tool call with both \
             'path' and 'content' set.",
        ));
    };
    let content = match &args.content {
        Some(Given::Ok(content)) => content.as_str(),
        Some(Given::Other(other)) => {
            return Ok(tool_error(format!(
                "write_file: 'content' must be a string, got {}.",
                args::json_type(other)
            )));
        }
        None => {
            return Ok(tool_error(
                "write_file: missing required field 'content'. The call had a path but no \
                 content — re-emit it with the full content.",
            ));
        }
    };
    let expected = match args
        .expected_hash
        .as_deref()
        .filter(|h| !h.trim().is_empty())
    {
        None => None,
        Some(text) => match ContentHash::parse(text) {
            Some(hash) => Some(hash),
            None => {
                return Ok(tool_error(format!(
                    "write_file: 'expected_hash' must be the content_hash read_file returned \
                     (sha256:<64 hex digits>), got {text:?}."
                )));
            }
        },
    };
    let fs = services.files.for_task(ctx.task_key());
    let resolved = fs.resolve(path);
    let target = match checked_write_target(fs.as_ref(), &resolved, path, &services.home) {
        Ok(target) => target,
        Err(reason) => return Ok(tool_error(reason)),
    };
    if looks_like_read_file_output(content) {
        return Ok(tool_error(
            "Refusing to write read_file display text as file content: the lines start with \
             'LINE_NUM|'. Strip the line-number prefixes and write the real file content.",
        ));
    }
    let existing = match fs.metadata(&target) {
        Ok(meta) if meta.kind == FileKind::Dir => {
            return Ok(tool_error(format!(
                "Cannot write '{path}': it is a directory"
            )));
        }
        Ok(_) => true,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => false,
        Err(err) => return Ok(io_failure("write", path, &err)),
    };
    if existing && secrets.is_secret(fs.as_ref(), &resolved) {
        return Ok(tool_error(format!(
            "Refusing to overwrite '{path}': it is a secret file (per the [files] \
             secret_files setting) whose values you were never shown. Ask the user to edit \
             it."
        )));
    }
    let old = if existing {
        match fs.read(&target) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(err) => return Ok(io_failure("read", path, &err)),
        }
    } else {
        None
    };
    if content.contains(REDACTED) && !old.as_deref().is_some_and(|o| o.contains(REDACTED)) {
        return Ok(tool_error(format!(
            "Refusing to write '{path}': the content contains the marker {REDACTED}, which \
             read_file shows in place of secrets. Writing it would destroy the real value. \
             Patch around the secret instead, or ask the user to edit it."
        )));
    }
    let approval = match guarded_area(&services.home, &[resolved.as_path(), target.as_path()]) {
        None => None,
        Some(area) => {
            match approve_write(services, ctx, "write_file", path, &area, Some(content)) {
                Ok(note) => note,
                Err(reason) => return Ok(tool_error(reason)),
            }
        }
    };
    let bytes = fitted_to_existing(content, old.as_deref());
    match write_text(fs.as_ref(), &target, &resolved, &bytes, expected.as_ref()) {
        Ok(mut result) => {
            if let Some(lint) = lint(&resolved, content) {
                result.insert("lint".into(), lint);
            }
            if let Some(note) = approval {
                result.insert("approval".into(), json!(note));
            }
            Ok(Value::Object(result))
        }
        Err(err) => Ok(write_failure(path, &err)),
    }
}

/// Write `bytes` atomically to `target` (only if its content still hashes to
/// `expected`, when given) and describe it: `bytes_written`, `dirs_created`,
/// `resolved_path` (`resolved`, the path as the model meant it), `files_modified`.
fn write_text(
    fs: &dyn FileSystem,
    target: &Path,
    resolved: &Path,
    bytes: &str,
    expected: Option<&ContentHash>,
) -> std::io::Result<Map<String, Value>> {
    let report = match expected {
        Some(expected) => fs.write_atomic_if_unchanged(target, bytes.as_bytes(), expected)?,
        None => fs.write_atomic(target, bytes.as_bytes())?,
    };
    let shown = resolved.display().to_string();
    let mut result = Map::new();
    result.insert("bytes_written".into(), json!(bytes.len()));
    result.insert("dirs_created".into(), json!(report.dirs_created));
    result.insert("resolved_path".into(), json!(shown));
    result.insert("files_modified".into(), json!([shown]));
    Ok(result)
}

/// `content` adjusted to the file it replaces: CRLF endings and a byte-order mark are
/// kept when the old file had them (read_file shows neither, so the model's text lacks
/// them).
pub fn fitted_to_existing(content: &str, old: Option<&str>) -> String {
    let Some(old) = old else {
        return content.to_string();
    };
    let mut out = if detect_line_ending(old) == Some("\r\n") {
        normalize_line_endings(content, "\r\n")
    } else {
        content.to_string()
    };
    if old.starts_with(BOM) && !out.starts_with(BOM) {
        out.insert(0, BOM);
    }
    out
}

/// Syntax check for formats we can parse in-process: `{"status":"ok"}` or
/// `{"status":"error","output":…}`; `None` for other files.
pub fn lint(path: &Path, content: &str) -> Option<Value> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let text = content.strip_prefix(BOM).unwrap_or(content);
    let problem = match ext.as_str() {
        "json" => serde_json::from_str::<Value>(text)
            .err()
            .map(|e| e.to_string()),
        "toml" => toml::from_str::<toml::Table>(text)
            .err()
            .map(|e| e.to_string()),
        _ => return None,
    };
    Some(match problem {
        None => json!({"status": "ok"}),
        Some(output) => json!({"status": "error", "output": output}),
    })
}

/// True when most non-blank lines look like `read_file`'s `N|text` gutter with
/// consecutive numbers (a single literal `1|x` line is fine).
pub fn looks_like_read_file_output(content: &str) -> bool {
    let lines: Vec<&str> = content.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() < 2 {
        return false;
    }
    let numbers: Vec<u64> = lines
        .iter()
        .filter_map(|line| {
            let (prefix, _) = line.trim_start().split_once('|')?;
            if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            prefix.parse().ok()
        })
        .collect();
    if numbers.len() < 2 || numbers.len() * 10 < lines.len() * 6 {
        return false;
    }
    let consecutive = numbers.windows(2).filter(|w| w[1] == w[0] + 1).count();
    consecutive + 1 >= numbers.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LocalFileSystemProvider;
    use crate::home::Home;
    use crate::registry::Registry;

    struct Fixture {
        dir: tempfile::TempDir,
        registry: Registry,
        home: Home,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path().join("toolhost-home"));
        let mut services = CoreServices::for_tests(home.clone());
        services.files = Arc::new(LocalFileSystemProvider::new(dir.path()));
        let registry = Registry::new();
        registry.register(build(&Arc::new(services)).unwrap());
        Fixture {
            dir,
            registry,
            home,
        }
    }

    impl Fixture {
        fn write(&self, args: Value) -> Value {
            let r = self
                .registry
                .dispatch_blocking("write_file", args, &ToolContext::default());
            serde_json::from_str(&r.text).unwrap()
        }
        fn path(&self, name: &str) -> std::path::PathBuf {
            self.dir.path().join(name)
        }
    }

    #[test]
    fn creates_file_and_parents() {
        let f = fixture();
        let r = f.write(json!({"path": "a/b/new.txt", "content": "hello\n"}));
        assert_eq!(r["bytes_written"], 6);
        assert_eq!(r["dirs_created"], true);
        let abs = f.path("a/b/new.txt").display().to_string();
        assert_eq!(r["resolved_path"], abs);
        assert_eq!(r["files_modified"], json!([abs]));
        assert_eq!(
            std::fs::read_to_string(f.path("a/b/new.txt")).unwrap(),
            "hello\n"
        );
    }

    #[test]
    fn overwrite_leaves_no_temp_files() {
        let f = fixture();
        std::fs::write(f.path("x.txt"), "old").unwrap();
        let r = f.write(json!({"path": "x.txt", "content": "new"}));
        assert_eq!(r["dirs_created"], false);
        assert_eq!(std::fs::read_to_string(f.path("x.txt")).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(f.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["x.txt"]);
    }

    #[test]
    fn keeps_crlf_and_bom_of_existing_file() {
        let f = fixture();
        std::fs::write(f.path("w.txt"), "\u{feff}a\r\nb\r\n").unwrap();
        f.write(json!({"path": "w.txt", "content": "x\ny\n"}));
        assert_eq!(
            std::fs::read_to_string(f.path("w.txt")).unwrap(),
            "\u{feff}x\r\ny\r\n"
        );
    }

    #[test]
    fn refuses_read_file_display_text() {
        let f = fixture();
        let r = f.write(json!({"path": "c.py", "content": "1|import os\n2|print(os)\n"}));
        assert!(r["error"].as_str().unwrap().contains("LINE_NUM"), "{r}");
        assert!(!f.path("c.py").exists());
        // A single literal "1|x" line is legitimate content.
        assert!(f.write(json!({"path": "d.txt", "content": "1|x\n"}))["error"].is_null());
    }

    #[test]
    fn refuses_protected_paths() {
        let f = fixture();
        let config = f.home.config_file().display().to_string();
        let r = f.write(json!({"path": config, "content": "[approvals]\nmode = 'off'\n"}));
        assert!(r["error"].as_str().unwrap().contains("toolhost"), "{r}");
        let r = f.write(json!({"path": "/etc/cron.d/x", "content": "x"}));
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("sensitive system path")
        );
    }

    #[test]
    fn refuses_to_write_the_redaction_marker_over_a_secret() {
        let f = fixture();
        std::fs::write(f.path("k.txt"), "token=ghp_realsecretvalue12345678901234").unwrap();
        let r = f.write(json!({"path": "k.txt", "content": "token=[REDACTED]"}));
        assert!(r["error"].as_str().unwrap().contains("[REDACTED]"), "{r}");
        assert!(
            std::fs::read_to_string(f.path("k.txt"))
                .unwrap()
                .contains("ghp_")
        );
    }

    #[test]
    fn missing_or_mistyped_content_is_an_error_result() {
        let f = fixture();
        assert!(
            f.write(json!({"path": "x"}))["error"]
                .as_str()
                .unwrap()
                .contains("'content'")
        );
        assert!(
            f.write(json!({"path": "x", "content": 5}))["error"]
                .as_str()
                .unwrap()
                .contains("number")
        );
    }

    #[test]
    fn json_lint_reports_without_refusing() {
        let f = fixture();
        let r = f.write(json!({"path": "c.json", "content": "{\"a\": 1,}"}));
        assert_eq!(r["lint"]["status"], "error");
        assert!(f.path("c.json").exists());
        let r = f.write(json!({"path": "d.json", "content": "{\"a\": 1}"}));
        assert_eq!(r["lint"], json!({"status": "ok"}));
    }
}
