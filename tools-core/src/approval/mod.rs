//! Dangerous-command approval: the gate every terminal command passes before it runs.
//!
//! This module holds the interface the terminal tool calls ([`ApprovalGate`]); the
//! shell-aware detector, the rule tables, the hardline floor and the approval flow live in
//! its submodules.

mod analyze;
mod checks;
mod detect;
mod fastpath;
mod gate;
pub mod glob;
mod model;
mod normalize;
mod options;
mod paths;
pub mod rules;
mod settings;
mod shell;
mod verdict;
mod wrappers;

pub use detect::{MAX_COMMAND_BYTES, detect};
pub use gate::{AllowAllGate, ApprovalGate, CommandCheck, GateDecision};
pub use settings::ApprovalSettings;
pub use verdict::{Finding, Verdict};
