//! [`FixedAnswer`]: an approval callback that gives every question the same answer and
//! keeps what it was asked — a scripted human for embedders' replays and for tests of
//! the doors that ask one (guarded writes, script cron jobs, process input).

use std::sync::{Mutex, PoisonError};

use super::surface::{ApprovalCallback, ApprovalRequest, BoxFuture, Choice};

/// Answers every request with one [`Choice`] and records the requests.
#[derive(Debug)]
pub struct FixedAnswer {
    answer: Choice,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl FixedAnswer {
    /// A human who always answers `answer`.
    pub fn new(answer: Choice) -> Self {
        FixedAnswer {
            answer,
            asked: Mutex::new(Vec::new()),
        }
    }

    /// The requests asked so far, in order.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ApprovalCallback for FixedAnswer {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Choice> {
        Box::pin(async move {
            self.asked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(request.clone());
            self.answer.clone()
        })
    }
}
