//! Result size limit: a result longer than its tool's limit is written in full to a file
//! under the toolhost home, and the model gets a head + tail preview with the path.
//!
//! Two Hermes flaws are fixed here: the preview keeps the tail as well as the head (the
//! end of a log is often what matters), and the saved file holds the result's text with
//! real newlines — not one escaped JSON line — so `read_file` with offset/limit can page
//! through it.
//!
//! The folder is bounded (`[results]`, `results_prune`): each saved file is capped, and
//! the folder is pruned by age and total size after every save.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::results_prune::{Pruned, ResultsSettings, prune};

/// Characters of the head preview.
const HEAD_CHARS: usize = 1_200;
/// Characters of the tail preview.
const TAIL_CHARS: usize = 800;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Where spilled results go.
#[derive(Clone, Debug)]
pub struct ResultSpill {
    dir: PathBuf,
    limits: ResultsSettings,
}

impl ResultSpill {
    /// Spill into `dir` (created on first spill), with the default `[results]` bounds.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ResultSpill {
            dir: dir.into(),
            limits: ResultsSettings::default(),
        }
    }

    /// This spill with `limits` (`[results]`).
    pub fn with_limits(mut self, limits: ResultsSettings) -> Self {
        self.limits = limits;
        self
    }

    /// Prune the folder to its bounds (at start; saving a result prunes too).
    pub fn prune(&self) -> Pruned {
        prune(&self.dir, &self.limits, None)
    }

    /// The directory results are written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `text` unchanged when it fits in `limit` characters, else the preview object.
    pub fn apply(&self, tool: &str, tool_call_id: &str, text: String, limit: usize) -> String {
        // Bytes >= chars, so the common case needs no character count.
        if text.len() <= limit {
            return text;
        }
        let total_chars = text.chars().count();
        if total_chars <= limit {
            return text;
        }
        let path = self
            .dir
            .join(format!("{}.txt", file_stem(tool, tool_call_id)));
        let (readable, cut) = self.saved_text(&text);
        let saved = std::fs::create_dir_all(&self.dir)
            .and_then(|()| tools_core::atomic_file::write_atomic(&path, readable.as_bytes()));
        drop(readable);
        if saved.is_ok() {
            prune(&self.dir, &self.limits, Some(&path));
        }
        let (head, tail) = head_and_tail(&text, HEAD_CHARS, TAIL_CHARS);
        let mut preview = json!({
            "truncated": true,
            "tool": tool,
            "total_chars": total_chars,
            "limit_chars": limit,
            "preview_head": head,
            "preview_tail": tail,
        });
        match saved {
            Ok(()) => {
                preview["saved_to"] = json!(path.display().to_string());
                let what = match cut {
                    None => "The full text was".to_string(),
                    Some(bytes) => {
                        preview["saved_bytes"] = json!(bytes);
                        format!("Its first {bytes} bytes (results.max_file_mb) were")
                    }
                };
                preview["note"] = json!(format!(
                    "The result was too large ({total_chars} characters, limit {limit}). \
                     {what} saved to {}; use read_file with offset and limit to \
                     read specific parts.",
                    path.display()
                ));
            }
            Err(err) => {
                tracing::warn!(tool, path = %path.display(), error = %err, "could not save an oversized result");
                preview["saved_to"] = Value::Null;
                preview["note"] = json!(format!(
                    "The result was too large ({total_chars} characters, limit {limit}) and \
                     could not be saved ({err}); only the head and tail are shown."
                ));
            }
        }
        preview.to_string()
    }
}

impl ResultSpill {
    /// What to save of `text`, and its length in bytes when `results.max_file_mb` cut
    /// it. A result far past the cap is not parsed as JSON (which would hold several
    /// copies of it in memory): its raw head is saved.
    fn saved_text(&self, text: &str) -> (String, Option<usize>) {
        let Some(cap) = self.limits.max_file_bytes() else {
            return (readable_text(text), None);
        };
        if text.len() > cap.saturating_mul(2) {
            let head = text[..floor_boundary(text, cap)].to_string();
            let len = head.len();
            return (head, Some(len));
        }
        let mut readable = readable_text(text);
        if readable.len() <= cap {
            return (readable, None);
        }
        readable.truncate(floor_boundary(&readable, cap));
        let len = readable.len();
        (readable, Some(len))
    }
}

/// The largest character boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut end = at.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A safe, unique file stem: the tool call id when it is usable, else a generated one.
fn file_stem(tool: &str, tool_call_id: &str) -> String {
    let clean: String = tool_call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let seq = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let base = if clean.trim_matches('_').is_empty() {
        tool.to_string()
    } else {
        clean
    };
    format!("{base}-{stamp}-{}-{seq}", std::process::id())
}

/// The text worth paging through: a JSON string's content, or an object's single
/// dominant string field (e.g. terminal `output`) with the other fields as a header,
/// else pretty JSON.
fn readable_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => s,
        Ok(Value::Object(map)) => {
            let big = map
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k, s)))
                .max_by_key(|(_, s)| s.len());
            match big {
                Some((key, body)) if body.len() * 2 >= text.len() => {
                    let mut header = map.clone();
                    header.remove(key);
                    let mut out = String::new();
                    if !header.is_empty() {
                        out.push_str(&Value::Object(header).to_string());
                        out.push('\n');
                    }
                    out.push_str(&format!("--- {key} ---\n"));
                    out.push_str(&nested_readable(body));
                    out
                }
                _ => serde_json::to_string_pretty(&Value::Object(map))
                    .unwrap_or_else(|_| text.to_string()),
            }
        }
        Ok(other) => serde_json::to_string_pretty(&other).unwrap_or_else(|_| text.to_string()),
        Err(_) => text.to_string(),
    }
}

/// A dominant string field that is itself a JSON result (a tool re-served over MCP
/// wraps the other tool's JSON result in `{"result": "..."}`) is unwrapped the same way;
/// any other text stays as it is.
fn nested_readable(body: &str) -> String {
    let trimmed = body.trim_start();
    if trimmed.starts_with('{') && serde_json::from_str::<Value>(body).is_ok() {
        readable_text(body)
    } else {
        body.to_string()
    }
}

/// The first `head` and last `tail` characters (never splitting a character).
pub fn head_and_tail(text: &str, head: usize, tail: usize) -> (String, String) {
    let total = text.chars().count();
    if total <= head + tail {
        return (text.to_string(), String::new());
    }
    let head_text: String = text.chars().take(head).collect();
    let tail_text: String = text.chars().skip(total - tail).collect();
    (head_text, tail_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_results_pass_through() {
        let spill = ResultSpill::new("/nonexistent");
        assert_eq!(spill.apply("t", "c1", "{\"a\":1}".into(), 100), "{\"a\":1}");
    }

    #[test]
    fn large_result_is_saved_with_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let spill = ResultSpill::new(dir.path().join("results"));
        let body: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let text = json!({"output": body, "exit_code": 0}).to_string();
        let out = spill.apply("terminal", "call/1", text, 1000);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["truncated"], true);
        assert!(v["preview_head"].as_str().unwrap().contains("line 0"));
        assert!(v["preview_tail"].as_str().unwrap().contains("line 4999"));
        let path = v["saved_to"].as_str().unwrap();
        assert!(path.contains("call_1"), "{path}");
        let saved = std::fs::read_to_string(path).unwrap();
        // Real newlines: pageable by line.
        assert!(saved.lines().count() > 5000);
        assert!(saved.starts_with("{\"exit_code\":0}\n--- output ---\nline 0\n"));
    }

    #[test]
    fn nested_json_results_are_saved_as_lines() {
        let dir = tempfile::tempdir().unwrap();
        let spill = ResultSpill::new(dir.path().join("results"));
        let body: String = (0..3000).map(|i| format!("{i}|line\n")).collect();
        let inner = json!({"content": body, "total_lines": 3000}).to_string();
        let text = json!({"result": inner}).to_string();
        let out = spill.apply("mcp__inner__read_file", "c", text, 1000);
        let v: Value = serde_json::from_str(&out).unwrap();
        let saved = std::fs::read_to_string(v["saved_to"].as_str().unwrap()).unwrap();
        assert!(saved.lines().count() > 3000, "{}", &saved[..200]);
        assert!(
            saved.contains("--- content ---\n0|line\n1|line\n"),
            "{}",
            &saved[..200]
        );
    }

    #[test]
    fn unwritable_dir_still_keeps_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let spill = ResultSpill::new(file.join("sub"));
        let out = spill.apply("t", "", "x".repeat(5000), 100);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(v["saved_to"].is_null());
        assert_eq!(v["preview_tail"].as_str().unwrap().len(), TAIL_CHARS);
    }

    #[test]
    fn a_saved_result_past_max_file_mb_keeps_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let spill = ResultSpill::new(dir.path()).with_limits(ResultsSettings {
            max_file_mb: 1,
            ..ResultsSettings::default()
        });
        let out = spill.apply("t", "c", "é".repeat(1024 * 1024), 100);
        let v: Value = serde_json::from_str(&out).unwrap();
        let saved = std::fs::read_to_string(v["saved_to"].as_str().unwrap()).unwrap();
        assert_eq!(saved.len(), 1024 * 1024);
        assert_eq!(v["saved_bytes"], 1024 * 1024);
        assert!(v["note"].as_str().unwrap().contains("max_file_mb"), "{v}");
    }

    #[test]
    fn head_and_tail_respect_char_boundaries() {
        let (h, t) = head_and_tail(&"é".repeat(10), 3, 2);
        assert_eq!((h.as_str(), t.as_str()), ("ééé", "éé"));
    }
}
