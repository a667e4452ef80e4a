//! The HTTP client under toolhost's streamable-HTTP MCP connections: rmcp's reqwest
//! client, with one correction.
//!
//! A server that lost a session (it restarted) must answer 404, and rmcp then opens a
//! new session and resends the request at once. TypeScript SDK servers answer 400 with
//! a JSON-RPC error whose `id` is `null` ("Bad Request: No valid session ID provided")
//! instead; rmcp passes that error on, nothing can match it to the request, and the
//! call waits for its whole timeout. Here an id-less JSON-RPC error answering a request
//! sent with a session id is reported as the expired session it means, so the session
//! is re-initialised at once.
//!
//! Every answer that can carry a `tools/list` result is also read by the connection's
//! [`TaskSupportTap`] on its way to rmcp (see `task_support.rs`): the data of every
//! server-sent event (of a POST's stream and of the GET stream a resumed POST stream
//! continues on), and a `tools/list` answered with a plain JSON body, which
//! `listing_request.rs` fetches itself because rmcp parses such a body directly.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::listing_request::{self, Post, PostResult};
use super::task_support::TaskSupportTap;

/// rmcp's reqwest client, treating a session-lost 400 like a 404.
#[derive(Clone, Debug)]
pub struct SessionAwareClient {
    inner: reqwest::Client,
    tap: Arc<TaskSupportTap>,
}

impl SessionAwareClient {
    /// A client showing the server's events to `tap`.
    pub fn new(tap: Arc<TaskSupportTap>) -> Self {
        crate::tls::install_ring_provider();
        SessionAwareClient {
            inner: reqwest::Client::default(),
            tap,
        }
    }

    /// `response` with its event stream (if any) shown to the tap.
    fn tapped(&self, response: PostResult) -> PostResult {
        match response {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.tapped_stream(stream), session),
            ),
            other => other,
        }
    }

    /// `stream` with the data of each event shown to the tap.
    fn tapped_stream(&self, stream: SseStream) -> SseStream {
        let tap = Arc::clone(&self.tap);
        stream
            .inspect(move |event| {
                if let Ok(Sse {
                    data: Some(data), ..
                }) = event
                {
                    tap.observe(data.as_bytes());
                }
            })
            .boxed()
    }
}

type SseStream = BoxStream<'static, Result<Sse, SseError>>;

/// True when `response` to a request sent in a session says the session is gone.
fn session_lost(had_session: bool, response: &PostResult) -> bool {
    had_session
        && matches!(
            response,
            Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _))
                if error.id.is_none()
        )
}

fn corrected(had_session: bool, response: PostResult) -> PostResult {
    if session_lost(had_session, &response) {
        tracing::debug!("the MCP server answered without a request id: its session is gone");
        return Err(StreamableHttpError::SessionExpired);
    }
    response
}

impl StreamableHttpClient for SessionAwareClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        let had_session = session_id.is_some();
        let response = if listing_request::is_listing(&message) {
            let post = Post {
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            };
            listing_request::send(&self.inner, &self.tap, post).await
        } else {
            self.inner
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await
        };
        self.tapped(corrected(had_session, response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.tapped_stream(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tapped_stream(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ErrorData, NumberOrString};

    fn error(id: Option<NumberOrString>) -> PostResult {
        Ok(StreamableHttpPostResponse::Json(
            ServerJsonRpcMessage::error(ErrorData::invalid_request("Bad Request", None), id),
            None,
        ))
    }

    #[test]
    fn an_id_less_error_in_a_session_means_the_session_is_gone() {
        assert!(session_lost(true, &error(None)));
        assert!(!session_lost(false, &error(None)), "no session to lose");
        assert!(
            !session_lost(true, &error(Some(NumberOrString::Number(3)))),
            "an ordinary error answer"
        );
        assert!(matches!(
            corrected(true, error(None)),
            Err(StreamableHttpError::SessionExpired)
        ));
    }
}
