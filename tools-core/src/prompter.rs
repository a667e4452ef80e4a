//! Asking the user a question: the surface the `clarify` tool talks to.
//!
//! [`Prompter`] is injectable ([`crate::CoreServices::prompter`]) so embedders can route
//! questions to their own UI and tests can answer them ([`ScriptedPrompter`]).
//! [`TerminalPrompter`] is the default: it asks on the terminal (question and numbered
//! choices on stderr, since stdout carries data; the answer from stdin) and refuses to
//! ask when its input is not a terminal — a piped stdin is data, not a person.
//! Waiting honours a timeout and the call's cancellation token.

use std::collections::VecDeque;
use std::io::{self, IsTerminal, Write};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// One question for the user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptRequest {
    /// The question.
    pub question: String,
    /// Predefined answers (may be empty: open-ended question). A terminal UI also
    /// offers "Other (type your answer)".
    pub choices: Vec<String>,
    /// Give up after this long (`None` = wait forever).
    pub timeout: Option<Duration>,
}

/// How a question ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptAnswer {
    /// The user's answer (a choice's text or free text).
    Answered(String),
    /// Nobody answered within the request's timeout.
    TimedOut,
}

/// Why a question could not be asked or answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// There is nobody to ask (no terminal, headless embedder).
    #[error("{0}")]
    Unavailable(String),
    /// The input closed before an answer arrived (Ctrl-D, EOF).
    #[error("the input was closed before the user answered")]
    Closed,
    /// The call was cancelled while waiting.
    #[error("cancelled while waiting for the user's answer")]
    Cancelled,
    /// Reading or writing the terminal failed.
    #[error("terminal I/O failed: {0}")]
    Io(#[from] io::Error),
}

/// Something that can put a question to the user and wait for the answer. May block.
pub trait Prompter: Send + Sync {
    /// Ask `request`; return the answer, a timeout, or why nobody could answer.
    /// Implementations should return [`PromptError::Cancelled`] soon after `cancel`
    /// fires.
    fn ask(
        &self,
        request: &PromptRequest,
        cancel: &CancellationToken,
    ) -> Result<PromptAnswer, PromptError>;
}

/// Answers questions from a script, in order, and records what was asked (tests,
/// embedders replaying a session). An exhausted script is [`PromptError::Unavailable`].
#[derive(Debug, Default)]
pub struct ScriptedPrompter {
    answers: Mutex<VecDeque<Result<PromptAnswer, String>>>,
    asked: Mutex<Vec<PromptRequest>>,
}

impl ScriptedPrompter {
    /// A prompter that answers with `answers`, one per question.
    pub fn new<I, S>(answers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ScriptedPrompter {
            answers: Mutex::new(
                answers
                    .into_iter()
                    .map(|a| Ok(PromptAnswer::Answered(a.into())))
                    .collect(),
            ),
            asked: Mutex::new(Vec::new()),
        }
    }

    /// Queue one more outcome (e.g. `Ok(PromptAnswer::TimedOut)`, or `Err(reason)` for
    /// [`PromptError::Unavailable`]).
    pub fn push(&self, outcome: Result<PromptAnswer, String>) {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(outcome);
    }

    /// Every request asked so far.
    pub fn asked(&self) -> Vec<PromptRequest> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Prompter for ScriptedPrompter {
    fn ask(
        &self,
        request: &PromptRequest,
        _cancel: &CancellationToken,
    ) -> Result<PromptAnswer, PromptError> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.clone());
        match self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
        {
            Some(Ok(answer)) => Ok(answer),
            Some(Err(reason)) => Err(PromptError::Unavailable(reason)),
            None => Err(PromptError::Unavailable(
                "no scripted answer left for this question".into(),
            )),
        }
    }
}

/// Where a [`TerminalPrompter`] reads answers from.
#[derive(Debug)]
enum TerminalInput {
    Stdin,
    File(std::fs::File),
}

/// Asks on a terminal. See the module docs.
pub struct TerminalPrompter {
    input: TerminalInput,
    output: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for TerminalPrompter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalPrompter")
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

impl TerminalPrompter {
    /// Read answers from stdin, write questions to stderr.
    pub fn stdio() -> Self {
        TerminalPrompter {
            input: TerminalInput::Stdin,
            output: Mutex::new(Box::new(io::stderr())),
        }
    }

    /// Read answers from `input` (e.g. a pseudo-terminal) and write questions to
    /// `output`.
    pub fn with_io(input: std::fs::File, output: Box<dyn Write + Send>) -> Self {
        TerminalPrompter {
            input: TerminalInput::File(input),
            output: Mutex::new(output),
        }
    }

    fn input_is_terminal(&self) -> bool {
        match &self.input {
            TerminalInput::Stdin => io::stdin().is_terminal(),
            TerminalInput::File(file) => file.is_terminal(),
        }
    }

    fn write_prompt(&self, text: &str) -> io::Result<()> {
        let mut out = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(text.as_bytes())?;
        out.flush()
    }
}

/// "Other (type your answer)" — always offered after the choices.
const OTHER_LABEL: &str = "Other (type your answer)";

impl Prompter for TerminalPrompter {
    fn ask(
        &self,
        request: &PromptRequest,
        cancel: &CancellationToken,
    ) -> Result<PromptAnswer, PromptError> {
        if !self.input_is_terminal() {
            return Err(PromptError::Unavailable(
                "no interactive terminal to ask the user on (stdin is not a TTY)".into(),
            ));
        }
        let deadline = request.timeout.map(|t| Instant::now() + t);
        let mut text = format!("\n❓ {}\n", request.question.trim());
        for (i, choice) in request.choices.iter().enumerate() {
            text.push_str(&format!("  {}. {choice}\n", i + 1));
        }
        let other = request.choices.len() + 1;
        if request.choices.is_empty() {
            text.push_str("Your answer: ");
        } else {
            text.push_str(&format!(
                "  {other}. {OTHER_LABEL}\nChoose 1-{other} or type an answer: "
            ));
        }
        self.write_prompt(&text)?;
        let mut pending = Vec::new();
        loop {
            let line = match read_line(&self.input, &mut pending, deadline, cancel)? {
                Some(line) => line,
                None => return Ok(PromptAnswer::TimedOut),
            };
            let answer = line.trim();
            if answer.is_empty() {
                self.write_prompt("Please type an answer: ")?;
                continue;
            }
            match answer.parse::<usize>() {
                Ok(n) if (1..other).contains(&n) && !request.choices.is_empty() => {
                    return Ok(PromptAnswer::Answered(request.choices[n - 1].clone()));
                }
                Ok(n) if n == other && !request.choices.is_empty() => {
                    self.write_prompt("Your answer: ")?;
                }
                _ => return Ok(PromptAnswer::Answered(answer.to_string())),
            }
        }
    }
}

/// How often a waiting prompt looks at its cancellation token.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Take the first complete line out of `pending`.
#[cfg_attr(not(unix), allow(dead_code))]
fn take_line(pending: &mut Vec<u8>) -> Option<String> {
    let end = pending.iter().position(|&b| b == b'\n')?;
    let line: Vec<u8> = pending.drain(..=end).collect();
    let line = String::from_utf8_lossy(&line[..end]);
    Some(line.trim_end_matches('\r').to_string())
}

/// Read one line (bytes typed ahead stay in `pending` for the next call); `None` when
/// the deadline passed first.
#[cfg(unix)]
fn read_line(
    input: &TerminalInput,
    pending: &mut Vec<u8>,
    deadline: Option<Instant>,
    cancel: &CancellationToken,
) -> Result<Option<String>, PromptError> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use std::os::fd::{AsFd, BorrowedFd};

    let stdin = io::stdin();
    let fd: BorrowedFd<'_> = match input {
        TerminalInput::Stdin => stdin.as_fd(),
        TerminalInput::File(file) => file.as_fd(),
    };
    loop {
        if let Some(line) = take_line(pending) {
            return Ok(Some(line));
        }
        if cancel.is_cancelled() {
            return Err(PromptError::Cancelled);
        }
        let mut wait = POLL_INTERVAL;
        if let Some(deadline) = deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            wait = wait.min(left);
        }
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(wait.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => return Err(PromptError::Io(err.into())),
        }
        let mut buf = [0u8; 1024];
        let n = match rustix::io::read(fd, &mut buf) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => continue,
            Err(err) => return Err(PromptError::Io(err.into())),
        };
        if n == 0 {
            return Err(PromptError::Closed);
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

/// Read one line (no timeout or cancellation off Unix: the read blocks).
#[cfg(not(unix))]
fn read_line(
    input: &TerminalInput,
    _pending: &mut Vec<u8>,
    _deadline: Option<Instant>,
    cancel: &CancellationToken,
) -> Result<Option<String>, PromptError> {
    use std::io::BufRead;
    if cancel.is_cancelled() {
        return Err(PromptError::Cancelled);
    }
    let mut line = String::new();
    let n = match input {
        TerminalInput::Stdin => io::stdin().lock().read_line(&mut line)?,
        TerminalInput::File(file) => io::BufReader::new(file).read_line(&mut line)?,
    };
    if n == 0 {
        return Err(PromptError::Closed);
    }
    Ok(Some(line.trim_end_matches(['\r', '\n']).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(choices: &[&str]) -> PromptRequest {
        PromptRequest {
            question: "Which target?".into(),
            choices: choices.iter().map(|c| c.to_string()).collect(),
            timeout: Some(Duration::from_secs(30)),
        }
    }

    #[test]
    fn refuses_when_input_is_not_a_terminal() {
        let file = tempfile::tempfile().unwrap();
        let prompter = TerminalPrompter::with_io(file, Box::new(io::sink()));
        let err = prompter
            .ask(&request(&[]), &CancellationToken::new())
            .unwrap_err();
        assert!(matches!(err, PromptError::Unavailable(_)), "{err}");
        assert!(err.to_string().contains("not a TTY"));
    }

    #[test]
    fn scripted_prompter_answers_in_order_and_records() {
        let prompter = ScriptedPrompter::new(["yes"]);
        prompter.push(Ok(PromptAnswer::TimedOut));
        let cancel = CancellationToken::new();
        assert_eq!(
            prompter.ask(&request(&["a"]), &cancel).unwrap(),
            PromptAnswer::Answered("yes".into())
        );
        assert_eq!(
            prompter.ask(&request(&[]), &cancel).unwrap(),
            PromptAnswer::TimedOut
        );
        assert!(prompter.ask(&request(&[]), &cancel).is_err());
        assert_eq!(prompter.asked().len(), 3);
    }

    /// A pseudo-terminal pair: (master, slave). The prompter reads the slave like a
    /// real terminal; the test types on the master.
    #[cfg(unix)]
    fn pty_pair() -> (std::fs::File, std::fs::File) {
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        (std::fs::File::from(master), slave)
    }

    /// Everything the prompter showed, read until every needle is seen or the
    /// terminal stays quiet for two seconds. The echo of the typed answer and the
    /// prompt can arrive in separate reads, so one `read` is not enough.
    #[cfg(unix)]
    fn read_until(master: &mut std::fs::File, needles: &[&str]) -> String {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut shown = String::new();
        while !needles.iter().all(|n| shown.contains(n)) {
            let mut fds = [PollFd::new(&*master, PollFlags::IN)];
            let two_seconds = Timespec {
                tv_sec: 2,
                tv_nsec: 0,
            };
            if poll(&mut fds, Some(&two_seconds)).unwrap() == 0 {
                break;
            }
            let mut chunk = [0u8; 4096];
            let n = std::io::Read::read(master, &mut chunk).unwrap();
            if n == 0 {
                break;
            }
            shown.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
        shown
    }

    #[cfg(unix)]
    #[test]
    fn terminal_choice_by_number_through_a_pty() {
        let (mut master, slave) = pty_pair();
        let out = slave.try_clone().unwrap();
        let prompter = TerminalPrompter::with_io(slave, Box::new(out));
        master.write_all(b"2\n").unwrap();
        let answer = prompter
            .ask(&request(&["staging", "prod"]), &CancellationToken::new())
            .unwrap();
        assert_eq!(answer, PromptAnswer::Answered("prod".into()));
        let shown = read_until(
            &mut master,
            &["Which target?", "3. Other (type your answer)"],
        );
        assert!(shown.contains("Which target?"), "{shown}");
        assert!(shown.contains("3. Other (type your answer)"), "{shown}");
    }

    #[cfg(unix)]
    #[test]
    fn terminal_free_text_and_other_through_a_pty() {
        let (mut master, slave) = pty_pair();
        let out = slave.try_clone().unwrap();
        let prompter = TerminalPrompter::with_io(slave, Box::new(out));
        master.write_all(b"\n3\nblue-green deploy\n").unwrap();
        let answer = prompter
            .ask(&request(&["staging", "prod"]), &CancellationToken::new())
            .unwrap();
        assert_eq!(answer, PromptAnswer::Answered("blue-green deploy".into()));
    }

    #[cfg(unix)]
    #[test]
    fn terminal_times_out_without_an_answer() {
        let (_master, slave) = pty_pair();
        let out = slave.try_clone().unwrap();
        let prompter = TerminalPrompter::with_io(slave, Box::new(out));
        let mut req = request(&[]);
        req.timeout = Some(Duration::from_millis(50));
        let answer = prompter.ask(&req, &CancellationToken::new()).unwrap();
        assert_eq!(answer, PromptAnswer::TimedOut);
    }

    #[cfg(unix)]
    #[test]
    fn terminal_wait_ends_on_cancel() {
        let (_master, slave) = pty_pair();
        let out = slave.try_clone().unwrap();
        let prompter = TerminalPrompter::with_io(slave, Box::new(out));
        let cancel = CancellationToken::new();
        cancel.cancel();
        let err = prompter.ask(&request(&[]), &cancel).unwrap_err();
        assert!(matches!(err, PromptError::Cancelled));
    }
}
