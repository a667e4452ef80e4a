//! Loading Python plugins: finding the pip-installed ones (entry points), starting each
//! enabled one in its Python plugin host, and joining what it declared to the registry
//! and hooks exactly as a native process plugin's declaration is joined.

use std::path::Path;
use std::sync::{Arc, Weak};

use serde_json::Value;
use tools_core::code_exec::ToolCaller;
use tools_core::{Home, Hooks, Registry, ToolContext, ToolSource};

use super::manifest::python_manifest;
use super::shim::{self, EntryPoint, Spec, Target};
use crate::plugins::discovery::{Candidate, Failure, PluginKind, PluginSource};
use crate::plugins::process::protocol::{Answer, Callback, WireError};
use crate::plugins::process::{CallbackHandler, Isolation, ProcessLimits, ProcessPlugin, plugin};
use crate::plugins::{PluginRecord, PluginRuntime, PluginSet, PluginsSettings, RuntimeLimits};

/// The type of the empty pipeline a plugin has until the host routes its dispatches.
struct NoPipeline;

impl ToolCaller for NoPipeline {
    fn call(&self, _: &str, _: &serde_json::Value, _: &ToolContext) -> String {
        String::new()
    }

    fn available(&self, _: &str) -> bool {
        false
    }
}

/// True when the entry points of the Python environment should be listed: Python
/// plugins can only load when named in `plugins.enabled`, so a host with nothing
/// enabled and no interpreter configured never starts Python at all.
fn wants_entry_points(config: &PluginsSettings) -> bool {
    !config.python.no_entry_points
        && (!config.enabled.is_empty() || config.python.interpreter.is_some())
}

/// The candidate for entry point `ep`.
fn entry_point_candidate(ep: &EntryPoint) -> Candidate {
    let description = if ep.summary.is_empty() {
        format!("pip package {}", ep.distribution)
    } else {
        ep.summary.clone()
    };
    let (manifest, warnings) = python_manifest(&ep.name, &ep.version, &description);
    let failure = crate::plugins::manifest::validate_plugin_name(&ep.name)
        .err()
        .map(|reason| Failure::new(format!("entry point name {:?} {reason}", ep.name)));
    Candidate {
        source: PluginSource::Pip,
        name: ep.name.clone(),
        manifest_path: None,
        library: Path::new(&ep.location).join(format!("{} ({})", ep.value, ep.distribution)),
        manifest: Some(manifest),
        built_for: None,
        failure,
        project_off: false,
        kind: PluginKind::Python,
        python: Some(Target::EntryPoint(ep.name.clone())),
        warnings,
    }
}

/// The `hermes_agent.plugins` entry points of the configured interpreter, as
/// candidates (none when not wanted; a listing failure is logged and yields none).
pub fn entry_point_candidates(home: &Home, config: &PluginsSettings) -> Vec<Candidate> {
    if !wants_entry_points(config) {
        return Vec::new();
    }
    let Some(interpreter) = config.python.resolve_interpreter(home.root()) else {
        tracing::debug!("no Python interpreter: pip plugins not listed");
        return Vec::new();
    };
    match shim::list_entry_points(&interpreter) {
        Ok(eps) => eps.iter().map(entry_point_candidate).collect(),
        Err(error) => {
            tracing::warn!(%error, "Python plugins: entry points not listed");
            Vec::new()
        }
    }
}

/// Hermes' name for where a plugin came from.
fn hermes_source(source: PluginSource) -> &'static str {
    match source {
        PluginSource::Project => "project",
        PluginSource::Bundled => "bundled",
        PluginSource::Pip => "entrypoint",
        PluginSource::User | PluginSource::Installed => "user",
    }
}

/// `ctx.dispatch_tool`: run a tool for the plugin through the host's whole dispatch
/// pipeline (`caller`: hooks — a policy plugin's `pre_tool_call` deny rule —, approval,
/// limits), as the model's own calls run; Hermes goes straight through its registry,
/// toolhost does not let a plugin step around the pipeline (docs/python-plugins.md). A
/// plugin may not dispatch its own tools. Until the host has a pipeline (while plugins
/// load) and after it shut down, the call is refused.
pub fn dispatch_callback(
    plugin: &str,
    registry: &Arc<Registry>,
    caller: Weak<dyn ToolCaller>,
) -> Arc<CallbackHandler> {
    let registry: Weak<Registry> = Arc::downgrade(registry);
    let owner = ToolSource::Plugin(plugin.to_string());
    Arc::new(move |callback: &Callback| {
        let Callback::DispatchTool {
            tool,
            args,
            task_id,
        } = callback;
        let refuse = |message: String| {
            Answer::Err(WireError {
                kind: "dispatch".into(),
                message,
                detail: None,
            })
        };
        let (Some(registry), Some(caller)) = (registry.upgrade(), caller.upgrade()) else {
            return refuse("the host is not running its dispatch pipeline".into());
        };
        if registry
            .get(tool)
            .is_some_and(|entry| entry.source == owner)
        {
            return refuse(format!(
                "dispatch_tool cannot call {tool}: it belongs to the calling plugin"
            ));
        }
        let args = if args.is_null() {
            Value::Object(Default::default())
        } else {
            args.clone()
        };
        let ctx = ToolContext::for_task(task_id.as_str());
        Answer::Ok(caller.call(tool, &args, &ctx))
    })
}

/// Route the `ctx.dispatch_tool` of every loaded Python plugin of `plugins` through
/// `caller`, the host's dispatch pipeline (held weakly: the pipeline holds the registry,
/// which holds the plugins).
pub fn route_dispatch(plugins: &PluginSet, registry: &Arc<Registry>, caller: &Arc<dyn ToolCaller>) {
    for record in plugins.records() {
        if record.kind != PluginKind::Python {
            continue;
        }
        if let Some(process) = record.runtime.as_ref().and_then(|r| r.process()) {
            process.set_callbacks(dispatch_callback(
                &record.name,
                registry,
                Arc::downgrade(caller),
            ));
        }
    }
}

/// Start the Python plugin of `candidate` and join it (see the module docs).
pub fn load_one(
    home: &Home,
    config: &PluginsSettings,
    limits: &ProcessLimits,
    candidate: &Candidate,
    registry: &Arc<Registry>,
    hooks: &Arc<Hooks>,
    mut record: PluginRecord,
) -> PluginRecord {
    record.isolation = Isolation::Process;
    let (Some(manifest), Some(target)) = (&candidate.manifest, &candidate.python) else {
        return record.fail("no manifest".into(), "no manifest".into());
    };
    let Some(interpreter) = config.python.resolve_interpreter(home.root()) else {
        let summary =
            "no Python interpreter: set plugins.python.interpreter or put python3 on PATH"
                .to_string();
        return record.fail(summary.clone(), summary);
    };
    let name = candidate.name.as_str();
    let mut spec = Spec::new(name, target, hermes_source(candidate.source));
    spec.version = manifest.version.to_string();
    spec.description = manifest.description.clone();
    spec.allow_tool_override = config.python.may_override(name);
    if let Some(profile) = &config.python.profile_name {
        spec.profile_name = profile.clone();
    }
    let hermes_home = match super::hermes_home::prepare(home) {
        Ok(dir) => dir,
        Err(err) => return record.fail(err.to_string(), err.to_string()),
    };
    let launch = spec.launch(&interpreter, &hermes_home);
    let (process, hello) = match ProcessPlugin::launch(name, launch, limits.clone()) {
        Ok(started) => started,
        Err(err) => return record.fail(err.to_string(), err.detail()),
    };
    let declaration = match plugin::parse_declaration(&hello) {
        Ok(declaration) => declaration,
        Err(err) => return record.fail(err.to_string(), err.detail()),
    };
    let extras = shim::extras(&hello);
    let mut manifest = manifest.clone();
    if spec.allow_tool_override {
        manifest.overrides = extras.overrides.clone();
    }
    let process = Arc::new(process);
    // Until the host routes it through its pipeline ([`route_dispatch`]).
    let no_pipeline: Weak<dyn ToolCaller> = Weak::<NoPipeline>::new();
    process.set_callbacks(dispatch_callback(name, registry, no_pipeline));
    let limits = RuntimeLimits::for_plugin(config, name);
    let runtime = PluginRuntime::new_process(name, process, limits, registry, hooks);
    record.unsupported = extras.unsupported;
    if !extras.python_version.is_empty() {
        record.built_for = Some(format!("Python {}", extras.python_version));
    }
    super::super::join_loaded(record, runtime, &declaration, &manifest, registry, hooks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_points_become_pip_candidates() {
        let ep = EntryPoint {
            name: "hermes-loop".into(),
            value: "hermes_loop_plugin:register".into(),
            distribution: "hermes-loop-plugin".into(),
            version: "1.0.2".into(),
            summary: "Loop".into(),
            location: "/venv/site-packages".into(),
        };
        let c = entry_point_candidate(&ep);
        assert_eq!(c.source, PluginSource::Pip);
        assert_eq!(c.kind, PluginKind::Python);
        assert_eq!(c.python, Some(Target::EntryPoint("hermes-loop".into())));
        let manifest = c.manifest.unwrap();
        assert_eq!(manifest.version.to_string(), "1.0.2");
        assert!(!manifest.enabled_by_default);
        assert!(c.failure.is_none());
        let bad = entry_point_candidate(&EntryPoint {
            name: "a b".into(),
            ..ep
        });
        assert!(bad.failure.is_some());
    }

    #[test]
    fn entry_points_are_listed_only_when_a_plugin_could_load() {
        let mut config = PluginsSettings::default();
        assert!(!wants_entry_points(&config));
        config.enabled.push("x".into());
        assert!(wants_entry_points(&config));
        config.python.no_entry_points = true;
        assert!(!wants_entry_points(&config));
    }
}
