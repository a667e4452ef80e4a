//! The text a persistent shell on another machine runs (a container's `exec`, an ssh
//! session): its driver, one line per command, and the side scripts that end a
//! command's processes from outside.
//!
//! Toolhost cannot put such a shell in a cgroup or signal its processes directly, so
//! the driver carries an environment mark, `TOOLHOST_SCOPE=<mark>`, which every
//! process it forks or execs inherits (through `setsid` and daemonizing too; only a
//! process that clears its environment drops it). The driver is the one marked process
//! that belongs to the shell; every other marked process belongs to the running
//! command. So:
//! - after each command the driver itself ends what the command left behind (`sleep
//!   60 &`, daemons): it SIGKILLs every marked process but itself, found with one
//!   `grep -z` over `/proc/*/environ`, before it prints the end sentinel — when the
//!   result comes back, the leftovers are gone. A process it cannot end makes the
//!   driver exit after that command, so the next command gets a new shell;
//! - a timeout or a cancellation ends the command from a second, unmarked process in
//!   the environment (a short `exec` or ssh session) with [`kill_script`]: SIGTERM to
//!   every marked process but the driver, a grace, SIGKILL;
//! - the driver renames the next snapshot over the session snapshot itself (`mv`),
//!   since the host cannot reach the environment's files. Under bash it first compares
//!   the two (builtin reads) and, when the command changed no exported variable (most
//!   commands), empties the next snapshot instead of starting `mv`: an empty next
//!   snapshot means "not written by this command" (it was killed, or left with `exit`
//!   or `exec` before the dump). So a command that unexports *every* variable leaves
//!   the snapshot as it was — the one case where this differs from one shell per
//!   command.
//!
//! The driver runs under bash or a POSIX `sh` with ANSI-C quoting (busybox ash); on
//! its first line it says whether the environment has what it needs (`grep -z`, `mv`,
//! `$'…'`), and prints its process id there for the kill scripts. Commands arrive as in
//! [`super::persistent_script`], with the driver's `__th_end` in place of the end
//! `printf`.

use super::containment::SCOPE_ENV;
use super::persistent_script::{self as script, Sentinels};
use super::shell::{SessionScripts, quote};

/// How the first line of a driver that can run commands starts.
pub const READY_PREFIX: &str = "__TOOLHOST_PID_";

/// The `grep` listing the `environ` files of the processes carrying `mark` (run with
/// the mark cleared, so it does not list itself).
fn marked_list(mark: &str) -> String {
    format!(
        "{SCOPE_ENV}= grep -z -l -x -F -e {} /proc/[0-9]*/environ 2>/dev/null",
        quote(&format!("{SCOPE_ENV}={mark}"))
    )
}

/// The driver of a shell marked with `mark`, run with `<shell> -c` and
/// `TOOLHOST_SCOPE=<mark>` in its environment (see the module doc).
///
/// `__th_begin` notes the live process ids before a command; `__th_sweep` afterwards
/// returns at once when the list is the same (nothing the command started is left),
/// otherwise it lists the marked processes with `grep` and SIGKILLs all but the
/// driver, round after round until a round finds none it has not killed yet (a dying
/// process may still be listed once). Without a new process id a leftover would need
/// a reused one while the rest of the list stayed the same: not a case it handles.
pub fn driver(mark: &str) -> String {
    let list = marked_list(mark);
    // One line (joined below): bash numbers the lines of `eval`ed text from the line
    // the `eval` is on, and the one-shot wrapper's count starts at line 1.
    let script = format!(
        r#"exec 2>/dev/null;
__th_begin() {{ set -- /proc/[0-9]*; __th_b="$*"; }};
__th_sweep() {{
  set -- /proc/[0-9]*;
  [ "$*" = "$__th_b" ] && return 0;
  __th_i=0; __th_k=' ';
  while [ "$__th_i" -lt 20 ]; do
    __th_found=;
    for __th_f in $({list}); do
      __th_p=${{__th_f#/proc/}}; __th_p=${{__th_p%/environ}};
      [ "$__th_p" = "$$" ] && continue;
      case $__th_k in *" $__th_p "*) continue ;; esac;
      if kill -9 "$__th_p"; then __th_found=1; __th_k="$__th_k$__th_p "; elif [ -e "/proc/$__th_p" ]; then return 1; fi;
    done;
    [ -z "$__th_found" ] && return 0;
    __th_i=$((__th_i + 1));
  done;
  return 1;
}};
__th_end() {{
  __th_s=$1;
  if [ -s "$3" ]; then
    __th_x=; __th_y=;
    if [ -n "$BASH_VERSION" ]; then
      IFS= read -r -d '' __th_x < "$3"; IFS= read -r -d '' __th_y < "$4";
    fi;
    if [ -n "$__th_x" ] && [ "$__th_x" = "$__th_y" ]; then : > "$3"; else mv -f "$3" "$4"; fi;
  fi;
  if __th_sweep; then __th_ok=1; else __th_ok=; fi;
  printf '%s%s__\n' "$2" "$__th_s";
  [ -n "$__th_ok" ] || exit 1;
  unset __th_s __th_ok __th_i __th_k __th_found __th_f __th_p __th_x __th_y;
}};
if printf 'x\0y\0' | grep -z -q -x -F y && command -v mv >/dev/null; then printf '{READY_PREFIX}%s_%s__\n' "$$" $'\x41'; else printf '{READY_PREFIX}none__\n'; fi;
while IFS= read -r __th_l; do eval "$__th_l"; done"#
    );
    script.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// Read the driver's first line: its process id, or `None` when it cannot run
/// commands here (no `grep -z`, no `mv`, no ANSI-C quoting).
pub fn parse_ready(line: &str) -> Option<u32> {
    let rest = line.trim().strip_prefix(READY_PREFIX)?.strip_suffix("__")?;
    let (pid, check) = rest.split_once('_')?;
    if check != "A" {
        return None;
    }
    pid.parse().ok().filter(|pid| *pid > 1)
}

/// The line sent to the driver for one command (`None` when the wrapper holds a NUL).
/// The wrapper goes two lines down: one shell per command on these backends starts
/// with two lines recording its process id (a pid file), and shells number the lines
/// of `eval`ed text, so error messages keep the line numbers they had.
pub fn command_line(
    sentinels: &Sentinels,
    wrapper: &str,
    scripts: &SessionScripts,
) -> Option<String> {
    Some(format!(
        "__th_begin; printf '%s\\n' '{start}'; eval {body}; __th_end \"$?\" '{end}' {next} {snap}\n",
        start = sentinels.start,
        body = script::ansi_c_quote(&format!("\n\n{wrapper}"))?,
        end = sentinels.end,
        next = quote(&script::next_snapshot(scripts)),
        snap = quote(&scripts.snapshot),
    ))
}

/// A POSIX `sh` script, run outside the shell, that ends the processes marked with
/// `mark` — all but the driver `driver_pid`, or all of them with `None` — with
/// SIGTERM, up to `grace_tenths` tenths of a second, then SIGKILL.
pub fn kill_script(mark: &str, driver_pid: Option<u32>, grace_tenths: u32) -> String {
    let list = marked_list(mark);
    let keep = driver_pid.map(|p| p.to_string()).unwrap_or_default();
    format!(
        r#"k={keep}
left() {{ for f in $({list}); do p=${{f#/proc/}}; p=${{p%/environ}}; [ "$p" = "$k" ] || echo "$p"; done; }}
for p in $(left); do kill -TERM "$p" 2>/dev/null; done
i=0
while [ "$i" -lt {grace_tenths} ] && [ -n "$(left)" ]; do sleep 0.1; i=$((i + 1)); done
n=0
while [ "$n" -lt 20 ]; do
  l=$(left); [ -z "$l" ] && exit 0
  for p in $l; do kill -KILL "$p" 2>/dev/null; done
  sleep 0.05; n=$((n + 1))
done
exit 1
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_lines_parse() {
        let cases = [
            ("__TOOLHOST_PID_42_A__\n", Some(42)),
            ("__TOOLHOST_PID_42_$\\x41__", None),
            ("__TOOLHOST_PID_none__", None),
            ("__TOOLHOST_PID_1_A__", None),
            ("__TOOLHOST_PID_x_A__", None),
            ("noise", None),
        ];
        for (line, want) in cases {
            assert_eq!(parse_ready(line), want, "{line:?}");
        }
    }

    #[test]
    fn scripts_are_valid_sh() {
        let scripts = SessionScripts::new("t1", "/tmp");
        let line = command_line(&Sentinels::new("tok", 3), "echo 'a'\nb", &scripts).unwrap();
        assert_eq!(line.matches('\n').count(), 1, "{line}");
        assert!(!driver("ab12").contains('\n'));
        for (shell, script) in [
            ("sh", driver("ab12")),
            ("sh", kill_script("ab12", Some(7), 10)),
            ("bash", line),
        ] {
            let status = std::process::Command::new(shell)
                .arg("-n")
                .arg("-c")
                .arg(&script)
                .status()
                .unwrap();
            assert!(status.success(), "{script}");
        }
    }
}
