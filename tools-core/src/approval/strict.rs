//! Strict mode (`approvals.mode = "strict"`): only commands the analyser can prove
//! read-only run without asking. A command is proven read-only when every command in it
//! (pipelines, lists, substitutions, loop bodies — everything the analyser walks) is a
//! program from a maintained allowlist used with options that only read, no redirection
//! writes anywhere but `/dev/null`, and no rule fired. Everything else asks; with nobody to
//! ask that means denied — the mode for untrusted inputs and unattended runs.
//!
//! The allowlist follows the spirit of codex's `is_safe_command`: file viewers and text
//! filters, listing and status tools, `find` without actions, `sort` without `-o`, `sed -n
//! Np`, read-only `git` subcommands without `-c`/`--output`/`--ext-diff`. Anything not on
//! it — including every interpreter, build tool and path-named program — is unproven.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::analyze::Analyzer;
use super::detect::MAX_COMMAND_BYTES;
use super::model::{Arg, Cmd, command_name};

/// True when `command` only reads: strict mode lets it run without asking.
pub fn provably_read_only(command: &str) -> bool {
    if command.len() > MAX_COMMAND_BYTES {
        return false;
    }
    catch_unwind(AssertUnwindSafe(|| {
        let mut az = Analyzer::new();
        az.strict = Some(true);
        az.script(command);
        az.strict == Some(true) && az.findings.is_empty()
    }))
    .unwrap_or(false)
}

/// Programs that only read or print, whatever their options (their options never write a
/// file or run a program).
const ALWAYS_SAFE: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "test",
    "[",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "stat",
    "file",
    "du",
    "df",
    "nl",
    "rev",
    "seq",
    "cut",
    "paste",
    "tr",
    "column",
    "fold",
    "expand",
    "unexpand",
    "comm",
    "join",
    "diff",
    "cmp",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "whoami",
    "id",
    "groups",
    "uname",
    "uptime",
    "printenv",
    "which",
    "whereis",
    "type",
    "jq",
    "grep",
    "egrep",
    "fgrep",
    "od",
    "hexdump",
    "strings",
    "ps",
    "pgrep",
    "free",
    "lsblk",
    "lscpu",
    "nproc",
    "getconf",
    "locale",
    "tty",
    "sleep",
    "numfmt",
    "factor",
    "expr",
    "cd",
    "pushd",
    "popd",
    "wait",
    "getenforce",
    "arch",
    "logname",
    "users",
    "who",
    "w",
    "lsof",
    "tac",
    "look",
    "zcat",
    "bzcat",
    "xzcat",
    "zgrep",
    "base64",
    "base32",
    "shasum",
    "fmt",
    "pr",
];

/// Whether one simple command (as the analyser sees it) provably only reads.
pub(crate) fn command_is_safe(cmd: &Cmd<'_>) -> bool {
    let harmless_write = |a: &Arg<'_>| {
        !a.dynamic && matches!(a.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
    };
    if !cmd.writes.iter().all(harmless_write) {
        return false;
    }
    let Some(first) = cmd.args.first() else {
        return true;
    };
    let word = first.as_str();
    if first.dynamic || word.contains(['/', '*', '?', '[', '=']) && word != "[" {
        return false;
    }
    let name = command_name(word);
    let rest: Vec<&str> = cmd.args[1..].iter().map(|a| a.as_str()).collect();
    if cmd.args[1..].iter().any(|a| a.taint.is_some()) {
        return false;
    }
    match name.as_ref() {
        n if ALWAYS_SAFE.contains(&n) => true,
        "date" => !rest
            .iter()
            .any(|w| w.starts_with("-s") || w.starts_with("--set")),
        "hostname" => rest
            .iter()
            .all(|w| w.starts_with('-') && *w != "-F" && *w != "--file"),
        "uniq" => rest.iter().filter(|w| !w.starts_with('-')).count() <= 1,
        "tree" => !rest.iter().any(|w| *w == "-o" || w.starts_with("--output")),
        "xxd" => {
            !rest.iter().any(|w| w.starts_with("-r"))
                && rest.iter().filter(|w| !w.starts_with('-')).count() <= 1
        }
        "sort" => !rest.iter().any(|w| {
            w.starts_with("-o")
                || w.starts_with("--output")
                || w.starts_with("--compress-program")
                || (w.starts_with('-') && !w.starts_with("--") && w.contains('o'))
        }),
        "find" => !rest.iter().any(|w| {
            matches!(
                *w,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "rg" => !rest.iter().any(|w| {
            w.starts_with("--pre")
                || w.starts_with("--hostname-bin")
                || *w == "-z"
                || w.starts_with("--search-zip")
        }),
        "sed" => sed_prints(&rest),
        "git" => git_reads(&rest),
        "command" => rest.first().is_some_and(|w| matches!(*w, "-v" | "-V")),
        _ => false,
    }
}

/// `sed -n 'Np'` / `sed -n '/re/p'` style invocations (no `-i`, no `e`/`w` commands).
fn sed_prints(rest: &[&str]) -> bool {
    if !rest.contains(&"-n") {
        return false;
    }
    let mut scripts = rest.iter().filter(|w| !w.starts_with('-'));
    let Some(script) = scripts.next() else {
        return false;
    };
    !rest
        .iter()
        .any(|w| w.starts_with("-i") || w.starts_with("--in-place") || *w == "-f")
        && script
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b',' | b'$' | b'p' | b';' | b' '))
}

/// Read-only git subcommands without options that run programs or write files.
fn git_reads(rest: &[&str]) -> bool {
    let Some(sub) = rest.first() else {
        return false;
    };
    let args = &rest[1..];
    if args.iter().any(|w| {
        w.starts_with("--output")
            || w.starts_with("--ext-diff")
            || w.starts_with("--textconv")
            || w.starts_with("--exec")
            || w.starts_with("--upload-pack")
    }) {
        return false;
    }
    let only_listing = |allowed: &[&str]| {
        args.iter()
            .all(|w| w.starts_with('-') && allowed.iter().any(|a| w.starts_with(a)))
    };
    match *sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
        | "describe" | "shortlog" | "cat-file" | "grep" | "rev-list" | "merge-base"
        | "show-ref" | "count-objects" | "whatchanged" | "annotate" | "name-rev" => true,
        "branch" => only_listing(&[
            "-a",
            "-r",
            "-v",
            "-vv",
            "--list",
            "--all",
            "--remotes",
            "--show-current",
            "--contains",
            "--merged",
            "--no-merged",
            "--sort",
            "--format",
            "--no-color",
            "--color",
        ]),
        "remote" => {
            args.is_empty() || args == ["-v"] || matches!(args.first(), Some(&"show" | &"get-url"))
        }
        "tag" => args.is_empty() || only_listing(&["-l", "--list", "-n", "--sort", "--contains"]),
        "stash" => args.first().is_some_and(|w| matches!(*w, "list" | "show")),
        "config" => args
            .iter()
            .any(|w| matches!(*w, "--get" | "--get-all" | "--list" | "-l" | "get")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::provably_read_only;

    #[test]
    fn read_only_commands_are_proven() {
        for c in [
            "ls -la",
            "cat README.md | grep -n foo | head -5",
            "git status && git log --oneline -5",
            "git diff HEAD~1 -- src",
            "find . -name '*.rs' | wc -l",
            "rg -n 'fn main' src",
            "sed -n '1,20p' file.txt",
            "echo \"$(pwd)\"",
            "cd src && ls",
            "sort -u names.txt | uniq -c",
            "jq .name package.json",
            "grep -r TODO . 2>/dev/null",
            "for f in a b; do wc -l $f; done",
            "git branch -a",
            "command -v cargo",
        ] {
            assert!(provably_read_only(c), "{c:?} should be proven read-only");
        }
    }

    #[test]
    fn anything_else_is_unproven() {
        for c in [
            "echo hi > out.txt",
            "cargo test",
            "make",
            "python3 tool.py",
            "./build.sh",
            "npm run build",
            "sed -i 's/a/b/' f",
            "sed 's/a/b/e' f",
            "sort -o out in",
            "find . -delete",
            "find . -exec rm {} +",
            "rg --pre ./x foo",
            "git commit -m x",
            "git -c core.pager=x log",
            "git diff --ext-diff",
            "git branch -D x",
            "tee out.txt",
            "$CMD",
            "/bin/ls",
            "xargs ls",
            "env ls",
            "sudo ls",
            "bash -c ls",
            "ls $(rm x)",
            "cat <(curl -s x)",
            "rm -rf /",
            "ls; touch x",
            "uniq in out",
            "date -s 2020-01-01",
            "curl https://x.example",
            "echo {ESC}",
        ] {
            let c = c.replace("{ESC}", "\u{1b}[0m");
            assert!(!provably_read_only(&c), "{c:?} should be unproven");
        }
    }
}
