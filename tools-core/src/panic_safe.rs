//! Panic containment for futures: a panic raised while polling becomes a value.
//!
//! `std::panic::catch_unwind` only covers synchronous code; tool handlers and the
//! dispatch pipeline are also futures, so the same guarantee needs a poll-level guard.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Wraps a future; resolves to `Err(payload)` if a poll panics.
pub struct CatchUnwind<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future> CatchUnwind<F> {
    /// Guard `future`.
    pub fn new(future: F) -> Self {
        CatchUnwind {
            inner: Box::pin(future),
        }
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn panic_in_poll_becomes_err() {
        let result = CatchUnwind::new(async { panic!("inside") }).await;
        let payload = result.unwrap_err();
        assert_eq!(crate::availability::panic_message(&payload), "inside");
    }

    #[tokio::test]
    async fn value_passes_through() {
        assert_eq!(CatchUnwind::new(async { 7 }).await.ok(), Some(7));
    }
}
