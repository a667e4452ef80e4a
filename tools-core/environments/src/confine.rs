//! The kernel floor: a confinement applied in the child process between `fork` and
//! `exec`, so it holds even when the approval analyser is fooled or a rule approved the
//! command. Every spawn of model-influenced code gets it through the one execution
//! policy ([`super::exec_policy`]); what it guarantees per backend and code path is in
//! docs/terminal.md ("The kernel floor").
//!
//! - **Landlock** (Linux ≥ 5.13): every write-like file-system right is handled, and
//!   granted only beneath the writable roots — the working directory, `/tmp`,
//!   `/var/tmp`, `/dev/shm`, `~/.cache`, toolhost's `results/` and configured extra
//!   paths (codex's "workspace-write") — plus the harmless character devices
//!   (`/dev/null`, `/dev/tty`, `/dev/pts`, ...). The rest of the home, system
//!   directories, block devices and `/proc/sysrq-trigger` are read-only. Even when the
//!   working directory is the home, its dotfiles (`~/.ssh`, `~/.bashrc`, `~/.profile`,
//!   credentials, `~/.config`, ... — every entry starting with `.` except `~/.cache`)
//!   and toolhost's home (config, `.env`, plugins, skills, scripts, cron jobs, state;
//!   all but `results/`) stay read-only. Landlock only
//!   ever allows, so protected paths are carved out by granting their siblings one by
//!   one: a new file directly in a directory holding a protected path is refused.
//!   Paths are compared canonically, so a symlinked home protects its real location.
//! - **Landlock signal scope** (Linux ≥ 6.12): signals only reach processes of the
//!   command's own tree (its Landlock domain): no other process of the user, not
//!   toolhost, not PID 1.
//! - **seccomp**: `reboot`, `kexec_load`, `kexec_file_load`, module loading and
//!   unloading, `swapon`/`swapoff`, `mount`/`umount2`/`pivot_root`; `kill`, `tgkill`,
//!   `rt_sigqueueinfo` and `rt_tgsigqueueinfo` aimed at PID 1 or at every process (−1),
//!   and `pidfd_open(1)`, fail with `EPERM` (the part of the signal rule that holds on
//!   kernels without the signal scope).
//! - **process cap**: `RLIMIT_NPROC` is set to the user's process count when the floor
//!   was prepared plus [`PROCESS_CAP`] (the kernel exempts root from it; there the
//!   per-command cgroup's `pids.max` caps, where toolhost's cgroup v2 is writable —
//!   `containment.rs`).
//!
//! Both need `no_new_privs`, so set-uid programs (`sudo`) do not gain privileges inside
//! a confined command. The ruleset and the BPF program are built once, in the parent;
//! the child only makes a few system calls (async-signal-safe, no allocation). Where
//! the kernel lacks Landlock or seccomp the host says so once and relies on the
//! analyser. `terminal.local.confine` selects the mode (see [`ConfineMode`]); commands
//! with a pseudo-terminal are confined the same way.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};

use landlock::{
    ABI, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

pub use super::settings::{ConfineMode, LocalSettings};

/// Why a confinement could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// Building the Landlock ruleset failed.
    #[error("landlock ruleset: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// Compiling the seccomp filter failed.
    #[error("seccomp filter: {0}")]
    Seccomp(#[from] seccompiler::BackendError),
    /// This architecture has no seccomp filter here.
    #[error("seccomp filter: unsupported architecture {0}")]
    Arch(&'static str),
}

/// What a confined command may write.
#[derive(Clone, Debug, Default)]
pub struct WritableRoots {
    /// Directories (and files) written freely beneath...
    pub roots: Vec<PathBuf>,
    /// ...except these, which stay read-only even beneath a root (toolhost's own files).
    pub protected: Vec<PathBuf>,
}

impl WritableRoots {
    /// The roots of `mode` for a backend working in `workdir`: the working directory,
    /// `/tmp`, `/var/tmp`, `/dev/shm`, `extra`, toolhost's `results/` and (floor and
    /// verdict modes) `~/.cache`. Protected: everything else under `toolhost_home`, and
    /// the home's dotfiles ([`home_dotfiles`]).
    /// Paths are compared canonically (a symlinked home protects its real location).
    pub fn for_mode(
        mode: ConfineMode,
        workdir: &Path,
        home: Option<&Path>,
        toolhost_home: &Path,
        extra: &[PathBuf],
    ) -> Self {
        let mut roots = vec![
            workdir.to_path_buf(),
            PathBuf::from("/tmp"),
            PathBuf::from("/var/tmp"),
            PathBuf::from("/dev/shm"),
            toolhost_home.join("results"),
        ];
        roots.extend(extra.iter().cloned());
        if matches!(mode, ConfineMode::Floor | ConfineMode::Verdict)
            && let Some(home) = home
        {
            roots.push(home.join(".cache"));
        }
        // All of toolhost's home (config, .env, plugins, skills, scripts, cron jobs,
        // state) but `results/`, a root of its own.
        let mut protected = vec![toolhost_home.to_path_buf()];
        if let Some(home) = home {
            protected.extend(home_dotfiles(home));
        }
        WritableRoots {
            roots: roots.iter().map(|p| canonical(p)).collect(),
            protected: protected_paths(protected),
        }
    }
}

/// Dotfiles that are always protected, whether they exist yet or not (planting
/// `~/.ssh/authorized_keys` or a `~/.bashrc` must fail even where none was there).
const DOTFILES: &[&str] = &[
    ".ssh",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".config",
    ".local",
    ".gnupg",
    ".aws",
    ".netrc",
    ".gitconfig",
    ".docker",
    ".kube",
    ".cargo",
    ".pgpass",
];

/// The home's protected entries: `DOTFILES` and every other entry whose name starts
/// with `.`, except `.cache` (build and package caches stay writable).
pub fn home_dotfiles(home: &Path) -> Vec<PathBuf> {
    let home = canonical(home);
    let mut out: Vec<PathBuf> = DOTFILES.iter().map(|d| home.join(d)).collect();
    if let Ok(entries) = std::fs::read_dir(&home) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let dotted = name.to_str().is_some_and(|n| n.starts_with('.'));
            let path = home.join(&name);
            if dotted && name != ".cache" && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

pub use super::PROCESS_CAP;

/// The processes of the calling user now (from `/proc`), for the `RLIMIT_NPROC` cap.
#[allow(unsafe_code)]
fn user_process_count() -> u64 {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let count = dir
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .count();
    u64::try_from(count).unwrap_or(u64::MAX)
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Protected paths, canonical where they exist; a missing one is protected by its
/// nearest existing ancestor's canonical spelling plus the rest.
fn protected_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths
        .into_iter()
        .map(|p| match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) if !p.exists() => canonical(parent).join(name),
            _ => canonical(&p),
        })
        .collect()
}

/// Character devices every command may write (and use ioctls on).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// A prepared confinement, shared by every command of an environment.
#[derive(Debug)]
pub struct Confinement {
    landlock: Option<OwnedFd>,
    seccomp: Option<BpfProgram>,
    /// Set `no_new_privs` first (needed without `CAP_SYS_ADMIN`; it stops set-uid
    /// programs such as `sudo` from gaining privileges).
    no_new_privs: bool,
    /// `RLIMIT_NPROC` for the child (`None`: left as it is).
    nproc: Option<libc::rlimit>,
}

static UNCONFINED_APPROVED: Once = Once::new();

static UNSUPPORTED: Once = Once::new();

impl Confinement {
    /// Build the Landlock ruleset for `writable` and the seccomp filter. Parts the kernel
    /// lacks are left out (said once on stderr via the log).
    pub fn prepare(writable: &WritableRoots) -> Result<Self, ConfineError> {
        let landlock = landlock_ruleset(writable)?;
        let seccomp = match seccomp_filter() {
            Ok(prog) => Some(prog),
            Err(ConfineError::Arch(arch)) => {
                tracing::warn!(arch, "no seccomp filter for this architecture");
                None
            }
            Err(e) => return Err(e),
        };
        if landlock.is_none() {
            UNSUPPORTED.call_once(|| {
                tracing::warn!(
                    "this kernel has no Landlock: confined commands are judged by the approval analyser alone"
                );
            });
        }
        let cap = user_process_count().saturating_add(PROCESS_CAP);
        Ok(Confinement {
            landlock,
            seccomp,
            no_new_privs: true,
            nproc: Some(libc::rlimit {
                rlim_cur: cap,
                rlim_max: cap,
            }),
        })
    }

    /// The part of the floor a human-approved command keeps: writes to block devices and
    /// `/proc/sysrq-trigger` and the denied system calls fail; everything else may be
    /// written. Only prepared when toolhost runs as root (`CAP_SYS_ADMIN` lets it skip
    /// `no_new_privs`, so `sudo` and set-uid programs keep working); `None` otherwise.
    #[allow(unsafe_code)]
    pub fn prepare_devices_only() -> Result<Option<Self>, ConfineError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            UNCONFINED_APPROVED.call_once(|| {
                tracing::warn!(
                    "toolhost is not root: commands a human approved run without the kernel floor (no_new_privs would break sudo)"
                );
            });
            return Ok(None);
        }
        let mut roots: Vec<PathBuf> = Vec::new();
        if let Ok(entries) = std::fs::read_dir("/") {
            for entry in entries.flatten() {
                let path = entry.path();
                if path != Path::new("/dev") && path != Path::new("/proc") {
                    roots.push(path);
                }
            }
        }
        roots.extend(
            [
                "/dev/shm",
                "/dev/mqueue",
                "/dev/pts",
                "/proc/sys",
                "/proc/self",
            ]
            .iter()
            .map(PathBuf::from),
        );
        let writable = WritableRoots {
            roots,
            protected: Vec::new(),
        };
        let mut confinement = Confinement::prepare(&writable)?;
        confinement.no_new_privs = false;
        confinement.nproc = None;
        Ok(Some(confinement))
    }

    /// True when Landlock is part of this confinement.
    pub fn has_landlock(&self) -> bool {
        self.landlock.is_some()
    }

    /// Apply to the calling process. Meant for the child between `fork` and `exec`: it
    /// makes only system calls and allocates nothing.
    #[allow(unsafe_code)]
    pub fn apply_in_child(&self) -> std::io::Result<()> {
        // SAFETY: prctl with integer arguments; no memory is passed.
        if self.no_new_privs && unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(limit) = &self.nproc {
            // SAFETY: setrlimit reads the struct owned by `self`, alive for the call.
            if unsafe { libc::setrlimit(libc::RLIMIT_NPROC, limit) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(fd) = &self.landlock {
            // SAFETY: landlock_restrict_self takes a ruleset fd (owned by `self`, alive
            // for the call) and flags; no memory is passed.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_landlock_restrict_self,
                    fd.as_raw_fd(),
                    0 as libc::c_uint,
                )
            };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(prog) = &self.seccomp {
            seccompiler::apply_filter(prog).map_err(|e| match e {
                seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => io,
                _ => std::io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

/// The confinement `settings` ask for, for a backend working in `workdir`; `None` when
/// off, or when it cannot be prepared (logged: the analyser alone then guards).
pub fn from_settings(
    settings: &LocalSettings,
    workdir: &Path,
    toolhost_home: &Path,
) -> Option<Arc<Confinement>> {
    if settings.confine == ConfineMode::Off {
        return None;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let extra: Vec<PathBuf> = settings.writable.iter().map(PathBuf::from).collect();
    let roots = WritableRoots::for_mode(
        settings.confine,
        workdir,
        home.as_deref(),
        toolhost_home,
        &extra,
    );
    match Confinement::prepare(&roots) {
        Ok(c) => Some(Arc::new(c)),
        Err(error) => {
            tracing::error!(%error, "terminal.local.confine: cannot confine local commands");
            None
        }
    }
}

/// The confinement of commands a human approved: the same as everyone's for `floor` and
/// `workspace`; the device, sysrq and system-call part only for `verdict`.
pub fn approved_from_settings(
    settings: &LocalSettings,
    unapproved: Option<&Arc<Confinement>>,
) -> Option<Arc<Confinement>> {
    match settings.confine {
        ConfineMode::Off => None,
        ConfineMode::Floor | ConfineMode::Workspace => unapproved.cloned(),
        ConfineMode::Verdict => match Confinement::prepare_devices_only() {
            Ok(c) => c.map(Arc::new),
            Err(error) => {
                tracing::error!(%error, "terminal.local.confine: cannot confine approved commands");
                None
            }
        },
    }
}

/// A `pre_exec` hook applying `confinement` (for command builders other than
/// `std::process::Command`, such as the pseudo-terminal one).
pub fn hook(
    confinement: Arc<Confinement>,
) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    move || confinement.apply_in_child()
}

/// Register `confinement` to be applied in the child of `cmd` before it execs.
#[allow(unsafe_code)]
pub fn attach(cmd: &mut std::process::Command, confinement: Option<Arc<Confinement>>) {
    let Some(confinement) = confinement else {
        return;
    };
    // SAFETY: the closure runs between fork and exec; `apply_in_child` only makes system
    // calls (prctl, landlock_restrict_self, seccomp) on data prepared before the fork, and
    // allocates nothing.
    unsafe {
        cmd.pre_exec(hook(confinement));
    }
}

fn landlock_ruleset(writable: &WritableRoots) -> Result<Option<OwnedFd>, ConfineError> {
    let abi = ABI::V7;
    let write = AccessFs::from_write(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)?
        .scope(Scope::Signal)?
        .create()?;
    let mut rules: Vec<PathBuf> = Vec::new();
    for root in &writable.roots {
        carve_entry(root, &writable.protected, &mut rules);
    }
    rules.extend(DEVICES.iter().map(PathBuf::from));
    for path in rules {
        // Paths that do not exist (no /var/tmp, a missing extra root) are skipped.
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        let access = if path.is_dir() {
            write
        } else {
            write & AccessFs::from_file(abi)
        };
        // A path the kernel refuses (a pseudo file system) is left read-only.
        if let Err(e) = (&mut ruleset).add_rule(PathBeneath::new(fd, access)) {
            tracing::debug!(path = %path.display(), error = %e, "landlock rule skipped");
        }
    }
    Ok(Option::<OwnedFd>::from(ruleset))
}

/// Grant `path` unless it is protected; descend into directories holding a protected
/// path (`~/.config` holding `~/.config/toolhost`) and grant their other entries.
fn carve_entry(path: &Path, protected: &[PathBuf], rules: &mut Vec<PathBuf>) {
    if protected.iter().any(|p| p == path) {
        return;
    }
    if protected.iter().any(|p| p.starts_with(path)) {
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                carve_entry(&entry.path(), protected, rules);
            }
        }
        return;
    }
    rules.push(path.to_path_buf());
}

/// System calls denied (`EPERM`) to confined commands; `None` args = always.
fn seccomp_filter() -> Result<BpfProgram, ConfineError> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        "riscv64" => TargetArch::riscv64,
        other => return Err(ConfineError::Arch(other)),
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
    ] {
        rules.insert(nr, Vec::new());
    }
    // Signals to every process (-1) or to PID 1; a pidfd for PID 1.
    let all = u64::from(u32::MAX);
    let target = |arg: u8, value: u64| -> Result<SeccompRule, ConfineError> {
        let cond = SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)?;
        Ok(SeccompRule::new(vec![cond])?)
    };
    for nr in [
        libc::SYS_kill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
    ] {
        rules.insert(nr, vec![target(0, all)?, target(0, 1)?]);
    }
    rules.insert(libc::SYS_pidfd_open, vec![target(0, 1)?]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(BpfProgram::try_from(filter)?)
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
