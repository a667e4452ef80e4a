//! Interpreter code: `python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`, `bun`/`deno`,
//! `lua`, `Rscript`, `awk` programs, and code arriving on an interpreter's stdin (heredocs,
//! pipes). Judged by content, not by the flag alone (Hermes flags every `python -c`):
//! code that names a process, deletion, file-write or dynamic-code API is flagged, and
//! string literals handed to `system()`/`subprocess`/`exec` are analysed as shell
//! commands, so `os.system('rm -rf /')` reaches the hardline floor.

use toolhost_text::LiteralRegex;

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::options::{self, Item, OptSpec};
use super::super::paths::{PathClass, classify};
use super::super::rules;
use super::super::verdict::Finding;
use super::exec::stdin_code;
use super::files::{Via, write_target_via};

/// Interpreter families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    Node,
    Deno,
    Perl,
    Ruby,
    Php,
    Lua,
    R,
    Awk,
    AppleScript,
}

/// The interpreter family of a command name.
pub(crate) fn interpreter(name: &str) -> Option<Lang> {
    let lang = match name {
        "python" | "py" | "pypy" | "pypy3" | "python2" | "python3" => Lang::Python,
        n if n.starts_with("python3.") || n.starts_with("python2.") => Lang::Python,
        "node" | "nodejs" | "bun" => Lang::Node,
        "deno" => Lang::Deno,
        "perl" | "perl5" => Lang::Perl,
        "ruby" => Lang::Ruby,
        "php" => Lang::Php,
        "lua" | "luajit" | "lua5.1" | "lua5.3" | "lua5.4" => Lang::Lua,
        "rscript" => Lang::R,
        "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
        "osascript" => Lang::AppleScript,
        _ => return None,
    };
    Some(lang)
}

/// Interpreters: inline code, code on stdin, remote scripts, in-place edits.
pub(crate) fn inline_code(az: &mut Analyzer, name: &str, args: &[Arg<'_>], stdin: &Source) {
    let Some(lang) = interpreter(name) else {
        return;
    };
    let rest = &args[1..];
    let (code_flags, spec): (&[char], OptSpec) = match lang {
        Lang::Python => (
            &['c'],
            OptSpec {
                short_with_value: "WXcm",
                long_with_value: &["check-hash-based-pycs"],
                stop_at_operand: true,
            },
        ),
        Lang::Node => (
            &['e', 'p'],
            OptSpec {
                short_with_value: "eprC",
                long_with_value: &[
                    "eval",
                    "print",
                    "require",
                    "import",
                    "loader",
                    "conditions",
                    "title",
                    "input-type",
                    "experimental-loader",
                ],
                stop_at_operand: true,
            },
        ),
        Lang::Perl => (
            &['e', 'E'],
            OptSpec {
                short_with_value: "eEIMmx",
                long_with_value: &[],
                stop_at_operand: true,
            },
        ),
        Lang::Ruby => (
            &['e'],
            OptSpec {
                short_with_value: "eICEFKr",
                long_with_value: &[],
                stop_at_operand: true,
            },
        ),
        Lang::Php => (
            &['r'],
            OptSpec {
                short_with_value: "rcdzfBRFE",
                long_with_value: &[],
                stop_at_operand: true,
            },
        ),
        Lang::Lua => (
            &['e'],
            OptSpec {
                short_with_value: "el",
                long_with_value: &[],
                stop_at_operand: true,
            },
        ),
        Lang::R | Lang::AppleScript => (
            &['e'],
            OptSpec {
                short_with_value: "e",
                long_with_value: &[],
                stop_at_operand: true,
            },
        ),
        Lang::Awk => (
            &[],
            OptSpec {
                short_with_value: "Fvfie",
                long_with_value: &[
                    "field-separator",
                    "assign",
                    "file",
                    "include",
                    "source",
                    "exec",
                ],
                stop_at_operand: true,
            },
        ),
        Lang::Deno => (&[], OptSpec::default()),
    };
    if lang == Lang::Deno {
        let rest_words: Vec<&str> = rest.iter().map(|a| a.as_str()).collect();
        if let Some(pos) = rest_words.iter().position(|w| *w == "eval")
            && let Some(code_text) = rest.get(pos + 1)
        {
            code(az, lang, code_text.as_str(), false);
        }
        return;
    }
    let items = options::parse(rest, &spec);
    let mut found_code = false;
    let mut runs_stdin = false;
    for item in &items {
        let value = match item {
            Item::Short(c, v) if code_flags.contains(c) => *v,
            Item::Long("eval" | "print", v) if lang == Lang::Node => *v,
            Item::Short('e', v) | Item::Long("source", v) if lang == Lang::Awk => *v,
            Item::Short('m', _) if lang == Lang::Python => return,
            _ => continue,
        };
        found_code = true;
        if let Some(text) = value {
            runs_stdin |= executes_stdin(text);
            code(az, lang, text, false);
        }
    }
    let in_place = matches!(lang, Lang::Perl | Lang::Ruby)
        && items.iter().any(|i| matches!(i, Item::Short('i', _)));
    let mut ops = options::operands(&items).peekable();
    if lang == Lang::Awk
        && !found_code
        && !items
            .iter()
            .any(|i| matches!(i, Item::Short('f', _) | Item::Long("file", _)))
        && let Some(i) = ops.next()
    {
        runs_stdin |= executes_stdin(rest[i].as_str());
        code(az, lang, rest[i].as_str(), false);
        found_code = true;
    }
    if runs_stdin {
        // `echo CMD | perl -e 'system(<STDIN>)'`: the input is a shell command.
        stdin_code(az, stdin, None);
    }
    if in_place {
        for i in ops {
            write_target_via(az, &rest[i], Via::Edit);
        }
        return;
    }
    if found_code {
        return;
    }
    match ops.next().map(|i| &rest[i]) {
        Some(script) if script.as_str() != "-" => match &script.taint {
            Some(Source::Remote) => az.flag_rule(&rules::REMOTE_PROCSUB),
            Some(_) => az.flag_rule(&rules::DECODED_TO_SHELL),
            None => match az.written_file(script) {
                Some(Source::Literal(text)) => code(az, lang, &text, true),
                Some(Source::Remote) => az.flag_downloaded_run(script),
                Some(Source::Decoded) => az.flag_rule(&rules::DECODED_TO_SHELL),
                Some(_) => az.flag_rule(&rules::UNRESOLVED),
                None => {}
            },
        },
        _ => stdin_code(az, stdin, Some(lang)),
    }
}

/// Code that hands what it reads on stdin to a shell: `system(<STDIN>)`,
/// `os.system(sys.stdin.read())`, awk `system($0)` or `print | "sh"`,
/// `execSync(fs.readFileSync(0))`.
static STDIN_EXEC: LiteralRegex = LiteralRegex::new(
    r#"(?:system|exec|execSync|popen|spawn|call|run|check_output|getoutput|shell_exec|passthru|os\.execute|io\.popen)\s*\(?\s*(?:<STDIN>|<>|\$_\b|\$0\b|sys\.stdin|input\(|process\.stdin|(?:fs\.)?readFileSync\(\s*(?:0|["']/dev/stdin["'])|STDIN\.read|\$stdin|gets\b|io\.read|readLines\(\s*["']stdin|readline\()|\$0\s*\|\s*"\s*(?:sh|bash)"|print\s*\|\s*"\s*(?:sh|bash)"|^\s*\{?\s*system\(\s*\$0\s*\)"#,
);

fn executes_stdin(text: &str) -> bool {
    STDIN_EXEC.get().is_none_or(|re| re.is_match(text))
}

/// Markers of code that can run processes, delete or write files, or build code.
const RISKY: &[&str] = &[
    "os.system",
    "subprocess",
    "os.popen",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "pty.spawn",
    "shutil.rmtree",
    "shutil.move",
    "shutil.chown",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "os.rename",
    "os.replace",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.kill",
    "os.killpg",
    "os.fork",
    ".unlink(",
    ".rmdir(",
    ".write_text(",
    ".write_bytes(",
    "__import__",
    "importlib",
    "exec(",
    "eval(",
    "compile(",
    "ctypes",
    "system(",
    "popen(",
    "spawn",
    "execSync",
    "execFile",
    "child_process",
    "fork",
    "kill(",
    "unlink",
    "rmtree",
    "rmdir",
    "rmSync",
    "rm(",
    "writeFile",
    "appendFile",
    "truncate",
    "chmod",
    "chown",
    "Deno.run",
    "Deno.Command",
    "Deno.remove",
    "Bun.spawn",
    "Bun.write",
    "Bun.$",
    "Function(",
    "shell_exec",
    "passthru",
    "proc_open",
    "pcntl_",
    "FileUtils",
    "File.delete",
    "File.write",
    "IO.popen",
    "Open3",
    "do shell script",
    "qx",
];

static OPEN_FOR_WRITE: LiteralRegex =
    LiteralRegex::new(r#"open\s*\([^)]*(?:,\s*(?:mode\s*=\s*)?['"][^'"]*[wax+]|['"]\s*\+?>)"#);

static SHELL_STRINGS: LiteralRegex = LiteralRegex::new(
    r#"\b(?:system|system2|popen|exec|execSync|spawn|spawnSync|check_output|check_call|call|run|Popen|getoutput|getstatusoutput|shell_exec|passthru|proc_open|qx|do shell script|os\.execute|io\.popen|execute|shell)(?:\s*\(\s*|\s+)(?:\[\s*)?[rbuf]?(?:"((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)')((?:\s*,\s*\[?\s*(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'))*)"#,
);

static LIST_ITEM: LiteralRegex = LiteralRegex::new(r#""((?:\\.|[^"\\])*)"|'((?:\\.|[^'\\])*)'"#);

static KILL_EVERY: LiteralRegex =
    LiteralRegex::new(r#"\bkill\s*\(?\s*-1\b|\bkill\s*\(?\s*['"]?\w+['"]?\s*,\s*-1\b"#);

static FORK_LOOP: LiteralRegex = LiteralRegex::new(
    r"while\s*\(?\s*(?:True|1|true)\s*\)?\s*:?\s*(?:do|\{)?\s*(?:os\.|process\.|Process\.)?fork\b|\bfork\s*(?:\(\))?\s*(?:while|until)\s|loop\s*(?:do|\{)\s*(?:Process\.)?fork|for\s*\(\s*;\s*;\s*\)\s*\{?\s*fork",
);

static TREE_DELETE: LiteralRegex = LiteralRegex::new(
    r#"\b(?:rmtree|rm_rf|rm_r|rmSync|rmdirSync|remove_tree|remove_dir_all|rimraf|removeSync|remove|unlink|rmdir|rm|emptyDirSync|emptyDir)(?:\s*\(\s*|\s+)(?:[rbuf]?["']([^"']*)["']|(os\.path\.expanduser\s*\(\s*["']~/?["']\s*\)|(?:pathlib\.)?Path\.home\(\)|os\.environ\[\s*["']HOME["']\s*\]|os\.getenv\(\s*["']HOME["']\s*\)|(?:require\(\s*["']os["']\s*\)\.|os\.)?homedir\(\)|Dir\.home|ENV\[["']HOME["']\]|\$ENV\{\s*["']?HOME["']?\s*\}|process\.env\.HOME|process\.env\[["']HOME["']\]|Deno\.env\.get\(\s*["']HOME["']\s*\)|path\.expand\(\s*["']~/?["']\s*\)|Sys\.getenv\(\s*["']HOME["']\s*\)|File\.expand_path\(\s*["']~/?["']\s*\)|expanduser\(\s*["']~/?["']\s*\)))"#,
);

/// Interpreter code that is hardline-shaped: killing every process, fork loops, recursive
/// deletes of the root, a system directory or the home.
fn hardline_code(az: &mut Analyzer, text: &str) {
    if az.pattern(&KILL_EVERY).is_some_and(|re| re.is_match(text)) {
        az.flag_rule(&rules::KILL_ALL);
    }
    if az.pattern(&FORK_LOOP).is_some_and(|re| re.is_match(text)) {
        az.flag_rule(&rules::FORK_BOMB);
    }
    let Some(re) = az.pattern(&TREE_DELETE) else {
        return;
    };
    for caps in re.captures_iter(text) {
        let class = match (caps.get(1), caps.get(2)) {
            (Some(path), _) => classify(path.as_str(), false),
            (None, Some(_)) => PathClass::Home,
            _ => continue,
        };
        match class {
            PathClass::Root => az.flag_rule(&rules::RM_ROOT),
            PathClass::SystemDir => az.flag_rule(&rules::RM_SYSTEM_DIR),
            PathClass::Home => az.flag_rule(&rules::RM_HOME),
            _ => {}
        }
    }
}

static BACKTICKS: LiteralRegex = LiteralRegex::new(r"`([^`]*)`");

/// awk's command pipes: `print "cmd" | "sh"` (the printed text is the shell's input) and
/// `"cmd" | getline` (the string runs).
static AWK_PIPES: LiteralRegex = LiteralRegex::new(
    r#"printf?\s*\(?\s*"((?:\\.|[^"\\])*)"\s*\)?\s*\|\s*"\s*(?:/bin/|/usr/bin/)?(?:sh|bash|dash|zsh|ksh)\b[^"]*"|"((?:\\.|[^"\\])*)"\s*\|\s*getline"#,
);

/// A command prefix joined to the home directory (`"rm -rf " .. os.getenv("HOME")`,
/// `'rm -rf ' + process.env.HOME`, `"rm -rf " . $ENV{HOME}`).
static HOME_CONCAT: LiteralRegex = LiteralRegex::new(
    r#"["']([^"']*)["']\s*(?:\.\.|\+|\.|,)\s*(?:os\.getenv\(\s*["']HOME["']\s*\)|process\.env\.HOME|process\.env\[["']HOME["']\]|\$ENV\{\s*["']?HOME["']?\s*\}|Sys\.getenv\(\s*["']HOME["']\s*\)|(?:require\(\s*["']os["']\s*\)\.|os\.)homedir\(\)|Dir\.home|ENV\[["']HOME["']\]|os\.environ\[\s*["']HOME["']\s*\]|(?:pathlib\.)?Path\.home\(\)|os\.path\.expanduser\(\s*["']~["']\s*\))"#,
);

/// Every string literal of code that can run commands, judged as a shell command on its
/// own: what it would do if it reached a shell through a variable (`cmd="rm -rf /";
/// system(cmd)`). Only the hardline floor is taken from it (the rest stays `exec.inline_code`).
fn literal_commands(az: &mut Analyzer, text: &str) {
    let Some(re) = az.pattern(&LIST_ITEM) else {
        return;
    };
    let literals: Vec<String> = re
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| m.as_str().to_string())
        .filter(|s| s.contains(' '))
        .collect();
    let mut literals = literals;
    let names_home = text.contains("HOME") || text.contains("home") || text.contains('~');
    if names_home && let Some(re) = az.pattern(&HOME_CONCAT) {
        literals.extend(
            re.captures_iter(text)
                .filter_map(|c| c.get(1))
                .map(|m| format!("{}$HOME", m.as_str())),
        );
    }
    for literal in literals {
        let mut probe = Analyzer::new();
        probe.script(&literal);
        for finding in probe.findings.into_iter().filter(|f| f.rule.hardline) {
            az.flag(finding);
        }
    }
}

/// Judge interpreter code; analyse the shell commands it passes to `system()` & co.
pub(crate) fn code(az: &mut Analyzer, lang: Lang, text: &str, from_stdin: bool) {
    let mut risky = RISKY.iter().any(|m| text.contains(m))
        || az
            .pattern(&OPEN_FOR_WRITE)
            .is_some_and(|re| re.is_match(text));
    if lang == Lang::Awk {
        risky = text.contains("system(")
            || text.contains("| \"")
            || text.contains("|\"")
            || text.contains("|&")
            || text.contains("> \"")
            || text.contains(">\"");
    }
    let backticks = matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php);
    if backticks && text.contains('`') {
        risky = true;
    }
    hardline_code(az, text);
    super::secrets::in_code(az, text);
    if risky {
        az.flag(Finding::with(
            &rules::INLINE_CODE,
            if from_stdin {
                "script via heredoc or stdin that can run commands or change files"
            } else {
                "inline script that can run commands or change files (-c/-e)"
            },
        ));
    }
    let mut payloads: Vec<String> = Vec::new();
    let list_item = az.pattern(&LIST_ITEM);
    if let Some(re) = az.pattern(&SHELL_STRINGS) {
        for caps in re.captures_iter(text) {
            let mut payload = caps
                .get(1)
                .or_else(|| caps.get(2))
                .map(|m| m.as_str().to_string())
                .unwrap_or_default();
            if let (Some(more), Some(item)) = (caps.get(3), list_item) {
                for extra in item.captures_iter(more.as_str()) {
                    if let Some(m) = extra.get(1).or_else(|| extra.get(2)) {
                        payload.push(' ');
                        payload.push_str(m.as_str());
                    }
                }
            }
            payloads.push(payload);
        }
    }
    if lang == Lang::Awk
        && let Some(re) = az.pattern(&AWK_PIPES)
    {
        payloads.extend(
            re.captures_iter(text)
                .filter_map(|c| c.get(1).or_else(|| c.get(2)))
                .map(|m| m.as_str().replace("\\n", "\n")),
        );
    }
    if risky {
        literal_commands(az, text);
    }
    if backticks && let Some(re) = az.pattern(&BACKTICKS) {
        payloads.extend(
            re.captures_iter(text)
                .filter_map(|c| c.get(1))
                .map(|m| m.as_str().to_string()),
        );
    }
    for payload in payloads {
        let unescaped = payload.replace("\\\"", "\"").replace("\\'", "'");
        az.script(&unescaped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        let all = [
            &OPEN_FOR_WRITE,
            &SHELL_STRINGS,
            &LIST_ITEM,
            &KILL_EVERY,
            &FORK_LOOP,
            &TREE_DELETE,
            &BACKTICKS,
            &AWK_PIPES,
            &HOME_CONCAT,
            &STDIN_EXEC,
        ];
        for pattern in all {
            assert!(
                pattern.check().is_ok(),
                "{:?}: {:?}",
                pattern,
                pattern.check()
            );
        }
    }

    /// Names of shell-running functions only count as calls: a word that ends in one of
    /// them inside a string (`'echo from-shell'`) does not make the text after it a
    /// command (it used to, and `print(terminal('echo from-shell')['output'])` in an
    /// execute_code script was refused as an unparseable command).
    #[test]
    fn a_function_name_inside_a_string_is_not_a_call() {
        for script in [
            "python3 - <<'EOF'\nprint(terminal('echo from-shell')['output'])\nEOF",
            "python3 - <<'EOF'\nx = 'make run'['a']\nEOF",
            "python3 -c \"print(d['exec'], 'system')\"",
        ] {
            let verdict = crate::detect::detect(script);
            assert!(!verdict.dangerous(), "{script}: {verdict:?}");
        }
    }

    #[test]
    fn a_call_with_a_space_before_its_string_is_still_judged() {
        for script in [
            "perl -e 'system \"rm -rf /\"'",
            "python3 -c 'import os; os.system(\"rm -rf /\")'",
        ] {
            assert!(crate::detect::detect(script).hardline(), "{script}");
        }
    }
}
