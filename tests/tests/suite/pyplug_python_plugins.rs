//! Hermes-style Python plugins written by the tests, run by the real `python3` through
//! the Python plugin host: tools (sync, async, raising, unavailable, dispatching), every
//! hook toolhost has, what does not map, a failing `register`, an import error, a slow
//! hook and a slow tool (killed at their timeout), cancellation, and reload.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::dispatch::Dispatcher;
use toolhost::plugins::{
    Isolation, PluginKind, PluginSet, PluginSource, PluginStatus, PluginsSettings,
};
use tools_core::code_exec::ToolCaller;
use tools_core::hooks::{ApprovalEvent, TerminalOutput};
use tools_core::{CallStatus, Hooks, Registry, ToolContext, ToolEntry, ToolHandler};

/// The `python3` the tests run plugins with (a failure naming it when there is none).
fn python3() -> PathBuf {
    let config = toolhost::plugins::python::PythonSettings::default();
    config
        .resolve_interpreter(Path::new("/"))
        .expect("the Python plugin tests need python3 on PATH")
}

/// Write the directory plugin `name` with `plugin.yaml` and `__init__.py`.
pub(super) fn write_plugin(home: &Path, name: &str, init: &str) -> PathBuf {
    let dir = home.join("plugins").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("plugin.yaml"),
        format!("name: {name}\nversion: \"1.2\"\ndescription: test plugin {name}\n"),
    )
    .unwrap();
    std::fs::write(dir.join("__init__.py"), init).unwrap();
    dir
}

pub(super) fn config_enabling(names: &[&str]) -> PluginsSettings {
    PluginsSettings {
        enabled: names.iter().map(|n| n.to_string()).collect(),
        timeout_secs: 5.0,
        python: toolhost::plugins::python::PythonSettings {
            interpreter: Some(python3()),
            no_entry_points: true,
            ..Default::default()
        },
        ..PluginsSettings::default()
    }
}

pub(super) type Loaded = (Arc<Registry>, Arc<Hooks>, PluginSet, Dispatcher);

pub(super) fn load(home: &Path, config: &PluginsSettings) -> Loaded {
    super::plugin_runtime::load_user_plugins(home, config)
}

/// A plugin using every part of `ctx` toolhost serves, and some it does not.
const EVERYTHING: &str = r#"
import asyncio, copy, json, os, time

MARKER = os.environ.get("PYPLUG_MARKER")
if MARKER:
    with open(MARKER, "w") as f:
        f.write(str(os.getpid()))
print("import-time print goes to stderr")

def echo(args, **kw):
    return json.dumps({"text": args.get("text", ""), "task_id": kw.get("task_id")})

async def async_echo(args, **kw):
    await asyncio.sleep(0)
    return json.dumps({"async": args.get("text", "")})

def raises(args, **kw):
    raise ValueError("bad input")

def plain(args, **kw):
    return "not json at all"

def wrong_type(args, **kw):
    return 42

def slow(args, **kw):
    time.sleep(float(args.get("seconds", 30)))
    return json.dumps({"slept": True})

def make_dispatch(ctx):
    def dispatch(args, **kw):
        return ctx.dispatch_tool(args["tool"], args.get("args", {}), task_id=kw.get("task_id"))
    return dispatch

def pre(tool_name, args, **kw):
    if tool_name == "host_secret":
        return {"action": "block", "message": "no secrets for you"}
    if tool_name == "host_risky":
        return {"action": "approve", "message": "risky", "rule_key": "r"}
    if args.get("text") == "rewrite-me":
        args["text"] = "rewritten"
    return None

def post(tool_name, result, status, **kw):
    log = os.environ.get("PYPLUG_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"hook": "post", "tool": tool_name, "status": status,
                                "error_type": kw.get("error_type")}) + "\n")

def transform_result(tool_name, result, **kw):
    if tool_name == "py_echo" and '"transform"' in result:
        return json.dumps({"transformed": True})
    return None

def transform_terminal(command, output, returncode, **kw):
    if command.startswith("noisy"):
        return "compacted (%d chars, rc %d)" % (len(output), returncode)
    return None

def approval(command, pattern_key, pattern_keys, surface, **kw):
    log = os.environ.get("PYPLUG_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"hook": "approval", "command": command, "key": pattern_key,
                                "choice": kw.get("choice")}) + "\n")

def register(ctx):
    schema = lambda name: {"name": name, "description": "test " + name,
                           "parameters": {"type": "object", "properties": {}}}
    ctx.register_tool(name="py_echo", toolset="pyt", schema=schema("py_echo"), handler=echo,
                      emoji="E")
    ctx.register_tool(name="py_async", toolset="pyt", schema=schema("py_async"),
                      handler=async_echo, is_async=True)
    ctx.register_tool(name="py_raises", toolset="pyt", schema=schema("py_raises"), handler=raises)
    ctx.register_tool(name="py_plain", toolset="pyt", schema=schema("py_plain"), handler=plain)
    ctx.register_tool(name="py_wrong", toolset="pyt", schema=schema("py_wrong"), handler=wrong_type)
    ctx.register_tool(name="py_slow", toolset="pyt", schema=schema("py_slow"), handler=slow)
    ctx.register_tool(name="py_off", toolset="pyt", schema=schema("py_off"), handler=echo,
                      check_fn=lambda: False)
    ctx.register_tool(name="py_dispatch", toolset="pyt", schema=schema("py_dispatch"),
                      handler=make_dispatch(ctx))
    ctx.register_hook("pre_tool_call", pre)
    ctx.register_hook("post_tool_call", post)
    ctx.register_hook("transform_tool_result", transform_result)
    ctx.register_hook("transform_terminal_output", transform_terminal)
    ctx.register_hook("pre_approval_request", approval)
    ctx.register_hook("post_approval_response", approval)
    ctx.register_hook("on_session_start", lambda **kw: None)
    ctx.register_middleware("llm_request", lambda **kw: None)
    ctx.register_command("everything", handler=lambda raw: "hi")
"#;

/// Host tools the plugin's hooks and `dispatch_tool` act on.
pub(super) fn add_host_tools(registry: &Registry) {
    for name in ["host_secret", "host_risky", "host_echo"] {
        let entry = ToolEntry::builder(name, "host")
            .description("host tool")
            .handler(ToolHandler::sync(move |args, _ctx| {
                Ok(json!({"host": name, "args": args}))
            }))
            .build()
            .unwrap();
        registry.register(entry);
    }
}

pub(super) struct Everything {
    pub(super) _dir: tempfile::TempDir,
    pub(super) log: PathBuf,
    pub(super) marker: PathBuf,
    pub(super) registry: Arc<Registry>,
    pub(super) hooks: Arc<Hooks>,
    pub(super) set: PluginSet,
    pub(super) dispatcher: Dispatcher,
    pub(super) _pipeline: Arc<dyn ToolCaller>,
}

/// The plugin `everything`, loaded, writing its hook log and import marker into this
/// test's directory.
pub(super) fn everything() -> Everything {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hooks.jsonl");
    let marker = dir.path().join("marker");
    // Tests run concurrently: each plugin copy gets its own paths in its source rather
    // than through process-wide environment variables.
    let init = EVERYTHING
        .replace(
            r#"os.environ.get("PYPLUG_MARKER")"#,
            &format!("{:?}", marker.display().to_string()),
        )
        .replace(
            r#"os.environ.get("PYPLUG_LOG")"#,
            &format!("{:?}", log.display().to_string()),
        );
    write_plugin(dir.path(), "everything", &init);
    let loaded = load(dir.path(), &config_enabling(&["everything"]));
    let pipeline = super::pyplug_dispatch_pipeline::route(&loaded);
    let (registry, hooks, set, dispatcher) = loaded;
    add_host_tools(&registry);
    Everything {
        _pipeline: pipeline,
        _dir: dir,
        log,
        marker,
        registry,
        hooks,
        set,
        dispatcher,
    }
}

fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_directory_plugin_loads_in_its_own_python_process() {
    let e = everything();
    let record = e.set.get("everything").unwrap();
    assert_eq!(record.status, PluginStatus::Loaded, "{record:?}");
    assert_eq!(record.kind, PluginKind::Python);
    assert_eq!(record.source, PluginSource::User);
    assert_eq!(record.isolation, Isolation::Process);
    assert_eq!(record.version.as_deref(), Some("1.2.0"));
    let pid: u32 = std::fs::read_to_string(&e.marker).unwrap().parse().unwrap();
    assert_ne!(
        pid,
        std::process::id(),
        "import side effects ran in the host"
    );
    assert_eq!(record.pid, Some(pid));
    assert_eq!(
        record.tools,
        [
            "py_echo",
            "py_async",
            "py_raises",
            "py_plain",
            "py_wrong",
            "py_slow",
            "py_off",
            "py_dispatch"
        ]
    );
    let entry = e.registry.get("py_echo").unwrap();
    assert_eq!(entry.toolset, "pyt");
    assert_eq!(entry.description, "test py_echo");
}

#[test]
fn what_does_not_map_is_listed_as_unsupported() {
    let e = everything();
    let record = e.set.get("everything").unwrap();
    assert_eq!(
        record.unsupported,
        [
            "hook on_session_start (toolhost has no such event)",
            "middleware llm_request",
            "register_command(everything)"
        ]
    );
    assert_eq!(
        record.hooks,
        [
            "pre_tool_call",
            "post_tool_call",
            "transform_tool_result",
            "transform_terminal_output",
            "pre_approval_request",
            "post_approval_response"
        ]
    );
}

#[test]
fn tool_results_follow_the_hermes_contract() {
    let e = everything();
    let ctx = ToolContext::for_task("t1");
    let cases: [(&str, &str, CallStatus, &str); 5] = [
        (
            "py_echo",
            r#"{"text":"hi"}"#,
            CallStatus::Ok,
            r#""task_id":"t1""#,
        ),
        (
            "py_async",
            r#"{"text":"a"}"#,
            CallStatus::Ok,
            r#""async":"a""#,
        ),
        (
            "py_raises",
            "{}",
            CallStatus::Error,
            "[TOOL_ERROR] Tool execution failed: ValueError: bad input",
        ),
        ("py_plain", "{}", CallStatus::Ok, "not json at all"),
        (
            "py_wrong",
            "{}",
            CallStatus::Error,
            "Tool handler returned unsupported result type: int",
        ),
    ];
    for (tool, args, status, needle) in cases {
        let out = e.dispatcher.call(tool, args, &ctx);
        assert_eq!(out.status, status, "{tool}: {}", out.text);
        assert!(out.text.contains(needle), "{tool}: {}", out.text);
    }
}

#[test]
fn a_false_check_fn_makes_the_tool_unavailable() {
    let e = everything();
    let entry = e.registry.get("py_off").unwrap();
    let availability = entry.check.as_ref().unwrap().evaluate();
    assert!(!availability.available);
    assert!(
        availability
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("check_fn of py_off returned False")),
        "{availability:?}"
    );
    assert!(e.registry.get("py_echo").unwrap().check.is_none());
}

#[test]
fn pre_tool_call_blocks_refuses_approval_and_rewrites_by_mutation() {
    let e = everything();
    let ctx = ToolContext::default();
    let blocked = e.dispatcher.call("host_secret", "{}", &ctx);
    assert_eq!(blocked.status, CallStatus::Blocked, "{}", blocked.text);
    assert!(
        blocked.text.contains("no secrets for you"),
        "{}",
        blocked.text
    );
    let risky = e.dispatcher.call("host_risky", "{}", &ctx);
    assert_eq!(risky.status, CallStatus::Blocked, "{}", risky.text);
    assert!(risky.text.contains("requires approval"), "{}", risky.text);
    let rewritten = e
        .dispatcher
        .call("host_echo", r#"{"text":"rewrite-me"}"#, &ctx);
    assert_eq!(rewritten.status, CallStatus::Ok, "{}", rewritten.text);
    assert!(
        rewritten.text.contains(r#""text":"rewritten""#),
        "{}",
        rewritten.text
    );
    let untouched = e.dispatcher.call("host_echo", r#"{"text":"keep"}"#, &ctx);
    assert!(
        untouched.text.contains(r#""text":"keep""#),
        "{}",
        untouched.text
    );
}

#[test]
fn post_tool_call_sees_status_and_error_type() {
    let e = everything();
    let ctx = ToolContext::default();
    e.dispatcher.call("host_echo", "{}", &ctx);
    e.dispatcher.call("host_secret", "{}", &ctx);
    let posts: Vec<Value> = log_lines(&e.log)
        .into_iter()
        .filter(|l| l["hook"] == "post")
        .collect();
    assert_eq!(
        posts,
        [
            json!({"hook": "post", "tool": "host_echo", "status": "ok", "error_type": null}),
            json!({"hook": "post", "tool": "host_secret", "status": "blocked", "error_type": "plugin_block"}),
        ]
    );
}

#[test]
fn transform_tool_result_replaces_the_result() {
    let e = everything();
    let out = e.dispatcher.call(
        "py_echo",
        r#"{"text":"transform"}"#,
        &ToolContext::default(),
    );
    let result: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(result, json!({"transformed": true}));
}

#[test]
fn transform_terminal_output_replaces_the_output() {
    let e = everything();
    let event = |command| TerminalOutput {
        command,
        output: "line\n",
        exit_code: 2,
        task_id: "",
        env_type: "local",
    };
    assert_eq!(
        e.hooks
            .run_transform_terminal_output(&event("noisy build"))
            .as_deref(),
        Some("compacted (5 chars, rc 2)")
    );
    assert_eq!(e.hooks.run_transform_terminal_output(&event("ls")), None);
}

#[test]
fn approval_observers_see_the_request_and_the_answer() {
    let e = everything();
    let keys = vec!["fs.rm".to_string()];
    let mut event = ApprovalEvent {
        command: "rm -rf build",
        description: "recursive delete",
        rule_keys: &keys,
        session_key: "s",
        surface: "cli",
        tool_call_id: "c1",
        choice: None,
    };
    e.hooks.run_pre_approval_request(&event);
    event.choice = Some("once");
    e.hooks.run_post_approval_response(&event);
    let seen: Vec<Value> = log_lines(&e.log)
        .into_iter()
        .filter(|l| l["hook"] == "approval")
        .collect();
    assert_eq!(
        seen,
        [
            json!({"hook": "approval", "command": "rm -rf build", "key": "fs.rm", "choice": null}),
            json!({"hook": "approval", "command": "rm -rf build", "key": "fs.rm", "choice": "once"}),
        ]
    );
}

#[test]
fn a_slow_tool_is_killed_at_its_timeout_and_the_plugin_comes_back() {
    let e = everything();
    let ctx = ToolContext::default();
    let started = Instant::now();
    let out = e.dispatcher.call("py_slow", r#"{"seconds":60}"#, &ctx);
    assert_eq!(out.status, CallStatus::Error, "{}", out.text);
    assert!(out.text.contains("timed out after 5s"), "{}", out.text);
    assert!(started.elapsed() < Duration::from_secs(30));
    let again = e.dispatcher.call("py_echo", r#"{"text":"back"}"#, &ctx);
    assert_eq!(again.status, CallStatus::Ok, "{}", again.text);
    let record = e.set.get("everything").unwrap();
    assert_eq!(record.restarts, 1, "{record:?}");
    assert_eq!(record.crashes, 0, "{record:?}");
}

#[test]
fn cancelling_a_call_kills_the_plugin_process() {
    let e = everything();
    let ctx = ToolContext::default();
    let cancel = ctx.cancel.clone();
    let first_pid = e.set.get("everything").unwrap().pid;
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        cancel.cancel();
    });
    let started = Instant::now();
    let out = e.dispatcher.call("py_slow", r#"{"seconds":60}"#, &ctx);
    canceller.join().unwrap();
    assert_eq!(out.status, CallStatus::Error, "{}", out.text);
    assert!(out.text.contains("cancelled"), "{}", out.text);
    assert!(
        // The call would take 60 s; a loaded CI machine may take a few to kill and reap.
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // The process that ran the call is gone (killed and reaped); the post_tool_call
    // hook that ran after it has already started a new one.
    let first = first_pid.expect("a running plugin process");
    assert!(
        !Path::new(&format!("/proc/{first}")).exists(),
        "the cancelled call's process {first} is still running"
    );
    let out = e.dispatcher.call("py_echo", "{}", &ToolContext::default());
    assert_eq!(out.status, CallStatus::Ok, "{}", out.text);
    assert_ne!(e.set.get("everything").unwrap().pid, first_pid);
}

#[test]
fn a_python_plugin_is_off_until_enabled() {
    let dir = tempfile::tempdir().unwrap();
    write_plugin(dir.path(), "quiet", "def register(ctx):\n    pass\n");
    let (_r, _h, set, _d) = load(dir.path(), &config_enabling(&[]));
    let record = set.get("quiet").unwrap();
    assert_eq!(record.status, PluginStatus::Disabled, "{record:?}");
    assert_eq!(record.kind, PluginKind::Python);
    assert!(
        record
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("toolhost plugins enable quiet")),
        "{record:?}"
    );
}

#[test]
fn a_failing_register_or_import_fails_only_that_plugin() {
    let dir = tempfile::tempdir().unwrap();
    write_plugin(
        dir.path(),
        "badreg",
        "def register(ctx):\n    raise ValueError('register says no')\n",
    );
    write_plugin(
        dir.path(),
        "badimport",
        "import no_such_module_for_toolhost\n",
    );
    write_plugin(dir.path(), "noreg", "X = 1\n");
    write_plugin(
        dir.path(),
        "fine",
        "import json\ndef register(ctx):\n    ctx.register_tool('fine_tool', 'fine', {'description': 'ok'}, lambda a, **k: json.dumps({'ok': True}))\n",
    );
    let (_r, _h, set, dispatcher) = load(
        dir.path(),
        &config_enabling(&["badreg", "badimport", "noreg", "fine"]),
    );
    let cases = [
        ("badreg", "ValueError: register says no"),
        ("badimport", "ModuleNotFoundError"),
        ("noreg", "no register() function"),
    ];
    for (name, needle) in cases {
        let record = set.get(name).unwrap();
        assert_eq!(record.status, PluginStatus::Failed, "{record:?}");
        let reason = record.reason.unwrap_or_default();
        assert!(reason.contains(needle), "{name}: {reason}");
        assert!(
            record.detail.is_some_and(|d| d.contains("Traceback")) || name == "noreg",
            "{name}"
        );
    }
    let out = dispatcher.call("fine_tool", "{}", &ToolContext::default());
    assert_eq!(out.status, CallStatus::Ok, "{}", out.text);
}

#[test]
fn a_slow_pre_tool_call_hook_blocks_the_call_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    write_plugin(
        dir.path(),
        "slowhook",
        "import time\ndef pre(**kw):\n    time.sleep(60)\ndef register(ctx):\n    ctx.register_hook('pre_tool_call', pre)\n",
    );
    let mut config = config_enabling(&["slowhook"]);
    config.timeout_secs = 1.0;
    let (registry, _h, _set, dispatcher) = load(dir.path(), &config);
    add_host_tools(&registry);
    let started = Instant::now();
    let out = dispatcher.call("host_echo", "{}", &ToolContext::default());
    assert_eq!(out.status, CallStatus::Blocked, "{}", out.text);
    assert!(out.text.contains("timed out"), "{}", out.text);
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn reload_picks_up_the_plugins_new_code() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = write_plugin(
        dir.path(),
        "changing",
        "import json\ndef register(ctx):\n    ctx.register_tool('old_tool', 'c', {'description': 'old'}, lambda a, **k: json.dumps({'v': 1}))\n",
    );
    let config = config_enabling(&["changing"]);
    let (registry, hooks, set, dispatcher) = load(dir.path(), &config);
    let before = set.get("changing").unwrap().pid;
    std::fs::write(
        plugin.join("__init__.py"),
        "import json\ndef register(ctx):\n    ctx.register_tool('new_tool', 'c', {'description': 'new'}, lambda a, **k: json.dumps({'v': 2}))\n",
    )
    .unwrap();
    let reloaded = set.reload("changing", &registry, &hooks).unwrap();
    assert_eq!(reloaded.tools, ["new_tool"]);
    assert!(registry.get("old_tool").is_none());
    let out = dispatcher.call("new_tool", "{}", &ToolContext::default());
    let result: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(result, json!({"v": 2}));
    let record = set.get("changing").unwrap();
    assert_eq!(record.tools, ["new_tool"]);
    assert_ne!(record.pid, before);
}

#[test]
fn a_confined_plugin_cannot_write_toolhosts_own_files() {
    let dir = tempfile::tempdir().unwrap();
    write_plugin(
        dir.path(),
        "writer",
        "import json\n\
         def write(args, **kw):\n\
         \x20   try:\n\
         \x20       with open(args['path'], 'w') as f:\n\
         \x20           f.write('x')\n\
         \x20       return json.dumps({'wrote': True})\n\
         \x20   except OSError as e:\n\
         \x20       return json.dumps({'wrote': False, 'errno': e.errno})\n\
         def register(ctx):\n\
         \x20   ctx.register_tool('py_write', 'w', {'description': 'write'}, write)\n",
    );
    let scratch = tempfile::tempdir().unwrap();
    let mut config = config_enabling(&["writer"]);
    config.confine = tools_core::environments::confine::ConfineMode::Workspace;
    config.writable = vec![scratch.path().to_path_buf()];
    let (_r, _h, set, dispatcher) = load(dir.path(), &config);
    assert_eq!(set.get("writer").unwrap().status, PluginStatus::Loaded);
    let write = |path: &Path| {
        let args = json!({"path": path}).to_string();
        let out = dispatcher.call("py_write", &args, &ToolContext::default());
        serde_json::from_str::<Value>(&out.text).unwrap()
    };
    // Landlock (this kernel has it; the floor's own tests cover kernels without).
    let denied = write(
        &dir.path()
            .join("plugins")
            .join("writer")
            .join("__init__.py"),
    );
    assert_eq!(
        denied,
        json!({"wrote": false, "errno": 13}),
        "EACCES expected"
    );
    let config_file = write(&dir.path().join("config.toml"));
    assert_eq!(config_file["wrote"], false, "{config_file}");
    let allowed = write(&scratch.path().join("ok.txt"));
    assert_eq!(allowed, json!({"wrote": true}));
}
