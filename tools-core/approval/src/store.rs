//! Where "always" approvals are kept between processes.
//!
//! The engine remembers an "always" answer in memory at once and hands the rule key to an
//! [`AllowlistStore`] so the next process starts with it (`approvals.command_allowlist`
//! in [`ApprovalSettings`](crate::ApprovalSettings)). toolhost's store edits `config.toml`
//! in place (`tools_core::ConfigAllowlist`); an embedder may keep them anywhere, or
//! nowhere ([`MemoryOnly`]).

use std::error::Error;

/// Why a key could not be saved (the store's own error, boxed).
pub type StoreError = Box<dyn Error + Send + Sync>;

/// Persists "always" approvals.
pub trait AllowlistStore: Send + Sync + std::fmt::Debug {
    /// Save `key` (a rule key such as `git.force_push`). Saving a key that is already
    /// there is not an error. A failure is reported to the model with the approval ("not
    /// saved: ..."); the approval itself still holds for this process.
    fn add(&self, key: &str) -> Result<(), StoreError>;
}

/// A store that keeps nothing: "always" lasts as long as the engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryOnly;

impl AllowlistStore for MemoryOnly {
    fn add(&self, _key: &str) -> Result<(), StoreError> {
        Ok(())
    }
}
