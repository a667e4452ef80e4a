//! The daytona backend: a Daytona sandbox per task, driven through Daytona's documented
//! Python SDK (`Daytona().create(CreateSandboxFromImageParams(...))`, `get`,
//! `sandbox.process.exec`, `sandbox.fs.upload_file`, `delete` / `stop`) by the
//! `sdk_helper`. Available when `DAYTONA_API_KEY` is set and the configured
//! Python can import `daytona`. Output arrives when a command ends (the SDK's exec is
//! not streaming). Not verified live in CI; the helper protocol is tested against a
//! stand-in module.

use serde_json::{Value, json};

use super::settings::DaytonaSettings;
use super::shell::quote;
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, sdk_helper};

/// Why the backend cannot be used, if it cannot.
pub fn availability(settings: &DaytonaSettings) -> Result<(), String> {
    if std::env::var_os("DAYTONA_API_KEY").is_none_or(|v| v.is_empty()) {
        return Err("DAYTONA_API_KEY is not set".into());
    }
    sdk_helper::can_import(&settings.python, "daytona")
}

/// The `create` arguments (pure: unit-tested). Disk is capped at Daytona's 10 GiB.
pub fn create_args(settings: &DaytonaSettings, image: &str, task_id: &str) -> Value {
    json!({
        "image": image,
        "cpu": settings.cpu.max(1),
        "memory_gb": settings.memory_gb.max(1),
        "disk_gb": settings.disk_gb.clamp(1, 10),
        "task": task_id,
    })
}

/// The exec arguments: Daytona runs a command string, so the script goes in `sh -c`.
pub fn exec_args(id: &str, login: bool, script: &str, timeout_secs: u64, stdin: bool) -> Value {
    let command = format!("sh{} -c {}", if login { " -l" } else { "" }, quote(script));
    json!({"id": id, "command": command, "timeout": timeout_secs, "stdin": stdin})
}

/// A Daytona sandbox.
#[derive(Debug)]
pub struct DaytonaEnvironment {
    python: String,
    id: String,
    cwd: String,
    persistent: bool,
}

impl DaytonaEnvironment {
    /// Create a sandbox from `image` (or the configured one) for `task_id`.
    pub fn new(
        settings: &DaytonaSettings,
        task_id: &str,
        image: Option<&str>,
    ) -> Result<Self, EnvError> {
        availability(settings).map_err(|reason| EnvError::Unavailable {
            backend: BackendKind::Daytona,
            reason,
        })?;
        let args = create_args(settings, image.unwrap_or(&settings.image), task_id);
        let id = sdk_helper::create(BackendKind::Daytona, &settings.python, &args)?;
        Ok(DaytonaEnvironment {
            python: settings.python.clone(),
            id,
            cwd: settings.cwd.clone(),
            persistent: settings.persistent,
        })
    }
}

impl Environment for DaytonaEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Daytona
    }

    fn host_access(&self) -> bool {
        false
    }

    fn default_cwd(&self) -> String {
        self.cwd.clone()
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        sdk_helper::spawn_request(
            BackendKind::Daytona,
            &self.python,
            request,
            |script, login, timeout_secs, with_stdin| {
                exec_args(&self.id, login, script, timeout_secs, with_stdin)
            },
        )
    }

    fn describe(&self) -> String {
        format!("daytona sandbox {}", self.id)
    }

    fn cleanup(&self) -> Result<(), EnvError> {
        let out = sdk_helper::run_blocking(
            &self.python,
            "daytona",
            "destroy",
            &json!({"id": self.id, "persistent": self.persistent}),
        )?;
        let operation = if self.persistent { "stop" } else { "delete" };
        EnvError::check_exit(BackendKind::Daytona, operation, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StdinMode;
    use crate::modal::tests::fake_python;
    use crate::sdk_helper::tests::fake_sdk;
    use std::time::Duration;

    #[test]
    fn create_args_cap_resources() {
        let settings = DaytonaSettings {
            disk_gb: 50,
            cpu: 0,
            ..DaytonaSettings::default()
        };
        let args = create_args(&settings, "img", "task-1");
        assert_eq!(args["disk_gb"], 10);
        assert_eq!(args["cpu"], 1);
        assert_eq!(args["task"], "task-1");
    }

    #[test]
    fn exec_args_wrap_the_script() {
        let args = exec_args("sb", true, "echo 'x'", 5, false);
        assert_eq!(args["command"], r"sh -l -c 'echo '\''x'\'''");
    }

    const FAKE_DAYTONA: &str = r#"
import json, os, subprocess
STATE = os.environ["FAKE_SDK_STATE"]
class Resources:
    def __init__(self, cpu, memory, disk): self.cpu, self.memory, self.disk = cpu, memory, disk
class CreateSandboxFromImageParams:
    def __init__(self, image, resources, labels): self.image, self.labels = image, labels
class _Resp:
    def __init__(self, result, exit_code): self.result, self.exit_code = result, exit_code
class _Process:
    def exec(self, cmd, timeout=None):
        r = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return _Resp(r.stdout.decode("utf-8", "replace"), r.returncode)
class _Fs:
    def upload_file(self, data, path):
        with open(path, "wb") as f: f.write(data)
class _Sandbox:
    def __init__(self, sid): self.id = sid; self.process = _Process(); self.fs = _Fs()
    def stop(self): open(os.path.join(STATE, self.id + ".stopped"), "w").close()
class Daytona:
    def create(self, params, timeout=None):
        sid = "dt-" + os.urandom(4).hex()
        open(os.path.join(STATE, sid), "w").write(json.dumps(params.labels))
        return _Sandbox(sid)
    def get(self, sid):
        assert os.path.exists(os.path.join(STATE, sid))
        return _Sandbox(sid)
    def delete(self, sb): os.remove(os.path.join(STATE, sb.id))
"#;

    #[test]
    fn helper_drives_the_sdk_protocol() {
        assert!(
            crate::local::which("python3").is_some(),
            "this test needs python3 on PATH"
        );
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        fake_sdk(dir.path(), "daytona", FAKE_DAYTONA);
        let python = fake_python(dir.path(), &state);
        let settings = DaytonaSettings::default();
        let id = sdk_helper::create(
            BackendKind::Daytona,
            &python,
            &create_args(&settings, "img", "t1"),
        )
        .unwrap();
        let env = DaytonaEnvironment {
            python,
            id: id.clone(),
            cwd: "/".into(),
            persistent: false,
        };
        let (code, out) = crate::exec::run_collect(
            &env,
            "echo out; exit 4",
            StdinMode::Null,
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!((code, out.as_slice()), (4, &b"out\n"[..]));
        let file = dir.path().join("sub/f.bin");
        env.write_file(
            &file.display().to_string(),
            b"a\x00b",
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"a\x00b");
        env.cleanup().unwrap();
        assert!(!state.join(&id).exists());
    }
}
