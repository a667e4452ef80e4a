//! Agent-loop tools: `todo`, `memory`, `session_search`, `delegate_task`.
//!
//! These tools need state that outlives one call (a session's task list, the agent's
//! memory), so the dispatcher answers them itself with an [`AgentLoopState`] instead
//! of the registry: after argument validation and before `pre_tool_call` hooks, the
//! host calls [`AgentLoopState::handle`]; `Some(result)` is the tool's result, `None`
//! means "not an agent-loop tool, dispatch normally". Called through the registry
//! directly, these tools answer `{"error":"<name> must be handled by the agent loop"}`
//! (Hermes' stub, [`stub_error`]).
//!
//! State lives under `<home>/state/`, every write atomic (temp file + rename):
//! - `todos/<session>.json` — one task list per session (Hermes keeps it in memory on
//!   the agent object; here it survives across `toolhost call` invocations);
//! - `memories/MEMORY.md` and `memories/USER.md` — global, in Hermes' `§`-delimited
//!   format, so a Hermes memory directory can be copied over as is.
//!
//! Each call re-reads the files (they are small), so several processes sharing a home
//! see each other's writes; memory writes also take an advisory file lock.
//! `session_search` and `delegate_task` need the agent loop's session database and
//! child agents (the host's `agent` module answers them there); outside the loop
//! (`toolhost call`, `dispatch`, `mcp serve`) they get a clear error.

mod memory;
mod threat_scan;
mod todo;

use std::path::Path;

use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::home::Home;
use crate::services::CoreServices;
use crate::settings::MemorySettings;
use crate::stable_hash::fnv1a;

pub use memory::{MemoryArgs, MemoryStore};
pub use threat_scan::scan_for_threats;
pub use todo::{TodoArgs, TodoItem, TodoStore};

/// The tools the dispatcher must route to [`AgentLoopState::handle`].
pub const AGENT_LOOP_TOOLS: [&str; 4] = ["todo", "memory", "session_search", "delegate_task"];

/// What these tools answer when called through the registry instead of the agent loop.
pub fn stub_error(name: &str) -> Value {
    json!({ "error": format!("{name} must be handled by the agent loop") })
}

/// The state behind the agent-loop tools. Cheap to share (`Arc`); all methods take
/// `&self` and are safe to call from many threads.
#[derive(Debug)]
pub struct AgentLoopState {
    todos: TodoStore,
    memory: MemoryStore,
}

impl AgentLoopState {
    /// State persisted under `home`'s state directory, with `memory` budgets.
    pub fn new(home: &Home, memory: &MemorySettings) -> Self {
        let state = home.state_dir();
        AgentLoopState {
            todos: TodoStore::new(state.join("todos")),
            memory: MemoryStore::new(
                state.join("memories"),
                memory.memory_char_limit,
                memory.user_char_limit,
            ),
        }
    }

    /// State for the home and settings of `services`.
    pub fn from_services(services: &CoreServices) -> Self {
        Self::new(&services.home, &services.settings.memory)
    }

    /// True when `name` is answered by [`handle`](Self::handle).
    pub fn intercepts(name: &str) -> bool {
        AGENT_LOOP_TOOLS.contains(&name)
    }

    /// Answer an agent-loop tool call: `Some(result)` for `todo`, `memory`,
    /// `session_search` and `delegate_task`; `None` for every other tool. `args` are
    /// the validated arguments. Blocking file I/O on small files; never panics.
    pub fn handle(&self, name: &str, args: &Value, ctx: &ToolContext) -> Option<Value> {
        Some(match name {
            "todo" => self.todos.handle(args, ctx.session_key()),
            "memory" => self.memory.handle(args),
            "session_search" => json!({
                "success": false,
                "error": "session_search is not available here: past sessions are searchable \
                          only inside toolhost's agent loop (toolhost run / chat). Work from \
                          the current conversation.",
            }),
            "delegate_task" => json!({
                "success": false,
                "error": "delegate_task is not available here: subagents run only inside \
                          toolhost's agent loop (toolhost run / chat). Do the work directly \
                          with the other tools.",
            }),
            _ => return None,
        })
    }

    /// The session's active (pending / in-progress) todo items, rendered for
    /// re-injection after the conversation was compressed; `None` when there are none.
    pub fn todo_injection(&self, session_id: &str) -> Option<String> {
        let key = if session_id.is_empty() {
            "default"
        } else {
            session_id
        };
        self.todos.format_for_injection(key)
    }

    /// The memory blocks for an agent's system prompt (entries that trip the threat
    /// scanner are replaced by a `[BLOCKED: …]` placeholder); `None` when memory is
    /// empty.
    pub fn memory_prompt(&self) -> Option<String> {
        self.memory.render_for_system_prompt()
    }

    /// The memory store (for embedders that edit memory outside tool calls).
    pub fn memory(&self) -> &MemoryStore {
        &self.memory
    }

    /// The todo store.
    pub fn todos(&self) -> &TodoStore {
        &self.todos
    }
}

/// A file-name-safe key for an id: `[A-Za-z0-9_.-]` kept, everything else `_`; when
/// anything changed (or the id is long) a hash suffix keeps distinct ids distinct.
pub fn state_key(id: &str) -> String {
    let id = if id.is_empty() { "default" } else { id };
    let cleaned: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches('.').to_string();
    if cleaned == id && id.len() <= 120 {
        return cleaned;
    }
    let stem: String = cleaned.chars().take(100).collect();
    format!("{stem}_{:016x}", fnv1a(id.bytes()))
}

/// Read a small state file; `Ok(None)` when it does not exist.
fn read_state(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_keys_are_safe_and_distinct() {
        assert_eq!(state_key("sess-1_a.b"), "sess-1_a.b");
        assert_eq!(state_key(""), "default");
        let a = state_key("a/b");
        let b = state_key("a?b");
        assert!(a.starts_with("a_b_") && b.starts_with("a_b_"));
        assert_ne!(a, b);
        assert!(!state_key("../../etc").contains('/'));
        assert!(!state_key("..").starts_with('.'));
        assert!(state_key(&"x".repeat(500)).len() < 130);
    }

    #[test]
    fn todo_and_memory_persist_across_fresh_state_objects() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let ctx = ToolContext {
            session_id: "s-42".into(),
            ..ToolContext::default()
        };
        let first = AgentLoopState::new(&home, &MemorySettings::default());
        first
            .handle(
                "todo",
                &json!({"todos": [{"id": "1", "content": "plan", "status": "in_progress"}]}),
                &ctx,
            )
            .unwrap();
        let r = first
            .handle(
                "memory",
                &json!({"action": "add", "target": "user", "content": "Prefers short answers"}),
                &ctx,
            )
            .unwrap();
        assert_eq!(r["success"], true, "{r}");

        let second = AgentLoopState::new(&home, &MemorySettings::default());
        let todos = second.handle("todo", &json!({}), &ctx).unwrap();
        assert_eq!(todos["todos"][0]["content"], "plan");
        let other_session = second
            .handle("todo", &json!({}), &ToolContext::default())
            .unwrap();
        assert_eq!(other_session["summary"]["total"], 0);
        assert_eq!(
            second.memory().entries("user").unwrap(),
            vec!["Prefers short answers"]
        );
        assert!(
            second
                .memory_prompt()
                .unwrap()
                .contains("Prefers short answers")
        );
        assert!(home.state_dir().join("memories/USER.md").exists());
        assert!(home.state_dir().join("todos/s-42.json").exists());
    }

    #[test]
    fn handles_only_agent_loop_tools() {
        let dir = tempfile::tempdir().unwrap();
        let state = AgentLoopState::new(&Home::at(dir.path()), &MemorySettings::default());
        let ctx = ToolContext::default();
        assert!(state.handle("read_file", &json!({}), &ctx).is_none());
        let r = state
            .handle("session_search", &json!({"query": "x"}), &ctx)
            .unwrap();
        assert_eq!(r["success"], false);
        assert!(r["error"].as_str().unwrap().contains("session_search"));
        let r = state.handle("delegate_task", &json!({}), &ctx).unwrap();
        assert!(r["error"].as_str().unwrap().contains("subagents"));
        assert!(AgentLoopState::intercepts("todo"));
        assert!(!AgentLoopState::intercepts("clarify"));
        assert_eq!(
            stub_error("todo").to_string(),
            r#"{"error":"todo must be handled by the agent loop"}"#
        );
    }
}
