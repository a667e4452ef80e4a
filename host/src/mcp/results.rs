//! MCP call results → the JSON strings the model reads.
//!
//! - success: `{"result": "<text blocks joined by \n>"}`; with structured content
//!   `{"result": "<text>", "structuredContent": {...}}`, or `{"result": {...}}` when the
//!   server sent no text; structured content that only repeats the text (as JSON, or as
//!   a one-field object holding it) is dropped, so the result is not doubled;
//! - the server's `isError`: `{"error": "<text>"}` (or "MCP tool returned an error");
//! - failures of the call itself: `{"error": "..."}` with the server named.
//!
//! Error text is passed through [`tools_core::redact`] (servers echo tokens back in
//! their errors). Images, audio and binary resources are written to files under the
//! media directory and replaced by a line naming the file: a model cannot read base64,
//! but a vision or file tool can open the path. Saved images are also listed in
//! `"_images": [{"path", "mime_type"}]`, which the agent loop turns into image content
//! parts for the model (agent/images.rs).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::secrets::redact;
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

static MEDIA_COUNTER: AtomicU64 = AtomicU64::new(0);

/// `{"error": message}` with credentials and configured secret values redacted.
pub fn error_value(message: &str) -> Value {
    json!({ "error": redact(message) })
}

/// Turn a `tools/call` result into the model's JSON. `media_dir` receives decoded
/// binary content.
pub fn call_result_value(server: &str, result: &CallToolResult, media_dir: &Path) -> Value {
    let mut images = Vec::new();
    let text = content_text(server, &result.content, media_dir, &mut images);
    if result.is_error == Some(true) {
        let message = if text.trim().is_empty() {
            match &result.structured_content {
                Some(value) if !value.is_null() => value.to_string(),
                _ => "MCP tool returned an error".to_string(),
            }
        } else {
            unwrap_error_object(text)
        };
        return error_value(&message);
    }
    let mut value = match &result.structured_content {
        Some(structured) if !structured.is_null() => {
            if text.is_empty() {
                json!({ "result": structured })
            } else if mirrors(structured, &text) {
                json!({ "result": text })
            } else {
                json!({ "result": text, "structuredContent": structured })
            }
        }
        _ => json!({ "result": text }),
    };
    if !images.is_empty() {
        // The agent loop sends these files to the model as images (agent/images.rs).
        value["_images"] = Value::Array(images);
    }
    value
}

/// True when `structured` says nothing `text` does not: the Python SDK and the
/// reference servers send their structured result again as (pretty-printed) JSON text,
/// and FastMCP wraps a non-object return value as `{"result": value}`. Passing both
/// would double the result the model reads.
fn mirrors(structured: &Value, text: &str) -> bool {
    let parsed = serde_json::from_str::<Value>(text.trim()).ok();
    if parsed.as_ref() == Some(structured) {
        return true;
    }
    let Some(map) = structured.as_object() else {
        return false;
    };
    if map.len() != 1 {
        return false;
    }
    map.values()
        .next()
        .is_some_and(|inner| parsed.as_ref() == Some(inner) || inner.as_str() == Some(text))
}

/// A server that follows toolhost's own convention (another toolhost, Hermes) sends
/// `{"error": "..."}` as its error text: keep the message, not the envelope.
fn unwrap_error_object(text: String) -> String {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Object(map)) if map.len() == 1 => match map.get("error") {
            Some(Value::String(inner)) => inner.clone(),
            _ => text,
        },
        _ => text,
    }
}

/// The blocks as text, joined by newlines; saved images are added to `images` as
/// `{"path", "mime_type"}`.
fn content_text(
    server: &str,
    blocks: &[ContentBlock],
    media_dir: &Path,
    images: &mut Vec<Value>,
) -> String {
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::Image(image) => {
                let (line, saved) =
                    save_and_describe("image", &image.mime_type, &image.data, server, media_dir);
                if let Some(path) = saved {
                    images.push(json!({"path": path, "mime_type": image.mime_type}));
                }
                parts.push(line);
            }
            ContentBlock::Audio(audio) => parts.push(media_line(
                "audio",
                &audio.mime_type,
                &audio.data,
                server,
                media_dir,
            )),
            ContentBlock::Resource(embedded) => {
                if let Some((uri, text)) = resource_text(server, &embedded.resource, media_dir) {
                    parts.push(format!("[resource {uri}]\n{text}"));
                }
            }
            ContentBlock::ResourceLink(link) => {
                let mut line = format!("[resource link: {}", link.uri);
                if !link.name.is_empty() {
                    line.push_str(&format!(" ({})", link.name));
                }
                if let Some(description) = &link.description {
                    line.push_str(&format!(" — {description}"));
                }
                // The model reads it through the server's own resource tool.
                line.push_str(&format!(
                    "; read it with {}{}__read_resource",
                    super::naming::PREFIX,
                    super::naming::sanitize(server)
                ));
                line.push(']');
                parts.push(line);
            }
            other => {
                tracing::warn!(server, block = ?other, "unsupported MCP content block dropped");
            }
        }
    }
    parts.join("\n")
}

/// A resource's URI and readable content: its text, or for binary content the line
/// naming the file it was saved to. `None` for content kinds toolhost cannot show.
pub fn resource_text(
    server: &str,
    resource: &ResourceContents,
    media_dir: &Path,
) -> Option<(String, String)> {
    match resource {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            Some((uri.clone(), text.clone()))
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
            let text = textual_blob(mime, blob)
                .unwrap_or_else(|| media_line("resource", mime, blob, server, media_dir));
            Some((uri.clone(), text))
        }
        other => {
            tracing::warn!(server, resource = ?other, "unsupported MCP resource dropped");
            None
        }
    }
}

/// Largest text blob shown inline rather than saved to a file.
const INLINE_TEXT_BLOB: usize = 64 * 1024;

/// A base64 blob whose type is text (`text/*`, JSON, XML) and whose bytes are UTF-8,
/// as text: a model reads it directly.
fn textual_blob(mime: &str, blob: &str) -> Option<String> {
    let essence = mime.split(';').next().unwrap_or("").trim();
    let textual = essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(essence, "application/json" | "application/xml");
    if !textual || blob.len() > INLINE_TEXT_BLOB * 4 / 3 + 4 {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.trim())
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// Save base64 `data` and describe where it went.
fn media_line(kind: &str, mime: &str, data: &str, server: &str, media_dir: &Path) -> String {
    save_and_describe(kind, mime, data, server, media_dir).0
}

/// Save base64 `data`: the line describing where it went, and the file when saved.
fn save_and_describe(
    kind: &str,
    mime: &str,
    data: &str,
    server: &str,
    media_dir: &Path,
) -> (String, Option<PathBuf>) {
    let bytes = match base64::engine::general_purpose::STANDARD.decode(data.trim()) {
        Ok(bytes) => bytes,
        Err(err) => {
            return (
                format!("[{kind} {mime}: undecodable base64 data: {err}]"),
                None,
            );
        }
    };
    match save_media(server, mime, &bytes, media_dir) {
        Ok(path) => (
            format!(
                "[{kind} {mime}, {} bytes, saved to {}]",
                bytes.len(),
                path.display()
            ),
            Some(path),
        ),
        Err(err) => (
            format!("[{kind} {mime}, {} bytes, not saved: {err}]", bytes.len()),
            None,
        ),
    }
}

fn save_media(
    server: &str,
    mime: &str,
    bytes: &[u8],
    media_dir: &Path,
) -> std::io::Result<PathBuf> {
    let dir = media_dir.join(super::naming::sanitize(server));
    std::fs::create_dir_all(&dir)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let n = MEDIA_COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(
        "{stamp}-{}-{n}.{}",
        std::process::id(),
        extension(mime)
    ));
    tools_core::atomic_file::write_atomic(&path, bytes)?;
    Ok(path)
}

fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or("").trim() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, ResourceContents};

    fn result(blocks: Vec<ContentBlock>, structured: Option<Value>, error: bool) -> CallToolResult {
        let mut r = if error {
            CallToolResult::error(blocks)
        } else {
            CallToolResult::success(blocks)
        };
        r.structured_content = structured;
        r
    }

    #[test]
    fn shapes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let cases = [
            (
                result(
                    vec![ContentBlock::text("a"), ContentBlock::text("b")],
                    None,
                    false,
                ),
                json!({"result": "a\nb"}),
            ),
            (result(vec![], None, false), json!({"result": ""})),
            (
                result(vec![ContentBlock::text("t")], Some(json!({"k": 1})), false),
                json!({"result": "t", "structuredContent": {"k": 1}}),
            ),
            (
                result(vec![], Some(json!({"k": 1})), false),
                json!({"result": {"k": 1}}),
            ),
            // Mirrors of the text are dropped: the object itself, pretty-printed...
            (
                result(
                    vec![ContentBlock::text("{\n  \"k\": 1\n}")],
                    Some(json!({"k": 1})),
                    false,
                ),
                json!({"result": "{\n  \"k\": 1\n}"}),
            ),
            // ...a FastMCP-wrapped value, a one-field object holding the text.
            (
                result(
                    vec![ContentBlock::text("42")],
                    Some(json!({"result": 42})),
                    false,
                ),
                json!({"result": "42"}),
            ),
            (
                result(
                    vec![ContentBlock::text("line 1\nline 2")],
                    Some(json!({"content": "line 1\nline 2"})),
                    false,
                ),
                json!({"result": "line 1\nline 2"}),
            ),
            // Structured content with more than the text is kept.
            (
                result(
                    vec![ContentBlock::text("42")],
                    Some(json!({"result": 42, "unit": "m"})),
                    false,
                ),
                json!({"result": "42", "structuredContent": {"result": 42, "unit": "m"}}),
            ),
            (
                result(vec![ContentBlock::text("bad input")], None, true),
                json!({"error": "bad input"}),
            ),
            (
                result(vec![], None, true),
                json!({"error": "MCP tool returned an error"}),
            ),
            (
                result(
                    vec![ContentBlock::text(r#"{"error":"blocked by policy"}"#)],
                    None,
                    true,
                ),
                json!({"error": "blocked by policy"}),
            ),
            (
                result(
                    vec![ContentBlock::text(r#"{"error":"x","code":3}"#)],
                    None,
                    true,
                ),
                json!({"error": r#"{"error":"x","code":3}"#}),
            ),
            (
                result(
                    vec![ContentBlock::text(
                        "auth failed for token ghp_abcdefghijklmnopqrstuvwxyz0123",
                    )],
                    None,
                    true,
                ),
                json!({"error": "auth failed for token [REDACTED]"}),
            ),
            (
                result(
                    vec![ContentBlock::embedded_text("file:///a.txt", "hello")],
                    None,
                    false,
                ),
                json!({"result": "[resource file:///a.txt]\nhello"}),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(call_result_value("s", &input, d), want, "{input:?}");
        }
    }

    #[test]
    fn images_are_saved_to_files() {
        let dir = tempfile::tempdir().unwrap();
        let data = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG fake");
        let r = result(
            vec![
                ContentBlock::text("here"),
                ContentBlock::image(data, "image/png"),
            ],
            None,
            false,
        );
        let value = call_result_value("my server", &r, dir.path());
        let text = value["result"].as_str().unwrap();
        assert!(
            text.starts_with("here\n[image image/png, 9 bytes, saved to "),
            "{text}"
        );
        let path = text
            .split("saved to ")
            .nth(1)
            .unwrap()
            .trim_end_matches(']');
        assert!(path.ends_with(".png"));
        assert!(path.contains("my_server"));
        assert_eq!(std::fs::read(path).unwrap(), b"\x89PNG fake");
        // Named for the agent loop, which sends the file to the model as an image.
        assert_eq!(
            value["_images"],
            json!([{"path": path, "mime_type": "image/png"}])
        );
    }

    #[test]
    fn bad_base64_is_described_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let r = result(vec![ContentBlock::audio("@@@", "audio/wav")], None, false);
        let value = call_result_value("s", &r, dir.path());
        assert!(
            value["result"]
                .as_str()
                .unwrap()
                .starts_with("[audio audio/wav: undecodable base64 data")
        );
    }

    #[test]
    fn blob_resources_are_saved() {
        let dir = tempfile::tempdir().unwrap();
        let blob = base64::engine::general_purpose::STANDARD.encode(b"%PDF");
        let r = result(
            vec![ContentBlock::resource(
                ResourceContents::BlobResourceContents {
                    uri: "file:///x.pdf".into(),
                    mime_type: Some("application/pdf".into()),
                    blob,
                    meta: None,
                },
            )],
            None,
            false,
        );
        let text = call_result_value("s", &r, dir.path())["result"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            text.starts_with("[resource file:///x.pdf]\n[resource application/pdf, 4 bytes"),
            "{text}"
        );
    }
}
