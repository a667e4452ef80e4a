//! `read_file` (toolset `file`): a page of a text file with line numbers.
//!
//! Hermes' behaviour: `LINE_NUM|CONTENT` lines, `offset` (1-based) and `limit` (default
//! 500, at most `tool_output.max_lines`), lines longer than
//! `tool_output.max_line_length` cut with `... [truncated]`, a page longer than
//! `tool_output.max_read_chars` cut at a line boundary with `next_offset`, binary files
//! and devices refused, "File not found" with similarly named files, secrets redacted.
//! The result is never spilled to a file (the model pages instead).
//!
//! Differences: the file is streamed (a multi-gigabyte log is paged without loading
//! it); the result carries `content_hash` (SHA-256 of the whole file, files up to
//! 64 MiB) to pass to `write_file`'s `expected_hash`; secret files are those of the
//! `[files] secret_files` patterns, judged on the symlink target too; reading stops at
//! a deadline and on cancellation, and blocking special files (`/proc/kmsg`, FIFOs)
//! are refused without being waited on; `total_lines` counts a last line without a trailing newline (Hermes uses
//! `wc -l`); `next_offset` comes with every truncated page; an `offset` past the end
//! says so; directories, FIFOs and devices are refused by type, not only by name;
//! Hermes' per-task "file unchanged" dedup stubs are not reproduced (toolhost cannot
//! know when the conversation was compressed, which is when those stubs turn into
//! lies).

use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::entry::{Parallelism, ToolEntry};
use crate::error::{RegisterError, ToolError};
use crate::files::{ContentHash, FileKind, FileSystem};
use crate::result::tool_error;
use crate::services::CoreServices;
use crate::tools::args::{self, lenient};
use crate::tools::file_guard::read_block_reason;
use crate::tools::file_lookup::{io_failure, not_found};
use crate::tools::guarded_reader::GuardedReader;
use crate::tools::secret_files::{
    SecretFiles, configured, is_spilled_copy, redact_shown, secret_refusal, spill_dirs,
};
use crate::tools::text_file::{
    BOM, LineScanner, SNIFF_BYTES, binary_extension, is_image_extension, looks_binary,
    truncate_chars,
};

/// Default page size (lines).
const DEFAULT_LIMIT: i64 = 500;

/// Marker appended to a cut line.
const LINE_CUT_MARKER: &str = "... [truncated]";

/// Files up to this size get a `content_hash`.
const MAX_HASHED_BYTES: u64 = 64 * 1024 * 1024;

/// A read gives up after this long (a slow network mount, a file that never ends).
const READ_DEADLINE: Duration = Duration::from_secs(60);

fn schema(max_lines: usize) -> Value {
    json!({
        "description": "Read a text file with line numbers and pagination. Use this instead of \
            cat/head/tail in terminal. Output format: 'LINE_NUM|CONTENT'. Suggests similar \
            filenames if not found. Use offset and limit for large files. Reads exceeding \
            ~100K characters are truncated on a line boundary and return a next_offset; \
            continue with offset to read the rest. NOTE: Cannot read images or other binary \
            files — use vision_analyze for images.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to read (absolute, relative, or ~/path)"
                },
                "offset": {
                    "type": "integer",
                    "description": "Line number to start reading from (1-indexed, default: 1)",
                    "default": 1,
                    "minimum": 1
                },
                "limit": {
                    "type": "integer",
                    "description": format!(
                        "Maximum number of lines to read (default: 500, max: {max_lines})"
                    ),
                    "default": 500,
                    "maximum": max_lines
                }
            },
            "required": ["path"]
        }
    })
}

/// Build the `read_file` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let max_lines = services.settings.tool_output.max_lines.max(1);
    let svc = Arc::clone(services);
    let secrets = configured(services, "read_file")?;
    ToolEntry::builder("read_file", "file")
        .schema(&schema(max_lines))
        .emoji("📖")
        .max_result_chars(usize::MAX)
        .parallelism(Parallelism::PathScoped("path".into()))
        .sync_handler(move |args, ctx| read_file(&svc, &secrets, args, ctx))
        .build()
}

/// The `read_file` tool's arguments (Hermes' names; see the schema above).
#[derive(Debug, Deserialize)]
pub struct ReadFileArgs {
    /// The file (blank: the tool's "'path' is required" error).
    #[serde(default, deserialize_with = "lenient::string")]
    path: Option<String>,
    /// First line, 1-based.
    #[serde(default, deserialize_with = "lenient::int")]
    offset: Option<i64>,
    /// Lines in the page.
    #[serde(default, deserialize_with = "lenient::int")]
    limit: Option<i64>,
}

fn read_file(
    services: &CoreServices,
    secrets: &SecretFiles,
    args: Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let args: ReadFileArgs = args::parse(args)?;
    let limits = &services.settings.tool_output;
    let Some(path) = args.path.as_deref().filter(|p| !p.trim().is_empty()) else {
        return Ok(tool_error("read_file: 'path' is required"));
    };
    let max_lines = limits.max_lines.max(1) as i64;
    let offset = args.offset.unwrap_or(1).max(1) as usize;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, max_lines) as usize;

    let fs = services.files.for_task(ctx.task_key());
    let resolved = fs.resolve(path);
    let real = fs.canonicalize(&resolved);
    if let Some(refusal) = refusal(secrets, fs.as_ref(), &resolved, &real, path) {
        return Ok(refusal);
    }
    let meta = match fs.metadata(&resolved) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(not_found(fs.as_ref(), &resolved, path));
        }
        Err(err) => return Ok(io_failure("read", path, &err)),
    };
    match meta.kind {
        FileKind::File => {}
        FileKind::Dir => {
            return Ok(tool_error(format!(
                "'{path}' is a directory, not a file. Use search_files with target='files' \
                 to list its files."
            )));
        }
        FileKind::Other => {
            return Ok(tool_error(format!(
                "Cannot read '{path}': it is a device, FIFO or socket, not a regular file."
            )));
        }
    }
    let opened = match fs.open_verified(&resolved) {
        Ok(opened) => opened,
        Err(err) => return Ok(io_failure("read", path, &err)),
    };
    // What was opened is what gets read: judge it again (a link may have flipped).
    if opened.real_path != real
        && let Some(refusal) = refusal(secrets, fs.as_ref(), &opened.real_path, &real, path)
    {
        return Ok(refusal);
    }
    let reader = GuardedReader::new(
        opened.reader,
        meta.len <= MAX_HASHED_BYTES,
        READ_DEADLINE,
        ctx,
    );
    let mut scanner = LineScanner::new(BufReader::with_capacity(64 * 1024, reader));
    match scanner.peek() {
        Ok(head) if looks_binary(&head[..head.len().min(SNIFF_BYTES)]) => {
            return Ok(tool_error(format!(
                "Cannot read binary file '{path}': it contains binary data. Use terminal \
                 tools (file, xxd) to inspect it."
            )));
        }
        Ok(_) => {}
        Err(err) => return Ok(io_failure("read", path, &err)),
    }
    let (page, hash) = match read_page(scanner, offset, limit, limits.max_line_length.max(1)) {
        Ok(read) => read,
        Err(err) => return Ok(io_failure("read", path, &err)),
    };
    let spilled = is_spilled_copy(&spill_dirs(fs.as_ref(), &services.home), &resolved, &real);
    let max_chars = limits.max_read_chars.max(1);
    let mut result = render(page, offset, meta.len, max_chars, spilled);
    if let (Some(hash), Some(obj)) = (hash, result.as_object_mut()) {
        obj.insert("content_hash".into(), json!(hash.to_string()));
    }
    Ok(result)
}

/// Why `path` (resolved; `real` = its canonical target) must not be read: a blocking
/// or leaking special file, a secret file, a binary extension.
fn refusal(
    secrets: &SecretFiles,
    fs: &dyn FileSystem,
    resolved: &Path,
    real: &Path,
    path: &str,
) -> Option<Value> {
    if let Some(reason) =
        read_block_reason(resolved, path).or_else(|| read_block_reason(real, path))
    {
        return Some(tool_error(reason));
    }
    if secrets.is_secret(fs, resolved) || secrets.is_secret(fs, real) {
        return Some(tool_error(secret_refusal(path)));
    }
    let ext = binary_extension(resolved).or_else(|| binary_extension(real))?;
    let advice = if is_image_extension(&ext) {
        "Use vision_analyze for images, or terminal to inspect binary files."
    } else {
        "Use terminal tools to inspect binary files."
    };
    Some(tool_error(format!(
        "Cannot read binary file '{path}' (.{ext}). {advice}"
    )))
}

/// The lines of one page, plus the file's line count.
struct Page {
    lines: Vec<String>,
    total_lines: usize,
}

fn read_page(
    mut scanner: LineScanner<BufReader<GuardedReader<'_>>>,
    offset: usize,
    limit: usize,
    max_line_chars: usize,
) -> std::io::Result<(Page, Option<ContentHash>)> {
    // Enough bytes for `max_line_chars` characters of any width, plus one to detect a cut.
    let keep = max_line_chars.saturating_mul(4).saturating_add(1);
    let mut lines = Vec::new();
    let mut number = 0usize;
    while let Some(line) = {
        let wanted = number + 1 >= offset && number + 1 < offset + limit;
        scanner.next_line(if wanted { keep } else { 0 })?
    } {
        number += 1;
        if number < offset || number >= offset + limit {
            continue;
        }
        let mut text = String::from_utf8_lossy(&line.bytes).into_owned();
        if number == 1 && text.starts_with(BOM) {
            text.remove(0);
        }
        let (kept, cut) = truncate_chars(&text, max_line_chars);
        let display = if cut || line.cut {
            format!("{number}|{kept}{LINE_CUT_MARKER}")
        } else {
            format!("{number}|{kept}")
        };
        lines.push(display);
    }
    let hash = scanner.into_inner().into_inner().finish();
    Ok((
        Page {
            lines,
            total_lines: number,
        },
        hash,
    ))
}

fn render(page: Page, offset: usize, file_size: u64, max_chars: usize, spilled: bool) -> Value {
    let total = page.total_lines;
    let mut result = Map::new();
    let mut shown = page.lines.len();
    let mut content = page.lines.join("\n");
    let mut cut_by_chars = false;
    if content.chars().count() > max_chars {
        let (kept, kept_lines) = cut_to_char_budget(&page.lines, max_chars);
        content = kept;
        shown = kept_lines;
        cut_by_chars = true;
    }
    let end = offset + shown.saturating_sub(1);
    let next_offset = offset + shown;
    let truncated = cut_by_chars || next_offset <= total;
    result.insert(
        "content".into(),
        Value::String(redact_shown(&content, spilled)),
    );
    result.insert("total_lines".into(), json!(total));
    result.insert("file_size".into(), json!(file_size));
    result.insert("truncated".into(), json!(truncated));
    if cut_by_chars {
        result.insert("truncated_by".into(), json!("chars"));
        result.insert(
            "hint".into(),
            json!(format!(
                "Output truncated at the {max_chars}-character read budget after {shown} \
                 line(s) (showing lines {offset}-{end} of {total}). Use offset={next_offset} \
                 to continue."
            )),
        );
        result.insert("next_offset".into(), json!(next_offset));
    } else if truncated {
        result.insert(
            "hint".into(),
            json!(format!(
                "Use offset={next_offset} to continue reading (showing {offset}-{end} of \
                 {total} lines)"
            )),
        );
        result.insert("next_offset".into(), json!(next_offset));
    } else if shown == 0 && total > 0 {
        result.insert(
            "hint".into(),
            json!(format!(
                "offset {offset} is past the end of the file ({total} lines); use an \
                 offset between 1 and {total}"
            )),
        );
    }
    Value::Object(result)
}

/// Keep whole lines while they fit in `max_chars`; a first line that alone is too long
/// is cut mid-line so the page is never empty. Returns the text and the lines kept.
fn cut_to_char_budget(lines: &[String], max_chars: usize) -> (String, usize) {
    let mut kept = String::new();
    let mut used = 0usize;
    let mut count = 0usize;
    for line in lines {
        let len = line.chars().count() + usize::from(count > 0);
        if used + len > max_chars {
            break;
        }
        if count > 0 {
            kept.push('\n');
        }
        kept.push_str(line);
        used += len;
        count += 1;
    }
    if count == 0
        && let Some(first) = lines.first()
    {
        return (truncate_chars(first, max_chars).0.to_string(), 1);
    }
    (kept, count)
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
    }

    fn fixture_with(settings: impl FnOnce(&mut CoreServices)) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut services = CoreServices::for_tests(Home::at(dir.path().join("home")));
        services.files = Arc::new(LocalFileSystemProvider::new(dir.path()));
        settings(&mut services);
        let registry = Registry::new();
        registry.register(build(&Arc::new(services)).unwrap());
        Fixture { dir, registry }
    }

    fn fixture() -> Fixture {
        fixture_with(|_| {})
    }

    impl Fixture {
        fn write(&self, name: &str, content: impl AsRef<[u8]>) {
            let path = self.dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        fn read(&self, args: Value) -> Value {
            let r = self
                .registry
                .dispatch_blocking("read_file", args, &ToolContext::default());
            serde_json::from_str(&r.text).unwrap()
        }
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn reads_with_line_numbers() {
        let f = fixture();
        f.write("a.txt", "alpha\nbeta\n");
        let r = f.read(json!({"path": "a.txt"}));
        assert_eq!(r["content"], "1|alpha\n2|beta");
        assert_eq!(r["total_lines"], 2);
        assert_eq!(r["file_size"], 11);
        assert_eq!(r["truncated"], false);
        assert!(r.get("next_offset").is_none());
    }

    #[test]
    fn paginates_with_offset_and_limit() {
        let f = fixture();
        f.write("big.txt", numbered(10));
        let r = f.read(json!({"path": "big.txt", "offset": 4, "limit": 3}));
        assert_eq!(r["content"], "4|line 4\n5|line 5\n6|line 6");
        assert_eq!(r["truncated"], true);
        assert_eq!(r["next_offset"], 7);
        assert_eq!(r["total_lines"], 10);
        assert!(r["hint"].as_str().unwrap().contains("offset=7"));
    }

    #[test]
    fn limit_is_capped_by_max_lines() {
        let f = fixture_with(|s| s.settings.tool_output.max_lines = 5);
        f.write("big.txt", numbered(20));
        let r = f.read(json!({"path": "big.txt", "limit": 1000}));
        assert_eq!(r["content"].as_str().unwrap().lines().count(), 5);
        assert_eq!(r["next_offset"], 6);
    }

    #[test]
    fn last_line_without_newline_is_counted() {
        let f = fixture();
        f.write("n.txt", "a\nb");
        assert_eq!(f.read(json!({"path": "n.txt"}))["total_lines"], 2);
    }

    #[test]
    fn offset_past_end_says_so() {
        let f = fixture();
        f.write("s.txt", "one\n");
        let r = f.read(json!({"path": "s.txt", "offset": 9}));
        assert_eq!(r["content"], "");
        assert!(r["hint"].as_str().unwrap().contains("past the end"));
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let f = fixture_with(|s| s.settings.tool_output.max_line_length = 10);
        f.write("long.txt", format!("{}\nshort\n", "x".repeat(50)));
        let r = f.read(json!({"path": "long.txt"}));
        assert_eq!(
            r["content"],
            format!("1|{}{LINE_CUT_MARKER}\n2|short", "x".repeat(10))
        );
    }

    #[test]
    fn page_over_char_budget_is_cut_on_a_line_boundary() {
        let f = fixture_with(|s| s.settings.tool_output.max_read_chars = 30);
        f.write("w.txt", numbered(10));
        let r = f.read(json!({"path": "w.txt"}));
        // "1|line 1" is 8 chars; three lines + 2 newlines = 26 <= 30.
        assert_eq!(r["content"], "1|line 1\n2|line 2\n3|line 3");
        assert_eq!(r["truncated_by"], "chars");
        assert_eq!(r["next_offset"], 4);
    }

    #[test]
    fn bom_and_crlf_are_hidden() {
        let f = fixture();
        f.write("w.txt", "\u{feff}first\r\nsecond\r\n");
        assert_eq!(
            f.read(json!({"path": "w.txt"}))["content"],
            "1|first\n2|second"
        );
    }

    #[test]
    fn missing_file_suggests_similar_names() {
        let f = fixture();
        f.write("config.yaml", "x");
        let r = f.read(json!({"path": "config.yml"}));
        assert_eq!(r["error"], "File not found: config.yml");
        assert_eq!(r["similar_files"], json!(["config.yaml"]));
    }

    #[test]
    fn binary_content_is_refused() {
        let f = fixture();
        f.write("blob", b"\x7fELF\x00\x01\x02");
        let r = f.read(json!({"path": "blob"}));
        assert!(r["error"].as_str().unwrap().contains("binary"), "{r}");
    }

    #[test]
    fn binary_extension_is_refused_without_reading() {
        let f = fixture();
        let r = f.read(json!({"path": "missing-photo.png"}));
        assert!(
            r["error"].as_str().unwrap().contains("vision_analyze"),
            "{r}"
        );
    }

    #[test]
    fn directories_and_env_files_are_refused() {
        let f = fixture();
        f.write("sub/x.txt", "x");
        f.write(".env", "KEY=1");
        assert!(
            f.read(json!({"path": "sub"}))["error"]
                .as_str()
                .unwrap()
                .contains("directory")
        );
        assert!(
            f.read(json!({"path": ".env"}))["error"]
                .as_str()
                .unwrap()
                .contains("Access denied")
        );
        assert!(
            f.read(json!({"path": "/dev/zero"}))["error"]
                .as_str()
                .unwrap()
                .contains("device")
        );
    }

    #[test]
    fn secrets_are_redacted() {
        let f = fixture();
        f.write("notes.txt", "token ghp_abcdefghijklmnopqrstuvwxyz0123\n");
        let r = f.read(json!({"path": "notes.txt"}));
        assert!(!r["content"].as_str().unwrap().contains("ghp_"), "{r}");
    }

    #[test]
    fn entry_never_spills_and_is_path_scoped() {
        let f = fixture();
        let entry = f.registry.get("read_file").unwrap();
        assert_eq!(entry.max_result_chars(), usize::MAX);
        assert_eq!(entry.parallelism, Parallelism::PathScoped("path".into()));
    }
}
