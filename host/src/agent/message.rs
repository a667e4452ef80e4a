//! Chat messages in the OpenAI chat-completions format, as sent to and received from the
//! model and as stored in sessions.
//!
//! Servers differ in small ways the types absorb: tool-call `arguments` arrive as a JSON
//! string (the standard) or as an object (some local servers) and are always kept as
//! text; `content` is text, an array of content parts (images), or absent.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A message's content: text or multimodal parts (`{"type":"text"|"image_url",...}`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Content parts.
    Parts(Vec<Value>),
}

impl Content {
    /// The text of the content (text parts joined by newlines).
    pub fn text(&self) -> String {
        match self {
            Content::Text(text) => text.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// The function part of a tool call.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
pub struct FunctionCall {
    /// Tool name.
    #[serde(default)]
    pub name: String,
    /// Arguments as JSON text.
    #[serde(default, deserialize_with = "arguments_text")]
    pub arguments: String,
}

/// One tool call in an assistant message.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
pub struct AssistantToolCall {
    /// The call's id (echoed by the tool message).
    #[serde(default)]
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// Name and arguments.
    #[serde(default)]
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".into()
}

/// One chat message.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Message {
    /// Author.
    pub role: Role,
    /// Content (absent on assistant messages that only call tools). Absent content is
    /// sent as `""`: llama.cpp's server (llama-cpp-python) rejects `null` with a 500,
    /// and every OpenAI-compatible server accepts the empty string (docs/model-servers.md).
    /// `""` read back is `None` again, so a stored message round-trips.
    #[serde(
        default,
        serialize_with = "content_or_empty",
        deserialize_with = "empty_is_none"
    )]
    pub content: Option<Content>,
    /// Tool calls of an assistant message.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable_vec"
    )]
    pub tool_calls: Vec<AssistantToolCall>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Tool name of a tool message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    /// A message with text content.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            content: Some(Content::Text(text.into())),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::text(Role::System, text)
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::text(Role::User, text)
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::text(Role::Assistant, text)
    }

    /// A tool result.
    pub fn tool(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Message {
            role: Role::Tool,
            content: Some(Content::Text(text.into())),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
            name: Some(name.into()),
        }
    }

    /// The text content ("" when absent).
    pub fn content_text(&self) -> String {
        self.content.as_ref().map(Content::text).unwrap_or_default()
    }
}

/// Token counts from a response's `usage`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct Usage {
    /// Tokens sent.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens generated.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Their sum.
    #[serde(default)]
    pub total_tokens: u64,
}

impl Usage {
    /// Add `other` to these counts.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
    }
}

/// Tool-call arguments as text, whatever JSON value the server sent.
fn arguments_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => text,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// `None` content as `""` (see [`Message::content`]).
fn content_or_empty<S: serde::Serializer>(
    content: &Option<Content>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match content {
        Some(content) => content.serialize(serializer),
        None => serializer.serialize_str(""),
    }
}

/// `""` (or `null`) content as `None`.
fn empty_is_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Content>, D::Error> {
    Ok(Option::<Content>::deserialize(deserializer)?
        .filter(|c| !matches!(c, Content::Text(t) if t.is_empty())))
}

fn nullable_vec<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_arguments_become_text() {
        let m: Message = serde_json::from_value(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "read_file", "arguments": {"path": "a"}}}]
        }))
        .unwrap();
        assert_eq!(m.tool_calls[0].function.arguments, r#"{"path":"a"}"#);
        assert!(m.content.is_none());
    }

    #[test]
    fn null_tool_calls_and_parts_content_parse() {
        let m: Message = serde_json::from_value(json!({
            "role": "user", "tool_calls": null,
            "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:x"}}]
        }))
        .unwrap();
        assert!(m.tool_calls.is_empty());
        assert_eq!(m.content_text(), "look");
    }

    #[test]
    fn absent_content_is_sent_as_an_empty_string_beside_the_calls() {
        let m: Message = serde_json::from_value(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_Ab9", "type": "function",
                "function": {"name": "read_file", "arguments": "{}"}}]
        }))
        .unwrap();
        let sent = serde_json::to_value(&m).unwrap();
        assert_eq!(sent["content"], "");
        assert_eq!(sent["tool_calls"][0]["id"], "call_Ab9");
        assert_eq!(sent["tool_calls"][0]["function"]["name"], "read_file");
    }

    #[test]
    fn tool_message_serializes_in_openai_shape() {
        let m = Message::tool("c1", "todo", "{}");
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role": "tool", "content": "{}", "tool_call_id": "c1", "name": "todo"})
        );
    }
}
