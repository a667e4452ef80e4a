//! The POSIX shell scripts every backend runs: the session bootstrap (snapshot of the
//! login environment), the foreground wrapper (source snapshot, `cd`, run, re-dump
//! exported variables, report the working directory), the background wrapper, and the
//! remote process-group kill.
//!
//! Scripts work with bash and with busybox/dash `sh` (containers without bash), so they
//! avoid bashisms: `$$` instead of `$BASHPID`, `.` instead of `source`.

use super::containment::SCOPE_ENV;

/// Quote `s` for a POSIX shell (single quotes; `'` becomes `'\''`).
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/_-.,:@%+=".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Quote a path (a `cd` target, a file), keeping `~` and `~/...` expandable.
pub fn quote_cd_target(cwd: &str) -> String {
    if cwd == "~" || cwd == "~/" {
        "\"$HOME\"".to_string()
    } else if let Some(rest) = cwd.strip_prefix("~/") {
        format!("\"$HOME\"/{}", quote(rest))
    } else {
        quote(cwd)
    }
}

/// Paths and markers of one shell session (one per [`super::TaskEnvironment`]).
#[derive(Clone, Debug)]
pub struct SessionScripts {
    /// Random session id (markers and file names).
    pub session_id: String,
    /// Snapshot file inside the environment.
    pub snapshot: String,
}

/// Field separator between the start and end directory inside the cwd marker.
const CWD_SEP: char = '\u{1f}';

impl SessionScripts {
    /// Scripts for session `session_id` with files under `temp_dir`.
    pub fn new(session_id: &str, temp_dir: &str) -> Self {
        let temp_dir = temp_dir.trim_end_matches('/');
        SessionScripts {
            session_id: session_id.to_string(),
            snapshot: format!("{temp_dir}/toolhost-snap-{session_id}.sh"),
        }
    }

    /// The marker that frames the working directory report.
    pub fn cwd_marker(&self) -> String {
        format!("__TOOLHOST_CWD_{}__", self.session_id)
    }

    fn print_cwd(&self, start: &str) -> String {
        let marker = self.cwd_marker();
        format!(
            "printf '\\n{marker}%s\\037%s{marker}\\n' \"{start}\" \"$(pwd -P 2>/dev/null || pwd)\""
        )
    }

    /// The bootstrap run once in a login shell: dumps exported variables (plus bash
    /// functions and aliases) to the snapshot, `cd`s to `cwd`, reports it.
    /// `init_files` are sourced first (e.g. `~/.bashrc`).
    pub fn bootstrap(&self, cwd: &str, init_files: &[String]) -> String {
        let snap = quote(&self.snapshot);
        let tmp = format!("{snap}.tmp.$$");
        let mut s = String::new();
        for file in init_files {
            let q = quote_cd_target(file);
            s.push_str(&format!("[ -r {q} ] && . {q} >/dev/null 2>&1 </dev/null\n"));
        }
        s.push_str(&format!("umask 077; unset {SCOPE_ENV}\n"));
        s.push_str(&format!("export -p > {tmp}\n"));
        s.push_str(&format!(
            "if [ -n \"${{BASH_VERSION:-}}\" ]; then\n\
             __th_fns=$(declare -F | awk '{{print $3}}' | grep -vE '^_') || true\n\
             [ -n \"$__th_fns\" ] && declare -f $__th_fns >> {tmp} 2>/dev/null\n\
             alias -p >> {tmp}\n\
             echo 'shopt -s expand_aliases' >> {tmp}\n\
             fi\n"
        ));
        s.push_str(&format!("echo 'set +e' >> {tmp}\necho 'set +u' >> {tmp}\n"));
        s.push_str(&format!("mv -f {tmp} {snap} || rm -f {tmp}\n"));
        s.push_str(&format!(
            "cd -- {} 2>/dev/null || true\n",
            quote_cd_target(cwd)
        ));
        s.push_str("__th_start=$(pwd -P 2>/dev/null || pwd)\n");
        s.push_str(&self.print_cwd("$__th_start"));
        s.push('\n');
        s
    }

    /// The foreground wrapper around `command`.
    pub fn foreground(
        &self,
        command: &str,
        cwd: &str,
        snapshot_ready: bool,
        pid_file: Option<&str>,
    ) -> String {
        let snap = quote(&self.snapshot);
        let mut s = String::new();
        if let Some(pid_file) = pid_file {
            s.push_str(&record_pid(pid_file));
        }
        if snapshot_ready {
            s.push_str(&format!(". {snap} >/dev/null 2>&1 || true\n"));
        }
        s.push_str(&format!("cd -- {} || exit 126\n", quote_cd_target(cwd)));
        s.push_str("__th_start=$(pwd -P 2>/dev/null || pwd)\n");
        s.push_str(&format!("eval {}\n", quote(command)));
        s.push_str("__th_ec=$?\n");
        s.push_str(&format!("umask 077; unset {SCOPE_ENV}\n"));
        if snapshot_ready {
            let tmp = format!("{snap}.tmp.$$");
            s.push_str(&format!(
                "{{ export -p > {tmp} && mv -f {tmp} {snap}; }} 2>/dev/null || rm -f {tmp} 2>/dev/null\n"
            ));
        }
        if let Some(pid_file) = pid_file {
            s.push_str(&format!("rm -f {} 2>/dev/null\n", quote(pid_file)));
        }
        s.push_str(&self.print_cwd("$__th_start"));
        s.push_str("\nexit $__th_ec\n");
        s
    }

    /// The background wrapper: like the foreground one without the epilogue.
    pub fn background(
        &self,
        command: &str,
        cwd: &str,
        snapshot_ready: bool,
        pid_file: Option<&str>,
    ) -> String {
        let mut s = String::new();
        if let Some(pid_file) = pid_file {
            s.push_str(&record_pid(pid_file));
        }
        if snapshot_ready {
            s.push_str(&format!(
                ". {} >/dev/null 2>&1 || true\n",
                quote(&self.snapshot)
            ));
        }
        s.push_str(&format!("cd -- {} || exit 126\n", quote_cd_target(cwd)));
        s.push_str(&format!("eval {}\n", quote(command)));
        s.push_str("__th_ec=$?\n");
        if let Some(pid_file) = pid_file {
            s.push_str(&format!("rm -f {} 2>/dev/null\n", quote(pid_file)));
        }
        s.push_str("exit $__th_ec\n");
        s
    }

    /// Find the cwd report in `output`: `(marker start offset, start dir, end dir)`.
    /// The report is the last line the wrapper prints.
    pub fn find_cwd_report(&self, output: &[u8]) -> Option<(usize, String, String)> {
        let marker = self.cwd_marker();
        let marker = marker.as_bytes();
        let last = rfind(output, marker, output.len())?;
        let search_from = last.saturating_sub(8192);
        let first = rfind(&output[search_from..], marker, last - search_from)? + search_from;
        let inner = String::from_utf8_lossy(&output[first + marker.len()..last]);
        let (start, end) = inner.split_once(CWD_SEP)?;
        // The report starts on a fresh line the wrapper printed (`\n` before the marker).
        let cut = if first > 0 && output[first - 1] == b'\n' {
            first - 1
        } else {
            first
        };
        Some((cut, start.trim().to_string(), end.trim().to_string()))
    }
}

fn rfind(haystack: &[u8], needle: &[u8], before: usize) -> Option<usize> {
    let end = before.min(haystack.len());
    if needle.is_empty() || end < needle.len() {
        return None;
    }
    (0..=end - needle.len())
        .rev()
        .find(|&i| &haystack[i..i + needle.len()] == needle)
}

/// Kill the process group whose id is in `pid_file` (SIGTERM, 1 s grace, SIGKILL).
/// Runs inside the environment. Guards against pid reuse: the id must be a number above
/// 1, and the group is signalled only while its leader is the process that wrote the file
/// (same start time in /proc, when there is a /proc) or, with the leader gone, while the
/// group still has members (a live group id cannot be reused). No `--` before the
/// negative id: dash's `kill` does not accept it.
///
/// A kill can arrive before the wrapper has recorded itself. So the script first leaves
/// a `<pid_file>.kill` mark and only then reads the record, while the wrapper writes
/// its record and only then looks for the mark ([`record_pid`]): whichever comes
/// second sees the other, so the command is either killed or never runs.
pub fn kill_group_script(pid_file: &str) -> String {
    let body = r#": > __M__ 2>/dev/null
set -- $(cat __F__ 2>/dev/null)
p=$1; st=$2
case "$p" in ''|*[!0-9]*) exit 0;; esac
finish() { rm -f __F__ __M__ 2>/dev/null; exit 0; }
[ "$p" -gt 1 ] || finish
if [ -n "$st" ] && [ -r /proc/$p/stat ]; then
  now=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f20)
  [ "$now" = "$st" ] || finish
fi
kill -0 -"$p" 2>/dev/null || finish
kill -TERM -"$p" 2>/dev/null
i=0
while [ $i -lt 10 ] && kill -0 -"$p" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
kill -0 -"$p" 2>/dev/null && kill -KILL -"$p" 2>/dev/null
finish
"#;
    with_pid_files(body, pid_file)
}

/// The lines a wrapper starts with: record `$$` and its start time for
/// [`kill_group_script`], then stop at once (exit 137, as if killed) if a kill came
/// first.
pub fn record_pid(pid_file: &str) -> String {
    let body = r#"echo "$$ $(sed 's/.*) //' /proc/$$/stat 2>/dev/null | cut -d' ' -f20)" > __F__ 2>/dev/null
if [ -e __M__ ]; then rm -f __F__ __M__ 2>/dev/null; exit 137; fi
"#;
    with_pid_files(body, pid_file)
}

/// The mark [`kill_group_script`] leaves for a command that has not recorded itself yet.
fn kill_mark(pid_file: &str) -> String {
    format!("{pid_file}.kill")
}

/// `body` with `__F__` as the quoted pid file and `__M__` as its quoted kill mark.
fn with_pid_files(body: &str, pid_file: &str) -> String {
    body.replace("__F__", &quote(pid_file))
        .replace("__M__", &quote(&kill_mark(pid_file)))
}

/// `mkdir -p` the parent of `path`, then copy stdin into it.
pub fn write_file_script(path: &str) -> String {
    let q = quote_cd_target(path);
    format!("d=$(dirname -- {q}) && mkdir -p -- \"$d\" && cat > {q}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn quoting() {
        assert_eq!(quote("abc/d.e"), "abc/d.e");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote_cd_target("~"), "\"$HOME\"");
        assert_eq!(quote_cd_target("~/a b"), "\"$HOME\"/'a b'");
        assert_eq!(quote_cd_target("/tmp/x"), "/tmp/x");
    }

    #[test]
    fn cwd_report_is_found_and_cut() {
        let s = SessionScripts::new("abc", "/tmp");
        let m = s.cwd_marker();
        let out = format!("hello\nworld\n{m}/a\u{1f}/b/c{m}\n");
        let (cut, start, end) = s.find_cwd_report(out.as_bytes()).unwrap();
        assert_eq!(&out[..cut], "hello\nworld");
        assert_eq!(start, "/a");
        assert_eq!(end, "/b/c");
    }

    #[test]
    fn missing_report_is_none() {
        let s = SessionScripts::new("abc", "/tmp");
        assert!(s.find_cwd_report(b"no marker here").is_none());
        let m = s.cwd_marker();
        assert!(s.find_cwd_report(format!("x{m}half").as_bytes()).is_none());
    }

    #[test]
    fn kill_script_kills_the_recorded_group_only() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("p").display().to_string();
        let run = |script: &str| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(script)
                .status()
                .unwrap()
        };
        // A group of our own that records itself like the wrappers do.
        let mut leader = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{}sleep 300 & wait", record_pid(&pid_file)))
            .process_group(0)
            .spawn()
            .unwrap();
        for _ in 0..100 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.trim().contains(' ')) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let recorded = std::fs::read_to_string(&pid_file).unwrap();
        // A stale record (other start time) must not signal anything.
        let pid = recorded.split_whitespace().next().unwrap().to_string();
        std::fs::write(&pid_file, format!("{pid} 1")).unwrap();
        assert!(run(&kill_group_script(&pid_file)).success());
        assert!(
            leader.try_wait().unwrap().is_none(),
            "stale record killed a process"
        );
        // Nor may junk or pid 1.
        for junk in ["1 0", "-1", "abc", ""] {
            std::fs::write(&pid_file, junk).unwrap();
            assert!(run(&kill_group_script(&pid_file)).success());
        }
        assert!(leader.try_wait().unwrap().is_none());
        // The genuine record kills the whole group.
        std::fs::write(&pid_file, &recorded).unwrap();
        assert!(run(&kill_group_script(&pid_file)).success());
        let status = leader.wait().unwrap();
        assert!(!status.success());
        assert!(!std::path::Path::new(&pid_file).exists());
        assert!(!std::path::Path::new(&kill_mark(&pid_file)).exists());
    }

    #[test]
    fn a_kill_before_the_wrapper_records_itself_stops_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("p").display().to_string();
        let s = SessionScripts::new("t1", "/tmp");
        let kill = std::process::Command::new("sh")
            .arg("-c")
            .arg(kill_group_script(&pid_file))
            .status()
            .unwrap();
        assert!(kill.success());
        let wrapper = s.background("echo ran", "/tmp", false, Some(&pid_file));
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&wrapper)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(137));
        assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
        // Both files are gone, so the next command is not stopped.
        assert!(!std::path::Path::new(&pid_file).exists());
        assert!(!std::path::Path::new(&kill_mark(&pid_file)).exists());
    }

    #[test]
    fn scripts_run_in_sh() {
        // The wrapper must be valid POSIX sh (containers may not have bash).
        let s = SessionScripts::new("t1", "/tmp");
        for script in [
            s.bootstrap("/tmp", &[]),
            s.foreground("echo hi; cd /", "/tmp", true, Some("/tmp/x.pid")),
            s.background("echo hi", "/tmp", false, None),
            kill_group_script("/tmp/none.pid"),
        ] {
            let status = std::process::Command::new("sh")
                .arg("-n")
                .arg("-c")
                .arg(&script)
                .status()
                .unwrap();
            assert!(status.success(), "{script}");
        }
    }
}
