//! Commands that run another command: `sudo`, `doas`, `env`, `nice`, `nohup`, `timeout`,
//! `time`, `command`, `exec`, `xargs`, `busybox`, `stdbuf`, `chroot`, ... The analyser
//! strips them (with their options and option values) until the real command word is at
//! the front. Wrappers whose payload is a shell string (`su -c`, `flock -c`, `watch`,
//! `ssh host cmd`, `env -S`) hand the string to the analyser as a script.

use super::analyze::Analyzer;
use super::model::Arg;
use super::options::{self, Item, OptSpec};
use super::rules;
use super::verdict::Finding;

/// What [`unwrap`] found.
pub(crate) enum Unwrap {
    /// Not a wrapper: dispatch the rules on this command.
    NotWrapper,
    /// A wrapper: the real command starts at this index.
    Inner(usize),
    /// A wrapper with nothing to run, or whose payload was analysed already.
    Done,
}

struct Wrapper {
    spec: OptSpec,
    /// Operands before the command (`timeout DURATION`, `chroot DIR`).
    skip: usize,
    /// `NAME=value` words may precede the command (`sudo`, `env`).
    assignments: bool,
}

const fn w(short: &'static str, long: &'static [&'static str], skip: usize) -> Wrapper {
    Wrapper {
        spec: OptSpec {
            short_with_value: short,
            long_with_value: long,
            stop_at_operand: true,
        },
        skip,
        assignments: false,
    }
}

fn table(name: &str) -> Option<Wrapper> {
    Some(match name {
        "sudo" => Wrapper {
            assignments: true,
            ..w(
                "CDghpRrTtUu",
                &[
                    "user",
                    "group",
                    "host",
                    "prompt",
                    "chdir",
                    "close-from",
                    "role",
                    "type",
                    "command-timeout",
                    "other-user",
                    "chroot",
                ],
                0,
            )
        },
        "doas" => w("uC", &[], 0),
        "pkexec" => w("", &["user"], 0),
        "run0" => w("uDg", &["user", "chdir", "setenv", "unit", "property"], 0),
        "env" => Wrapper {
            assignments: true,
            ..w("uCPS", &["unset", "chdir", "split-string"], 0)
        },
        "nice" => w("n", &["adjustment"], 0),
        "setsid" => w("", &[], 0),
        "nohup" | "builtin" | "unbuffer" | "caffeinate" | "torsocks" | "tini" | "dumb-init"
        | "catchsegv" | "firejail" | "proxychains" | "proxychains4" => w("f", &[], 0),
        "stdbuf" => w("ioe", &["input", "output", "error"], 0),
        "ionice" => w("cnt", &["class", "classdata"], 0),
        "chrt" => w("T", &["sched-runtime", "sched-deadline", "sched-period"], 1),
        "taskset" => w("", &[], 1),
        "timeout" => w("sk", &["signal", "kill-after"], 1),
        "time" => w("fo", &["format", "output"], 0),
        "command" => w("", &[], 0),
        "exec" => w("a", &[], 0),
        "chroot" => w("", &["userspec", "groups"], 1),
        "gosu" | "su-exec" => w("", &[], 1),
        "nsenter" | "unshare" => w("tSGw", &["target", "setuid", "setgid", "wd"], 0),
        "strace" | "ltrace" => w("oepsuEaOSPIbX", &["output"], 0),
        "xvfb-run" => w(
            "nsfep",
            &["server-num", "server-args", "auth-file", "error-file"],
            0,
        ),
        "systemd-run" => w(
            "upEMH",
            &[
                "unit",
                "property",
                "setenv",
                "machine",
                "host",
                "uid",
                "gid",
                "description",
                "slice",
                "working-directory",
                "nice",
            ],
            0,
        ),
        "sshpass" => w("pfdP", &[], 0),
        "xargs" => w(
            "adEILnPs",
            &[
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
            0,
        ),
        "busybox" | "toybox" => w("", &[], 0),
        "fakeroot" => w("ls", &["lib", "faked"], 0),
        "eatmydata" | "nocache" | "rlwrap" | "dbus-run-session" | "dbus-launch" | "catatonit"
        | "with-contenv" | "s6-setuidgid" | "authbind" | "pv" => w("", &[], 0),
        "faketime" => w("", &[], 1),
        "chpst" => w("uUbe/nlLmdofpcP", &[], 0),
        "setpriv" => w(
            "",
            &[
                "reuid",
                "regid",
                "groups",
                "inh-caps",
                "ambient-caps",
                "bounding-set",
                "securebits",
                "pdeathsig",
                "selinux-label",
                "apparmor-profile",
                "landlock-access",
                "landlock-rule",
                "ruid",
                "euid",
                "rgid",
                "egid",
            ],
            0,
        ),
        "ssh-agent" => w("aEtP", &[], 0),
        "cgexec" => w("g", &[], 0),
        "prlimit" => w("p", &["pid", "output"], 0),
        "numactl" => w("mNCPpilw", &[], 0),
        "valgrind" => w("", &[], 0),
        "entr" => w("", &[], 0),
        "doas.real" | "please" => w("u", &[], 0),
        _ => return None,
    })
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.as_bytes()[0].is_ascii_digit()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        }
        None => false,
    }
}

/// Strip the wrapper `name` at `args[0]`.
pub(crate) fn unwrap(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) -> Unwrap {
    match name {
        "su" | "runuser" | "sg" | "script" | "flock" => return payload_wrapper(az, name, args),
        "nix-shell" | "nix" | "toolbox" | "distrobox" => return dev_shell(az, name, args),
        "watch" => return watch(az, args),
        "ssh" => return ssh(az, args),
        _ => {}
    }
    let Some(wrapper) = table(name) else {
        return Unwrap::NotWrapper;
    };
    let rest = &args[1..];
    let items = options::parse(rest, &wrapper.spec);
    match name {
        "command" if options::has(&items, 'v', "") || options::has(&items, 'V', "") => {
            return Unwrap::Done;
        }
        "env" => {
            if let Some(payload) = items.iter().find_map(|item| match item {
                Item::Short('S', v) | Item::Long("split-string", v) => *v,
                _ => None,
            }) {
                az.script(payload);
                return Unwrap::Done;
            }
        }
        "sudo" | "doas" => sudo_flags(az, &items, rest),
        "taskset" | "ionice" if options::has(&items, 'p', "pid") => return Unwrap::Done,
        _ => {}
    }
    let Some(mut first) = options::first_operand(&items) else {
        return Unwrap::Done;
    };
    first += wrapper.skip;
    if name == "env" && rest.get(first).is_some_and(|a| a.as_str() == "-") {
        // `env - CMD`: the old spelling of `env -i`.
        first += 1;
    }
    if matches!(name, "sudo" | "doas") && first < rest.len() && opens_shell(name, args) {
        // `sudo -s CMD...`, `sudo -i CMD...`: the words are joined and run by the shell.
        az.script(&join(&rest[first..]));
        return Unwrap::Done;
    }
    if wrapper.assignments {
        while let Some(a) = rest.get(first).filter(|a| is_assignment(a.as_str())) {
            if let Some((var, value)) = a.as_str().split_once('=') {
                let value = Arg {
                    text: value.to_string().into(),
                    dynamic: a.dynamic,
                    taint: a.taint.clone(),
                };
                super::env_vars::assignment(az, var, &value);
            }
            first += 1;
        }
    }
    if first >= rest.len() {
        return Unwrap::Done;
    }
    if name == "xargs" && super::model::command_name(rest[first].as_str()) == "rm" {
        az.flag(Finding::new(&rules::XARGS_RM));
    }
    Unwrap::Inner(first + 1)
}

/// A privilege wrapper that starts a shell with no command given (`su`, `su - root`,
/// `runuser -l u`, `sudo -s`, `sudo -i`, `doas -s`): the shell reads stdin.
pub(crate) fn opens_shell(name: &str, args: &[Arg<'_>]) -> bool {
    let words = || args[1..].iter().map(|a| a.as_str());
    match name {
        "su" | "runuser" => !words().any(|w| {
            w == "-c"
                || (w.starts_with('-') && !w.starts_with("--") && w.ends_with('c'))
                || w.starts_with("--com")
                || w.starts_with("--se")
                || matches!(w, "--help" | "--version")
        }),
        "sudo" | "doas" => words().any(|w| {
            (w.starts_with('-') && !w.starts_with("--") && w.contains(['s', 'i']))
                || matches!(w, "--shell" | "--login")
        }),
        _ => false,
    }
}

fn sudo_flags(az: &mut Analyzer, items: &[Item<'_>], rest: &[Arg<'_>]) {
    let stdin = items.iter().any(|item| {
        matches!(
            item,
            Item::Short('S' | 'A', _) | Item::Long("stdin" | "askpass", _)
        )
    });
    let shell = items.iter().any(|item| {
        matches!(
            item,
            Item::Short('s' | 'i', _) | Item::Long("shell" | "login", _)
        )
    });
    let has_command = options::first_operand(items).is_some_and(|i| i < rest.len());
    if stdin || (shell && !has_command) {
        az.flag(Finding::new(&rules::SUDO_FLAG));
    }
}

/// `su [-] [user] -c CMD`, `runuser -u u -- cmd`, `sg group -c cmd`, `script -c CMD`,
/// `flock [opts] file -c CMD | cmd...`.
fn payload_wrapper(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) -> Unwrap {
    let rest = &args[1..];
    let spec = match name {
        "su" | "runuser" => OptSpec {
            short_with_value: "cgGsuw",
            long_with_value: &[
                "command",
                "session-command",
                "group",
                "supp-group",
                "shell",
                "user",
                "whitelist-environment",
            ],
            stop_at_operand: false,
        },
        "script" => OptSpec {
            short_with_value: "cEIOBTmo",
            long_with_value: &[
                "command",
                "echo",
                "log-in",
                "log-out",
                "log-io",
                "log-timing",
                "logging-format",
                "output-limit",
            ],
            stop_at_operand: false,
        },
        "flock" => OptSpec {
            short_with_value: "cwE",
            long_with_value: &["command", "timeout", "conflict-exit-code"],
            stop_at_operand: true,
        },
        _ => OptSpec {
            short_with_value: "c",
            long_with_value: &["command"],
            stop_at_operand: false,
        },
    };
    let items = options::parse(rest, &spec);
    if items
        .iter()
        .any(|item| matches!(item, Item::Long("help" | "version", None)))
    {
        return Unwrap::Done;
    }
    let payload = items.iter().find_map(|item| match item {
        Item::Short('c', v) | Item::Long("command" | "session-command", v) => *v,
        _ => None,
    });
    // `su -- root -c CMD`: words after the user go to the login shell, which runs `-c`.
    let payload = payload.or_else(|| {
        let ops: Vec<usize> = options::operands(&items).collect();
        ops.windows(2)
            .find(|w| rest[w[0]].as_str() == "-c" && matches!(name, "su" | "runuser"))
            .map(|w| rest[w[1]].as_str())
    });
    if let Some(payload) = payload {
        az.script(payload);
        return Unwrap::Done;
    }
    match name {
        // `runuser -u user -- cmd args`, `sg group cmd`? (sg takes a -c or a command).
        "runuser" if options::has(&items, 'u', "user") => match options::first_operand(&items) {
            Some(i) => Unwrap::Inner(i + 1),
            None => Unwrap::Done,
        },
        "flock" => {
            let ops: Vec<usize> = options::operands(&items).collect();
            match ops.get(1) {
                Some(i) => Unwrap::Inner(i + 1),
                None => Unwrap::Done,
            }
        }
        // `sg group "command"`: the command is a shell string.
        "sg" => {
            let ops: Vec<usize> = options::operands(&items).collect();
            if let Some(&i) = ops.get(1) {
                az.script(&join(&rest[i..]));
            }
            Unwrap::Done
        }
        "su" if options::first_operand(&items)
            .is_none_or(|i| rest[i].as_str() == "root" || rest[i].as_str() == "-") =>
        {
            // An interactive root shell.
            az.flag(Finding::with(
                &rules::SUDO_FLAG,
                "interactive root shell (su)",
            ));
            Unwrap::Done
        }
        _ => Unwrap::Done,
    }
}

/// `nix-shell --run CMD` / `--command CMD`, `nix develop -c CMD...`, `toolbox run CMD...`,
/// `distrobox enter NAME -- CMD...`.
fn dev_shell(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) -> Unwrap {
    let rest = &args[1..];
    if name == "nix-shell" {
        if let Some(i) = rest
            .iter()
            .position(|a| matches!(a.as_str(), "--run" | "--command"))
            && let Some(cmd) = rest.get(i + 1)
        {
            super::checks::exec::code_string(az, cmd);
        }
        return Unwrap::Done;
    }
    let marker = match name {
        "nix" => rest
            .iter()
            .position(|a| matches!(a.as_str(), "-c" | "--command"))
            .filter(|_| {
                rest.first()
                    .is_some_and(|a| matches!(a.as_str(), "develop" | "shell"))
            }),
        "toolbox" => rest.iter().position(|a| a.as_str() == "run").map(|p| {
            p + rest[p + 1..]
                .iter()
                .take_while(|a| a.as_str().starts_with('-'))
                .count()
        }),
        _ => rest.iter().position(|a| a.as_str() == "--"),
    };
    match marker {
        Some(m) if m + 2 < args.len() => Unwrap::Inner(m + 2),
        _ => Unwrap::Done,
    }
}

/// `watch [opts] cmd args...` runs `sh -c "cmd args..."` (or argv with `-x`).
fn watch(az: &mut Analyzer, args: &[Arg<'_>]) -> Unwrap {
    let spec = OptSpec {
        short_with_value: "nqd",
        long_with_value: &["interval", "equexit", "differences"],
        stop_at_operand: true,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    let Some(first) = options::first_operand(&items) else {
        return Unwrap::Done;
    };
    if options::has(&items, 'x', "exec") {
        return Unwrap::Inner(first + 1);
    }
    let joined = join(&rest[first..]);
    az.script(&joined);
    Unwrap::Done
}

/// `ssh [opts] host [cmd...]`: the remote command is a shell string.
fn ssh(az: &mut Analyzer, args: &[Arg<'_>]) -> Unwrap {
    let spec = OptSpec {
        short_with_value: "BbcDEeFIiJLlmOoPpQRSwW",
        long_with_value: &[],
        stop_at_operand: true,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    for item in &items {
        if let Item::Short('o', Some(option)) = item {
            ssh_option(az, option);
        }
    }
    let Some(host) = options::first_operand(&items) else {
        return Unwrap::Done;
    };
    if host + 1 < rest.len() {
        let joined = join(&rest[host + 1..]);
        az.script(&joined);
    }
    Unwrap::Done
}

/// `-o ProxyCommand=CMD`, `-o LocalCommand=CMD`, `-o KnownHostsCommand=CMD`: run on
/// this machine by the ssh client (also through `scp`, `sftp`, `rsync -e`, `git`).
pub(crate) fn ssh_option(az: &mut Analyzer, option: &str) {
    let (key, value) = match option.split_once(['=', ' ']) {
        Some((k, v)) => (k.trim(), v.trim()),
        None => return,
    };
    let key = key.to_ascii_lowercase();
    if matches!(
        key.as_str(),
        "proxycommand" | "localcommand" | "knownhostscommand" | "remotecommand"
    ) && !value.eq_ignore_ascii_case("none")
    {
        let value = value
            .replace("%h", "host")
            .replace("%p", "22")
            .replace("%r", "user")
            .replace("%%", "%");
        az.script(value.trim_start_matches('='));
    }
}

pub(crate) fn join(args: &[Arg<'_>]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(arg.as_str());
    }
    out
}
