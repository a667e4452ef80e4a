//! Dangerous-command approval: the gate every terminal command passes before it runs.
//!
//! This module holds the interface the terminal tool calls ([`ApprovalGate`]); the
//! shell-aware detector, the rule tables, the hardline floor and the approval flow live in
//! its submodules.

mod analyze;
mod checks;
pub mod cli;
mod detect;
mod engine;
mod fastpath;
mod gate;
pub mod glob;
mod model;
mod normalize;
mod options;
mod paths;
#[cfg(unix)]
mod prompt;
#[cfg(not(unix))]
mod prompt {
    //! No terminal prompt off Unix: embedders use the callback surface.
    use super::surface::{ApprovalRequest, Choice};
    /// Always false off Unix.
    pub fn terminal_available() -> bool {
        false
    }
    /// Never asks off Unix.
    pub fn ask(_request: &ApprovalRequest, _timeout: std::time::Duration) -> Option<Choice> {
        None
    }
}
pub mod rules;
#[cfg(test)]
mod rule_tests;
mod settings;
mod shell;
mod smart;
mod surface;
mod verdict;
mod wrappers;

pub use detect::{MAX_COMMAND_BYTES, detect, detect_full_parser};
pub use gate::{AllowAllGate, ApprovalGate, CommandCheck, GateDecision};
pub use engine::{ALLOWLIST_KEYS, ApprovalEngine, messages};
pub use prompt::{ask as ask_on_terminal, terminal_available};
pub use settings::{ApprovalMode, ApprovalSettings, NoHumanPolicy, SmartSettings};
pub use smart::{SmartApprover, SmartVerdict};
pub use surface::{ApprovalCallback, ApprovalRequest, BoxFuture, Choice, Surfaces};
pub use verdict::{Finding, Verdict};
