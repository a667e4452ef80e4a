//! The docker backend: one long-lived container per task, driven through the Docker
//! Engine API (Docker itself, or podman's Docker-compatible `podman system service`).
//!
//! Hardened like Hermes: all capabilities dropped except the few package managers need,
//! `no-new-privileges`, an init process reaping zombies (`docker_init`: a reaping shell when
//! the engine has no init binary), pids/cpu/memory limits, size-capped
//! tmpfs for `/tmp`, `/var/tmp` and `/run`, optional `--network=none`. Commands are
//! `exec`s of `sh -c` (bash when the image has it); each exec is its own process group
//! inside the container, so a timeout kills the whole tree from a second exec; foreground
//! commands go to one long-lived exec per task instead where the shell allows
//! (`docker_shell.rs`). Files are
//! read with `cat` and written with the archive endpoint (binary-safe, no stdin needed).
//! The container is removed on cleanup unless `persistent = true`, in which case it is
//! kept and found again by its labels.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::docker_api::{DockerApi, Endpoint, query_escape, single_file_tar};
use super::docker_init;
use super::settings::DockerSettings;
use super::shell;
use super::shell_connection::ShellConnection;
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, StdinMode};

const API_TIMEOUT: Duration = Duration::from_secs(30);
const PULL_TIMEOUT: Duration = Duration::from_secs(600);

/// The endpoint from settings, `$DOCKER_HOST`, or the default socket.
pub fn endpoint(settings: &DockerSettings) -> Result<Endpoint, String> {
    let host = if !settings.host.is_empty() {
        settings.host.clone()
    } else {
        std::env::var("DOCKER_HOST")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unix:///var/run/docker.sock".into())
    };
    Endpoint::parse(&host)
}

/// Why the docker backend cannot be used, if it cannot (daemon unreachable).
pub fn availability(settings: &DockerSettings) -> Result<(), String> {
    let endpoint = endpoint(settings)?;
    let api = DockerApi::new(endpoint.clone(), Duration::from_secs(5));
    match api.request("GET", "/_ping", None) {
        Ok(r) if r.status == 200 => Ok(()),
        Ok(r) => Err(format!(
            "docker daemon at {endpoint} answered {}: {}",
            r.status,
            r.message()
        )),
        Err(e) => Err(format!(
            "docker daemon not reachable at {endpoint}: {e} (set [terminal.docker] host or DOCKER_HOST)"
        )),
    }
}

/// Label values: `[A-Za-z0-9_.-]`, at most 63 characters.
pub fn label_value(s: &str) -> String {
    let mut v: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    v.truncate(63);
    if v.is_empty() { "default".into() } else { v }
}

/// The container-create body for `task_id` (pure: unit-tested).
pub fn create_body(settings: &DockerSettings, image: &str, task_id: &str, cwd: &str) -> Value {
    let mut caps = vec!["DAC_OVERRIDE", "CHOWN", "FOWNER"];
    if !settings.run_as_host_user {
        caps.extend(["SETUID", "SETGID"]);
    }
    let mut host_config = json!({
        "Init": true,
        "CapDrop": ["ALL"],
        "CapAdd": caps,
        "SecurityOpt": ["no-new-privileges"],
        "Tmpfs": {
            "/tmp": "rw,nosuid,size=512m",
            "/var/tmp": "rw,noexec,nosuid,size=256m",
            "/run": "rw,noexec,nosuid,size=64m",
        },
        "Binds": settings.volumes,
    });
    if settings.pids_limit > 0 {
        host_config["PidsLimit"] = json!(settings.pids_limit);
    }
    if settings.cpu > 0.0 {
        host_config["NanoCpus"] = json!((settings.cpu * 1e9) as i64);
    }
    if settings.memory_mb > 0 {
        host_config["Memory"] = json!(settings.memory_mb * 1024 * 1024);
    }
    if !settings.network {
        host_config["NetworkMode"] = json!("none");
    }
    let mut env: Vec<String> = settings
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for name in &settings.forward_env {
        if let Ok(value) = std::env::var(name) {
            env.push(format!("{name}={value}"));
        }
    }
    let mut body = json!({
        "Image": image,
        "Cmd": ["sleep", "infinity"],
        "WorkingDir": cwd,
        "Env": env,
        "Labels": {
            "toolhost": "1",
            "toolhost.task": label_value(task_id),
            "toolhost.persistent": if settings.persistent { "1" } else { "0" },
        },
        "HostConfig": host_config,
    });
    if settings.run_as_host_user {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        body["User"] = json!(format!("{uid}:{gid}"));
    }
    body
}

/// The container and the client reaching it (shared with the persistent shell).
pub(super) struct Inner {
    pub(super) api: DockerApi,
    container: String,
    pub(super) shell: String,
    cwd: String,
    persistent: bool,
}

impl Inner {
    pub(super) fn api_err(&self, operation: &str, reason: impl std::fmt::Display) -> EnvError {
        EnvError::Api {
            backend: BackendKind::Docker,
            operation: operation.to_string(),
            reason: reason.to_string(),
        }
    }

    fn create_exec(&self, cmd: Vec<String>) -> Result<String, EnvError> {
        self.create_exec_with(
            &json!({"Cmd": cmd, "AttachStdout": true, "AttachStderr": true, "AttachStdin": false}),
        )
    }

    /// Create an exec from a full request `body`; its id.
    pub(super) fn create_exec_with(&self, body: &Value) -> Result<String, EnvError> {
        let response = self
            .api
            .request(
                "POST",
                &format!("/containers/{}/exec", self.container),
                Some(body),
            )
            .map_err(|e| self.api_err("exec create", e))?;
        if response.status != 201 && response.status != 200 {
            return Err(self.api_err("exec create", response.message()));
        }
        response
            .json()
            .get("Id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| self.api_err("exec create", "no exec id in the answer"))
    }

    pub(super) fn exec_status(&self, exec_id: &str) -> Option<(bool, i32)> {
        let response = self
            .api
            .request("GET", &format!("/exec/{exec_id}/json"), None)
            .ok()?;
        let v = response.json();
        let running = v.get("Running").and_then(Value::as_bool).unwrap_or(false);
        let code = v.get("ExitCode").and_then(Value::as_i64).unwrap_or(-1) as i32;
        Some((running, code))
    }

    /// Run a short `sh` script to completion: `(exit code, output)`.
    pub(super) fn run_capture(&self, script: &str) -> Option<(i32, Vec<u8>)> {
        let id = self
            .create_exec(vec!["sh".into(), "-c".into(), script.to_string()])
            .ok()?;
        let mut stream = self.api.exec_stream(&id).ok()?;
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out);
        for _ in 0..100 {
            match self.exec_status(&id)? {
                (false, code) => return Some((code, out)),
                (true, _) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        None
    }

    /// Run a short script, ignoring its output (kills, cleanups).
    fn run_quiet(&self, script: &str) {
        let _ = self.run_capture(script);
    }
}

/// A container for one task.
pub struct DockerEnvironment {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for DockerEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DockerEnvironment")
            .field("container", &self.inner.container)
            .finish_non_exhaustive()
    }
}

impl DockerEnvironment {
    /// Create (or, when persistent, find again) the container for `task_id`.
    pub fn new(
        settings: &DockerSettings,
        task_id: &str,
        image: Option<&str>,
    ) -> Result<Self, EnvError> {
        let endpoint = endpoint(settings).map_err(|reason| EnvError::Unavailable {
            backend: BackendKind::Docker,
            reason,
        })?;
        let api = DockerApi::new(endpoint, API_TIMEOUT);
        let image = image.unwrap_or(&settings.image).to_string();
        let create_err = |reason: String| EnvError::Create {
            backend: BackendKind::Docker,
            reason,
        };
        let container = match settings
            .persistent
            .then(|| find_persistent(&api, task_id))
            .flatten()
        {
            Some(id) => id,
            None => create_container(&api, settings, &image, task_id).map_err(create_err)?,
        };
        let started = api
            .request("POST", &format!("/containers/{container}/start"), None)
            .map_err(|e| create_err(format!("start: {e}")))?;
        if !matches!(started.status, 204 | 304) {
            let message = started.message();
            let _ = api.request(
                "DELETE",
                &format!("/containers/{container}?force=true"),
                None,
            );
            return Err(create_err(format!("start: {message}")));
        }
        let mut inner = Inner {
            api,
            container,
            shell: "sh".into(),
            cwd: settings.cwd.clone(),
            persistent: settings.persistent,
        };
        // Prefer bash when the image has it.
        if let Some((0, out)) = inner.run_capture("command -v bash")
            && !out.is_empty()
        {
            inner.shell = "bash".into();
        }
        Ok(DockerEnvironment {
            inner: Arc::new(inner),
        })
    }

    /// The container id.
    pub fn container_id(&self) -> &str {
        &self.inner.container
    }
}

fn find_persistent(api: &DockerApi, task_id: &str) -> Option<String> {
    let filters = json!({"label": [
        "toolhost=1",
        format!("toolhost.task={}", label_value(task_id)),
        "toolhost.persistent=1",
    ]});
    let response = api
        .request(
            "GET",
            &format!(
                "/containers/json?all=true&filters={}",
                query_escape(&filters.to_string())
            ),
            None,
        )
        .ok()?;
    response
        .json()
        .as_array()?
        .first()?
        .get("Id")
        .and_then(Value::as_str)
        .map(str::to_string)
}

pub(super) fn create_container(
    api: &DockerApi,
    settings: &DockerSettings,
    image: &str,
    task_id: &str,
) -> Result<String, String> {
    let name = format!("toolhost-{}", super::random_hex(8));
    let body = create_body(settings, image, task_id, &settings.cwd);
    let path = format!("/containers/create?name={name}");
    let mut response = api
        .request("POST", &path, Some(&body))
        .map_err(|e| e.to_string())?;
    if response.status == 404 {
        pull(api, image)?;
        response = api
            .request("POST", &path, Some(&body))
            .map_err(|e| e.to_string())?;
    }
    if docker_init::lacks_init(response.status, &response.message()) {
        tracing::warn!(
            "the container engine has no init binary ({}); running without it, with a shell reaping zombies as PID 1",
            response.message()
        );
        response = api
            .request("POST", &path, Some(&docker_init::without_init(&body)))
            .map_err(|e| e.to_string())?;
    }
    if response.status != 201 {
        return Err(format!("create from {image}: {}", response.message()));
    }
    response
        .json()
        .get("Id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "create: no container id in the answer".to_string())
}

fn pull(api: &DockerApi, image: &str) -> Result<(), String> {
    let (name, tag) = match image.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, t),
        _ => (image, "latest"),
    };
    let puller = DockerApi::new(api.endpoint().clone(), PULL_TIMEOUT);
    let response = puller
        .request(
            "POST",
            &format!(
                "/images/create?fromImage={}&tag={}",
                query_escape(name),
                query_escape(tag)
            ),
            None,
        )
        .map_err(|e| format!("pull {image}: {e}"))?;
    let text = String::from_utf8_lossy(&response.body);
    if response.status != 200 || text.contains("\"error\"") {
        return Err(format!(
            "pull {image}: {}",
            text.trim().chars().take(400).collect::<String>()
        ));
    }
    Ok(())
}

/// The exec's output stream, flagging EOF so `try_wait` knows when to ask for the status.
struct EofFlag {
    inner: Box<dyn Read + Send>,
    eof: Arc<AtomicBool>,
}

impl Read for EofFlag {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf);
        if matches!(n, Ok(0) | Err(_)) {
            self.eof.store(true, Ordering::SeqCst);
        }
        n
    }
}

struct DockerExec {
    inner: Arc<Inner>,
    exec_id: String,
    output: Option<Box<dyn Read + Send>>,
    eof: Arc<AtomicBool>,
    exit: Option<i32>,
    pid_file: Option<String>,
}

impl RunningCommand for DockerExec {
    fn take_output(&mut self) -> Option<Box<dyn Read + Send>> {
        self.output.take()
    }

    fn take_stdin(&mut self) -> Option<Box<dyn std::io::Write + Send>> {
        None
    }

    fn try_wait(&mut self) -> std::io::Result<Option<i32>> {
        if self.exit.is_some() {
            return Ok(self.exit);
        }
        // Until the stream ends, asking the daemon on every tick would be wasted work.
        if self.output.is_some() || !self.eof.load(Ordering::SeqCst) {
            return Ok(None);
        }
        match self.inner.exec_status(&self.exec_id) {
            Some((false, code)) => {
                self.exit = Some(code);
                Ok(self.exit)
            }
            Some((true, _)) => Ok(None),
            None => Err(std::io::Error::other("exec status unavailable")),
        }
    }

    fn wait(&mut self) -> std::io::Result<i32> {
        if let Some(mut out) = self.output.take() {
            let mut sink = Vec::new();
            let _ = out.read_to_end(&mut sink);
        }
        let deadline = Instant::now() + Duration::from_secs(3600 * 24);
        while Instant::now() < deadline {
            if let Some(code) = self.try_wait()? {
                return Ok(code);
            }
            self.eof.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(std::io::Error::other("exec did not finish"))
    }

    fn kill(&mut self) {
        if self.exit.is_some() {
            return;
        }
        if let Some(pid_file) = &self.pid_file {
            self.inner.run_quiet(&shell::kill_group_script(pid_file));
        }
        if let Some((false, code)) = self.inner.exec_status(&self.exec_id) {
            self.exit = Some(code);
        } else {
            self.exit = Some(137);
        }
    }

    fn pid(&self) -> Option<u32> {
        None
    }
}

impl Environment for DockerEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Docker
    }

    fn host_access(&self) -> bool {
        // Bind mounts hand the container part of the host.
        false
    }

    fn default_cwd(&self) -> String {
        self.inner.cwd.clone()
    }

    fn shell(&self) -> &str {
        &self.inner.shell
    }

    fn open_shell(&self) -> Option<Result<Box<dyn ShellConnection>, EnvError>> {
        Some(super::docker_shell::open(&self.inner))
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        if !matches!(request.stdin, StdinMode::Null) {
            return Err(self
                .inner
                .api_err("exec", "stdin is not supported by the docker backend"));
        }
        let mut cmd = vec![self.inner.shell.clone()];
        if request.login {
            cmd.push("-l".into());
        }
        cmd.push("-c".into());
        cmd.push(request.script);
        let exec_id = self.inner.create_exec(cmd)?;
        let stream = self
            .inner
            .api
            .exec_stream(&exec_id)
            .map_err(|e| self.inner.api_err("exec start", e))?;
        let eof = Arc::new(AtomicBool::new(false));
        Ok(Box::new(DockerExec {
            inner: Arc::clone(&self.inner),
            exec_id,
            output: Some(Box::new(EofFlag {
                inner: stream,
                eof: Arc::clone(&eof),
            })),
            eof,
            exit: None,
            pid_file: request.pid_file,
        }))
    }

    fn describe(&self) -> String {
        format!(
            "docker container {} via {}",
            &self.inner.container[..self.inner.container.len().min(12)],
            self.inner.api.endpoint()
        )
    }

    fn write_file(&self, path: &str, data: &[u8], timeout: Duration) -> Result<(), EnvError> {
        let file_err = |reason: String| EnvError::File {
            backend: BackendKind::Docker,
            operation: "write",
            path: path.to_string(),
            reason,
        };
        // Resolve `~` and the parent inside the container, and make sure it exists.
        let script = format!(
            "p={}; d=$(dirname -- \"$p\") && mkdir -p -- \"$d\" && cd -- \"$d\" && pwd -P",
            shell::quote_cd_target(path)
        );
        let (code, out) = super::exec::run_collect(self, &script, StdinMode::Null, timeout)?;
        if code != 0 {
            return Err(file_err(super::shell_message(&out, code)));
        }
        let dir = String::from_utf8_lossy(&out).trim().to_string();
        let name = path.rsplit('/').next().unwrap_or(path);
        let tar = single_file_tar(name, data, 0o644).map_err(file_err)?;
        let response = self
            .inner
            .api
            .request_raw(
                "PUT",
                &format!(
                    "/containers/{}/archive?path={}",
                    self.inner.container,
                    query_escape(&dir)
                ),
                "application/x-tar",
                &tar,
            )
            .map_err(|e| file_err(e.to_string()))?;
        if response.status != 200 {
            return Err(file_err(response.message()));
        }
        Ok(())
    }

    fn cleanup(&self) -> Result<(), EnvError> {
        if self.inner.persistent {
            return Ok(());
        }
        let response = self
            .inner
            .api
            .request(
                "DELETE",
                &format!("/containers/{}?force=true&v=true", self.inner.container),
                None,
            )
            .map_err(|e| self.inner.api_err("remove container", e))?;
        match response.status {
            204 | 404 => Ok(()),
            _ => Err(self.inner.api_err("remove container", response.message())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_body_is_hardened() {
        let settings = DockerSettings {
            network: false,
            volumes: vec!["/data:/data:ro".into()],
            ..DockerSettings::default()
        };
        let body = create_body(&settings, "busybox", "task/1", "/root");
        let hc = &body["HostConfig"];
        assert_eq!(hc["CapDrop"], json!(["ALL"]));
        assert_eq!(hc["SecurityOpt"], json!(["no-new-privileges"]));
        assert_eq!(hc["PidsLimit"], json!(256));
        assert_eq!(hc["NanoCpus"], json!(1_000_000_000i64));
        assert_eq!(hc["Memory"], json!(5120u64 * 1024 * 1024));
        assert_eq!(hc["NetworkMode"], json!("none"));
        assert_eq!(hc["Init"], json!(true));
        assert_eq!(hc["Binds"], json!(["/data:/data:ro"]));
        assert_eq!(body["Labels"]["toolhost.task"], json!("task_1"));
        assert_eq!(body["Cmd"], json!(["sleep", "infinity"]));
    }

    #[test]
    fn labels_are_sanitized() {
        assert_eq!(label_value("a b/c"), "a_b_c");
        assert_eq!(label_value(""), "default");
        assert_eq!(label_value(&"x".repeat(100)).len(), 63);
    }
}
