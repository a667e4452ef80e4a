//! policy: a hooks-only plugin.
//!
//! - **Audit log**: every tool call (and every approval request and decision) is
//!   appended to a JSON-lines file, one object per line.
//! - **Rules**: an ordered list of deny/rewrite rules checked before each call.
//!
//! ```toml
//! [plugins.config.policy]
//! audit_log = "audit/tools.jsonl"   # relative to the toolhost home; "" turns it off
//! log_args = true                   # include call arguments in the log
//!
//! [[plugins.config.policy.rules]]
//! tool = "terminal"                 # a name, or a glob with `*`
//! arg = "command"                   # the argument to examine (default: all arguments as JSON)
//! matches = 'rm\s+-rf\s+/'          # a regular expression (default: always matches)
//! action = "deny"
//! message = "recursive deletes of / are not allowed"
//!
//! [[plugins.config.policy.rules]]
//! tool = "web_*"
//! action = "rewrite"
//! set = { safe_search = true }      # keys merged into the arguments
//! ```

mod audit;
mod rules;

use std::sync::Arc;

use serde::Deserialize;
use toolhost_plugin_api::prelude::*;

use crate::audit::AuditLog;
use crate::rules::{RuleSet, RuleSpec};

/// `[plugins.config.policy]`.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    audit_log: String,
    log_args: bool,
    rules: Vec<RuleSpec>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            audit_log: "audit/tools.jsonl".into(),
            log_args: true,
            rules: Vec::new(),
        }
    }
}

fn plugin(host: &Host) -> Result<Plugin, String> {
    let settings: Settings = host
        .settings()
        .map_err(|e| format!("invalid [plugins.config.policy]: {e}"))?;
    let rules = Arc::new(RuleSet::compile(&settings.rules)?);
    let mut plugin = Plugin::new().pre_tool_call(move |call| rules.decide(call));
    if !settings.audit_log.is_empty() {
        let path = host.home().join(&settings.audit_log);
        let log = Arc::new(AuditLog::open(&path, settings.log_args)?);
        tracing::info!(path = %path.display(), "audit log enabled");
        let (calls, requests, responses) = (log.clone(), log.clone(), log);
        plugin = plugin
            .post_tool_call(move |record| calls.tool_call(record))
            .pre_approval_request(move |event| requests.approval("approval_request", event))
            .post_approval_response(move |event| responses.approval("approval_response", event));
    }
    Ok(plugin)
}

toolhost_plugin_api::export_plugin!(plugin);
