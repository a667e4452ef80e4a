//! Running one script: a private temporary directory with the script, the generated
//! `toolhost_tools` module and the socket; the interpreter in its own process group
//! with a scrubbed environment (no variable whose name looks like a secret); the time
//! limit and cancellation (the whole group is killed); stdout and stderr captured and
//! the result built by `outcome.rs` (docs/hermes/code-execution.md).

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::ToolCaller;
use super::colocate::Colocation;
use super::outcome::{Captured, Ending, build_result, capture, error_result};
use super::rpc::{RpcOptions, RpcServer};
use super::settings::CodeExecutionSettings;
use super::stubs;
use crate::context::ToolContext;
use crate::environments::exec_policy::{self, Approval, CodePath, Floor};

/// Environment variables passed to the script (prefixes), unless they look secret.
const SAFE_ENV_PREFIXES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_",
    "TERM",
    "TMPDIR",
    "TZ",
    "SHELL",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
];
const SECRET_MARKERS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// One script to run.
pub struct Script<'a> {
    /// The Python source.
    pub code: &'a str,
    /// Working directory (the task's).
    pub cwd: PathBuf,
    /// Tools the script may call.
    pub tools: BTreeSet<String>,
    /// The kernel floor the interpreter (and everything it starts) runs under.
    pub floor: Floor,
}

fn scrubbed_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| {
            let upper = k.to_ascii_uppercase();
            SAFE_ENV_PREFIXES.iter().any(|p| upper.starts_with(p))
                && !SECRET_MARKERS.iter().any(|m| upper.contains(m))
        })
        .collect()
}

/// A fresh random token for one run (hex).
pub(super) fn new_token() -> String {
    let mut bytes = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if ok.is_err() {
        // Fall back to time and address entropy; the socket's directory is private
        // (0700) anyway, the token is a second lock.
        let seed = format!("{:?}{:p}", Instant::now(), &bytes);
        bytes[..8].copy_from_slice(&crate::stable_hash::fnv1a(seed.bytes()).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn kill_group(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Run `script`; the result is always a JSON object.
pub fn execute(
    script: &Script<'_>,
    settings: &CodeExecutionSettings,
    caller: Arc<dyn ToolCaller>,
    ctx: &ToolContext,
) -> Value {
    let started = Instant::now();
    let run = match RunDir::create(script) {
        Ok(run) => run,
        Err(why) => return error_result(why, 0, started),
    };
    let listener = match UnixListener::bind(&run.socket) {
        Ok(l) => l,
        Err(err) => return error_result(format!("cannot open the tool socket: {err}"), 0, started),
    };
    let token = new_token();
    let colocation = Colocation::choose();
    let cpu = colocation.as_ref().map(Colocation::cpu);
    let server = RpcServer::start_colocated(
        listener,
        run.socket.clone(),
        RpcOptions {
            token: token.clone(),
            allowed: script.tools.clone(),
            max_calls: settings.max_tool_calls,
            caller,
            ctx: ctx.clone(),
        },
        colocation,
    );
    let child = match interpreter(settings, script, &run, &token, cpu).spawn() {
        Ok(c) => c,
        Err(err) => {
            let calls = server.stop();
            let why = if err.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{} not found: execute_code needs Python 3 on PATH",
                    settings.python
                )
            } else {
                format!("cannot start {}: {err}", settings.python)
            };
            return error_result(why, calls, started);
        }
    };
    let finished = wait_for(child, settings, ctx, started);
    let calls = server.stop();
    build_result(
        finished.ending,
        finished.exit_code,
        &finished.out,
        &finished.err,
        calls,
        started,
        settings.timeout,
    )
}

/// One run's private directory: the script, the generated module, the socket.
struct RunDir {
    dir: tempfile::TempDir,
    main: PathBuf,
    socket: PathBuf,
}

impl RunDir {
    fn create(script: &Script<'_>) -> Result<Self, String> {
        let dir = tempfile::Builder::new()
            .prefix("toolhost-exec-")
            .tempdir()
            .map_err(|err| format!("cannot create a temporary directory: {err}"))?;
        let tools: Vec<String> = script.tools.iter().cloned().collect();
        let module = dir.path().join("toolhost_tools.py");
        let main = dir.path().join("script.py");
        let socket = dir.path().join("rpc.sock");
        std::fs::write(
            &module,
            stubs::module_source(&tools, stubs::Transport::Socket),
        )
        .and_then(|()| std::fs::write(&main, script.code))
        .map_err(|err| format!("cannot write the script: {err}"))?;
        Ok(RunDir { dir, main, socket })
    }
}

/// The interpreter's command: its own process group, a scrubbed environment, the
/// channel's socket and token, and the CPU calls are served on (`colocate.rs`).
fn interpreter(
    settings: &CodeExecutionSettings,
    script: &Script<'_>,
    run: &RunDir,
    token: &str,
    cpu: Option<usize>,
) -> Command {
    let mut command = exec_policy::command(&settings.python);
    command
        .arg(&run.main)
        .current_dir(&script.cwd)
        .env_clear()
        .envs(scrubbed_env())
        .env("TOOLHOST_RPC_SOCKET", &run.socket)
        .env("TOOLHOST_RPC_TOKEN", token)
        .env("PYTHONPATH", prepend_path(run.dir.path()))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(cpu) = cpu {
        command.env("TOOLHOST_RPC_CPU", cpu.to_string());
    }
    // The script's text was judged once; what it imports, builds or starts cannot be
    // read, so the floor always applies (a human's approval of the text does not lift it).
    exec_policy::apply(
        &mut command,
        &script.floor,
        CodePath::ExecuteCode,
        Approval::Unjudged,
    );
    command
}

/// How a script ended, and what it printed.
struct Finished {
    ending: Ending,
    exit_code: i32,
    out: Captured,
    err: Captured,
}

/// Wait for `child` to exit, be killed at the time limit, or be cancelled; collect its
/// capped output.
fn wait_for(
    mut child: std::process::Child,
    settings: &CodeExecutionSettings,
    ctx: &ToolContext,
    started: Instant,
) -> Finished {
    let pid = child.id();
    let (out_cap, err_cap) = (settings.max_stdout_bytes, settings.max_stderr_bytes);
    let stdout = child
        .stdout
        .take()
        .map(|s| std::thread::spawn(move || capture(s, out_cap)));
    let stderr = child
        .stderr
        .take()
        .map(|s| std::thread::spawn(move || capture(s, err_cap)));
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(status.ok().and_then(|s| s.code()).unwrap_or(-1));
    });
    let deadline = started + Duration::from_secs(settings.timeout.max(1));
    let ending = loop {
        let now = Instant::now();
        if now >= deadline {
            kill_group(pid);
            break Ending::TimedOut;
        }
        if ctx.cancel.is_cancelled() {
            kill_group(pid);
            break Ending::Cancelled;
        }
        let wait = (deadline - now).min(Duration::from_millis(50));
        match rx.recv_timeout(wait) {
            Ok(code) => break Ending::Exited(code),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break Ending::Exited(-1),
        }
    };
    // The leader has exited or was killed; grandchildren keeping the pipes open go too.
    kill_group(pid);
    let exit_code = match ending {
        Ending::Exited(code) => code,
        _ => rx.recv_timeout(Duration::from_secs(5)).unwrap_or(-1),
    };
    let _ = waiter.join();
    Finished {
        ending,
        exit_code,
        out: stdout.and_then(|h| h.join().ok()).unwrap_or_default(),
        err: stderr.and_then(|h| h.join().ok()).unwrap_or_default(),
    }
}

fn prepend_path(dir: &Path) -> String {
    match std::env::var("PYTHONPATH") {
        Ok(existing) if !existing.is_empty() => format!("{}:{existing}", dir.display()),
        _ => dir.display().to_string(),
    }
}
