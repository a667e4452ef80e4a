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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tools_core::tools::args_check::check;
    use tools_core::{CoreServices, Home};

    use super::super::delegate::DelegateArgs;
    use super::super::session_search::SessionSearchArgs;

    /// The loop answers these tools with its own argument structs; their schemas are
    /// the core tools' (the rest are checked in tools-core).
    #[test]
    fn loop_argument_structs_match_the_core_schemas() {
        let services = Arc::new(CoreServices::for_tests(Home::at("/nonexistent")));
        let session_search = tools_core::tools::session_search::build(&services).unwrap();
        check::<SessionSearchArgs>(&session_search.parameters, &[]).unwrap();
        let delegate = tools_core::tools::delegate_task::build(&services).unwrap();
        check::<DelegateArgs>(&delegate.parameters, &[]).unwrap();
    }
}
