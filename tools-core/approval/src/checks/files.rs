//! Rules about files and devices: deletes, permissions, ownership, formatting, raw device
//! writes, overwriting system, credential and project files, reading secrets.

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::options::{self, Item, OptSpec};
use super::super::paths::{self, PathClass, classify};
use super::super::rules;
use super::super::verdict::Finding;

/// How a file gets written, for the finding's wording.
#[derive(Clone, Copy)]
pub(crate) enum Via {
    Redirect,
    Tee,
    Copy,
    Edit,
    Delete,
}

/// A file written by a redirection or a command.
pub(crate) fn write_target(az: &mut Analyzer, target: &Arg<'_>, via: &str) {
    let via = match via {
        "tee" => Via::Tee,
        "copy" => Via::Copy,
        "edit" => Via::Edit,
        "delete" => Via::Delete,
        _ => Via::Redirect,
    };
    write_target_via(az, target, via);
}

pub(crate) fn write_target_via(az: &mut Analyzer, target: &Arg<'_>, via: Via) {
    if matches!(via, Via::Delete) && az.is_link(target) {
        // Removing a link made earlier removes the link, not what it points at.
        return;
    }
    let target = &az.resolve(target);
    if super::net::is_dev_tcp(target.as_str()) {
        az.flag_rule(&rules::REVERSE_SHELL);
        return;
    }
    if paths::is_power_control(target.as_str()) {
        az.flag_rule(&rules::POWER_STATE);
    }
    let class = classify(target.as_str(), target.dynamic);
    let finding = match class {
        PathClass::RawDevice => Finding::new(&rules::WRITE_DEVICE),
        PathClass::Sysrq => Finding::new(&rules::SYSRQ),
        PathClass::Root | PathClass::SystemDir | PathClass::SystemFile => Finding::with(
            &rules::SYSTEM_CONFIG,
            match via {
                Via::Redirect => "overwrite system config",
                Via::Tee => "overwrite system file via tee",
                Via::Copy => "copy/move file into system config path",
                Via::Edit => "in-place edit of system config",
                Via::Delete => "delete in system path",
            },
        ),
        PathClass::Sensitive | PathClass::Home => Finding::with(
            &rules::SENSITIVE_FILE,
            match via {
                Via::Redirect => "overwrite of SSH, shell-rc or credential file via redirection",
                Via::Tee => "overwrite of SSH, shell-rc or credential file via tee",
                Via::Copy => "copy/move file into sensitive credential/SSH/shell-rc path",
                Via::Edit => "in-place edit of sensitive credential/SSH/shell-rc path",
                Via::Delete => "delete of SSH, shell-rc or credential file",
            },
        ),
        PathClass::AgentConfig => Finding::new(&rules::AGENT_CONFIG),
        PathClass::ProjectEnv => Finding::with(
            &rules::PROJECT_ENV,
            match via {
                Via::Redirect => "overwrite project env/config via redirection",
                Via::Tee => "overwrite project env/config via tee",
                Via::Copy | Via::Edit => "overwrite project env/config file",
                Via::Delete => "delete of project env file",
            },
        ),
        PathClass::Log => Finding::new(&rules::LOG_WIPE),
        PathClass::Other => return,
    };
    if matches!(via, Via::Delete)
        && matches!(
            class,
            PathClass::SystemFile | PathClass::SystemDir | PathClass::Root
        )
    {
        az.flag(Finding::new(&rules::RM_SYSTEM_PATH));
        return;
    }
    az.flag(finding);
}

const RM_SPEC: OptSpec = OptSpec {
    short_with_value: "",
    long_with_value: &[],
    stop_at_operand: false,
};

/// `rm`, `unlink`, `rmdir`.
pub(crate) fn rm(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let rest = &args[1..];
    let items = options::parse(rest, &RM_SPEC);
    if items
        .iter()
        .any(|i| matches!(i, Item::Long("help" | "version", _)))
    {
        return;
    }
    // `--rec` and other abbreviations of `--recursive` count (`options::has`).
    let recursive = name == "rm"
        && (items
            .iter()
            .any(|item| matches!(item, Item::Short('r' | 'R', _)))
            || options::has(&items, '\0', "recursive"));
    for i in options::operands(&items) {
        let target = &rest[i];
        if recursive {
            recursive_delete_target(az, target);
        } else {
            write_target_via(az, target, Via::Delete);
        }
    }
    if recursive {
        az.flag_rule(&rules::RM_RECURSIVE);
    }
}

/// The hardline part of a recursive delete.
fn recursive_delete_target(az: &mut Analyzer, target: &Arg<'_>) {
    if az.is_link(target) {
        // `rm -r link` removes the link; `rm -r link/` and `link/*` go through it.
        return;
    }
    let target = &az.resolve(target);
    let mut class = classify(target.as_str(), target.dynamic);
    if target.dynamic {
        // `rm -rf "$HOME/$DIR"`, `rm -rf /$X`: an unknown part may be empty.
        az.flag_rule(&rules::UNRESOLVED);
        if let Some(visible) = paths::unknowns_empty(target.as_str()) {
            class = class.worse(classify(&visible, false));
        }
    }
    match class {
        PathClass::Root => az.flag_rule(&rules::RM_ROOT),
        PathClass::SystemDir => az.flag_rule(&rules::RM_SYSTEM_DIR),
        PathClass::Home => az.flag_rule(&rules::RM_HOME),
        PathClass::RawDevice => az.flag_rule(&rules::WRITE_DEVICE),
        PathClass::Sensitive | PathClass::AgentConfig => az.flag(Finding::with(
            &rules::SENSITIVE_FILE,
            "delete of SSH, shell-rc or credential file",
        )),
        PathClass::SystemFile => az.flag_rule(&rules::RM_SYSTEM_PATH),
        PathClass::Log => az.flag_rule(&rules::LOG_WIPE),
        _ => {}
    }
}

/// `shred`, `wipefs`, `blkdiscard`.
pub(crate) fn wipe(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: if name == "shred" { "nsx" } else { "tolpO" },
        long_with_value: &[
            "iterations",
            "size",
            "random-source",
            "types",
            "offset",
            "length",
            "step",
        ],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    // `wipefs DEV` only lists signatures; `-a` or `-o OFFSET` erases.
    if name == "wipefs" && !options::has(&items, 'a', "all") && !options::has(&items, 'o', "offset")
    {
        return;
    }
    for i in options::operands(&items) {
        let target = &rest[i];
        if paths::is_raw_device(target.as_str(), target.dynamic) {
            az.flag_rule(&rules::WIPE_DEVICE);
        } else {
            write_target_via(az, target, Via::Delete);
        }
    }
}

/// True when the octal or symbolic `mode` makes a file writable by others.
pub(crate) fn world_writable(mode: &str) -> bool {
    if !mode.is_empty() && mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        let last = mode.as_bytes()[mode.len() - 1] - b'0';
        return mode.len() >= 3 && last & 2 != 0;
    }
    mode.split(',').any(|clause| {
        let who_len = clause.bytes().take_while(|b| b"ugoa".contains(b)).count();
        let who = &clause[..who_len];
        let rest = &clause[who_len..];
        let others = who.contains('o') || who.contains('a');
        // Several ops may follow: `o+r+w`, `a=rw-x`.
        let mut adding = false;
        let mut writes = false;
        for c in rest.chars() {
            match c {
                '+' | '=' => adding = true,
                '-' => adding = false,
                'w' if adding => writes = true,
                _ => {}
            }
        }
        others && writes
    })
}

/// True when `mode` sets the setuid or setgid bit (`4755`, `u+s`, `g=rxs`).
pub(crate) fn sets_id_bit(mode: &str) -> bool {
    if !mode.is_empty() && mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return mode.len() >= 4 && (mode.as_bytes()[mode.len() - 4] - b'0') & 6 != 0;
    }
    mode.split(',').any(|clause| {
        let ops = clause.trim_start_matches(['u', 'g', 'o', 'a']);
        let mut adding = false;
        ops.chars().any(|c| {
            match c {
                '+' | '=' => adding = true,
                '-' => adding = false,
                _ => {}
            }
            adding && c == 's'
        })
    })
}

/// A recursive permission, ownership, ACL or attribute change reaching the root, a system
/// directory or file, or a home directory.
pub(crate) fn system_permissions(az: &mut Analyzer, targets: &[&Arg<'_>]) {
    let hits = targets.iter().any(|t| {
        let t = az.resolve(t);
        matches!(
            classify(t.as_str(), t.dynamic),
            PathClass::Root
                | PathClass::SystemDir
                | PathClass::SystemFile
                | PathClass::Home
                | PathClass::Log
        )
    });
    if hits {
        az.flag_rule(&rules::SYSTEM_PERMISSIONS);
    }
}

/// `setfacl -R ...` / `chattr -R ...` on system paths.
pub(crate) fn acl_or_attributes(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: if name == "setfacl" { "mMxX" } else { "vp" },
        long_with_value: &[
            "modify",
            "modify-file",
            "remove",
            "remove-file",
            "set",
            "set-file",
        ],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    if !items
        .iter()
        .any(|i| matches!(i, Item::Short('R', _) | Item::Long("recursive", _)))
    {
        return;
    }
    let mut ops: Vec<&Arg<'_>> = options::operands(&items).map(|i| &rest[i]).collect();
    if name == "chattr"
        && ops
            .first()
            .is_some_and(|a| a.as_str().starts_with(['+', '=']))
    {
        ops.remove(0); // the attribute change (`+i`)
    }
    system_permissions(az, &ops);
}

fn adds_execute(mode: &str) -> bool {
    if mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return mode.len() >= 3 && mode.bytes().rev().take(3).any(|b| (b - b'0') & 1 != 0);
    }
    mode.split(',').any(|c| c.contains('+') && c.contains('x'))
}

const CHMOD_OPTIONS: &[&str] = &[
    "-R",
    "-c",
    "-f",
    "-v",
    "--recursive",
    "--changes",
    "--silent",
    "--quiet",
    "--verbose",
    "--preserve-root",
    "--no-preserve-root",
    "--dereference",
    "-h",
    "--no-dereference",
    "-H",
    "-L",
    "-P",
];

/// `chmod`: world-writable modes in every spelling; remembers `+x` targets.
pub(crate) fn chmod(az: &mut Analyzer, args: &[Arg<'_>]) {
    let rest = &args[1..];
    let mut recursive = false;
    let mut mode: Option<&str> = None;
    let mut files: Vec<&Arg<'_>> = Vec::new();
    let mut options_done = false;
    for a in rest {
        let w = a.as_str();
        if !options_done && w == "--" {
            options_done = true;
            continue;
        }
        if !options_done && (CHMOD_OPTIONS.contains(&w) || w.starts_with("--reference")) {
            recursive |= w == "-R" || w == "--recursive";
            continue;
        }
        if !options_done
            && w.starts_with('-')
            && w.len() > 2
            && w[1..].bytes().all(|b| b"Rcfv".contains(&b))
        {
            recursive |= w.contains('R');
            continue;
        }
        if mode.is_none() {
            mode = Some(w);
        } else {
            files.push(a);
        }
    }
    let Some(mode) = mode else { return };
    if recursive {
        system_permissions(az, &files);
    }
    if sets_id_bit(mode) {
        az.flag(Finding::with(
            &rules::SYSTEM_PERMISSIONS,
            "setuid/setgid bit (chmod)",
        ));
    }
    if world_writable(mode) {
        az.flag(Finding::with(
            &rules::WORLD_WRITABLE,
            if recursive {
                "recursive world/other-writable permissions"
            } else {
                "world/other-writable permissions"
            },
        ));
    }
    if adds_execute(mode) {
        for f in files {
            az.made_executable(f.as_str());
        }
    }
}

/// `mkdir -m MODE`, `install -m MODE`.
pub(crate) fn mode_option(az: &mut Analyzer, args: &[Arg<'_>], short_with_value: &'static str) {
    let spec = OptSpec {
        short_with_value,
        long_with_value: &[
            "mode",
            "group",
            "owner",
            "suffix",
            "target-directory",
            "context",
        ],
        stop_at_operand: false,
    };
    let items = options::parse(&args[1..], &spec);
    for item in items {
        if let Item::Short('m', Some(mode)) | Item::Long("mode", Some(mode)) = item
            && world_writable(mode)
        {
            az.flag_rule(&rules::WORLD_WRITABLE);
        }
    }
}

/// `chown -R root ...`.
pub(crate) fn chown(az: &mut Analyzer, args: &[Arg<'_>]) {
    let rest = &args[1..];
    let spec = OptSpec {
        short_with_value: "",
        long_with_value: &["from", "reference"],
        stop_at_operand: false,
    };
    let items = options::parse(rest, &spec);
    let recursive = items
        .iter()
        .any(|i| matches!(i, Item::Short('R', _) | Item::Long("recursive", _)));
    if !recursive {
        return;
    }
    let targets: Vec<&Arg<'_>> = options::operands(&items)
        .skip(1)
        .map(|i| &rest[i])
        .collect();
    system_permissions(az, &targets);
    if let Some(owner) = options::first_operand(&items).map(|i| rest[i].as_str())
        && (owner.starts_with("root")
            || owner == "0"
            || owner.starts_with("0:")
            || owner.starts_with(":root")
            || owner.starts_with(":0"))
    {
        az.flag_rule(&rules::CHOWN_ROOT);
    }
}

/// `dd of=...`.
pub(crate) fn dd(az: &mut Analyzer, args: &[Arg<'_>]) {
    for a in &args[1..] {
        let Some(target) = a.as_str().strip_prefix("of=") else {
            continue;
        };
        let target = az.resolve(&Arg::literal(target));
        let class = classify(target.as_str(), a.dynamic);
        match class {
            PathClass::RawDevice => az.flag_rule(&rules::DD_DEVICE),
            PathClass::Sysrq => az.flag_rule(&rules::SYSRQ),
            PathClass::Other if !a.dynamic => {}
            _ => az.flag_rule(&rules::DD_OVERWRITE),
        }
    }
}

/// `cp`, `mv`, `ln`, `install`, `rsync`, `scp`: the destination is written; secrets as a
/// source are reported; `rsync -e CMD` / `scp -S PROG` run programs.
pub(crate) fn copy(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let spec = match name {
        "rsync" => OptSpec {
            short_with_value: "eBfTM",
            long_with_value: &[
                "rsh",
                "rsync-path",
                "filter",
                "exclude",
                "include",
                "exclude-from",
                "include-from",
                "files-from",
                "temp-dir",
                "compare-dest",
                "copy-dest",
                "link-dest",
                "backup-dir",
                "suffix",
                "chmod",
                "chown",
                "port",
                "password-file",
                "log-file",
                "out-format",
            ],
            stop_at_operand: false,
        },
        "scp" => OptSpec {
            short_with_value: "cDFiJloPSX",
            long_with_value: &[],
            stop_at_operand: false,
        },
        _ => OptSpec {
            short_with_value: "tSmgo",
            long_with_value: &[
                "target-directory",
                "suffix",
                "mode",
                "group",
                "owner",
                "context",
            ],
            stop_at_operand: false,
        },
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    for item in &items {
        match item {
            Item::Short('e', Some(cmd)) | Item::Long("rsh" | "rsync-path", Some(cmd))
                if name == "rsync" =>
            {
                az.script(cmd);
            }
            Item::Short('S', Some(cmd)) if name == "scp" => {
                az.script(cmd);
            }
            Item::Short('o', Some(option)) if name == "scp" => {
                super::super::wrappers::ssh_option(az, option);
            }
            _ => {}
        }
    }
    let target_dir = items.iter().find_map(|item| match item {
        Item::Short('t', Some(dir)) | Item::Long("target-directory", Some(dir)) => Some(*dir),
        _ => None,
    });
    let ops: Vec<usize> = options::operands(&items).collect();
    let (sources, dest): (&[usize], Option<Arg<'_>>) = match target_dir {
        Some(dir) => (&ops[..], Some(Arg::literal(dir))),
        None if ops.len() >= 2 => (
            &ops[..ops.len() - 1],
            Some(rest[ops[ops.len() - 1]].clone()),
        ),
        None => (&ops[..], None),
    };
    if let Some(dest) = dest
        && (name != "scp" && name != "rsync" || !dest.as_str().contains(':'))
    {
        write_target_via(az, &dest, Via::Copy);
    }
    if name == "ln" {
        // After the destination check: the new link is judged where it is made.
        record_links(az, rest, &items, &ops, target_dir);
    }
    for &i in sources {
        let src = &rest[i];
        if paths::is_secret_file(src.as_str()) {
            az.flag_rule(&rules::SECRET_READ);
        }
        if name == "mv" {
            let src = &az.resolve(src);
            match classify(src.as_str(), src.dynamic) {
                PathClass::Root => az.flag_rule(&rules::RM_ROOT),
                PathClass::SystemDir => az.flag_rule(&rules::RM_SYSTEM_DIR),
                PathClass::Home => az.flag_rule(&rules::RM_HOME),
                _ => write_target_via(az, src, Via::Delete),
            }
        }
    }
}

/// `ln [-s] TARGET [LINK]`, `ln TARGET... DIR`, `ln -t DIR TARGET...`: remember where
/// each link leads, so later paths through it are judged by their real location.
fn record_links(
    az: &mut Analyzer,
    rest: &[Arg<'_>],
    items: &[Item<'_>],
    ops: &[usize],
    target_dir: Option<&str>,
) {
    let symbolic = items
        .iter()
        .any(|i| matches!(i, Item::Short('s', _) | Item::Long("symbolic", _)));
    let base = |a: &Arg<'_>| -> String {
        let t = a.as_str().trim_end_matches('/');
        t.rsplit('/').next().unwrap_or(t).to_string()
    };
    let in_dir =
        |dir: &str, a: &Arg<'_>| Arg::literal(format!("{}/{}", dir.trim_end_matches('/'), base(a)));
    match (target_dir, ops) {
        (Some(dir), _) => {
            for &i in ops {
                az.linked(&in_dir(dir, &rest[i]), &rest[i], symbolic);
            }
        }
        (None, [only]) => az.linked(&Arg::literal(base(&rest[*only])), &rest[*only], symbolic),
        (None, [target, link]) => {
            let link = rest[*link].clone();
            az.linked(&link, &rest[*target], symbolic);
        }
        (None, [targets @ .., dir]) => {
            let dir = rest[*dir].as_str().to_string();
            for &i in targets {
                az.linked(&in_dir(&dir, &rest[i]), &rest[i], symbolic);
            }
        }
        (None, []) => {}
    }
}

/// `tee [-a] FILE...`.
pub(crate) fn tee(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let rest = &args[1..];
    let items = options::parse(rest, &RM_SPEC);
    for i in options::operands(&items) {
        write_target_via(az, &rest[i], Via::Tee);
        let target = az.resolve(&rest[i]);
        az.wrote(target.as_str(), target.dynamic, stdin);
    }
}

/// `sed -i` on system, credential or agent files.
pub(crate) fn sed(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "efl",
        long_with_value: &["expression", "file", "line-length"],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    let in_place = items
        .iter()
        .any(|i| matches!(i, Item::Short('i', _) | Item::Long("in-place", _)));
    let scripts: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Item::Short('e', v) | Item::Long("expression", v) => *v,
            _ => None,
        })
        .chain(
            options::first_operand(&items)
                .filter(|_| {
                    !items.iter().any(|i| {
                        matches!(
                            i,
                            Item::Short('e' | 'f', _) | Item::Long("expression" | "file", _)
                        )
                    })
                })
                .map(|i| rest[i].as_str()),
        )
        .collect();
    for script in scripts {
        sed_script(az, script);
    }
    if !in_place {
        return;
    }
    let has_script_option = items.iter().any(|i| {
        matches!(
            i,
            Item::Short('e' | 'f', _) | Item::Long("expression" | "file", _)
        )
    });
    let mut ops = options::operands(&items);
    if !has_script_option {
        ops.next();
    }
    for i in ops {
        write_target_via(az, &rest[i], Via::Edit);
    }
}

/// GNU sed commands that run programs or write files: `e CMD`, `s/a/b/e`, `w FILE`,
/// `s/a/b/w FILE`.
fn sed_script(az: &mut Analyzer, script: &str) {
    for command in script.split([';', '\n']) {
        let c = command.trim_start_matches(|ch: char| {
            ch.is_ascii_digit() || matches!(ch, ',' | '$' | ' ' | '!' | '{' | '}')
        });
        if let Some(cmd) = c.strip_prefix("e ") {
            az.script(cmd);
        } else if c == "e" {
            az.flag(Finding::with(
                &rules::INLINE_CODE,
                "sed runs its input as commands (e)",
            ));
        } else if let Some(file) = c.strip_prefix("w ").or_else(|| c.strip_prefix("W ")) {
            write_target_via(az, &Arg::literal(file.trim().to_string()), Via::Redirect);
        } else if c.starts_with('s') && c.len() > 2 {
            let delim = c[1..].chars().next().unwrap_or('/');
            let parts: Vec<&str> = c[1 + delim.len_utf8()..].splitn(3, delim).collect();
            if let Some(flags) = parts.get(2) {
                let flag_part: String = flags.chars().take_while(|ch| *ch != 'w').collect();
                if flag_part.contains('e') {
                    az.flag(Finding::with(
                        &rules::INLINE_CODE,
                        "sed runs the substitution result as a command (s///e)",
                    ));
                }
                if let Some((_, file)) = flags.split_once('w') {
                    write_target_via(az, &Arg::literal(file.trim().to_string()), Via::Redirect);
                }
            }
        }
    }
}

/// `truncate -s 0 FILE`: only interesting on system or credential files.
pub(crate) fn truncate(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "sr",
        long_with_value: &["size", "reference"],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    for i in options::operands(&items) {
        write_target_via(az, &rest[i], Via::Redirect);
    }
}

/// Readers of secret files (`cat ~/.ssh/id_rsa`).
pub(crate) fn read(az: &mut Analyzer, args: &[Arg<'_>]) {
    if args[1..].iter().any(|a| paths::is_secret_file(a.as_str())) {
        az.flag_rule(&rules::SECRET_READ);
    }
}

/// `curl -T ~/.ssh/id_rsa`, `curl -d @~/.netrc`, `wget --post-file=...`, `curl -o /etc/x`.
pub(crate) fn upload(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let mut prev = "";
    for a in &args[1..] {
        let w = a.as_str();
        let value = w
            .split_once("=@")
            .map(|(_, v)| v)
            .or_else(|| w.strip_prefix('@'))
            .or_else(|| w.strip_prefix("--post-file="))
            .or_else(|| w.strip_prefix("--upload-file="))
            .or(if matches!(prev, "-T" | "--upload-file" | "--post-file") {
                Some(w)
            } else {
                None
            });
        if value.is_some_and(paths::is_secret_file) {
            az.flag_rule(&rules::SECRET_READ);
        }
        let output = if matches!(prev, "-o" | "--output") && name != "wget"
            || matches!(prev, "-O" | "--output-document") && name == "wget"
        {
            Some(a.clone())
        } else {
            w.strip_prefix("--output-document=").map(Arg::literal)
        };
        if let Some(output) = output
            && output.as_str() != "-"
        {
            write_target_via(az, &output, Via::Copy);
        }
        prev = w;
    }
}

/// Partitioning tools acting on a device (not just listing).
pub(crate) fn partition(az: &mut Analyzer, args: &[Arg<'_>]) {
    let rest = &args[1..];
    let read_only = |w: &str| {
        matches!(
            w,
            "-l" | "--list"
                | "print"
                | "-p"
                | "--print"
                | "-d"
                | "--dump"
                | "-J"
                | "--json"
                | "-V"
                | "--verify"
                | "-v"
                | "--version"
                | "-h"
                | "--help"
                | "-b"
                | "--backup"
        ) || w.starts_with("--backup=")
    };
    if rest.iter().any(|a| read_only(a.as_str())) {
        return;
    }
    if rest
        .iter()
        .any(|a| paths::is_raw_device(a.as_str(), a.dynamic))
    {
        az.flag_rule(&rules::PARTITION);
        // Erasing the whole table (`sgdisk --zap-all`, `parted DEV mklabel`, `sfdisk
        // --delete DEV` with no partition number) loses every partition on the disk.
        let erases = rest.iter().any(|a| {
            let w = a.as_str();
            matches!(w, "--zap-all" | "--zap" | "--clear" | "mklabel" | "mktable")
                || (w.starts_with('-') && !w.starts_with("--") && w[1..].contains('Z'))
        }) || (rest.iter().any(|a| a.as_str() == "--delete")
            && !rest
                .iter()
                .any(|a| a.as_str().bytes().all(|b| b.is_ascii_digit())));
        if erases {
            az.flag_rule(&rules::WIPE_DEVICE);
        }
    }
}

/// `mkfs`, `mkfs.ext4`, `mke2fs`, `mkswap`, `newfs`, ...
pub(crate) fn is_mkfs(name: &str) -> bool {
    name == "mkfs"
        || name.starts_with("mkfs.")
        || name.starts_with("newfs")
        || matches!(
            name,
            "mke2fs" | "mkswap" | "mkdosfs" | "mkntfs" | "mkexfatfs" | "mkfs_msdos"
        )
}

/// Formatting a device is hardline; formatting an image file is dangerous.
pub(crate) fn mkfs(az: &mut Analyzer, args: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "tLbOENmgGIiJorUCdMnTl",
        long_with_value: &["type", "label"],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    let mut any_file = false;
    for i in options::operands(&items) {
        let target = &rest[i];
        let w = target.as_str();
        if paths::is_raw_device(w, target.dynamic) || (target.dynamic && !w.contains('/')) {
            az.flag_rule(&rules::MKFS_DEVICE);
            return;
        }
        if !w.bytes().all(|b| b.is_ascii_digit()) {
            any_file = true;
        }
    }
    if any_file {
        az.flag_rule(&rules::MKFS_FILE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_writable_modes() {
        for mode in [
            "777", "0777", "1777", "666", "0666", "002", "o+w", "a+w", "a+rwx", "ugo+rw",
            "u+x,o+w", "o=rwx", "a=rw", "go+w", "o+r+w",
        ] {
            assert!(world_writable(mode), "{mode}");
        }
        for mode in [
            "755",
            "0644",
            "+x",
            "u+w",
            "g+w",
            "o-w",
            "a-w",
            "600",
            "+w",
            "u=rwx,g=rx,o=r",
            "7",
        ] {
            assert!(!world_writable(mode), "{mode}");
        }
    }
}
