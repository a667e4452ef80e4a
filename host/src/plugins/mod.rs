//! Native plugins: discovery, checks, loading, and joining the registry and hooks.
//!
//! [`load_plugins`] is the whole pipeline, run by `Toolhost::start` after the core tools:
//! scan the four sources ([`discovery`]), read each manifest and check each library
//! without loading it (manifest, ELF header and segment bounds, embedded plugin-api
//! version, semver), let later sources win name collisions, apply `plugins.disabled` /
//! `plugins.enabled`, dedupe by canonical path, then load ([`loader`]) and join
//! ([`adapter`]). Nothing here fails as a whole: every plugin ends up as a
//! [`PluginRecord`] that is loaded, disabled or failed, with a one-line reason and the
//! full detail for `toolhost plugins doctor`.

pub mod adapter;
pub mod bundle;
pub mod call;
pub mod config;
pub mod control;
pub mod discovery;
pub mod elf;
#[cfg(all(
    test,
    target_os = "linux",
    target_pointer_width = "64",
    target_endian = "little"
))]
mod elf_prop_tests;
pub mod executor;
pub mod fault;
pub mod install;
pub mod loader;
mod logger;
pub mod manifest;
#[cfg(test)]
mod manifest_prop_tests;
pub mod process;
pub mod python;
pub mod reload;
pub mod runtime;
pub mod safe_mode;
pub mod scaffold;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use tools_core::{Home, Hooks, Registry};

pub use adapter::RefusedTool;
pub use config::PluginsSettings;
pub use discovery::{Candidate, PluginKind, PluginSource, Roots};
pub use fault::PluginFault;
pub use process::Isolation;
use process::{ProcessLimits, ProcessPlugin};
pub use runtime::{PluginRuntime, RuntimeLimits};

/// Whether a plugin is in service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginStatus {
    /// Loaded; its tools and hooks are registered.
    Loaded,
    /// Not loaded on purpose (config, shadowed, off by default, disabled at run time).
    Disabled,
    /// Could not be loaded.
    Failed,
}

impl std::fmt::Display for PluginStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            PluginStatus::Loaded => "loaded",
            PluginStatus::Disabled => "disabled",
            PluginStatus::Failed => "failed",
        })
    }
}

/// Everything known about one discovered plugin (the `plugins list --json` entries).
#[derive(Clone, Debug, Serialize)]
pub struct PluginRecord {
    /// The plugin's name (the directory or file name when its manifest is unreadable).
    pub name: String,
    /// Its version, from the manifest.
    pub version: Option<String>,
    /// Its description, from the manifest.
    pub description: Option<String>,
    /// Where it was found.
    pub source: PluginSource,
    /// Native library or Python plugin.
    pub kind: PluginKind,
    /// The library file.
    pub path: PathBuf,
    /// `plugin.toml` (absent for self-describing libraries).
    pub manifest: Option<PathBuf>,
    /// The manifest's plugin-api requirement.
    pub api: Option<String>,
    /// The plugin-api version the library was built against, when it says.
    pub built_for: Option<String>,
    /// Loaded, disabled or failed.
    pub status: PluginStatus,
    /// Why it is disabled or failed (one line).
    pub reason: Option<String>,
    /// Registered tools.
    pub tools: Vec<String>,
    /// Registered hook kinds.
    pub hooks: Vec<String>,
    /// Declared tools the host refused.
    pub refused_tools: Vec<RefusedTool>,
    /// Core tools the manifest may replace.
    pub overrides: Vec<String>,
    /// Panics caught so far in this process.
    pub panics: u32,
    /// Where its code runs (`in-process` or `process`).
    pub isolation: Isolation,
    /// The plugin process, while one runs (process isolation only).
    pub pid: Option<u32>,
    /// Plugin processes started after the first.
    pub restarts: u32,
    /// Plugin processes that died.
    pub crashes: u32,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
    /// What a Python plugin registered that toolhost cannot serve.
    pub unsupported: Vec<String>,
    /// The full failure report (abi_stable's layout dump, loader messages).
    #[serde(skip)]
    pub detail: Option<String>,
    /// The live plugin, when loaded.
    #[serde(skip)]
    pub runtime: Option<Arc<PluginRuntime>>,
}

impl PluginRecord {
    fn from_candidate(candidate: &Candidate) -> Self {
        let manifest = candidate.manifest.as_ref();
        PluginRecord {
            name: candidate.name.clone(),
            version: manifest.map(|m| m.version.to_string()),
            description: manifest
                .map(|m| m.description.clone())
                .filter(|d| !d.is_empty()),
            source: candidate.source,
            kind: candidate.kind,
            path: candidate.library.clone(),
            manifest: candidate.manifest_path.clone(),
            api: manifest.map(|m| m.api.to_string()),
            built_for: candidate.built_for.clone(),
            status: PluginStatus::Disabled,
            reason: None,
            tools: Vec::new(),
            hooks: Vec::new(),
            refused_tools: Vec::new(),
            overrides: manifest.map(|m| m.overrides.clone()).unwrap_or_default(),
            panics: 0,
            isolation: Isolation::InProcess,
            pid: None,
            restarts: 0,
            crashes: 0,
            warnings: manifest
                .map(|m| {
                    m.unknown_keys
                        .iter()
                        .map(|k| format!("unknown manifest key `{k}` ignored"))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
                .into_iter()
                .chain(candidate.warnings.iter().cloned())
                .collect(),
            unsupported: Vec::new(),
            detail: None,
            runtime: None,
        }
    }

    fn fail(mut self, summary: String, detail: String) -> Self {
        self.status = PluginStatus::Failed;
        self.reason = Some(summary);
        self.detail = Some(detail);
        self
    }

    fn disable(mut self, reason: String) -> Self {
        self.status = PluginStatus::Disabled;
        self.reason = Some(reason);
        self
    }

    /// This record with its run-time state (panics, disabled after panics) applied.
    pub fn current(&self) -> PluginRecord {
        let mut record = self.clone();
        if let Some(runtime) = &self.runtime {
            record.panics = runtime.panics();
            if let Some(process) = runtime.process() {
                record.pid = process.pid();
                record.restarts = process.restarts();
                record.crashes = process.crashes();
            }
            if let Some(rejoined) = runtime.rejoined() {
                record.tools = rejoined.tools;
                record.hooks = rejoined.hooks;
                record.refused_tools = rejoined.refused;
                record.unsupported = rejoined.unsupported;
            }
            if let Some(reason) = runtime.disabled_reason() {
                record.status = PluginStatus::Disabled;
                record.reason = Some(reason);
            }
        }
        record
    }

    /// `plugin NAME (SOURCE, PATH): REASON` — the one line printed for a failure.
    pub fn failure_line(&self) -> String {
        format!(
            "plugin {} ({}, {}): {}",
            self.name,
            self.source,
            self.path.display(),
            self.reason.as_deref().unwrap_or("failed")
        )
    }
}

/// The outcome of discovery: one record per plugin found, in scan order.
#[derive(Clone, Debug, Default)]
pub struct PluginSet {
    records: Vec<PluginRecord>,
    roots: Roots,
}

impl PluginSet {
    /// Every record with its live state, in scan order (lowest precedence first).
    pub fn records(&self) -> Vec<PluginRecord> {
        self.records.iter().map(PluginRecord::current).collect()
    }

    /// The plugins that failed to load.
    pub fn failures(&self) -> Vec<PluginRecord> {
        self.records()
            .into_iter()
            .filter(|r| r.status == PluginStatus::Failed)
            .collect()
    }

    /// The record for `name`: the loaded one if any, else the last one found.
    pub fn get(&self, name: &str) -> Option<PluginRecord> {
        let records = self.records();
        let named: Vec<_> = records.into_iter().filter(|r| r.name == name).collect();
        named
            .iter()
            .find(|r| r.status == PluginStatus::Loaded)
            .or(named.last())
            .cloned()
    }

    /// The directories that were scanned.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }
}

/// What the host tells a plugin at registration.
fn host_info(home: &Home, config: &PluginsSettings, name: &str, library: &Path) -> String {
    serde_json::json!({
        "plugin": name,
        "host_version": env!("CARGO_PKG_VERSION"),
        "api_version": toolhost_plugin_api::API_VERSION,
        "home": home.root(),
        "plugin_dir": library.parent().unwrap_or(Path::new("")),
        "config": config.settings_json(name),
    })
    .to_string()
}

/// The process limits from `[plugins]`: the memory cap, crash limit, and the kernel
/// floor (`plugins.confine`), prepared once for every plugin process.
fn process_limits(home: &Home, config: &PluginsSettings) -> ProcessLimits {
    ProcessLimits {
        memory_bytes: config.memory_limit_mb.saturating_mul(1024 * 1024),
        max_crashes: config.max_crashes,
        startup: std::time::Duration::from_secs(30),
        confinement: plugin_confinement(home, config),
    }
}

/// The Landlock/seccomp floor of plugin processes, when `plugins.confine` asks for one.
fn plugin_confinement(
    home: &Home,
    config: &PluginsSettings,
) -> Option<Arc<tools_core::environments::confine::Confinement>> {
    use tools_core::environments::confine::{ConfineMode, Confinement, WritableRoots};
    if config.confine == ConfineMode::Off {
        return None;
    }
    let workdir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let user_home = std::env::var_os("HOME").map(PathBuf::from);
    let extra = config.resolved_writable(home.root());
    let roots = WritableRoots::for_mode(
        config.confine,
        &workdir,
        user_home.as_deref(),
        home.root(),
        &extra,
    );
    match Confinement::prepare(&roots) {
        Ok(confinement) => Some(Arc::new(confinement)),
        Err(error) => {
            tracing::error!(%error, "plugins.confine: plugin processes cannot be confined");
            None
        }
    }
}

/// Discover, check, load and join every plugin in `roots` (see the module docs).
pub fn load_plugins(
    home: &Home,
    config: &PluginsSettings,
    roots: &Roots,
    registry: &Arc<Registry>,
    hooks: &Arc<Hooks>,
) -> PluginSet {
    let limits = process_limits(home, config);
    let safe_mode = safe_mode::active();
    let mut candidates: Vec<Candidate> = discovery::scan(roots)
        .into_iter()
        .map(|(source, location, off)| discovery::inspect(source, &location, off))
        .collect();
    if safe_mode {
        // Listing pip entry points runs the Python environment: not in safe mode.
        safe_mode::announce();
    } else {
        candidates.extend(python::load::entry_point_candidates(home, config));
    }

    // Later sources win: remember, per name, the last candidate with a readable manifest.
    let mut winners: HashMap<&str, usize> = HashMap::new();
    let mut shadowed_by: Vec<Option<usize>> = vec![None; candidates.len()];
    for (i, candidate) in candidates.iter().enumerate() {
        if candidate.project_off || candidate.manifest.is_none() {
            continue;
        }
        if let Some(previous) = winners.insert(&candidate.name, i) {
            shadowed_by[previous] = Some(i);
        }
    }

    let mut by_path: HashMap<PathBuf, String> = HashMap::new();
    let mut records = Vec::with_capacity(candidates.len());
    for (i, candidate) in candidates.iter().enumerate() {
        let record = PluginRecord::from_candidate(candidate);
        let record = if safe_mode && safe_mode::skips(candidate.source) {
            record.disable(safe_mode::SKIPPED_REASON.into())
        } else if candidate.project_off {
            record.disable(format!(
                "project plugins are off (set {}=1 or plugins.project = true)",
                discovery::PROJECT_ENV
            ))
        } else if let Some(winner) = shadowed_by[i] {
            let w = &candidates[winner];
            record.disable(format!(
                "shadowed by the {} plugin at {}",
                w.source,
                w.library.display()
            ))
        } else if let Some(failure) = &candidate.failure {
            record.fail(failure.summary.clone(), failure.detail.clone())
        } else if config.is_disabled(&candidate.name) {
            record.disable("disabled in config (plugins.disabled)".into())
        } else if candidate
            .manifest
            .as_ref()
            .is_some_and(|m| !m.enabled_by_default)
            && !config.is_enabled(&candidate.name)
        {
            record.disable(format!(
                "off by default; turn it on with `toolhost plugins enable {}`",
                candidate.name
            ))
        } else if candidate.kind == PluginKind::Python {
            python::load::load_one(home, config, &limits, candidate, registry, hooks, record)
        } else {
            load_one(
                home,
                config,
                &limits,
                candidate,
                registry,
                hooks,
                &mut by_path,
                record,
            )
        };
        for warning in &record.warnings {
            tracing::warn!(plugin = %record.name, "{warning}");
        }
        records.push(record);
    }
    PluginSet {
        records,
        roots: roots.clone(),
    }
}

#[allow(clippy::too_many_arguments)]
fn load_one(
    home: &Home,
    config: &PluginsSettings,
    proc_limits: &ProcessLimits,
    candidate: &Candidate,
    registry: &Arc<Registry>,
    hooks: &Arc<Hooks>,
    by_path: &mut HashMap<PathBuf, String>,
    mut record: PluginRecord,
) -> PluginRecord {
    let Some(manifest) = &candidate.manifest else {
        return record.fail("no manifest".into(), "no manifest".into());
    };
    let canonical = match candidate.library.canonicalize() {
        Ok(path) => path,
        Err(e) => {
            let summary = format!("cannot resolve {}: {e}", candidate.library.display());
            return record.fail(summary.clone(), summary);
        }
    };
    if let Some(other) = by_path.get(&canonical) {
        let summary = format!("the same library file is already loaded as plugin {other}");
        return record.fail(summary.clone(), summary);
    }
    by_path.insert(canonical.clone(), candidate.name.clone());
    let info = host_info(home, config, &candidate.name, &candidate.library);
    let limits = RuntimeLimits::for_plugin(config, &candidate.name);
    record.isolation = process::choose(
        config,
        &candidate.name,
        candidate.source,
        manifest.isolation,
    );
    let (runtime, declaration) = match record.isolation {
        Isolation::InProcess => match loader::load(&canonical, &candidate.name, &info) {
            Ok(library) => (
                PluginRuntime::new(
                    &candidate.name,
                    Arc::clone(&library.object),
                    limits,
                    registry,
                    hooks,
                ),
                library.declaration.clone(),
            ),
            Err(err) => return record.fail(err.to_string(), err.detail()),
        },
        Isolation::Process => {
            match ProcessPlugin::start(&candidate.name, &canonical, &info, proc_limits.clone()) {
                Ok((process, declaration)) => (
                    PluginRuntime::new_process(
                        &candidate.name,
                        Arc::new(process),
                        limits,
                        registry,
                        hooks,
                    ),
                    declaration,
                ),
                Err(err) => return record.fail(err.to_string(), err.detail()),
            }
        }
    };
    join_loaded(record, runtime, &declaration, manifest, registry, hooks)
}

/// Join a started plugin's declaration to the registry and hooks; the loaded record.
fn join_loaded(
    mut record: PluginRecord,
    runtime: Arc<PluginRuntime>,
    declaration: &adapter::Declaration,
    manifest: &manifest::Manifest,
    registry: &Arc<Registry>,
    hooks: &Arc<Hooks>,
) -> PluginRecord {
    runtime.set_manifest(manifest.clone());
    let joined = adapter::join(&runtime, declaration, manifest, registry, hooks);
    for refused in &joined.refused {
        tracing::warn!(plugin = %record.name, tool = %refused.name, "tool refused: {}", refused.reason);
    }
    record.status = PluginStatus::Loaded;
    record.tools = joined.tools;
    record.hooks = joined.hooks;
    record.refused_tools = joined.refused;
    record.warnings.extend(joined.warnings);
    record.runtime = Some(runtime);
    tracing::debug!(plugin = %record.name, source = %record.source, kind = %record.kind, tools = record.tools.len(), "plugin loaded");
    record
}
