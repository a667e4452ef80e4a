//! One turn of the loop: the user's message goes in; the model is called, its tool
//! calls pass the turn rules (`preflight.rs`) and then `dispatch_batch` — hooks,
//! approval, validation and the result limit included — and the results go back, until
//! the model answers without tool calls or the turn's model-call limit is reached.
//!
//! Tool Search bridge calls are answered or unwrapped first (`tool_search.rs`).
//! Every message is written to the session as soon as it exists (the assistant message
//! before its calls run, the batch's results in one transaction after). Untrusted
//! output is wrapped (`untrusted.rs`) and the per-turn budget enforced (`budget.rs`)
//! before results are stored. An interrupt stops the model call at once; during a batch
//! unstarted calls are reported cancelled and running ones get the configured grace,
//! then the turn ends with the results recorded.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;
use tools_core::ToolContext;

use super::assemble::Agent;
use super::budget::enforce_turn_budget;
use super::client::{ChatRequest, ModelError};
use super::compress::compress_step;
use super::events::{AgentEvent, preview};
use super::message::{Message, Usage};
use super::preflight::{Strikes, Verdict, preflight};
use super::sessions::{SessionError, new_session_id};
use super::stream::StreamEvent;
use super::untrusted;
use crate::batch::{ToolMessage, dispatch_batch};

/// Requests for an answer after an empty reply.
const EMPTY_RETRIES: u32 = 3;
/// Requests to continue an answer cut off at the output limit (Hermes: 3).
const CONTINUATIONS: usize = 3;
/// Hermes' words after an empty reply that followed tool results.
const EMPTY_NUDGE: &str = "You just executed tool calls but returned an empty response. \
    Please process the tool results above and continue with the task.";
/// Hermes' words after a reply cut off at the output limit.
const CONTINUE_PROMPT: &str = "[System: Your previous response was truncated by the output \
    length limit. Continue exactly where you left off. Do not restart or repeat prior text. \
    Finish the answer directly.]";

/// Hermes' request for a final answer when a turn reaches its model-call limit.
const SUMMARY_REQUEST: &str = "You've reached the maximum number of tool-calling iterations \
    allowed. Please provide a final response summarizing what you've found and accomplished \
    so far, without calling any more tools.";

/// What the loop does after a reply without tool calls.
enum Step {
    /// Call the model again.
    Again,
    /// End the turn.
    End(String, TurnEnd),
}

/// Replies without tool calls seen so far in a turn.
#[derive(Default)]
struct Answering {
    /// Empty replies in a row.
    empty: u32,
    /// Text of replies cut off at the output limit, in order.
    parts: Vec<String>,
}

/// The failure text when a request cannot be made to fit the window.
fn context_full(err: &ModelError) -> String {
    format!(
        "{err}, even with older messages removed. To fix: start the server with a larger \
         context (llama.cpp: --n_ctx) and set [model] context_length to match; offer fewer \
         tools (--toolsets, or [agent] tool_search = \"on\"); or lower [model] max_tokens"
    )
}

/// A conversation: its session id and messages (system prompt first).
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    /// Session id.
    pub session_id: String,
    /// Every message so far.
    pub messages: Vec<Message>,
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model answered.
    Completed,
    /// The model-call limit was reached first.
    TurnLimit,
    /// Ended early by a turn rule (invalid names, truncated output).
    Partial,
    /// Interrupted by the user.
    Interrupted,
    /// The model could not be reached or answered with an error.
    Failed,
}

/// The result of a turn.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOutcome {
    /// The final text (the answer, or why the turn stopped).
    pub text: String,
    /// How it ended.
    pub end: TurnEnd,
    /// Model calls made.
    pub model_calls: usize,
    /// Tokens used by this turn.
    pub usage: Usage,
}

impl Agent {
    /// Start a new conversation (stored as a new session).
    pub fn new_conversation(&self, parent: Option<&str>) -> Result<Conversation, SessionError> {
        let id = new_session_id();
        self.shared.sessions.create(
            &id,
            &self.source,
            Some(&self.shared.client.endpoint().model),
            parent,
        )?;
        let system = Message::system(self.system_prompt());
        self.shared
            .sessions
            .append(&id, std::slice::from_ref(&system))?;
        Ok(Conversation {
            session_id: id,
            messages: vec![system],
        })
    }

    /// Reopen a stored conversation.
    pub fn resume(&self, session_id: &str) -> Result<Conversation, SessionError> {
        Ok(Conversation {
            session_id: session_id.to_string(),
            messages: self.shared.sessions.load(session_id)?,
        })
    }

    /// Add `messages` to the conversation; they are written to the session store in the
    /// background (flushed when the turn ends).
    fn record(&self, conversation: &mut Conversation, messages: Vec<Message>) {
        let stored: Vec<Message> = messages.iter().map(super::images::for_storage).collect();
        self.shared
            .sessions
            .append_deferred(&conversation.session_id, stored);
        conversation.messages.extend(messages);
    }

    /// Run one turn for `user_text`; `cancel` interrupts it. The turn's messages are on
    /// disk when it returns.
    pub async fn run_turn(
        &self,
        conversation: &mut Conversation,
        user_text: &str,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let outcome = self.turn_steps(conversation, user_text, cancel).await;
        if let Err(err) = self.shared.sessions.flush() {
            tracing::error!(%err, "could not write the session");
            (self.events)(AgentEvent::Notice(format!("session not saved: {err}")));
        }
        outcome
    }

    async fn turn_steps(
        &self,
        conversation: &mut Conversation,
        user_text: &str,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        self.record(conversation, vec![Message::user(user_text)]);
        let mut strikes = Strikes::default();
        let mut state = Answering::default();
        let say_it = serde_json::Value::from("none");
        let mut usage = Usage::default();
        let mut calls = 0;
        let end = |text: String, end: TurnEnd, calls: usize, usage: Usage| TurnOutcome {
            text,
            end,
            model_calls: calls,
            usage,
        };
        loop {
            if cancel.is_cancelled() {
                return end("Interrupted.".into(), TurnEnd::Interrupted, calls, usage);
            }
            if calls >= self.max_turns {
                let text = self
                    .summary_at_limit(conversation, &mut usage, cancel)
                    .await;
                return end(text, TurnEnd::TurnLimit, calls + 1, usage);
            }
            calls += 1;
            (self.events)(AgentEvent::ModelCall(calls));
            // After an empty reply the model is asked to answer in words: llama-cpp-python's
            // `chatml-function-calling` can return no text at all under "auto".
            let choice = (state.empty > 0).then_some(&say_it);
            let completion = match self.ask(conversation, choice, cancel).await {
                Ok(c) => c,
                Err(ModelError::Interrupted) => {
                    return end("Interrupted.".into(), TurnEnd::Interrupted, calls, usage);
                }
                Err(err @ ModelError::ContextOverflow { .. }) => {
                    return end(context_full(&err), TurnEnd::Failed, calls, usage);
                }
                Err(err) => return end(err.to_string(), TurnEnd::Failed, calls, usage),
            };
            usage.add(completion.usage);
            let message = completion.message;
            if message.tool_calls.is_empty() {
                match self.answer(conversation, &mut state, message, completion.finish_reason) {
                    Step::Again => continue,
                    Step::End(text, how) => return end(text, how, calls, usage),
                }
            }
            let valid = &self.tools.names;
            let cap = self.shared.delegation.max_concurrent_children;
            match preflight(message, valid, cap, &mut strikes) {
                Verdict::Requery => {
                    (self.events)(AgentEvent::Notice(
                        "invalid JSON in tool arguments; asking the model again".into(),
                    ));
                }
                Verdict::End(text) => return end(text, TurnEnd::Partial, calls, usage),
                Verdict::Proceed {
                    message,
                    run,
                    answered,
                } => {
                    state.empty = 0;
                    self.run_batch(conversation, message, run, answered, cancel)
                        .await;
                    if cancel.is_cancelled() {
                        return end("Interrupted.".into(), TurnEnd::Interrupted, calls, usage);
                    }
                }
            }
        }
    }

    /// The turn reached its model-call limit: as Hermes does, ask once more, with tools
    /// refused (`tool_choice: "none"`), for a final answer that sums up the work. The
    /// turn still ends as `TurnLimit` (exit 3 of `toolhost run`); its text is that answer,
    /// or a notice when there is none.
    async fn summary_at_limit(
        &self,
        conversation: &mut Conversation,
        usage: &mut Usage,
        cancel: &CancellationToken,
    ) -> String {
        let stopped = format!(
            "Stopped: reached the limit of {} model calls in one turn without a final answer.",
            self.max_turns
        );
        (self.events)(AgentEvent::Notice(format!(
            "reached the limit of {} model calls; asking the model for a final answer",
            self.max_turns
        )));
        self.record(conversation, vec![Message::user(SUMMARY_REQUEST)]);
        let none = serde_json::Value::from("none");
        let Ok(completion) = self.ask(conversation, Some(&none), cancel).await else {
            return stopped;
        };
        usage.add(completion.usage);
        let mut message = completion.message;
        message.tool_calls.clear();
        let text = message.content_text();
        if text.trim().is_empty() {
            return stopped;
        }
        self.record(conversation, vec![message]);
        text
    }

    /// A reply without tool calls: the answer, or an empty or cut-off reply that is
    /// asked for again (docs/model-servers.md, "Replies that are not answers").
    fn answer(
        &self,
        conversation: &mut Conversation,
        state: &mut Answering,
        message: Message,
        finish_reason: Option<String>,
    ) -> Step {
        let text = message.content_text();
        let cut_off = finish_reason.as_deref() == Some("length");
        if text.trim().is_empty() {
            if cut_off {
                return Step::End(
                    "Response truncated due to output length limit".into(),
                    TurnEnd::Partial,
                );
            }
            if state.empty >= EMPTY_RETRIES {
                return Step::End(
                    format!(
                        "no reply: the model answered with no text and no tool calls {} times \
                         in a row (finish_reason {:?})",
                        state.empty + 1,
                        finish_reason.unwrap_or_default()
                    ),
                    TurnEnd::Failed,
                );
            }
            state.empty += 1;
            (self.events)(AgentEvent::Notice(format!(
                "empty reply from the model; asking again ({}/{EMPTY_RETRIES})",
                state.empty
            )));
            let after_tools = conversation
                .messages
                .last()
                .is_some_and(|m| m.role == super::message::Role::Tool);
            if after_tools && state.empty == 1 {
                // Hermes' nudge: the sequence stays valid (tool, assistant, user).
                self.record(
                    conversation,
                    vec![Message::assistant("(empty)"), Message::user(EMPTY_NUDGE)],
                );
            }
            return Step::Again;
        }
        if cut_off {
            state.parts.push(text);
            if state.parts.len() > CONTINUATIONS {
                let mut text = state.parts.concat();
                text.push_str(&format!(
                    "\n\n[toolhost: this answer is incomplete: the model still stopped at its \
                     output limit after {CONTINUATIONS} requests to continue; raise [model] max_tokens]"
                ));
                self.record(conversation, vec![message]);
                return Step::End(text, TurnEnd::Partial);
            }
            (self.events)(AgentEvent::Notice(format!(
                "the reply was cut off at the output limit; asking the model to continue ({}/{CONTINUATIONS})",
                state.parts.len()
            )));
            self.record(conversation, vec![message, Message::user(CONTINUE_PROMPT)]);
            return Step::Again;
        }
        let mut answer = std::mem::take(&mut state.parts).concat();
        answer.push_str(&text);
        self.record(conversation, vec![message]);
        Step::End(answer, TurnEnd::Completed)
    }

    /// Record the assistant message, run its calls, record every result in the
    /// message's call order (answered calls included).
    async fn run_batch(
        &self,
        conversation: &mut Conversation,
        message: Message,
        run: Vec<crate::batch::ToolCall>,
        mut answered: HashMap<String, String>,
        cancel: &CancellationToken,
    ) {
        let run = self.bridge(run, &mut answered);
        let order: Vec<(String, String)> = message
            .tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.function.name.clone()))
            .collect();
        self.record(conversation, vec![message]);
        let (results, images) = self.execute(conversation, &run, cancel).await;
        let mut by_id: HashMap<String, ToolMessage> = results
            .into_iter()
            .map(|r| (r.tool_call_id.clone(), r))
            .collect();
        let mut batch: Vec<ToolMessage> = order
            .into_iter()
            .map(|(id, name)| match by_id.remove(&id) {
                // Named as the model called it (`tool_call` stays `tool_call`).
                Some(result) => ToolMessage { name, ..result },
                None => ToolMessage {
                    role: "tool".into(),
                    content: answered.get(&id).cloned().unwrap_or_default(),
                    tool_call_id: id,
                    name,
                },
            })
            .collect();
        self.finish_batch(&mut batch);
        let vision = self.shared.client.endpoint().settings.vision;
        let mut shown: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
        let mut messages: Vec<Message> = batch
            .into_iter()
            .map(|m| {
                let mut content = m.content;
                if let Some(found) = images.get(&m.tool_call_id) {
                    content.push_str(&found.notes(vision));
                    if vision {
                        shown.push((m.name.clone(), found.parts.clone()));
                    }
                }
                Message::tool(m.tool_call_id, m.name, content)
            })
            .collect();
        messages.extend(super::images::images_message(&shown));
        self.record(conversation, messages);
    }

    /// One model call; a request that does not fit the context window is compressed
    /// (`compress.rs`) until it does, or fails when nothing is left to compress.
    async fn ask(
        &self,
        conversation: &mut Conversation,
        tool_choice: Option<&serde_json::Value>,
        cancel: &CancellationToken,
    ) -> Result<super::client::Completion, ModelError> {
        let mut compressed = false;
        loop {
            let request = ChatRequest {
                messages: &conversation.messages,
                tools: &self.tools_json,
                tool_choice,
            };
            let events = self.events.clone();
            let mut on_event = move |event: StreamEvent| match event {
                StreamEvent::Text(text) => events(AgentEvent::Text(text)),
                StreamEvent::Retry(line) => events(AgentEvent::Notice(line)),
                StreamEvent::ToolCall(_) => {}
            };
            let result = self
                .shared
                .client
                .complete(&request, &mut on_event, cancel)
                .await;
            match result {
                Err(ModelError::ContextOverflow { .. })
                    if compress_step(&mut conversation.messages) =>
                {
                    compressed = true;
                }
                other => {
                    if compressed && other.is_ok() {
                        (self.events)(AgentEvent::Notice(format!(
                            "older messages were shortened or removed to fit the context window ({} messages sent)",
                            conversation.messages.len()
                        )));
                    }
                    return other;
                }
            }
        }
    }

    /// Run the calls through `dispatch_batch`.
    async fn execute(
        &self,
        conversation: &Conversation,
        run: &[crate::batch::ToolCall],
        cancel: &CancellationToken,
    ) -> (
        Vec<ToolMessage>,
        HashMap<String, super::images::ResultImages>,
    ) {
        let mut images = HashMap::new();
        if run.is_empty() {
            return (Vec::new(), images);
        }
        for call in run {
            (self.events)(AgentEvent::ToolStart {
                name: call.name.clone(),
                preview: preview(&call.arguments, 60),
            });
        }
        let mut options = self.shared.batch.clone();
        options.interrupt = cancel.child_token();
        options.context = ToolContext {
            session_id: conversation.session_id.clone(),
            task_id: conversation.session_id.clone(),
            ..options.context.clone()
        };
        let mut results = dispatch_batch(&self.dispatcher, run, &options).await;
        for result in &mut results {
            (self.events)(AgentEvent::ToolDone {
                name: result.name.clone(),
                failed: tools_core::result::is_error_result(&result.content),
            });
            // Images leave the text before it is wrapped and budgeted.
            let found = super::images::split(&result.content);
            if !found.parts.is_empty() || !found.skipped.is_empty() {
                result.content.clone_from(&found.text);
                images.insert(result.tool_call_id.clone(), found);
            }
            let from_mcp = self.tools.from_mcp.contains(&result.name);
            if untrusted::is_untrusted(&result.name, from_mcp) {
                result.content = untrusted::wrap(&result.name, &result.content);
            }
        }
        (results, images)
    }

    /// Tool Search bridge calls: `tool_search` and `tool_describe` are answered here,
    /// `tool_call` becomes the call it wraps. Returns the calls left to dispatch.
    fn bridge(
        &self,
        run: Vec<crate::batch::ToolCall>,
        answered: &mut HashMap<String, String>,
    ) -> Vec<crate::batch::ToolCall> {
        let Some(search) = &self.search else {
            return run;
        };
        let parse = |text: &str| serde_json::from_str(text).unwrap_or(serde_json::Value::Null);
        run.into_iter()
            .filter_map(|mut call| {
                let answer = match call.name.as_str() {
                    "tool_search" => search.search(&parse(&call.arguments)),
                    "tool_describe" => search.describe(&parse(&call.arguments)),
                    "tool_call" => match search.unwrap_call(&call.arguments) {
                        Ok((name, arguments)) => {
                            call.name = name;
                            call.arguments = arguments;
                            return Some(call);
                        }
                        Err(message) => serde_json::json!({ "error": message }),
                    },
                    _ => return Some(call),
                };
                answered.insert(call.id, answer.to_string());
                None
            })
            .collect()
    }

    /// The per-turn budget.
    fn finish_batch(&self, batch: &mut [ToolMessage]) {
        let spilled = enforce_turn_budget(batch, self.shared.budgets.per_turn, &self.shared.spill);
        if spilled > 0 {
            (self.events)(AgentEvent::Notice(format!(
                "{spilled} tool result(s) saved to files to keep this turn within its budget"
            )));
        }
    }
}
