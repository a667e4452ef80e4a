//! Tool handlers: the code that runs a call, sync or async.
//!
//! A sync handler runs on a blocking thread (the caller's own thread when the pipeline
//! is driven synchronously, tokio's blocking pool otherwise); an async handler is awaited.
//! A hybrid handler has both forms of one operation, so neither path pays a bridge: the
//! blocking form runs on the caller's thread, the async form is awaited. All return a
//! JSON value; the registry serializes it into the result string.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::context::ToolContext;
use crate::error::ToolError;

/// What a handler produces.
pub type ToolOutcome = Result<Value, ToolError>;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Signature of a synchronous handler.
pub type SyncHandlerFn = dyn Fn(Value, &ToolContext) -> ToolOutcome + Send + Sync;

/// Signature of an asynchronous handler.
pub type AsyncHandlerFn =
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, ToolOutcome> + Send + Sync;

/// The code behind a tool.
#[derive(Clone)]
pub enum ToolHandler {
    /// Runs on a blocking thread.
    Sync(Arc<SyncHandlerFn>),
    /// Awaited on the host's runtime.
    Async(Arc<AsyncHandlerFn>),
    /// One operation in two forms, for handlers that do their work elsewhere and only
    /// wait for it (native plugin calls run on the plugin executor): `blocking` runs on
    /// the calling thread when the pipeline is driven synchronously (it may block that
    /// thread while it waits), `awaited` is awaited from async code and must not block.
    Hybrid {
        /// Used by synchronous dispatch, on the caller's thread.
        blocking: Arc<SyncHandlerFn>,
        /// Used by async dispatch.
        awaited: Arc<AsyncHandlerFn>,
    },
}

impl ToolHandler {
    /// Wrap a synchronous closure.
    pub fn sync<F>(f: F) -> Self
    where
        F: Fn(Value, &ToolContext) -> ToolOutcome + Send + Sync + 'static,
    {
        ToolHandler::Sync(Arc::new(f))
    }

    /// Wrap an async closure.
    pub fn from_async<F, Fut>(f: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        ToolHandler::Async(Arc::new(move |args, ctx| Box::pin(f(args, ctx))))
    }

    /// Wrap both forms of one operation (see [`ToolHandler::Hybrid`]).
    pub fn hybrid<B, A, Fut>(blocking: B, awaited: A) -> Self
    where
        B: Fn(Value, &ToolContext) -> ToolOutcome + Send + Sync + 'static,
        A: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        ToolHandler::Hybrid {
            blocking: Arc::new(blocking),
            awaited: Arc::new(move |args, ctx| Box::pin(awaited(args, ctx))),
        }
    }

    /// True for handlers that can be awaited (Hermes' `is_async`).
    pub fn is_async(&self) -> bool {
        matches!(self, ToolHandler::Async(_) | ToolHandler::Hybrid { .. })
    }
}

impl std::fmt::Debug for ToolHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolHandler::Sync(_) => "ToolHandler::Sync",
            ToolHandler::Async(_) => "ToolHandler::Async",
            ToolHandler::Hybrid { .. } => "ToolHandler::Hybrid",
        })
    }
}
