//! Result budgets scaled to the model's context length, and the per-turn cut.
//!
//! Per result: clamp(context × 4 × 0.15, 8,000, 100,000) characters (a tool's own
//! smaller limit still wins; enforced by the dispatcher's spill). Per turn: the tool
//! messages of one assistant message together may not exceed clamp(context × 4 × 0.30,
//! 16,000, 200,000) characters (or `[agent] turn_result_budget`); while they do, the
//! largest result not yet spilled is written to a file and replaced by its preview
//! (docs/hermes/agent-loop.md).

use crate::batch::ToolMessage;
use crate::spill::ResultSpill;

/// Characters per token assumed for budgets.
const CHARS_PER_TOKEN: f64 = 4.0;

/// The budgets for one model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// Longest single result.
    pub per_result: usize,
    /// Longest total of one turn's results.
    pub per_turn: usize,
}

impl Budgets {
    /// Budgets for a context of `tokens`; `turn_override` (when non-zero) replaces the
    /// per-turn figure.
    pub fn for_context(tokens: usize, turn_override: usize) -> Self {
        let chars = tokens as f64 * CHARS_PER_TOKEN;
        let scaled = |share: f64, low: f64, high: f64| (chars * share).clamp(low, high) as usize;
        Budgets {
            per_result: scaled(0.15, 8_000.0, 100_000.0),
            per_turn: if turn_override > 0 {
                turn_override
            } else {
                scaled(0.30, 16_000.0, 200_000.0)
            },
        }
    }
}

/// Spill the largest results of `messages` until their total fits `budget`; returns how
/// many were spilled.
pub fn enforce_turn_budget(
    messages: &mut [ToolMessage],
    budget: usize,
    spill: &ResultSpill,
) -> usize {
    let mut spilled = vec![false; messages.len()];
    let mut count = 0;
    loop {
        let total: usize = messages.iter().map(|m| m.content.chars().count()).sum();
        if total <= budget {
            return count;
        }
        let largest = messages
            .iter()
            .enumerate()
            .filter(|(i, _)| !spilled[*i])
            .max_by_key(|(_, m)| m.content.len())
            .map(|(i, _)| i);
        let Some(index) = largest else {
            return count;
        };
        spilled[index] = true;
        let message = &mut messages[index];
        let text = std::mem::take(&mut message.content);
        message.content = spill.apply(&message.name, &message.tool_call_id, text, 0);
        count += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, len: usize) -> ToolMessage {
        ToolMessage {
            role: "tool".into(),
            tool_call_id: id.into(),
            name: "terminal".into(),
            content: serde_json::json!({"output": "x".repeat(len)}).to_string(),
        }
    }

    #[test]
    fn budgets_scale_with_context_and_clamp() {
        assert_eq!(
            Budgets::for_context(128_000, 0),
            Budgets {
                per_result: 76_800,
                per_turn: 153_600
            }
        );
        assert_eq!(
            Budgets::for_context(4_096, 0),
            Budgets {
                per_result: 8_000,
                per_turn: 16_000
            }
        );
        assert_eq!(Budgets::for_context(1_000_000, 0).per_turn, 200_000);
        assert_eq!(Budgets::for_context(1_000_000, 5_000).per_turn, 5_000);
    }

    #[test]
    fn largest_results_are_spilled_until_under_budget() {
        let dir = tempfile::tempdir().unwrap();
        let spill = ResultSpill::new(dir.path());
        let mut messages = vec![message("a", 9_000), message("b", 12_000), message("c", 500)];
        let n = enforce_turn_budget(&mut messages, 16_000, &spill);
        assert_eq!(n, 1);
        assert!(
            messages[1].content.contains("\"truncated\":true"),
            "{}",
            messages[1].content
        );
        assert!(messages[0].content.len() > 9_000);
        assert!(std::fs::read_dir(dir.path()).unwrap().count() == 1);
    }

    #[test]
    fn under_budget_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let mut messages = vec![message("a", 100)];
        let before = messages.clone();
        assert_eq!(
            enforce_turn_budget(&mut messages, 16_000, &ResultSpill::new(dir.path())),
            0
        );
        assert_eq!(messages, before);
    }
}
