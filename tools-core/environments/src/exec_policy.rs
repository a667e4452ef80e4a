//! The one execution policy: every process toolhost starts for model-influenced code
//! — terminal commands on every backend, `execute_code` scripts (and so every
//! subprocess they start), cron job scripts, plugin processes (native and Python) —
//! is started through here. It takes what is known about the spawn (which code path,
//! who approved it), applies the kernel floor ([`super::confine`]) to the child in every
//! case the settings allow, and records what it decided (a `tracing` event, target
//! `toolhost::exec_policy`).
//!
//! It lives in the environments crate, next to the floor it applies, because the floor,
//! the containment (`containment.rs`) and the local backend (the main spawner) are
//! here and every other spawner (tools-core's `execute_code` and cron, the host's
//! plugin processes) already depends on this crate; a crate of its own would need the
//! environments' settings and the local backend would need it, a cycle.
//!
//! **The floor holds whatever was approved, except what a human approved.** An
//! allowlist entry, a session or permanent approval remembered from earlier, smart
//! approval, `approvals.mode = "off"` or `approvals.no_human = "approve"` never lift it
//! ([`Approval::Rule`]). A human's answer to the prompt for *this* command lifts it for
//! that command only, and only in `terminal.local.confine = "verdict"` mode; the result
//! says so ([`Decision::note`]).
//!
//! "No spawn without the policy" is enforced by clippy's `disallowed-methods`
//! (`clippy.toml`): `Command::new` is allowed only here and at the justified spawns of
//! programs the model does not choose, each with `#[allow(clippy::disallowed_methods)]`
//! and a comment; `exec_policy_tests.rs` keeps that list from growing unnoticed.

use std::path::Path;
use std::sync::Arc;

use super::confine::{self, Confinement};
use super::settings::{ConfineMode, LocalSettings};

/// Which code path a process is started for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodePath {
    /// A `terminal` command (foreground or background; `process` input goes to it).
    Terminal,
    /// An `execute_code` script (and everything it starts).
    ExecuteCode,
    /// A cron job's script (`no_agent` jobs and agent jobs' pre-run scripts).
    CronScript,
    /// An out-of-process plugin: the native plugin host, a program, a Python plugin's
    /// interpreter (`host/src/plugins/process/launch.rs`).
    Plugin,
}

impl CodePath {
    /// The name used in records.
    pub fn name(self) -> &'static str {
        match self {
            CodePath::Terminal => "terminal",
            CodePath::ExecuteCode => "execute_code",
            CodePath::CronScript => "cron_script",
            CodePath::Plugin => "plugin",
        }
    }
}

/// Who let the code run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Nothing judged it (no text to judge: a plugin, a cron script, a script's
    /// subprocesses) or the analyser found nothing to ask about.
    Unjudged,
    /// A rule approved it: allowlist, a remembered session or permanent approval, smart
    /// approval, `approvals.mode = "off"`, `approvals.no_human = "approve"`.
    Rule,
    /// A human approved this very command when asked.
    Human,
}

impl Approval {
    /// From the approval gate's answer (`human`: a human approved this command).
    pub fn from_gate(human: bool, note: bool) -> Approval {
        match (human, note) {
            (true, _) => Approval::Human,
            (false, true) => Approval::Rule,
            (false, false) => Approval::Unjudged,
        }
    }
}

/// What the policy decided for one spawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorState {
    /// The whole floor applies.
    Full,
    /// A human approved this command: only the device, sysrq and system-call part
    /// applies (as root; nothing otherwise).
    LiftedByHuman,
    /// The configuration turned the floor off (`confine = "off"`).
    Off,
    /// The floor could not be prepared (logged); the analyser alone guards.
    Unavailable,
}

/// The decision, returned to the spawner and recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The code path.
    pub path: CodePath,
    /// Who approved.
    pub approval: Approval,
    /// The floor applied.
    pub floor: FloorState,
}

/// What a tool result says (`floor`) when a human's approval lifted the floor.
pub const LIFTED_NOTE: &str = "A human approved this command: it ran without the kernel \
     floor's file-system and signal rules, for this command only (later commands are \
     confined again).";

impl Decision {
    /// The note a tool result carries when the floor was lifted for this command.
    pub fn note(&self) -> Option<&'static str> {
        (self.floor == FloorState::LiftedByHuman).then_some(LIFTED_NOTE)
    }
}

/// True when a command approved by `approval` runs with the floor lifted under
/// `settings` (a human approved it and the mode is `verdict`).
pub fn lifted(settings: &LocalSettings, approval: Approval) -> bool {
    approval == Approval::Human && settings.confine == ConfineMode::Verdict
}

/// A prepared floor: the confinement of unapproved work and the one of work a human
/// approved. Preparing builds the Landlock ruleset and the BPF program once; spawning
/// only attaches them.
#[derive(Clone, Debug)]
pub struct Floor {
    mode: ConfineMode,
    unapproved: Option<Arc<Confinement>>,
    human: Option<Arc<Confinement>>,
}

impl Floor {
    /// The floor `settings` ask for, for work in `workdir`, protecting toolhost's files
    /// under `toolhost_home` (canonical: a symlinked home is protected at its real path).
    pub fn prepare(settings: &LocalSettings, workdir: &Path, toolhost_home: &Path) -> Floor {
        let unapproved = confine::from_settings(settings, workdir, toolhost_home);
        let human = confine::approved_from_settings(settings, unapproved.as_ref());
        Floor {
            mode: settings.confine,
            unapproved,
            human,
        }
    }

    /// The whole floor for work nobody can approve (cron scripts, plugins): `verdict`
    /// behaves as `floor`; `off` stays off.
    pub fn unattended(settings: &LocalSettings, workdir: &Path, toolhost_home: &Path) -> Floor {
        let mut floor = Floor::prepare(settings, workdir, toolhost_home);
        floor.human = floor.unapproved.clone();
        floor
    }

    /// A floor prepared elsewhere (`plugins.confine`), the same for every approval;
    /// `None` = configured off.
    pub fn fixed(confinement: Option<Arc<Confinement>>) -> Floor {
        Floor {
            mode: match confinement {
                Some(_) => ConfineMode::Floor,
                None => ConfineMode::Off,
            },
            unapproved: confinement.clone(),
            human: confinement,
        }
    }

    /// The confinement for a spawn on `path` approved by `approval`, and the decision
    /// (recorded).
    pub fn select(
        &self,
        path: CodePath,
        approval: Approval,
    ) -> (Option<Arc<Confinement>>, Decision) {
        let lifted = approval == Approval::Human && self.mode == ConfineMode::Verdict;
        let chosen = if lifted {
            self.human.clone()
        } else {
            self.unapproved.clone()
        };
        let floor = match (self.mode, &chosen) {
            (ConfineMode::Off, _) => FloorState::Off,
            _ if lifted => FloorState::LiftedByHuman,
            (_, None) => FloorState::Unavailable,
            (_, Some(_)) => FloorState::Full,
        };
        let decision = Decision {
            path,
            approval,
            floor,
        };
        tracing::info!(
            target: "toolhost::exec_policy",
            path = path.name(),
            approval = ?approval,
            floor = ?floor,
            "spawn"
        );
        (chosen, decision)
    }
}

/// A `std::process::Command` for `program`: the only place model-influenced code gets
/// one. Apply the floor with [`apply`] before spawning it.
#[allow(clippy::disallowed_methods)] // The policy's own constructor.
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    std::process::Command::new(program)
}

/// Apply `floor` to `cmd` for a spawn on `path` approved by `approval`: the child is
/// confined between fork and exec. Returns (and records) the decision.
pub fn apply(
    cmd: &mut std::process::Command,
    floor: &Floor,
    path: CodePath,
    approval: Approval,
) -> Decision {
    let (confinement, decision) = floor.select(path, approval);
    confine::attach(cmd, confinement);
    decision
}

#[cfg(test)]
#[path = "exec_policy_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "exec_policy_sites_tests.rs"]
mod sites_tests;
