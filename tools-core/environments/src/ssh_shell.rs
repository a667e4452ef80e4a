//! The ssh backend's persistent shell: one ssh session per task, multiplexed over the
//! environment's master connection, running the remote driver
//! ([`super::remote_script`]) under the remote shell, so a command costs a line on an
//! open channel and a `fork` on the remote instead of a new session and shell.
//!
//! The session is started exactly like the per-command sessions (`ssh … -- <shell> -c
//! …`, non-login, by the user's login shell through sshd), so its environment is the
//! one they get; each command sources the session snapshot of the login environment
//! on top, as before. A timeout ends the command from a second session.

use std::ffi::OsString;
use std::io::Write;
use std::time::{Duration, Instant};

use super::local_child::LocalChild;
use super::remote_shell::{OpenError, RemoteShell, ShellTransport, SideRunner, new_mark};
use super::shell_connection::{ShellConnection, poll_read};
use super::ssh::{SshEnvironment, remote_command};
use super::{BackendKind, EnvError, RunningCommand, StdinMode, remote_script};

/// How long a closed session may take to end before its client is killed.
const CLOSE_WAIT: Duration = Duration::from_millis(500);

/// The ssh client carrying a persistent shell.
struct SshTransport {
    child: LocalChild,
    stdin: Option<Box<dyn Write + Send>>,
    output: std::io::PipeReader,
}

impl ShellTransport for SshTransport {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the session's input is closed"))?;
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>> {
        poll_read(&mut self.output, buf, timeout)
    }

    fn exit_code(&mut self) -> Option<i32> {
        self.child.try_wait().ok().flatten()
    }

    fn local_pid(&self) -> Option<u32> {
        self.child.pid()
    }

    fn close(&mut self) {
        self.stdin = None;
        let until = Instant::now() + CLOSE_WAIT;
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // Dropping the child kills the client if it is still there.
    }
}

/// Start a persistent shell in a new session of `env`.
// The ssh client of the remote persistent shell; model commands run on the remote host.
#[allow(clippy::disallowed_methods)]
pub(super) fn open(env: &SshEnvironment) -> Result<Box<dyn ShellConnection>, EnvError> {
    let spawn_err = |source: std::io::Error| EnvError::Spawn {
        backend: BackendKind::Ssh,
        what: "persistent ssh session".into(),
        source,
    };
    let mark = new_mark();
    let remote = format!(
        "env {}={mark} {}",
        super::containment::SCOPE_ENV,
        remote_command(env.shell_name(), false, &remote_script::driver(&mark))
    );
    let mut child =
        LocalChild::spawn(env.ssh_command(remote, StdinMode::Piped)).map_err(spawn_err)?;
    let missing =
        |what: &str| spawn_err(std::io::Error::other(format!("ssh started without {what}")));
    let stdin = child.take_stdin().ok_or_else(|| missing("a stdin pipe"))?;
    let output = child
        .take_output_pipe()
        .ok_or_else(|| missing("an output pipe"))?;
    let transport = SshTransport {
        child,
        stdin: Some(stdin),
        output,
    };
    let args: Vec<OsString> = env.client_args();
    let side: SideRunner = Box::new(move |script: &str| {
        std::process::Command::new("ssh")
            .args(&args)
            .arg("--")
            .arg(remote_command("sh", false, script))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    RemoteShell::open(Box::new(transport), side, mark)
        .map(|shell| Box::new(shell) as Box<dyn ShellConnection>)
        .map_err(|err| match err {
            OpenError::Io(source) => spawn_err(source),
            other => EnvError::Api {
                backend: BackendKind::Ssh,
                operation: "persistent shell".into(),
                reason: other.to_string(),
            },
        })
}
