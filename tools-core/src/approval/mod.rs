//! Dangerous-command approval: the gate every terminal command passes before it runs.
//!
//! This module holds the interface the terminal tool calls ([`ApprovalGate`]); the
//! shell-aware detector, the rule tables, the hardline floor and the approval flow live in
//! its submodules.

mod gate;
mod settings;

pub use gate::{AllowAllGate, ApprovalGate, CommandCheck, GateDecision};
pub use settings::ApprovalSettings;
