//! A bounded ring buffer of a stdio server's stderr lines, for diagnostics.
//!
//! Server logs never reach toolhost's own stderr unless asked for (`-vv` logs them at
//! debug level); the last lines are kept here and shown when the server fails to start,
//! dies, or in `toolhost mcp list`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

/// Lines kept per server.
pub const MAX_LINES: usize = 200;
/// Bytes kept per server (the oldest lines go first).
pub const MAX_BYTES: usize = 32 * 1024;
/// Longest single line kept (longer lines are cut).
pub const MAX_LINE: usize = 2048;

#[derive(Debug, Default)]
struct Inner {
    lines: VecDeque<String>,
    bytes: usize,
    dropped: u64,
}

/// Shared handle to one server's stderr tail.
#[derive(Clone, Debug, Default)]
pub struct StderrRing {
    inner: Arc<Mutex<Inner>>,
}

impl StderrRing {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append one line (without its newline).
    pub fn push(&self, line: &str) {
        let mut line = line.trim_end_matches(['\r', '\n']).to_string();
        if line.len() > MAX_LINE {
            let mut cut = MAX_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.bytes += line.len();
        inner.lines.push_back(line);
        while inner.lines.len() > MAX_LINES || inner.bytes > MAX_BYTES {
            match inner.lines.pop_front() {
                Some(old) => {
                    inner.bytes -= old.len();
                    inner.dropped += 1;
                }
                None => break,
            }
        }
    }

    /// The last `n` lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let skip = inner.lines.len().saturating_sub(n);
        inner.lines.iter().skip(skip).cloned().collect()
    }

    /// The last `n` lines joined with newlines (empty when nothing was written).
    pub fn tail_text(&self, n: usize) -> String {
        self.tail(n).join("\n")
    }

    /// Lines dropped to stay within bounds.
    pub fn dropped(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines() {
        let ring = StderrRing::new();
        for i in 0..(MAX_LINES + 10) {
            ring.push(&format!("line {i}\n"));
        }
        let tail = ring.tail(3);
        assert_eq!(
            tail,
            vec![
                format!("line {}", MAX_LINES + 7),
                format!("line {}", MAX_LINES + 8),
                format!("line {}", MAX_LINES + 9)
            ]
        );
        assert_eq!(ring.tail(usize::MAX).len(), MAX_LINES);
        assert_eq!(ring.dropped(), 10);
    }

    #[test]
    fn bounded_in_bytes_and_line_length() {
        let ring = StderrRing::new();
        let long = "é".repeat(MAX_LINE);
        for _ in 0..100 {
            ring.push(&long);
        }
        let lines = ring.tail(usize::MAX);
        let bytes: usize = lines.iter().map(String::len).sum();
        assert!(bytes <= MAX_BYTES + lines.len() * 3, "{bytes}");
        assert!(lines.iter().all(|l| l.len() <= MAX_LINE + 3));
        assert!(lines[0].ends_with('…'));
    }
}
