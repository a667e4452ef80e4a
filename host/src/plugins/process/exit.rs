//! How a plugin host process ended, in words: `killed by signal 11 (SIGSEGV)`,
//! `exited with status 3` — the text a crashed call is answered with.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The conventional name of signal `signal`, when it is one a crash ends with.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGSYS => "SIGSYS",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGXCPU => "SIGXCPU",
        _ => return None,
    })
}

/// `status` in words.
pub fn describe(status: ExitStatus) -> String {
    if let Some(signal) = status.signal() {
        let name = signal_name(signal).map_or_else(String::new, |n| format!(" ({n})"));
        let core = if status.core_dumped() {
            ", core dumped"
        } else {
            ""
        };
        return format!("killed by signal {signal}{name}{core}");
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_in_words() {
        let cases = [
            (
                ExitStatus::from_raw(libc::SIGSEGV),
                "killed by signal 11 (SIGSEGV)",
            ),
            (
                ExitStatus::from_raw(libc::SIGABRT),
                "killed by signal 6 (SIGABRT)",
            ),
            (ExitStatus::from_raw(3 << 8), "exited with status 3"),
            (ExitStatus::from_raw(0), "exited with status 0"),
            (ExitStatus::from_raw(63), "killed by signal 63"),
        ];
        for (status, text) in cases {
            assert_eq!(describe(status), text);
        }
    }
}
