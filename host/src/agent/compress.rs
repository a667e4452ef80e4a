//! Making a conversation fit the context window, one step per call, without a model:
//!
//! 1. old tool results (all but the latest batch's) longer than a stub become the stub;
//! 2. the oldest message group goes (a message with the tool results that answer it),
//!    never the system prompt, the turn's user message or the latest group; the system
//!    prompt says how many messages were removed;
//! 3. the latest batch's longest tool result is halved (down to a floor).
//!
//! Only the copy the loop sends is compressed; the session keeps every message.
//! Hermes summarises the middle of the conversation with a model call; toolhost drops
//! it, which needs no extra call to a model whose window is already full
//! (docs/model-servers.md, "Context").

use super::message::{Content, Message, Role};

/// Longest old tool result kept as it is.
const STUB_OVER: usize = 400;
/// Shortest the latest results are cut to.
const LATEST_FLOOR: usize = 600;
/// What the system prompt gets when messages were removed (a number follows).
const NOTE: &str = "\n\n[toolhost: earlier messages of this conversation were removed to fit the model's context window: ";

/// One compression step on `messages`; false when nothing is left to compress.
pub fn compress_step(messages: &mut Vec<Message>) -> bool {
    let groups = groups(messages);
    let Some(&latest) = groups.last() else {
        return false;
    };
    let task = messages.iter().rposition(|m| m.role == Role::User);
    // 1. Stub old tool results.
    let mut changed = false;
    for m in messages[..latest].iter_mut() {
        if m.role == Role::Tool && m.content_text().chars().count() > STUB_OVER {
            let len = m.content_text().chars().count();
            m.content = Some(Content::Text(format!(
                "[toolhost: an older tool result of {len} characters was removed to fit the context window]"
            )));
            changed = true;
        }
    }
    if changed {
        return true;
    }
    // 2. Drop the oldest group that is neither the task nor the latest.
    let droppable = groups
        .windows(2)
        .map(|w| (w[0], w[1]))
        .find(|&(start, end)| start > 0 && task.is_none_or(|t| !(start..end).contains(&t)));
    if let Some((start, end)) = droppable {
        messages.drain(start..end);
        note_removed(messages, end - start);
        return true;
    }
    // 3. Halve the longest result of the latest batch.
    let longest = messages[latest..]
        .iter_mut()
        .filter(|m| m.role == Role::Tool)
        .max_by_key(|m| m.content_text().len());
    if let Some(m) = longest {
        let text = m.content_text();
        let len = text.chars().count();
        if len > LATEST_FLOOR * 3 / 2 {
            let keep: String = text.chars().take((len / 2).max(LATEST_FLOOR)).collect();
            m.content = Some(Content::Text(format!(
                "{keep}\n[toolhost: cut from {len} characters to fit the context window]"
            )));
            return true;
        }
    }
    false
}

/// Where each group starts: a message, with the tool messages after it.
fn groups(messages: &[Message]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role != Role::Tool)
        .map(|(i, _)| i)
        .collect()
}

/// Count `removed` more messages in the system prompt's note.
fn note_removed(messages: &mut [Message], removed: usize) {
    let Some(system) = messages.first_mut().filter(|m| m.role == Role::System) else {
        return;
    };
    let text = system.content_text();
    let (base, before) = match text.find(NOTE) {
        Some(at) => {
            let count = text[at + NOTE.len()..]
                .split(' ')
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            (text[..at].to_string(), count)
        }
        None => (text, 0),
    };
    system.content = Some(Content::Text(format!(
        "{base}{NOTE}{} so far.]",
        before + removed
    )));
}

#[cfg(test)]
#[path = "compress_tests.rs"]
mod tests;
