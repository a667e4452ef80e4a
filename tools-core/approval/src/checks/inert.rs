//! Forms of destructive commands that change nothing: `--help`/`--version` (which GNU
//! getopt and the subcommand CLIs act on wherever the option stands, before `--`) and
//! dry runs (`git push --dry-run --force`, `wipefs --no-act`, `kubectl delete
//! --dry-run=client`, `helm uninstall --dry-run`). Such a command is not dispatched to
//! its rules, so it is not flagged; words that run code (substitutions, wrappers) were
//! analysed before this point and still count.
//!
//! Where this differs from Hermes: docs/hermes/approval.md (sections 4 and 9).

use super::super::model::Arg;

/// Commands that print help and exit on `--help` anywhere before `--`.
const HELP_ANYWHERE: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "wipefs",
    "blkdiscard",
    "dd",
    "chmod",
    "chown",
    "chgrp",
    "cp",
    "mv",
    "truncate",
    "install",
    "ln",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "systemctl",
    "loginctl",
    "iptables",
    "ip6tables",
    "nft",
    "ufw",
    "git",
    "kubectl",
    "oc",
    "helm",
    "terraform",
    "tofu",
    "docker",
    "podman",
    "nerdctl",
    "pkill",
    "killall",
    "kill",
    "mke2fs",
    "mkswap",
    "sgdisk",
    "sfdisk",
    "parted",
    "fdisk",
    "zpool",
    "zfs",
    "lvremove",
    "vgremove",
    "pvremove",
    "crontab",
    "userdel",
    "usermod",
    "passwd",
    "chattr",
    "setfacl",
    "find",
    "mount",
    "umount",
    "journalctl",
];

/// Dry-run options per command (exact words, or `--dry-run=` values other than `none`).
fn dry_run(name: &str, word: &str) -> bool {
    match name {
        "wipefs" => matches!(word, "-n" | "--no-act"),
        "git" | "rsync" => word == "--dry-run",
        "kubectl" | "oc" | "helm" => {
            word == "--dry-run"
                || word
                    .strip_prefix("--dry-run=")
                    .is_some_and(|v| matches!(v, "client" | "server" | "true"))
        }
        "mke2fs" | "mkfs.ext2" | "mkfs.ext3" | "mkfs.ext4" => word == "-n",
        "lvremove" | "vgremove" | "pvremove" => matches!(word, "-t" | "--test"),
        "zfs" | "zpool" => word == "-n",
        _ => false,
    }
}

/// Whether `args` (a command `name`, wrappers stripped) only prints help or dry-runs.
pub(crate) fn is_inert(name: &str, args: &[Arg<'_>]) -> bool {
    let words = args[1..]
        .iter()
        .take_while(|a| a.as_str() != "--")
        .filter(|a| !a.dynamic);
    let mut help = false;
    let mut dry = false;
    for arg in words {
        let w = arg.as_str();
        if !w.starts_with('-') {
            continue;
        }
        help |= matches!(w, "--help" | "--version");
        dry |= dry_run(name, w);
    }
    if name == "git"
        && args
            .iter()
            .any(|a| a.as_str().starts_with("-c") || a.as_str().starts_with("--config-env"))
    {
        // `-c core.pager=...` and friends run code even for help.
        return false;
    }
    if name == "git" && !help && dry {
        // `git push -n` is a dry run too; other git verbs take `-n` for other things.
        return args.get(1).is_some_and(|a| a.as_str() == "push");
    }
    (help && HELP_ANYWHERE.contains(&name)) || dry
}

/// `git push -n`: the short dry-run of push.
pub(crate) fn git_push_dry_run(rest: &[Arg<'_>]) -> bool {
    rest.iter().take_while(|a| a.as_str() != "--").any(|a| {
        let w = a.as_str();
        w == "--dry-run" || (w.starts_with('-') && !w.starts_with("--") && w.contains('n'))
    })
}
