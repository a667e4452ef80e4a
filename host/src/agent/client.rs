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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::ContextWindow;
use super::message::{Message, Usage};
use super::reply::{self, ReadError};
use super::settings::ModelEndpoint;
use super::stream::{ChunkError, StreamEvent};

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
    #[error("cannot reach the model at {url}: {detail}")]
    Transport {
        /// The endpoint.
        url: String,
        /// The cause, its whole chain (`connection refused`, a DNS failure, ...).
        detail: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// The server took longer than `[model] timeout` (after retries).
    #[error(
        "the model at {url} did not answer within {seconds} s (raise [model] timeout for slow local models)"
    )]
    Timeout {
        /// The endpoint.
        url: String,
        /// The configured timeout.
        seconds: f64,
    },
    /// A streamed reply ended without `[DONE]` and without a `finish_reason` (after
    /// retries, the last ones not streamed).
    #[error(
        "the model at {url} ended its reply early ({received} bytes, no finish_reason, no [DONE]): \
         an incomplete reply, not an answer. llama.cpp's server does this when the prompt \
         overflows its n_ctx; see docs/model-servers.md"
    )]
    Incomplete {
        /// The endpoint.
        url: String,
        /// Bytes of the stream received.
        received: usize,
    },
    /// The request does not fit the context window (by the estimate, before it was
    /// sent, or as the server said).
    #[error(
        "the request needs about {estimate} tokens but the model's context window is {length} \
         tokens ({limit} for the prompt, the rest for the reply)"
    )]
    ContextOverflow {
        /// Estimated prompt tokens.
        estimate: usize,
        /// Tokens the prompt may take.
        limit: usize,
        /// The context length.
        length: usize,
    },
    /// The reply was larger than `[model] max_reply_bytes`.
    #[error("the model's reply exceeded {limit} bytes ([model] max_reply_bytes); it was dropped")]
    TooLarge {
        /// The limit.
        limit: usize,
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
            ModelError::Transport { .. }
            | ModelError::Timeout { .. }
            | ModelError::Incomplete { .. } => true,
            _ => false,
        }
    }

    /// A few words for a retry's status line.
    pub fn short(&self) -> String {
        match self {
            ModelError::Status { status, .. } => format!("HTTP {status}"),
            ModelError::Transport { .. } => "connection failed".into(),
            ModelError::Timeout { .. } => "timed out".into(),
            ModelError::Incomplete { .. } => "incomplete reply".into(),
            other => other.to_string().chars().take(60).collect(),
        }
    }
}

/// `err` and its sources, joined (reqwest's own text is only "error sending request").
fn cause_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
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

/// The client. Cheap to clone; clones share the connection pool and usage totals.
#[derive(Clone, Debug)]
pub struct ModelClient {
    http: reqwest::Client,
    endpoint: Arc<ModelEndpoint>,
    usage: Arc<Mutex<Usage>>,
    window: Arc<ContextWindow>,
    /// Set once a reply came only without streaming after incomplete streams: later
    /// calls of this client (and its clones) go unstreamed from the start.
    unstreamed: Arc<AtomicBool>,
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
        let window = ContextWindow::new(endpoint.context_length(), endpoint.settings.max_tokens);
        Ok(ModelClient {
            http,
            endpoint: Arc::new(endpoint),
            usage: Arc::new(Mutex::new(Usage::default())),
            window: Arc::new(window),
            unstreamed: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The endpoint in effect.
    pub fn endpoint(&self) -> &ModelEndpoint {
        &self.endpoint
    }

    /// The context window and its token estimate.
    pub fn window(&self) -> &ContextWindow {
        &self.window
    }

    /// Tokens used by every call of this client (and its clones) so far.
    pub fn total_usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The JSON body for `request`, streamed as configured.
    pub fn body(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ModelError> {
        self.body_for(request, self.endpoint.settings.stream)
    }

    /// The JSON body for `request`, streamed or not.
    fn body_for(&self, request: &ChatRequest<'_>, stream: bool) -> Result<Vec<u8>, ModelError> {
        let settings = &self.endpoint.settings;
        let offers_tools = !request.tools.is_empty();
        let body = Body {
            max_tokens: settings.max_tokens,
            messages: request.messages,
            model: &self.endpoint.model,
            parallel_tool_calls: (offers_tools && !settings.parallel_tool_calls).then_some(false),
            stream: stream.then_some(true),
            stream_options: stream.then_some(StreamOptions {
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
    /// starts as they arrive (a reply that is not streamed is reported whole), and one
    /// [`StreamEvent::Retry`] line per retry. Retries as configured; a streamed request
    /// that failed twice is sent again without streaming, and when the two failures were
    /// incomplete streams and that worked, this client no longer streams
    /// (docs/model-servers.md); `cancel` aborts at once.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, ModelError> {
        let settings = &self.endpoint.settings;
        let mut stream = settings.stream && !self.unstreamed.load(Ordering::Relaxed);
        let mut body = Bytes::from(self.body_for(request, stream)?);
        self.check_fits(body.len())?;
        let (mut incomplete, mut streamed_failures) = (0u32, 0u32);
        let mut attempt = 0u32;
        loop {
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ModelError::Interrupted),
                result = self.attempt(&body, on_event) => result,
            };
            match result {
                Ok(completion) => {
                    if incomplete >= 2 && !stream {
                        self.unstreamed.store(true, Ordering::Relaxed);
                    }
                    self.window
                        .observe(body.len(), completion.usage.prompt_tokens);
                    self.usage
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .add(completion.usage);
                    return Ok(completion);
                }
                Err((err, retry_after)) if err.retryable() && attempt < settings.max_retries => {
                    if stream {
                        // Any failure counts (a server may answer a streamed request it
                        // cannot stream with a 500); only incomplete streams make the
                        // switch last beyond this call.
                        streamed_failures += 1;
                        incomplete += u32::from(matches!(err, ModelError::Incomplete { .. }));
                        if streamed_failures >= 2 {
                            stream = false;
                            body = Bytes::from(self.body_for(request, false)?);
                        }
                    }
                    let backoff = settings.retry_base_delay.max(0.0) * 2f64.powi(attempt as i32);
                    let wait = retry_after
                        .unwrap_or(backoff)
                        .min(settings.retry_max_delay.max(0.0));
                    tracing::debug!(%err, attempt, wait, "model call failed; retrying");
                    attempt += 1;
                    on_event(StreamEvent::Retry(format!(
                        "model call failed ({}); retry {attempt}/{} in {wait:.0} s{}",
                        err.short(),
                        settings.max_retries,
                        if stream { "" } else { ", not streamed" }
                    )));
                    tokio::select! {
                        () = cancel.cancelled() => return Err(ModelError::Interrupted),
                        () = tokio::time::sleep(Duration::from_secs_f64(wait)) => {}
                    }
                }
                Err((
                    ModelError::Status {
                        status: 400,
                        body: text,
                        ..
                    },
                    _,
                )) if mentions_context(&text) => {
                    self.window.underestimated();
                    return Err(self.overflow(body.len()));
                }
                Err((err, _)) => return Err(err),
            }
        }
    }

    /// An error unless a body of `bytes` fits the window by the estimate.
    fn check_fits(&self, bytes: usize) -> Result<(), ModelError> {
        if self.window.estimate(bytes) > self.window.prompt_limit() {
            return Err(self.overflow(bytes));
        }
        Ok(())
    }

    fn overflow(&self, bytes: usize) -> ModelError {
        ModelError::ContextOverflow {
            estimate: self.window.estimate(bytes),
            limit: self.window.prompt_limit(),
            length: self.window.length(),
        }
    }

    /// One HTTP exchange; on failure also the server's `Retry-After` in seconds.
    async fn attempt(
        &self,
        body: &Bytes,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<Completion, (ModelError, Option<f64>)> {
        let url = &self.endpoint.url;
        let transport = |source: reqwest::Error| {
            let err = if source.is_timeout() {
                ModelError::Timeout {
                    url: url.clone(),
                    seconds: self.endpoint.timeout().as_secs_f64(),
                }
            } else {
                ModelError::Transport {
                    url: url.clone(),
                    detail: self.scrub(&cause_chain(&source)),
                    source,
                }
            };
            (err, None)
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
            let text = reply::error_body(&mut response, MAX_ERROR_BODY * 4).await;
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
        let limit = self.endpoint.settings.max_reply_bytes;
        let read = if is_sse {
            reply::streamed(&mut response, url, limit, on_event).await
        } else {
            // A server that ignores `stream: true` answers whole; that is fine.
            reply::whole(&mut response, limit, on_event).await
        };
        read.map_err(|err| match err {
            ReadError::Transport(source) => transport(source),
            ReadError::Model(err) => (err, None),
        })
    }

    /// An error text, cut short and with the API key (should a server echo it) removed.
    fn scrub(&self, text: &str) -> String {
        let text: String = text.chars().take(MAX_ERROR_BODY).collect();
        let text = match &self.endpoint.api_key {
            Some(key) => mask_key(&text, key.expose()),
            None => text,
        };
        tools_core::redact::redact(&text).into_owned()
    }
}

/// True when a 400's body is about the context length (OpenAI's
/// `context_length_exceeded`, vLLM's "maximum context length", llama.cpp's "exceed
/// context window", Ollama's "context").
fn mentions_context(body: &str) -> bool {
    let body = body.to_ascii_lowercase();
    body.contains("context")
        && (body.contains("length") || body.contains("window") || body.contains("exceed"))
}

/// Shortest key masked by value: a shorter one (a local server's `x`, `sk`) is no
/// secret, and masking it would garble every word that contains it.
const MIN_MASKED_KEY: usize = 8;

/// `text` with each whole-word occurrence of `key` replaced by `***`: an occurrence
/// inside a longer token (letters, digits, `-`, `_` either side) is left alone.
pub fn mask_key(text: &str, key: &str) -> String {
    if key.chars().count() < MIN_MASKED_KEY {
        return text.to_string();
    }
    let word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(key) {
        let before = rest[..at].chars().next_back().or(out.chars().next_back());
        let after = rest[at + key.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(word) || after.is_some_and(word) {
            out.push_str(key);
        } else {
            out.push_str("***");
        }
        rest = &rest[at + key.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "client_failure_tests.rs"]
mod failure_tests;
