//! The stdout of a stdio MCP server, passed to rmcp unchanged while each complete line
//! is shown to a [`TaskSupportTap`] (rmcp's types drop fields toolhost needs; see
//! `task_support.rs`).
//!
//! Bytes go through as they are read; lines are collected beside them up to
//! [`MAX_LINE`] (rmcp's own stdio limit), and a longer line is not shown to the tap.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::task_support::TaskSupportTap;

/// Longest line collected for the tap.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// A reader that shows every line it passes on to a tap.
#[derive(Debug)]
pub struct StdoutTap<R> {
    inner: R,
    tap: Arc<TaskSupportTap>,
    line: Vec<u8>,
    overlong: bool,
}

impl<R> StdoutTap<R> {
    /// Read from `inner`, showing lines to `tap`.
    pub fn new(inner: R, tap: Arc<TaskSupportTap>) -> Self {
        StdoutTap {
            inner,
            tap,
            line: Vec::new(),
            overlong: false,
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            self.push(&bytes[..end]);
            if !self.overlong {
                self.tap.observe(&self.line);
            }
            self.line.clear();
            self.overlong = false;
            bytes = &bytes[end + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overlong {
            return;
        }
        if self.line.len() + bytes.len() > MAX_LINE {
            self.overlong = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StdoutTap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            this.feed(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    const LISTING: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"r","execution":{"taskSupport":"required"}}]}}"#;

    #[tokio::test]
    async fn bytes_pass_unchanged_and_split_lines_are_seen() {
        let input = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}\n{LISTING}\n");
        let (mut write, read) = tokio::io::duplex(7);
        let tap = Arc::new(TaskSupportTap::new());
        let mut reader = StdoutTap::new(read, Arc::clone(&tap));
        let sent = input.clone();
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt as _;
            write.write_all(sent.as_bytes()).await.unwrap();
        });
        let mut out = String::new();
        reader.read_to_string(&mut out).await.unwrap();
        writer.await.unwrap();
        assert_eq!(out, input);
        assert_eq!(tap.required().into_iter().collect::<Vec<_>>(), ["r"]);
    }

    #[test]
    fn an_overlong_line_is_skipped_and_the_next_one_seen() {
        let tap = Arc::new(TaskSupportTap::new());
        let mut reader = StdoutTap::new(tokio::io::empty(), Arc::clone(&tap));
        let long = format!(
            "{}{}\n",
            LISTING.replace("\"r\"", "\"long\""),
            " ".repeat(MAX_LINE)
        );
        reader.feed(long.as_bytes());
        reader.feed(format!("{LISTING}\n").as_bytes());
        assert_eq!(tap.required().into_iter().collect::<Vec<_>>(), ["r"]);
    }
}
