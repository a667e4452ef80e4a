//! The interactive prompt on the controlling terminal (`/dev/tty`, not stdin, so it works
//! while stdin carries a protocol or a pipe).
//!
//! ```text
//!   ⚠  DANGEROUS COMMAND: recursive delete
//!      rm -rf build
//!
//!      [o]nce  |  [s]ession  |  [a]lways  |  [d]eny
//!      Choice [o/s/a/D] (60 s):
//! ```
//!
//! The terminal is switched to non-canonical mode without signals for the duration, so
//! Ctrl-C arrives as a key (and denies) instead of killing the host; the previous mode is
//! restored afterwards. Bare Enter, unknown input, EOF (Ctrl-D), Ctrl-C, Esc and the
//! timeout all deny. Prompts are serialised process-wide.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::termios::{self, LocalModes, OptionalActions, SpecialCodeIndex};

use super::surface::{ApprovalRequest, Choice};

static PROMPT_LOCK: Mutex<()> = Mutex::new(());

/// True when the process has a controlling terminal to prompt on.
pub fn terminal_available() -> bool {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .is_ok_and(|f| termios::isatty(&f))
}

/// Restores the terminal mode on drop.
struct RawGuard {
    tty: File,
    saved: termios::Termios,
}

impl Drop for RawGuard {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(&self.tty, OptionalActions::Now, &self.saved);
    }
}

/// Ask on the terminal. `None` when there is no terminal.
pub fn ask(request: &ApprovalRequest, timeout: Duration) -> Option<Choice> {
    let _serial = PROMPT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .ok()?;
    let saved = termios::tcgetattr(&tty).ok()?;
    let mut raw = saved.clone();
    raw.local_modes
        .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
    raw.special_codes[SpecialCodeIndex::VMIN] = 1;
    raw.special_codes[SpecialCodeIndex::VTIME] = 0;
    let guard = RawGuard {
        tty: tty.try_clone().ok()?,
        saved,
    };
    termios::tcsetattr(&tty, OptionalActions::Now, &raw).ok()?;

    let text = render(request, timeout);
    let _ = tty.write_all(text.as_bytes());
    let _ = tty.flush();
    let (choice, echo) = read_choice(&mut tty, request, Instant::now() + timeout);
    drop(guard);
    let _ = tty.write_all(echo.as_bytes());
    let _ = tty.flush();
    Some(choice)
}

/// The prompt text.
pub(crate) fn render(request: &ApprovalRequest, timeout: Duration) -> String {
    let options = if request.smart_denied {
        "[o]nce  |  [d]eny          (the smart approver judged this unsafe)"
    } else if request.allow_always {
        "[o]nce  |  [s]ession  |  [a]lways  |  [d]eny"
    } else {
        "[o]nce  |  [s]ession  |  [d]eny"
    };
    let keys = if request.smart_denied {
        "o/D"
    } else if request.allow_always {
        "o/s/a/D"
    } else {
        "o/s/D"
    };
    let command = request.command.replace('\n', "\r\n      ");
    format!(
        "\r\n  ⚠  DANGEROUS COMMAND: {}\r\n      {}\r\n\r\n      {}\r\n      Choice [{}] ({} s): ",
        request.description,
        command,
        options,
        keys,
        timeout.as_secs()
    )
}

/// Map typed text to a choice.
pub(crate) fn parse_choice(input: &str, request: &ApprovalRequest) -> Choice {
    match input.trim().to_ascii_lowercase().as_str() {
        "o" | "once" => Choice::Once,
        "s" | "session" if !request.smart_denied => Choice::Session,
        "a" | "always" if request.allow_always && !request.smart_denied => Choice::Always,
        _ => Choice::Deny { reason: None },
    }
}

/// Read one line in raw mode until Enter, Ctrl-C, Ctrl-D, Esc or the deadline.
/// Returns the choice and what to print after it.
fn read_choice(tty: &mut File, request: &ApprovalRequest, deadline: Instant) -> (Choice, String) {
    let mut line = String::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return (
                Choice::Timeout,
                "\r\n      ⏱ Timeout - denying command\r\n".into(),
            );
        }
        let left = deadline - now;
        let timespec = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let ready = {
            let mut fds = [PollFd::new(&*tty, PollFlags::IN)];
            match poll(&mut fds, Some(&timespec)) {
                Ok(n) => n > 0,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return (Choice::Deny { reason: None }, "\r\n".into()),
            }
        };
        if !ready {
            continue;
        }
        let mut byte = [0u8; 1];
        match tty.read(&mut byte) {
            Ok(0) => {
                return (
                    Choice::Deny { reason: None },
                    "\r\n      (EOF) denied\r\n".into(),
                );
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return (Choice::Deny { reason: None }, "\r\n".into()),
        }
        match byte[0] {
            b'\r' | b'\n' => {
                let choice = parse_choice(&line, request);
                let label = match &choice {
                    Choice::Deny { .. } => "denied",
                    other => other.as_str(),
                };
                return (choice, format!("\r\n      → {label}\r\n"));
            }
            0x03 => {
                return (
                    Choice::Deny { reason: None },
                    "^C\r\n      denied\r\n".into(),
                );
            }
            0x04 if line.is_empty() => {
                return (
                    Choice::Deny { reason: None },
                    "^D\r\n      denied\r\n".into(),
                );
            }
            0x1b => return (Choice::Deny { reason: None }, "\r\n      denied\r\n".into()),
            0x7f | 0x08 if !line.is_empty() => {
                line.pop();
                let _ = tty.write_all(b"\x08 \x08");
            }
            b if (0x20..0x7f).contains(&b) && line.len() < 32 => {
                line.push(b as char);
                let _ = tty.write_all(&byte);
            }
            _ => {}
        }
        let _ = tty.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(allow_always: bool, smart_denied: bool) -> ApprovalRequest {
        ApprovalRequest {
            command: "rm -rf build".into(),
            description: "recursive delete".into(),
            rule_keys: vec!["fs.recursive_delete".into()],
            session_key: "s".into(),
            tool_call_id: "t".into(),
            allow_always,
            smart_denied,
        }
    }

    #[test]
    fn choices() {
        let r = request(true, false);
        assert_eq!(parse_choice("o", &r), Choice::Once);
        assert_eq!(parse_choice(" Session ", &r), Choice::Session);
        assert_eq!(parse_choice("a", &r), Choice::Always);
        assert_eq!(parse_choice("", &r), Choice::Deny { reason: None });
        assert_eq!(parse_choice("yes", &r), Choice::Deny { reason: None });
        let no_always = request(false, false);
        assert_eq!(parse_choice("a", &no_always), Choice::Deny { reason: None });
        let smart = request(true, true);
        assert_eq!(parse_choice("s", &smart), Choice::Deny { reason: None });
        assert_eq!(parse_choice("o", &smart), Choice::Once);
        assert!(render(&r, Duration::from_secs(60)).contains("Choice [o/s/a/D] (60 s)"));
    }
}
