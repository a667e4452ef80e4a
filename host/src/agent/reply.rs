//! Reading one HTTP reply of the model server into a [`Completion`], whole or streamed,
//! with the checks a real server needs (docs/model-servers.md):
//!
//! - the reply is size-bounded (`[model] max_reply_bytes`): a server that streams
//!   without end cannot take the host's memory;
//! - a streamed reply that ends without `[DONE]` and without a `finish_reason` is
//!   incomplete (llama-cpp-python's server closes such a stream with status 200 when
//!   the prompt overflows its `n_ctx` or its tool grammar fails), not an empty answer.

use reqwest::Response;
use serde::Deserialize;

use super::client::{Completion, ModelError};
use super::message::{Message, Usage};
use super::stream::{SseDecoder, StreamAccumulator, StreamEvent};

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

/// Why reading a reply failed: the error, and whether it was the transport.
pub(super) enum ReadError {
    /// Reading the body failed.
    Transport(reqwest::Error),
    /// The reply itself is unusable.
    Model(ModelError),
}

impl From<ModelError> for ReadError {
    fn from(err: ModelError) -> Self {
        ReadError::Model(err)
    }
}

/// The body of `response`, at most `limit` bytes (more is [`ModelError::TooLarge`]).
pub(super) async fn read_capped(
    response: &mut Response,
    limit: usize,
) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    while let Some(bytes) = response.chunk().await.map_err(ReadError::Transport)? {
        if body.len() + bytes.len() > limit {
            return Err(ModelError::TooLarge { limit }.into());
        }
        body.extend_from_slice(&bytes);
    }
    Ok(body)
}

/// The start of an error body (at most `keep` bytes read, so a huge error page costs
/// nothing), as text.
pub(super) async fn error_body(response: &mut Response, keep: usize) -> String {
    let mut body = Vec::new();
    while let Ok(Some(bytes)) = response.chunk().await {
        body.extend_from_slice(&bytes);
        if body.len() >= keep {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// A whole (not streamed) reply, reported to `on_event` as a stream arriving at once.
pub(super) async fn whole(
    response: &mut Response,
    limit: usize,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<Completion, ReadError> {
    let body = read_capped(response, limit).await?;
    let completion = parse_reply(&String::from_utf8_lossy(&body))?;
    let content = completion.message.content_text();
    if !content.is_empty() {
        on_event(StreamEvent::Text(content));
    }
    for call in &completion.message.tool_calls {
        on_event(StreamEvent::ToolCall(call.function.name.clone()));
    }
    Ok(completion)
}

/// A streamed (SSE) reply, merged; incomplete when it ended without `[DONE]` and
/// without a `finish_reason`.
pub(super) async fn streamed(
    response: &mut Response,
    url: &str,
    limit: usize,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<Completion, ReadError> {
    let mut decoder = SseDecoder::default();
    let mut acc = StreamAccumulator::default();
    let mut received = 0usize;
    let mut apply = |acc: &mut StreamAccumulator, data: &str| -> Result<(), ModelError> {
        for event in acc.apply(data)? {
            on_event(event);
        }
        Ok(())
    };
    while let Some(bytes) = response.chunk().await.map_err(ReadError::Transport)? {
        received += bytes.len();
        if received > limit {
            return Err(ModelError::TooLarge { limit }.into());
        }
        for data in decoder.push(&bytes) {
            apply(&mut acc, &data)?;
        }
        if acc.done {
            break;
        }
    }
    for data in decoder.finish() {
        apply(&mut acc, &data)?;
    }
    let done = acc.done;
    let (message, finish_reason, usage) = acc.finish();
    if !done && finish_reason.is_none() {
        return Err(ModelError::Incomplete {
            url: url.to_string(),
            received,
        }
        .into());
    }
    Ok(Completion {
        message,
        finish_reason,
        usage: usage.unwrap_or_default(),
    })
}

/// A `chat.completion` body.
pub(super) fn parse_reply(text: &str) -> Result<Completion, ModelError> {
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
