//! Shared services the core tools are built with: the home directory, settings, hooks,
//! the approval gate, the terminal prompter. Core tools capture an `Arc<CoreServices>`
//! when they are built; per-call data comes in the [`crate::ToolContext`].

use std::sync::Arc;

use crate::approval::{AllowAllGate, ApprovalGate};
use crate::home::Home;
use crate::hooks::Hooks;
use crate::settings::CoreSettings;

/// Everything core tools may need besides their arguments.
pub struct CoreServices {
    /// The toolhost home (state, spilled results).
    pub home: Home,
    /// Parsed configuration sections.
    pub settings: CoreSettings,
    /// Hook registry (terminal output transforms, approval observers).
    pub hooks: Arc<Hooks>,
    /// The gate terminal commands pass.
    pub approval: Arc<dyn ApprovalGate>,
}

impl std::fmt::Debug for CoreServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreServices")
            .field("home", &self.home)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl CoreServices {
    /// Services with default settings, fresh hooks and the allow-all gate (tests).
    pub fn for_tests(home: Home) -> Self {
        CoreServices {
            home,
            settings: CoreSettings::default(),
            hooks: Arc::new(Hooks::new()),
            approval: Arc::new(AllowAllGate),
        }
    }
}
