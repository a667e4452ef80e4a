//! The stdio transport of `toolhost mcp serve`: newline-delimited JSON-RPC on
//! stdin/stdout that answers every malformed request, as JSON-RPC 2.0 requires.
//!
//! rmcp's own line transport drops input that is not JSON, and a request whose params
//! do not fit the method's schema falls through to a "custom request" that is answered
//! `-32601 method not found`. Here every line is classified before rmcp sees it:
//!
//! - not JSON → `-32700` (id `null`);
//! - JSON that is not a JSON-RPC message (a batch, a missing `method`) → `-32600`;
//! - a known MCP method whose `params` have the wrong shape → `-32602`, with the id;
//! - a line longer than [`MAX_LINE_BYTES`] → `-32600` saying the limit; the line is
//!   skipped without being buffered, and the connection stays open.
//!
//! Error text is plain English: serde's messages name Rust types ("expected struct
//! CallToolRequestParams"), which [`plain_message`] rewrites. Malformed notifications
//! get no answer (JSON-RPC forbids answering them). Outgoing messages go through one
//! writer task, so error answers and rmcp's own messages never interleave.

use std::borrow::Cow;

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;

/// Longest accepted request line (16 MiB, rmcp's own stdio limit).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The writer task is gone (stdout closed).
#[derive(Debug, thiserror::Error)]
#[error("the MCP client's stdout is closed")]
pub struct StdoutClosed;

/// A conforming line transport over `read`/`write`.
pub struct LineTransport<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
    max_line: usize,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

impl<R> std::fmt::Debug for LineTransport<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("max_line", &self.max_line)
            .finish_non_exhaustive()
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> LineTransport<R> {
    /// Read requests from `read`, write answers to `write` (spawns the writer task).
    pub fn new<W: AsyncWrite + Send + Unpin + 'static>(read: R, write: W) -> Self {
        Self::with_max_line(read, write, MAX_LINE_BYTES)
    }

    /// Like [`LineTransport::new`] with another line limit.
    pub fn with_max_line<W: AsyncWrite + Send + Unpin + 'static>(
        read: R,
        write: W,
        max_line: usize,
    ) -> Self {
        let (out, queue) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_all(write, queue));
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line,
            out: Some(out),
            writer: Some(writer),
        }
    }

    fn queue(&self, bytes: Vec<u8>) -> Result<(), StdoutClosed> {
        match &self.out {
            Some(out) => out.send(bytes).map_err(|_| StdoutClosed),
            None => Err(StdoutClosed),
        }
    }

    /// Answer with `error`; an unknown id is written as `null`, as JSON-RPC 2.0 asks
    /// (the protocol revisions toolhost negotiates predate omitting it).
    fn answer_error(&self, id: Option<RequestId>, error: ErrorData) {
        let id = id
            .and_then(|id| serde_json::to_value(id).ok())
            .unwrap_or(Value::Null);
        let message = json!({ "jsonrpc": "2.0", "id": id, "error": error });
        let mut bytes = message.to_string().into_bytes();
        bytes.push(b'\n');
        if self.queue(bytes).is_err() {
            tracing::debug!("could not answer a malformed MCP request: stdout closed");
        }
    }

    /// One line into `self.line`; `Ok(false)` at end of input; `Err(())` when the line
    /// was longer than the limit (its bytes are skipped, not kept).
    async fn read_line(&mut self) -> std::io::Result<Option<bool>> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut oversized = false;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len() + take > self.max_line {
                self.line.clear();
                self.discarding = newline.is_none();
                oversized = true;
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if oversized {
                return Ok(Some(false));
            }
            if newline.is_some() && !self.discarding && !self.line.is_empty() {
                return Ok(Some(true));
            }
        }
    }
}

async fn write_all<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(bytes) = queue.recv().await {
        if write.write_all(&bytes).await.is_err() || write.flush().await.is_err() {
            break;
        }
    }
}

/// What a line turned out to be.
#[derive(Debug)]
pub enum Classified {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Answer this error.
    Reject(Option<RequestId>, ErrorData),
    /// Say nothing (a malformed notification, a blank line).
    Ignore,
}

/// Classify one line (without its newline).
pub fn classify(line: &[u8]) -> Classified {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Classified::Ignore;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(err) => {
            return Classified::Reject(
                None,
                ErrorData::parse_error(
                    format!("Parse error: the request is not valid JSON ({err})"),
                    None,
                ),
            );
        }
    };
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a batch (JSON array); MCP takes one JSON-RPC message per line"
        } else {
            "not a JSON-RPC object"
        };
        return Classified::Reject(None, invalid_request(format!("Invalid request: {what}")));
    };
    let id = object.get("id").and_then(request_id);
    let method = object.get("method").and_then(Value::as_str);
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(message) => match (&message, method) {
            (JsonRpcMessage::Request(request), Some(method)) if is_known_method(method) => {
                match &request.request {
                    ClientRequest::CustomRequest(_) => Classified::Reject(
                        Some(request.id.clone()),
                        invalid_params(method, object.get("params")),
                    ),
                    _ => Classified::Message(Box::new(message)),
                }
            }
            _ => Classified::Message(Box::new(message)),
        },
        Err(err) => {
            let is_request = object.contains_key("id");
            if let Some(problem) = envelope_problem(object).filter(|_| is_request) {
                return Classified::Reject(
                    id,
                    invalid_request(format!("Invalid request: {problem}")),
                );
            }
            match (method, is_request) {
                (_, false) if method.is_some() => {
                    tracing::debug!(method, error = %plain_message(&err.to_string()), "ignoring a malformed MCP notification");
                    Classified::Ignore
                }
                (Some(method), true) if is_known_method(method) && id.is_some() => {
                    Classified::Reject(id, invalid_params(method, object.get("params")))
                }
                _ => Classified::Reject(
                    id,
                    invalid_request(format!(
                        "Invalid request: {}",
                        envelope_problem(object).unwrap_or_else(|| plain_message(&err.to_string()))
                    )),
                ),
            }
        }
    }
}

fn request_id(value: &Value) -> Option<RequestId> {
    serde_json::from_value(value.clone()).ok()
}

fn invalid_request(message: String) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_REQUEST, message, None)
}

/// What is wrong with the JSON-RPC envelope itself, if anything.
fn envelope_problem(object: &serde_json::Map<String, Value>) -> Option<String> {
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some("\"jsonrpc\" must be \"2.0\"".into());
    }
    match object.get("id") {
        Some(Value::String(_) | Value::Number(_)) | None => {}
        Some(_) => return Some("\"id\" must be a string or an integer".into()),
    }
    if !object.contains_key("method")
        && !object.contains_key("result")
        && !object.contains_key("error")
    {
        return Some("no \"method\"".into());
    }
    match object.get("method") {
        Some(Value::String(_)) | None => None,
        Some(_) => Some("\"method\" must be a string".into()),
    }
}

/// `-32602` for `method`, saying what is wrong with `params` where it can.
fn invalid_params(method: &str, params: Option<&Value>) -> ErrorData {
    let detail = params_problem(method, params)
        .map(|problem| format!(": {problem}"))
        .unwrap_or_default();
    ErrorData::invalid_params(
        format!("Invalid params for {method}{detail}"),
        Some(json!({ "method": method })),
    )
}

fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    use rmcp::model::{CallToolRequestParams, InitializeRequestParams, PaginatedRequestParams};
    let params = params.cloned().unwrap_or(Value::Null);
    if !params.is_object() && !params.is_null() {
        return Some("params must be an object".into());
    }
    let err = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params).err(),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            serde_json::from_value::<Option<PaginatedRequestParams>>(params).err()
        }
        _ => None,
    };
    err.map(|e| plain_message(&e.to_string()))
}

fn is_known_method(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "tools/list"
            | "tools/call"
            | "prompts/list"
            | "prompts/get"
            | "resources/list"
            | "resources/read"
            | "resources/templates/list"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "completion/complete"
            | "logging/setLevel"
    )
}

/// serde's message without Rust type names: "expected struct CallToolRequestParams"
/// becomes "expected an object", "enum X" "one of the allowed values".
pub fn plain_message(message: &str) -> String {
    let mut out = Vec::new();
    let mut words = message.split(' ').peekable();
    while let Some(word) = words.next() {
        match word {
            "struct" | "tuple" if words.peek().is_some() => {
                let next = words.next().unwrap_or_default();
                let rest = trailing_punctuation(next);
                out.push(Cow::Owned(format!("an object{rest}")));
            }
            "enum" if words.peek().is_some() => {
                let next = words.next().unwrap_or_default();
                let rest = trailing_punctuation(next);
                out.push(Cow::Owned(format!("one of the allowed values{rest}")));
            }
            other if other.contains("::") => out.push(Cow::Borrowed("a value")),
            other => out.push(Cow::Borrowed(other)),
        }
    }
    out.join(" ")
}

fn trailing_punctuation(word: &str) -> &str {
    let end = word
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '<' || *c == '>'))
        .map_or(word.len(), |(i, _)| i);
    &word[end..]
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = StdoutClosed;

    fn name() -> Cow<'static, str> {
        Cow::Borrowed("stdio")
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queued = match serde_json::to_vec(&item) {
            Ok(mut bytes) => {
                bytes.push(b'\n');
                self.queue(bytes)
            }
            Err(err) => {
                tracing::error!(%err, "could not serialise an MCP message");
                Ok(())
            }
        };
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(None) => return None,
                Err(err) => {
                    tracing::debug!(%err, "reading MCP requests from stdin failed");
                    return None;
                }
                Ok(Some(false)) => {
                    let limit = self.max_line;
                    self.answer_error(
                        None,
                        invalid_request(format!(
                            "Invalid request: the message is longer than the limit of {limit} bytes and was skipped"
                        )),
                    );
                }
                Ok(Some(true)) => {
                    let classified = {
                        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                        classify(line)
                    };
                    self.line.clear();
                    match classified {
                        Classified::Message(message) => return Some(*message),
                        Classified::Reject(id, error) => self.answer_error(id, error),
                        Classified::Ignore => {}
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.out.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(line: &str) -> (Option<RequestId>, i32, String) {
        match classify(line.as_bytes()) {
            Classified::Reject(id, error) => (id, error.code.0, error.message.to_string()),
            other => panic!("{line}: not rejected: {other:?}"),
        }
    }

    #[test]
    fn malformed_requests_get_the_right_code() {
        for (line, code, id) in [
            ("{not json", -32700, None),
            ("[1,2,3]", -32600, None),
            ("42", -32600, None),
            (r#"{"jsonrpc":"2.0","id":7}"#, -32600, Some(7)),
            (
                r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#,
                -32600,
                Some(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#,
                -32602,
                Some(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#,
                -32602,
                Some(4),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","arguments":[1]}}"#,
                -32602,
                Some(5),
            ),
        ] {
            let (got_id, got_code, message) = rejected(line);
            assert_eq!(got_code, code, "{line}: {message}");
            assert_eq!(got_id, id.map(RequestId::Number), "{line}");
            for rust in ["struct ", "enum ", "::", "Params", "JsonObject"] {
                assert!(!message.contains(rust), "{line}: {message}");
            }
        }
    }

    #[test]
    fn well_formed_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"vendor/thing"}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), Classified::Message(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn malformed_notifications_and_blank_lines_get_no_answer() {
        for line in [
            "",
            "  \r",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
        ] {
            assert!(
                matches!(classify(line.as_bytes()), Classified::Ignore),
                "{line:?}"
            );
        }
    }

    #[test]
    fn plain_messages_name_no_rust_types() {
        for (raw, want) in [
            (
                "invalid type: string \"x\", expected struct CallToolRequestParams",
                "invalid type: string \"x\", expected an object",
            ),
            (
                "unknown variant `x`, expected enum Role",
                "unknown variant `x`, expected one of the allowed values",
            ),
            ("missing field `name`", "missing field `name`"),
            ("bad rmcp::model::Thing here", "bad a value here"),
        ] {
            assert_eq!(plain_message(raw), want);
        }
    }

    #[tokio::test]
    async fn over_long_lines_are_answered_and_skipped() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let mut transport = LineTransport::with_max_line(server_read, server_write, 1000);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
            "x".repeat(5000)
        );
        let writer = tokio::spawn(async move {
            client_write.write_all(long.as_bytes()).await.unwrap();
            client_write
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
                .await
                .unwrap();
            client_write
        });
        let next = transport.receive().await.unwrap();
        assert!(
            matches!(&next, JsonRpcMessage::Request(r) if r.id == RequestId::Number(2)),
            "{next:?}"
        );
        let _client_write = writer.await.unwrap();
        let mut answer = BufReader::new(&mut client_read);
        let mut line = String::new();
        answer.read_line(&mut line).await.unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["error"]["code"], -32600, "{value}");
        assert!(
            value["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than the limit of 1000 bytes"),
            "{value}"
        );
    }
}
