//! Network and kernel-state rules: reverse shells (`/dev/tcp`, `nc -e`, `ncat --sh-exec`,
//! `socat ... exec:`), cloud instance-metadata endpoints, interfaces and routes taken down,
//! mounts and remounts, and switching off SELinux, AppArmor or ASLR.

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::rules;

/// Hosts that serve instance credentials to whatever asks from inside a cloud VM.
const METADATA_HOSTS: &[&str] = &[
    "169.254.169.254",
    "169.254.170.2",
    "metadata.google.internal",
    "metadata.goog",
    "100.100.100.200",
    "fd00:ec2::254",
    "[fd00:ec2::254]",
    "metadata.azure.com",
    "169.254.169.253",
];

/// True when `text` names a cloud metadata endpoint.
pub(crate) fn names_metadata(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    METADATA_HOSTS.iter().any(|h| lower.contains(h))
}

/// A network client: metadata endpoints and program-running options.
pub(crate) fn client(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    if args[1..].iter().any(|a| names_metadata(a.as_str())) {
        az.flag_rule(&rules::CLOUD_METADATA);
    }
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let shell = match name {
        "nc" | "netcat" | "ncat" | "nc.traditional" | "nc.openbsd" => words.iter().any(|w| {
            (w.starts_with('-') && !w.starts_with("--") && w[1..].contains(['e', 'c']))
                || w.starts_with("--exec")
                || w.starts_with("--sh-exec")
                || w.starts_with("--lua-exec")
        }),
        "socat" => words.iter().any(|w| {
            let lower = w.to_ascii_lowercase();
            lower.starts_with("exec:")
                || lower.starts_with("system:")
                || lower.contains(",exec:")
                || lower.starts_with("pty,")
        }),
        _ => false,
    };
    if shell {
        az.flag_rule(&rules::REVERSE_SHELL);
    }
}

/// A redirection or argument naming bash's network pseudo-devices.
pub(crate) fn is_dev_tcp(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

/// `ip link set X down`, `ip link del`, `ip route del|flush`, `ip addr flush|del`,
/// `ifconfig X down`, `ifdown`, `nmcli networking off`, `nmcli con down`, `route del`.
pub(crate) fn network(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..]
        .iter()
        .map(|a| a.as_str())
        .filter(|w| !w.starts_with('-'))
        .collect();
    let object = words.first().copied().unwrap_or_default();
    let verb = words.get(1).copied().unwrap_or_default();
    let down = match name {
        "ip" => {
            let link = "link".starts_with(object) && !object.is_empty();
            let route = ["route", "r", "ro", "rou", "rout"].contains(&object)
                || ["address", "a", "ad", "add", "addr"].contains(&object)
                || object == "neigh";
            (link && (words.contains(&"down") || matches!(verb, "del" | "delete")))
                || (route && matches!(verb, "del" | "delete" | "flush" | "f" | "fl"))
        }
        "ifconfig" => words.contains(&"down"),
        "ifdown" => !args[1..].iter().any(|a| a.as_str() == "--help"),
        "nmcli" => {
            (object.starts_with('n') && verb == "off")
                || (object.starts_with('r') && words.contains(&"off"))
                || (object.starts_with('c') && matches!(verb, "down" | "delete" | "del"))
                || (object.starts_with('d') && matches!(verb, "disconnect" | "delete"))
        }
        "route" => matches!(object, "del" | "flush"),
        _ => false,
    };
    if down {
        az.flag_rule(&rules::NETWORK_DOWN);
    }
}

/// `mount` (not listing), `umount`.
pub(crate) fn mount(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let rest: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    if rest
        .iter()
        .any(|w| matches!(*w, "-h" | "--help" | "-V" | "--version"))
    {
        return;
    }
    let mut operands = 0;
    let mut all = false;
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i];
        if matches!(
            w,
            "-t" | "-o" | "-O" | "-L" | "-U" | "-T" | "-N" | "--types" | "--options"
        ) {
            i += 1;
        } else if w == "-a" || w == "--all" || w == "-A" {
            all = true;
        } else if !w.starts_with('-') {
            operands += 1;
        }
        i += 1;
    }
    // `mount`, `mount -l`, `mount -t ext4` only list.
    if operands > 0 || all || name != "mount" {
        az.flag_rule(&rules::MOUNT);
    }
}

/// `setenforce 0`, `sysctl kernel.randomize_va_space=0`, `aa-teardown`, `aa-disable`,
/// `aa-complain`.
pub(crate) fn security(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let off = match name {
        "setenforce" => words
            .iter()
            .any(|w| *w == "0" || w.eq_ignore_ascii_case("permissive")),
        "sysctl" => words.iter().any(|w| {
            let w = w.replace('/', ".").replace(' ', "");
            w.starts_with("kernel.randomize_va_space=") && !w.ends_with("=2")
                || w.starts_with("kernel.yama.ptrace_scope=0")
                || w.starts_with("kernel.kptr_restrict=0")
                || w.starts_with("kernel.dmesg_restrict=0")
                || w.starts_with("kernel.modules_disabled")
                || w.starts_with("kernel.sysrq=") && !w.ends_with("=0")
        }),
        "aa-teardown" | "aa-disable" | "aa-complain" | "apparmor_parser" => {
            name != "apparmor_parser" || words.iter().any(|w| matches!(*w, "-R" | "--remove"))
        }
        _ => false,
    };
    if off {
        az.flag_rule(&rules::SECURITY_DISABLE);
    }
}
