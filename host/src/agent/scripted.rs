//! A scripted OpenAI-compatible server on 127.0.0.1, for tests, benchmarks and trying
//! the loop without a model: each request to `/v1/chat/completions` is recorded and
//! answered with the next scripted reply (a JSON completion, an SSE stream, an error
//! status with an optional `Retry-After`, a raw body such as a stream cut short, or a
//! reply that comes late or never).
//!
//! Real HTTP over a real socket (hyper), so the client's retries, streaming and
//! timeouts are exercised exactly as against a model server.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `200` with this JSON body.
    Json(Value),
    /// `200` `text/event-stream` with these chunks, then `data: [DONE]`.
    Sse(Vec<Value>),
    /// An error status, with a body and an optional `Retry-After` value.
    Status {
        /// HTTP status.
        status: u16,
        /// Body text.
        body: String,
        /// `Retry-After` header.
        retry_after: Option<String>,
    },
    /// `200` with this content type and body as they are (a stream cut short, say).
    Raw {
        /// `Content-Type`.
        content_type: String,
        /// The body.
        body: String,
    },
    /// Wait this long, then answer with the inner reply.
    Delay(Duration, Box<Reply>),
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// Every header, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`null` when it was not JSON).
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
}

/// The running server; stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl ScriptedServer {
    /// Start on a free port with `replies` queued. Must be called inside a Tokio runtime.
    pub async fn start(replies: Vec<Reply>) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        shared
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(replies);
        let stop = CancellationToken::new();
        let (task_shared, task_stop) = (Arc::clone(&shared), stop.clone());
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => continue,
                    },
                    () = task_stop.cancelled() => break,
                };
                let shared = Arc::clone(&task_shared);
                let conn_stop = task_stop.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let shared = Arc::clone(&shared);
                        async move { Ok::<_, Infallible>(answer(&shared, request).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        _ = conn => {}
                        () = conn_stop.cancelled() => {}
                    }
                });
            }
        });
        Ok(ScriptedServer { addr, shared, stop })
    }

    /// The base URL (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queue more replies.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(replies);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Drop the recorded requests (a benchmark making thousands of requests would
    /// otherwise keep every body).
    pub fn forget_requests(&self) {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// The bodies of every request so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests().into_iter().map(|r| r.body).collect()
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        self.shared
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

async fn answer(shared: &Shared, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                v.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let authorization = headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone());
    let path_ok = request.uri().path().ends_with("/chat/completions");
    let body = match request.into_body().collect().await {
        Ok(collected) => serde_json::from_slice(&collected.to_bytes()).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    shared
        .requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Recorded {
            authorization,
            headers,
            body,
        });
    if !path_ok {
        return respond(
            404,
            "application/json",
            r#"{"error":"not found"}"#.into(),
            None,
        );
    }
    let next = shared
        .script
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop_front();
    let mut reply = next.unwrap_or(Reply::Status {
        status: 500,
        body: r#"{"error":{"message":"script exhausted"}}"#.into(),
        retry_after: None,
    });
    loop {
        match reply {
            Reply::Delay(wait, inner) => {
                tokio::time::sleep(wait).await;
                reply = *inner;
            }
            Reply::Json(value) => return respond(200, "application/json", value.to_string(), None),
            Reply::Sse(chunks) => {
                let mut text = String::new();
                for chunk in chunks {
                    text.push_str(&format!("data: {chunk}\n\n"));
                }
                text.push_str("data: [DONE]\n\n");
                return respond(200, "text/event-stream", text, None);
            }
            Reply::Status {
                status,
                body,
                retry_after,
            } => return respond(status, "application/json", body, retry_after),
            Reply::Raw { content_type, body } => {
                return respond(200, &content_type, body, None);
            }
        }
    }
}

fn respond(
    status: u16,
    content_type: &str,
    body: String,
    retry_after: Option<String>,
) -> Response<Full<Bytes>> {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", content_type);
    if let Some(value) = retry_after {
        builder = builder.header("retry-after", value);
    }
    builder
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

/// A completion with text only.
pub fn text(content: &str) -> Reply {
    text_ending(content, "stop")
}

/// A completion with text only and this `finish_reason`.
fn text_ending(content: &str, finish_reason: &str) -> Reply {
    Reply::Json(json!({
        "id": "chatcmpl-scripted", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": finish_reason,
            "message": {"role": "assistant", "content": content}}],
        "usage": usage(),
    }))
}

/// A completion calling tools: `(id, name, arguments text)`.
pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    Reply::Json(json!({
        "id": "chatcmpl-scripted", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": usage(),
    }))
}

/// A streamed completion: the text in `pieces`, then the calls, then usage.
pub fn streamed(pieces: &[&str], calls: &[(&str, &str, &str)]) -> Reply {
    let mut chunks: Vec<Value> = pieces
        .iter()
        .map(|p| json!({"choices": [{"index": 0, "delta": {"content": p}}]}))
        .collect();
    for (index, (id, name, args)) in calls.iter().enumerate() {
        let (head, tail) = args.split_at(args.len() / 2);
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": head}}
        ]}}]}));
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": tail}}
        ]}}]}));
    }
    let reason = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}));
    chunks.push(json!({"choices": [], "usage": usage()}));
    Reply::Sse(chunks)
}

/// An error status.
pub fn status(status: u16, retry_after: Option<&str>) -> Reply {
    Reply::Status {
        status,
        body: json!({"error": {"message": format!("scripted {status}")}}).to_string(),
        retry_after: retry_after.map(str::to_string),
    }
}

/// A stream that ends without `[DONE]` and without a `finish_reason`, after these text
/// pieces (none: llama-cpp-python's empty 200 when the model picks a tool or the prompt
/// overflows `n_ctx`).
pub fn cut_stream(pieces: &[&str]) -> Reply {
    let body: String = pieces
        .iter()
        .map(|p| {
            format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": p}}]})
            )
        })
        .collect();
    Reply::Raw {
        content_type: "text/event-stream".into(),
        body,
    }
}

/// A completion with no text and no tool calls (`finish_reason: stop`).
pub fn empty() -> Reply {
    text("")
}

/// A completion cut off at `max_tokens` (`finish_reason: length`).
pub fn cut_off(content: &str) -> Reply {
    text_ending(content, "length")
}
