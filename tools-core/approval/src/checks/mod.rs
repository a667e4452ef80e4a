//! The rules, as code: each command name the detector knows has a check that reads its
//! options the way the command does and reports findings. [`run`] strips wrappers first,
//! then dispatches on the command name (the basename, case-folded, without `.exe`; options
//! stay case-sensitive, so `git branch -d` is not `-D`).
//!
//! A command name that is computed at run time (`$cmd -rf /`) or a glob (`/bin/r?`) is
//! checked as every known command it could be, and the findings of all of them count.

pub(crate) mod cloud;
pub(crate) mod code;
pub(crate) mod data;
pub(crate) mod disks;
pub(crate) mod editors;
pub(crate) mod exec;
pub(crate) mod fetch;
pub(crate) mod files;
pub(crate) mod find;
pub(crate) mod git;
pub(crate) mod inert;
pub(crate) mod infra;
pub(crate) mod launch;
pub(crate) mod net;
pub(crate) mod pids;
pub(crate) mod printf;
pub(crate) mod secrets;
pub(crate) mod state;
pub(crate) mod system;
pub(crate) mod xargs;

use super::analyze::Analyzer;
use super::model::{Arg, Source, command_name};
use super::wrappers::{self, Unwrap};

/// Command names some rule keys on; a dynamic or globbed command name is tried as each.
/// Commands whose rules fire without any telling argument (`reboot`, `crontab`) are left
/// out: `$cmd` alone must not read as a reboot.
const KNOWN: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "find",
    "chmod",
    "chown",
    "mkfs",
    "dd",
    "cp",
    "mv",
    "install",
    "tee",
    "sed",
    "perl",
    "ruby",
    "python",
    "python3",
    "node",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "eval",
    "source",
    ".",
    "sudo",
    "env",
    "xargs",
    "kill",
    "pkill",
    "killall",
    "systemctl",
    "service",
    "git",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "iptables",
    "nft",
    "ufw",
    "curl",
    "wget",
    "wipefs",
    "mkswap",
    "cat",
];

/// Run the rules on one command (argv).
pub(crate) fn run(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) -> Source {
    let mut args = args;
    loop {
        let Some(first) = args.first() else {
            return Source::Plain;
        };
        let word = first.as_str();
        if first.dynamic || (word.contains(['*', '?', '[']) && !matches!(word, "[" | "[[")) {
            return dynamic_name(az, args, stdin);
        }
        let name = command_name(word);
        az.record_line(args);
        if az.runs_fresh_executable(word) {
            az.flag_rule(&super::rules::CHMOD_THEN_RUN);
        }
        if word.contains('/') {
            az.run_written(first);
        }
        if let Some(path) = word.strip_prefix("/etc/init.d/") {
            system::init_script(az, path, args);
            return Source::Plain;
        }
        match wrappers::unwrap(az, &name, args) {
            Unwrap::NotWrapper if inert::is_inert(&name, args) => return Source::Produced,
            Unwrap::NotWrapper => return dispatch(az, &name, args, stdin),
            Unwrap::Inner(i) if name == "xargs" => match xargs::input(az, args, i, stdin) {
                Some(out) => return out,
                None => args = &args[i..],
            },
            Unwrap::Inner(i) => args = &args[i..],
            Unwrap::Done => {
                if *stdin != Source::Plain && wrappers::opens_shell(&name, args) {
                    // `echo CMD | su`, `... | sudo -s`: the shell reads its commands from
                    // the pipe.
                    exec::stdin_code(az, stdin, None);
                }
                return Source::Plain;
            }
        }
    }
}

/// What a reader (`cat`, `head`, `tail`, ...) prints: its stdin passed along (a part of
/// literal text is judged as the whole, an over-approximation); when it reads files, a
/// whole file as it is (`cat f | sh` runs `f`, like `sh f`: plain), and a part or a
/// transformation of one (`head -1 f | sh`) is content unknown here.
fn reader_output(name: &str, args: &[Arg<'_>], stdin: &Source) -> Source {
    let reads_file = args[1..].iter().any(|a| {
        let w = a.as_str();
        !w.starts_with(['-', '+']) && !w.bytes().all(|b| b.is_ascii_digit())
    });
    if !reads_file {
        return stdin.clone();
    }
    if let Some(taint) = stdin.taint() {
        return taint;
    }
    let dynamic_file = args[1..].iter().any(|a| a.dynamic);
    match name {
        "cat" | "tac" | "less" | "more" | "bat" if !dynamic_file => Source::Plain,
        _ => Source::Produced,
    }
}

/// Whether a filter names a file operand (besides its options and a pattern).
fn reads_files(args: &[Arg<'_>]) -> bool {
    let name = command_name(args[0].as_str());
    let operands: Vec<&Arg<'_>> = args[1..]
        .iter()
        .filter(|a| !a.as_str().starts_with('-'))
        .collect();
    let pattern = usize::from(name == "grep");
    operands.len() > pattern
}

fn dynamic_name(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) -> Source {
    // The command that runs is not known: ask (fail closed), and still try it as every
    // known command so a hardline-shaped rest (`$x -rf /`) is blocked.
    az.flag_rule(&super::rules::UNRESOLVED);
    let word = args[0].as_str();
    let base = word.rsplit('/').next().unwrap_or(word);
    let glob = !args[0].dynamic;
    let mut out = Source::Plain;
    for candidate in KNOWN {
        if glob && !super::glob::matches(base, candidate) {
            continue;
        }
        let mut replaced: Vec<Arg<'_>> = args.to_vec();
        replaced[0] = Arg::literal(*candidate);
        let source = match wrappers::unwrap(az, candidate, &replaced) {
            Unwrap::NotWrapper => dispatch(az, candidate, &replaced, stdin),
            Unwrap::Inner(i) => run(az, &replaced[i..], stdin),
            Unwrap::Done => Source::Plain,
        };
        if source.taint().is_some() {
            out = source;
        }
    }
    out
}

/// Dispatch on the command name. Returns where the command's output comes from.
fn dispatch(az: &mut Analyzer, name: &str, args: &[Arg<'_>], stdin: &Source) -> Source {
    if let Some(body) = az.function_body(name) {
        // A function defined earlier in the command: its body runs with these arguments.
        // The command's own rules still apply (`command rm` skips the function).
        az.call_function(name, &body, &args[1..]);
    }
    if *stdin == Source::Pids {
        if name == "kill" {
            pids::kill_targets(az, args, stdin);
        }
        let out = pids::filter(name, args);
        if out == Source::Pids {
            return out;
        }
    }
    if name == "ls"
        && let Some(out) = pids::lister(name, args)
        && out == Source::Pids
    {
        return out;
    }
    secrets::command(az, name, args);
    match name {
        // --- files --------------------------------------------------------------------
        "rm" | "unlink" | "rmdir" => files::rm(az, name, args),
        "shred" | "wipefs" | "blkdiscard" => files::wipe(az, name, args),
        "find" => return find::find(az, args, stdin),
        "chmod" => files::chmod(az, args),
        "mkdir" => files::mode_option(az, args, "mp"),
        "install" => {
            files::mode_option(az, args, "mgoSt");
            files::copy(az, name, args);
        }
        "chown" | "chgrp" => files::chown(az, args),
        "dd" => files::dd(az, args),
        "cp" | "mv" | "ln" | "rsync" | "scp" => files::copy(az, name, args),
        "tee" => {
            files::tee(az, args, stdin);
            return stdin.clone();
        }
        "sed" => files::sed(az, args),
        "truncate" => files::truncate(az, args),
        "cat" | "less" | "more" | "head" | "tail" | "od" | "hexdump" | "strings" | "bat"
        | "tac" | "nl" => {
            files::read(az, args);
            return reader_output(name, args, stdin);
        }
        "set" => exec::set(az, args),
        "history" | "unset" | "journalctl" => system::history(az, name, args),
        "read" => exec::read(az, args, stdin),
        "cd" | "pushd" => {
            az.change_dir(args[1..].iter().find(|a| !a.as_str().starts_with('-')));
            return Source::Plain;
        }
        "base64" | "xxd" => {
            files::read(az, args);
            if *stdin == Source::Remote {
                return Source::Remote;
            }
            if exec::decodes(name, args) {
                return Source::Decoded;
            }
        }
        "fdisk" | "sfdisk" | "cfdisk" | "parted" | "sgdisk" | "gdisk" => files::partition(az, args),
        n if files::is_mkfs(n) => files::mkfs(az, args),
        // --- code execution --------------------------------------------------------------
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "csh" | "tcsh"
        | "yash" | "posh" => exec::shell(az, args, stdin),
        "eval" => exec::eval(az, args),
        "source" | "." => exec::source(az, args, stdin),
        "cmd" => exec::windows_cmd(az, args),
        "powershell" | "pwsh" => exec::powershell(az, args),
        n if code::interpreter(n).is_some() => code::inline_code(az, n, args, stdin),
        "alias" => exec::alias(az, args),
        "sort" | "uniq" | "grep" | "fold" | "shuf"
            if matches!(stdin, Source::Literal(_)) && !reads_files(args) =>
        {
            // Lines kept, dropped or reordered: the literal text (a superset) as it came.
            return stdin.clone();
        }
        "rg" | "sort" | "man" | "ag" | "tar" | "zip" => {
            exec::program_options(az, name, args);
            files::read(az, args);
        }
        "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh" | "lwp-request" | "nc"
        | "ncat" | "netcat" | "socat" | "telnet" | "nc.traditional" | "nc.openbsd" | "wget2" => {
            files::upload(az, name, args);
            fetch::record(az, name, args);
            net::client(az, name, args);
            return Source::Remote;
        }
        // --- programs that run commands given as text --------------------------------------
        "at" | "batch" => launch::at(az, args, stdin),
        "trap" => launch::trap(az, args),
        "tmux" => launch::tmux(az, args),
        "screen" => launch::screen(az, args, stdin),
        "parallel" => launch::parallel(az, args, stdin),
        "make" | "gmake" => launch::make(az, args, stdin),
        n if editors::is_vi(n) => editors::vi(az, n, args, stdin),
        "gdb" | "lldb" | "cgdb" => editors::debugger(az, name, args, stdin),
        // --- network, mounts, kernel security ----------------------------------------------
        "ip" => {
            let ran = launch::ip_netns_exec(az, args, stdin);
            if !ran {
                net::network(az, name, args);
            }
        }
        "ifconfig" | "ifdown" | "nmcli" | "route" => net::network(az, name, args),
        "mount" | "umount" => net::mount(az, name, args),
        "setenforce" | "sysctl" | "aa-teardown" | "aa-disable" | "aa-complain"
        | "apparmor_parser" => net::security(az, name, args),
        "setfacl" | "chattr" => files::acl_or_attributes(az, name, args),
        "gzip" | "bzip2" | "xz" | "zstd" | "7z" | "7za" | "gpg" | "rar" | "lz4" => {
            files::read(az, args)
        }
        // --- cloud --------------------------------------------------------------------------
        "aws" | "gcloud" | "az" | "gsutil" | "s3cmd" | "rclone" | "doctl" | "hcloud" => {
            cloud::cli(az, name, args)
        }
        "echo" | "printf" => return exec::echo(args),
        // `yes TEXT` prints TEXT (again and again).
        "yes" => {
            let mut echo: Vec<Arg<'_>> = vec![Arg::literal("echo")];
            echo.extend(args[1..].iter().cloned());
            return exec::echo(&echo);
        }
        "base32" | "basenc" | "rev" | "tr" | "openssl" | "gunzip" | "zcat" | "bzcat" | "xzcat"
        | "uudecode" => {
            if *stdin == Source::Remote {
                return Source::Remote;
            }
            if name == "base32" || name == "basenc" || exec::decodes(name, args) {
                return Source::Decoded;
            }
            if let Some(taint) = stdin.taint() {
                return taint;
            }
        }
        // --- git ----------------------------------------------------------------------------
        "git" => git::git(az, args),
        // --- processes, services, system -----------------------------------------------
        "kill" => {
            system::kill(az, args);
            pids::kill_targets(az, args, stdin);
        }
        "ps" | "pgrep" | "pidof" => {
            if let Some(out) = pids::lister(name, args) {
                return out;
            }
        }
        "killall5" => system::killall5(az, args),
        "dbus-send" | "busctl" | "gdbus" | "qdbus" | "kexec" => system::power_bus(az, name, args),
        "cryptsetup" | "badblocks" | "hdparm" | "nvme" | "sg_format" => {
            disks::destroyer(az, name, args)
        }
        "pkill" | "killall" | "skill" => system::pkill(az, name, args),
        "systemctl" => system::systemctl(az, args),
        "service" | "rc-service" | "invoke-rc.d" => system::service(az, args),
        "launchctl" => system::launchctl(az, args),
        "shutdown" | "reboot" | "halt" | "poweroff" => system::shutdown(az, name, args),
        "init" | "telinit" => system::init(az, args),
        "loginctl" => system::loginctl(az, args),
        "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" | "ip6tables-legacy"
        | "ip6tables-nft" | "nft" | "ufw" | "pfctl" | "firewall-cmd" => {
            system::firewall(az, name, args)
        }
        "passwd" | "chpasswd" | "usermod" | "userdel" | "useradd" | "adduser" | "deluser"
        | "groupdel" | "groupmod" | "gpasswd" | "chage" | "chsh" | "vipw" | "visudo" => {
            system::users(az, name, args)
        }
        "crontab" => system::crontab(az, args, stdin),
        "hermes" => system::hermes(az, args),
        // --- containers, clusters, infrastructure -------------------------------------------
        "docker" | "podman" | "nerdctl" => {
            state::engine_reset(az, args);
            infra::docker(az, args);
        }
        "zpool" | "zfs" | "lvremove" | "vgremove" | "pvremove" | "lvm" | "mdadm" | "dmsetup"
        | "vgchange" | "lvchange" => state::storage(az, name, args),
        "docker-compose" | "podman-compose" => infra::compose(az, &args[1..]),
        "kubectl" | "oc" => infra::kubectl(az, args),
        "helm" => infra::helm(az, args),
        "terraform" | "tofu" | "terragrunt" | "pulumi" => infra::terraform(az, args),
        // --- data stores ----------------------------------------------------------------------
        n if data::is_sql_client(n) => data::sql(az, args, stdin),
        "redis-cli" | "valkey-cli" | "keydb-cli" => data::redis(az, args, stdin),
        "dropdb" | "dropuser" | "mysqladmin" | "mariadb-admin" => data::admin_drop(az, name, args),
        "mongo" | "mongosh" => data::mongo(az, args, stdin),
        "etcdctl" | "consul" => data::kv_delete(az, name, args),
        _ => {}
    }
    if let Some(taint) = stdin.taint() {
        // Passing remote or decoded content along (`curl | gunzip | sh`).
        return taint;
    }
    // Whatever a program prints is unknown: data for the next stage, unresolved code
    // for a shell or interpreter reading it.
    Source::Produced
}
