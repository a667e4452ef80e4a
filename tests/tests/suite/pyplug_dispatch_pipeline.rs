//! A Python plugin's `ctx.dispatch_tool` runs the host's whole dispatch pipeline
//! (docs/python-plugins.md): a policy plugin's `pre_tool_call` deny rule — another plugin's or the calling
//! plugin's own, served by its process while it waits — applies to dispatched calls,
//! and nothing is dispatched before the host routes it through its pipeline. Real
//! `python3` plugin processes, written by the tests.

use std::sync::Arc;

use serde_json::Value;
use toolhost::dispatch::Dispatcher;
use toolhost::plugins::PluginStatus;
use tools_core::code_exec::ToolCaller;
use tools_core::{CallStatus, ToolContext};

use super::pyplug_python_plugins::{
    Loaded, add_host_tools, config_enabling, everything, load, write_plugin,
};

/// The dispatch pipeline as `ctx.dispatch_tool` reaches it (the host's `PipelineCaller`).
struct Pipeline(Dispatcher);

impl ToolCaller for Pipeline {
    fn call(&self, name: &str, args: &Value, ctx: &ToolContext) -> String {
        self.0.handle_function_call(name, &args.to_string(), ctx)
    }

    fn available(&self, name: &str) -> bool {
        self.0.registry().get(name).is_some()
    }
}

/// Route the Python plugins' `dispatch_tool` of `loaded` through its dispatcher, as the
/// host does at start; the caller must be kept (the plugins hold it weakly).
pub(super) fn route(loaded: &Loaded) -> Arc<dyn ToolCaller> {
    let (registry, _, set, dispatcher) = loaded;
    let caller: Arc<dyn ToolCaller> = Arc::new(Pipeline(dispatcher.clone()));
    toolhost::plugins::python::load::route_dispatch(set, registry, &caller);
    caller
}

#[test]
fn dispatch_tool_runs_a_host_tool_and_not_its_own() {
    let e = everything();
    let ctx = ToolContext::default();
    let out = e.dispatcher.call(
        "py_dispatch",
        r#"{"tool":"host_echo","args":{"n":1}}"#,
        &ctx,
    );
    assert_eq!(out.status, CallStatus::Ok, "{}", out.text);
    assert!(out.text.contains(r#""host":"host_echo""#), "{}", out.text);
    let own = e
        .dispatcher
        .call("py_dispatch", r#"{"tool":"py_echo"}"#, &ctx);
    assert_eq!(own.status, CallStatus::Error, "{}", own.text);
    assert!(
        own.text.contains("belongs to the calling plugin"),
        "{}",
        own.text
    );
}

#[test]
fn dispatch_tool_runs_the_calling_plugins_own_deny_hook() {
    // The dispatched call goes through the pipeline, whose pre_tool_call hook is the
    // calling plugin's own: its process serves that hook while it waits for the answer.
    let e = everything();
    let out = e.dispatcher.call(
        "py_dispatch",
        r#"{"tool":"host_secret","args":{}}"#,
        &ToolContext::default(),
    );
    assert!(out.text.contains("no secrets for you"), "{}", out.text);
    assert!(
        !out.text.contains(r#""host":"host_secret""#),
        "{}",
        out.text
    );
}

/// A policy plugin denying `host_secret`, and nothing else.
const POLICY: &str = r#"
def pre(tool_name, args, **kw):
    if tool_name == "host_secret":
        return {"action": "block", "message": "policy: host_secret is denied"}
    return None

def register(ctx):
    ctx.register_hook("pre_tool_call", pre)
"#;

/// A plugin whose one tool dispatches whatever it is asked to.
const DISPATCHER: &str = r#"
def register(ctx):
    def dispatch(args, **kw):
        return ctx.dispatch_tool(args["tool"], args.get("args", {}), task_id=kw.get("task_id"))
    ctx.register_tool(name="relay", toolset="relay",
                      schema={"name": "relay", "description": "relay",
                              "parameters": {"type": "object", "properties": {}}},
                      handler=dispatch)
"#;

#[test]
fn dispatch_tool_cannot_step_around_another_plugins_deny_hook() {
    let dir = tempfile::tempdir().unwrap();
    write_plugin(dir.path(), "policy", POLICY);
    write_plugin(dir.path(), "relay", DISPATCHER);
    let loaded = load(dir.path(), &config_enabling(&["policy", "relay"]));
    let _pipeline = route(&loaded);
    let (registry, _hooks, set, dispatcher) = &loaded;
    for name in ["policy", "relay"] {
        let record = set.get(name).unwrap();
        assert_eq!(record.status, PluginStatus::Loaded, "{record:?}");
    }
    add_host_tools(registry);
    let ctx = ToolContext::default();
    let denied = dispatcher.call("relay", r#"{"tool":"host_secret"}"#, &ctx);
    assert!(
        denied.text.contains("policy: host_secret is denied"),
        "{}",
        denied.text
    );
    assert!(
        !denied.text.contains(r#""host":"host_secret""#),
        "{}",
        denied.text
    );
    let allowed = dispatcher.call("relay", r#"{"tool":"host_echo","args":{"n":2}}"#, &ctx);
    assert!(
        allowed.text.contains(r#""host":"host_echo""#),
        "{}",
        allowed.text
    );
}

#[test]
fn dispatch_tool_is_refused_until_the_host_routes_it() {
    let dir = tempfile::tempdir().unwrap();
    write_plugin(dir.path(), "relay", DISPATCHER);
    let (registry, _hooks, _set, dispatcher) = load(dir.path(), &config_enabling(&["relay"]));
    add_host_tools(&registry);
    let out = dispatcher.call("relay", r#"{"tool":"host_echo"}"#, &ToolContext::default());
    assert!(
        out.text.contains("not running its dispatch pipeline"),
        "{}",
        out.text
    );
    assert!(!out.text.contains(r#""host":"host_echo""#), "{}", out.text);
}
