//! Asking a human about a flagged command, and what the answer does: the embedder's
//! callback (bounded by `approvals.timeout`) or else the terminal prompt; with nobody to
//! ask, `approvals.no_human` decides; "session" and "always" answers are remembered
//! (and "always" saved through the [`AllowlistStore`](crate::AllowlistStore)).
//!
//! Apart from the engine's decision order (`engine.rs`) because it is the one part that
//! talks to someone and waits, with its own surfaces, timeouts and observer events.

use std::time::Duration;

use super::ApprovalEngine;
use crate::gate::{ActionCheck, CommandCheck, GateDecision};
use crate::messages;
use crate::observer::ApprovalEvent;
use crate::prompt;
use crate::redact::redact;
use crate::settings::NoHumanPolicy;
use crate::surface::{ApprovalRequest, Choice};
use crate::verdict::Verdict;

impl ApprovalEngine {
    /// A command touching toolhost's own configuration, or any command strict mode cannot
    /// prove read-only: a human decides this time (no session or permanent approval);
    /// nobody to ask means denied.
    pub(super) fn ask_human_only(
        &self,
        check: &CommandCheck,
        display: &str,
        verdict: &Verdict,
        strict: bool,
    ) -> GateDecision {
        let keys = verdict.rule_keys();
        let description = verdict.combined_description();
        let request = ApprovalRequest {
            command: display.to_string(),
            description: description.clone(),
            rule_keys: keys.clone(),
            session_key: check.session_key.clone(),
            tool_call_id: check.tool_call_id.clone(),
            allow_always: false,
            smart_denied: false,
        };
        let timeout = Duration::from_secs(self.settings.timeout.max(1));
        let Some((surface, choice)) = self.ask_human(&request, timeout) else {
            self.fire(check, display, &description, &keys, "policy", None);
            self.fire(
                check,
                display,
                &description,
                &keys,
                "policy",
                Some("human_only_deny"),
            );
            return GateDecision::Blocked {
                message: if strict {
                    messages::strict(&description)
                } else {
                    messages::human_only(&description)
                },
                hardline: false,
            };
        };
        self.fire(
            check,
            display,
            &description,
            &keys,
            surface,
            Some(choice.as_str()),
        );
        match choice {
            Choice::Once | Choice::Session | Choice::Always => GateDecision::Approved {
                human: true,
                note: Some(format!(
                    "Command required approval ({description}) and was approved by the user for this run only."
                )),
            },
            other => self.apply(check, &keys, &description, other),
        }
    }

    /// An action that only a human may approve (a guarded write, a script cron job):
    /// asked like a command that edits toolhost's configuration, with the action shown
    /// in place of the command.
    pub(super) fn decide_action(&self, action: &ActionCheck) -> GateDecision {
        let check = CommandCheck {
            command: action.action.clone(),
            session_key: action.session_key.clone(),
            task_id: action.task_id.clone(),
            tool_call_id: action.tool_call_id.clone(),
            env_type: "local".to_string(),
            host_access: true,
        };
        let display = redact(&action.action).into_owned();
        let verdict = Verdict::from_findings(vec![action.finding]);
        self.ask_human_only(&check, &display, &verdict, false)
    }

    /// Ask the callback or the terminal; `None` when nobody can be asked.
    pub(super) fn ask_human(
        &self,
        request: &ApprovalRequest,
        timeout: Duration,
    ) -> Option<(&'static str, Choice)> {
        let fire_pre = |surface: &str| {
            let event = ApprovalEvent {
                command: &request.command,
                description: &request.description,
                rule_keys: &request.rule_keys,
                session_key: &request.session_key,
                surface,
                tool_call_id: &request.tool_call_id,
                choice: None,
            };
            self.hooks.pre_approval_request(&event);
        };
        if let Some(callback) = &self.surfaces.callback
            && callback.available(request)
        {
            let surface = callback.surface();
            fire_pre(surface);
            let answer = crate::bridge::block_on(async {
                tokio::time::timeout(timeout, callback.ask(request)).await
            });
            let choice = match answer {
                Ok(Ok(choice)) => choice,
                Ok(Err(_elapsed)) => Choice::Timeout,
                Err(e) => {
                    tracing::warn!(error = %e, "approval callback could not run; denying");
                    Choice::Deny { reason: None }
                }
            };
            return Some((surface, choice));
        }
        if self.surfaces.terminal && prompt::terminal_available() {
            fire_pre("cli");
            return prompt::ask(request, timeout).map(|c| ("cli", c));
        }
        None
    }

    pub(super) fn no_human(
        &self,
        check: &CommandCheck,
        display: &str,
        request: &ApprovalRequest,
    ) -> GateDecision {
        let policy = if request.smart_denied {
            NoHumanPolicy::Deny
        } else {
            self.settings.no_human
        };
        let choice = match policy {
            NoHumanPolicy::Deny => "no_human_deny",
            NoHumanPolicy::Approve => "no_human_approve",
        };
        self.fire(
            check,
            display,
            &request.description,
            &request.rule_keys,
            "policy",
            None,
        );
        self.fire(
            check,
            display,
            &request.description,
            &request.rule_keys,
            "policy",
            Some(choice),
        );
        match policy {
            NoHumanPolicy::Deny => GateDecision::Blocked {
                message: if request.smart_denied {
                    messages::smart_denied(&request.description)
                } else {
                    messages::no_human(&request.description, &request.rule_keys)
                },
                hardline: false,
            },
            NoHumanPolicy::Approve => {
                let shown = display;
                tracing::warn!(
                    command = shown,
                    "dangerous command approved: no human surface and approvals.no_human = \"approve\""
                );
                GateDecision::Approved {
                    human: false,
                    note: Some(format!(
                        "Command was flagged ({}) and ran without a human decision (approvals.no_human = \"approve\").",
                        request.description
                    )),
                }
            }
        }
    }

    pub(super) fn apply(
        &self,
        check: &CommandCheck,
        keys: &[String],
        description: &str,
        choice: Choice,
    ) -> GateDecision {
        match choice {
            Choice::Once => GateDecision::Approved {
                human: true,
                note: Some(format!(
                    "Command required approval ({description}) and was approved by the user."
                )),
            },
            Choice::Session => {
                self.state()
                    .sessions
                    .entry(check.session_key.clone())
                    .or_default()
                    .extend(keys.iter().cloned());
                GateDecision::Approved {
                    human: true,
                    note: Some(format!(
                        "Command required approval ({description}) and was approved by the user for this session."
                    )),
                }
            }
            Choice::Always => {
                let mut saved = Vec::new();
                {
                    let mut state = self.state();
                    state.permanent.extend(keys.iter().cloned());
                    state
                        .sessions
                        .entry(check.session_key.clone())
                        .or_default()
                        .extend(keys.iter().cloned());
                }
                for key in keys {
                    if let Err(err) = self.store.add(key) {
                        tracing::warn!(%err, key, "could not save the approval");
                        saved.push(format!(" (not saved: {err})"));
                    }
                }
                GateDecision::Approved {
                    human: true,
                    note: Some(format!(
                        "Command required approval ({description}) and was approved by the user permanently{}.",
                        saved.first().map(String::as_str).unwrap_or_default()
                    )),
                }
            }
            Choice::Deny { reason } => GateDecision::Blocked {
                message: messages::denied(reason.as_deref()),
                hardline: false,
            },
            Choice::Timeout => GateDecision::Blocked {
                message: messages::timeout(self.settings.timeout),
                hardline: false,
            },
        }
    }
}
