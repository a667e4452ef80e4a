//! Every door that runs code (docs/terminal.md, "The kernel floor") through the real tools and the real approval engine, with no
//! human present: a probe the analyser cannot read (a Python file written outside
//! toolhost) tries a write under a system directory, a rewrite of toolhost's
//! `config.toml`, and signal 0 to every process, to PID 1 and to toolhost. Every attempt
//! is denied on every door (`floor_probe.rs`; harmless even if the floor failed).

use std::sync::Arc;

use serde_json::{Value, json};
use tools_core::code_exec::ToolCaller;
use tools_core::environments::TerminalSettings;
use tools_core::environments::floor_probe::{Probe, enforced};
use tools_core::settings::CoreSettings;
use tools_core::{CoreServices, Home, Hooks, Registry, ToolContext};

/// toolhost over `home` (the probe's throwaway home, or a symlink to it), with the
/// README's own allowlist example and nobody to ask.
struct Rig {
    services: Arc<CoreServices>,
    registry: Registry,
}

impl Rig {
    fn new(home: &std::path::Path, cwd: &std::path::Path) -> Rig {
        let home = Home::at(home);
        let gate = toolhost_tests::recursive_delete_allowlisted(&home);
        let settings = CoreSettings {
            terminal: TerminalSettings {
                cwd: cwd.display().to_string(),
                ..TerminalSettings::default()
            },
            ..CoreSettings::default()
        };
        let services = Arc::new(CoreServices::new(
            home,
            settings,
            Arc::new(Hooks::new()),
            gate,
        ));
        let registry = Registry::new();
        assert!(tools_core::tools::register_core_tools(&registry, &services).is_empty());
        services.tool_caller.set(Arc::new(NoTools));
        Rig { services, registry }
    }

    fn call(&self, tool: &str, args: Value) -> Value {
        let r = self
            .registry
            .dispatch_blocking(tool, args, &ToolContext::for_task("floor"));
        serde_json::from_str(&r.text).unwrap()
    }
}

/// The pipeline `execute_code` needs, offering no tools (the probe calls none).
struct NoTools;

impl ToolCaller for NoTools {
    fn call(&self, _name: &str, _args: &Value, _ctx: &ToolContext) -> String {
        json!({"error": "no tools here"}).to_string()
    }
    fn available(&self, _name: &str) -> bool {
        false
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.services.shutdown();
    }
}

fn assert_denied(probe: &Probe, result: &Value) {
    let out = result["output"].as_str().unwrap_or_default();
    assert_eq!(
        enforced(probe.escapes(out)),
        Vec::<String>::new(),
        "{result}"
    );
}

#[test]
fn an_allowlisted_recursive_delete_does_not_lift_the_floor() {
    let probe = Probe::new().unwrap();
    let rig = Rig::new(probe.home(), probe.dir.path());
    let r = rig.call(
        "terminal",
        json!({"command": format!("rm -rf ./junk; {}", probe.shell_line()), "timeout": 60}),
    );
    assert!(r.get("floor").is_none(), "{r}");
    assert_denied(&probe, &r);
}

#[test]
fn a_background_command_runs_under_the_floor() {
    let probe = Probe::new().unwrap();
    let rig = Rig::new(probe.home(), probe.dir.path());
    let r = rig.call(
        "terminal",
        json!({"command": probe.shell_line(), "background": true}),
    );
    let id = r["session_id"].as_str().unwrap().to_string();
    let w = rig.call(
        "process",
        json!({"action": "wait", "session_id": id, "timeout": 60}),
    );
    assert_denied(&probe, &w);
}

#[test]
fn execute_code_importing_a_module_written_earlier_is_confined() {
    let probe = Probe::new().unwrap();
    let rig = Rig::new(probe.home(), probe.dir.path());
    let [config, pid] = probe.args();
    let code = format!(
        "import sys\nsys.path.insert(0, {dir:?})\nsys.argv = ['probe', {config:?}, {pid:?}]\nimport probe\n",
        dir = probe.dir.path().display().to_string(),
    );
    let r = rig.call("execute_code", json!({"code": code}));
    assert_denied(&probe, &r);
}

#[test]
fn a_symlinked_toolhost_home_is_protected_at_its_real_path() {
    let probe = Probe::new().unwrap();
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("toolhost-home");
    std::os::unix::fs::symlink(probe.home(), &link).unwrap();
    let rig = Rig::new(&link, probe.dir.path());
    let r = rig.call(
        "terminal",
        // The probe opens the config at its real path; the command names neither.
        json!({"command": probe.shell_line()}),
    );
    assert_denied(&probe, &r);
}
