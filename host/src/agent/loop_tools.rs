//! The agent-loop tools as the loop answers them: `todo` and `memory` from
//! [`AgentLoopState`](tools_core::AgentLoopState) (task lists keyed by the session),
//! `session_search` from the session database, `delegate_task` by running child agents.
//! Installed as the dispatcher's [`AgentLoopHandler`], so these calls still pass the
//! whole pipeline (validation, hooks, result limits) like every other call.

use serde_json::Value;
use tools_core::ToolContext;

use super::assemble::Agent;
use super::delegate::delegate_task;
use super::session_search::session_search;
use crate::dispatch::AgentLoopHandler;

/// The handler for one agent.
pub(crate) struct LoopTools {
    agent: Agent,
}

impl LoopTools {
    pub(crate) fn new(agent: Agent) -> Self {
        LoopTools { agent }
    }
}

impl AgentLoopHandler for LoopTools {
    fn handle(&self, name: &str, args: &Value, ctx: &ToolContext) -> Option<Value> {
        match name {
            "session_search" => Some(session_search(
                &self.agent.shared.sessions,
                args,
                &ctx.session_id,
            )),
            "delegate_task" => Some(delegate_task(&self.agent, args, ctx)),
            _ => self.agent.shared.state.handle(name, args, ctx),
        }
    }
}
