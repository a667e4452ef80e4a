//! The singularity backend: an Apptainer / SingularityCE instance per task, driven through
//! the documented CLI (`instance start`, `exec instance://NAME`, `instance stop`).
//!
//! `exec` replaces itself with the command inside the instance's namespaces, so the
//! local process group *is* the command's: timeouts kill it locally. Not verified live in
//! CI (no apptainer on these machines); the command lines are unit-tested.

use std::ffi::OsString;

use super::local::which;
use super::local_child::{LocalChild, LocalCommand};
use super::settings::SingularitySettings;
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest};

/// The binary to use: the configured one, else `apptainer`, else `singularity`.
pub fn binary(settings: &SingularitySettings) -> Option<String> {
    if !settings.binary.is_empty() {
        return which(&settings.binary).map(|_| settings.binary.clone());
    }
    ["apptainer", "singularity"]
        .into_iter()
        .find(|b| which(b).is_some())
        .map(str::to_string)
}

/// Why the backend cannot be used, if it cannot.
// Probes the configured singularity binary; runs no model code.
#[allow(clippy::disallowed_methods)]
pub fn availability(settings: &SingularitySettings) -> Result<(), String> {
    let bin = binary(settings).ok_or_else(|| {
        "neither `apptainer` nor `singularity` is on PATH (install Apptainer)".to_string()
    })?;
    let out = std::process::Command::new(&bin)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {bin}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`{bin} --version` failed"))
    }
}

/// `instance start` arguments (pure: unit-tested).
pub fn start_args(settings: &SingularitySettings, image: &str, instance: &str) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "instance".into(),
        "start".into(),
        "--containall".into(),
        "--no-home".into(),
    ];
    if settings.writable_tmpfs {
        args.push("--writable-tmpfs".into());
    }
    for bind in &settings.binds {
        args.push("--bind".into());
        args.push(bind.clone());
    }
    if settings.memory_mb > 0 {
        args.push("--memory".into());
        args.push(format!("{}M", settings.memory_mb));
    }
    if settings.cpu > 0.0 {
        args.push("--cpus".into());
        args.push(settings.cpu.to_string());
    }
    args.push(image.to_string());
    args.push(instance.to_string());
    args
}

/// `exec` arguments for one script.
pub fn exec_args(instance: &str, login: bool, script: &str) -> Vec<String> {
    let mut args = vec![
        "exec".to_string(),
        format!("instance://{instance}"),
        "sh".into(),
    ];
    if login {
        args.push("-l".into());
    }
    args.push("-c".into());
    args.push(script.to_string());
    args
}

/// An instance for one task.
#[derive(Debug)]
pub struct SingularityEnvironment {
    binary: String,
    instance: String,
    cwd: String,
}

impl SingularityEnvironment {
    /// Start an instance of `image` (or the configured one).
    // Starts the container instance; model commands run inside it (its isolation).
    #[allow(clippy::disallowed_methods)]
    pub fn new(settings: &SingularitySettings, image: Option<&str>) -> Result<Self, EnvError> {
        availability(settings).map_err(|reason| EnvError::Unavailable {
            backend: BackendKind::Singularity,
            reason,
        })?;
        let binary = binary(settings).unwrap_or_else(|| "apptainer".into());
        let instance = format!("toolhost-{}", super::random_hex(8));
        let image = image.unwrap_or(&settings.image);
        let out = std::process::Command::new(&binary)
            .args(start_args(settings, image, &instance))
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| EnvError::io(format!("{binary} instance start"), e))?;
        if !out.status.success() {
            return Err(EnvError::Create {
                backend: BackendKind::Singularity,
                reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(SingularityEnvironment {
            binary,
            instance,
            cwd: settings.cwd.clone(),
        })
    }
}

impl Environment for SingularityEnvironment {
    fn kind(&self) -> BackendKind {
        BackendKind::Singularity
    }

    fn host_access(&self) -> bool {
        false
    }

    fn default_cwd(&self) -> String {
        self.cwd.clone()
    }

    fn supports_stdin(&self) -> bool {
        true
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        let child = LocalChild::spawn(LocalCommand {
            program: self.binary.clone().into(),
            args: exec_args(&self.instance, request.login, &request.script)
                .into_iter()
                .map(OsString::from)
                .collect(),
            env: None,
            cwd: None,
            stdin: request.stdin,
            pty: false,
            new_session: false,
            ..LocalCommand::default()
        })
        .map_err(|source| EnvError::Spawn {
            backend: BackendKind::Singularity,
            what: self.binary.clone(),
            source,
        })?;
        Ok(Box::new(child))
    }

    fn describe(&self) -> String {
        format!("{} instance {}", self.binary, self.instance)
    }

    // Stops the container instance; runs no model code.
    #[allow(clippy::disallowed_methods)]
    fn cleanup(&self) -> Result<(), EnvError> {
        let out = std::process::Command::new(&self.binary)
            .args(["instance", "stop", &self.instance])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| EnvError::io(format!("{} instance stop", self.binary), e))?;
        EnvError::check_exit(BackendKind::Singularity, "instance stop", &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_args_follow_settings() {
        let settings = SingularitySettings {
            binds: vec!["/data:/data:ro".into()],
            memory_mb: 2048,
            cpu: 2.0,
            ..SingularitySettings::default()
        };
        let args = start_args(&settings, "docker://busybox", "toolhost-1");
        assert_eq!(
            args,
            [
                "instance",
                "start",
                "--containall",
                "--no-home",
                "--writable-tmpfs",
                "--bind",
                "/data:/data:ro",
                "--memory",
                "2048M",
                "--cpus",
                "2",
                "docker://busybox",
                "toolhost-1"
            ]
        );
    }

    #[test]
    fn exec_args_run_sh() {
        assert_eq!(
            exec_args("i1", false, "echo hi"),
            ["exec", "instance://i1", "sh", "-c", "echo hi"]
        );
    }

    #[test]
    fn availability_says_what_is_missing() {
        let settings = SingularitySettings {
            binary: "definitely-not-apptainer".into(),
            ..SingularitySettings::default()
        };
        assert!(availability(&settings).unwrap_err().contains("apptainer"));
    }
}
