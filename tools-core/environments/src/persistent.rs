//! [`PersistentShell`]: one long-lived bash per task environment, so a command costs a
//! `fork` of an idle shell instead of starting a new shell (and its helper processes).
//!
//! The protocol and the wrapper are in [`super::persistent_script`]; the process
//! handling (wait with a timeout, end one command's tree) in
//! [`super::shell_connection`]. This file runs one command: send its line, frame its
//! output into the capture, watch the deadline and the cancellation token, end what
//! the command left behind, and say whether the shell is still fit for the next one.
//!
//! A shell that misbehaves costs at most a new shell: when it dies, does not answer
//! after a kill, or cannot end a command's leftovers, it is dropped (killing all it
//! started) and the next command starts a fresh one; a command whose line could not
//! be delivered never started and runs through the one-shot path instead.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::capture::OutputCapture;
use super::exec::Ending;
use super::persistent_script::{self as script, Frame, Framer, Sentinels};
use super::shell::SessionScripts;
use super::shell_connection::ShellConnection;
use super::{EnvError, Environment};

/// How long a new shell may take to answer its first line.
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the shell may take to report a killed command's end.
const AFTER_KILL: Duration = Duration::from_secs(3);
/// The longest wait between checks of the cancellation token.
const TICK: Duration = Duration::from_millis(20);

/// Why a persistent shell could not run a command.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The backend has no persistent shell (or not with bash).
    #[error("this backend runs one shell per command")]
    Unsupported,
    /// Starting the shell failed.
    #[error("starting the persistent shell: {0}")]
    Start(#[from] EnvError),
    /// The shell did not answer its first line.
    #[error("the persistent shell did not start: {0}")]
    NotReady(String),
    /// The command cannot be sent as one line (it holds a NUL byte).
    #[error("the command cannot be sent to a shell (NUL byte)")]
    Unsendable,
    /// The line could not be delivered: the command did not start.
    #[error("the persistent shell is gone: {0}")]
    Gone(std::io::Error),
}

/// How a command run through the persistent shell ended.
#[derive(Debug)]
pub struct ShellRun {
    /// Exit, timeout or interruption.
    pub ending: Ending,
    /// False when the shell must not be used again.
    pub reusable: bool,
}

/// A long-lived shell (see the module doc).
pub struct PersistentShell {
    conn: Box<dyn ShellConnection>,
    token: String,
    next: u64,
}

impl std::fmt::Debug for PersistentShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentShell")
            .field("commands", &self.next)
            .finish_non_exhaustive()
    }
}

impl PersistentShell {
    /// Start a shell on `backend` and wait until it answers.
    pub fn start(backend: &dyn Environment) -> Result<Self, ShellError> {
        let conn = backend.open_shell().ok_or(ShellError::Unsupported)??;
        let mut shell = PersistentShell {
            conn,
            token: super::random_hex(16),
            next: 0,
        };
        let sentinels = Sentinels::new(&shell.token, 0);
        let line = format!(
            "printf '%s\\n' '{}'; printf '{}%s__\\n' 0\n",
            sentinels.start, sentinels.end
        );
        shell.conn.send(line.as_bytes()).map_err(ShellError::Gone)?;
        let mut framer = Framer::new(&sentinels);
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut buf = vec![0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ShellError::NotReady("no answer in time".into()));
            }
            match shell.conn.recv(&mut buf, left) {
                Ok(Some(0)) => return Err(ShellError::NotReady("it exited".into())),
                Ok(Some(n)) => {
                    if let Frame::Closed(_) = framer.feed(&buf[..n], &mut |_| {}) {
                        break;
                    }
                }
                Ok(None) => {}
                Err(err) => return Err(ShellError::NotReady(err.to_string())),
            }
        }
        shell.conn.settle();
        Ok(shell)
    }

    /// The shell's process id on this host, where it has one.
    pub fn pid(&self) -> Option<u32> {
        self.conn.pid()
    }

    /// The environment mark of a shell on another machine (every process it started
    /// carries `TOOLHOST_SCOPE=<mark>`).
    pub fn mark(&self) -> Option<&str> {
        self.conn.mark()
    }

    /// Run `command` in `cwd` with the session `scripts`, capturing into `capture`.
    pub fn run(
        &mut self,
        scripts: &SessionScripts,
        command: &str,
        cwd: &str,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
        capture: &mut OutputCapture,
    ) -> Result<ShellRun, ShellError> {
        self.next += 1;
        let sentinels = Sentinels::new(&self.token, self.next);
        let wrapper = script::wrapper(scripts, command, cwd);
        let line = self
            .conn
            .command_line(&sentinels, &wrapper, scripts)
            .ok_or(ShellError::Unsendable)?;
        if let Some(code) = self.conn.exit_code() {
            return Err(ShellError::Gone(std::io::Error::other(format!(
                "exited with {code}"
            ))));
        }
        self.conn.send(line.as_bytes()).map_err(ShellError::Gone)?;
        let mut framer = Framer::new(&sentinels);
        let mut run = self.wait(&mut framer, timeout, cancel, capture);
        if !framer.started() && !run.reusable && matches!(run.ending, Ending::Exited(_)) {
            // The shell died before it started the command (the start sentinel is
            // printed before the command runs): safe to run it elsewhere.
            return Err(ShellError::Gone(std::io::Error::other(
                "the shell ended before the command started",
            )));
        }
        let rest = framer.into_rest();
        if !run.reusable && !rest.is_empty() {
            capture.push(&rest);
        }
        if run.reusable {
            run.reusable = self.conn.end_leftovers();
            let next = script::next_snapshot(scripts);
            self.conn.rename(&next, &scripts.snapshot);
        }
        Ok(run)
    }

    fn wait(
        &mut self,
        framer: &mut Framer,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
        capture: &mut OutputCapture,
    ) -> ShellRun {
        let mut deadline = Instant::now() + timeout;
        let mut killed: Option<Ending> = None;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let now = Instant::now();
            if killed.is_none() {
                let why = if cancel.is_some_and(CancellationToken::is_cancelled) {
                    Some(Ending::Interrupted)
                } else if now >= deadline {
                    Some(Ending::TimedOut)
                } else {
                    None
                };
                if let Some(why) = why {
                    self.conn.kill_command();
                    killed = Some(why);
                    deadline = Instant::now() + AFTER_KILL;
                    continue;
                }
            } else if now >= deadline {
                // Killed, yet the shell does not say the command ended.
                return ShellRun {
                    ending: killed.unwrap_or(Ending::TimedOut),
                    reusable: false,
                };
            }
            let wait = deadline.saturating_duration_since(now).min(match cancel {
                Some(_) => TICK,
                None => Duration::MAX,
            });
            match self.conn.recv(&mut buf, wait) {
                Ok(Some(0)) | Err(_) => {
                    // The shell itself died (`kill $$`, a crash): its status is the
                    // command's, as it was with one shell per command.
                    let code = self.exit_code_after_eof();
                    return ShellRun {
                        ending: killed.unwrap_or(Ending::Exited(code)),
                        reusable: false,
                    };
                }
                Ok(Some(n)) => {
                    if let Frame::Closed(code) = framer.feed(&buf[..n], &mut |b| capture.push(b)) {
                        return ShellRun {
                            ending: killed.unwrap_or(Ending::Exited(code)),
                            reusable: true,
                        };
                    }
                }
                Ok(None) => {}
            }
        }
    }

    fn exit_code_after_eof(&mut self) -> i32 {
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            if let Some(code) = self.conn.exit_code() {
                return code;
            }
            if Instant::now() >= until {
                return -1;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
