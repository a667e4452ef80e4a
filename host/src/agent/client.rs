//! The model client: one OpenAI-compatible `/chat/completions` client shared by every
//! part of toolhost that calls a model (the agent loop, its children, and later the
//! vision and mixture-of-agents tools).
//!
//! A request carries the conversation, the tool definitions, `tool_choice` and
//! `parallel_tool_calls`; the reply is read whole or streamed (SSE, with
//! `stream_options.include_usage`). 429, 5xx and connection failures are retried with
//! exponential backoff (a `Retry-After` header wins, capped by `retry_max_delay`).
//! Token usage is added up per client. Error texts never contain the API key.
//!
//! The body is serialized straight from the borrowed conversation (no JSON tree is
//! built), once per call (retries resend the same bytes); the tool definitions come
//! serialized already ([`ToolsJson`], once per agent), since they are the same on every
//! request of a turn.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::message::{Message, Usage};
use super::settings::ModelEndpoint;
use super::stream::{ChunkError, SseDecoder, StreamAccumulator, StreamEvent};

/// Longest error body kept in an error message.
const MAX_ERROR_BODY: usize = 2_000;

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A configured header is not valid HTTP.
    #[error("invalid header {name:?} in [model] headers")]
    Header {
        /// The header name.
        name: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The server answered with an error status (after retries, for retryable ones).
    #[error("model server answered {status} from {url}: {body}")]
    Status {
        /// HTTP status.
        status: u16,
        /// The endpoint.
        url: String,
        /// The start of the body.
        body: String,
    },
    /// Connecting or reading failed (after retries).
    #[error("cannot reach the model at {url}: {source}")]
    Transport {
        /// The endpoint.
        url: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The reply was not a chat completion.
    #[error("malformed reply from the model: {0}")]
    Decode(String),
    /// The stream carried an error or a malformed chunk.
    #[error(transparent)]
    Stream(#[from] ChunkError),
    /// The request body could not be serialized.
    #[error("cannot serialize the request: {0}")]
    Encode(#[source] serde_json::Error),
    /// The reply had no choices.
    #[error("the model returned no choices")]
    NoChoices,
    /// The call was interrupted.
    #[error("interrupted")]
    Interrupted,
}

impl ModelError {
    fn retryable(&self) -> bool {
        match self {
            ModelError::Status { status, .. } => *status == 429 || *status >= 500,
            ModelError::Transport { .. } => true,
            _ => false,
        }
    }
}

/// One request.
#[derive(Clone, Copy, Debug)]
pub struct ChatRequest<'a> {
    /// The conversation.
    pub messages: &'a [Message],
    /// OpenAI tool definitions (empty: no `tools` sent).
    pub tools: &'a ToolsJson,
    /// `tool_choice` (`"auto"`, `"none"`, `"required"` or a function object).
    pub tool_choice: Option<&'a Value>,
}

/// OpenAI tool definitions serialized once, for every request that offers them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolsJson {
    /// The JSON array.
    json: String,
    /// Definitions in it.
    count: usize,
}

impl ToolsJson {
    /// Serialize `definitions`.
    pub fn new(definitions: &[Value]) -> Self {
        let mut json = String::from("[");
        for (i, definition) in definitions.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            json.push_str(&definition.to_string());
        }
        json.push(']');
        ToolsJson {
            json,
            count: definitions.len(),
        }
    }

    /// Whether there are no definitions.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The JSON array.
    pub fn as_str(&self) -> &str {
        &self.json
    }
}

/// The request body but `tools` (appended as text), keys in the order of a sorted map.
#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    messages: &'a [Message],
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ToolChoice<'a> {
    Given(&'a Value),
    Auto(&'static str),
}

/// The model's reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The assistant message.
    pub message: Message,
    /// `stop`, `tool_calls`, `length`, ...
    pub finish_reason: Option<String>,
    /// Tokens of this call (zero when the server sent none).
    pub usage: Usage,
}

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    choices: Vec<ReplyChoice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct ReplyChoice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

/// The client. Cheap to clone; clones share the connection pool and usage totals.
#[derive(Clone, Debug)]
pub struct ModelClient {
    http: reqwest::Client,
    endpoint: Arc<ModelEndpoint>,
    usage: Arc<Mutex<Usage>>,
}

impl ModelClient {
    /// A client for `endpoint`.
    pub fn new(endpoint: ModelEndpoint) -> Result<Self, ModelError> {
        let mut headers = HeaderMap::new();
        for (name, value) in &endpoint.settings.headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .ok()
                .zip(HeaderValue::from_str(value).ok())
                .ok_or_else(|| ModelError::Header { name: name.clone() })?;
            headers.insert(header.0, header.1);
        }
        if let Some(key) = &endpoint.api_key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    ModelError::Header {
                        name: "Authorization".into(),
                    }
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let http = crate::tls::client_builder()
            .default_headers(headers)
            .timeout(endpoint.timeout())
            .build()
            .map_err(ModelError::Client)?;
        Ok(ModelClient {
            http,
            endpoint: Arc::new(endpoint),
            usage: Arc::new(Mutex::new(Usage::default())),
        })
    }

    /// The endpoint in effect.
    pub fn endpoint(&self) -> &ModelEndpoint {
        &self.endpoint
    }

    /// Tokens used by every call of this client (and its clones) so far.
    pub fn total_usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The JSON body for `request`.
    pub fn body(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ModelError> {
        let settings = &self.endpoint.settings;
        let offers_tools = !request.tools.is_empty();
        let body = Body {
            max_tokens: settings.max_tokens,
            messages: request.messages,
            model: &self.endpoint.model,
            parallel_tool_calls: (offers_tools && !settings.parallel_tool_calls).then_some(false),
            stream: settings.stream.then_some(true),
            stream_options: settings.stream.then_some(StreamOptions {
                include_usage: true,
            }),
            temperature: settings.temperature,
            tool_choice: offers_tools.then(|| {
                request
                    .tool_choice
                    .map_or(ToolChoice::Auto("auto"), ToolChoice::Given)
            }),
        };
        let mut out = Vec::with_capacity(request.tools.json.len() + 4096);
        serde_json::to_writer(&mut out, &body).map_err(ModelError::Encode)?;
        if offers_tools {
            // `tools` goes last, in place of the object's closing brace.
            out.pop();
            out.extend_from_slice(b",\"tools\":");
            out.extend_from_slice(request.tools.json.as_bytes());
            out.push(b'}');
        }
        Ok(out)
    }

    /// Send `request` and return the reply; `on_event` sees streamed text and tool-call
    /// starts as they arrive (a reply that is not streamed is reported whole). Retries as configured; `cancel` aborts at once.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, ModelError> {
        let body = Bytes::from(self.body(request)?);
        let settings = &self.endpoint.settings;
        let mut attempt = 0u32;
        loop {
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Interrupted),
                result = self.attempt(&body, on_event) => result,
            };
            match result {
                Ok(completion) => {
                    self.usage
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .add(completion.usage);
                    return Ok(completion);
                }
                Err((err, retry_after)) if err.retryable() && attempt < settings.max_retries => {
                    let backoff = settings.retry_base_delay.max(0.0) * 2f64.powi(attempt as i32);
                    let wait = retry_after
                        .unwrap_or(backoff)
                        .min(settings.retry_max_delay.max(0.0));
                    tracing::warn!(%err, attempt, wait, "model call failed; retrying");
                    attempt += 1;
                    tokio::select! {
                        () = cancel.cancelled() => return Err(ModelError::Interrupted),
                        () = tokio::time::sleep(Duration::from_secs_f64(wait)) => {}
                    }
                }
                Err((err, _)) => return Err(err),
            }
        }
    }

    /// One HTTP exchange; on failure also the server's `Retry-After` in seconds.
    async fn attempt(
        &self,
        body: &Bytes,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, (ModelError, Option<f64>)> {
        let url = &self.endpoint.url;
        let transport = |source| {
            (
                ModelError::Transport {
                    url: url.clone(),
                    source,
                },
                None,
            )
        };
        let mut response = self
            .http
            .post(url)
            .body(body.clone())
            .send()
            .await
            .map_err(transport)?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0);
            let text = response.text().await.unwrap_or_default();
            return Err((
                ModelError::Status {
                    status: status.as_u16(),
                    url: url.clone(),
                    body: self.scrub(&text),
                },
                retry_after,
            ));
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            let text = response.text().await.map_err(transport)?;
            let completion = parse_reply(&text).map_err(|e| (e, None))?;
            // A whole reply is reported like a stream that arrived at once.
            let content = completion.message.content_text();
            if !content.is_empty() {
                on_event(StreamEvent::Text(content));
            }
            for call in &completion.message.tool_calls {
                on_event(StreamEvent::ToolCall(call.function.name.clone()));
            }
            return Ok(completion);
        }
        let mut decoder = SseDecoder::default();
        let mut acc = StreamAccumulator::default();
        while let Some(bytes) = response.chunk().await.map_err(transport)? {
            for data in decoder.push(&bytes) {
                for event in acc.apply(&data).map_err(|e| (e.into(), None))? {
                    on_event(event);
                }
            }
            if acc.done {
                break;
            }
        }
        for data in decoder.finish() {
            for event in acc.apply(&data).map_err(|e| (e.into(), None))? {
                on_event(event);
            }
        }
        let (message, finish_reason, usage) = acc.finish();
        Ok(Completion {
            message,
            finish_reason,
            usage: usage.unwrap_or_default(),
        })
    }

    /// An error body, cut short and with the API key (should a server echo it) removed.
    fn scrub(&self, text: &str) -> String {
        let mut text: String = text.chars().take(MAX_ERROR_BODY).collect();
        if let Some(key) = &self.endpoint.api_key
            && !key.expose().is_empty()
        {
            text = text.replace(key.expose(), "***");
        }
        tools_core::redact::redact(&text).into_owned()
    }
}

fn parse_reply(text: &str) -> Result<Completion, ModelError> {
    let reply: Reply = serde_json::from_str(text).map_err(|e| {
        let start: String = text.chars().take(200).collect();
        ModelError::Decode(format!("{e}: {start}"))
    })?;
    let choice = reply
        .choices
        .into_iter()
        .next()
        .ok_or(ModelError::NoChoices)?;
    Ok(Completion {
        message: choice.message,
        finish_reason: choice.finish_reason,
        usage: reply.usage.unwrap_or_default(),
    })
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
