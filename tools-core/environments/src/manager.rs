//! The environment manager: one [`TaskEnvironment`] per task id, created on first use
//! (creation serialized per task, other tasks never wait), torn down after
//! `terminal.lifetime_seconds` of idleness unless the task still has running background
//! processes, and all cleaned up by [`EnvironmentManager::shutdown`] — which the host
//! must call on exit (Drop calls it too, as a safety net).
//!
//! Unlike Hermes, which collapses every task onto one shared `default` sandbox, each task
//! id gets its own environment (and its own container on the docker backend).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use super::capture::SpillTarget;
use super::daytona::DaytonaEnvironment;
use super::docker::DockerEnvironment;
use super::local::LocalEnvironment;
use super::modal::ModalEnvironment;
use super::processes::{ProcessLimits, ProcessRegistry};
use super::sandbox::SandboxEnvironment;
use super::session::TaskEnvironment;
use super::settings::TerminalSettings;
use super::singularity::SingularityEnvironment;
use super::ssh::SshEnvironment;
use super::{BackendKind, EnvError, Environment};

/// Per-task settings that differ from the configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskOverride {
    /// Working directory (applied at once to a live environment).
    pub cwd: Option<String>,
    /// Backend for this task (takes effect on its next environment).
    pub backend: Option<BackendKind>,
    /// Image for container/cloud backends (takes effect on its next environment).
    pub image: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why `kind` cannot be used with `settings`, if it cannot. Cheap enough for an
/// availability check (docker pings its daemon, others look for binaries/credentials).
pub fn backend_availability(kind: BackendKind, settings: &TerminalSettings) -> Result<(), String> {
    match kind {
        BackendKind::Local => Ok(()),
        BackendKind::Sandbox => super::sandbox::availability(&settings.sandbox),
        BackendKind::Docker => super::docker::availability(&settings.docker),
        BackendKind::Ssh => super::ssh::availability(&settings.ssh),
        BackendKind::Singularity => super::singularity::availability(&settings.singularity),
        BackendKind::Modal => super::modal::availability(&settings.modal),
        BackendKind::Daytona => super::daytona::availability(&settings.daytona),
    }
}

/// Creates, caches, reaps and cleans up task environments.
pub struct EnvironmentManager {
    settings: TerminalSettings,
    /// The toolhost home: its config, plugins and state are protected by the local
    /// backend's confinement.
    toolhost_home: PathBuf,
    /// Where output too large for the model is spilled.
    results_dir: PathBuf,
    envs: Mutex<HashMap<String, Arc<TaskEnvironment>>>,
    creating: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    overrides: Mutex<HashMap<String, TaskOverride>>,
    processes: Arc<ProcessRegistry>,
    reaper_started: AtomicBool,
    stop: Arc<(Mutex<bool>, Condvar)>,
    reaper: Mutex<Option<std::thread::JoinHandle<()>>>,
    shut_down: AtomicBool,
}

impl std::fmt::Debug for EnvironmentManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvironmentManager")
            .field("backend", &self.settings.backend)
            .field(
                "tasks",
                &lock(&self.envs).keys().cloned().collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl EnvironmentManager {
    /// A manager for `settings`; spilled output goes under `results_dir` (toolhost's
    /// `<home>/results`), and the local backend's confinement protects the config,
    /// plugins and state under `toolhost_home`. Nothing is created until a task first
    /// needs an environment.
    pub fn new(
        settings: TerminalSettings,
        toolhost_home: PathBuf,
        results_dir: PathBuf,
    ) -> Arc<Self> {
        let processes = Arc::new(ProcessRegistry::new(ProcessLimits {
            buffer_bytes: settings.background_buffer_bytes,
            max_processes: settings.max_background_processes.max(1),
            finished_ttl: Duration::from_secs(settings.finished_process_ttl),
        }));
        Arc::new(EnvironmentManager {
            settings,
            toolhost_home,
            results_dir,
            envs: Mutex::new(HashMap::new()),
            creating: Mutex::new(HashMap::new()),
            overrides: Mutex::new(HashMap::new()),
            processes,
            reaper_started: AtomicBool::new(false),
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            reaper: Mutex::new(None),
            shut_down: AtomicBool::new(false),
        })
    }

    /// The `[terminal]` settings.
    pub fn settings(&self) -> &TerminalSettings {
        &self.settings
    }

    /// The kernel floor for host work in `workdir` outside the terminal (`execute_code`),
    /// from `terminal.local` ([`crate::exec_policy`]).
    #[cfg(target_os = "linux")]
    pub fn floor(&self, workdir: &Path) -> crate::exec_policy::Floor {
        crate::exec_policy::Floor::prepare(&self.settings.local, workdir, &self.toolhost_home)
    }

    /// The background process registry.
    pub fn processes(&self) -> &Arc<ProcessRegistry> {
        &self.processes
    }

    /// Where a command's full output is spilled when it is too large.
    pub fn spill_target(&self, task: &str) -> SpillTarget {
        let task: String = task
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        SpillTarget {
            dir: self.results_dir.clone(),
            stem: format!("terminal-{task}-{stamp}-{}", super::random_hex(6)),
            max_bytes: self.settings.spill_max_bytes,
        }
    }

    /// Set (replace) `task`'s override. A `cwd` applies at once to its live environment.
    pub fn set_task_override(&self, task: &str, over: TaskOverride) {
        if let Some(cwd) = &over.cwd
            && let Some(env) = self.get(task)
        {
            env.set_cwd(cwd.clone());
        }
        lock(&self.overrides).insert(task.to_string(), over);
    }

    /// `task`'s override.
    pub fn task_override(&self, task: &str) -> TaskOverride {
        lock(&self.overrides).get(task).cloned().unwrap_or_default()
    }

    /// The backend `task` runs on (override, else configuration).
    pub fn backend_for(&self, task: &str) -> BackendKind {
        self.task_override(task)
            .backend
            .unwrap_or(self.settings.backend)
    }

    /// Why `task`'s backend cannot be used, if it cannot.
    pub fn availability(&self, task: &str) -> Result<(), String> {
        backend_availability(self.backend_for(task), &self.settings)
    }

    /// The directory a local task starts in before its environment exists: its
    /// override, else `terminal.cwd`, else the process's working directory.
    pub fn initial_local_cwd(&self, task: &str) -> String {
        if let Some(cwd) = self.task_override(task).cwd {
            return cwd;
        }
        let configured = &self.settings.cwd;
        if !configured.is_empty() && configured != "." {
            return configured.clone();
        }
        std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "/".into())
    }

    /// The live environment of `task`, if any.
    pub fn get(&self, task: &str) -> Option<Arc<TaskEnvironment>> {
        lock(&self.envs).get(task).cloned()
    }

    /// Tasks with a live environment.
    pub fn tasks(&self) -> Vec<String> {
        lock(&self.envs).keys().cloned().collect()
    }

    /// `task`'s environment, created on first use.
    pub fn get_or_create(self: &Arc<Self>, task: &str) -> Result<Arc<TaskEnvironment>, EnvError> {
        if self.shut_down.load(Ordering::SeqCst) {
            return Err(EnvError::Create {
                backend: self.backend_for(task),
                reason: "toolhost is shutting down".into(),
            });
        }
        if let Some(env) = self.get(task) {
            env.touch();
            return Ok(env);
        }
        let gate = Arc::clone(
            lock(&self.creating)
                .entry(task.to_string())
                .or_insert_with(|| Arc::new(Mutex::new(()))),
        );
        let _creating = lock(&gate);
        if let Some(env) = self.get(task) {
            return Ok(env);
        }
        let over = self.task_override(task);
        let kind = over.backend.unwrap_or(self.settings.backend);
        let backend = self.create_backend(kind, task, &over)?;
        let initial_cwd = over.cwd.clone();
        let init_files = if kind == BackendKind::Local {
            let mut files = Vec::new();
            if self.settings.auto_source_bashrc && backend.shell() == "bash" {
                files.push("~/.bashrc".to_string());
            }
            files.extend(self.settings.shell_init_files.iter().cloned());
            files
        } else {
            Vec::new()
        };
        let env = match TaskEnvironment::start(Arc::clone(&backend), task, initial_cwd, &init_files)
        {
            Ok(env) => Arc::new(env.with_persistent_shell(self.settings.persistent_shell)),
            Err(err) => {
                let _ = backend.cleanup();
                return Err(err);
            }
        };
        tracing::info!(task, backend = %backend.describe(), cwd = %env.cwd(), "terminal environment ready");
        lock(&self.envs).insert(task.to_string(), Arc::clone(&env));
        self.start_reaper();
        Ok(env)
    }

    fn create_backend(
        &self,
        kind: BackendKind,
        task: &str,
        over: &TaskOverride,
    ) -> Result<Arc<dyn Environment>, EnvError> {
        let s = &self.settings;
        let image = over.image.as_deref();
        Ok(match kind {
            BackendKind::Local => Arc::new(
                LocalEnvironment::new(&s.cwd, s.env_passthrough.clone())
                    .confined(&s.local, &self.toolhost_home),
            ),
            BackendKind::Sandbox => Arc::new(SandboxEnvironment::new(
                &s.sandbox,
                &s.cwd,
                s.env_passthrough.clone(),
            )?),
            BackendKind::Docker => Arc::new(DockerEnvironment::new(&s.docker, task, image)?),
            BackendKind::Ssh => Arc::new(SshEnvironment::new(&s.ssh)?),
            BackendKind::Singularity => {
                Arc::new(SingularityEnvironment::new(&s.singularity, image)?)
            }
            BackendKind::Modal => Arc::new(ModalEnvironment::new(&s.modal, image)?),
            BackendKind::Daytona => Arc::new(DaytonaEnvironment::new(&s.daytona, task, image)?),
        })
    }

    /// Kill `task`'s background processes and tear its environment down.
    pub fn cleanup_task(&self, task: &str) -> Result<(), EnvError> {
        self.processes.kill_all(Some(task), "cleanup");
        let env = lock(&self.envs).remove(task);
        match env {
            Some(env) => env.cleanup(),
            None => Ok(()),
        }
    }

    /// Tear down environments idle for longer than `idle` (tasks with running background
    /// processes are kept and marked used). Returns the tasks reaped.
    pub fn reap_idle(&self, idle: Duration) -> Vec<String> {
        let candidates: Vec<(String, Arc<TaskEnvironment>)> = lock(&self.envs)
            .iter()
            .filter(|(_, env)| env.last_used().elapsed() >= idle)
            .map(|(k, v)| (k.clone(), Arc::clone(v)))
            .collect();
        let mut reaped = Vec::new();
        for (task, env) in candidates {
            if self.processes.has_running(&task) {
                env.touch();
                continue;
            }
            {
                let mut envs = lock(&self.envs);
                // Used again meanwhile, or replaced: keep it.
                if env.last_used().elapsed() < idle
                    || !envs.get(&task).is_some_and(|e| Arc::ptr_eq(e, &env))
                {
                    continue;
                }
                envs.remove(&task);
            }
            // Teardown happens outside the lock.
            if let Err(err) = env.cleanup() {
                tracing::warn!(task, %err, "idle environment cleanup failed");
            }
            tracing::info!(task, "idle terminal environment reaped");
            reaped.push(task);
        }
        reaped
    }

    fn start_reaper(self: &Arc<Self>) {
        if self.reaper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let lifetime = Duration::from_secs(self.settings.lifetime_seconds.max(1));
        let interval = (lifetime / 2).clamp(Duration::from_millis(500), Duration::from_secs(60));
        let weak: Weak<Self> = Arc::downgrade(self);
        let stop = Arc::clone(&self.stop);
        let spawned = std::thread::Builder::new()
            .name("toolhost-env-reaper".into())
            .spawn(move || {
                loop {
                    {
                        let (flag, cond) = &*stop;
                        let guard = lock(flag);
                        let (guard, _) = cond
                            .wait_timeout_while(guard, interval, |stopped| !*stopped)
                            .unwrap_or_else(PoisonError::into_inner);
                        if *guard {
                            return;
                        }
                    }
                    match weak.upgrade() {
                        Some(manager) => {
                            manager.reap_idle(lifetime);
                        }
                        None => return,
                    }
                }
            });
        match spawned {
            Ok(handle) => *lock(&self.reaper) = Some(handle),
            Err(err) => tracing::warn!(%err, "idle environment reaper not started"),
        }
    }

    /// Kill every background process and clean up every environment (in parallel, at most
    /// ~15 s). Idempotent; later `get_or_create` calls fail.
    pub fn shutdown(&self) {
        if self.shut_down.swap(true, Ordering::SeqCst) {
            return;
        }
        {
            let (flag, cond) = &*self.stop;
            *lock(flag) = true;
            cond.notify_all();
        }
        if let Some(handle) = lock(&self.reaper).take()
            && handle.thread().id() != std::thread::current().id()
        {
            let _ = handle.join();
        }
        self.processes.kill_all(None, "shutdown");
        let envs: Vec<_> = lock(&self.envs).drain().collect();
        let (tx, rx) = std::sync::mpsc::channel();
        let count = envs.len();
        for (task, env) in envs {
            let tx = tx.clone();
            let _ = std::thread::Builder::new()
                .name("toolhost-env-cleanup".into())
                .spawn(move || {
                    if let Err(err) = env.cleanup() {
                        tracing::warn!(task, %err, "environment cleanup failed");
                    }
                    let _ = tx.send(());
                });
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        for _ in 0..count {
            let left = deadline.saturating_duration_since(Instant::now());
            if rx.recv_timeout(left).is_err() {
                tracing::warn!("environment cleanup still running after 15 s; giving up waiting");
                break;
            }
        }
    }
}

impl Drop for EnvironmentManager {
    fn drop(&mut self) {
        self.shutdown();
    }
}
