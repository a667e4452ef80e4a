//! Running one script in the task's execution environment when that is not the host
//! (docker, ssh, sandbox, singularity, modal, daytona): the script runs where the
//! model's `terminal` commands run, with the session's working directory and exported
//! variables, and its tool calls come back over the file channel of [`super::relay`].
//!
//! One run: check that `python3` exists there and make a private (0700) directory under
//! the environment's temp dir; upload the generated module (file transport, the run's
//! token inside) and the script; start the relay, then the script — stdout streamed
//! back, stderr to a file in the run's directory; enforce the time limit and
//! cancellation by killing the script's process group inside the environment; read
//! back stderr within its cap; remove the directory (which also ends the relay). The
//! limits, refusals and result shape are the host runner's (`outcome.rs`,
//! [`super::dispatch`]).

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::ToolCaller;
use super::dispatch::{Dispatcher, RpcOptions};
use super::outcome::{Captured, Ending, build_result, error_result};
use super::relay::Relay;
use super::run::new_token;
use super::settings::CodeExecutionSettings;
use super::stubs::{self, Transport};
use crate::context::ToolContext;
use crate::environments::shell::quote;
use crate::environments::{
    BackendKind, EnvError, ExecRequest, RunningCommand, TaskEnvironment, random_hex,
};

/// The interpreter looked for in the environment.
const PYTHON: &str = "python3";
/// Limit of each helper command (setup, stderr read-back, cleanup) and upload.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long output may keep arriving after the script exited (a pipe held by a
/// process it left behind is not waited for longer).
const OUTPUT_GRACE: Duration = Duration::from_secs(1);
/// How often the script's status is asked for while its output is still open.
const STATUS_INTERVAL: Duration = Duration::from_millis(250);
/// Marker the setup command prints when the environment has no `python3`.
const NO_PYTHON: &str = "TOOLHOST_NO_PYTHON3";
/// Marker the setup command prints when the run's directory exists.
const READY: &str = "TOOLHOST_EXEC_READY";

/// Why a remote run could not start (the model reads the message).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// No `python3` in the environment.
    #[error(
        "Python 3 is not available in the {backend} environment: execute_code runs the script where terminal commands run, and `python3` was not found there. Install Python 3 in the environment (for example an image with python3) or use normal tool calls."
    )]
    NoPython {
        /// The backend.
        backend: BackendKind,
    },
    /// The run's directory could not be made.
    #[error("cannot prepare the script's directory in the {backend} environment: {reason}")]
    Setup {
        /// The backend.
        backend: BackendKind,
        /// Why (the shell's output).
        reason: String,
    },
    /// A command in the environment failed to run.
    #[error("{what}: {source}")]
    Env {
        /// What was being done.
        what: &'static str,
        /// The backend's error.
        #[source]
        source: EnvError,
    },
}

/// One script to run remotely.
pub struct RemoteScript<'a> {
    /// The Python source.
    pub code: &'a str,
    /// Tools the script may call.
    pub tools: BTreeSet<String>,
}

/// The run's paths inside the environment.
struct RunDir {
    root: String,
    rpc: String,
    module: String,
    script: String,
    stderr: String,
}

impl RunDir {
    fn new(temp_dir: &str) -> Self {
        let root = format!(
            "{}/toolhost-exec-{}",
            temp_dir.trim_end_matches('/'),
            random_hex(12)
        );
        RunDir {
            rpc: format!("{root}/rpc"),
            module: format!("{root}/toolhost_tools.py"),
            script: format!("{root}/script.py"),
            stderr: format!("{root}/stderr"),
            root,
        }
    }

    /// The script's command line: the module's directory on `PYTHONPATH`, the request
    /// directory in `TOOLHOST_RPC_DIR`, stderr to its file, no stdin.
    fn command(&self) -> String {
        format!(
            "TOOLHOST_RPC_DIR={rpc} PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}} PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 {PYTHON} {script} 2>{stderr} </dev/null",
            rpc = quote(&self.rpc),
            root = quote(&self.root),
            script = quote(&self.script),
            stderr = quote(&self.stderr),
        )
    }
}

/// A helper command in the environment (not the model's: no approval, no hooks), run
/// in `/` so the session's working directory is left alone; its exit code and output.
fn helper(
    env: &TaskEnvironment,
    command: String,
    what: &'static str,
) -> Result<(i32, String), RemoteError> {
    let outcome = env
        .execute(&ExecRequest {
            command,
            workdir: Some("/".into()),
            timeout: STEP_TIMEOUT,
            cancel: None,
            max_output: 64 * 1024,
            spill: None,
            approved: false,
        })
        .map_err(|source| RemoteError::Env { what, source })?;
    Ok((outcome.exit_code, outcome.output.text))
}

/// Check for `python3` and make the run's directories (private to the user).
fn prepare(env: &TaskEnvironment, dir: &RunDir) -> Result<(), RemoteError> {
    let command = format!(
        "command -v {PYTHON} >/dev/null 2>&1 || {{ echo {NO_PYTHON}; exit 0; }}\n\
         umask 077 && mkdir -p -- {rpc} && echo {READY}",
        rpc = quote(&dir.rpc)
    );
    let (_, output) = helper(env, command, "checking for python3")?;
    if output.contains(NO_PYTHON) {
        return Err(RemoteError::NoPython {
            backend: env.kind(),
        });
    }
    if !output.contains(READY) {
        return Err(RemoteError::Setup {
            backend: env.kind(),
            reason: output.trim().chars().take(500).collect(),
        });
    }
    Ok(())
}

fn upload(
    env: &TaskEnvironment,
    dir: &RunDir,
    module: &str,
    code: &str,
) -> Result<(), RemoteError> {
    let backend = env.backend();
    backend
        .write_file(&dir.module, module.as_bytes(), STEP_TIMEOUT)
        .and_then(|()| backend.write_file(&dir.script, code.as_bytes(), STEP_TIMEOUT))
        .map_err(|source| RemoteError::Env {
            what: "uploading the script",
            source,
        })
}

/// The script's stdout, captured as it streams in; `done` once the stream ended.
#[derive(Default)]
struct Stdout {
    captured: Mutex<Captured>,
    done: AtomicBool,
}

fn stream_stdout(child: &mut dyn RunningCommand, cap: usize) -> Arc<Stdout> {
    let stdout = Arc::new(Stdout::default());
    let Some(mut output) = child.take_output() else {
        stdout.done.store(true, Ordering::SeqCst);
        return stdout;
    };
    let shared = Arc::clone(&stdout);
    let spawned = std::thread::Builder::new()
        .name("execute_code-stdout".into())
        .spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match output.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => shared
                        .captured
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(&buf[..n], cap),
                }
            }
            shared.done.store(true, Ordering::SeqCst);
        });
    if spawned.is_err() {
        stdout.done.store(true, Ordering::SeqCst);
    }
    stdout
}

/// Wait for the script, killing it (its whole process group inside the environment)
/// at the deadline or on cancellation. The end of its output says it is (nearly) done;
/// until then its status is asked for only now and then (for a container each ask is an
/// API request), in case a process it left behind holds the output open.
fn wait(
    child: &mut dyn RunningCommand,
    stdout: &Stdout,
    deadline: Instant,
    ctx: &ToolContext,
) -> (Ending, i32) {
    let mut last_ask = Instant::now();
    // After the output closed: fast at first (the status follows at once), then slower.
    let mut pause = Duration::from_millis(1);
    loop {
        let ask = stdout.done.load(Ordering::SeqCst) || last_ask.elapsed() >= STATUS_INTERVAL;
        if ask {
            last_ask = Instant::now();
            match child.try_wait() {
                Ok(Some(code)) => return (Ending::Exited(code), code),
                Ok(None) => {}
                Err(_) => return (Ending::Exited(-1), -1),
            }
        }
        let ending = if Instant::now() >= deadline {
            Ending::TimedOut
        } else if ctx.cancel.is_cancelled() {
            Ending::Cancelled
        } else {
            if stdout.done.load(Ordering::SeqCst) {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            } else {
                std::thread::sleep(Duration::from_millis(10));
            }
            continue;
        };
        child.kill();
        return (ending, child.try_wait().ok().flatten().unwrap_or(-1));
    }
}

/// What stdout holds once the stream ended (or after a short grace).
fn finish_stdout(stdout: &Stdout) -> Captured {
    let until = Instant::now() + OUTPUT_GRACE;
    while !stdout.done.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::mem::take(
        &mut *stdout
            .captured
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    )
}

/// The script's stderr file within `cap` bytes (head 40 % + tail 60 %, as stdout).
fn read_stderr(env: &TaskEnvironment, dir: &RunDir, cap: usize) -> Captured {
    let mut captured = Captured::default();
    let Ok(meta) = env.stat(&dir.stderr) else {
        return captured;
    };
    let total = usize::try_from(meta.len).unwrap_or(usize::MAX);
    if total <= cap {
        if let Ok(bytes) = env.backend().read_file(&dir.stderr, STEP_TIMEOUT) {
            captured.push(&bytes, cap);
        }
        return captured;
    }
    let head_cap = cap * 2 / 5;
    let tail_cap = cap - head_cap;
    let tail_file = format!("{}.tail", dir.stderr);
    let head = env.read_prefix(&dir.stderr, head_cap).unwrap_or_default();
    let cut = format!(
        "tail -c {tail_cap} {} > {}",
        quote(&dir.stderr),
        quote(&tail_file)
    );
    let tail = match helper(env, cut, "reading stderr") {
        Ok((0, _)) => env
            .backend()
            .read_file(&tail_file, STEP_TIMEOUT)
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    captured.head = head;
    captured.tail = tail.into_iter().collect();
    captured.total = total;
    captured
}

/// Run `script` in `env`; the result is always a JSON object.
pub fn execute_remote(
    script: &RemoteScript<'_>,
    settings: &CodeExecutionSettings,
    caller: Arc<dyn ToolCaller>,
    ctx: &ToolContext,
    env: &Arc<TaskEnvironment>,
) -> Value {
    let started = Instant::now();
    let dir = RunDir::new(&env.backend().temp_dir());
    let dispatcher = Arc::new(Dispatcher::new(RpcOptions {
        token: new_token(),
        allowed: script.tools.clone(),
        max_calls: settings.max_tool_calls,
        caller,
        ctx: ctx.clone(),
    }));
    let result = run_in(env, &dir, script, settings, &dispatcher, ctx, started);
    let removed = helper(
        env,
        format!("rm -rf -- {}", quote(&dir.root)),
        "cleaning up",
    );
    if let Err(err) = removed {
        tracing::warn!(%err, dir = %dir.root, "execute_code: the run's directory was left behind");
    }
    match result {
        Ok((relay, value)) => {
            relay.stop();
            value
        }
        Err(err) => error_result(err.to_string(), dispatcher.calls(), started),
    }
}

/// Everything between preparing the directory and removing it; the relay is returned
/// to be stopped after the directory is gone (which ends it on its own).
fn run_in(
    env: &Arc<TaskEnvironment>,
    dir: &RunDir,
    script: &RemoteScript<'_>,
    settings: &CodeExecutionSettings,
    dispatcher: &Arc<Dispatcher>,
    ctx: &ToolContext,
    started: Instant,
) -> Result<(Relay, Value), RemoteError> {
    prepare(env, dir)?;
    let tools: Vec<String> = script.tools.iter().cloned().collect();
    let token = dispatcher.token().to_string();
    let module = stubs::module_source(&tools, Transport::Files { token: &token });
    upload(env, dir, &module, script.code)?;
    let relay = Relay::start(env, PYTHON, &dir.rpc, Arc::clone(dispatcher)).map_err(|source| {
        RemoteError::Env {
            what: "starting the tool relay",
            source,
        }
    })?;
    let spawned = env.spawn_background(&dir.command(), None, false, false);
    let mut child = match spawned {
        Ok((child, _)) => child,
        Err(source) => {
            relay.stop();
            return Err(RemoteError::Env {
                what: "starting the script",
                source,
            });
        }
    };
    let stdout = stream_stdout(child.as_mut(), settings.max_stdout_bytes);
    let deadline = started + Duration::from_secs(settings.timeout.max(1));
    let (ending, exit_code) = wait(child.as_mut(), &stdout, deadline, ctx);
    let out = finish_stdout(&stdout);
    let err = read_stderr(env, dir, settings.max_stderr_bytes);
    let value = build_result(
        ending,
        exit_code,
        &out,
        &err,
        dispatcher.calls(),
        started,
        settings.timeout,
    );
    Ok((relay, value))
}
