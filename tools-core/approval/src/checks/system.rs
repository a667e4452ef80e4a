//! Processes, services, power, firewall, users, cron, and the agent's own gateway.

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::options::{self, Item, OptSpec};
use super::super::rules;
use super::super::verdict::Finding;

/// `kill`: `-1` as a pid (every process) is hardline; `kill $(pgrep x)` is flagged.
pub(crate) fn kill(az: &mut Analyzer, args: &[Arg<'_>]) {
    let mut i = 1;
    if let Some(first) = args.get(1).map(|a| a.as_str()) {
        match first {
            "-l" | "-L" | "--list" | "--table" => return,
            "-s" | "-n" | "--signal" => i = 3,
            "--" => {}
            w if w.starts_with('-') => i = 2,
            _ => {}
        }
    }
    for a in args.iter().skip(i) {
        let w = a.as_str();
        if w == "--" {
            continue;
        }
        if w == "-1" {
            az.flag_rule(&rules::KILL_ALL);
        }
        if a.dynamic && (w.contains("pgrep") || w.contains("pidof")) {
            az.flag_rule(&rules::KILL_LOOKUP);
        }
    }
}

/// `killall5` signals every process outside the caller's session.
pub(crate) fn killall5(az: &mut Analyzer, args: &[Arg<'_>]) {
    if !args[1..]
        .iter()
        .any(|a| matches!(a.as_str(), "--help" | "-h"))
    {
        az.flag_rule(&rules::KILL_ALL);
    }
}

/// Power state through logind's D-Bus API (`dbus-send`, `busctl`, `gdbus`) and `kexec`.
pub(crate) fn power_bus(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    const METHODS: &[&str] = &[
        "reboot",
        "poweroff",
        "halt",
        "kexec",
        "rebootwithflags",
        "poweroffwithflags",
        "haltwithflags",
        "suspend",
        "hibernate",
    ];
    if name == "kexec" {
        let runs = args[1..]
            .iter()
            .any(|a| matches!(a.as_str(), "-e" | "--exec" | "-f" | "--force"));
        if runs {
            az.flag_rule(&rules::SHUTDOWN);
        }
        return;
    }
    let text: Vec<String> = args[1..]
        .iter()
        .map(|a| a.as_str().to_ascii_lowercase())
        .collect();
    let login1 = text
        .iter()
        .any(|w| w.contains("login1") || w.contains("systemd1"));
    let method = text.iter().any(|w| {
        let last = w.rsplit('.').next().unwrap_or(w);
        METHODS.contains(&last)
    });
    if login1 && method {
        az.flag_rule(&rules::SHUTDOWN);
    }
}

fn is_kill_signal(sig: &str) -> bool {
    let sig = sig.trim_start_matches('-').to_ascii_uppercase();
    matches!(sig.as_str(), "9" | "KILL" | "SIGKILL")
}

/// `pkill` / `killall`: SIGKILL, regex kills, killing the agent itself.
pub(crate) fn pkill(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: if name == "killall" {
            "sunoyY"
        } else {
            "gGPsuUtFn"
        },
        long_with_value: &[
            "signal",
            "user",
            "older-than",
            "younger-than",
            "context",
            "ns",
            "nslist",
            "group",
            "parent",
            "session",
            "terminal",
            "pidfile",
        ],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let mut force = false;
    // `-9`, `-KILL`, `-SIGKILL` as a whole word.
    for a in rest {
        let w = a.as_str();
        if w.len() > 1 && w.starts_with('-') && !w.starts_with("--") && is_kill_signal(w) {
            force = true;
        }
    }
    let filtered: Vec<Arg<'_>> = rest
        .iter()
        .filter(|a| {
            let w = a.as_str();
            !(w.len() > 1 && w.starts_with('-') && !w.starts_with("--") && is_kill_signal(w))
        })
        .cloned()
        .collect();
    let items = options::parse(&filtered, &spec);
    for item in &items {
        match item {
            Item::Long("signal", Some(sig)) => force |= is_kill_signal(sig),
            Item::Short('s', Some(sig)) if name == "killall" => force |= is_kill_signal(sig),
            Item::Short('r', _) | Item::Long("regexp", _) if name == "killall" => {
                az.flag_rule(&rules::KILL_REGEX);
            }
            _ => {}
        }
    }
    if force {
        az.flag(Finding::with(
            &rules::FORCE_KILL,
            if name == "killall" {
                "force kill processes (killall -KILL)"
            } else {
                "force kill processes"
            },
        ));
    }
    let patterns: Vec<&str> = options::operands(&items)
        .map(|i| filtered[i].as_str())
        .collect();
    let root_user = items.iter().any(|item| {
        matches!(item, Item::Short('u' | 'U', Some(u)) | Item::Long("user", Some(u)) if matches!(*u, "root" | "0"))
    });
    if (!patterns.is_empty() && patterns.iter().all(|p| super::pids::matches_everything(p)))
        || (root_user && patterns.is_empty())
    {
        az.flag_rule(&rules::KILL_ALL);
    }
    for i in options::operands(&items) {
        let pattern = filtered[i].as_str().to_ascii_lowercase();
        if ["hermes", "gateway", "toolhost", "cli.py"]
            .iter()
            .any(|p| pattern.contains(p))
        {
            az.flag_rule(&rules::SELF_KILL);
        }
    }
}

const STOP_ACTIONS: &[&str] = &[
    "stop",
    "restart",
    "try-restart",
    "reload-or-restart",
    "try-reload-or-restart",
    "condrestart",
    "force-reload",
    "force-stop",
    "disable",
    "mask",
    "kill",
    "isolate",
];

/// `systemctl`: stopping services; power-off verbs are hardline.
pub(crate) fn systemctl(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "HMtpsnoPT",
        long_with_value: &[
            "host",
            "machine",
            "type",
            "property",
            "signal",
            "lines",
            "output",
            "state",
            "kill-whom",
            "root",
            "job-mode",
            "what",
            "boot-loader-entry",
            "timestamp",
        ],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    let mut ops = options::operands(&items).map(|i| rest[i].as_str());
    let Some(verb) = ops.next() else { return };
    let units: Vec<&str> = ops.collect();
    let power_target = units.iter().any(|u| {
        matches!(
            u.trim_end_matches(".target"),
            "poweroff" | "reboot" | "halt" | "kexec"
        )
    });
    match verb {
        "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot" => {
            az.flag(Finding::with(&rules::SHUTDOWN, "systemctl poweroff/reboot"));
        }
        "start" | "isolate" | "restart" if power_target => {
            az.flag(Finding::with(&rules::SHUTDOWN, "systemctl poweroff/reboot"));
        }
        v if super::state::is_power_state(v) => az.flag_rule(&rules::POWER_STATE),
        "start" | "isolate" | "restart" | "reload-or-restart" | "try-restart"
            if units.iter().copied().any(super::state::is_power_state) =>
        {
            az.flag_rule(&rules::POWER_STATE);
        }
        "isolate" | "default" => az.flag_rule(&rules::SERVICE_STOP),
        "enable" | "link" | "reenable" if units.iter().any(|u| u.contains('/')) => {
            // A unit file from an arbitrary path made part of the system (persistence).
            az.flag(Finding::with(
                &rules::SYSTEM_CONFIG,
                "unit file from an arbitrary path linked into systemd",
            ));
        }
        v if STOP_ACTIONS.contains(&v) => az.flag_rule(&rules::SERVICE_STOP),
        _ => {}
    }
}

/// `service NAME ACTION`, `rc-service NAME ACTION`, `invoke-rc.d NAME ACTION`.
pub(crate) fn service(az: &mut Analyzer, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..]
        .iter()
        .map(|a| a.as_str())
        .filter(|w| !w.starts_with('-'))
        .collect();
    if words.get(1).is_some_and(|a| STOP_ACTIONS.contains(a)) {
        az.flag_rule(&rules::SERVICE_STOP);
    }
}

/// `/etc/init.d/NAME ACTION`.
pub(crate) fn init_script(az: &mut Analyzer, _name: &str, args: &[Arg<'_>]) {
    if args
        .get(1)
        .is_some_and(|a| STOP_ACTIONS.contains(&a.as_str()))
    {
        az.flag_rule(&rules::SERVICE_STOP);
    }
}

/// `launchctl stop|kickstart|bootout|unload|kill|disable|remove`.
pub(crate) fn launchctl(az: &mut Analyzer, args: &[Arg<'_>]) {
    let Some(verb) = args.get(1).map(|a| a.as_str()) else {
        return;
    };
    if matches!(
        verb,
        "stop" | "kickstart" | "bootout" | "unload" | "kill" | "disable" | "remove"
    ) {
        az.flag_rule(&rules::SERVICE_STOP);
        if args[2..]
            .iter()
            .any(|a| a.as_str().to_ascii_lowercase().contains("hermes"))
        {
            az.flag(Finding::with(
                &rules::GATEWAY,
                "stop/restart hermes launchd service (kills running agents)",
            ));
        }
    }
}

/// `shutdown`, `reboot`, `halt`, `poweroff` (not `shutdown -c`, not `--help`).
pub(crate) fn shutdown(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let harmless = args[1..].iter().any(|a| {
        matches!(a.as_str(), "--help" | "--version" | "-h" if name != "shutdown")
            || (name == "shutdown" && matches!(a.as_str(), "-c" | "-k" | "--help" | "--version"))
    });
    if !harmless {
        az.flag_rule(&rules::SHUTDOWN);
    }
}

/// `init 0|6`, `telinit 0|6`.
pub(crate) fn init(az: &mut Analyzer, args: &[Arg<'_>]) {
    if args.get(1).is_some_and(|a| matches!(a.as_str(), "0" | "6")) {
        az.flag(Finding::with(
            &rules::SHUTDOWN,
            "init 0/6 (shutdown/reboot)",
        ));
    }
}

/// `loginctl poweroff|reboot|halt`.
pub(crate) fn loginctl(az: &mut Analyzer, args: &[Arg<'_>]) {
    if args[1..]
        .iter()
        .any(|a| matches!(a.as_str(), "poweroff" | "reboot" | "halt" | "kexec"))
    {
        az.flag_rule(&rules::SHUTDOWN);
    }
    if args[1..]
        .iter()
        .any(|a| super::state::is_power_state(a.as_str()))
    {
        az.flag_rule(&rules::POWER_STATE);
    }
}

/// Firewall flushes and disables.
pub(crate) fn firewall(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let flagged = match name {
        "nft" => {
            words.windows(2).any(|w| {
                (w[0] == "flush" && matches!(w[1], "ruleset" | "table" | "chain"))
                    || (w[0] == "delete" && matches!(w[1], "table" | "chain"))
                    || (w[0] == "policy" && w[1].trim_end_matches([';', '}']) == "drop")
            }) || words.iter().any(|w| w.contains("policy drop"))
        }
        "ufw" => {
            words.iter().any(|w| matches!(*w, "disable" | "reset"))
                || words
                    .windows(2)
                    .any(|w| w[0] == "default" && matches!(w[1], "deny" | "reject"))
        }
        "pfctl" => words.iter().any(|w| w.starts_with("-F") || *w == "-d"),
        "firewall-cmd" => words
            .iter()
            .any(|w| w.starts_with("--set-default-zone=trusted") || *w == "--panic-off"),
        _ => {
            words
                .iter()
                .any(|w| matches!(*w, "-F" | "--flush" | "-X" | "--delete-chain"))
                || words.windows(3).any(|w| {
                    matches!(w[0], "-P" | "--policy")
                        && ["ACCEPT", "DROP", "REJECT"]
                            .iter()
                            .any(|p| w[2].eq_ignore_ascii_case(p))
                })
        }
    };
    if flagged {
        az.flag_rule(&rules::FIREWALL);
    }
    if super::state::firewall_lockout(name, &words) {
        az.flag_rule(&rules::FIREWALL_LOCKOUT);
    }
}

/// Wiping the shell history or the journal: `history -c`, `unset HISTFILE`,
/// `journalctl --vacuum-time=1s`, `journalctl --rotate --vacuum-size=1`.
pub(crate) fn history(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words = args[1..].iter().map(|a| a.as_str());
    let wipes = match name {
        "history" => words
            .clone()
            .any(|w| w.starts_with('-') && w[1..].contains(['c', 'd', 'w'])),
        "unset" => words.clone().any(|w| w.starts_with("HIST")),
        _ => words.clone().any(|w| w.starts_with("--vacuum")),
    };
    if wipes {
        az.flag_rule(&rules::LOG_WIPE);
    }
}

/// User and password changes (`passwd -S` and `chage -l` only read).
pub(crate) fn users(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let read_only = match name {
        "passwd" => words.iter().any(|w| matches!(*w, "-S" | "--status")),
        "chage" => words.iter().any(|w| matches!(*w, "-l" | "--list")),
        "visudo" => words.iter().any(|w| matches!(*w, "-c" | "--check")),
        _ => false,
    };
    if !read_only && !words.contains(&"--help") {
        az.flag_rule(&rules::USER_CHANGE);
    }
}

/// `crontab -r` removes; `crontab FILE`, `crontab -`, `... | crontab` replace.
pub(crate) fn crontab(az: &mut Analyzer, args: &[Arg<'_>], _stdin: &Source) {
    let spec = OptSpec {
        short_with_value: "uc",
        long_with_value: &[],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    if items.iter().any(|i| matches!(i, Item::Short('r', _))) {
        az.flag_rule(&rules::CRON_REMOVE);
        return;
    }
    if items.iter().any(|i| {
        matches!(
            i,
            Item::Short('l' | 'e' | 'T' | 'V' | 'h', _) | Item::Long("help", _)
        )
    }) {
        return;
    }
    az.flag_rule(&rules::CRON_INSTALL);
}

/// Hermes' own gateway (`hermes gateway stop|restart|run`, `hermes update`).
pub(crate) fn hermes(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "p",
        long_with_value: &["profile", "model", "provider"],
        stop_at_operand: true,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    let words: Vec<&str> = options::operands(&items)
        .map(|i| rest[i].as_str())
        .collect();
    match words.as_slice() {
        ["update", ..] => az.flag(Finding::with(
            &rules::GATEWAY,
            "hermes update (restarts gateway, kills running agents)",
        )),
        ["gateway", "stop" | "restart", ..] => az.flag(Finding::with(
            &rules::GATEWAY,
            "stop/restart hermes gateway (kills running agents)",
        )),
        ["gateway", "run", ..] => az.flag(Finding::with(
            &rules::GATEWAY,
            "start gateway outside systemd (use 'systemctl --user restart hermes-gateway')",
        )),
        _ => {}
    }
}
