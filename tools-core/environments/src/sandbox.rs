//! The sandbox backend (beyond Hermes): local commands inside bubblewrap. The system
//! directories are mounted read-only, the workdir is the only writable host directory,
//! `/tmp` is a private per-environment directory, `$HOME` is `/tmp`, the network is
//! off unless `[terminal.sandbox] network = true`, and everything lives in its own PID
//! namespace whose pid 1 stays in our process group — killing the local process group
//! kills the whole sandboxed tree (see `spawn`). It runs in a session of its own with
//! no controlling terminal, so it cannot push input into the user's terminal.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::containment::Scope;
use super::local::{host_shell, which};
use super::local_child::{LocalChild, LocalCommand};
use super::settings::SandboxSettings;
use super::shell_connection::{LocalShell, ShellConnection};
use super::{
    BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, StdinMode, env_filter,
    persistent_script, spawn_thread,
};

/// Commands in a bubblewrap sandbox.
#[derive(Debug)]
pub struct SandboxEnvironment {
    bwrap: PathBuf,
    shell: String,
    workdir: PathBuf,
    /// The private `/tmp`; removed when the environment is dropped.
    scratch: tempfile::TempDir,
    settings: SandboxSettings,
    passthrough: Vec<String>,
}

/// Why the sandbox cannot run here, if it cannot.
// Probes the configured bwrap binary (`--version`); runs no model code.
#[allow(clippy::disallowed_methods)]
pub fn availability(settings: &SandboxSettings) -> Result<(), String> {
    let bwrap = which(&settings.bwrap).ok_or_else(|| {
        format!(
            "`{}` not found on PATH (install bubblewrap)",
            settings.bwrap
        )
    })?;
    let status = std::process::Command::new(&bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--unshare-all",
            "--die-with-parent",
            "true",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
    if status.status.success() {
        Ok(())
    } else {
        Err(format!(
            "bwrap cannot create namespaces here: {}",
            String::from_utf8_lossy(&status.stderr).trim()
        ))
    }
}

impl SandboxEnvironment {
    /// A sandbox whose writable directory is `settings.workdir` (or `default_workdir`).
    pub fn new(
        settings: &SandboxSettings,
        default_workdir: &str,
        passthrough: Vec<String>,
    ) -> Result<Self, EnvError> {
        let unavailable = |reason: String| EnvError::Unavailable {
            backend: BackendKind::Sandbox,
            reason,
        };
        let bwrap = which(&settings.bwrap)
            .ok_or_else(|| unavailable(format!("`{}` not found on PATH", settings.bwrap)))?;
        let workdir = if !settings.workdir.is_empty() {
            settings.workdir.clone()
        } else if default_workdir.is_empty() || default_workdir == "." {
            std::env::current_dir()
                .map(|p| p.display().to_string())
                .map_err(|e| EnvError::io("current directory", e))?
        } else {
            default_workdir.to_string()
        };
        let workdir = PathBuf::from(&workdir)
            .canonicalize()
            .map_err(|e| EnvError::io(format!("sandbox workdir {workdir}"), e))?;
        let scratch = tempfile::Builder::new()
            .prefix("toolhost-sandbox-")
            .tempdir()
            .map_err(|e| EnvError::io("sandbox scratch directory", e))?;
        Ok(SandboxEnvironment {
            bwrap,
            shell: host_shell(),
            workdir,
            scratch,
            settings: settings.clone(),
            passthrough,
        })
    }

    /// The writable directory.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The bwrap command running `request`'s script.
    fn command(&self, request: SpawnRequest) -> LocalCommand {
        let mut args = self.bwrap_args();
        args.push("--".into());
        args.push(self.shell.clone().into());
        if request.login {
            args.push("-l".into());
        }
        args.push("-c".into());
        args.push(request.script.into());
        let mut env = env_filter::command_env(std::env::vars_os(), &self.passthrough);
        env.retain(|(k, _)| k != "HOME" && k != "TMPDIR");
        LocalCommand {
            program: self.bwrap.clone().into(),
            args,
            env: Some(env),
            cwd: Some(self.workdir.clone()),
            stdin: request.stdin,
            pty: request.pty,
            // In place of bwrap's `--new-session`, which moves the sandboxed tree out of
            // our process group: killed in the few microseconds between its setsid and
            // its parent-death signal, bwrap leaves that tree running. In our group, the
            // group kill reaches the sandbox's pid 1 and, through it, everything inside.
            new_session: true,
            ..LocalCommand::default()
        }
    }

    /// The bwrap arguments before the shell.
    pub fn bwrap_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push =
            |items: &[&std::ffi::OsStr]| args.extend(items.iter().map(|s| s.to_os_string()));
        push(&["--die-with-parent".as_ref(), "--unshare-all".as_ref()]);
        if self.settings.network {
            push(&["--share-net".as_ref()]);
        }
        for ro in &self.settings.ro_paths {
            let path = Path::new(ro);
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(path) {
                        push(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()]);
                    }
                }
                Ok(_) => push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]),
                Err(_) => {}
            }
        }
        push(&[
            "--proc".as_ref(),
            "/proc".as_ref(),
            "--dev".as_ref(),
            "/dev".as_ref(),
        ]);
        push(&[
            "--bind".as_ref(),
            self.scratch.path().as_os_str(),
            "/tmp".as_ref(),
        ]);
        push(&[
            "--bind".as_ref(),
            self.workdir.as_os_str(),
            self.workdir.as_os_str(),
        ]);
        for rw in &self.settings.rw_paths {
            let path = Path::new(rw);
            if path.exists() {
                push(&["--bind".as_ref(), path.as_os_str(), path.as_os_str()]);
            }
        }
        push(&["--setenv".as_ref(), "HOME".as_ref(), "/tmp".as_ref()]);
        push(&["--setenv".as_ref(), "TMPDIR".as_ref(), "/tmp".as_ref()]);
        push(&["--chdir".as_ref(), self.workdir.as_os_str()]);
        args
    }
}

impl Environment for SandboxEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Sandbox
    }

    fn host_access(&self) -> bool {
        false
    }

    fn default_cwd(&self) -> String {
        self.workdir.display().to_string()
    }

    fn shell(&self) -> &str {
        &self.shell
    }

    fn supports_pty(&self) -> bool {
        true
    }

    fn supports_stdin(&self) -> bool {
        true
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        let child = LocalChild::spawn(self.command(request)).map_err(|source| EnvError::Spawn {
            backend: BackendKind::Sandbox,
            what: "bwrap".into(),
            source,
        })?;
        Ok(Box::new(child))
    }

    fn open_shell(&self) -> Option<Result<Box<dyn ShellConnection>, EnvError>> {
        if self.shell != "bash" {
            return None;
        }
        let spec = self.command(SpawnRequest {
            script: persistent_script::DRIVER.into(),
            stdin: StdinMode::Piped,
            ..SpawnRequest::default()
        });
        // The sandbox's private /tmp, seen from the host.
        let path_map = Some(("/tmp".to_string(), self.scratch.path().to_path_buf()));
        // bwrap's parent-death signal follows the starting thread: start it on one that
        // stays.
        let shell =
            spawn_thread::on_spawner_thread(move || LocalChild::spawn_in(spec, Some(Scope::new())))
                .and_then(|child| LocalShell::new(child, path_map))
                .map(|shell| Box::new(shell) as Box<dyn ShellConnection>)
                .map_err(|source| EnvError::Spawn {
                    backend: BackendKind::Sandbox,
                    what: "persistent bwrap".into(),
                    source,
                });
        Some(shell)
    }

    fn describe(&self) -> String {
        format!("sandbox (bwrap, writable {})", self.workdir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StdinMode;
    use crate::local_child::ProcStat;
    use std::io::Read;
    use std::time::Duration;

    /// Live processes whose command line contains `needle`: their `/proc` directory
    /// and command line.
    fn processes_with(needle: &str) -> Vec<(std::path::PathBuf, String)> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| {
                let raw = std::fs::read(e.path().join("cmdline")).ok()?;
                let line = String::from_utf8_lossy(&raw).replace('\0', " ");
                line.contains(needle).then(|| (e.path(), line))
            })
            .collect()
    }

    /// A sandbox in a fresh workdir; the test fails, saying why, where bwrap cannot
    /// run (the tests using it are `#[ignore = "needs bubblewrap"]`).
    fn sandbox() -> (SandboxEnvironment, tempfile::TempDir) {
        let settings = SandboxSettings::default();
        if let Err(reason) = availability(&settings) {
            panic!("this test needs bubblewrap (.ci/setup-terminal.sh installs it): {reason}");
        }
        let workdir = tempfile::tempdir().unwrap();
        let env =
            SandboxEnvironment::new(&settings, &workdir.path().display().to_string(), Vec::new())
                .unwrap();
        (env, workdir)
    }

    fn start(env: &SandboxEnvironment, script: String, pty: bool) -> Box<dyn RunningCommand> {
        env.spawn(SpawnRequest {
            script,
            login: false,
            stdin: StdinMode::Null,
            pty,
            pid_file: None,
            approved: false,
        })
        .unwrap()
    }

    #[test]
    #[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
    fn a_kill_while_bwrap_starts_leaves_nothing_running() {
        let (env, _workdir) = sandbox();
        // The window is the first few milliseconds of bwrap's start; sweep across it.
        let tag = format!("{}", 700_000 + std::process::id() % 99_991);
        for round in 0..40u64 {
            let needle = format!("sleep {tag}{round}");
            let mut child = start(&env, format!("echo started; {needle}"), false);
            std::thread::sleep(Duration::from_micros(round % 8 * 750));
            child.kill();
            let gone = (0..50).any(|_| {
                std::thread::sleep(Duration::from_millis(20));
                processes_with(&needle).is_empty()
            });
            assert!(gone, "round {round}: {:?}", processes_with(&needle));
        }
    }

    #[test]
    #[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
    fn a_sandboxed_command_runs_outside_our_session() {
        let (env, _workdir) = sandbox();
        let needle = format!("sleep {}", 600_000 + std::process::id() % 99_991);
        let mut child = start(&env, needle.clone(), false);
        let session_of_sleep = (0..100).find_map(|_| {
            std::thread::sleep(Duration::from_millis(20));
            let (dir, _) = processes_with(&needle)
                .into_iter()
                .find(|(_, line)| line.trim() == needle)?;
            ProcStat::read(&dir).map(|stat| stat.session)
        });
        child.kill();
        // Read from /proc, not getsid(2): when our session leader lives outside our pid
        // namespace (CI containers) the kernel reports session 0, which rustix rejects.
        let ours = ProcStat::read(Path::new("/proc/self"))
            .expect("our own session")
            .session;
        let theirs = session_of_sleep.expect("the sandboxed sleep never showed up");
        assert_ne!(
            theirs, ours,
            "the sandbox shares our session (and terminal)"
        );
    }

    #[test]
    #[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
    fn a_pty_command_has_its_pty_as_controlling_terminal() {
        let (env, _workdir) = sandbox();
        let mut child = start(
            &env,
            "exec 3</dev/tty && echo controlling-tty || echo none".into(),
            true,
        );
        let mut output = String::new();
        child
            .take_output()
            .unwrap()
            .read_to_string(&mut output)
            .unwrap();
        child.wait().unwrap();
        assert!(output.contains("controlling-tty"), "{output:?}");
    }
}
