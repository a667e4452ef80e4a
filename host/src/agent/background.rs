//! Background delegations: `delegate_task` from the top-level agent of an interactive
//! session returns at once while its children run, as Hermes does; the consolidated
//! result comes back into the conversation as a new message when every child of the
//! batch has finished (the UI takes it with [`Background::take_finished`]).
//!
//! At most `delegation.max_concurrent_children` batches run at a time; past that a call
//! runs its batch in the foreground (as Hermes does when its pool is full). One-shot
//! runs (`toolhost run`) have no background: nobody would receive a late result there.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, EventSink};

/// A batch that finished.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedDelegation {
    /// `deleg_<hex>`, as the dispatch answer named it.
    pub id: String,
    /// The goals of its tasks.
    pub goals: Vec<String>,
    /// The consolidated result (`{"results": [...], "total_duration_seconds"}`).
    pub result: Value,
}

impl FinishedDelegation {
    /// The message that brings the result back into the conversation.
    pub fn message(&self) -> String {
        format!(
            "[Background delegation {} finished ({} task(s)). Its consolidated result follows; \
             use it to continue.]\n{}",
            self.id,
            self.goals.len(),
            self.result
        )
    }
}

#[derive(Debug, Default)]
struct State {
    running: Vec<String>,
    finished: Vec<FinishedDelegation>,
}

/// The background delegations of one interactive session.
#[derive(Debug)]
pub struct Background {
    state: Mutex<State>,
    limit: usize,
    stop: CancellationToken,
}

impl Background {
    /// At most `limit` batches at a time.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Background {
            state: Mutex::new(State::default()),
            limit: limit.max(1),
            stop: CancellationToken::new(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ids of the batches still running.
    pub fn running(&self) -> Vec<String> {
        self.state().running.clone()
    }

    /// The batches that finished since the last call, oldest first.
    pub fn take_finished(&self) -> Vec<FinishedDelegation> {
        std::mem::take(&mut self.state().finished)
    }

    /// Interrupt every running batch (the session is ending).
    pub fn cancel_all(&self) {
        self.stop.cancel();
    }

    /// A token that fires when the session ends; each batch runs under a child of it.
    pub(crate) fn stop_token(&self) -> CancellationToken {
        self.stop.child_token()
    }

    /// Reserve a slot for a new batch; `None` when `limit` batches are running.
    pub(crate) fn reserve(&self) -> Option<String> {
        let mut state = self.state();
        if state.running.len() >= self.limit {
            return None;
        }
        let id = format!("deleg_{}", random_hex());
        state.running.push(id.clone());
        Some(id)
    }

    /// Batch `id` finished with `result`; tell `events`.
    pub(crate) fn finish(&self, id: &str, goals: Vec<String>, result: Value, events: &EventSink) {
        {
            let mut state = self.state();
            state.running.retain(|r| r != id);
            state.finished.push(FinishedDelegation {
                id: id.to_string(),
                goals,
                result,
            });
        }
        events(AgentEvent::Notice(format!(
            "background delegation {id} finished; its result joins the conversation"
        )));
    }
}

fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{:012x}", hasher.finish() & 0xffff_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slots_are_limited_and_freed_when_a_batch_finishes() {
        let background = Background::new(2);
        let a = background.reserve().unwrap();
        let b = background.reserve().unwrap();
        assert_ne!(a, b);
        assert!(background.reserve().is_none());
        let quiet = super::super::events::quiet();
        background.finish(&a, vec!["g".into()], json!({"results": []}), &quiet);
        assert_eq!(background.running(), vec![b]);
        let finished = background.take_finished();
        assert_eq!(finished.len(), 1);
        assert!(finished[0].message().contains(&a));
        assert!(background.take_finished().is_empty());
        assert!(background.reserve().is_some());
    }
}
