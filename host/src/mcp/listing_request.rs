//! `tools/list` over streamable HTTP, sent by toolhost itself so that the raw answer is
//! read before rmcp parses it (rmcp's `Tool` drops `execution.taskSupport`; see
//! `task_support.rs`).
//!
//! rmcp's reqwest client parses a plain `application/json` body straight into its own
//! types, so for a `tools/list` request [`send`] does the POST the way rmcp does (same
//! headers and body) and reads the answer here, whichever kind it is:
//!
//! - a JSON body is read whole up to the response limit, parsed once into a
//!   [`Value`], shown to the [`TaskSupportTap`], and converted into rmcp's message from
//!   that same value, so the tap and rmcp cannot disagree about what the server said;
//! - an event stream is handed on as events (shown to the tap by `http_client.rs`, like
//!   every other stream), bounded to the same limit in total;
//! - anything else is an error, never an empty listing: a body over the limit, one that
//!   is not JSON or not a JSON-RPC message, an unexpected content type. The listing
//!   then fails and none of its tools is registered, so an answer that cannot be read
//!   never lets a task-only tool through.
//!
//! Non-success statuses are mapped as rmcp maps them: `404` on a session is the
//! expired session, a JSON-RPC error body is passed on as the answer (the session-lost
//! `400` correction in `http_client.rs` then applies), `429` and `5xx` keep their status.
//! Every other request still goes through rmcp's client.

use std::borrow::Cow;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt as _};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    HttpStatusError, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde_json::Value;
use sse_stream::SseStream;

use super::task_support::TaskSupportTap;

/// What a POST gives rmcp.
pub type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// Bytes of an unusable body quoted in an error.
const PREVIEW: usize = 256;

/// True when `message` is a `tools/list` request (the one answer read here).
pub fn is_listing(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::ListToolsRequest(_))
    )
}

/// Everything rmcp hands its client for one POST.
pub struct Post {
    /// The endpoint.
    pub uri: Arc<str>,
    /// The `tools/list` request.
    pub message: ClientJsonRpcMessage,
    /// The session, once initialised.
    pub session_id: Option<Arc<str>>,
    /// A bearer token.
    pub auth_header: Option<String>,
    /// Configured headers plus rmcp's own (`MCP-Protocol-Version`, …).
    pub custom_headers: HashMap<HeaderName, HeaderValue>,
    /// Body limits.
    pub limits: StreamableHttpResponseLimits,
}

/// Send `post` and read its answer, showing a JSON body to `tap`.
pub async fn send(client: &reqwest::Client, tap: &TaskSupportTap, post: Post) -> PostResult {
    let had_session = post.session_id.is_some();
    let limit = post.limits.max_json_response_size;
    let response = request(client, &post)?.send().await?;
    let status = response.status();
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if status == StatusCode::NOT_FOUND && had_session {
        return Err(StreamableHttpError::SessionExpired);
    }
    let session_id = response
        .headers()
        .get(HEADER_SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
    let is = |mime: &str| {
        content_type
            .as_ref()
            .is_some_and(|ct| media_type_is(ct.as_bytes(), mime))
    };
    if !status.is_success() {
        return failure(response, is(JSON_MIME_TYPE), session_id, &post.limits).await;
    }
    if is(JSON_MIME_TYPE) {
        let body = read_bounded(response, limit).await?;
        let message = parse(&body)?;
        tap.observe_value(&message);
        let message = serde_json::from_value::<ServerJsonRpcMessage>(message)?;
        return Ok(StreamableHttpPostResponse::Json(message, session_id));
    }
    if is(EVENT_STREAM_MIME_TYPE) {
        let events = SseStream::from_bytes_stream(Bounded::new(chunks(response), limit));
        return Ok(StreamableHttpPostResponse::Sse(events.boxed(), session_id));
    }
    Err(StreamableHttpError::UnexpectedContentType(
        content_type.map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned()),
    ))
}

/// The POST, built as rmcp builds it.
fn request(
    client: &reqwest::Client,
    post: &Post,
) -> Result<reqwest::RequestBuilder, StreamableHttpError<reqwest::Error>> {
    let mut request = client
        .post(post.uri.as_ref())
        .header(
            header::ACCEPT,
            format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
        )
        .json(&post.message);
    if let Some(token) = &post.auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in &post.custom_headers {
        let reserved = [
            header::ACCEPT.as_str(),
            HEADER_SESSION_ID,
            HEADER_LAST_EVENT_ID,
        ]
        .iter()
        .any(|r| name.as_str().eq_ignore_ascii_case(r));
        if reserved {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        request = request.header(name, value);
    }
    if let Some(session) = &post.session_id {
        request = request.header(HEADER_SESSION_ID, session.as_ref());
    }
    Ok(request)
}

/// A non-success answer: its JSON-RPC error if it carries one, else the status.
async fn failure(
    response: reqwest::Response,
    is_json: bool,
    session_id: Option<String>,
    limits: &StreamableHttpResponseLimits,
) -> PostResult {
    let status = response.status();
    let retry_after = retry_after(response.headers());
    let body = if is_json {
        read_bounded(response, limits.max_json_response_size).await
    } else {
        read_prefix(response, limits.max_error_response_size).await
    };
    let body = body.unwrap_or_default();
    if is_json
        && let Ok(error @ JsonRpcMessage::Error(_)) =
            serde_json::from_slice::<ServerJsonRpcMessage>(&body)
    {
        return Ok(StreamableHttpPostResponse::Json(error, session_id));
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Err(HttpStatusError::new(status.as_u16(), retry_after).into());
    }
    Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
        format!("HTTP {status}: {}", preview(&body)),
    )))
}

fn retry_after(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The JSON value of a body, or an error quoting its start.
fn parse(body: &[u8]) -> Result<Value, StreamableHttpError<reqwest::Error>> {
    serde_json::from_slice(body).map_err(|err| {
        StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
            "the tools/list answer is not JSON ({err}): {}",
            preview(body)
        )))
    })
}

fn preview(body: &[u8]) -> String {
    if body.is_empty() {
        return "<empty>".into();
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(PREVIEW)]);
    text.into_owned()
}

/// The whole body, or [`StreamableHttpError::ResponseBodyTooLarge`] past `limit` bytes.
async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, StreamableHttpError<reqwest::Error>> {
    let too_large = StreamableHttpError::ResponseBodyTooLarge { max_size: limit };
    if response
        .content_length()
        .is_some_and(|len| len > limit as u64)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if chunk.len() > limit - body.len() {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `limit` bytes of the body (for an error message).
async fn read_prefix(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, StreamableHttpError<reqwest::Error>> {
    let mut body = Vec::new();
    while body.len() < limit
        && let Some(chunk) = response.chunk().await?
    {
        body.extend_from_slice(&chunk[..chunk.len().min(limit - body.len())]);
    }
    Ok(body)
}

/// The body as a stream of chunks.
fn chunks(response: reqwest::Response) -> impl Stream<Item = reqwest::Result<Bytes>> + Send {
    futures::stream::unfold(response, |mut response| async move {
        response
            .chunk()
            .await
            .transpose()
            .map(|chunk| (chunk, response))
    })
}

/// Why an event stream ended early.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// More than the limit arrived.
    #[error("the tools/list event stream exceeded {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// Reading failed.
    #[error("reading the tools/list event stream: {0}")]
    Read(#[from] reqwest::Error),
}

/// A byte stream that fails once more than `limit` bytes have passed.
struct Bounded<S> {
    inner: Pin<Box<S>>,
    left: usize,
    limit: usize,
    failed: bool,
}

impl<S> Bounded<S> {
    fn new(inner: S, limit: usize) -> Self {
        Bounded {
            inner: Box::pin(inner),
            left: limit,
            limit,
            failed: false,
        }
    }
}

impl<S: Stream<Item = reqwest::Result<Bytes>>> Stream for Bounded<S> {
    type Item = Result<Bytes, StreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.failed {
            return Poll::Ready(None);
        }
        match this.inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) if chunk.len() > this.left => {
                this.failed = true;
                Poll::Ready(Some(Err(StreamError::TooLarge { limit: this.limit })))
            }
            Poll::Ready(Some(Ok(chunk))) => {
                this.left -= chunk.len();
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(err))) => {
                this.failed = true;
                Poll::Ready(Some(Err(StreamError::Read(err))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Whether a `Content-Type` value names `expected` (case-insensitive, parameters
/// ignored).
fn media_type_is(value: &[u8], expected: &str) -> bool {
    value
        .split(|&b| b == b';')
        .next()
        .and_then(|essence| std::str::from_utf8(essence).ok())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_match_on_their_essence() {
        for (value, expected, matches) in [
            ("application/json", JSON_MIME_TYPE, true),
            ("Application/JSON; charset=utf-8", JSON_MIME_TYPE, true),
            (" text/event-stream ", EVENT_STREAM_MIME_TYPE, true),
            ("application/json-seq", JSON_MIME_TYPE, false),
            ("text/html", JSON_MIME_TYPE, false),
        ] {
            assert_eq!(
                media_type_is(value.as_bytes(), expected),
                matches,
                "{value}"
            );
        }
    }

    #[tokio::test]
    async fn an_event_stream_past_its_limit_fails() {
        let chunks = futures::stream::iter(
            ["abc", "defg", "h"].map(|c| Ok::<_, reqwest::Error>(Bytes::from(c))),
        );
        let seen: Vec<_> = Bounded::new(chunks, 7).collect().await;
        assert!(matches!(
            seen[..],
            [Ok(_), Ok(_), Err(StreamError::TooLarge { limit: 7 })]
        ));
    }
}
