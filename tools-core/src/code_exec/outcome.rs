//! How an `execute_code` run ends and what the model gets back, shared by the host
//! runner ([`super::run`]) and the remote one ([`super::remote`]): stdout and stderr
//! kept head + tail within their caps (ANSI stripped, secrets redacted) and the result
//! in Hermes' shape (docs/hermes/code-execution.md).

use std::io::Read;
use std::time::Instant;

use serde_json::{Map, Value, json};

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// The script exited with this code.
    Exited(i32),
    /// The time limit killed it.
    TimedOut,
    /// The call was cancelled.
    Cancelled,
}

/// Kept bytes of one stream: head and tail within a cap, and the total.
#[derive(Default)]
pub(super) struct Captured {
    pub(super) head: Vec<u8>,
    pub(super) tail: std::collections::VecDeque<u8>,
    pub(super) total: usize,
}

/// Read `stream` to its end, keeping at most `cap` bytes.
pub(super) fn capture(mut stream: impl Read, cap: usize) -> Captured {
    let mut out = Captured::default();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.push(&buf[..n], cap),
        }
    }
    out
}

impl Captured {
    /// Add `bytes`, keeping the first 40 % of `cap` and the last 60 %.
    pub(super) fn push(&mut self, bytes: &[u8], cap: usize) {
        let head_cap = cap * 2 / 5;
        let tail_cap = cap - head_cap;
        self.total += bytes.len();
        for &b in bytes {
            if self.head.len() < head_cap {
                self.head.push(b);
            } else {
                if self.tail.len() == tail_cap {
                    self.tail.pop_front();
                }
                if tail_cap > 0 {
                    self.tail.push_back(b);
                }
            }
        }
    }

    /// Bytes kept.
    pub(super) fn kept(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// The text (lossy UTF-8, ANSI stripped, secrets redacted), with a marker where
    /// bytes were dropped.
    pub(super) fn text(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let tail = String::from_utf8_lossy(&tail);
        let omitted = self.total - self.kept();
        let joined = if omitted > 0 {
            format!(
                "{head}\n\n... [OUTPUT TRUNCATED - {omitted} bytes omitted out of {} total] ...\n\n{tail}",
                self.total
            )
        } else {
            format!("{head}{tail}")
        };
        let plain = toolhost_text::strip_ansi(&joined).into_owned();
        crate::redact::redact(&plain).into_owned()
    }
}

pub(super) fn error_result(error: String, calls: usize, started: Instant) -> Value {
    json!({
        "status": "error",
        "error": error,
        "tool_calls_made": calls,
        "duration_seconds": round2(started.elapsed().as_secs_f64()),
    })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub(super) fn build_result(
    ending: Ending,
    exit_code: i32,
    out: &Captured,
    err: &Captured,
    calls: usize,
    started: Instant,
    timeout: u64,
) -> Value {
    let stdout = out.text();
    let stderr = err.text();
    let omitted = out.total - out.kept();
    let mut result = Map::new();
    result.insert("status".into(), json!("success"));
    result.insert("output".into(), json!(stdout));
    result.insert("exit_code".into(), json!(exit_code));
    result.insert("tool_calls_made".into(), json!(calls));
    result.insert(
        "duration_seconds".into(),
        json!(round2(started.elapsed().as_secs_f64())),
    );
    result.insert("stdout_truncated".into(), json!(omitted > 0));
    result.insert("stdout_bytes_captured".into(), json!(out.kept()));
    result.insert("stdout_bytes_total".into(), json!(out.total));
    result.insert("stdout_bytes_omitted".into(), json!(omitted));
    if omitted > 0 {
        result.insert("warning".into(), json!("execute_code stdout was truncated; the script did run, but only the captured head/tail output is included. Re-run only with narrower output if the omitted data is required."));
    }
    match ending {
        Ending::TimedOut => {
            let message = format!("Script timed out after {timeout}s and was killed.");
            result.insert("status".into(), json!("timeout"));
            result.insert(
                "output".into(),
                json!(if stdout.is_empty() {
                    format!("⏰ {message}")
                } else {
                    format!("{stdout}\n\n⏰ {message}")
                }),
            );
            result.insert("error".into(), json!(message));
        }
        Ending::Cancelled => {
            result.insert("status".into(), json!("interrupted"));
            result.insert(
                "output".into(),
                json!(format!("{stdout}\n[execution interrupted]")),
            );
        }
        Ending::Exited(0) => {}
        Ending::Exited(code) => {
            result.insert("status".into(), json!("error"));
            if stderr.is_empty() {
                let message = format!("Script exited with code {code}");
                result.insert("error".into(), json!(message));
            } else {
                let output = format!("{stdout}\n--- stderr ---\n{stderr}");
                result.insert("output".into(), json!(output));
                result.insert("error".into(), json!(stderr));
            }
        }
    }
    Value::Object(result)
}
