//! Waiting for a started command: drain its output into an [`OutputCapture`] on a helper
//! thread while watching the deadline and the cancellation token; on either, kill the
//! whole process group.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::capture::OutputCapture;
use super::{EnvError, Environment, RunningCommand, SpawnRequest, StdinMode};

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// The deadline passed; the group was killed.
    TimedOut,
    /// The call was cancelled; the group was killed.
    Interrupted,
}

/// How long we keep reading after the shell exited while a backgrounded grandchild
/// still holds the output pipe open.
const EXIT_GRACE: Duration = Duration::from_millis(300);
const TICK: Duration = Duration::from_millis(20);

/// Read `output` on a helper thread, sending chunks to the returned channel.
pub fn drain(mut output: Box<dyn Read + Send>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match output.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
    });
    rx
}

/// Run `child` to its end, capturing output; kill it on timeout or cancellation.
pub fn wait_for(
    child: &mut dyn RunningCommand,
    capture: &mut OutputCapture,
    timeout: Duration,
    cancel: Option<&CancellationToken>,
) -> Ending {
    let rx = child.take_output().map(drain);
    let deadline = Instant::now() + timeout;
    let mut exited: Option<(Instant, i32)> = None;
    let mut eof = rx.is_none();
    // After EOF the exit status follows within microseconds; poll fast, then back off.
    let mut status_poll = Duration::from_micros(200);
    loop {
        if !eof && let Some(rx) = &rx {
            match rx.recv_timeout(TICK) {
                Ok(chunk) => {
                    capture.push(&chunk);
                    // Keep draining what is ready before checking the clocks.
                    while let Ok(chunk) = rx.try_recv() {
                        capture.push(&chunk);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => eof = true,
            }
        } else {
            std::thread::sleep(status_poll);
            status_poll = (status_poll * 2).min(TICK);
        }
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            child.kill();
            finish_drain(rx.as_ref(), capture);
            return Ending::Interrupted;
        }
        if Instant::now() >= deadline {
            child.kill();
            finish_drain(rx.as_ref(), capture);
            return Ending::TimedOut;
        }
        if eof {
            // Output closed: the command is (nearly) done; wait for its status, still
            // honouring deadline and cancellation.
            match child.try_wait() {
                Ok(Some(code)) => return Ending::Exited(code),
                Ok(None) => continue,
                Err(_) => return Ending::Exited(-1),
            }
        }
        match exited {
            None => {
                if let Ok(Some(code)) = child.try_wait() {
                    exited = Some((Instant::now(), code));
                }
            }
            Some((at, code)) if at.elapsed() >= EXIT_GRACE => {
                // A grandchild keeps the pipe open; the command itself is done.
                if let Some(rx) = &rx {
                    while let Ok(chunk) = rx.try_recv() {
                        capture.push(&chunk);
                    }
                }
                return Ending::Exited(code);
            }
            Some(_) => {}
        }
    }
}

fn finish_drain(rx: Option<&mpsc::Receiver<Vec<u8>>>, capture: &mut OutputCapture) {
    let Some(rx) = rx else { return };
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(chunk) => capture.push(&chunk),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}

/// Run a helper script to completion and collect all its output (file reads, probes).
pub fn run_collect<E: Environment + ?Sized>(
    env: &E,
    script: &str,
    stdin: StdinMode,
    timeout: Duration,
) -> Result<(i32, Vec<u8>), EnvError> {
    let mut child = env.spawn(SpawnRequest {
        script: script.to_string(),
        stdin,
        ..SpawnRequest::default()
    })?;
    let mut capture = OutputCapture::unbounded();
    match wait_for(child.as_mut(), &mut capture, timeout, None) {
        Ending::Exited(code) => Ok((code, capture.into_bytes())),
        Ending::TimedOut | Ending::Interrupted => Err(EnvError::Timeout {
            backend: env.kind(),
            operation: script.lines().next().unwrap_or_default().to_string(),
            seconds: timeout.as_secs(),
        }),
    }
}
