//! The agent loop as a library: a model client for any OpenAI-compatible server, the
//! loop that sends the conversation, runs the model's tool calls through the dispatch
//! pipeline and repeats until a final answer, sessions persisted in SQLite, and the
//! agent-loop tools that need them (`session_search`, `delegate_task`).
//!
//! The CLI's `toolhost run` and `toolhost chat` are thin layers over this module; an
//! embedder builds an [`Agent`] the same way ([`Agent::from_host`] or
//! [`Agent::assemble`]) and calls [`Agent::run_turn`]. Behaviour and differences from
//! Hermes: docs/hermes/agent-loop.md.

mod assemble;
pub mod background;
pub mod budget;
pub mod client;
mod compress;
pub mod context;
mod delegate;
pub mod events;
pub mod images;
mod loop_tools;
pub mod message;
pub mod names;
pub mod preflight;
mod reply;
pub mod scripted;
mod session_db;
mod session_fts;
pub mod session_search;
mod session_wal;
mod session_writer;
pub mod sessions;
pub mod settings;
pub mod stream;
pub mod tool_search;
mod turn;
pub mod untrusted;

#[cfg(test)]
mod background_tests;
#[cfg(test)]
mod images_loop_tests;
#[cfg(test)]
mod turn_reply_tests;
#[cfg(test)]
mod turn_tests;

pub use assemble::{Agent, AgentError, AgentParts, CHILD_BLOCKED_TOOLS, HostPieces, ToolOffer};
pub use background::{Background, FinishedDelegation};
pub use client::{ChatRequest, Completion, ModelClient, ModelError, ToolsJson};
pub use events::{AgentEvent, EventSink};
pub use message::{AssistantToolCall, Content, FunctionCall, Message, Role, Usage};
pub use sessions::{SessionError, SessionInfo, SessionStore};
pub use settings::{AgentSettings, ApiKey, DelegationSettings, ModelEndpoint, ModelSettings};
pub use turn::{Conversation, TurnEnd, TurnOutcome};
