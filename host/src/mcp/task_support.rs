//! Which of a server's tools can only be called as MCP tasks, and why toolhost leaves
//! them out.
//!
//! MCP 2025-11-25 lets a tool declare `execution.taskSupport`: `"forbidden"` (the
//! default), `"optional"`, or `"required"` — the client must call it task-augmented
//! (`tools/call` with a `task` parameter, then `tasks/get` / `tasks/result`), and the
//! server answers a plain call with `-32601`. toolhost makes plain calls only, so a
//! `"required"` tool cannot be used through it: not by its own agent, and not by a
//! client of `toolhost mcp serve` (which does not offer tasks either). Such a tool is
//! not registered; `toolhost mcp list` names it among the skipped tools with
//! [`REASON`], and the log says it once per process.
//!
//! rmcp's `Tool` has no `execution` field, so the declaration is read from the raw
//! `tools/list` answers before rmcp parses them: [`TaskSupportTap::observe`] sees every
//! message a stdio server writes (`stdout_tap.rs`) and every server-sent event of a
//! streamable-HTTP server (`http_client.rs`), and a `tools/list` answered with a plain
//! JSON body is read by toolhost itself, parsed once and shown to
//! [`TaskSupportTap::observe_value`] before rmcp gets the same value
//! (`listing_request.rs`). An answer the tap cannot read is one rmcp cannot read either:
//! the listing fails, and no tool of it is registered.

use std::collections::{BTreeSet, HashSet};
use std::sync::{LazyLock, Mutex, PoisonError};

use serde_json::Value;

/// Why a task-only tool is skipped (shown by `toolhost mcp list`).
pub const REASON: &str = "the server requires calling it as an MCP task (execution.taskSupport = \"required\"), which toolhost does not support";

/// The marker every interesting message contains; other stdio lines and events are not
/// parsed (a key spelled with `\u` escapes would be missed there; no serializer escapes
/// ASCII letters, and a plain JSON body is always parsed in full).
const MARKER: &[u8] = b"taskSupport";

/// Raw names of the tools the latest listing declared task-only.
#[derive(Debug, Default)]
pub struct TaskSupportTap {
    required: Mutex<BTreeSet<String>>,
}

impl TaskSupportTap {
    /// An empty tap.
    pub fn new() -> Self {
        TaskSupportTap::default()
    }

    /// Forget what earlier listings said (called before each `tools/list`).
    pub fn reset(&self) {
        self.required
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Look at one raw JSON-RPC message from the server. One that is not JSON is left
    /// alone: rmcp rejects it too.
    pub fn observe(&self, message: &[u8]) {
        if !contains(message, MARKER) {
            return;
        }
        if let Ok(value) = serde_json::from_slice::<Value>(message) {
            self.observe_value(&value);
        }
    }

    /// Look at one JSON-RPC message from the server, already parsed.
    pub fn observe_value(&self, message: &Value) {
        let names = task_only_tools(message);
        if !names.is_empty() {
            self.required
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(names);
        }
    }

    /// The task-only tools seen since the last [`TaskSupportTap::reset`].
    pub fn required(&self) -> BTreeSet<String> {
        self.required
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Names of the tools of a `tools/list` result message that require tasks.
fn task_only_tools(message: &Value) -> Vec<String> {
    let Some(tools) = message
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    tools
        .iter()
        .filter(|tool| {
            tool.get("execution")
                .and_then(|e| e.get("taskSupport"))
                .and_then(Value::as_str)
                == Some("required")
        })
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

static WARNED: LazyLock<Mutex<HashSet<(String, String)>>> =
    LazyLock::new(|| Mutex::new(HashSet::new()));

/// Log, once per process and tool, that `tool` of `server` is left out.
pub fn warn_once(server: &str, tool: &str) {
    let first = WARNED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert((server.to_string(), tool.to_string()));
    if first {
        tracing::warn!(
            server,
            tool,
            "MCP tool left out: the server requires calling it as an MCP task, which toolhost does not support"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seen(messages: &[Value]) -> Vec<String> {
        let tap = TaskSupportTap::new();
        for message in messages {
            tap.observe(message.to_string().as_bytes());
        }
        tap.required().into_iter().collect()
    }

    fn listing(tools: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": tools}})
    }

    #[test]
    fn only_required_task_support_is_recorded() {
        let tools = json!([
            {"name": "plain", "inputSchema": {}},
            {"name": "forbidden", "execution": {"taskSupport": "forbidden"}},
            {"name": "optional", "execution": {"taskSupport": "optional"}},
            {"name": "research", "execution": {"taskSupport": "required"}},
        ]);
        assert_eq!(seen(&[listing(tools)]), ["research"]);
    }

    #[test]
    fn pages_accumulate_until_reset() {
        let page =
            |name: &str| listing(json!([{"name": name, "execution": {"taskSupport": "required"}}]));
        let tap = TaskSupportTap::new();
        tap.observe(page("a").to_string().as_bytes());
        tap.observe(page("b").to_string().as_bytes());
        assert_eq!(tap.required().len(), 2);
        tap.reset();
        assert!(tap.required().is_empty());
    }

    #[test]
    fn other_messages_and_garbage_are_ignored() {
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "taskSupport required"}]}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"taskSupport": "required"}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"execution": {"taskSupport": "required"}}]}}),
        ] {
            assert!(seen(std::slice::from_ref(&message)).is_empty(), "{message}");
        }
        let tap = TaskSupportTap::new();
        tap.observe(b"{\"taskSupport\": not json");
        assert!(tap.required().is_empty());
    }
}
