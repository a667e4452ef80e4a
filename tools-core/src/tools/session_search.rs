//! `session_search` (toolset `session_search`): search and read past sessions. An
//! agent-loop tool: the agent loop answers it from its session database; through the
//! registry alone (`toolhost call`) it returns the agent-loop state's "not available"
//! answer. Parameters as in Hermes' schema; the description is shortened and names
//! toolhost instead of Hermes.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent_loop::stub_error;
use crate::entry::ToolEntry;
use crate::error::RegisterError;
use crate::services::CoreServices;

fn schema() -> Value {
    json!({
        "description": "Search past sessions stored in the local session database, or scroll \
            inside one. FTS5 retrieval over the stored messages; no LLM calls.\n\n\
            This searches conversation history only: it is not evidence about the current \
            state of a file, URL or system the user named. Inspect such sources directly.\n\n\
            FOUR CALLING SHAPES\n\
            1) DISCOVERY — pass `query`: the top N sessions, each with session_id, title, \
            when, snippet, bookend_start (first 3 user/assistant messages), messages (±5 \
            around the match, the anchor flagged), bookend_end (last 3), match_message_id, \
            messages_before, messages_after.\n\
            2) SCROLL — pass `session_id` + `around_message_id` (+ `window`): ±window \
            messages around the anchor. Scroll forward with the last message's id, backward \
            with the first's.\n\
            3) READ — pass `session_id` only: the whole session (first 20 + last 10 when \
            large).\n\
            4) BROWSE — no arguments: recent sessions with titles and previews.\n\n\
            FTS5 SYNTAX: terms are ANDed; use OR for broader recall, \"quoted phrases\", NOT, \
            and prefix* wildcards.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search query (discovery shape). Omit to browse recent sessions. Ignored when session_id + around_message_id are set."},
                "limit": {"type": "integer", "description": "Discovery shape only. Max sessions to return (default 3, max 10).", "default": 3},
                "sort": {"type": "string", "enum": ["newest", "oldest"], "description": "Discovery shape only. Order the chosen sessions by recency ('newest') or origin ('oldest'); omit for relevance."},
                "session_id": {"type": "string", "description": "Scroll or read shape. A session_id from a prior discovery or browse call."},
                "around_message_id": {"type": "integer", "description": "Scroll shape. Message id to center the window on (match_message_id, or any id seen in a window)."},
                "window": {"type": "integer", "description": "Scroll shape only. Messages on each side of the anchor, 1-20. Default 5.", "default": 5},
                "role_filter": {"type": "string", "description": "Optional. Comma-separated roles to search. Default 'user,assistant'; add 'tool' to include tool output."},
                "profile": {"type": "string", "description": "Not supported by toolhost (one session database per home); leave unset."}
            },
            "required": []
        }
    })
}

/// Build the `session_search` tool (registry stub; see the module docs).
pub fn build(_services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    ToolEntry::builder("session_search", "session_search")
        .schema(&schema())
        .emoji("🔍")
        .sync_handler(|_, _| Ok(stub_error("session_search")))
        .build()
}
