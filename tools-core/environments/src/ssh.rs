//! The ssh backend: commands on a remote host through the OpenSSH client, multiplexed
//! over one master connection per environment. The master (`ssh -M -N`) is a child
//! process toolhost owns — not a daemon forked by `ControlPersist` — so it is killed and
//! reaped on cleanup like everything else. Host keys are checked against
//! `known_hosts_file` when one is configured, otherwise accepted on first use.
//!
//! The remote shell started by sshd is a session leader, so a timeout kills its whole
//! group remotely (through the pid file the wrapper writes) and then the local client.
//! Foreground commands go to one long-lived session per task instead where the remote
//! shell allows (`ssh_shell.rs`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::local::which;
use super::local_child::{LocalChild, LocalCommand};
use super::settings::SshSettings;
use super::shell::{self, quote};
use super::shell_connection::ShellConnection;
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, StdinMode};

/// Why the ssh backend cannot be used, if it cannot.
pub fn availability(settings: &SshSettings) -> Result<(), String> {
    let mut missing = Vec::new();
    if settings.host.is_empty() {
        missing.push("[terminal.ssh] host");
    }
    if settings.user.is_empty() {
        missing.push("[terminal.ssh] user");
    }
    if which("ssh").is_none() {
        missing.push("the `ssh` client (package openssh-client)");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("missing {}", missing.join(", ")))
    }
}

/// Arguments shared by every ssh invocation (before the destination); `master` for the
/// connection owner, otherwise a client of it.
pub fn base_args(settings: &SshSettings, control_path: &str, master: bool) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    let mut opt = |o: String| {
        args.push("-o".into());
        args.push(o);
    };
    opt(format!("ControlPath={control_path}"));
    if master {
        opt("ControlMaster=yes".into());
        opt("ControlPersist=no".into());
    } else {
        opt("ControlMaster=no".into());
    }
    opt("BatchMode=yes".into());
    opt(format!("ConnectTimeout={}", settings.connect_timeout));
    opt("ServerAliveInterval=15".into());
    if settings.known_hosts_file.is_empty() {
        opt("StrictHostKeyChecking=accept-new".into());
    } else {
        opt("StrictHostKeyChecking=yes".into());
        opt(format!("UserKnownHostsFile={}", settings.known_hosts_file));
    }
    for extra in &settings.options {
        opt(extra.clone());
    }
    args.push("-T".into());
    if settings.port != 22 {
        args.push("-p".into());
        args.push(settings.port.to_string());
    }
    if !settings.key.is_empty() {
        args.push("-i".into());
        args.push(settings.key.clone());
    }
    args.push(format!("{}@{}", settings.user, settings.host));
    args
}

/// The remote command line that runs `script` with `shell`.
pub fn remote_command(shell: &str, login: bool, script: &str) -> String {
    format!(
        "{shell}{} -c {}",
        if login { " -l" } else { "" },
        quote(script)
    )
}

/// A remote host.
pub struct SshEnvironment {
    settings: SshSettings,
    control_path: String,
    shell: String,
    master: std::sync::Mutex<Option<LocalChild>>,
}

impl std::fmt::Debug for SshEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshEnvironment")
            .field("destination", &self.describe())
            .finish_non_exhaustive()
    }
}

/// Start the master connection and wait until its socket answers.
// The ssh control connection; model commands run on the remote host.
#[allow(clippy::disallowed_methods)]
fn start_master(settings: &SshSettings, control_path: &str) -> Result<LocalChild, EnvError> {
    let mut args: Vec<OsString> = vec!["-N".into()];
    args.extend(
        base_args(settings, control_path, true)
            .into_iter()
            .map(OsString::from),
    );
    let mut master = LocalChild::spawn(LocalCommand {
        program: "ssh".into(),
        args,
        env: None,
        cwd: None,
        stdin: StdinMode::Null,
        pty: false,
        new_session: false,
        ..LocalCommand::default()
    })
    .map_err(|source| EnvError::Spawn {
        backend: BackendKind::Ssh,
        what: "ssh master connection".into(),
        source,
    })?;
    let deadline = std::time::Instant::now() + Duration::from_secs(settings.connect_timeout + 5);
    loop {
        if let Ok(Some(code)) = master.try_wait() {
            let mut text = String::new();
            if let Some(mut out) = master.take_output() {
                let _ = std::io::Read::read_to_string(&mut out, &mut text);
            }
            return Err(EnvError::Create {
                backend: BackendKind::Ssh,
                reason: format!(
                    "ssh {}@{}:{} failed (exit {code}): {}",
                    settings.user,
                    settings.host,
                    settings.port,
                    text.trim()
                ),
            });
        }
        let mut check = base_args(settings, control_path, false);
        check.insert(0, "check".into());
        check.insert(0, "-O".into());
        let ready = std::process::Command::new("ssh")
            .args(&check)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ready {
            return Ok(master);
        }
        if std::time::Instant::now() >= deadline {
            master.kill();
            return Err(EnvError::Timeout {
                backend: BackendKind::Ssh,
                operation: format!(
                    "connect to {}@{}:{}",
                    settings.user, settings.host, settings.port
                ),
                seconds: settings.connect_timeout + 5,
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl SshEnvironment {
    /// Open the master connection and probe the remote shell.
    pub fn new(settings: &SshSettings) -> Result<Self, EnvError> {
        availability(settings).map_err(|reason| EnvError::Unavailable {
            backend: BackendKind::Ssh,
            reason,
        })?;
        let dir = std::env::temp_dir().join("toolhost-ssh");
        std::fs::create_dir_all(&dir).map_err(|e| EnvError::io(dir.display().to_string(), e))?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        let control_path = dir
            .join(format!("{}.sock", super::random_hex(12)))
            .display()
            .to_string();
        let master = start_master(settings, &control_path)?;
        let mut env = SshEnvironment {
            settings: settings.clone(),
            control_path,
            shell: "sh".into(),
            master: std::sync::Mutex::new(Some(master)),
        };
        let (code, out) = super::exec::run_collect(
            &env,
            "command -v bash || true",
            StdinMode::Null,
            Duration::from_secs(settings.connect_timeout + 15),
        )
        .map_err(|e| EnvError::Create {
            backend: BackendKind::Ssh,
            reason: e.to_string(),
        })?;
        if code != 0 {
            return Err(EnvError::Create {
                backend: BackendKind::Ssh,
                reason: format!(
                    "ssh {}@{}:{} failed: {}",
                    settings.user,
                    settings.host,
                    settings.port,
                    super::shell_message(&out, code)
                ),
            });
        }
        if String::from_utf8_lossy(&out).trim().ends_with("bash") {
            env.shell = "bash".into();
        }
        Ok(env)
    }

    /// The arguments of a client session over the master connection (before `--`).
    pub(super) fn client_args(&self) -> Vec<OsString> {
        base_args(&self.settings, &self.control_path, false)
            .into_iter()
            .map(OsString::from)
            .collect()
    }

    /// The remote shell (`bash`, or `sh` where the remote has no bash).
    pub(super) fn shell_name(&self) -> &str {
        &self.shell
    }

    /// A client session running the remote command line `remote`.
    pub(super) fn ssh_command(&self, remote: String, stdin: StdinMode) -> LocalCommand {
        let mut args = self.client_args();
        args.push("--".into());
        args.push(remote.into());
        LocalCommand {
            program: "ssh".into(),
            args,
            env: None,
            cwd: None,
            stdin,
            pty: false,
            new_session: false,
            ..LocalCommand::default()
        }
    }
}

impl Environment for SshEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Ssh
    }

    fn default_cwd(&self) -> String {
        self.settings.cwd.clone()
    }

    fn shell(&self) -> &str {
        &self.shell
    }

    fn supports_stdin(&self) -> bool {
        true
    }

    // The ssh client (and its remote kill); model commands run on the remote host.
    #[allow(clippy::disallowed_methods)]
    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        let remote = remote_command(&self.shell, request.login, &request.script);
        let child =
            LocalChild::spawn(self.ssh_command(remote, request.stdin)).map_err(|source| {
                EnvError::Spawn {
                    backend: BackendKind::Ssh,
                    what: "ssh".into(),
                    source,
                }
            })?;
        let child = match request.pid_file {
            Some(pid_file) => {
                let kill = self.ssh_command(
                    remote_command("sh", false, &shell::kill_group_script(&pid_file)),
                    StdinMode::Null,
                );
                child.on_kill(move || {
                    let mut cmd = std::process::Command::new(&kill.program);
                    cmd.args(&kill.args)
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null());
                    let _ = cmd.status();
                })
            }
            None => child,
        };
        Ok(Box::new(child))
    }

    fn open_shell(&self) -> Option<Result<Box<dyn ShellConnection>, EnvError>> {
        Some(super::ssh_shell::open(self))
    }

    fn describe(&self) -> String {
        format!(
            "ssh {}@{}:{}",
            self.settings.user, self.settings.host, self.settings.port
        )
    }

    // Closes the ssh control connection; runs no model code.
    #[allow(clippy::disallowed_methods)]
    fn cleanup(&self) -> Result<(), EnvError> {
        let mut args = base_args(&self.settings, &self.control_path, false);
        args.insert(0, "exit".into());
        args.insert(0, "-O".into());
        let _ = std::process::Command::new("ssh")
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        let master = self
            .master
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(mut master) = master {
            // Exits on its own after `-O exit`; this kills and reaps it either way.
            if !matches!(master.try_wait(), Ok(Some(_))) {
                std::thread::sleep(Duration::from_millis(100));
            }
            if !matches!(master.try_wait(), Ok(Some(_))) {
                master.kill();
            }
        }
        let _ = std::fs::remove_file(PathBuf::from(&self.control_path));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_carry_the_settings() {
        let settings = SshSettings {
            host: "example.org".into(),
            user: "me".into(),
            port: 2222,
            key: "/k".into(),
            known_hosts_file: "/kh".into(),
            ..SshSettings::default()
        };
        let args = base_args(&settings, "/tmp/c.sock", false).join(" ");
        assert!(args.contains("ControlPath=/tmp/c.sock"));
        assert!(args.contains("ControlMaster=no"));
        let master = base_args(&settings, "/tmp/c.sock", true).join(" ");
        assert!(master.contains("ControlMaster=yes") && master.contains("ControlPersist=no"));
        assert!(args.contains("BatchMode=yes"));
        assert!(args.contains("StrictHostKeyChecking=yes"));
        assert!(args.contains("UserKnownHostsFile=/kh"));
        assert!(args.contains("-p 2222"));
        assert!(args.contains("-i /k"));
        assert!(args.ends_with("me@example.org"));
    }

    #[test]
    fn remote_command_quotes_the_script() {
        assert_eq!(
            remote_command("bash", true, "echo 'x'"),
            r"bash -l -c 'echo '\''x'\'''"
        );
    }

    #[test]
    fn availability_names_what_is_missing() {
        let err = availability(&SshSettings::default()).unwrap_err();
        assert!(err.contains("host") && err.contains("user"), "{err}");
    }
}
