//! Answering one request line from a script, whatever carried it (the Unix socket of
//! [`super::rpc`] on the host, the request files of [`super::relay`] in a remote
//! environment): the run's token, the allowlist, the shared call limit and the
//! `terminal` arguments a script may not use are checked here, once, so both channels
//! refuse exactly the same things with the same messages; what passes goes to the
//! host's pipeline ([`ToolCaller`]).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::ToolCaller;
use crate::context::ToolContext;

/// `terminal` arguments a script may not use (no background or interactive work).
const TERMINAL_BLOCKED: &[&str] = &["background", "pty", "notify_on_complete", "watch_patterns"];

/// What a channel needs to answer calls.
pub struct RpcOptions {
    /// The run's secret; requests must carry it.
    pub token: String,
    /// Tools the script may call.
    pub allowed: BTreeSet<String>,
    /// Calls allowed in total.
    pub max_calls: usize,
    /// The host's pipeline.
    pub caller: Arc<dyn ToolCaller>,
    /// The context calls run with (the `execute_code` call's).
    pub ctx: ToolContext,
}

/// Answers request lines for one run and counts the calls made.
pub struct Dispatcher {
    options: RpcOptions,
    calls: AtomicUsize,
}

impl Dispatcher {
    /// A dispatcher for one run.
    pub fn new(options: RpcOptions) -> Self {
        Dispatcher {
            options,
            calls: AtomicUsize::new(0),
        }
    }

    /// The run's token.
    pub fn token(&self) -> &str {
        &self.options.token
    }

    /// Tool calls made so far (refused requests are not counted).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The reply to one request line `{"tool","args","token"}`: the tool's result, or
    /// an `{"error"}` object; always a single line (a result with a raw newline is
    /// sent as a JSON string, which the module decodes twice).
    pub fn answer(&self, line: &str) -> String {
        let reply = self.reply(line);
        if reply.contains('\n') {
            Value::String(reply).to_string()
        } else {
            reply
        }
    }

    fn reply(&self, line: &str) -> String {
        let options = &self.options;
        let request: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(err) => {
                return json!({"error": format!("Invalid RPC request: {err}")}).to_string();
            }
        };
        let token = request
            .get("token")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if options.token.is_empty() || !same_token(token, &options.token) {
            return json!({"error": "Unauthorized RPC request"}).to_string();
        }
        let tool = request
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !options.allowed.contains(tool) {
            let available: Vec<&str> = options.allowed.iter().map(String::as_str).collect();
            return json!({"error": format!(
                "Tool '{tool}' is not available in execute_code. Available: {}",
                available.join(", ")
            )})
            .to_string();
        }
        let reserved = self
            .calls
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < options.max_calls).then_some(n + 1)
            });
        if reserved.is_err() {
            return json!({"error": format!(
                "Tool call limit reached ({}). No more tool calls allowed in this execution.",
                options.max_calls
            )})
            .to_string();
        }
        let mut args = match request.get("args") {
            Some(Value::Object(map)) => Value::Object(map.clone()),
            None | Some(Value::Null) => json!({}),
            Some(_) => {
                return json!({"error": "Invalid RPC request: args must be an object"}).to_string();
            }
        };
        if tool == "terminal"
            && let Some(map) = args.as_object_mut()
        {
            for key in TERMINAL_BLOCKED {
                map.remove(*key);
            }
        }
        options.caller.call(tool, &args, &options.ctx)
    }
}

/// Constant-time comparison of the token.
fn same_token(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}
