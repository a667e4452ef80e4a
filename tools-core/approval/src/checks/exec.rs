//! Rules about running code: shells and their `-c` payloads, `eval`, `source`, remote or
//! decoded content fed to a shell or interpreter, Windows `cmd`/PowerShell, and options
//! that run programs (`rg --pre`, `tar --to-command`, ...). Interpreter code itself is
//! judged in [`super::code`].

use super::super::analyze::Analyzer;
use super::super::ansi_c::decode_ansi_c;
use super::super::model::{Arg, Source};
use super::super::options::{self, Item, OptSpec};
use super::super::rules;
use super::super::wrappers::join;
use super::code::{Lang, code};

const SHELL_SPEC_VALUE_OPTS: &[&str] = &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"];

/// `sh|bash|zsh|dash|ksh ... [-c CMD | script | stdin]`.
pub(crate) fn shell(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let rest = &args[1..];
    let mut command_flag = false;
    let mut stdin_flag = false;
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].as_str();
        if w == "--" || w == "-" {
            i += 1;
            break;
        }
        if SHELL_SPEC_VALUE_OPTS.contains(&w) {
            i += 2;
            continue;
        }
        if w.starts_with("--") {
            i += 1;
            continue;
        }
        if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 {
            command_flag |= w[1..].contains('c');
            stdin_flag |= w[1..].contains('s');
            // `-O shopt` inside a bundle consumes the next word too.
            if w[1..].ends_with('O') || w[1..].ends_with('o') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    let operand = rest.get(i);
    if command_flag {
        if let Some(payload) = operand {
            // `sh -c '...' arg0 arg1`: the words after the payload are `$0`, `$1`, ...
            let params = &rest[(i + 1).min(rest.len())..];
            az.with_positional(params, true, |az| {
                if *stdin != Source::Plain {
                    // The payload's first command reads the shell's stdin.
                    az.set_feed(stdin.clone());
                }
                code_string(az, payload);
                az.set_feed_none();
            });
        }
        return;
    }
    match operand {
        Some(script) if !stdin_flag => match &script.taint {
            Some(Source::Remote) => az.flag_rule(&rules::REMOTE_PROCSUB),
            Some(_) => az.flag_rule(&rules::DECODED_TO_SHELL),
            None => {
                if is_stdin_path(script.as_str()) {
                    stdin_code(az, stdin, None);
                } else if !az.run_written(script) && script.dynamic {
                    az.flag_rule(&rules::UNRESOLVED);
                }
            }
        },
        _ => stdin_code(az, stdin, None),
    }
}

/// A path that reads the process's own stdin.
pub(crate) fn is_stdin_path(path: &str) -> bool {
    matches!(
        path,
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0" | "-"
    )
}

/// A string that a shell will run (`sh -c`, `eval`): analysed; flagged when it is built at
/// run time.
pub(crate) fn code_string(az: &mut Analyzer, payload: &Arg<'_>) {
    if payload.dynamic {
        match payload.taint {
            Some(Source::Remote) => az.flag_rule(&rules::REMOTE_CMDSUB),
            Some(_) => az.flag_rule(&rules::DECODED_TO_SHELL),
            None => az.flag_rule(&rules::DYNAMIC_CODE),
        }
    }
    az.script(payload.as_str());
}

/// Code arriving on stdin. `lang` is `None` for a shell.
pub(crate) fn stdin_code(az: &mut Analyzer, stdin: &Source, lang: Option<Lang>) {
    match stdin {
        Source::Remote => az.flag_rule(&rules::REMOTE_PIPE),
        Source::Decoded => az.flag_rule(&rules::DECODED_TO_SHELL),
        Source::Literal(text) => match lang {
            None => {
                let text = text.clone();
                az.script(&text);
            }
            Some(lang) => {
                let text = text.clone();
                code(az, lang, &text, true);
            }
        },
        Source::Produced | Source::Pids | Source::Found(_) => az.flag_rule(&rules::UNRESOLVED),
        Source::Plain => {}
    }
}

/// `eval ARGS...`.
pub(crate) fn eval(az: &mut Analyzer, args: &[Arg<'_>]) {
    let rest = &args[1..];
    if rest.is_empty() {
        return;
    }
    let text = join(rest);
    let combined = Arg {
        text: text.into(),
        dynamic: rest.iter().any(|a| a.dynamic),
        taint: rest.iter().find_map(|a| a.taint.clone()),
    };
    code_string(az, &combined);
}

/// `source FILE` / `. FILE`.
pub(crate) fn source(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    if let Some(file) = args.get(1) {
        if is_stdin_path(file.as_str()) {
            stdin_code(az, stdin, None);
            return;
        }
        match (&file.taint, file.dynamic) {
            (Some(Source::Remote), true) if file.as_str().starts_with("/dev/fd") => {
                az.flag_rule(&rules::REMOTE_PROCSUB)
            }
            (Some(Source::Remote), _) => az.flag_rule(&rules::REMOTE_CMDSUB),
            (Some(_), _) => az.flag_rule(&rules::DECODED_TO_SHELL),
            (None, dynamic) => {
                if !az.run_written(file) && dynamic {
                    az.flag_rule(&rules::UNRESOLVED);
                }
            }
        }
    }
}

/// `set -- a b`: the positional parameters.
pub(crate) fn set(az: &mut Analyzer, args: &[Arg<'_>]) {
    if args
        .windows(2)
        .any(|w| w[0].as_str() == "+o" && w[1].as_str() == "history")
    {
        // History recording switched off: covering tracks.
        az.flag_rule(&rules::LOG_WIPE);
    }
    if let Some(i) = args.iter().position(|a| a.as_str() == "--") {
        az.set_positional(&args[i + 1..], false);
    }
}

/// `read [-r] [-a arr] a b <<< "text"`: variables from a literal input.
pub(crate) fn read(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let mut names: Vec<&str> = Vec::new();
    let mut array: Option<&str> = None;
    let mut i = 1;
    while i < args.len() {
        let w = args[i].as_str();
        match w {
            "-a" => {
                array = args.get(i + 1).map(|a| a.as_str());
                i += 1;
            }
            "-d" | "-n" | "-N" | "-p" | "-t" | "-u" | "-i" => i += 1,
            w if w.starts_with('-') => {}
            w => names.push(w),
        }
        i += 1;
    }
    let text = match stdin {
        Source::Literal(text) => Some(text.lines().next().unwrap_or_default().to_string()),
        _ => None,
    };
    let Some(text) = text else {
        // Unknown input: the variables are unknown from here on.
        for name in names.iter().chain(array.iter()) {
            az.forget_var(name);
        }
        return;
    };
    if let Some(array) = array {
        let items: Vec<Arg<'_>> = text.split_whitespace().map(Arg::literal).collect();
        az.set_array(array, &items);
    }
    let mut words = text.split_whitespace();
    for (k, name) in names.iter().enumerate() {
        if k + 1 == names.len() {
            let rest: Vec<&str> = words.by_ref().collect();
            az.set_var(name, &rest.join(" "));
        } else {
            az.set_var(name, words.next().unwrap_or_default());
        }
    }
}

/// `echo` / `printf` output, when it is known statically.
pub(crate) fn echo(args: &[Arg<'_>]) -> Source {
    if args[1..].iter().any(|a| a.dynamic) {
        // Text only known at run time: data for a reader, unresolved code for a shell.
        return Source::Produced;
    }
    let name = super::command_name(args[0].as_str());
    if name == "printf" {
        let mut rest = &args[1..];
        if rest.first().is_some_and(|a| a.as_str() == "--") {
            rest = &rest[1..];
        }
        let Some(format) = rest.first() else {
            return Source::Plain;
        };
        let values: Vec<&str> = rest[1..].iter().map(|a| a.as_str()).collect();
        return Source::Literal(super::printf::format(format.as_str(), &values));
    }
    let mut rest = &args[1..];
    let mut escapes = false;
    while let Some(first) = rest.first() {
        match first.as_str() {
            "-n" | "-E" => rest = &rest[1..],
            "-e" | "-ne" | "-en" => {
                escapes = true;
                rest = &rest[1..];
            }
            _ => break,
        }
    }
    let text = join(rest);
    Source::Literal(if escapes { decode_ansi_c(&text) } else { text })
}

/// Whether a transformer command decodes (`base64 -d`, `xxd -r`, `openssl enc -d`).
pub(crate) fn decodes(name: &str, args: &[Arg<'_>]) -> bool {
    let has = |flags: &[&str]| args[1..].iter().any(|a| flags.contains(&a.as_str()));
    let in_bundle = |c: char| {
        args[1..].iter().any(|a| {
            a.as_str().starts_with('-') && !a.as_str().starts_with("--") && a.as_str().contains(c)
        })
    };
    match name {
        "base64" => has(&["-d", "--decode", "-D"]) || in_bundle('d'),
        "xxd" => in_bundle('r') || has(&["-revert"]),
        "openssl" => has(&["-d", "-decode"]) && has(&["enc", "base64", "-base64", "-a"]),
        "tr" | "rev" | "gunzip" | "zcat" | "bzcat" | "xzcat" | "uudecode" => true,
        _ => false,
    }
}

/// `cmd /c ...`: Windows deletes, and nested commands (`cmd /c powershell ...`).
pub(crate) fn windows_cmd(az: &mut Analyzer, args: &[Arg<'_>]) {
    let Some(pos) = args[1..].iter().position(|a| {
        a.as_str().eq_ignore_ascii_case("/c") || a.as_str().eq_ignore_ascii_case("/k")
    }) else {
        return;
    };
    let inner = &args[pos + 2..];
    let words: Vec<Arg<'_>> = if inner.len() == 1 {
        inner[0]
            .as_str()
            .split_whitespace()
            .map(|w| Arg::literal(w.to_string()))
            .collect()
    } else {
        inner.to_vec()
    };
    let deletes = words.iter().any(|w| {
        let w = w.as_str().to_ascii_lowercase();
        matches!(w.as_str(), "del" | "erase" | "rd" | "rmdir")
    });
    if deletes {
        az.flag_rule(&rules::WINDOWS_DELETE);
    }
    if !words.is_empty() {
        super::run(az, &words, &Source::Plain);
    }
}

/// `powershell`/`pwsh`: encoded commands, deletes, remote code, shutdown.
pub(crate) fn powershell(az: &mut Analyzer, args: &[Arg<'_>]) {
    let mut command: Vec<&str> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let w = args[i].as_str();
        let lower = w.to_ascii_lowercase();
        if let Some(opt) = lower.strip_prefix('-') {
            if !opt.is_empty() && ("encodedcommand".starts_with(opt) || opt == "ec") && opt != "ex"
            {
                az.flag_rule(&rules::POWERSHELL_ENCODED);
                return;
            }
            if opt == "c" || opt.len() >= 2 && "command".starts_with(opt) {
                command.extend(args[i + 1..].iter().map(|a| a.as_str()));
                break;
            }
            if opt == "f" || opt.len() >= 2 && "file".starts_with(opt) {
                return;
            }
            if matches!(
                opt,
                "executionpolicy"
                    | "ep"
                    | "windowstyle"
                    | "w"
                    | "configurationname"
                    | "workingdirectory"
                    | "wd"
                    | "outputformat"
                    | "of"
                    | "inputformat"
                    | "if"
                    | "psconsolefile"
                    | "version"
                    | "v"
            ) {
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        command.extend(args[i..].iter().map(|a| a.as_str()));
        break;
    }
    let text = command.join(" ").to_ascii_lowercase();
    let tokens: Vec<&str> = text
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '|' | '(' | ')' | '{' | '}' | '\'' | '"')
        })
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.iter().any(|t| {
        matches!(
            *t,
            "remove-item" | "rmdir" | "erase" | "del" | "rd" | "ri" | "rm" | "clear-content"
        )
    }) {
        az.flag_rule(&rules::POWERSHELL_DELETE);
    }
    if tokens
        .iter()
        .any(|t| matches!(*t, "invoke-expression" | "iex"))
        && (text.contains("downloadstring")
            || tokens.iter().any(|t| {
                matches!(
                    *t,
                    "iwr" | "irm" | "invoke-webrequest" | "invoke-restmethod" | "curl" | "wget"
                )
            }))
    {
        az.flag_rule(&rules::REMOTE_PIPE);
    }
    if tokens
        .iter()
        .any(|t| matches!(*t, "stop-computer" | "restart-computer"))
    {
        az.flag_rule(&rules::SHUTDOWN);
    }
    if tokens
        .iter()
        .any(|t| matches!(*t, "format-volume" | "clear-disk" | "initialize-disk"))
    {
        az.flag_rule(&rules::WIPE_DEVICE);
    }
}

/// `alias name='...'`: the value is a command.
pub(crate) fn alias(az: &mut Analyzer, args: &[Arg<'_>]) {
    for a in &args[1..] {
        if let Some((_, value)) = a.as_str().split_once('=') {
            az.script(value);
        }
    }
}

/// Options whose value is a program or shell command: `rg --pre`, `sort
/// --compress-program`, `man -P/-H/--pager/--html`, `ag --pager`, `tar -I/--to-command/
/// --use-compress-program/--checkpoint-action=exec=`.
pub(crate) fn program_options(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let (short, long): (&'static str, &'static [&'static str]) = match name {
        "rg" => (
            "efgjmAtTMBCrE",
            &[
                "pre",
                "hostname-bin",
                "regexp",
                "file",
                "glob",
                "type",
                "type-not",
                "max-count",
                "replace",
                "encoding",
                "context",
                "before-context",
                "after-context",
                "max-columns",
                "threads",
                "sort",
                "sortr",
                "pre-glob",
                "iglob",
                "type-add",
                "color",
                "colors",
                "path-separator",
                "max-depth",
                "max-filesize",
                "dfa-size-limit",
                "regex-size-limit",
                "engine",
                "field-match-separator",
                "field-context-separator",
                "context-separator",
            ],
        ),
        "sort" => (
            "kotSTy",
            &[
                "compress-program",
                "key",
                "output",
                "field-separator",
                "buffer-size",
                "temporary-directory",
                "parallel",
                "batch-size",
                "files0-from",
                "random-source",
                "sort",
            ],
        ),
        "man" => (
            "PHCMLmSesprRE",
            &[
                "pager",
                "html",
                "config-file",
                "manpath",
                "locale",
                "systems",
                "extension",
                "sections",
                "prompt",
                "preprocessor",
                "recode",
                "encoding",
            ],
        ),
        "ag" => (
            "AGBCm",
            &[
                "pager",
                "file-search-regex",
                "ignore",
                "after",
                "before",
                "context",
                "max-count",
                "depth",
            ],
        ),
        "tar" => (
            "IfCbFHKLNTVXg",
            &[
                "use-compress-program",
                "to-command",
                "file",
                "directory",
                "info-script",
                "new-volume-script",
                "exclude",
                "files-from",
                "exclude-from",
                "format",
                "owner",
                "group",
                "mode",
                "mtime",
                "label",
                "newer",
                "transform",
                "xform",
            ],
        ),
        "zip" => {
            // `zip -T -TT CMD`: the test command.
            for pair in args.windows(2) {
                if pair[0].as_str() == "-TT" {
                    az.script(pair[1].as_str());
                }
            }
            ("bnxiOt", &["unzip-command", "temp-path", "out"])
        }
        _ => return,
    };
    let spec = OptSpec {
        short_with_value: short,
        long_with_value: long,
        stop_at_operand: false,
    };
    let items = options::parse(&args[1..], &spec);
    for item in items {
        let value = match (name, item) {
            ("rg", Item::Long("pre" | "hostname-bin", v)) => v,
            ("sort", Item::Long("compress-program", v)) => v,
            ("man", Item::Short('P' | 'H', v) | Item::Long("pager" | "html", v)) => v,
            ("ag", Item::Long("pager", v)) => v,
            (
                "tar",
                Item::Short('I' | 'F', v)
                | Item::Long(
                    "use-compress-program" | "to-command" | "info-script" | "new-volume-script",
                    v,
                ),
            ) => v,
            ("tar", Item::Long("checkpoint-action", Some(v))) => v.strip_prefix("exec="),
            ("zip", Item::Long("unzip-command", v)) => v,
            _ => None,
        };
        if let Some(program) = value {
            az.script(program);
        }
    }
}
