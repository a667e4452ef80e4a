//! Images in tool results, as image content parts for the model.
//!
//! A tool result can carry images in two shapes:
//! - Hermes' multimodal envelope, `{"_multimodal": true, "content": [parts],
//!   "text_summary": "..."}`, whose `image_url` parts hold `data:` or `http(s)` URLs;
//! - toolhost's file references, `"_images": [{"path": "/abs/shot.png",
//!   "mime_type": "image/png"}]` beside the result's other fields (MCP image content,
//!   screenshots): the file is read, checked and base64-encoded here, so a tool's JSON
//!   never has to carry the image itself.
//!
//! The tool message keeps the text (the envelope's summary, or the result without
//! `_images`) plus a line saying how many images follow; the images go in one user
//! message after the batch's tool messages, because the OpenAI chat format accepts image
//! parts only in user messages (Hermes puts them in the tool message, which OpenAI
//! rejects). Limits: [`MAX_IMAGES_PER_RESULT`] per result, [`MAX_IMAGES_PER_TURN`] per
//! batch, [`MAX_IMAGE_BYTES`] per image, PNG/JPEG/GIF/WebP only (checked on the bytes);
//! what exceeds a limit is named in the text instead. With `[model] vision = false`
//! no image is sent, only the text.

use base64::Engine as _;
use serde_json::{Value, json};

use super::message::{Content, Message, Role};

/// Most images taken from one tool result.
pub const MAX_IMAGES_PER_RESULT: usize = 4;
/// Most images sent after one batch of tool calls.
pub const MAX_IMAGES_PER_TURN: usize = 8;
/// Largest image file or decoded `data:` URL, in bytes.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The images found in one tool result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultImages {
    /// The text the tool message keeps.
    pub text: String,
    /// `image_url` content parts, ready to send.
    pub parts: Vec<Value>,
    /// Why images were left out (limits, unreadable files), for the text.
    pub skipped: Vec<String>,
}

/// Split `result` (a tool's JSON text) into its text and its images. A result without
/// images comes back unchanged with no parts.
pub fn split(result: &str) -> ResultImages {
    let unchanged = || ResultImages {
        text: result.to_string(),
        ..ResultImages::default()
    };
    if !result.contains("\"_multimodal\"") && !result.contains("\"_images\"") {
        return unchanged();
    }
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(result) else {
        return unchanged();
    };
    let mut out = ResultImages::default();
    if object.get("_multimodal") == Some(&Value::Bool(true))
        && let Some(Value::Array(parts)) = object.get("content")
    {
        let mut texts = Vec::new();
        for part in parts {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        texts.push(text.to_string());
                    }
                }
                Some("image_url") => {
                    let url = part
                        .pointer("/image_url/url")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    out.take(url_part(url));
                }
                _ => {}
            }
        }
        out.text = match object.get("text_summary").and_then(Value::as_str) {
            Some(summary) if !summary.is_empty() => summary.to_string(),
            _ if !texts.is_empty() => texts.join("\n"),
            _ => "[multimodal tool result]".to_string(),
        };
        return out;
    }
    let Some(Value::Array(files)) = object.remove("_images") else {
        return unchanged();
    };
    for file in &files {
        let path = file.get("path").and_then(Value::as_str).unwrap_or_default();
        out.take(file_part(path));
    }
    out.text = Value::Object(object).to_string();
    out
}

impl ResultImages {
    fn take(&mut self, part: Result<Value, String>) {
        match part {
            Ok(_) if self.parts.len() >= MAX_IMAGES_PER_RESULT => self.skipped.push(format!(
                "more than {MAX_IMAGES_PER_RESULT} images in one result"
            )),
            Ok(part) => self.parts.push(part),
            Err(why) => self.skipped.push(why),
        }
    }

    /// The lines the tool message gets after the result's text: how many images
    /// follow (or why they are not shown), and which were left out.
    pub fn notes(&self, vision: bool) -> String {
        let mut text = String::new();
        if !self.parts.is_empty() {
            if vision {
                text.push_str(&format!(
                    "\n[{} image(s) from this result follow in the next message]",
                    self.parts.len()
                ));
            } else {
                text.push_str(&format!(
                    "\n[{} image(s) not shown: the model is configured without vision ([model] vision = false)]",
                    self.parts.len()
                ));
            }
        }
        for why in &self.skipped {
            text.push_str(&format!("\n[image left out: {why}]"));
        }
        text
    }
}

/// The user message carrying the images of one batch: `(tool name, parts)` per result,
/// at most [`MAX_IMAGES_PER_TURN`] images. `None` when there are none.
pub fn images_message(results: &[(String, Vec<Value>)]) -> Option<Message> {
    let mut parts = Vec::new();
    let mut count = 0;
    let mut dropped = 0;
    for (tool, images) in results.iter().filter(|(_, images)| !images.is_empty()) {
        let room = MAX_IMAGES_PER_TURN.saturating_sub(count);
        let take = images.len().min(room);
        dropped += images.len() - take;
        if take == 0 {
            continue;
        }
        parts.push(json!({"type": "text", "text": format!("Image(s) returned by {tool}:")}));
        parts.extend(images.iter().take(take).cloned());
        count += take;
    }
    if count == 0 {
        return None;
    }
    if dropped > 0 {
        parts.push(json!({"type": "text", "text": format!(
            "({dropped} more image(s) left out: at most {MAX_IMAGES_PER_TURN} per turn)"
        )}));
    }
    Some(Message {
        role: Role::User,
        content: Some(Content::Parts(parts)),
        tool_calls: Vec::new(),
        tool_call_id: None,
        name: None,
    })
}

/// `message` as it is saved in the session: image parts replaced by a short text, so
/// the database does not hold the encoded images.
pub fn for_storage(message: &Message) -> Message {
    let Some(Content::Parts(parts)) = &message.content else {
        return message.clone();
    };
    let parts = parts
        .iter()
        .map(|part| {
            if part.get("type").and_then(Value::as_str) == Some("image_url") {
                json!({"type": "text", "text": "[image not kept in the saved session]"})
            } else {
                part.clone()
            }
        })
        .collect();
    Message {
        content: Some(Content::Parts(parts)),
        ..message.clone()
    }
}

/// An `image_url` part for a `data:` or `http(s)` URL, within the limits.
fn url_part(url: &str) -> Result<Value, String> {
    if let Some(rest) = url.strip_prefix("data:") {
        let (header, data) = rest
            .split_once(',')
            .ok_or_else(|| "a data: URL without data".to_string())?;
        if !header.ends_with(";base64") {
            return Err("a data: URL that is not base64".into());
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| "a data: URL whose base64 does not decode".to_string())?;
        let mime = checked(&bytes)?;
        return Ok(image_part(mime, &bytes));
    }
    if url.starts_with("https://") || url.starts_with("http://") {
        return Ok(json!({"type": "image_url", "image_url": {"url": url}}));
    }
    Err("an image URL that is neither data: nor http(s)".into())
}

/// An `image_url` part with the contents of the file at `path`, within the limits.
fn file_part(path: &str) -> Result<Value, String> {
    if path.is_empty() || !std::path::Path::new(path).is_absolute() {
        return Err(format!("image path {path:?} is not absolute"));
    }
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{path}: {e}"))?
        .len();
    if size > MAX_IMAGE_BYTES as u64 {
        return Err(format!(
            "{path} is {size} bytes, over the {MAX_IMAGE_BYTES}-byte limit"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let mime = checked(&bytes).map_err(|why| format!("{path}: {why}"))?;
    Ok(image_part(mime, &bytes))
}

/// The image type of `bytes` (from its magic number) when it is one models accept and
/// within the size limit.
fn checked(bytes: &[u8]) -> Result<&'static str, String> {
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "an image of {} bytes, over the {MAX_IMAGE_BYTES}-byte limit",
            bytes.len()
        ));
    }
    let mime = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        "image/gif"
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else {
        return Err("not a PNG, JPEG, GIF or WebP image".into());
    };
    Ok(mime)
}

fn image_part(mime: &str, bytes: &[u8]) -> Value {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn data_url(bytes: &[u8]) -> String {
        format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    }

    #[test]
    fn results_without_images_are_unchanged() {
        for text in [r#"{"output":"ok"}"#, "not json", r#"{"_images": "x"}"#] {
            let split = split(text);
            assert_eq!(split.text, text);
            assert!(split.parts.is_empty());
        }
    }

    #[test]
    fn the_multimodal_envelope_gives_its_summary_and_images() {
        let result = json!({"_multimodal": true, "text_summary": "a screenshot",
            "content": [{"type": "text", "text": "t"},
                        {"type": "image_url", "image_url": {"url": data_url(PNG)}}]});
        let split = split(&result.to_string());
        assert_eq!(split.text, "a screenshot");
        assert_eq!(split.parts.len(), 1);
        assert_eq!(split.parts[0]["image_url"]["url"], data_url(PNG));
    }

    #[test]
    fn image_files_are_read_checked_and_encoded() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("shot.png");
        std::fs::write(&png, PNG).unwrap();
        let text = dir.path().join("notes.png");
        std::fs::write(&text, "hello").unwrap();
        let result = json!({"result": "saved", "_images": [
            {"path": png, "mime_type": "image/png"},
            {"path": text, "mime_type": "image/png"},
            {"path": "relative.png"},
        ]});
        let split = split(&result.to_string());
        assert_eq!(split.text, json!({"result": "saved"}).to_string());
        assert_eq!(split.parts.len(), 1);
        assert_eq!(split.parts[0]["image_url"]["url"], data_url(PNG));
        assert_eq!(split.skipped.len(), 2, "{:?}", split.skipped);
        let tool_text = split.notes(true);
        assert!(
            tool_text.contains("1 image(s) from this result follow"),
            "{tool_text}"
        );
        assert!(tool_text.contains("not a PNG"), "{tool_text}");
    }

    #[test]
    fn limits_per_result_and_per_turn_hold() {
        let parts: Vec<Value> = (0..6)
            .map(|_| json!({"type": "image_url", "image_url": {"url": data_url(PNG)}}))
            .collect();
        let result = json!({"_multimodal": true, "content": parts});
        let split = split(&result.to_string());
        assert_eq!(split.parts.len(), MAX_IMAGES_PER_RESULT);
        assert_eq!(split.skipped.len(), 2);
        let batch: Vec<(String, Vec<Value>)> = (0..3)
            .map(|i| (format!("tool{i}"), split.parts.clone()))
            .collect();
        let Some(Message {
            content: Some(Content::Parts(parts)),
            role: Role::User,
            ..
        }) = images_message(&batch)
        else {
            panic!("no images message");
        };
        let images = parts.iter().filter(|p| p["type"] == "image_url").count();
        assert_eq!(images, MAX_IMAGES_PER_TURN);
        assert!(
            parts.last().unwrap()["text"]
                .as_str()
                .unwrap()
                .contains("4 more")
        );
    }

    #[test]
    fn oversized_and_foreign_urls_are_refused() {
        let big = vec![0u8; MAX_IMAGE_BYTES + 1];
        assert!(url_part(&data_url(&big)).is_err());
        assert!(url_part("file:///etc/passwd").is_err());
        assert!(url_part("data:image/png,raw").is_err());
        assert!(url_part("https://example.com/a.png").is_ok());
    }

    #[test]
    fn stored_messages_do_not_keep_the_images() {
        let batch = vec![("t".to_string(), vec![url_part(&data_url(PNG)).unwrap()])];
        let message = images_message(&batch).unwrap();
        let stored = serde_json::to_string(&for_storage(&message)).unwrap();
        assert!(!stored.contains("base64"), "{stored}");
    }
}
