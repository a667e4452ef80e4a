//! Shared services the core tools are built with: the home directory, settings, hooks,
//! the approval gate, each task's file system, and the prompter that asks the user. Core tools capture an `Arc<CoreServices>`
//! when they are built; per-call data comes in the [`crate::ToolContext`].

use std::sync::Arc;

use crate::approval::ApprovalGate;
#[cfg(unix)]
use crate::code_exec::ToolCallerSlot;
use crate::cron::CronService;
use crate::environment_files::EnvironmentFiles;
use crate::environments::EnvironmentManager;
use crate::files::FileSystemProvider;
use crate::home::Home;
use crate::hooks::Hooks;
use crate::prompter::{Prompter, TerminalPrompter};
use crate::settings::CoreSettings;
use crate::skills::SkillCatalog;

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
    /// Default: the task's execution environment (the host for the local backend, in
    /// the terminal session's working directory; inside the container / remote host for
    /// the others).
    pub files: Arc<dyn FileSystemProvider>,
    /// Asks the user questions (`clarify`). Default: the terminal.
    pub prompter: Arc<dyn Prompter>,
    /// Execution environments per task and background processes (from
    /// `settings.terminal`). Call [`CoreServices::shutdown`] on exit.
    pub environments: Arc<EnvironmentManager>,
    /// Every skill source (`settings.skills`), shared by the skill tools.
    pub skills: Arc<SkillCatalog>,
    /// The host's pipeline, for `execute_code` scripts (installed by the host).
    #[cfg(unix)]
    pub tool_caller: ToolCallerSlot,
    /// Scheduled jobs: `[cron]`, the job store, the host's agent runner.
    pub cron: Arc<CronService>,
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
    /// Services from parsed settings: the environment manager (nothing is started until
    /// a tool needs an environment), the file system of each task's environment, and
    /// the terminal prompter. Replace `files` / `prompter` afterwards to route files or
    /// questions elsewhere.
    pub fn new(
        home: Home,
        settings: CoreSettings,
        hooks: Arc<Hooks>,
        approval: Arc<dyn ApprovalGate>,
    ) -> Self {
        let environments = EnvironmentManager::new(
            settings.terminal.clone(),
            home.root().to_path_buf(),
            home.results_dir(),
        );
        let cwd = std::env::current_dir().unwrap_or_default();
        let skills = Arc::new(SkillCatalog::from_settings(
            home.skills_dir(),
            &settings.skills,
            &cwd,
        ));
        let cron = Arc::new(CronService::new(home.clone(), settings.cron.clone()));
        CoreServices {
            cron,
            home,
            settings,
            hooks,
            approval,
            files: Arc::new(EnvironmentFiles::new(&environments)),
            prompter: Arc::new(TerminalPrompter::stdio()),
            environments,
            skills,
            #[cfg(unix)]
            tool_caller: ToolCallerSlot::default(),
        }
    }

    /// Services with default settings, fresh hooks and the allow-all gate (tests):
    /// local files in the process's directory, questions on the terminal. Only with the
    /// `test-support` feature (other crates' `[dev-dependencies]`).
    #[cfg(any(test, feature = "test-support"))]
    pub fn for_tests(home: Home) -> Self {
        Self::new(
            home,
            CoreSettings::default(),
            Arc::new(Hooks::new()),
            Arc::new(crate::approval::AllowAllGate),
        )
    }

    /// Kill background processes and tear down every execution environment (containers,
    /// ssh connections, sandboxes). The host calls this once on exit, including after
    /// Ctrl-C; it is idempotent and bounded (~15 s).
    pub fn shutdown(&self) {
        #[cfg(unix)]
        self.tool_caller.clear();
        self.cron.executor.clear();
        self.environments.shutdown();
    }
}
