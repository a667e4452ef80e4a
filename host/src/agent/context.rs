//! The model's context window: a tokenizer-free estimate of each request's prompt
//! tokens, checked before the request is sent, and calibrated against the `usage` the
//! server reports.
//!
//! The estimate is the request body's size divided by a bytes-per-token ratio: 3.5 to
//! begin with (JSON-heavy requests run below English prose's 4), then whatever the
//! server's `prompt_tokens` showed for the last request. The room for the prompt is
//! the context length less what the reply needs (`[model] max_tokens`, else an eighth
//! of the window, at most 4,096). When a request does not fit, the client refuses to
//! send it ([`super::ModelError::ContextOverflow`]) and the loop compresses the
//! conversation (`compress.rs`). docs/model-servers.md, "Context".

use std::sync::{Mutex, PoisonError};

/// Starting bytes per token, before the server has reported any usage.
const START_BYTES_PER_TOKEN: f64 = 3.5;
/// Bounds of a calibrated ratio (a server reporting odd usage cannot make the estimate
/// absurd either way).
const BYTES_PER_TOKEN_RANGE: (f64, f64) = (1.5, 6.0);

/// The window and the current ratio.
#[derive(Debug)]
pub struct ContextWindow {
    length: usize,
    reserve: usize,
    bytes_per_token: Mutex<f64>,
}

impl ContextWindow {
    /// A window of `length` tokens, `max_tokens` of them kept for the reply when set.
    pub fn new(length: usize, max_tokens: Option<u32>) -> Self {
        let reserve = max_tokens.map_or((length / 8).min(4_096), |m| m as usize);
        ContextWindow {
            length,
            reserve: reserve.min(length / 2),
            bytes_per_token: Mutex::new(START_BYTES_PER_TOKEN),
        }
    }

    /// The context length in tokens.
    pub fn length(&self) -> usize {
        self.length
    }

    /// Tokens a prompt may take.
    pub fn prompt_limit(&self) -> usize {
        self.length - self.reserve
    }

    /// Estimated prompt tokens of a request body of `bytes`.
    pub fn estimate(&self, bytes: usize) -> usize {
        let ratio = *self
            .bytes_per_token
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (bytes as f64 / ratio).ceil() as usize
    }

    /// The server counted `prompt_tokens` for a body of `bytes`: use its ratio.
    pub fn observe(&self, bytes: usize, prompt_tokens: u64) {
        if prompt_tokens == 0 || bytes == 0 {
            return;
        }
        let ratio = (bytes as f64 / prompt_tokens as f64)
            .clamp(BYTES_PER_TOKEN_RANGE.0, BYTES_PER_TOKEN_RANGE.1);
        *self
            .bytes_per_token
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = ratio;
    }

    /// The server said a request overflowed that the estimate let through: count more
    /// tokens per byte from now on.
    pub fn underestimated(&self) {
        let mut ratio = self
            .bytes_per_token
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *ratio = (*ratio * 0.8).max(BYTES_PER_TOKEN_RANGE.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_reserve_comes_from_max_tokens_or_an_eighth() {
        assert_eq!(ContextWindow::new(2_048, None).prompt_limit(), 1_792);
        assert_eq!(ContextWindow::new(2_048, Some(512)).prompt_limit(), 1_536);
        assert_eq!(ContextWindow::new(128_000, None).prompt_limit(), 123_904);
        // A reply reserve larger than half the window leaves half for the prompt.
        assert_eq!(ContextWindow::new(2_048, Some(4_000)).prompt_limit(), 1_024);
    }

    #[test]
    fn usage_calibrates_the_estimate() {
        let window = ContextWindow::new(8_192, None);
        assert_eq!(window.estimate(7_000), 2_000);
        window.observe(7_000, 3_500);
        assert_eq!(window.estimate(7_000), 3_500);
        // Absurd reports are clamped.
        window.observe(100, 1_000_000);
        assert_eq!(window.estimate(150), 100);
    }

    #[test]
    fn an_overflow_the_estimate_missed_makes_it_more_careful() {
        let window = ContextWindow::new(8_192, None);
        let before = window.estimate(10_000);
        window.underestimated();
        assert!(window.estimate(10_000) > before);
    }
}
