//! The modal backend: a Modal sandbox per task, driven through Modal's documented Python
//! SDK (`modal.Sandbox.create` / `from_id` / `exec` / `terminate`) by the
//! `sdk_helper`. Available when the configured Python can import `modal` and
//! credentials exist (`MODAL_TOKEN_ID` + `MODAL_TOKEN_SECRET`, or `~/.modal.toml`).
//! Not verified live in CI (no cloud access); the helper protocol is tested against a
//! stand-in module.

use serde_json::{Value, json};

use super::settings::ModalSettings;
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, sdk_helper};

/// Why the backend cannot be used, if it cannot.
pub fn availability(settings: &ModalSettings) -> Result<(), String> {
    let env_creds = std::env::var_os("MODAL_TOKEN_ID").is_some()
        && std::env::var_os("MODAL_TOKEN_SECRET").is_some();
    let file_creds = dirs::home_dir().is_some_and(|h| h.join(".modal.toml").is_file());
    if !env_creds && !file_creds {
        return Err("no Modal credentials (set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run `modal token new`)".into());
    }
    sdk_helper::can_import(&settings.python, "modal")
}

/// The `create` arguments (pure: unit-tested).
pub fn create_args(settings: &ModalSettings, image: &str) -> Value {
    json!({
        "app": settings.app_name,
        "image": image,
        "cpu": settings.cpu,
        "memory_mb": settings.memory_mb,
        "lifetime": settings.lifetime_seconds,
    })
}

/// A Modal sandbox.
#[derive(Debug)]
pub struct ModalEnvironment {
    python: String,
    id: String,
    cwd: String,
}

impl ModalEnvironment {
    /// Create a sandbox from `image` (or the configured one).
    pub fn new(settings: &ModalSettings, image: Option<&str>) -> Result<Self, EnvError> {
        availability(settings).map_err(|reason| EnvError::Unavailable {
            backend: BackendKind::Modal,
            reason,
        })?;
        let args = create_args(settings, image.unwrap_or(&settings.image));
        let id = sdk_helper::create(BackendKind::Modal, &settings.python, &args)?;
        Ok(ModalEnvironment {
            python: settings.python.clone(),
            id,
            cwd: settings.cwd.clone(),
        })
    }
}

impl Environment for ModalEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Modal
    }

    fn host_access(&self) -> bool {
        false
    }

    fn default_cwd(&self) -> String {
        self.cwd.clone()
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        sdk_helper::spawn_request(
            BackendKind::Modal,
            &self.python,
            request,
            |script, login, timeout_secs, with_stdin| {
                let script = if login {
                    format!(
                        ". /etc/profile >/dev/null 2>&1; . \"$HOME/.profile\" >/dev/null 2>&1; {script}"
                    )
                } else {
                    script.to_string()
                };
                sdk_helper::exec_args(&self.id, "sh", &script, timeout_secs, with_stdin)
            },
        )
    }

    fn describe(&self) -> String {
        format!("modal sandbox {}", self.id)
    }

    fn cleanup(&self) -> Result<(), EnvError> {
        let out =
            sdk_helper::run_blocking(&self.python, "modal", "destroy", &json!({"id": self.id}))?;
        EnvError::check_exit(BackendKind::Modal, "terminate", &out)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sdk_helper::tests::fake_sdk;
    use crate::{ExecRequest, TaskEnvironment};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn create_args_follow_settings() {
        let args = create_args(&ModalSettings::default(), "python:3.12");
        assert_eq!(args["image"], "python:3.12");
        assert_eq!(args["memory_mb"], 5120);
        assert_eq!(args["lifetime"], 3600);
        assert_eq!(args["app"], "toolhost");
    }

    /// A stand-in `modal` module: sandboxes are local directories and exec runs `sh`.
    const FAKE_MODAL: &str = r#"
import json, os, subprocess, tempfile
STATE = os.environ["FAKE_SDK_STATE"]
class App:
    @staticmethod
    def lookup(name, create_if_missing=False): return App()
class Image:
    @staticmethod
    def from_registry(name): return name
class _Stream:
    def __init__(self, data): self.data = data
    def __iter__(self): return iter([self.data])
    def read(self): return b""
class _Stdin:
    def __init__(self, p): self.p = p; self.buf = b""
    def write(self, b): self.buf += b
    def write_eof(self): pass
    def drain(self): pass
class _Proc:
    def __init__(self, argv, cwd):
        self.argv = argv; self.cwd = cwd; self.stdin = _Stdin(self); self.returncode = None; self._out = None
    def _run(self):
        if self._out is None:
            r = subprocess.run(self.argv, input=self.stdin.buf, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self._out = r.stdout; self.returncode = r.returncode
    @property
    def stdout(self):
        self._run(); return _Stream(self._out)
    @property
    def stderr(self):
        return _Stream(b"")
    def wait(self): self._run()
class Sandbox:
    def __init__(self, object_id): self.object_id = object_id
    @staticmethod
    def create(*cmd, app=None, image=None, cpu=None, memory=None, timeout=None):
        sid = "sb-" + os.urandom(4).hex()
        with open(os.path.join(STATE, sid), "w") as f: json.dump({"image": image, "cpu": cpu, "memory": memory}, f)
        return Sandbox(sid)
    @staticmethod
    def from_id(sid):
        assert os.path.exists(os.path.join(STATE, sid)), "no sandbox " + sid
        return Sandbox(sid)
    def exec(self, *argv, timeout=None, text=True):
        return _Proc(list(argv), None)
    def terminate(self):
        os.remove(os.path.join(STATE, self.object_id))
"#;

    pub(crate) fn fake_python(dir: &std::path::Path, state: &std::path::Path) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("fake-python");
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\nPYTHONPATH='{}' FAKE_SDK_STATE='{}' exec python3 \"$@\"\n",
                dir.display(),
                state.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    #[test]
    fn helper_drives_the_sdk_protocol() {
        assert!(
            crate::local::which("python3").is_some(),
            "this test needs python3 on PATH"
        );
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        fake_sdk(dir.path(), "modal", FAKE_MODAL);
        // An interpreter wrapper that finds the stand-in module (no global env changes).
        let python = fake_python(dir.path(), &state);
        let id = sdk_helper::create(
            BackendKind::Modal,
            &python,
            &create_args(&ModalSettings::default(), "img"),
        )
        .unwrap();
        assert!(state.join(&id).exists());
        let env = Arc::new(ModalEnvironment {
            python,
            id: id.clone(),
            cwd: "/".into(),
        });
        let task = TaskEnvironment::start(
            env.clone(),
            "t",
            Some(dir.path().display().to_string()),
            &[],
        )
        .unwrap();
        let outcome = task
            .execute(&ExecRequest {
                command: "export GREETING=hi; echo $GREETING; exit 3".into(),
                workdir: None,
                timeout: Duration::from_secs(30),
                cancel: None,
                max_output: 10_000,
                spill: None,
                approved: false,
            })
            .unwrap();
        assert_eq!(outcome.exit_code, 3);
        assert_eq!(outcome.output.text.trim(), "hi");
        let file = dir.path().join("f.txt");
        env.write_file(
            &file.display().to_string(),
            b"data\x00bin",
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(
            env.read_file(&file.display().to_string(), Duration::from_secs(30))
                .unwrap(),
            b"data\x00bin"
        );
        env.cleanup().unwrap();
        assert!(!state.join(&id).exists());
    }
}
