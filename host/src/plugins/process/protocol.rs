//! The framed protocol between the host and a plugin host process
//! (`toolhost plugin-host`).
//!
//! Every message is one frame: a 4-byte little-endian length, then that many bytes of
//! JSON. The host sends [`Request`]s (an id, an op and its payload); the child answers
//! each with one [`Response`] carrying the same id, in order. The payloads are the very
//! strings the in-process ABI passes — the JSON of `plugin-api`'s `wire` module
//! (declaration, call context, hook events, `PreDecision`) — so a plugin cannot tell
//! which side of a pipe it runs on. The child's first frame, unasked, is the answer to
//! loading: id 0 with the declaration, or the load error.

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use toolhost_plugin_api::wire::HookKind;

/// Frames larger than this are refused (a corrupted length must not allocate gigabytes).
pub const MAX_FRAME: usize = 256 * 1024 * 1024;

/// What the host asks of the child.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Run tool `index` with the JSON `args` and `context` (a wire `CallContext`).
    Call {
        /// The tool's number in the declaration.
        index: u32,
        /// The arguments (JSON text).
        args: String,
        /// The call context (JSON text).
        context: String,
    },
    /// Run the availability check of tool `index`.
    Check {
        /// The tool's number in the declaration.
        index: u32,
    },
    /// Run the hooks of `kind` on `event` (JSON text of the kind's wire event).
    Hook {
        /// The hook kind.
        kind: HookKind,
        /// The event (JSON text).
        event: String,
    },
}

/// One request frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Echoed in the response.
    pub id: u64,
    /// What to do.
    #[serde(flatten)]
    pub op: Op,
}

/// The error half of a response: the ABI's `FfiError`, as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    /// `panic`, `invalid_arguments`, `load`, ...
    pub kind: String,
    /// What went wrong.
    pub message: String,
    /// A longer report (load errors only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One response frame: `ok` (the answer text; empty for a check) or `err`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// The request's id (0 for the load answer).
    pub id: u64,
    /// The answer.
    #[serde(flatten)]
    pub result: Answer,
}

/// What the child may ask of the host while it serves a request (sent with that
/// request's id; the host answers with a [`Response`] of the same id, then keeps
/// waiting for the request's own response).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Callback {
    /// Run a tool through the registry (Hermes' `ctx.dispatch_tool`: no hooks, no
    /// approval). Answered with the tool's result text.
    DispatchTool {
        /// The tool.
        tool: String,
        /// Its arguments.
        #[serde(default)]
        args: serde_json::Value,
        /// The task to run it for.
        #[serde(default)]
        task_id: String,
    },
}

/// A frame from the child: a callback or a response.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ChildFrame {
    /// The child asks the host for something.
    Callback {
        /// The request being served.
        id: u64,
        /// What it asks.
        callback: Callback,
    },
    /// The answer to a request.
    Response(Response),
}

/// The answer of a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Success: the answer text (tool result JSON, hook answer JSON, declaration JSON).
    Ok(String),
    /// Failure.
    Err(WireError),
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The other side closed the channel.
    #[error("the channel was closed")]
    Closed,
    /// Reading or writing failed.
    #[error("channel I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// The frame is not the JSON expected.
    #[error("unreadable frame: {0}")]
    Json(#[from] serde_json::Error),
    /// A length past [`MAX_FRAME`].
    #[error("frame of {0} bytes exceeds the limit")]
    TooLarge(usize),
}

/// Write `value` as one frame (one `write_all`, then flush).
pub fn write_frame<T: Serialize>(out: &mut impl Write, value: &T) -> Result<(), FrameError> {
    let mut frame = vec![0u8; 4];
    serde_json::to_writer(&mut frame, value)?;
    let len = u32::try_from(frame.len() - 4).map_err(|_| FrameError::TooLarge(frame.len()))?;
    frame[..4].copy_from_slice(&len.to_le_bytes());
    out.write_all(&frame)?;
    out.flush()?;
    Ok(())
}

/// Read one frame, blocking until it is complete.
pub fn read_frame<T: for<'de> Deserialize<'de>>(input: &mut impl Read) -> Result<T, FrameError> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len];
    input.read_exact(&mut body).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => FrameError::Closed,
        _ => FrameError::Io(e),
    })?;
    Ok(serde_json::from_slice(&body)?)
}

/// The body of a complete frame at the start of `buf`, if there is one: its JSON and
/// the bytes it took.
pub fn split_frame(buf: &[u8]) -> Result<Option<(&[u8], usize)>, FrameError> {
    let Some(head) = buf.get(..4) else {
        return Ok(None);
    };
    let mut len = [0u8; 4];
    len.copy_from_slice(head);
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    Ok(buf.get(4..4 + len).map(|body| (body, 4 + len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_through_frames() {
        let requests = [
            Request {
                id: 1,
                op: Op::Call {
                    index: 2,
                    args: r#"{"n":1}"#.into(),
                    context: "{}".into(),
                },
            },
            Request {
                id: 2,
                op: Op::Check { index: 0 },
            },
            Request {
                id: 3,
                op: Op::Hook {
                    kind: HookKind::PreToolCall,
                    event: "{}".into(),
                },
            },
        ];
        let mut bytes = Vec::new();
        for r in &requests {
            write_frame(&mut bytes, r).unwrap();
        }
        let mut input = bytes.as_slice();
        for r in &requests {
            assert_eq!(&read_frame::<Request>(&mut input).unwrap(), r);
        }
        assert!(matches!(
            read_frame::<Request>(&mut input),
            Err(FrameError::Closed)
        ));
    }

    #[test]
    fn responses_carry_ok_or_err() {
        let ok = Response {
            id: 7,
            result: Answer::Ok("{}".into()),
        };
        assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"id":7,"ok":"{}"}"#);
        let err = Response {
            id: 8,
            result: Answer::Err(WireError {
                kind: "panic".into(),
                message: "boom".into(),
                detail: None,
            }),
        };
        let text = serde_json::to_string(&err).unwrap();
        assert_eq!(serde_json::from_str::<Response>(&text).unwrap(), err);
    }

    #[test]
    fn child_frames_are_callbacks_or_responses() {
        let callback: ChildFrame = serde_json::from_str(
            r#"{"id":4,"callback":{"op":"dispatch_tool","tool":"read_file","args":{"path":"a"}}}"#,
        )
        .unwrap();
        assert_eq!(
            callback,
            ChildFrame::Callback {
                id: 4,
                callback: Callback::DispatchTool {
                    tool: "read_file".into(),
                    args: serde_json::json!({"path": "a"}),
                    task_id: String::new(),
                },
            }
        );
        let response: ChildFrame = serde_json::from_str(r#"{"id":4,"ok":"{}"}"#).unwrap();
        assert_eq!(
            response,
            ChildFrame::Response(Response {
                id: 4,
                result: Answer::Ok("{}".into()),
            })
        );
        assert!(serde_json::from_str::<ChildFrame>(r#"{"id":4}"#).is_err());
    }

    #[test]
    fn split_frame_waits_for_the_whole_body() {
        let mut bytes = Vec::new();
        write_frame(&mut bytes, &"abc").unwrap();
        assert!(split_frame(&bytes[..3]).unwrap().is_none());
        assert!(split_frame(&bytes[..bytes.len() - 1]).unwrap().is_none());
        let (body, used) = split_frame(&bytes).unwrap().unwrap();
        assert_eq!(body, br#""abc""#);
        assert_eq!(used, bytes.len());
        let huge = (u32::MAX).to_le_bytes();
        assert!(matches!(split_frame(&huge), Err(FrameError::TooLarge(_))));
    }
}
