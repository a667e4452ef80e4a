//! The reader `read_file` streams a file through: it gives up at a deadline and when
//! the call is cancelled (a slow network mount or a file that never ends cannot hold
//! the call's thread), turns "would block" into words, and hashes everything read
//! (the file's `content_hash`).

use std::io::{self, Read};
use std::time::{Duration, Instant};

use crate::context::ToolContext;
use crate::files::{ContentHash, ContentHasher};

/// The file's reader with a deadline, cancellation, and a hash of everything read.
pub struct GuardedReader<'a> {
    inner: Box<dyn Read + Send>,
    hasher: Option<ContentHasher>,
    deadline: Instant,
    limit: Duration,
    ctx: &'a ToolContext,
}

impl<'a> GuardedReader<'a> {
    /// Guard `inner` for at most `limit`, hashing its bytes when `hash`.
    pub fn new(
        inner: Box<dyn Read + Send>,
        hash: bool,
        limit: Duration,
        ctx: &'a ToolContext,
    ) -> Self {
        GuardedReader {
            inner,
            hasher: hash.then(ContentHasher::default),
            deadline: Instant::now() + limit,
            limit,
            ctx,
        }
    }

    /// The hash of everything read (`None` when not hashing).
    pub fn finish(self) -> Option<ContentHash> {
        self.hasher.map(ContentHasher::finish)
    }
}

impl Read for GuardedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ctx.cancel.is_cancelled() {
            return Err(io::Error::other("the call was cancelled"));
        }
        if Instant::now() >= self.deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("reading took longer than {} s", self.limit.as_secs()),
            ));
        }
        let n = self.inner.read(buf).map_err(|err| {
            if err.kind() == io::ErrorKind::WouldBlock {
                io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "the file has no data now and reading it would block",
                )
            } else {
                err
            }
        })?;
        if let Some(hasher) = &mut self.hasher {
            hasher.update(&buf[..n]);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_deadline_and_on_cancel() {
        let ctx = ToolContext::default();
        let endless = Box::new(io::repeat(b'x'));
        let mut reader = GuardedReader::new(endless, false, Duration::ZERO, &ctx);
        let err = reader.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        ctx.cancel.cancel();
        let endless = Box::new(io::repeat(b'x'));
        let mut reader = GuardedReader::new(endless, false, Duration::from_secs(60), &ctx);
        assert!(
            reader
                .read(&mut [0u8; 8])
                .unwrap_err()
                .to_string()
                .contains("cancelled")
        );
    }

    #[test]
    fn hashes_what_was_read() {
        let ctx = ToolContext::default();
        let mut reader =
            GuardedReader::new(Box::new(&b"hello"[..]), true, Duration::from_secs(60), &ctx);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(reader.finish(), Some(ContentHash::of(b"hello")));
    }
}
