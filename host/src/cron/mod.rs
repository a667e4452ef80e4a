//! The cron scheduler and the agent that runs scheduled jobs (docs/hermes/cron.md).
//!
//! - [`executor`] — [`AgentExecutor`]: a job's prompt as a non-interactive agent task
//!   through the agent loop (no `cronjob`, `clarify` or `send_message`; approvals
//!   follow `[approvals] no_human` when nobody is there to ask);
//! - [`scheduler`] — `toolhost cron tick` (run what is due, once) and `daemon` (tick
//!   every `[cron] tick_interval` seconds), with a tick lock so two schedulers never
//!   overlap, on top of the store's per-job claims.
//!
//! The job store, the `cronjob` tool and one run's steps live in tools-core
//! (`tools_core::cron`).

pub mod executor;
pub mod scheduler;

pub use executor::AgentExecutor;
pub use scheduler::{TickReport, tick};
