//! `memory` (toolset `memory`): durable notes and the user profile. An agent-loop tool:
//! the dispatcher answers it with [`AgentLoopState`](crate::agent_loop::AgentLoopState);
//! through the registry it returns Hermes' stub error. The schema is Hermes'.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent_loop::stub_error;
use crate::entry::ToolEntry;
use crate::error::RegisterError;
use crate::services::CoreServices;

fn schema() -> Value {
    json!({
        "description": "Save durable facts to persistent memory that survive across sessions. \
            Memory is injected into every future turn, so keep entries compact and \
            high-signal.\n\nHOW: make ALL your changes in ONE call via an 'operations' array \
            (each item: {action, content?, old_text?}). The batch applies atomically and the \
            char limit is checked only on the FINAL result — so a single call can \
            remove/replace stale entries to free room AND add new ones, even when an add \
            alone would overflow. The response reports current/limit chars and confirms \
            completion; one batch call finishes the update, so don't repeat it. Use the bare \
            action/content/old_text fields only for a single lone change.\n\nWHEN: save \
            proactively when the user states a preference, correction, or personal detail, or \
            you learn a stable fact about their environment, conventions, or workflow. \
            Priority: user preferences & corrections > environment facts > procedures. The \
            best memory stops the user repeating themselves.\n\nIF FULL: an add is rejected \
            with the current entries shown. Reissue as ONE batch that removes or shortens \
            enough stale entries and adds the new one together.\n\nTARGETS: 'user' = who the \
            user is (name, role, preferences, style). 'memory' = your notes (environment, \
            conventions, tool quirks, lessons).\n\nSKIP: trivial/obvious info, easily \
            re-discovered facts, raw data dumps, task progress, completed-work logs, temporary \
            TODO state (use the todo tool for those).",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["add", "replace", "remove"],
                    "description": "The action to perform (single-op shape). Omit when using \
                        'operations'."
                },
                "target": {
                    "type": "string",
                    "enum": ["memory", "user"],
                    "description": "Which memory store: 'memory' for personal notes, 'user' for \
                        user profile."
                },
                "content": {
                    "type": "string",
                    "description": "The entry content. Required for 'add' and 'replace' \
                        (single-op shape)."
                },
                "old_text": {
                    "type": "string",
                    "description": "REQUIRED for 'replace' and 'remove' (single-op shape): a \
                        short unique substring identifying the existing entry to modify. Omit \
                        only for 'add'."
                },
                "operations": {
                    "type": "array",
                    "description": "Batch shape: a list of operations applied atomically in one \
                        call against the final char budget. Preferred when making multiple \
                        changes or consolidating to make room. Each item is {action, content?, \
                        old_text?}.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string", "enum": ["add", "replace", "remove"]},
                            "content": {"type": "string", "description": "Entry content for add/replace."},
                            "old_text": {"type": "string", "description": "Substring identifying the entry for replace/remove."}
                        },
                        "required": ["action"]
                    }
                }
            },
            "required": ["target"]
        }
    })
}

/// Build the `memory` tool (registry stub; see the module docs).
pub fn build(_services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    ToolEntry::builder("memory", "memory")
        .schema(&schema())
        .emoji("🧠")
        .sync_handler(|_, _| Ok(stub_error("memory")))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ToolContext;
    use crate::home::Home;
    use crate::registry::Registry;

    #[test]
    fn registry_call_returns_the_agent_loop_stub() {
        let registry = Registry::new();
        let services = Arc::new(CoreServices::for_tests(Home::at("/nonexistent")));
        registry.register(build(&services).unwrap());
        let r = registry.dispatch_blocking(
            "memory",
            json!({"target": "memory", "action": "add", "content": "x"}),
            &ToolContext::default(),
        );
        assert_eq!(
            r.text,
            r#"{"error":"memory must be handled by the agent loop"}"#
        );
    }
}
