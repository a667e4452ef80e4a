//! `delegate_task` (toolset `delegation`): run subagents in isolated contexts. An
//! agent-loop tool: the agent loop answers it by running child agents; through the
//! registry alone it returns Hermes' stub error. Parameters as in Hermes' schema
//! (`goal`, `context`, `tasks`, `role`, the ignored `background`).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent_loop::stub_error;
use crate::entry::ToolEntry;
use crate::error::RegisterError;
use crate::services::CoreServices;

fn schema() -> Value {
    let role = json!({
        "type": "string",
        "enum": ["leaf", "orchestrator"],
        "description": "leaf (default): the subagent works with tools and cannot delegate \
            further. orchestrator: may delegate itself when delegation.max_spawn_depth allows."
    });
    json!({
        "description": "Spawn one or more subagents in isolated contexts. Each subagent gets \
            only the goal and context you give it (none of this conversation), your tools \
            minus delegate_task, clarify, memory, execute_code, cronjob and send_message, and \
            its own step budget. Pass `goal` for one task or `tasks` for several that run \
            concurrently (at most delegation.max_concurrent_children, default 3). Returns \
            each subagent's summary when all have finished.",
        "parameters": {
            "type": "object",
            "properties": {
                "goal": {"type": "string", "description": "What the subagent should accomplish. Be specific and self-contained -- the subagent knows nothing about your conversation history."},
                "context": {"type": "string", "description": "Background information the subagent needs: file paths, error messages, project structure, constraints."},
                "tasks": {
                    "type": "array",
                    "description": "Batch mode: several tasks run concurrently, each with its own goal and context.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "goal": {"type": "string", "description": "Task goal"},
                            "context": {"type": "string", "description": "Task-specific context"},
                            "role": role
                        },
                        "required": ["goal"]
                    }
                },
                "role": role,
                "background": {"type": "boolean", "description": "DEPRECATED / IGNORED. Kept for compatibility; has no effect."}
            },
            "required": []
        }
    })
}

/// Build the `delegate_task` tool (registry stub; see the module docs).
pub fn build(_services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    ToolEntry::builder("delegate_task", "delegation")
        .schema(&schema())
        .emoji("🔀")
        .sync_handler(|_, _| Ok(stub_error("delegate_task")))
        .build()
}
