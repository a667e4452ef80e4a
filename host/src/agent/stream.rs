//! Streamed responses: server-sent events (SSE) cut into `data:` payloads, and the
//! `chat.completion.chunk` deltas in them merged back into one assistant message.
//!
//! Tool-call deltas carry an `index`; the first delta of a call has its `id` and name,
//! later ones append argument text. Servers that omit `index` (some local servers) are
//! handled by starting a new call whenever a delta brings a new `id`.

use serde::Deserialize;
use serde_json::Value;

use super::message::{AssistantToolCall, Content, FunctionCall, Message, Role, Usage};

/// Cuts an SSE byte stream into event data payloads.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buffer: Vec<u8>,
    data: Vec<String>,
}

impl SseDecoder {
    /// Feed bytes; returns the data of every event completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            self.line(line, &mut events);
        }
        events
    }

    /// The last event when the stream ended without a blank line.
    pub fn finish(&mut self) -> Vec<String> {
        let rest = std::mem::take(&mut self.buffer);
        let mut events = Vec::new();
        let text = String::from_utf8_lossy(&rest);
        for line in text.lines() {
            self.line(line, &mut events);
        }
        if !self.data.is_empty() {
            events.push(self.data.join("\n"));
            self.data.clear();
        }
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<String>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                events.push(self.data.join("\n"));
                self.data.clear();
            }
        } else if let Some(rest) = line.strip_prefix("data:") {
            self.data
                .push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
        }
        // Comments (`:`), `event:`, `id:` and `retry:` lines carry nothing we use.
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// What one chunk contributed, for live display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// Text appended to the reply.
    Text(String),
    /// A tool call started (its name).
    ToolCall(String),
    /// The call failed and is retried: one short status line.
    Retry(String),
}

/// Why a chunk could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    /// Not a chunk.
    #[error("malformed stream chunk: {0}")]
    Malformed(#[from] serde_json::Error),
    /// The server reported an error mid-stream.
    #[error("error in stream: {0}")]
    Server(String),
}

/// Merges chunks into the final message.
#[derive(Debug, Default)]
pub struct StreamAccumulator {
    text: String,
    calls: Vec<AssistantToolCall>,
    indices: Vec<usize>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// True once `[DONE]` was seen.
    pub done: bool,
}

impl StreamAccumulator {
    /// Apply one event's data; returns what it added.
    pub fn apply(&mut self, data: &str) -> Result<Vec<StreamEvent>, ChunkError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Vec::new());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Chunk = serde_json::from_str(data)?;
        if let Some(error) = chunk.error {
            return Err(ChunkError::Server(error.to_string()));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage);
        }
        let mut events = Vec::new();
        for choice in chunk.choices {
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
            if let Some(text) = choice.delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&text);
                events.push(StreamEvent::Text(text));
            }
            for delta in choice.delta.tool_calls.unwrap_or_default() {
                if let Some(name) = self.apply_call(delta) {
                    events.push(StreamEvent::ToolCall(name));
                }
            }
        }
        Ok(events)
    }

    /// Merge one tool-call delta; returns the name when it starts a call.
    fn apply_call(&mut self, delta: ToolCallDelta) -> Option<String> {
        let position = match delta.index {
            Some(index) => self.indices.iter().position(|&i| i == index),
            None => match &delta.id {
                Some(id) if !id.is_empty() => self.calls.iter().position(|c| &c.id == id),
                _ => self.calls.len().checked_sub(1),
            },
        };
        let position = position.unwrap_or_else(|| {
            self.indices
                .push(delta.index.unwrap_or(self.calls.len() + 10_000));
            self.calls.push(AssistantToolCall {
                id: String::new(),
                kind: "function".into(),
                function: FunctionCall::default(),
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[position];
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        let mut started = None;
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                let was_empty = call.function.name.is_empty();
                call.function.name.push_str(&name);
                if was_empty {
                    started = Some(call.function.name.clone());
                }
            }
            match function.arguments {
                Some(Value::String(part)) => call.function.arguments.push_str(&part),
                Some(Value::Null) | None => {}
                Some(other) => call.function.arguments.push_str(&other.to_string()),
            }
        }
        started
    }

    /// The merged message, finish reason and usage.
    pub fn finish(self) -> (Message, Option<String>, Option<Usage>) {
        let message = Message {
            role: Role::Assistant,
            content: (!self.text.is_empty()).then_some(Content::Text(self.text)),
            tool_calls: self.calls,
            tool_call_id: None,
            name: None,
        };
        (message, self.finish_reason, self.usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_split_across_chunks_and_crlf() {
        let mut d = SseDecoder::default();
        assert!(d.push(b"data: {\"a\"").is_empty());
        assert_eq!(
            d.push(b":1}\r\n\r\n: comment\n\ndata: [DONE]\n\n"),
            vec!["{\"a\":1}".to_string(), "[DONE]".to_string()]
        );
    }

    #[test]
    fn unterminated_last_event_is_kept() {
        let mut d = SseDecoder::default();
        assert!(d.push(b"data: x").is_empty());
        assert_eq!(d.finish(), vec!["x".to_string()]);
    }

    #[test]
    fn deltas_merge_into_text_calls_and_usage() {
        let mut acc = StreamAccumulator::default();
        let chunks = [
            r#"{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"todo","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"memory","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#,
            "[DONE]",
        ];
        let mut events = Vec::new();
        for c in chunks {
            events.extend(acc.apply(c).unwrap());
        }
        assert!(acc.done);
        assert_eq!(events[0], StreamEvent::Text("Hel".into()));
        assert!(events.contains(&StreamEvent::ToolCall("memory".into())));
        let (m, reason, usage) = acc.finish();
        assert_eq!(m.content_text(), "Hello");
        assert_eq!(m.tool_calls.len(), 2);
        assert_eq!(m.tool_calls[0].id, "c1");
        assert_eq!(m.tool_calls[0].function.arguments, r#"{"a":1}"#);
        assert_eq!(m.tool_calls[1].function.name, "memory");
        assert_eq!(reason.as_deref(), Some("tool_calls"));
        assert_eq!(usage.unwrap().total_tokens, 10);
    }

    #[test]
    fn calls_without_index_are_told_apart_by_id() {
        let mut acc = StreamAccumulator::default();
        for c in [
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"y","arguments":"{}"}}]}}]}"#,
        ] {
            acc.apply(c).unwrap();
        }
        let (m, _, _) = acc.finish();
        assert_eq!(m.tool_calls.len(), 2);
        assert_eq!(m.tool_calls[0].function.arguments, "{}");
        assert_eq!(m.tool_calls[1].id, "b");
    }

    #[test]
    fn error_chunks_are_errors() {
        let mut acc = StreamAccumulator::default();
        assert!(matches!(
            acc.apply(r#"{"error":{"message":"overloaded"}}"#),
            Err(ChunkError::Server(_))
        ));
        assert!(matches!(
            acc.apply("{not json"),
            Err(ChunkError::Malformed(_))
        ));
    }

    proptest! {
        #[test]
        fn decoder_never_panics_and_chunking_does_not_matter(
            body in proptest::collection::vec(any::<u8>(), 0..400),
            cut in 0usize..400,
        ) {
            let mut whole = SseDecoder::default();
            let mut a = whole.push(&body);
            a.extend(whole.finish());
            let cut = cut.min(body.len());
            let mut split = SseDecoder::default();
            let mut b = split.push(&body[..cut]);
            b.extend(split.push(&body[cut..]));
            b.extend(split.finish());
            prop_assert_eq!(a, b);
        }
    }
}
