//! `execute_code` runs under the kernel floor: a script that imports a module written
//! earlier (the analyser read only the script's text) cannot write under a system
//! directory, rewrite toolhost's config, or signal every process, PID 1 or toolhost —
//! and neither can anything it starts. Harmless even if the floor failed
//! (`floor_probe.rs`).

use std::collections::BTreeSet;

use super::CodeExecutionSettings;
use super::run::{Script, execute};
use super::test_support::{caller, require_python};
use crate::context::ToolContext;
use crate::environments::exec_policy::Floor;
use crate::environments::floor_probe::{Probe, enforced};
use crate::environments::settings::LocalSettings;

fn run_probe(code: String, probe: &Probe) -> String {
    let script = Script {
        code: &code,
        floor: Floor::prepare(&LocalSettings::default(), probe.dir.path(), probe.home()),
        cwd: probe.dir.path().to_path_buf(),
        tools: BTreeSet::new(),
    };
    let settings = CodeExecutionSettings::default();
    let r = execute(&script, &settings, caller(), &ToolContext::for_task("t"));
    r["output"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_module_written_earlier_cannot_escape_the_floor() {
    require_python();
    let probe = Probe::new().unwrap();
    let [config, pid] = probe.args();
    let code = format!(
        "import sys\nsys.path.insert(0, {dir:?})\nsys.argv = ['probe', {config:?}, {pid:?}]\nimport probe\n",
        dir = probe.dir.path().display().to_string(),
    );
    let out = run_probe(code, &probe);
    assert_eq!(enforced(probe.escapes(&out)), Vec::<String>::new(), "{out}");
}

#[test]
fn a_subprocess_of_the_script_cannot_escape_the_floor() {
    require_python();
    let probe = Probe::new().unwrap();
    let [config, pid] = probe.args();
    let code = format!(
        "import subprocess, sys\nr = subprocess.run([sys.executable, {script:?}, {config:?}, {pid:?}], capture_output=True, text=True)\nprint(r.stdout)\n",
        script = probe.script.display().to_string(),
    );
    let out = run_probe(code, &probe);
    assert_eq!(enforced(probe.escapes(&out)), Vec::<String>::new(), "{out}");
}
