//! The bridge to the cloud sandboxes whose only documented client is a Python SDK
//! (Modal's `modal`, Daytona's `daytona`): a small helper program, run with the
//! configured interpreter as `python -c HELPER <provider> <op> <json>`.
//!
//! Operations: `create` (prints `{"id": ...}`), `exec` (streams the remote command's
//! output as raw bytes and exits with its code; stdin bytes, when flagged, are passed to
//! the command), `destroy`. Each exec is a short-lived local process, so its local
//! process group is killable; the remote group is killed through the pid file.

use std::ffi::OsString;

use serde_json::{Value, json};

use super::local_child::{LocalChild, LocalCommand};
use super::shell;
use super::{BackendKind, EnvError, RunningCommand, SpawnRequest, StdinMode};

/// The helper program.
pub const HELPER: &str = r#"
import base64, json, os, sys

def out(b):
    if isinstance(b, str):
        b = b.encode("utf-8", "replace")
    sys.stdout.buffer.write(b)
    sys.stdout.buffer.flush()

def modal_op(op, a):
    import modal
    if op == "create":
        app = modal.App.lookup(a["app"], create_if_missing=True)
        image = modal.Image.from_registry(a["image"])
        sb = modal.Sandbox.create("sleep", "infinity", app=app, image=image,
                                  cpu=a["cpu"], memory=a["memory_mb"], timeout=a["lifetime"])
        print(json.dumps({"id": sb.object_id}))
        return 0
    sb = modal.Sandbox.from_id(a["id"])
    if op == "exec":
        p = sb.exec(a["shell"], "-c", a["script"], timeout=a["timeout"], text=False)
        if a.get("stdin"):
            p.stdin.write(sys.stdin.buffer.read())
            p.stdin.write_eof()
            p.stdin.drain()
        for chunk in p.stdout:
            out(chunk)
        p.wait()
        out(p.stderr.read())
        return p.returncode if p.returncode is not None else 1
    if op == "destroy":
        sb.terminate()
        return 0
    raise SystemExit("unknown op " + op)

def daytona_op(op, a):
    import daytona
    client = daytona.Daytona()
    if op == "create":
        params = daytona.CreateSandboxFromImageParams(
            image=a["image"],
            resources=daytona.Resources(cpu=a["cpu"], memory=a["memory_gb"], disk=a["disk_gb"]),
            labels={"toolhost_task": a["task"]},
        )
        sb = client.create(params, timeout=a.get("create_timeout", 180))
        print(json.dumps({"id": sb.id}))
        return 0
    sb = client.get(a["id"])
    if op == "exec":
        cmd = a["command"]
        if a.get("stdin"):
            path = "/tmp/toolhost-stdin-" + os.urandom(6).hex()
            sb.fs.upload_file(sys.stdin.buffer.read(), path)
            cmd = "( " + cmd + " ) < " + path + "; ec=$?; rm -f " + path + "; exit $ec"
            cmd = "sh -c " + "'" + cmd.replace("'", "'\\''") + "'"
        r = sb.process.exec(cmd, timeout=a["timeout"])
        out(r.result or "")
        return int(r.exit_code or 0)
    if op == "destroy":
        if a.get("persistent"):
            sb.stop()
        else:
            client.delete(sb)
        return 0
    raise SystemExit("unknown op " + op)

def main():
    provider, op, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    fn = {"modal": modal_op, "daytona": daytona_op}[provider]
    code = fn(op, args)
    sys.exit(max(0, min(255, int(code))))

main()
"#;

/// The local command running one helper operation.
pub fn command(
    python: &str,
    provider: &str,
    op: &str,
    args: &Value,
    stdin: StdinMode,
) -> LocalCommand {
    LocalCommand {
        program: python.into(),
        args: vec![
            OsString::from("-c"),
            HELPER.into(),
            provider.into(),
            op.into(),
            args.to_string().into(),
        ],
        env: None,
        cwd: None,
        stdin,
        pty: false,
        new_session: false,
        ..LocalCommand::default()
    }
}

/// Run `create` and return the sandbox id.
pub fn create(backend: BackendKind, python: &str, args: &Value) -> Result<String, EnvError> {
    let out = run_blocking(python, backend.name(), "create", args)?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(EnvError::Create {
            backend,
            reason: format!(
                "{}{}",
                text.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    text.lines()
        .rev()
        .find_map(|line| serde_json::from_str::<Value>(line).ok())
        .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_string))
        .ok_or_else(|| EnvError::Create {
            backend,
            reason: format!("the SDK helper printed no sandbox id: {}", text.trim()),
        })
}

/// Run an operation to completion (create, destroy, kills).
// The SDK helper (modal, daytona) is toolhost's own script; model commands run remotely.
#[allow(clippy::disallowed_methods)]
pub fn run_blocking(
    python: &str,
    provider: &str,
    op: &str,
    args: &Value,
) -> Result<std::process::Output, EnvError> {
    let spec = command(python, provider, op, args, StdinMode::Null);
    std::process::Command::new(&spec.program)
        .args(&spec.args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| EnvError::io(format!("{python} (SDK helper {provider} {op})"), e))
}

/// Start an `exec`; `kill_args` (an exec of the kill script) runs when it is killed.
pub fn spawn_exec(
    backend: BackendKind,
    python: &str,
    args: Value,
    stdin: StdinMode,
    kill_args: Option<Value>,
) -> Result<LocalChild, EnvError> {
    let python_owned = python.to_string();
    let child = LocalChild::spawn(command(python, backend.name(), "exec", &args, stdin)).map_err(
        |source| EnvError::Spawn {
            backend,
            what: format!("{python} (SDK helper)"),
            source,
        },
    )?;
    Ok(match kill_args {
        Some(kill) => child.on_kill(move || {
            let _ = run_blocking(&python_owned, backend.name(), "exec", &kill);
        }),
        None => child,
    })
}

/// Start `request` in a sandbox through the helper. `exec_args(script, login,
/// timeout_secs, with_stdin)` builds the provider's exec call; it is used for the
/// command itself and, when the request records a pid file, for the kill script that
/// runs when the command is killed.
pub fn spawn_request(
    backend: BackendKind,
    python: &str,
    request: SpawnRequest,
    exec_args: impl Fn(&str, bool, u64, bool) -> Value,
) -> Result<Box<dyn RunningCommand>, EnvError> {
    let with_stdin = matches!(request.stdin, StdinMode::Data(_));
    // The provider's exec timeout is a backstop; toolhost's own deadline kills first.
    let args = exec_args(&request.script, request.login, 24 * 3600, with_stdin);
    let kill = request
        .pid_file
        .as_deref()
        .map(|pid_file| exec_args(&shell::kill_group_script(pid_file), false, 30, false));
    let child = spawn_exec(backend, python, args, request.stdin, kill)?;
    Ok(Box::new(child))
}

/// Whether `python` can import `module`.
// Checks that the configured Python has an SDK; runs no model code.
#[allow(clippy::disallowed_methods)]
pub fn can_import(python: &str, module: &str) -> Result<(), String> {
    let out = std::process::Command::new(python)
        .args(["-c", &format!("import {module}")])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "the `{module}` Python package is not installed for {python} (pip install {module})"
        ))
    }
}

/// The JSON for an exec.
pub fn exec_args(id: &str, shell: &str, script: &str, timeout_secs: u64, stdin: bool) -> Value {
    json!({"id": id, "shell": shell, "script": script, "timeout": timeout_secs, "stdin": stdin})
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Write a fake SDK module into a temp dir (for helper protocol tests).
    pub fn fake_sdk(dir: &std::path::Path, module: &str, source: &str) {
        std::fs::write(dir.join(format!("{module}.py")), source).unwrap();
    }

    #[test]
    fn helper_is_valid_python() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("helper.py");
        std::fs::write(&path, HELPER).unwrap();
        let out = std::process::Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(&path)
            .output()
            .expect("this test needs python3 on PATH");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
