//! `todo` (toolset `todo`): the session task list. An agent-loop tool: the dispatcher
//! answers it with [`AgentLoopState`](crate::agent_loop::AgentLoopState); through the
//! registry it returns Hermes' stub error.
//!
//! Difference from Hermes' schema: items require only `id` (Hermes requires `id`,
//! `content` and `status`, which makes its own `merge=true` partial updates — "mark item
//! 2 completed" — fail strict validation); new items still get defaults for missing
//! fields.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent_loop::stub_error;
use crate::entry::ToolEntry;
use crate::error::RegisterError;
use crate::services::CoreServices;

fn schema() -> Value {
    json!({
        "description": "Manage your task list for the current session. Use for complex tasks \
            with 3+ steps or when the user provides multiple tasks. Call with no parameters to \
            read the current list.\n\nWriting:\n- Provide 'todos' array to create/update items\n\
            - merge=false (default): replace the entire list with a fresh plan\n- merge=true: \
            update existing items by id (only the fields you give), add any new ones\n\nEach \
            item: {id: string, content: string, status: pending|in_progress|completed|cancelled}\n\
            List order is priority. Only ONE item in_progress at a time.\nMark items completed \
            immediately when done. If something fails, cancel it and add a revised item.\n\n\
            Always returns the full current list.",
        "parameters": {
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "Task items to write. Omit to read current list.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "Unique item identifier"},
                            "content": {"type": "string", "description": "Task description"},
                            "status": {
                                "type": "string",
                                "enum": ["pending", "in_progress", "completed", "cancelled"],
                                "description": "Current status"
                            }
                        },
                        "required": ["id"]
                    }
                },
                "merge": {
                    "type": "boolean",
                    "description": "true: update existing items by id, add new ones. false \
                        (default): replace the entire list.",
                    "default": false
                }
            },
            "required": []
        }
    })
}

/// Build the `todo` tool (registry stub; see the module docs).
pub fn build(_services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    ToolEntry::builder("todo", "todo")
        .schema(&schema())
        .emoji("📋")
        .sync_handler(|_, _| Ok(stub_error("todo")))
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
        let r = registry.dispatch_blocking("todo", json!({}), &ToolContext::default());
        assert_eq!(
            r.text,
            r#"{"error":"todo must be handled by the agent loop"}"#
        );
    }

    #[test]
    fn merge_update_with_only_id_and_status_validates() {
        let services = Arc::new(CoreServices::for_tests(Home::at("/nonexistent")));
        let entry = build(&services).unwrap();
        let validator = entry.validator().unwrap();
        assert!(
            validator
                .is_valid(&json!({"merge": true, "todos": [{"id": "2", "status": "completed"}]}))
        );
        assert!(!validator.is_valid(&json!({"todos": [{"content": "no id"}]})));
    }
}
