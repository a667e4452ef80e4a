//! [`AgentExecutor`]: runs a cron job's prompt as one agent turn, installed by the host
//! as the [`CronExecutor`] both the scheduler and `cronjob(action="run")` use.
//!
//! The job's agent offers the job's `enabled_toolsets` (default: the configured
//! selection) minus `cronjob` (a cron run never schedules more jobs), `clarify` and
//! `send_message` (nobody is there); it talks to the job's `model` on the configured
//! endpoint; its tools work in the job's `workdir`; the turn is cancelled after
//! `[cron] job_timeout`. Sessions are recorded under the source `cron`.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tools_core::cron::{AgentRun, CronExecutor, CronJob};
use tools_core::environments::TaskOverride;
use tools_core::{CoreServices, Home, Registry};

use crate::agent::{Agent, HostPieces, TurnEnd};
use crate::config::Config;
use crate::dispatch::Dispatcher;
use crate::toolsets::Toolsets;

/// Tools a cron run never gets.
pub const CRON_BLOCKED: [&str; 3] = ["cronjob", "clarify", "send_message"];

/// Runs cron prompts through the agent loop.
pub struct AgentExecutor {
    home: Home,
    config: Config,
    registry: Arc<Registry>,
    toolsets: Toolsets,
    services: Arc<CoreServices>,
    dispatcher: Dispatcher,
}

impl AgentExecutor {
    /// An executor over a host's pieces.
    pub fn new(
        home: Home,
        config: Config,
        registry: Arc<Registry>,
        toolsets: Toolsets,
        services: Arc<CoreServices>,
        dispatcher: Dispatcher,
    ) -> Self {
        AgentExecutor {
            home,
            config,
            registry,
            toolsets,
            services,
            dispatcher,
        }
    }

    fn agent(&self, job: &CronJob) -> Result<Agent, String> {
        let enabled = job.enabled_toolsets.clone();
        for name in enabled.iter().flatten() {
            if !self.toolsets.is_known(&self.registry, name) {
                return Err(format!(
                    "unknown toolset '{name}' in enabled_toolsets; `toolhost toolsets` lists them"
                ));
            }
        }
        let disabled = CRON_BLOCKED.iter().map(|s| s.to_string()).collect();
        let selection = self.config.toolsets.selection(enabled, disabled);
        let pieces = HostPieces {
            home: &self.home,
            config: &self.config,
            registry: &self.registry,
            toolsets: &self.toolsets,
            services: &self.services,
            dispatcher: &self.dispatcher,
        };
        Agent::from_pieces(&pieces, &selection, job.model.as_deref())
            .map(|a| a.with_source("cron"))
            .map_err(|e| e.to_string())
    }

    async fn turn(
        &self,
        agent: &Agent,
        job: &CronJob,
        prompt: &str,
        timeout: Duration,
    ) -> AgentRun {
        let mut conversation = match agent.new_conversation(None) {
            Ok(c) => c,
            Err(e) => {
                return AgentRun {
                    error: Some(e.to_string()),
                    ..AgentRun::default()
                };
            }
        };
        let session = conversation.session_id.clone();
        if let Some(dir) = &job.workdir {
            self.services.environments.set_task_override(
                &session,
                TaskOverride {
                    cwd: Some(dir.clone()),
                    ..TaskOverride::default()
                },
            );
        }
        let cancel = CancellationToken::new();
        let timer = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(timeout).await;
                cancel.cancel();
            })
        };
        let outcome = agent.run_turn(&mut conversation, prompt, &cancel).await;
        let timed_out = cancel.is_cancelled();
        timer.abort();
        if let Err(err) = self.services.environments.cleanup_task(&session) {
            tracing::warn!(%err, "cron run: environment cleanup failed");
        }
        let success = outcome.end == TurnEnd::Completed;
        let error = match (success, timed_out) {
            (true, _) => None,
            (false, true) => Some(format!("Job timed out after {}s", timeout.as_secs())),
            (false, false) => Some(outcome.text.clone()),
        };
        AgentRun {
            success,
            response: if success { outcome.text } else { String::new() },
            error,
            session_id: Some(session),
        }
    }
}

impl CronExecutor for AgentExecutor {
    fn execute(&self, job: &CronJob, prompt: &str, timeout: Duration) -> AgentRun {
        let agent = match self.agent(job) {
            Ok(a) => a,
            Err(error) => {
                return AgentRun {
                    error: Some(error),
                    ..AgentRun::default()
                };
            }
        };
        match tools_core::bridge::block_on(self.turn(&agent, job, prompt, timeout)) {
            Ok(run) => run,
            Err(e) => AgentRun {
                error: Some(e.to_string()),
                ..AgentRun::default()
            },
        }
    }
}
