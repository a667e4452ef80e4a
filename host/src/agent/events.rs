//! What the loop reports while it runs, for a UI (`toolhost chat` prints these) or an
//! embedder's log. Reported through a shared sink so child agents of `delegate_task`
//! report into their parent's.

use std::sync::Arc;

/// One thing that happened.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// Streamed reply text.
    Text(String),
    /// A model call is about to be made (the number within the turn).
    ModelCall(usize),
    /// A tool call is about to run: name and a short argument preview.
    ToolStart {
        /// Tool name.
        name: String,
        /// The arguments, cut to one short line.
        preview: String,
    },
    /// A tool call finished.
    ToolDone {
        /// Tool name.
        name: String,
        /// True when the result is an error.
        failed: bool,
    },
    /// A message from a child agent of `delegate_task` (its task index and event).
    Child(usize, Box<AgentEvent>),
    /// Something the user should know (retries, dropped calls).
    Notice(String),
}

/// Where events go.
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// A sink that drops everything.
pub fn quiet() -> EventSink {
    Arc::new(|_| {})
}

/// A one-line preview of tool arguments (at most `max` characters).
pub fn preview(arguments: &str, max: usize) -> String {
    let flat: String = arguments
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_one_short_line() {
        assert_eq!(preview("{\"a\":\n1}", 40), "{\"a\": 1}");
        assert_eq!(preview("abcdef", 3), "abc…");
    }
}
