//! [`HostSlot`]: a place the host fills in after start-up with something a tool needs
//! but tools-core cannot build itself (the tool caller `execute_code` uses, the agent
//! runner cron jobs use), and empties on shutdown to break the reference cycle through
//! the registry. A poisoned lock is still read and written: the slot holds only an
//! `Arc`, so a panic elsewhere cannot leave it half-written.

use std::sync::{Arc, RwLock};

/// An `Arc<T>` the host installs late and removes on shutdown.
pub struct HostSlot<T: ?Sized>(RwLock<Option<Arc<T>>>);

impl<T: ?Sized> Default for HostSlot<T> {
    fn default() -> Self {
        HostSlot(RwLock::new(None))
    }
}

impl<T: ?Sized> std::fmt::Debug for HostSlot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostSlot")
    }
}

impl<T: ?Sized> HostSlot<T> {
    /// Install `value`, replacing any earlier one.
    pub fn set(&self, value: Arc<T>) {
        match self.0.write() {
            Ok(mut slot) => *slot = Some(value),
            Err(poisoned) => *poisoned.into_inner() = Some(value),
        }
    }

    /// What is installed, if anything.
    pub fn get(&self) -> Option<Arc<T>> {
        match self.0.read() {
            Ok(slot) => slot.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Remove what is installed.
    pub fn clear(&self) {
        match self.0.write() {
            Ok(mut slot) => *slot = None,
            Err(poisoned) => *poisoned.into_inner() = None,
        }
    }
}
