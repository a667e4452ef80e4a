//! The subreaper runner: containment's last line where no per-command cgroup could be
//! made (docs/terminal.md, "Nothing a local command starts outlives it").
//!
//! Without a cgroup, a command's processes are found by the environment mark
//! (`TOOLHOST_SCOPE`), which a process can drop by clearing its environment — and one
//! that also leaves the process group (`setsid env -i daemon &`) used to escape both.
//! The runner closes that hole with the kernel's child-subreaper attribute
//! (`PR_SET_CHILD_SUBREAPER`): the process toolhost starts becomes a small runner that
//! forks the real command and stays its parent. Every process the command orphans —
//! however it daemonises, whatever environment it keeps — is re-parented to the runner
//! instead of to init. When the command exits (or the runner is told to stop), the
//! runner SIGKILLs its remaining children until none is left (each killed child's own
//! children are re-parented to it in turn), then exits with the command's status.
//!
//! The runner is the process group leader that [`LocalChild`](super::local_child) signals
//! and waits for; the command runs in the same group (and session). It runs between
//! fork and exec of a multi-threaded program, so it only makes async-signal-safe system
//! calls on stack memory and never returns into Rust code that could allocate: it ends
//! with `_exit`. Without `/proc/<pid>/task/<pid>/children` (a kernel built without
//! `CONFIG_PROC_CHILDREN`) the runner cannot list its children and exits with the
//! command, as if it were not there.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// How long a runner told to stop (SIGTERM, SIGINT, SIGHUP) lets the command finish
/// before it kills everything: well inside the 1 s grace the group kill gives.
const STOP_GRACE_MS: i64 = 400;

/// Make the process `cmd` starts a subreaper runner of the real command (see the module
/// doc). Call after the process group / session is arranged and before any confinement
/// hook, so the runner is the group leader and is not confined itself.
#[allow(unsafe_code)]
pub fn attach(cmd: &mut Command) {
    // SAFETY: the hook runs between fork and exec. `become_runner` makes only
    // async-signal-safe system calls (prctl, sigprocmask, fork, waitpid, sigtimedwait,
    // open, read, close, kill, _exit) on stack buffers, allocates nothing, and in the
    // runner never returns (it ends with `_exit`); in the forked command it returns so
    // the remaining hooks and the exec proceed as usual.
    unsafe {
        cmd.pre_exec(|| {
            become_runner();
            Ok(())
        });
    }
}

/// Signals the runner handles itself (blocked, then taken with `sigtimedwait`).
#[allow(unsafe_code)]
fn runner_signals() -> libc::sigset_t {
    // SAFETY: `sigemptyset`/`sigaddset` only write the set on our stack.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [
            libc::SIGCHLD,
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
        ] {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// In the freshly forked child: become the runner and fork the command. Returns only in
/// the command (or when no runner could be set up, so the command runs directly).
#[allow(unsafe_code)]
fn become_runner() {
    let set = runner_signals();
    // SAFETY: prctl, sigprocmask and fork are async-signal-safe system calls; the masks
    // live on our stack.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return;
        }
        let mut previous: libc::sigset_t = std::mem::zeroed();
        if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut previous) != 0 {
            let _ = libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            return;
        }
        let command = libc::fork();
        if command <= 0 {
            // The command itself (or no fork possible: run it here, undecorated).
            libc::sigprocmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
            if command < 0 {
                let _ = libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            }
            return;
        }
        close_all_descriptors();
        run(command, &set)
    }
}

/// The runner holds no file: not the output pipe (EOF must come when the command and
/// its processes are gone), not stdin, and not the pipe std uses to learn whether the
/// exec failed (std waits for it to close).
#[allow(unsafe_code)]
fn close_all_descriptors() {
    // SAFETY: close_range and close are async-signal-safe; the runner uses no
    // descriptor afterwards except ones it opens itself.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..4096 {
                libc::close(fd);
            }
        }
    }
}

/// The runner's loop: reap, and once the command is gone (or a stop was asked for and
/// its grace passed) kill the remaining children until there are none; then exit with
/// the command's status.
#[allow(unsafe_code)]
fn run(command: libc::pid_t, set: &libc::sigset_t) -> ! {
    let mut status: Option<i32> = None;
    let mut stop_deadline: Option<i64> = None;
    loop {
        // Reap everything that has ended.
        let no_children = loop {
            let mut raw = 0;
            // SAFETY: waitpid writes the status into our stack variable.
            let pid = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
            if pid == command {
                status = Some(exit_code(raw));
            } else if pid == 0 {
                break false;
            } else if pid < 0 {
                break true;
            }
        };
        let stopping = stop_deadline.is_some_and(|deadline| monotonic_ms() >= deadline);
        if status.is_some() || stopping {
            if no_children {
                // SAFETY: `_exit` ends the runner without running any user-space code.
                unsafe { libc::_exit(status.unwrap_or(128 + libc::SIGKILL)) }
            }
            if !kill_children() {
                // The children cannot be listed: leave as if the runner were not there.
                // SAFETY: as above.
                unsafe { libc::_exit(status.unwrap_or(128 + libc::SIGKILL)) }
            }
        }
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: 20_000_000,
        };
        // SAFETY: sigtimedwait reads the set and the timeout from our stack.
        let signal = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &timeout) };
        if matches!(
            signal,
            libc::SIGTERM | libc::SIGINT | libc::SIGHUP | libc::SIGQUIT
        ) && stop_deadline.is_none()
        {
            stop_deadline = Some(monotonic_ms() + STOP_GRACE_MS);
        }
    }
}

/// A shell-style exit code from a wait status: the code, or 128 + the signal.
fn exit_code(raw: i32) -> i32 {
    if libc::WIFEXITED(raw) {
        libc::WEXITSTATUS(raw)
    } else if libc::WIFSIGNALED(raw) {
        128 + libc::WTERMSIG(raw)
    } else {
        1
    }
}

#[allow(unsafe_code)]
fn monotonic_ms() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into our stack variable.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

/// SIGKILL every current child of the runner. False when they cannot be listed.
#[allow(unsafe_code)]
fn kill_children() -> bool {
    let mut path = [0u8; 64];
    // SAFETY: getpid has no preconditions.
    let own = unsafe { libc::getpid() };
    path[..6].copy_from_slice(b"/proc/");
    let mut len = 6;
    len += write_decimal(&mut path[len..], own);
    path[len..len + 6].copy_from_slice(b"/task/");
    len += 6;
    len += write_decimal(&mut path[len..], own);
    path[len..len + 9].copy_from_slice(b"/children");
    len += 9;
    path[len] = 0;
    // SAFETY: `path` is NUL-terminated; open/read/close use stack memory only.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let mut buf = [0u8; 4096];
        let mut pid: libc::pid_t = 0;
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            for &byte in &buf[..n as usize] {
                if byte.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add(i32::from(byte - b'0'));
                } else {
                    if pid > 1 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    pid = 0;
                }
            }
        }
        if pid > 1 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
    }
    true
}

/// Write `n` (non-negative) in decimal at the start of `out`; the number of bytes.
fn write_decimal(out: &mut [u8], n: i32) -> usize {
    let mut digits = [0u8; 12];
    let mut count = 0;
    let mut rest = n.max(0);
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for i in 0..count {
        out[i] = digits[count - 1 - i];
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_written_without_allocation() {
        for (n, want) in [
            (0, "0"),
            (7, "7"),
            (12345, "12345"),
            (2147483647, "2147483647"),
        ] {
            let mut out = [0u8; 12];
            let len = write_decimal(&mut out, n);
            assert_eq!(&out[..len], want.as_bytes());
        }
    }

    #[test]
    fn exit_codes_follow_the_shell() {
        // Raw wait statuses: exited with 3; killed by SIGKILL.
        assert_eq!(exit_code(3 << 8), 3);
        assert_eq!(exit_code(libc::SIGKILL), 128 + libc::SIGKILL);
    }
}
