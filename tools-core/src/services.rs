//! Shared services the core tools are built with: the home directory, settings, hooks,
//! the approval gate, the terminal prompter. Core tools capture an `Arc<CoreServices>`
//! when they are built; per-call data comes in the [`crate::ToolContext`].

use std::sync::Arc;

use crate::approval::{AllowAllGate, ApprovalGate};
use crate::environments::EnvironmentManager;
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
    /// Execution environments per task and background processes (from
    /// `settings.terminal`). Call [`CoreServices::shutdown`] on exit.
    pub environments: Arc<EnvironmentManager>,
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
    /// Services from parsed settings. Creates the environment manager (nothing is
    /// started until a tool needs an environment).
    pub fn new(
        home: Home,
        settings: CoreSettings,
        hooks: Arc<Hooks>,
        approval: Arc<dyn ApprovalGate>,
    ) -> Self {
        let environments = EnvironmentManager::new(settings.terminal.clone(), home.clone());
        CoreServices {
            home,
            settings,
            hooks,
            approval,
            environments,
        }
    }

    /// Services with default settings, fresh hooks and the allow-all gate (tests).
    pub fn for_tests(home: Home) -> Self {
        Self::new(
            home,
            CoreSettings::default(),
            Arc::new(Hooks::new()),
            Arc::new(AllowAllGate),
        )
    }

    /// Kill background processes and tear down every execution environment (containers,
    /// ssh connections, sandboxes). The host calls this once on exit, including after
    /// Ctrl-C; it is idempotent and bounded (~15 s).
    pub fn shutdown(&self) {
        self.environments.shutdown();
    }
}
