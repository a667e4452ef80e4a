//! The text a persistent shell ([`super::persistent`]) runs: the driver loop it starts
//! with, one line per command, and the framing of that command's output.
//!
//! The driver is `bash -c 'while IFS= read -r l; do eval "$l"; done'` with its own
//! stderr on `/dev/null`. Each command arrives as ONE line:
//!
//! ```text
//! printf '%s\n' '<start>'; eval $'( <wrapper> ) </dev/null 2>&1'; printf '<end>%s__\n' "$?"
//! ```
//!
//! The wrapper is the one-shot foreground wrapper ([`super::shell::SessionScripts`]) run
//! in a subshell, line for line in the same layout, so error messages carry the same
//! line numbers (`bash: line 5: foo: command not found`) as with one shell per command.
//! Running it in a subshell is what makes the persistent shell robust: `exit`, `exec`,
//! `set -e`, `trap`, `IFS`/`PS1` changes and reads of stdin all stay in the subshell,
//! which ends with the command, while the driver never runs user code. Each command
//! still starts from the session snapshot and leaves its exported variables and
//! working directory in it, as before.
//!
//! The start and end sentinels carry a random session token and the command's number,
//! so stale output of an earlier command (a killed leftover) is dropped and an end is
//! never taken from the wrong command. The end sentinel is found anywhere in the
//! stream, so output without a trailing newline is framed exactly.

use super::containment::SCOPE_ENV;
use super::shell::{SessionScripts, quote, quote_cd_target};

/// The persistent shell's main loop (run with `bash -c`). Its own stderr goes to
/// `/dev/null`; the commands' stderr is their stdout (`2>&1` in each line). One line:
/// bash numbers the lines of `eval`ed text from the line the `eval` is on, and the
/// one-shot wrapper's count starts at line 1.
pub const DRIVER: &str = "exec 2>/dev/null; while IFS= read -r __th_l; do eval \"$__th_l\"; done";

/// Quote `text` as one line of bash: an ANSI-C string (`$'…'`) with newlines, quotes,
/// backslashes and control characters escaped. `None` when `text` holds a NUL byte
/// (which no shell string can carry).
pub fn ansi_c_quote(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("$'");
    for c in text.chars() {
        match c {
            '\0' => return None,
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    Some(out)
}

/// The sentinels framing command `n` of the session with token `token`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sentinels {
    /// Printed (with a newline) before the command runs.
    pub start: String,
    /// Printed after it, followed by the exit status, `__` and a newline.
    pub end: String,
}

impl Sentinels {
    /// Sentinels of command `n`.
    pub fn new(token: &str, n: u64) -> Self {
        Sentinels {
            start: format!("__TOOLHOST_S_{token}_{n}__"),
            end: format!("__TOOLHOST_E_{token}_{n}_"),
        }
    }
}

/// Where the subshell writes its exported variables; the host renames it over the
/// snapshot afterwards (an atomic replace without starting `mv`).
pub fn next_snapshot(scripts: &SessionScripts) -> String {
    format!("{}.next", scripts.snapshot)
}

/// The wrapper for `command` in `cwd`: the one-shot foreground wrapper's lines, in the
/// same layout, without a command substitution or an external program (`pwd -P`
/// through `cd -P .`; the snapshot written to [`next_snapshot`]).
pub fn wrapper(scripts: &SessionScripts, command: &str, cwd: &str) -> String {
    let snap = quote(&scripts.snapshot);
    let marker = scripts.cwd_marker();
    let next = quote(&next_snapshot(scripts));
    // Line 1: the snapshot; line 2: cd; line 3: the start directory; line 4: the
    // command — as in `SessionScripts::foreground` without a pid file.
    format!(
        "( unset __th_l __th_b; . {snap} >/dev/null 2>&1 || true\n\
         cd -- {cwd} || exit 126\n\
         __th_o=$OLDPWD; __th_w=$PWD; cd -P . 2>/dev/null || :; __th_start=$PWD; cd -- \"$__th_w\" 2>/dev/null || :; OLDPWD=$__th_o; unset __th_o __th_w\n\
         eval {command}\n\
         __th_ec=$?\n\
         umask 077; unset {scope_env}\n\
         export -p >| {next} 2>/dev/null || :\n\
         cd -P . 2>/dev/null || :; printf '\\n{marker}%s\\037%s{marker}\\n' \"$__th_start\" \"$PWD\"\n\
         exit $__th_ec\n\
         ) </dev/null 2>&1",
        cwd = quote_cd_target(cwd),
        command = quote(command),
        scope_env = SCOPE_ENV,
    )
}

/// The line sent to the driver for one command (`None` when the wrapper holds a NUL).
pub fn command_line(sentinels: &Sentinels, wrapper: &str) -> Option<String> {
    Some(format!(
        "printf '%s\\n' '{start}'; eval {body}; printf '{end}%s__\\n' \"$?\"\n",
        start = sentinels.start,
        body = ansi_c_quote(wrapper)?,
        end = sentinels.end,
    ))
}

/// What [`Framer::feed`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Still inside the command (or before its start).
    Open,
    /// The command ended with this status.
    Closed(i32),
}

/// Splits the shell's output stream into one command's output: drops everything up to
/// the start sentinel, passes everything up to the end sentinel on, and reads the exit
/// status after it. Works on any chunking of the stream.
#[derive(Debug)]
pub struct Framer {
    start: Vec<u8>,
    end: Vec<u8>,
    started: bool,
    pending: Vec<u8>,
}

impl Framer {
    /// A framer for one command.
    pub fn new(sentinels: &Sentinels) -> Self {
        let mut start = sentinels.start.as_bytes().to_vec();
        start.push(b'\n');
        Framer {
            start,
            end: sentinels.end.as_bytes().to_vec(),
            started: false,
            pending: Vec::new(),
        }
    }

    /// True once the start sentinel was seen (the command was started).
    pub fn started(&self) -> bool {
        self.started
    }

    /// Take in `bytes`; the command's output goes to `sink`.
    pub fn feed(&mut self, bytes: &[u8], sink: &mut dyn FnMut(&[u8])) -> Frame {
        self.pending.extend_from_slice(bytes);
        if !self.started {
            match find(&self.pending, &self.start) {
                Some(at) => {
                    self.pending.drain(..at + self.start.len());
                    self.started = true;
                }
                None => {
                    let keep = self.start.len() - 1;
                    let cut = self.pending.len().saturating_sub(keep);
                    self.pending.drain(..cut);
                    return Frame::Open;
                }
            }
        }
        match find(&self.pending, &self.end) {
            Some(at) => {
                if at > 0 {
                    sink(&self.pending[..at]);
                    self.pending.drain(..at);
                }
                let rest = &self.pending[self.end.len()..];
                let Some(close) = find(rest, b"__\n") else {
                    return Frame::Open;
                };
                let code = std::str::from_utf8(&rest[..close])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(-1);
                self.pending.clear();
                Frame::Closed(code)
            }
            None => {
                let keep = self.end.len() - 1;
                let cut = self.pending.len().saturating_sub(keep);
                if cut > 0 {
                    sink(&self.pending[..cut]);
                    self.pending.drain(..cut);
                }
                Frame::Open
            }
        }
    }

    /// What is held back (a possible partial sentinel) when the stream ends early.
    pub fn into_rest(self) -> Vec<u8> {
        if self.started {
            self.pending
        } else {
            Vec::new()
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn run_bash(script: &str) -> String {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(script)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    #[test]
    fn ansi_c_quoting_round_trips_through_bash() {
        let cases = [
            "plain",
            "it's",
            "back\\slash",
            "two\nlines",
            "tab\there\r",
            "bell\x07 del\x7f esc\x1b[0m",
            "héllo ✓ 0xff",
            "\\x41 literal",
            "$HOME `id` $(id) \"q\"",
            "",
        ];
        for text in cases {
            let quoted = ansi_c_quote(text).unwrap();
            assert!(!quoted.contains('\n'), "{quoted}");
            let echoed = run_bash(&format!("printf '%s' {quoted}"));
            assert_eq!(echoed, text, "{quoted}");
        }
        assert_eq!(ansi_c_quote("a\0b"), None);
    }

    fn collect(framer: &mut Framer, chunks: &[&[u8]]) -> (Vec<u8>, Frame) {
        let mut out = Vec::new();
        let mut frame = Frame::Open;
        for chunk in chunks {
            frame = framer.feed(chunk, &mut |b| out.extend_from_slice(b));
            if frame != Frame::Open {
                break;
            }
        }
        (out, frame)
    }

    #[test]
    fn framing_drops_stale_output_and_reads_the_status() {
        let s = Sentinels::new("abc", 7);
        let stream = format!(
            "late output of 6\n{}\nhello\nno newline{}3__\n",
            s.start, s.end
        );
        let mut framer = Framer::new(&s);
        let (out, frame) = collect(&mut framer, &[stream.as_bytes()]);
        assert_eq!(out, b"hello\nno newline");
        assert_eq!(frame, Frame::Closed(3));
    }

    #[test]
    fn another_commands_sentinels_are_output() {
        let s = Sentinels::new("abc", 8);
        let old = Sentinels::new("abc", 7);
        let stream = format!(
            "{}\n{}0__\nx{}\n{}0__\n",
            old.start, old.end, s.start, s.end
        );
        let mut framer = Framer::new(&s);
        let (out, frame) = collect(&mut framer, &[stream.as_bytes()]);
        assert_eq!(out, b"");
        assert_eq!(frame, Frame::Closed(0));
    }

    proptest! {
        #[test]
        fn framing_does_not_depend_on_chunking(
            body in proptest::collection::vec(any::<u8>(), 0..300),
            cuts in proptest::collection::vec(0usize..400, 0..12),
            code in 0i32..256,
        ) {
            let s = Sentinels::new("f00d", 42);
            let mut stream = b"junk".to_vec();
            stream.extend_from_slice(s.start.as_bytes());
            stream.push(b'\n');
            stream.extend_from_slice(&body);
            stream.extend_from_slice(format!("{}{code}__\n", s.end).as_bytes());
            let mut points: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            points.push(0);
            points.push(stream.len());
            points.sort_unstable();
            let chunks: Vec<&[u8]> = points.windows(2).map(|w| &stream[w[0]..w[1]]).collect();
            let mut framer = Framer::new(&s);
            let (out, frame) = collect(&mut framer, &chunks);
            prop_assert_eq!(out, body);
            prop_assert_eq!(frame, Frame::Closed(code));
        }
    }

    #[test]
    fn the_command_line_runs_in_bash_with_the_one_shot_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let scripts = SessionScripts::new("t1", &dir.path().display().to_string());
        std::fs::write(&scripts.snapshot, "export FROM_SNAP=yes\n").unwrap();
        let s = Sentinels::new("tok", 1);
        let w = wrapper(
            &scripts,
            "echo \"$FROM_SNAP\"\nnope_cmd_x\nexport NEW=1; cd /",
            "/tmp",
        );
        let line = command_line(&s, &w).unwrap();
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(DRIVER)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(line.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(text.starts_with(&format!("{}\nyes\n", s.start)), "{text}");
        // Where one shell per command reports it: bash numbers the lines of a
        // multi-line `eval` from the line its word ends on (4 + 2).
        assert!(
            text.contains("bash: line 7: nope_cmd_x: command not found"),
            "{text}"
        );
        let (_, start, end) = scripts.find_cwd_report(text.as_bytes()).unwrap();
        assert_eq!(end, "/");
        assert!(!start.is_empty());
        assert!(text.ends_with(&format!("{}0__\n", s.end)), "{text}");
        let next = std::fs::read_to_string(next_snapshot(&scripts)).unwrap();
        assert!(next.contains("NEW=\"1\""), "{next}");
    }
}
