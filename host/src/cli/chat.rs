//! `toolhost chat [--toolsets …] [--session ID]`: an interactive conversation on the
//! terminal. Reply text is streamed; each tool call gets one line (emoji, name, a short
//! argument preview) on stderr, children of `delegate_task` are shown indented; on a
//! terminal a spinner says what the turn is waiting for (`spinner.rs`). Ctrl-C
//! interrupts the running turn (running calls are cancelled the way `dispatch` does);
//! Ctrl-C at the prompt, `/exit` or end of input leaves. Approval and `clarify` prompts
//! appear on the same terminal. The prompt line is edited with `rustyline` (history in
//! `<home>/state/chat_history`); it is only active between turns, so a turn's output
//! and Ctrl-C are never mixed up with line editing.
//!
//! Top-level `delegate_task` calls run in the background (agent/background.rs): when a
//! batch finishes, its result joins the conversation with the user's next line, or in a
//! turn of its own when it finished during a turn.
//!
//! Commands: `/new`, `/sessions`, `/resume ID`, `/tools`, `/model`, `/help`, `/exit`.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::run::start_for_agent;
use super::selection::SelectionArgs;
use super::spinner::Spinner;
use super::{Cli, CliError};
use crate::agent::{Agent, AgentEvent, Background, Conversation, TurnEnd};

/// Arguments of `toolhost chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Which toolsets the agent may use.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Continue this stored session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

const HELP: &str = "/new  start a new session\n/sessions  recent sessions\n/resume ID  continue a session\n/tools  the tools offered\n/model  the model in use\n/exit  leave";

/// Run `toolhost chat`.
pub fn run(cli: &Cli, args: &ChatArgs) -> Result<ExitCode, CliError> {
    let host = start_for_agent(cli, true)?;
    let selection = args.selection.selection(&host)?;
    let emojis: HashMap<String, String> = host
        .registry
        .entries()
        .iter()
        .map(|e| (e.name.clone(), e.emoji().to_string()))
        .collect();
    let spinner = Spinner::start();
    let (pause, resume) = (Arc::clone(&spinner), Arc::clone(&spinner));
    host.hooks
        .on_pre_approval_request("chat-spinner", move |_| pause.pause());
    host.hooks
        .on_post_approval_response("chat-spinner", move |_| resume.resume());
    let events = Arc::clone(&spinner);
    let background = Background::new(host.config.config.delegation.max_concurrent_children);
    let agent = Agent::from_host(&host, &selection)
        .map_err(|e| CliError::Input(e.to_string()))?
        .with_source("chat")
        .with_events(Arc::new(move |event| {
            events.event(&event);
            events.print(|| show(&emojis, &event, 0));
        }))
        .with_background(Arc::clone(&background));
    let runtime =
        tools_core::bridge::shared_runtime().map_err(|e| CliError::Input(e.to_string()))?;
    let history = host.home.state_dir().join("chat_history");
    let result = runtime.block_on(repl(&agent, args.session.as_deref(), history, &spinner));
    background.cancel_all();
    host.shutdown();
    result
}

/// Reads prompt lines on a thread of its own, one line per request.
struct LineReader {
    ask: std::sync::mpsc::Sender<()>,
    lines: tokio::sync::mpsc::Receiver<Option<String>>,
}

impl LineReader {
    fn start(history: PathBuf) -> Result<Self, CliError> {
        let mut editor = rustyline::DefaultEditor::new()
            .map_err(|e| CliError::Input(format!("cannot open the terminal: {e}")))?;
        let _ = editor.load_history(&history);
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let (send, lines) = tokio::sync::mpsc::channel(1);
        std::thread::spawn(move || {
            while asked.recv().is_ok() {
                let line = match editor.readline("› ") {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        Some(line)
                    }
                    // Ctrl-C, Ctrl-D or a broken terminal: leave.
                    Err(_) => None,
                };
                let done = line.is_none();
                if send.blocking_send(line).is_err() || done {
                    break;
                }
            }
            if let Some(dir) = history.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(&history);
        });
        Ok(LineReader { ask, lines })
    }

    /// The next line; `None` at the end.
    async fn next(&mut self) -> Option<String> {
        self.ask.send(()).ok()?;
        self.lines.recv().await.flatten()
    }
}

async fn repl(
    agent: &Agent,
    session: Option<&str>,
    history: PathBuf,
    spinner: &Spinner,
) -> Result<ExitCode, CliError> {
    let input_err = |e: crate::agent::SessionError| CliError::Input(e.to_string());
    let mut conversation = match session {
        Some(id) => agent.resume(id).map_err(input_err)?,
        None => agent.new_conversation(None).map_err(input_err)?,
    };
    eprintln!(
        "toolhost chat — model {}, {} tools, session {} (/help for commands)",
        agent.client().endpoint().model,
        agent.tools().names.len(),
        conversation.session_id
    );
    let mut reader = LineReader::start(history)?;
    loop {
        let Some(line) = reader.next().await else {
            break;
        };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('/') {
            if !command(agent, &mut conversation, line)? {
                break;
            }
            continue;
        }
        // Background delegations that finished while the user was typing come first.
        let mut text = finished_delegations(agent);
        text.push_str(line);
        turn(agent, &mut conversation, &text, spinner).await;
        // Those that finished during the turn get a turn of their own.
        loop {
            let finished = finished_delegations(agent);
            if finished.is_empty() {
                break;
            }
            turn(agent, &mut conversation, finished.trim_end(), spinner).await;
        }
    }
    eprintln!("session {}", conversation.session_id);
    Ok(ExitCode::SUCCESS)
}

/// Run one turn for `text`, Ctrl-C interrupting it.
async fn turn(agent: &Agent, conversation: &mut Conversation, text: &str, spinner: &Spinner) {
    let cancel = CancellationToken::new();
    let watcher = tokio::spawn(super::interrupt::cancel_on_ctrl_c(cancel.clone()));
    let outcome = agent.run_turn(conversation, text, &cancel).await;
    watcher.abort();
    spinner.idle();
    println!("\n");
    match outcome.end {
        TurnEnd::Completed => {}
        TurnEnd::Interrupted => eprintln!("(interrupted)"),
        _ => eprintln!("toolhost: {}", outcome.text),
    }
}

/// The messages of the background delegations that finished since the last look, each
/// followed by a blank line ("" when none).
fn finished_delegations(agent: &Agent) -> String {
    agent
        .background()
        .map(|background| background.take_finished())
        .unwrap_or_default()
        .iter()
        .map(|finished| format!("{}\n\n", finished.message()))
        .collect()
}

/// Run a slash command; `false` means leave.
fn command(agent: &Agent, conversation: &mut Conversation, line: &str) -> Result<bool, CliError> {
    let (name, rest) = line.split_once(' ').unwrap_or((line, ""));
    match name {
        "/exit" | "/quit" => return Ok(false),
        "/help" => eprintln!("{HELP}"),
        "/new" => match agent.new_conversation(None) {
            Ok(c) => {
                *conversation = c;
                eprintln!("new session {}", conversation.session_id);
            }
            Err(err) => eprintln!("toolhost: {err}"),
        },
        "/sessions" => match agent.sessions().list(20, false) {
            Ok(list) => {
                for s in list {
                    eprintln!(
                        "{}  {:>4} msgs  {}",
                        s.id,
                        s.message_count,
                        s.title.unwrap_or_default()
                    );
                }
            }
            Err(err) => eprintln!("toolhost: {err}"),
        },
        "/resume" => match agent.resume(rest.trim()) {
            Ok(c) => {
                *conversation = c;
                eprintln!(
                    "resumed {} ({} messages)",
                    conversation.session_id,
                    conversation.messages.len()
                );
            }
            Err(err) => eprintln!("toolhost: {err}"),
        },
        "/tools" => {
            let names: Vec<&str> = agent.tools().names.iter().map(String::as_str).collect();
            eprintln!("{}", names.join(", "));
        }
        "/model" => {
            let e = agent.client().endpoint();
            let used = agent.client().total_usage();
            eprintln!(
                "{} at {} ({} tokens used this run)",
                e.model, e.url, used.total_tokens
            );
        }
        other => eprintln!("unknown command {other}; /help lists them"),
    }
    Ok(true)
}

/// Print one event.
fn show(emojis: &HashMap<String, String>, event: &AgentEvent, depth: usize) {
    let indent = "  ".repeat(depth + 1);
    match event {
        AgentEvent::Text(text) if depth == 0 => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        AgentEvent::ToolStart { name, preview } => {
            let emoji = emojis.get(name).map_or("🔧", String::as_str);
            eprintln!("{indent}{emoji} {name} {preview}");
        }
        AgentEvent::ToolDone { name, failed: true } => eprintln!("{indent}✗ {name} failed"),
        AgentEvent::Child(index, inner) => {
            if let AgentEvent::ModelCall(1) = inner.as_ref() {
                eprintln!("{indent}↳ subagent {index} started");
            }
            show(emojis, inner, depth + 1);
        }
        AgentEvent::Notice(text) => eprintln!("{indent}! {text}"),
        _ => {}
    }
}
