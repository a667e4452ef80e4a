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
use super::events::{AgentEvent, preview};
use super::message::{Message, Usage};
use super::preflight::{Strikes, Verdict, preflight};
use super::sessions::{SessionError, new_session_id};
use super::stream::StreamEvent;
use super::untrusted;
use crate::batch::{ToolMessage, dispatch_batch};

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
                let text = format!(
                    "Stopped: reached the limit of {} model calls in one turn without a final answer.",
                    self.max_turns
                );
                return end(text, TurnEnd::TurnLimit, calls, usage);
            }
            calls += 1;
            (self.events)(AgentEvent::ModelCall(calls));
            let completion = match self.ask(conversation, cancel).await {
                Ok(c) => c,
                Err(ModelError::Interrupted) => {
                    return end("Interrupted.".into(), TurnEnd::Interrupted, calls, usage);
                }
                Err(err) => return end(err.to_string(), TurnEnd::Failed, calls, usage),
            };
            usage.add(completion.usage);
            let message = completion.message;
            if message.tool_calls.is_empty() {
                let text = message.content_text();
                if text.trim().is_empty() && completion.finish_reason.as_deref() == Some("length") {
                    let text = "Response truncated due to output length limit".to_string();
                    return end(text, TurnEnd::Partial, calls, usage);
                }
                self.record(conversation, vec![message]);
                return end(text, TurnEnd::Completed, calls, usage);
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
                    self.run_batch(conversation, message, run, answered, cancel)
                        .await;
                    if cancel.is_cancelled() {
                        return end("Interrupted.".into(), TurnEnd::Interrupted, calls, usage);
                    }
                }
            }
        }
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

    async fn ask(
        &self,
        conversation: &Conversation,
        cancel: &CancellationToken,
    ) -> Result<super::client::Completion, ModelError> {
        let request = ChatRequest {
            messages: &conversation.messages,
            tools: &self.tools_json,
            tool_choice: None,
        };
        let events = self.events.clone();
        let mut on_event = move |event: StreamEvent| {
            if let StreamEvent::Text(text) = event {
                events(AgentEvent::Text(text));
            }
        };
        self.shared
            .client
            .complete(&request, &mut on_event, cancel)
            .await
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
