//! The local backend: commands run on this host with bash (or `sh` when bash is
//! missing), each in its own process group and containment scope
//! ([`super::containment`]), so a timeout, a kill or the command's end stops everything
//! it started, daemons and `setsid` included.
//! The environment is the host's minus withheld credentials ([`super::env_filter`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::local_child::{LocalChild, LocalCommand};
use super::shell_connection::{LocalShell, ShellConnection};
use super::{
    BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, StdinMode, env_filter,
    persistent_script,
};

/// Find `name` on `PATH`.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    if name.contains('/') {
        let p = Path::new(name);
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// The host shell scripts run with: bash when installed, else `sh`.
pub fn host_shell() -> String {
    if which("bash").is_some() {
        "bash".into()
    } else {
        "sh".into()
    }
}

/// Commands on this host.
#[derive(Debug)]
pub struct LocalEnvironment {
    shell: String,
    passthrough: Vec<String>,
    default_cwd: String,
    /// The kernel floor applied to every command through the execution policy
    /// (`terminal.local.confine`; lifted only for what a human approved).
    #[cfg(target_os = "linux")]
    floor: super::exec_policy::Floor,
    /// A private temp directory for session snapshots, made before the floor is prepared
    /// so it is writable even when `/tmp` is carved around toolhost's own files.
    session_temp: Option<tempfile::TempDir>,
}

impl LocalEnvironment {
    /// A local backend starting in `default_cwd` (empty = toolhost's cwd), passing the
    /// `passthrough` variables through the secret filter.
    pub fn new(default_cwd: &str, passthrough: Vec<String>) -> Self {
        let default_cwd = if default_cwd.is_empty() || default_cwd == "." {
            std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "/".into())
        } else {
            default_cwd.to_string()
        };
        LocalEnvironment {
            shell: host_shell(),
            passthrough,
            default_cwd,
            #[cfg(target_os = "linux")]
            floor: super::exec_policy::Floor::fixed(None),
            session_temp: None,
        }
    }

    /// Confine every command as `settings` say (Linux; elsewhere a warning when asked).
    pub fn confined(
        mut self,
        settings: &super::settings::LocalSettings,
        toolhost_home: &Path,
    ) -> Self {
        #[cfg(target_os = "linux")]
        {
            let mut settings = settings.clone();
            if settings.confine != super::settings::ConfineMode::Off {
                match tempfile::Builder::new()
                    .prefix("toolhost-session-")
                    .tempdir()
                {
                    Ok(dir) => {
                        settings.writable.push(dir.path().display().to_string());
                        self.session_temp = Some(dir);
                    }
                    Err(error) => {
                        tracing::warn!(%error, "no private temp directory for confined sessions");
                    }
                }
            }
            let settings = &settings;
            self.floor = super::exec_policy::Floor::prepare(
                settings,
                Path::new(&self.default_cwd),
                toolhost_home,
            );
        }
        #[cfg(not(target_os = "linux"))]
        if settings.confine != super::settings::ConfineMode::Off {
            let _ = toolhost_home;
            tracing::warn!("terminal.local.confine needs Linux; commands run unconfined");
        }
        self
    }

    pub(crate) fn command(&self, request: SpawnRequest) -> LocalCommand {
        #[cfg(target_os = "linux")]
        let (confine, _decision) = {
            use super::exec_policy::{Approval, CodePath};
            let approval = if request.approved {
                Approval::Human
            } else {
                Approval::Unjudged
            };
            self.floor.select(CodePath::Terminal, approval)
        };
        let mut args: Vec<OsString> = Vec::new();
        if request.login {
            args.push("-l".into());
        }
        args.push("-c".into());
        args.push(request.script.into());
        LocalCommand {
            program: self.shell.clone().into(),
            args,
            env: Some(env_filter::command_env(
                std::env::vars_os(),
                &self.passthrough,
            )),
            cwd: None,
            stdin: request.stdin,
            pty: request.pty,
            new_session: false,
            #[cfg(target_os = "linux")]
            confine,
        }
    }
}

impl Environment for LocalEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Local
    }

    fn default_cwd(&self) -> String {
        self.default_cwd.clone()
    }

    fn temp_dir(&self) -> String {
        match &self.session_temp {
            Some(dir) => dir.path().display().to_string(),
            None => std::env::temp_dir().display().to_string(),
        }
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
        let child = LocalChild::spawn_contained(self.command(request)).map_err(|source| {
            EnvError::Spawn {
                backend: BackendKind::Local,
                what: self.shell.clone(),
                source,
            }
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
        let shell = LocalChild::spawn_contained(spec)
            .and_then(|child| LocalShell::new(child, None))
            .map(|shell| Box::new(shell) as Box<dyn ShellConnection>)
            .map_err(|source| EnvError::Spawn {
                backend: BackendKind::Local,
                what: "persistent bash".into(),
                source,
            });
        Some(shell)
    }

    fn describe(&self) -> String {
        format!("local ({})", self.shell)
    }

    fn read_file(&self, path: &str, _timeout: Duration) -> Result<Vec<u8>, EnvError> {
        let path = expand_home(path);
        std::fs::read(&path).map_err(|err| EnvError::File {
            backend: BackendKind::Local,
            operation: "read",
            path: path.display().to_string(),
            reason: err.to_string(),
        })
    }

    fn write_file(&self, path: &str, data: &[u8], _timeout: Duration) -> Result<(), EnvError> {
        let path = expand_home(path);
        let result = match path.parent() {
            Some(parent) => std::fs::create_dir_all(parent),
            None => Ok(()),
        }
        .and_then(|()| std::fs::write(&path, data));
        result.map_err(|err| EnvError::File {
            backend: BackendKind::Local,
            operation: "write",
            path: path.display().to_string(),
            reason: err.to_string(),
        })
    }
}

/// `~` and `~/x` against `$HOME`.
fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if path == "~" {
        if let Some(home) = home() {
            return home;
        }
    } else if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = home()
    {
        return home.join(rest);
    }
    PathBuf::from(path)
}
