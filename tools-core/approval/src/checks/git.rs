//! Destructive git: `reset --hard`, force pushes (`-f`, `--force`, `--force-with-lease`,
//! `+ref`, `--mirror`), remote branch deletes, `clean -f`, `branch -D`, `stash drop/clear`,
//! checkout/restore of the work tree, history rewrites — found after git's global options
//! (`git -C repo`, `git -c k=v`), with git's own case-sensitive option rules.

use super::super::analyze::Analyzer;
use super::super::model::Arg;
use super::super::options::{self, Item, OptSpec};
use super::super::rules;
use super::super::wrappers::join;

/// Global options that take a separate value.
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--exec-path",
    "--list-cmds",
];

pub(crate) fn git(az: &mut Analyzer, args: &[Arg<'_>]) {
    let mut i = 1;
    while i < args.len() {
        let w = args[i].as_str();
        if !w.starts_with('-') {
            break;
        }
        if w == "-c"
            && let Some(setting) = args.get(i + 1)
        {
            config_setting(az, setting.as_str());
        }
        if GLOBAL_WITH_VALUE.contains(&w) && !(w == "--exec-path" || w == "--list-cmds") {
            i += 2;
        } else {
            i += 1;
        }
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[i + 1..];
    match sub.as_str() {
        "reset"
            if rest
                .iter()
                .any(|a| matches!(a.as_str(), "--hard" | "--har" | "--ha")) =>
        {
            az.flag_rule(&rules::GIT_RESET_HARD)
        }
        "push" => push(az, rest),
        "clean" => {
            let items = options::parse(rest, &SPEC_NONE);
            let force = items
                .iter()
                .any(|i| matches!(i, Item::Short('f', _) | Item::Long("force", _)));
            let dry = items
                .iter()
                .any(|i| matches!(i, Item::Short('n', _) | Item::Long("dry-run", _)));
            if force && !dry {
                az.flag_rule(&rules::GIT_CLEAN);
            }
        }
        "branch" => {
            let items = options::parse(rest, &SPEC_NONE);
            let force_delete = items.iter().any(|i| matches!(i, Item::Short('D', _)));
            let delete = items
                .iter()
                .any(|i| matches!(i, Item::Short('d', _) | Item::Long("delete", _)));
            let force = items
                .iter()
                .any(|i| matches!(i, Item::Short('f', _) | Item::Long("force", _)));
            if force_delete || (delete && force) {
                az.flag_rule(&rules::GIT_BRANCH_DELETE);
            }
        }
        "stash"
            if rest
                .first()
                .is_some_and(|a| matches!(a.as_str(), "drop" | "clear")) =>
        {
            az.flag_rule(&rules::GIT_STASH_DROP)
        }
        "checkout" => checkout(az, rest),
        "restore" => {
            let items = options::parse(rest, &SPEC_RESTORE);
            let staged = items
                .iter()
                .any(|i| matches!(i, Item::Short('S', _) | Item::Long("staged", _)));
            let worktree = items
                .iter()
                .any(|i| matches!(i, Item::Short('W', _) | Item::Long("worktree", _)));
            let has_paths = options::first_operand(&items).is_some()
                || items
                    .iter()
                    .any(|i| matches!(i, Item::Long("pathspec-from-file", _)));
            if has_paths && (worktree || !staged) {
                az.flag_rule(&rules::GIT_DISCARD);
            }
        }
        "switch"
            if rest
                .iter()
                .any(|a| matches!(a.as_str(), "-f" | "--force" | "--discard-changes")) =>
        {
            az.flag_rule(&rules::GIT_DISCARD)
        }
        "filter-branch" | "filter-repo" => az.flag_rule(&rules::GIT_HISTORY),
        "reflog"
            if rest
                .first()
                .is_some_and(|a| a.as_str() == "expire" || a.as_str() == "delete") =>
        {
            az.flag_rule(&rules::GIT_HISTORY)
        }
        "update-ref" if rest.iter().any(|a| a.as_str() == "-d") => {
            az.flag_rule(&rules::GIT_HISTORY)
        }
        "rm" => {
            let items = options::parse(rest, &SPEC_NONE);
            let recursive = items.iter().any(|i| matches!(i, Item::Short('r', _)));
            let cached = items.iter().any(|i| matches!(i, Item::Long("cached", _)));
            let dry = items
                .iter()
                .any(|i| matches!(i, Item::Short('n', _) | Item::Long("dry-run", _)));
            let broad = options::operands(&items)
                .any(|i| matches!(rest[i].as_str(), "." | "./" | "*" | ":/" | "/" | "-r" | ":"));
            if recursive && broad && !cached && !dry {
                az.flag_rule(&rules::GIT_WORKTREE);
            }
        }
        "read-tree" if rest.iter().any(|a| a.as_str() == "--reset") => {
            az.flag_rule(&rules::GIT_WORKTREE)
        }
        "worktree"
            if rest.first().is_some_and(|a| a.as_str() == "remove")
                && rest.iter().any(|a| matches!(a.as_str(), "-f" | "--force")) =>
        {
            az.flag_rule(&rules::GIT_WORKTREE)
        }
        "config" => config_command(az, rest),
        "submodule" => {
            // `git submodule [--quiet] foreach [--recursive] CMD`: CMD is shell code.
            if let Some(pos) = rest.iter().position(|a| a.as_str() == "foreach") {
                let cmd: Vec<Arg<'_>> = rest[pos + 1..]
                    .iter()
                    .skip_while(|a| a.as_str().starts_with("--"))
                    .cloned()
                    .collect();
                if !cmd.is_empty() {
                    az.script(&join(&cmd));
                }
            }
        }
        "rebase" => {
            let mut prev = "";
            for a in rest {
                let w = a.as_str();
                if matches!(prev, "-x" | "--exec") {
                    az.script(w);
                } else if let Some(cmd) = w.strip_prefix("--exec=") {
                    az.script(cmd);
                }
                prev = w;
            }
        }
        "bisect" if rest.first().is_some_and(|a| a.as_str() == "run") && rest.len() > 1 => {
            super::run(az, &rest[1..], &super::super::model::Source::Plain);
        }
        _ => {}
    }
}

const SPEC_NONE: OptSpec = OptSpec {
    short_with_value: "",
    long_with_value: &[],
    stop_at_operand: false,
};

const SPEC_RESTORE: OptSpec = OptSpec {
    short_with_value: "s",
    long_with_value: &["source", "conflict"],
    stop_at_operand: false,
};

/// `git config [--global|--local|...] KEY VALUE`: a setting that runs a program is judged
/// like `git -c KEY=VALUE` (it will run on a later git command).
fn config_command(az: &mut Analyzer, rest: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "f",
        long_with_value: &["file", "blob", "type", "default", "comment", "value"],
        stop_at_operand: false,
    };
    let items = options::parse(rest, &spec);
    let ops: Vec<usize> = options::operands(&items).collect();
    let (key, value) = match ops.as_slice() {
        // `git config set KEY VALUE` (git ≥ 2.46) or `git config KEY VALUE`.
        [verb, k, v, ..] if rest[*verb].as_str() == "set" => (*k, *v),
        [k, v, ..] => (*k, *v),
        _ => return,
    };
    let setting = format!("{}={}", rest[key].as_str(), rest[value].as_str());
    config_setting(az, &setting);
}

/// `-c alias.x='!cmd'`, `-c core.pager=cmd`, `-c core.sshCommand=cmd` run programs.
pub(crate) fn config_setting(az: &mut Analyzer, setting: &str) {
    let Some((key, value)) = setting.split_once('=') else {
        return;
    };
    let key = key.to_ascii_lowercase();
    if let Some(cmd) = value.strip_prefix('!')
        && key.starts_with("alias.")
    {
        az.script(cmd);
    } else if matches!(
        key.as_str(),
        "core.pager"
            | "core.sshcommand"
            | "core.editor"
            | "core.fsmonitor"
            | "sequence.editor"
            | "diff.external"
            | "core.askpass"
            | "credential.helper"
            | "core.hookspath"
            | "core.gitproxy"
            | "gpg.program"
            | "gpg.ssh.program"
            | "gpg.x509.program"
            | "diff.tool"
            | "merge.tool"
            | "web.browser"
            | "sendemail.sendmailcmd"
            | "uploadpack.packobjectshook"
    ) || key.starts_with("pager.")
        || (key.starts_with("filter.")
            && (key.ends_with(".clean") || key.ends_with(".smudge") || key.ends_with(".process")))
        || (key.starts_with("diff.") && (key.ends_with(".command") || key.ends_with(".textconv")))
        || (key.starts_with("merge.") && key.ends_with(".driver"))
        || (key.starts_with("difftool.") && key.ends_with(".cmd"))
        || (key.starts_with("mergetool.") && key.ends_with(".cmd"))
        || (key.starts_with("credential.") && key.ends_with(".helper"))
    {
        az.script(value.strip_prefix('!').unwrap_or(value));
    }
}

fn push(az: &mut Analyzer, rest: &[Arg<'_>]) {
    if super::inert::git_push_dry_run(rest) {
        return;
    }
    let spec = OptSpec {
        short_with_value: "o",
        long_with_value: &[
            "repo",
            "receive-pack",
            "exec",
            "push-option",
            "recurse-submodules",
        ],
        stop_at_operand: false,
    };
    let items = options::parse(rest, &spec);
    let mut force = false;
    let mut delete = false;
    for item in &items {
        match item {
            Item::Short('f', _) => force = true,
            Item::Long(name, _) if name.starts_with("force") || *name == "mirror" => force = true,
            Item::Short('d', _) | Item::Long("delete" | "prune", _) => delete = true,
            _ => {}
        }
    }
    // Refspecs: everything after the remote.
    for i in options::operands(&items).skip(1) {
        let spec = rest[i].as_str();
        if spec.starts_with('+') {
            force = true;
        }
        if spec.starts_with(':') && spec.len() > 1 {
            delete = true;
        }
    }
    if force {
        az.flag_rule(&rules::GIT_FORCE_PUSH);
    }
    if delete {
        az.flag_rule(&rules::GIT_REMOTE_DELETE);
    }
}

fn checkout(az: &mut Analyzer, rest: &[Arg<'_>]) {
    let spec = OptSpec {
        short_with_value: "bB",
        long_with_value: &["orphan", "conflict", "pathspec-from-file"],
        stop_at_operand: false,
    };
    let dashdash = rest.iter().position(|a| a.as_str() == "--");
    let before = &rest[..dashdash.unwrap_or(rest.len())];
    let items = options::parse(before, &spec);
    let force = items.iter().any(|i| {
        matches!(
            i,
            Item::Short('f', _) | Item::Long("force" | "ours" | "theirs", _)
        )
    });
    let paths_after_dashdash = dashdash.is_some_and(|d| d + 1 < rest.len());
    let dot = options::operands(&items).any(|i| {
        let w = before[i].as_str();
        w == "." || w == "./" || w == "*" || w.starts_with("./") || w == ":/"
    });
    let creates_branch = items
        .iter()
        .any(|i| matches!(i, Item::Short('b' | 'B', _) | Item::Long("orphan", _)));
    if force || paths_after_dashdash || (dot && !creates_branch) {
        az.flag_rule(&rules::GIT_DISCARD);
    }
}
