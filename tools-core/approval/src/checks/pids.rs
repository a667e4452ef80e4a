//! Mass kills built from process listings: `kill -9 $(ps -e -o pid=)`, `ps aux | awk
//! '{print $2}' | xargs kill`, `ls /proc | grep '^[0-9]*$' | xargs kill -9`. A listing of
//! every process is [`Source::Pids`]; filters that keep every line (`awk '{print $2}'`,
//! `tail -n +2`, `cut`, `sort`, a grep for digits) pass it on, filters that select
//! (`grep node`, `awk '/x/'`, `head`) make it ordinary output; signalling what arrives as
//! `Pids` is `hardline.kill_all`.
//!
//! Where this differs from Hermes: docs/hermes/approval.md (section 4).

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::rules;

/// What a process lister prints: `Pids` when it lists every process.
pub(crate) fn lister(name: &str, args: &[Arg<'_>]) -> Option<Source> {
    let rest: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let all = match name {
        // Selecting options narrow the listing (`-p 1`, `-C nginx`, `-u bob`, `--ppid 1`).
        "ps" => !rest.iter().any(|w| {
            (w.starts_with('-')
                && !w.starts_with("--")
                && w[1..].contains(['p', 'C', 'u', 'U', 'G', 'g', 't', 'q', 's']))
                && !w.starts_with("-o")
                || matches!(
                    w.split('=').next().unwrap_or(w),
                    "--pid"
                        | "--ppid"
                        | "--sid"
                        | "--user"
                        | "--User"
                        | "--Group"
                        | "--group"
                        | "--tty"
                        | "--quick-pid"
                )
        }),
        "pgrep" | "pidof" => {
            rest.iter()
                .filter(|w| !w.starts_with('-'))
                .all(|w| matches_everything(w))
                && !rest.is_empty()
        }
        "ls" => rest
            .iter()
            .any(|w| matches!(w.trim_end_matches('/'), "/proc")),
        _ => return None,
    };
    Some(if all { Source::Pids } else { Source::Produced })
}

/// A regular expression that matches every process name (`.`, `.*`, `^`, `''`).
pub(crate) fn matches_everything(pattern: &str) -> bool {
    matches!(
        pattern,
        "" | "." | ".*" | "^" | "$" | ".+" | "^.*$" | "^.*" | "[a-z]*" | "\\w*"
    )
}

/// What a text filter makes of a `Pids` listing: `Pids` when it keeps every process.
pub(crate) fn filter(name: &str, args: &[Arg<'_>]) -> Source {
    let rest: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let keeps = match name {
        "awk" | "gawk" | "mawk" | "nawk" => rest
            .iter()
            .find(|w| !w.starts_with('-'))
            .is_some_and(|program| !awk_selects(program)),
        "grep" | "egrep" | "rg" => rest
            .iter()
            .find(|w| !w.starts_with('-'))
            .is_some_and(|p| matches_everything(p) || is_digit_class(p)),
        "tail" => rest
            .iter()
            .any(|w| w.starts_with('+') || w.starts_with("-n+") || w.starts_with("--lines=+")),
        "cut" | "sed" | "tr" | "sort" | "uniq" | "column" | "cat" | "tee" | "xargs" | "tac"
        | "paste" => true,
        _ => false,
    };
    if keeps {
        Source::Pids
    } else {
        Source::Produced
    }
}

/// An awk program that selects lines by content (`/node/`, `$11 ~ "x"`, `$1 == 42`);
/// `NR > 1` (skipping a header) does not.
fn awk_selects(program: &str) -> bool {
    let without_header = program
        .replace("NR>1", "")
        .replace("NR > 1", "")
        .replace("NR!=1", "");
    without_header.contains('/')
        || without_header.contains('~')
        || without_header.contains("==")
        || without_header.contains("if")
}

/// `^[0-9]+$`, `[0-9]`, `^[[:digit:]]*$`: keeps every pid line of `ls /proc`.
fn is_digit_class(pattern: &str) -> bool {
    let p = pattern.trim_start_matches('^').trim_end_matches('$');
    let p = p.trim_end_matches(['+', '*']);
    matches!(p, "[0-9]" | "[[:digit:]]" | "\\d" | "[0-9][0-9]")
}

/// A signal sent to a `Pids` listing, or to a command substitution that lists every
/// process (`kill -9 $(ps -e -o pid=)`).
pub(crate) fn kill_targets(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    if *stdin == Source::Pids {
        az.flag_rule(&rules::KILL_ALL);
        return;
    }
    for arg in &args[1..] {
        let loop_var = az.pid_vars.iter().any(|v| {
            let w = arg.as_str();
            w == format!("${v}") || w == format!("${{{v}}}")
        });
        if loop_var || lists_all(arg) {
            az.flag_rule(&rules::KILL_ALL);
            return;
        }
    }
}

/// A word whose command substitution lists every process (`$(ps -e -o pid=)`).
pub(crate) fn lists_all(arg: &Arg<'_>) -> bool {
    arg.dynamic
        && substitutions(arg.as_str()).into_iter().any(|inner| {
            let mut probe = Analyzer::new();
            probe.script(inner) == Source::Pids
        })
}

/// The command substitutions in a word's source text (`$(...)` and backquotes).
fn substitutions(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("$(") {
        let body = &rest[start + 2..];
        let mut depth = 1usize;
        let mut end = None;
        for (i, c) in body.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        out.push(&body[..end]);
        rest = &body[end + 1..];
    }
    let mut parts = text.split('`');
    parts.next();
    while let Some(inner) = parts.next() {
        out.push(inner);
        parts.next();
    }
    out
}
