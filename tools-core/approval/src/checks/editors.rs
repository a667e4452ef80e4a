//! Editors and debuggers given commands on their command line or stdin: `vim -c '!cmd'`,
//! `vim +'r !cmd'`, `ex -s <<< ':!cmd'`, `gdb -ex 'shell cmd'`, `gdb -batch -ex run --args
//! PROG...`, `lldb -o 'platform shell cmd'`. Shell escapes are analysed as shell code;
//! commands that run code the analyser cannot follow (`:python`, `:lua`, `:call`, gdb's
//! `python`/`call`) are flagged; everyday edits (`-c wq`, `+%s/a/b/g`) are not.

use toolhost_text::LiteralRegex;

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::rules;
use super::super::verdict::Finding;
use super::files::{Via, write_target_via};
use super::run;

/// vi-family command names.
pub(crate) fn is_vi(name: &str) -> bool {
    matches!(
        name,
        "vi" | "vim"
            | "nvim"
            | "ex"
            | "view"
            | "vimdiff"
            | "gvim"
            | "evim"
            | "vim.basic"
            | "vim.tiny"
            | "nvi"
            | "elvis"
    )
}

/// `:[range]!cmd`, `:r !cmd`, `:w !cmd` (and their abbreviations).
static BANG: LiteralRegex = LiteralRegex::new(
    r"^[%0-9,.$'<>+\-\s]*(?:(?:(?:r|re|rea|read)\s*)?|(?:w|wr|wri|writ|write)\s+)!\s*(.*)$",
);

static SYSTEM_CALL: LiteralRegex = LiteralRegex::new(
    r#"(?:system|systemlist|jobstart|termopen)\s*\(\s*(?:\[\s*)?(?:"([^"]*)"|'([^']*)')"#,
);

/// Ex commands that run code in an embedded language or build commands at run time.
const CODE_COMMANDS: &[&str] = &[
    "py", "python", "py3", "python3", "pyx", "pythonx", "pyf", "pyfile", "py3f", "py3file", "lua",
    "luafile", "luado", "perl", "perldo", "ruby", "rubyfile", "rubydo", "tcl", "tcldo", "mz",
    "mzscheme", "exe", "execute", "call", "cal", "let", "so", "source", "runtime", "term",
    "terminal", "sh", "shell", "make", "mak", "grep", "lgrep",
];

/// One ex command.
fn ex_command(az: &mut Analyzer, command: &str) {
    let mut c = command.trim().trim_start_matches(':').trim();
    for prefix in ["silent!", "silent", "sil!", "sil", "keepalt", "noautocmd"] {
        if let Some(rest) = c.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with(' '))
        {
            c = rest.trim_start();
        }
    }
    if c.is_empty() {
        return;
    }
    if let Some(caps) = az.pattern(&BANG).and_then(|re| re.captures(c)) {
        if let Some(cmd) = caps.get(1) {
            az.script(cmd.as_str());
        }
        return;
    }
    if let Some(re) = az.pattern(&SYSTEM_CALL) {
        for caps in re.captures_iter(c) {
            if let Some(m) = caps.get(1).or_else(|| caps.get(2)) {
                az.script(m.as_str());
            }
        }
    }
    let word: String = c
        .chars()
        .take_while(|ch| ch.is_ascii_alphabetic())
        .collect();
    if CODE_COMMANDS.contains(&word.as_str()) {
        az.flag(Finding::with(
            &rules::INLINE_CODE,
            "editor command that can run code (:python, :lua, :call, :!...)",
        ));
        return;
    }
    // `:w FILE`, `:sav FILE`: writes where the command says.
    if matches!(
        word.as_str(),
        "w" | "write" | "wq" | "x" | "xit" | "sav" | "saveas" | "up" | "update"
    ) {
        let target = c[word.len()..].trim_start_matches('!').trim();
        if !target.is_empty() && !target.starts_with(['>', '|']) {
            write_target_via(az, &Arg::literal(target.to_string()), Via::Redirect);
        }
    }
    // `cmd1 | cmd2`: several commands (a `!` command took the rest already).
    if let Some((_, more)) = c.split_once('|') {
        ex_command(az, more);
    }
}

/// `vim [-c CMD | +CMD | --cmd CMD | -S FILE] ... [FILE...]`, ex mode on stdin.
pub(crate) fn vi(az: &mut Analyzer, name: &str, args: &[Arg<'_>], stdin: &Source) {
    let rest = &args[1..];
    let mut ex_mode = name == "ex";
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].as_str();
        if w == "--" {
            break;
        }
        if matches!(w, "-c" | "--cmd") {
            if let Some(cmd) = rest.get(i + 1) {
                if cmd.dynamic {
                    az.flag_rule(&rules::DYNAMIC_CODE);
                }
                ex_command(az, cmd.as_str());
            }
            i += 2;
            continue;
        }
        if let Some(cmd) = w.strip_prefix('+')
            && !cmd.is_empty()
        {
            ex_command(az, cmd);
        }
        if w.starts_with('-') && !w.starts_with("--") && w[1..].contains(['e', 'E']) {
            ex_mode = true;
        }
        if matches!(
            w,
            "-S" | "-u" | "-U" | "-s" | "-w" | "-W" | "-T" | "-i" | "-t" | "-q"
        ) {
            i += 1;
        }
        i += 1;
    }
    if ex_mode {
        match stdin {
            Source::Literal(text) => {
                let text = text.clone();
                for line in text.lines() {
                    ex_command(az, line);
                }
            }
            Source::Remote
            | Source::Decoded
            | Source::Produced
            | Source::Pids
            | Source::Found(_) => az.flag_rule(&rules::UNRESOLVED),
            Source::Plain => {}
        }
    }
}

/// One gdb command.
fn gdb_command(az: &mut Analyzer, command: &str, runs_program: &mut bool) {
    let c = command.trim();
    let word: String = c
        .chars()
        .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '-' || *ch == '!' || *ch == '|')
        .collect();
    let rest = c[word.len()..].trim();
    match word.as_str() {
        "shell" | "!" => {
            az.script(rest);
        }
        w if w.starts_with('!') => {
            az.script(&c[1..]);
        }
        "pipe" | "|" => {
            if let Some((_, shell)) = rest.split_once('|') {
                az.script(shell);
            }
        }
        "python" | "py" | "python-interactive" | "pi" | "guile" | "gu" | "compile" | "script"
        | "source" => debugger_code(az),
        "call" | "print" | "p" | "expr" | "expression" | "po"
            if c.contains("system") || c.contains("exec") || c.contains("popen") =>
        {
            debugger_code(az)
        }
        "platform" if rest.starts_with("shell") => {
            az.script(rest.trim_start_matches("shell").trim());
        }
        "run" | "r" | "start" | "starti" | "process" => *runs_program = true,
        _ => {}
    }
}

fn debugger_code(az: &mut Analyzer) {
    az.flag(Finding::with(
        &rules::INLINE_CODE,
        "debugger command that can run code (python, call, compile)",
    ));
}

/// `gdb`/`lldb` with commands: shell escapes and the program they run.
pub(crate) fn debugger(az: &mut Analyzer, name: &str, args: &[Arg<'_>], stdin: &Source) {
    let rest = &args[1..];
    let mut runs_program = false;
    let mut program: Option<usize> = None;
    let mut i = 0;
    while i < rest.len() {
        let w = rest[i].as_str();
        let value = |k: &str| w.strip_prefix(k).filter(|v| !v.is_empty());
        let command = if matches!(
            w,
            "-ex"
                | "-iex"
                | "--ex"
                | "-o"
                | "--one-line"
                | "-O"
                | "--one-line-before-file"
                | "-k"
                | "--one-line-on-crash"
        ) {
            i += 1;
            rest.get(i).map(|a| a.as_str().to_string())
        } else {
            value("--eval-command=")
                .or_else(|| value("--init-eval-command="))
                .map(str::to_string)
        };
        if let Some(command) = command {
            gdb_command(az, &command, &mut runs_program);
        } else if w == "--args" || (name == "lldb" && w == "--") {
            program = Some(i + 1);
            break;
        }
        i += 1;
    }
    if let Source::Literal(text) = stdin {
        let text = text.clone();
        for line in text.lines() {
            gdb_command(az, line, &mut runs_program);
        }
    }
    if let Some(p) = program
        && p < rest.len()
    {
        // The program runs when a `run` command is given; judge it either way, a program
        // named for the debugger is usually meant to run.
        let _ = runs_program;
        run(az, &rest[p..], &Source::Plain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for pattern in [&BANG, &SYSTEM_CALL] {
            assert!(
                pattern.check().is_ok(),
                "{:?}: {:?}",
                pattern,
                pattern.check()
            );
        }
    }
}
