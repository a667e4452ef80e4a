//! `[terminal]` configuration: which backend runs commands, limits, and one section per
//! backend (`[terminal.docker]`, `[terminal.ssh]`, `[terminal.sandbox]`,
//! `[terminal.singularity]`, `[terminal.modal]`, `[terminal.daytona]`).
//!
//! Every field has a default, so an empty or missing section means "local backend,
//! Hermes' limits". Unknown keys are ignored (forward compatibility).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::BackendKind;

/// `[terminal]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct TerminalSettings {
    /// Backend new task environments use: `local`, `docker`, `ssh`, `sandbox`,
    /// `singularity`, `modal`, `daytona`.
    pub backend: BackendKind,
    /// Initial working directory. Empty or `.` = toolhost's launch directory (local and
    /// sandbox) or the backend's default (`/root` in containers, `~` over ssh).
    pub cwd: String,
    /// Default foreground timeout, seconds (also the cap of `process wait`).
    pub timeout: u64,
    /// Largest foreground timeout a call may ask for; larger ones are refused with advice
    /// to use background mode.
    pub max_foreground_timeout: u64,
    /// Idle environments are torn down after this many seconds (tasks with running
    /// background processes are kept).
    pub lifetime_seconds: u64,
    /// Host environment variables passed to local/sandbox commands although their name is
    /// on the secret blocklist.
    pub env_passthrough: Vec<String>,
    /// Extra shell files sourced when the session snapshot is taken (local backend).
    pub shell_init_files: Vec<String>,
    /// Source `~/.bashrc` when taking the snapshot (local backend, bash only).
    pub auto_source_bashrc: bool,
    /// Largest file (bytes) the full output of one command is spilled to when it does
    /// not fit `tool_output.max_bytes`.
    pub spill_max_bytes: u64,
    /// Bytes of output kept per background process (rolling window).
    pub background_buffer_bytes: usize,
    /// Run foreground commands in one long-lived bash per task (local and sandbox
    /// backends), each in a subshell of its own; `false` starts a new shell per command.
    pub persistent_shell: bool,
    /// Background processes tracked at once (finished ones are pruned first).
    pub max_background_processes: usize,
    /// Seconds a finished background process stays listed.
    pub finished_process_ttl: u64,
    /// `[terminal.docker]`.
    pub docker: DockerSettings,
    /// `[terminal.ssh]`.
    pub ssh: SshSettings,
    /// `[terminal.sandbox]`.
    pub sandbox: SandboxSettings,
    /// `[terminal.singularity]`.
    pub singularity: SingularitySettings,
    /// `[terminal.modal]`.
    pub modal: ModalSettings,
    /// `[terminal.daytona]`.
    pub daytona: DaytonaSettings,
    /// `[terminal.local]`.
    pub local: LocalSettings,
}

impl Default for TerminalSettings {
    fn default() -> Self {
        TerminalSettings {
            backend: BackendKind::Local,
            cwd: String::new(),
            timeout: 180,
            max_foreground_timeout: 600,
            lifetime_seconds: 300,
            env_passthrough: Vec::new(),
            shell_init_files: Vec::new(),
            auto_source_bashrc: true,
            spill_max_bytes: 64 * 1024 * 1024,
            background_buffer_bytes: 200_000,
            persistent_shell: true,
            max_background_processes: 64,
            finished_process_ttl: 30 * 60,
            docker: DockerSettings::default(),
            ssh: SshSettings::default(),
            sandbox: SandboxSettings::default(),
            singularity: SingularitySettings::default(),
            modal: ModalSettings::default(),
            daytona: DaytonaSettings::default(),
            local: LocalSettings::default(),
        }
    }
}

/// `[terminal.local]`: the local backend's kernel confinement (Linux).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct LocalSettings {
    /// `"verdict"` (default), `"floor"`, `"workspace"` or `"off"`; see [`ConfineMode`].
    pub confine: ConfineMode,
    /// Extra paths confined commands may write beneath.
    pub writable: Vec<String>,
}

/// `terminal.local.confine`: what the kernel lets a local command write and call.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ConfineMode {
    /// No kernel confinement: the approval analyser alone.
    Off,
    /// The confinement follows who approved (default): a command that runs without a
    /// human's approval — including everything a rule approved (allowlist, remembered
    /// approvals, smart approval, `approvals.mode = "off"`) — gets the whole floor
    /// ([`ConfineMode::Floor`]); one a human approved when asked (so `sudo apt install
    /// ...` still works) loses it for that command only, keeping block devices,
    /// `/proc/sysrq-trigger` and the denied system calls when toolhost runs as root;
    /// otherwise it runs unconfined (`no_new_privs` would break `sudo`), said once.
    #[default]
    Verdict,
    /// Writes only beneath the working directory, `/tmp`, `~/.cache`, toolhost's
    /// `results/` and `writable` paths; home dotfiles and toolhost's home read-only even
    /// beneath them; signals only within the command's own tree, never to PID 1 or every
    /// process; reboot, kexec, module loading, swap and mounts denied; processes capped
    /// (docs/terminal.md, "The kernel floor") — for every command, approved or not.
    Floor,
    /// As [`ConfineMode::Floor`] without `~/.cache` (codex's workspace-write).
    Workspace,
}

/// The default image of the container backends (Hermes' choice: Python + Node).
pub const DEFAULT_IMAGE: &str = "nikolaik/python-nodejs:python3.11-nodejs20";

/// `[terminal.docker]`: the Docker Engine API (Docker or podman's compatible service).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct DockerSettings {
    /// `unix:///path.sock` or `tcp://host:port`; empty = `$DOCKER_HOST`, else
    /// `unix:///var/run/docker.sock`.
    pub host: String,
    /// Image new containers start from (pulled when missing).
    pub image: String,
    /// CPU limit (cores); 0 = none.
    pub cpu: f64,
    /// Memory limit in MiB; 0 = none.
    pub memory_mb: u64,
    /// Process limit; 0 = none.
    pub pids_limit: i64,
    /// False = `--network=none`.
    pub network: bool,
    /// Bind mounts `host:container[:ro]`.
    pub volumes: Vec<String>,
    /// Environment set in the container.
    pub env: BTreeMap<String, String>,
    /// Host variables copied into the container when set.
    pub forward_env: Vec<String>,
    /// Keep the container when toolhost exits and reuse it (found by label) next time.
    pub persistent: bool,
    /// Run as the host user (`uid:gid`) instead of the image's user.
    pub run_as_host_user: bool,
    /// Default working directory inside the container.
    pub cwd: String,
}

impl Default for DockerSettings {
    fn default() -> Self {
        DockerSettings {
            host: String::new(),
            image: DEFAULT_IMAGE.into(),
            cpu: 1.0,
            memory_mb: 5120,
            pids_limit: 256,
            network: true,
            volumes: Vec::new(),
            env: BTreeMap::new(),
            forward_env: Vec::new(),
            persistent: false,
            run_as_host_user: false,
            cwd: "/root".into(),
        }
    }
}

/// `[terminal.ssh]`: a remote host reached with the OpenSSH client (ControlMaster).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct SshSettings {
    /// Host name or address (required).
    pub host: String,
    /// Remote user (required).
    pub user: String,
    /// Port.
    pub port: u16,
    /// Private key file; empty = the ssh client's defaults.
    pub key: String,
    /// known_hosts file; when set, host keys are checked strictly against it, otherwise
    /// new hosts are accepted on first use (`StrictHostKeyChecking=accept-new`).
    pub known_hosts_file: String,
    /// Connect timeout, seconds.
    pub connect_timeout: u64,
    /// How long the master connection outlives its last use, seconds.
    pub control_persist: u64,
    /// Default remote working directory (`~` = remote home).
    pub cwd: String,
    /// Extra `-o` options (`Name=value`).
    pub options: Vec<String>,
}

impl Default for SshSettings {
    fn default() -> Self {
        SshSettings {
            host: String::new(),
            user: String::new(),
            port: 22,
            key: String::new(),
            known_hosts_file: String::new(),
            connect_timeout: 10,
            control_persist: 300,
            cwd: "~".into(),
            options: Vec::new(),
        }
    }
}

/// `[terminal.sandbox]`: the local machine inside bubblewrap.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct SandboxSettings {
    /// The `bwrap` binary.
    pub bwrap: String,
    /// The only writable host directory (mounted at the same path). Empty = the
    /// terminal's initial cwd.
    pub workdir: String,
    /// Share the host network (default: no network).
    pub network: bool,
    /// Host paths mounted read-only (system directories; missing ones are skipped).
    pub ro_paths: Vec<String>,
    /// Extra host paths mounted read-write.
    pub rw_paths: Vec<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            bwrap: "bwrap".into(),
            workdir: String::new(),
            network: false,
            ro_paths: [
                "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            rw_paths: Vec::new(),
        }
    }
}

/// `[terminal.singularity]`: Apptainer / SingularityCE instances (CLI).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct SingularitySettings {
    /// Binary; empty = `apptainer`, else `singularity`, whichever is on PATH.
    pub binary: String,
    /// Image (`docker://...`, a `.sif` path, ...).
    pub image: String,
    /// Writable tmpfs overlay (changes vanish with the instance).
    pub writable_tmpfs: bool,
    /// Bind mounts `src[:dest[:opts]]`.
    pub binds: Vec<String>,
    /// Memory limit in MiB; 0 = none.
    pub memory_mb: u64,
    /// CPU limit; 0 = none.
    pub cpu: f64,
    /// Default working directory inside the instance.
    pub cwd: String,
}

impl Default for SingularitySettings {
    fn default() -> Self {
        SingularitySettings {
            binary: String::new(),
            image: format!("docker://{DEFAULT_IMAGE}"),
            writable_tmpfs: true,
            binds: Vec::new(),
            memory_mb: 0,
            cpu: 0.0,
            cwd: "/root".into(),
        }
    }
}

/// `[terminal.modal]`: Modal sandboxes through the `modal` Python SDK.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ModalSettings {
    /// Python interpreter with the `modal` package.
    pub python: String,
    /// Registry image.
    pub image: String,
    /// Modal app the sandboxes belong to.
    pub app_name: String,
    /// CPU cores.
    pub cpu: f64,
    /// Memory in MiB.
    pub memory_mb: u64,
    /// Sandbox lifetime, seconds.
    pub lifetime_seconds: u64,
    /// Default working directory.
    pub cwd: String,
}

impl Default for ModalSettings {
    fn default() -> Self {
        ModalSettings {
            python: "python3".into(),
            image: DEFAULT_IMAGE.into(),
            app_name: "toolhost".into(),
            cpu: 1.0,
            memory_mb: 5120,
            lifetime_seconds: 3600,
            cwd: "/root".into(),
        }
    }
}

/// `[terminal.daytona]`: Daytona sandboxes through the `daytona` Python SDK.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct DaytonaSettings {
    /// Python interpreter with the `daytona` package.
    pub python: String,
    /// Image.
    pub image: String,
    /// CPU cores.
    pub cpu: u32,
    /// Memory in GiB.
    pub memory_gb: u32,
    /// Disk in GiB (Daytona caps it at 10).
    pub disk_gb: u32,
    /// Stop (keep) the sandbox on cleanup instead of deleting it.
    pub persistent: bool,
    /// Default working directory (`~` = the sandbox user's home).
    pub cwd: String,
}

impl Default for DaytonaSettings {
    fn default() -> Self {
        DaytonaSettings {
            python: "python3".into(),
            image: DEFAULT_IMAGE.into(),
            cpu: 1,
            memory_gb: 5,
            disk_gb: 10,
            persistent: false,
            cwd: "~".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_section_is_defaults() {
        let parsed: TerminalSettings = toml::from_str("").unwrap();
        assert_eq!(parsed, TerminalSettings::default());
        assert_eq!(parsed.timeout, 180);
        assert_eq!(parsed.max_foreground_timeout, 600);
    }

    #[test]
    fn backend_sections_parse() {
        let parsed: TerminalSettings = toml::from_str(
            r#"
            backend = "docker"
            timeout = 30
            [docker]
            image = "busybox"
            network = false
            [ssh]
            host = "h"
            user = "u"
            port = 2222
            "#,
        )
        .unwrap();
        assert_eq!(parsed.backend, BackendKind::Docker);
        assert_eq!(parsed.docker.image, "busybox");
        assert!(!parsed.docker.network);
        assert_eq!(parsed.docker.pids_limit, 256);
        assert_eq!(parsed.ssh.port, 2222);
        assert_eq!(parsed.timeout, 30);
    }

    #[test]
    fn unknown_backend_is_an_error() {
        let err = toml::from_str::<TerminalSettings>("backend = \"vmware\"").unwrap_err();
        assert!(err.to_string().contains("vmware"), "{err}");
    }
}
