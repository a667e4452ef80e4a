//! Output to a closed pipe ends a command quietly, with exit code 0.
//!
//! `toolhost tools | head -3` closes toolhost's stdout after three lines. Rust ignores
//! SIGPIPE, so the next write fails with `EPIPE`: `println!` panics ("failed printing
//! to stdout") and `writeln!` returns the error. Either way the reader has all it
//! wanted, so — as `head` users expect from any Unix tool — the command stops without
//! a panic message or an error line and exits 0. Every command runs inside [`run`];
//! whether stdout is really the closed stream is asked of the kernel (`poll` reports
//! an error or hang-up on the write end of a widowed pipe or socket), so a broken pipe
//! to a child process is still reported as the error it is.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::process::ExitCode;

use super::CliError;

/// The start of the panic message of `print!`/`println!` when stdout fails.
const PRINT_PANIC: &str = "failed printing to stdout";

/// Run `command`, turning a write to a closed stdout into a quiet success.
pub fn run(command: impl FnOnce() -> Result<ExitCode, CliError>) -> Result<ExitCode, CliError> {
    install_hook();
    match catch_unwind(AssertUnwindSafe(command)) {
        Ok(Err(err)) if is_closed_stdout_error(&err) => Ok(ExitCode::SUCCESS),
        Ok(outcome) => outcome,
        Err(payload) if is_closed_stdout_panic(payload.as_ref()) => Ok(ExitCode::SUCCESS),
        Err(payload) => resume_unwind(payload),
    }
}

/// Keep the default panic message for every panic but a print to a closed stdout.
fn install_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_closed_stdout_panic(info.payload()) {
            previous(info);
        }
    }));
}

fn is_closed_stdout_panic(payload: &(dyn Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    message.is_some_and(|m| m.starts_with(PRINT_PANIC)) && stdout_closed()
}

fn is_closed_stdout_error(err: &CliError) -> bool {
    matches!(err, CliError::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
        && stdout_closed()
}

/// True when nobody reads stdout any more (the kernel reports an error or hang-up on it).
pub fn stdout_closed() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    let fd = stdout.as_fd();
    let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&zero)).is_ok()
        && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}
