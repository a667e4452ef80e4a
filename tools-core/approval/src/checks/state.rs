//! System-state commands that take the whole machine away without deleting a file: power
//! states and rescue targets, default-drop firewall policies, destroyed storage pools and
//! volumes, container engine resets. Each is hardline: no approval makes them safe for an
//! agent, and the machine (or the agent's own connection to it) does not come back.
//!
//! Where this differs from Hermes: docs/hermes/approval.md (sections 4 and 9).

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::rules;

/// A systemd verb or target that suspends the machine or drops it to a rescue shell
/// (`suspend`, `hybrid-sleep`, `rescue.target`, `emergency`).
pub(crate) fn is_power_state(word: &str) -> bool {
    matches!(
        word.trim_end_matches(".target"),
        "suspend"
            | "hibernate"
            | "hybrid-sleep"
            | "suspend-then-hibernate"
            | "sleep"
            | "rescue"
            | "emergency"
            | "kexec"
            | "halt"
            | "poweroff"
            | "reboot"
            | "soft-reboot"
            | "runlevel0"
            | "runlevel1"
            | "runlevel6"
    )
}

/// A default-drop (or reject) policy on the chains that carry the machine's own traffic:
/// `iptables -P INPUT DROP`, `nft ... hook input ... policy drop`, `ufw default deny
/// outgoing`.
pub(crate) fn firewall_lockout(name: &str, words: &[&str]) -> bool {
    let drops = |w: &str| {
        let w = w.trim_end_matches([';', '}', ' ']);
        w.eq_ignore_ascii_case("drop") || w.eq_ignore_ascii_case("reject")
    };
    match name {
        "nft" => {
            let text = words.join(" ").to_ascii_lowercase();
            let hooked = ["hook input", "hook output", "hook prerouting"]
                .iter()
                .any(|h| text.contains(h));
            hooked && (text.contains("policy drop") || text.contains("policy reject"))
        }
        "ufw" => words
            .windows(3)
            .any(|w| w[0] == "default" && drops_ufw(w[1]) && w[2].starts_with("out")),
        "pfctl" | "firewall-cmd" => words.iter().any(|w| w.starts_with("--panic-on")),
        _ if catch_all_drop(words) => true,
        _ => words.windows(3).any(|w| {
            (matches!(w[0], "-P" | "--policy") || "--policy".starts_with(w[0]) && w[0].len() > 3)
                && matches!(w[1].to_ascii_uppercase().as_str(), "INPUT" | "OUTPUT")
                && drops(w[2])
        }),
    }
}

/// `iptables -A INPUT -j DROP`: a rule that matches every packet on INPUT or OUTPUT and
/// drops it (no address, port, protocol, interface or match module narrows it).
fn catch_all_drop(words: &[&str]) -> bool {
    let chain = words.windows(2).any(|w| {
        matches!(w[0], "-A" | "-I" | "--append" | "--insert")
            && matches!(w[1].to_ascii_uppercase().as_str(), "INPUT" | "OUTPUT")
    });
    let drops = words.windows(2).any(|w| {
        matches!(w[0], "-j" | "--jump")
            && matches!(w[1].to_ascii_uppercase().as_str(), "DROP" | "REJECT")
    });
    let narrowed = words.iter().any(|w| {
        matches!(
            *w,
            "-s" | "-d"
                | "-p"
                | "-i"
                | "-o"
                | "-m"
                | "--source"
                | "--destination"
                | "--protocol"
                | "--in-interface"
                | "--out-interface"
                | "--match"
                | "--dport"
                | "--sport"
        ) || w.starts_with("--dport")
            || w.starts_with("--source=")
    });
    chain && drops && !narrowed
}

fn drops_ufw(word: &str) -> bool {
    matches!(word, "deny" | "reject")
}

/// `zpool destroy`, `zfs destroy`, `lvremove`, `vgremove`, `pvremove`, `lvm lvremove`,
/// `mdadm --zero-superblock`, `dmsetup remove_all`: storage gone with everything on it.
pub(crate) fn storage(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    if words.iter().any(|w| matches!(*w, "--help" | "-h" | "-?")) {
        return;
    }
    let destroys = match name {
        "zpool" => words
            .iter()
            .any(|w| matches!(*w, "destroy" | "labelclear" | "split")),
        "zfs" => {
            words.iter().any(|w| matches!(*w, "destroy" | "rollback"))
                && !words
                    .iter()
                    .any(|w| w.starts_with("-n") || *w == "--dry-run")
        }
        "lvremove" | "vgremove" | "pvremove" => {
            !words.iter().any(|w| matches!(*w, "-t" | "--test"))
        }
        "lvm" => words
            .first()
            .is_some_and(|w| matches!(*w, "lvremove" | "vgremove" | "pvremove")),
        "mdadm" => words
            .iter()
            .any(|w| w.starts_with("--zero-superblock") || *w == "--stop" || *w == "-S"),
        "dmsetup" => words
            .iter()
            .any(|w| matches!(*w, "remove_all" | "wipe_table")),
        _ => false,
    };
    if destroys {
        az.flag_rule(&rules::STORAGE_DESTROY);
    }
    let deactivates = match name {
        "vgchange" | "lvchange" => {
            words
                .windows(2)
                .any(|w| matches!(w[0], "-a" | "--activate") && w[1].starts_with('n'))
                || words.iter().any(|w| matches!(*w, "-an" | "--activate=n"))
        }
        "zpool" => words.iter().any(|w| matches!(*w, "export" | "offline")),
        _ => false,
    };
    if deactivates {
        az.flag_rule(&rules::MOUNT);
    }
}

/// `podman system reset`, `docker system reset` (podman's alias in docker shims).
pub(crate) fn engine_reset(az: &mut Analyzer, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..]
        .iter()
        .map(|a| a.as_str())
        .filter(|w| !w.starts_with('-'))
        .collect();
    if words
        .windows(2)
        .any(|w| w[0] == "system" && w[1] == "reset")
        && !args.iter().any(|a| a.as_str() == "--help")
    {
        az.flag_rule(&rules::ENGINE_RESET);
    }
}
