//! `[approvals]` configuration.

use serde::Deserialize;

/// `[approvals]` in `config.toml`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ApprovalSettings {
    /// `manual` (default), `smart` or `off`.
    pub mode: Option<String>,
}
