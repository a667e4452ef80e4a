//! The approval gate interface: "may this command run?".
//!
//! The terminal tool calls [`ApprovalGate::check`] before every command. The gate may
//! block the calling thread (an interactive prompt, a smart-mode model call), so it is
//! called from a blocking thread, never from an async task. Actions that are not
//! commands but need a human all the same (guarded writes, script cron jobs) go through
//! [`ApprovalGate::check_action`].

use crate::verdict::Finding;

/// One command to decide on.
#[derive(Clone, Debug, Default)]
pub struct CommandCheck {
    /// The command exactly as it will run.
    pub command: String,
    /// Session-scoped approvals are keyed by this.
    pub session_key: String,
    /// The task the command runs for.
    pub task_id: String,
    /// The model's tool call id (for observers).
    pub tool_call_id: String,
    /// Backend name: `local`, `docker`, `ssh`, `sandbox`, ...
    pub env_type: String,
    /// False for isolated backends (sandbox, container without host mounts): only the
    /// hardline floor applies there.
    pub host_access: bool,
}

/// The gate's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateDecision {
    /// Run it. `note` (e.g. "Command required approval (...) and was approved by the
    /// user.") is added to the terminal result as `approval`.
    Approved {
        /// Optional note for the result.
        note: Option<String>,
        /// A human approved this very command when asked (answering once, for the
        /// session or permanently): the local kernel floor keeps only its device, sysrq
        /// and system-call part for this command (`terminal.local.confine =
        /// "verdict"`). False for everything a rule approved — the allowlist, an
        /// approval remembered from an earlier answer, smart approval, `mode = "off"`,
        /// `no_human = "approve"` — which run under the whole floor.
        human: bool,
    },
    /// Do not run it; `message` goes back to the model.
    Blocked {
        /// Why, for the model.
        message: String,
        /// True when the hardline floor blocked it (no approval can pass it).
        hardline: bool,
    },
}

/// An action that is not a shell command but needs a human's approval as one that edits
/// toolhost's own configuration does: a file tool's write into `<home>/scripts`,
/// `<home>/skills` or `<home>/plugins` (text that runs as code later), a cron job that
/// runs a script or runs without the agent. Only a human passes it: no mode, allowlist
/// or smart approver does, and with nobody to ask it is blocked
/// (docs/guarded-writes.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionCheck {
    /// What the human is shown in place of a command (`write_file <path>`, the job's
    /// script and schedule); redacted before it is shown.
    pub action: String,
    /// Why it needs a human (its rule key and description reach observers and prompts).
    pub finding: Finding,
    /// Session the decision applies to.
    pub session_key: String,
    /// The task the action is for.
    pub task_id: String,
    /// The model's tool call id (for observers).
    pub tool_call_id: String,
}

/// Decides whether a command may run.
pub trait ApprovalGate: Send + Sync {
    /// Decide on `check`. May block (prompts).
    fn check(&self, check: &CommandCheck) -> GateDecision;

    /// Decide on an [`ActionCheck`]: only a human approves it. The default (a gate that
    /// cannot ask anyone) blocks it. May block (prompts).
    fn check_action(&self, action: &ActionCheck) -> GateDecision {
        GateDecision::Blocked {
            message: crate::messages::human_only(action.finding.description),
            hardline: false,
        }
    }
}

/// A gate that approves everything: only for tests and for embedders that run their own
/// policy. The real gate is built from configuration by the approval module.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAllGate;

impl ApprovalGate for AllowAllGate {
    fn check(&self, _check: &CommandCheck) -> GateDecision {
        GateDecision::Approved {
            note: None,
            human: false,
        }
    }

    fn check_action(&self, _action: &ActionCheck) -> GateDecision {
        GateDecision::Approved {
            note: None,
            human: false,
        }
    }
}
