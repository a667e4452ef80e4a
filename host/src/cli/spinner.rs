//! The spinner of `toolhost chat`: one line on stderr, redrawn ten times a second, saying
//! what the turn is waiting for — the model (`thinking`) or the running tools (their
//! names) — and for how long.
//!
//! Only on a terminal: when stdout or stderr is not a TTY (a pipe, a file, a test) the
//! spinner never draws, so captured output holds no carriage returns or escape codes.
//! Everything else `chat` prints goes through [`Spinner::print`], which erases the
//! spinner line first so text and spinner never share a line. While a question is on
//! the screen (an approval prompt, `clarify`) the spinner is paused.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::agent::AgentEvent;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const TICK: Duration = Duration::from_millis(100);

/// What the spinner shows.
#[derive(Debug, Default)]
struct State {
    /// Waiting for the model.
    thinking: bool,
    /// Names of the running top-level tool calls.
    running: Vec<String>,
    /// Open pauses (prompts on the screen).
    paused: usize,
    /// When the current wait began.
    since: Option<Instant>,
    /// The spinner line is on the screen.
    drawn: bool,
    frame: usize,
}

impl State {
    /// The line to draw, when there is one.
    fn label(&self) -> Option<String> {
        if self.paused > 0 || self.running.iter().any(|name| name == "clarify") {
            return None;
        }
        let what = if !self.running.is_empty() {
            let mut names = self.running.clone();
            names.dedup();
            format!("running {}", names.join(", "))
        } else if self.thinking {
            "thinking".to_string()
        } else {
            return None;
        };
        let elapsed = self.since.map_or(0.0, |s| s.elapsed().as_secs_f64());
        Some(format!("{what} {elapsed:.1}s"))
    }
}

/// The spinner (see the module doc). Cheap to share; stops when dropped.
#[derive(Debug)]
pub struct Spinner {
    state: Arc<Mutex<State>>,
    enabled: bool,
    stop: Arc<AtomicBool>,
}

impl Spinner {
    /// A spinner that draws only when stdout and stderr are terminals.
    pub fn start() -> Arc<Spinner> {
        let enabled = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self::with(enabled)
    }

    /// A spinner that draws when `enabled`.
    pub fn with(enabled: bool) -> Arc<Spinner> {
        let spinner = Arc::new(Spinner {
            state: Arc::new(Mutex::new(State::default())),
            enabled,
            stop: Arc::new(AtomicBool::new(false)),
        });
        if enabled {
            let state = Arc::clone(&spinner.state);
            let stop = Arc::clone(&spinner.stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                    draw(&mut state);
                }
            });
        }
        spinner
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follow the turn: model calls start `thinking`, streamed text ends it, tool calls
    /// are shown while they run.
    pub fn event(&self, event: &AgentEvent) {
        let mut state = self.state();
        match event {
            AgentEvent::ModelCall(_) => {
                state.thinking = true;
                state.since = Some(Instant::now());
            }
            AgentEvent::Text(_) => state.thinking = false,
            AgentEvent::ToolStart { name, .. } => {
                if state.running.is_empty() {
                    state.since = Some(Instant::now());
                }
                state.thinking = false;
                state.running.push(name.clone());
            }
            AgentEvent::ToolDone { name, .. } => {
                if let Some(i) = state.running.iter().position(|n| n == name) {
                    state.running.remove(i);
                }
            }
            _ => {}
        }
    }

    /// The turn is over: nothing more to show.
    pub fn idle(&self) {
        let mut state = self.state();
        state.thinking = false;
        state.running.clear();
        state.paused = 0;
        erase(&mut state);
    }

    /// Stop drawing while a question is on the screen (until [`Spinner::resume`]).
    pub fn pause(&self) {
        let mut state = self.state();
        state.paused += 1;
        erase(&mut state);
    }

    /// Undo one [`Spinner::pause`].
    pub fn resume(&self) {
        let mut state = self.state();
        state.paused = state.paused.saturating_sub(1);
    }

    /// Print through `f` with the spinner line erased first.
    pub fn print(&self, f: impl FnOnce()) {
        let mut state = self.state();
        erase(&mut state);
        f();
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if self.enabled {
            erase(&mut self.state());
        }
    }
}

fn draw(state: &mut State) {
    let Some(label) = state.label() else {
        erase(state);
        return;
    };
    state.frame = (state.frame + 1) % FRAMES.len();
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{} {label}", FRAMES[state.frame]);
    let _ = err.flush();
    state.drawn = true;
}

fn erase(state: &mut State) {
    if state.drawn {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
        state.drawn = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> AgentEvent {
        AgentEvent::ToolStart {
            name: name.into(),
            preview: String::new(),
        }
    }

    fn done(name: &str) -> AgentEvent {
        AgentEvent::ToolDone {
            name: name.into(),
            failed: false,
        }
    }

    fn label(spinner: &Spinner) -> Option<String> {
        spinner.state().label().map(|l| {
            l.rsplit_once(' ')
                .map(|(what, _)| what.to_string())
                .unwrap_or(l)
        })
    }

    #[test]
    fn the_label_follows_the_turn() {
        let spinner = Spinner::with(false);
        assert_eq!(label(&spinner), None);
        spinner.event(&AgentEvent::ModelCall(1));
        assert_eq!(label(&spinner).as_deref(), Some("thinking"));
        spinner.event(&tool("terminal"));
        spinner.event(&tool("read_file"));
        assert_eq!(
            label(&spinner).as_deref(),
            Some("running terminal, read_file")
        );
        spinner.event(&done("terminal"));
        assert_eq!(label(&spinner).as_deref(), Some("running read_file"));
        spinner.event(&done("read_file"));
        assert_eq!(label(&spinner), None);
        spinner.event(&AgentEvent::ModelCall(2));
        spinner.event(&AgentEvent::Text("hi".into()));
        assert_eq!(label(&spinner), None);
    }

    #[test]
    fn questions_on_the_screen_pause_it() {
        let spinner = Spinner::with(false);
        spinner.event(&tool("terminal"));
        spinner.pause();
        assert_eq!(label(&spinner), None);
        spinner.resume();
        assert!(label(&spinner).is_some());
        spinner.event(&tool("clarify"));
        assert_eq!(label(&spinner), None);
    }
}
