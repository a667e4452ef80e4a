//! Shared services the core tools are built with: the home directory, settings, hooks,
//! the approval gate, each task's file system, and the prompter that asks the user. Core tools capture an `Arc<CoreServices>`
//! when they are built; per-call data comes in the [`crate::ToolContext`].

use std::sync::Arc;

use crate::approval::{AllowAllGate, ApprovalGate};
use crate::files::{FileSystemProvider, LocalFileSystemProvider};
use crate::home::Home;
use crate::hooks::Hooks;
use crate::prompter::{Prompter, TerminalPrompter};
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
    /// Each task's file system (the file tools resolve and read/write through it).
    /// Default: the host, in the process's working directory.
    pub files: Arc<dyn FileSystemProvider>,
    /// Asks the user questions (`clarify`). Default: the terminal.
    pub prompter: Arc<dyn Prompter>,
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
    /// Services with the default file system (the host, in the process's working
    /// directory) and prompter (the terminal). Replace `files` / `prompter` afterwards
    /// to route files into an execution environment or questions into another UI.
    pub fn new(
        home: Home,
        settings: CoreSettings,
        hooks: Arc<Hooks>,
        approval: Arc<dyn ApprovalGate>,
    ) -> Self {
        CoreServices {
            home,
            settings,
            hooks,
            approval,
            files: Arc::new(LocalFileSystemProvider::from_process_cwd()),
            prompter: Arc::new(TerminalPrompter::stdio()),
        }
    }

    /// Services with default settings, fresh hooks and the allow-all gate (tests):
    /// local files in the process's directory, questions on the terminal.
    pub fn for_tests(home: Home) -> Self {
        Self::new(
            home,
            CoreSettings::default(),
            Arc::new(Hooks::new()),
            Arc::new(AllowAllGate),
        )
    }
}
