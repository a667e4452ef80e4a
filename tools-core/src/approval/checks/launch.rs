//! Programs that run commands handed to them as text, now or later: `at`/`batch` (commands
//! on stdin or in `-f FILE`), `trap` (a handler string), terminal multiplexers (`tmux`
//! commands and `send-keys`, `screen -X stuff`, `screen CMD`), GNU `parallel` (a command
//! template and its arguments), `make -f -` and `make --eval` (recipes are shell), and
//! `ip netns exec`. Every payload goes back to the analyser as shell code, so
//! `echo 'rm -rf /' | at now` is judged as `rm -rf /`; a payload the command itself
//! produces at run time is unresolved (fail closed).

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::options::{self, Item, OptSpec};
use super::super::rules;
use super::super::wrappers::join;
use super::exec::{code_string, stdin_code};
use super::run;

/// Run `path` as a shell script: judged by its content when it was written earlier in the
/// command; unresolved when its name is only known at run time.
fn shell_file(az: &mut Analyzer, path: &Arg<'_>) {
    if !az.run_written(path) && path.dynamic {
        az.flag_rule(&rules::UNRESOLVED);
    }
}

/// `at [opts] TIME` / `batch`: the job is read from stdin or `-f FILE`.
pub(crate) fn at(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let spec = OptSpec {
        short_with_value: "fqt",
        long_with_value: &[],
        stop_at_operand: false,
    };
    let rest = &args[1..];
    let items = options::parse(rest, &spec);
    // Listing, removing or printing jobs runs nothing.
    if items
        .iter()
        .any(|i| matches!(i, Item::Short('l' | 'r' | 'd' | 'c' | 'V', _)))
    {
        return;
    }
    match items.iter().find_map(|i| match i {
        Item::Short('f', v) => Some(*v),
        _ => None,
    }) {
        Some(Some(file)) => {
            let arg = rest
                .iter()
                .find(|a| a.as_str() == file)
                .cloned()
                .unwrap_or_else(|| Arg::literal(file.to_string()));
            shell_file(az, &arg);
        }
        Some(None) => {}
        None => stdin_code(az, stdin, None),
    }
}

/// `trap [--] ACTION SIGNAL...`: the action is shell code run later.
pub(crate) fn trap(az: &mut Analyzer, args: &[Arg<'_>]) {
    let mut rest = &args[1..];
    if rest
        .first()
        .is_some_and(|a| matches!(a.as_str(), "-l" | "-p" | "-P"))
    {
        return;
    }
    if rest.first().is_some_and(|a| a.as_str() == "--") {
        rest = &rest[1..];
    }
    if rest.len() < 2 {
        return;
    }
    code_string(az, &rest[0]);
}

/// tmux key names that end a line, and those that type nothing the shell runs.
fn tmux_key(word: &str) -> Option<&'static str> {
    match word {
        "Enter" | "C-m" | "C-j" | "KPEnter" | "^M" | "^J" => Some("\n"),
        "Space" => Some(" "),
        "Tab" => Some("\t"),
        w if (w.starts_with("C-") || w.starts_with("M-") || w.starts_with("S-"))
            && w.len() <= 5 =>
        {
            Some("")
        }
        "Escape" | "BSpace" | "Up" | "Down" | "Left" | "Right" | "Home" | "End" | "NPage"
        | "PPage" | "PageUp" | "PageDown" | "DC" | "IC" | "BTab" => Some(""),
        _ => None,
    }
}

/// `tmux [opts] CMD [args] [; CMD ...]`: commands that start a shell command, and keys
/// typed into a pane's shell.
pub(crate) fn tmux(az: &mut Analyzer, args: &[Arg<'_>]) {
    let mut i = 1;
    while i < args.len() {
        let w = args[i].as_str();
        if !w.starts_with('-') || w == "-" {
            break;
        }
        if w == "--" {
            i += 1;
            break;
        }
        // `-c shell-command` runs it with the default shell.
        if w == "-c" {
            if let Some(cmd) = args.get(i + 1) {
                code_string(az, cmd);
            }
            i += 2;
            continue;
        }
        i += if matches!(w, "-L" | "-S" | "-f" | "-T") {
            2
        } else {
            1
        };
    }
    let mut start = i;
    for j in i..=args.len() {
        let end = j == args.len() || args[j].as_str() == ";" || args[j].as_str() == "\\;";
        let trailing = j < args.len() && args[j].as_str().ends_with(";") && !end;
        if end || trailing {
            let stop = if trailing { j + 1 } else { j };
            if start < stop {
                let mut words: Vec<Arg<'_>> = args[start..stop].to_vec();
                if trailing && let Some(last) = words.last_mut() {
                    let trimmed = last.as_str().trim_end_matches(';').to_string();
                    last.text = trimmed.into();
                }
                tmux_command(az, &words);
            }
            start = j + 1;
        }
    }
}

fn tmux_command(az: &mut Analyzer, words: &[Arg<'_>]) {
    let Some(sub) = words.first() else { return };
    let (values, payload_kind): (&'static str, u8) = match sub.as_str() {
        "send-keys" | "send" => ("Nt", 1),
        "new-session" | "new" => ("cefFnstxyL", 2),
        "new-window" | "neww" => ("cefFnt", 2),
        "split-window" | "splitw" => ("celptF", 2),
        "respawn-pane" | "respawnp" | "respawn-window" | "respawnw" => ("cet", 2),
        "run-shell" | "run" => ("dct", 2),
        "if-shell" | "if" => ("t", 3),
        "pipe-pane" | "pipep" => ("t", 2),
        "display-popup" | "popup" => ("bcdehsStTwxy", 2),
        _ => return,
    };
    let spec = OptSpec {
        short_with_value: values,
        long_with_value: &[],
        stop_at_operand: true,
    };
    let rest = &words[1..];
    let items = options::parse(rest, &spec);
    let ops: Vec<&Arg<'_>> = options::operands(&items).map(|i| &rest[i]).collect();
    if ops.is_empty() {
        return;
    }
    match payload_kind {
        1 => {
            if options::has(&items, 'X', "") {
                return; // copy-mode commands, not keys
            }
            let literal = options::has(&items, 'l', "");
            let mut typed = String::new();
            let mut dynamic = false;
            for key in &ops {
                dynamic |= key.dynamic;
                match tmux_key(key.as_str()).filter(|_| !literal) {
                    Some(k) => typed.push_str(k),
                    None => typed.push_str(key.as_str()),
                }
            }
            code_string(
                az,
                &Arg {
                    text: typed.into(),
                    dynamic,
                    taint: None,
                },
            );
        }
        3 => code_string(az, ops[0]),
        _ => {
            let owned: Vec<Arg<'_>> = ops.iter().map(|a| (*a).clone()).collect();
            let text = join(&owned);
            code_string(
                az,
                &Arg {
                    text: text.into(),
                    dynamic: owned.iter().any(|a| a.dynamic),
                    taint: None,
                },
            );
        }
    }
}

/// `screen [opts] [CMD args]`, `screen -X stuff TEXT`, `screen -X exec CMD`.
pub(crate) fn screen(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let mut i = 1;
    while i < args.len() {
        let w = args[i].as_str();
        if w == "-X" || w == "-Q" {
            let cmd = &args[i + 1..];
            match cmd.first().map(|a| a.as_str()) {
                Some("stuff") => {
                    if let Some(text) = cmd.get(1) {
                        let typed = text
                            .as_str()
                            .replace("^M", "\n")
                            .replace("^J", "\n")
                            .replace("\\n", "\n")
                            .replace("\\r", "\n")
                            .replace("\\015", "\n")
                            .replace("\\012", "\n");
                        code_string(
                            az,
                            &Arg {
                                text: typed.into(),
                                dynamic: text.dynamic,
                                taint: text.taint.clone(),
                            },
                        );
                    }
                }
                Some("exec" | "screen") => {
                    let inner: Vec<Arg<'_>> = cmd[1..]
                        .iter()
                        .skip_while(|a| a.as_str().starts_with(['.', '!', ':', '|', '-']))
                        .cloned()
                        .collect();
                    if !inner.is_empty() {
                        run(az, &inner, stdin);
                    }
                }
                _ => {}
            }
            return;
        }
        if !w.starts_with('-') {
            run(az, &args[i..], stdin);
            return;
        }
        let takes_value = w == "-Logfile"
            || (w.len() >= 2
                && !w.starts_with("--")
                && w.ends_with(['S', 'p', 'c', 'e', 'h', 'T', 't', 's']));
        i += if takes_value { 2 } else { 1 };
    }
}

const PARALLEL: OptSpec = OptSpec {
    short_with_value: "jSadEIPnNCL",
    long_with_value: &[
        "jobs",
        "sshlogin",
        "arg-file",
        "delimiter",
        "eof",
        "replace",
        "max-procs",
        "max-args",
        "colsep",
        "tmpdir",
        "results",
        "joblog",
        "timeout",
        "retries",
        "env",
        "workdir",
        "basefile",
        "transferfile",
        "return",
        "load",
        "memfree",
        "delay",
        "tag-string",
        "tagstring",
        "shebang-wrap",
        "sshdelay",
    ],
    stop_at_operand: true,
};

/// GNU `parallel [opts] [TEMPLATE...] ::: ARGS` (or arguments on stdin): each job is the
/// template with `{}` (or the end) replaced by an argument, run by a shell; without a
/// template each argument is a command.
pub(crate) fn parallel(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let rest = &args[1..];
    let items = options::parse(rest, &PARALLEL);
    let Some(first) = options::first_operand(&items) else {
        stdin_code(az, stdin, None);
        return;
    };
    let words = &rest[first..];
    let sep = words
        .iter()
        .position(|a| matches!(a.as_str(), ":::" | "::::" | ":::+" | "::::+"));
    let template = &words[..sep.unwrap_or(words.len())];
    let from_files = sep.is_some_and(|s| words[s].as_str().starts_with("::::"));
    let mut inputs: Vec<Arg<'_>> = match sep {
        Some(s) if !from_files => words[s + 1..]
            .iter()
            .filter(|a| !a.as_str().starts_with(":::"))
            .cloned()
            .collect(),
        Some(_) => vec![unknown_input()],
        None => match stdin {
            Source::Literal(text) => text.lines().map(|l| Arg::literal(l.to_string())).collect(),
            Source::Plain => Vec::new(),
            other => {
                if template.is_empty() {
                    stdin_code(az, other, None);
                    return;
                }
                vec![unknown_input()]
            }
        },
    };
    if inputs.is_empty() {
        inputs.push(unknown_input());
    }
    for input in inputs.iter().take(16) {
        let job = if template.is_empty() {
            input.clone()
        } else {
            let text = join(template);
            let dynamic = template.iter().any(|a| a.dynamic) || input.dynamic;
            let text = if text.contains('{') {
                replace_placeholders(&text, input.as_str())
            } else {
                format!("{text} {}", input.as_str())
            };
            Arg {
                text: text.into(),
                dynamic,
                taint: None,
            }
        };
        code_string(az, &job);
    }
}

/// An argument only known at run time, spelled so the analyser reads it as unknown.
fn unknown_input() -> Arg<'static> {
    Arg {
        text: "\"$PARALLEL_INPUT\"".into(),
        dynamic: false,
        taint: None,
    }
}

/// `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{1}` → `value`.
fn replace_placeholders(text: &str, value: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if after[..close]
                    .bytes()
                    .all(|b| matches!(b, b'.' | b'/' | b'#' | b'%') || b.is_ascii_digit()) =>
            {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `make -f -` / `make -f /dev/stdin` (a makefile on stdin) and `make --eval=TEXT`: the
/// recipes are shell commands.
pub(crate) fn make(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let spec = OptSpec {
        short_with_value: "fCIoWl",
        long_with_value: &[
            "file",
            "makefile",
            "directory",
            "include-dir",
            "old-file",
            "assume-old",
            "what-if",
            "new-file",
            "assume-new",
            "eval",
        ],
        stop_at_operand: false,
    };
    let items = options::parse(&args[1..], &spec);
    for item in &items {
        match item {
            Item::Long("eval", Some(text)) => makefile(az, text),
            Item::Short('f', Some(file)) | Item::Long("file" | "makefile", Some(file))
                if matches!(*file, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0") =>
            {
                match stdin {
                    Source::Literal(text) => {
                        let text = text.clone();
                        makefile(az, &text);
                    }
                    other => stdin_code(az, other, None),
                }
            }
            _ => {}
        }
    }
}

/// The shell commands of a makefile: recipe lines (tab-indented, `target: ; cmd`) and
/// `$(shell ...)` calls.
fn makefile(az: &mut Analyzer, text: &str) {
    for line in text.lines() {
        let recipe = if let Some(r) = line.strip_prefix('\t') {
            Some(r)
        } else if !line.trim_start().starts_with('#')
            && let Some((head, r)) = line.split_once(';')
            && head.contains(':')
        {
            Some(r)
        } else {
            None
        };
        if let Some(recipe) = recipe {
            let recipe = recipe.trim_start_matches(['@', '-', '+', ' ']);
            az.script(&recipe.replace("$$", "$"));
        }
        let mut rest = line;
        while let Some(pos) = rest.find("$(shell ") {
            let inner = &rest[pos + 8..];
            let end = inner.find(')').unwrap_or(inner.len());
            az.script(&inner[..end]);
            rest = &inner[end..];
        }
    }
}

/// `ip [opts] netns exec NAME CMD...` runs CMD.
pub(crate) fn ip_netns_exec(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) -> bool {
    let words: Vec<&str> = args.iter().map(|a| a.as_str()).collect();
    let Some(pos) = words.iter().position(|w| *w == "netns") else {
        return false;
    };
    if words.get(pos + 1) != Some(&"exec") || args.len() <= pos + 3 {
        return false;
    }
    run(az, &args[pos + 3..], stdin);
    true
}

#[cfg(test)]
mod tests {
    use super::replace_placeholders;

    #[test]
    fn placeholders() {
        assert_eq!(replace_placeholders("rm -rf {}", "/"), "rm -rf /");
        assert_eq!(replace_placeholders("mv {} {.}.bak", "a"), "mv a a.bak");
        assert_eq!(replace_placeholders("echo {x}", "a"), "echo {x}");
    }
}
