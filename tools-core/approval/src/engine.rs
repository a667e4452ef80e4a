//! The approval flow: [`ApprovalEngine`] is the [`ApprovalGate`] the terminal tool calls.
//!
//! Order for one command:
//! 1. the hardline floor (always; also on isolated backends) → blocked, unconditionally;
//! 2. `approvals.deny` globs → blocked, in every mode and on every backend;
//! 3. isolated backend (no host access) → approved;
//! 4. not dangerous → approved;
//! 5. `mode = "off"` → approved (with a note);
//! 6. every rule already approved (`command_allowlist`, this session) or the whole command
//!    matches an allowlist glob → approved;
//! 7. smart mode → the model may approve (once), deny (a human may still override once),
//!    or escalate;
//! 8. a human: the embedder's callback, else the terminal prompt; with nobody to ask,
//!    `approvals.no_human` decides (default deny, with a message saying why).
//!
//! Observers (`pre_approval_request`, `post_approval_response`) fire for every decision
//! about a flagged command, with the command redacted; the real command is what runs.
//!
//! The command is judged knowing which files the task's earlier commands downloaded, and
//! what a command that was allowed to run downloads is remembered (`downloads.rs`).
//!
//! Asking a human (step 8 and the human-only and strict cases) and what the answer does
//! are in `engine_human.rs`; the texts of the refusals in [`messages`].

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::detect::{command_lines, detect_in_task};
use super::downloads::TaskDownloads;
use super::gate::{ActionCheck, ApprovalGate, CommandCheck, GateDecision};
use super::glob;
use super::messages;
use super::rules;
use super::settings::{ApprovalMode, ApprovalSettings};
use super::smart::{SmartApprover, SmartVerdict};
use super::strict::provably_read_only;
use super::surface::{ApprovalRequest, Surfaces};
use super::verdict::{Finding, Verdict};
use crate::observer::{ApprovalEvent, ApprovalObserver};
use crate::redact::redact;
use crate::store::AllowlistStore;

#[path = "engine_human.rs"]
mod human;

/// Where "always" approvals are stored in `config.toml`.
pub const ALLOWLIST_KEYS: [&str; 2] = ["approvals", "command_allowlist"];

#[derive(Debug, Default)]
struct State {
    permanent: HashSet<String>,
    sessions: HashMap<String, HashSet<String>>,
    downloads: TaskDownloads,
}

/// The approval gate built from configuration.
pub struct ApprovalEngine {
    settings: ApprovalSettings,
    mode: ApprovalMode,
    store: Arc<dyn AllowlistStore>,
    hooks: Arc<dyn ApprovalObserver>,
    surfaces: Surfaces,
    smart: Option<SmartApprover>,
    /// Allowlist entries that are not rule keys: whole-command globs.
    command_globs: Vec<String>,
    state: Mutex<State>,
}

impl std::fmt::Debug for ApprovalEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalEngine")
            .field("mode", &self.mode)
            .field("store", &self.store)
            .field("surfaces", &self.surfaces)
            .finish_non_exhaustive()
    }
}

impl ApprovalEngine {
    /// Build the gate. `store` keeps "always" approvals (toolhost's writes them to
    /// `config.toml`), `hooks` observes every decision about a flagged command, `surfaces`
    /// says who can be asked.
    pub fn new(
        settings: ApprovalSettings,
        store: Arc<dyn AllowlistStore>,
        hooks: Arc<dyn ApprovalObserver>,
        surfaces: Surfaces,
    ) -> Arc<Self> {
        let mode = settings.mode();
        let smart =
            (mode == ApprovalMode::Smart).then(|| SmartApprover::from_settings(&settings.smart));
        let mut permanent = HashSet::new();
        let mut command_globs = Vec::new();
        for entry in &settings.command_allowlist {
            match rules::by_key(entry) {
                Some(rule) if rule.hardline => {
                    tracing::warn!(key = entry, "hardline rules cannot be allowlisted; ignored");
                }
                Some(_) => {
                    permanent.insert(entry.clone());
                }
                None => command_globs.push(entry.clone()),
            }
        }
        Arc::new(ApprovalEngine {
            mode,
            store,
            hooks,
            surfaces,
            smart,
            command_globs,
            state: Mutex::new(State {
                permanent,
                sessions: HashMap::new(),
                downloads: TaskDownloads::default(),
            }),
            settings,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Rule keys approved permanently (in memory).
    pub fn permanent_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.state().permanent.iter().cloned().collect();
        keys.sort();
        keys
    }

    /// Forget a permanent approval in memory (the CLI's `revoke` edits the file).
    pub fn revoke(&self, key: &str) -> bool {
        self.state().permanent.remove(key)
    }

    /// Drop every approval of a session (and what its commands downloaded).
    pub fn clear_session(&self, session_key: &str) {
        let mut state = self.state();
        state.sessions.remove(session_key);
        state.downloads.forget(session_key);
    }

    fn approved(&self, session_key: &str, key: &str) -> bool {
        let state = self.state();
        state.permanent.contains(key)
            || state
                .sessions
                .get(session_key)
                .is_some_and(|keys| keys.contains(key))
    }

    /// The deny glob matching `command`, if any.
    fn deny_match(&self, command: &str) -> Option<&str> {
        if self.settings.deny.is_empty() {
            return None;
        }
        let mut candidates = vec![command.trim().to_ascii_lowercase()];
        candidates.extend(
            command_lines(command)
                .into_iter()
                .map(|l| l.to_ascii_lowercase()),
        );
        self.settings
            .deny
            .iter()
            .map(String::as_str)
            .find(|pattern| {
                let pattern = pattern.trim().to_ascii_lowercase();
                candidates.iter().any(|c| glob::matches(&pattern, c))
            })
    }

    /// A whole-command allowlist glob matches a plain single command.
    fn allowlisted_text(&self, command: &str) -> bool {
        let command = command.trim();
        if self.command_globs.is_empty()
            || command.contains(['\n', ';', '&', '|', '<', '>', '`', '$', '(', ')'])
        {
            return false;
        }
        self.command_globs.iter().any(|g| glob::matches(g, command))
    }

    fn fire(
        &self,
        check: &CommandCheck,
        display: &str,
        description: &str,
        keys: &[String],
        surface: &str,
        choice: Option<&str>,
    ) {
        let event = ApprovalEvent {
            command: display,
            description,
            rule_keys: keys,
            session_key: &check.session_key,
            surface,
            tool_call_id: &check.tool_call_id,
            choice,
        };
        if choice.is_none() {
            self.hooks.pre_approval_request(&event);
        } else {
            self.hooks.post_approval_response(&event);
        }
    }

    /// Fire both observers for a decision taken without asking anyone.
    fn policy(&self, check: &CommandCheck, display: &str, verdict: &Verdict, choice: &str) {
        let keys = verdict.rule_keys();
        let description = verdict.combined_description();
        self.fire(check, display, &description, &keys, "policy", None);
        self.fire(check, display, &description, &keys, "policy", Some(choice));
    }

    /// Decide on one command.
    pub fn decide(&self, check: &CommandCheck) -> GateDecision {
        let task = download_scope(check);
        let earlier = self.state().downloads.earlier(task).to_vec();
        let (verdict, downloads) = detect_in_task(&check.command, &earlier);
        let decision = self.decide_verdict(check, verdict);
        if matches!(decision, GateDecision::Approved { .. }) && !downloads.is_empty() {
            self.state().downloads.record(task, &downloads);
        }
        decision
    }

    /// Decide on one command given the detector's verdict.
    fn decide_verdict(&self, check: &CommandCheck, verdict: Verdict) -> GateDecision {
        let command = check.command.as_str();
        let display = redact(command).into_owned();
        if verdict.hardline() {
            self.policy(check, &display, &verdict, "hardline");
            return GateDecision::Blocked {
                message: messages::hardline(verdict.description().unwrap_or_default()),
                hardline: true,
            };
        }
        if let Some(pattern) = self.deny_match(command) {
            let pattern = pattern.to_string();
            self.policy(check, &display, &verdict, "deny_rule");
            return GateDecision::Blocked {
                message: messages::deny_rule(&pattern),
                hardline: false,
            };
        }
        if !check.host_access {
            return GateDecision::Approved {
                note: None,
                human: false,
            };
        }
        if self.mode == ApprovalMode::Strict {
            if !verdict.dangerous() && provably_read_only(command) {
                return GateDecision::Approved {
                    note: None,
                    human: false,
                };
            }
            let mut findings = verdict.findings;
            if findings.is_empty() {
                findings.push(Finding::new(&rules::STRICT_UNPROVEN));
            }
            return self.ask_human_only(check, &display, &Verdict::from_findings(findings), true);
        }
        if !verdict.dangerous() {
            return GateDecision::Approved {
                note: None,
                human: false,
            };
        }
        let description = verdict.combined_description();
        let human_only = verdict
            .findings
            .iter()
            .any(|f| rules::HUMAN_ONLY.contains(&f.rule));
        if human_only {
            return self.ask_human_only(check, &display, &verdict, false);
        }
        if self.mode == ApprovalMode::Off {
            self.policy(check, &display, &verdict, "off");
            return GateDecision::Approved {
                human: false,
                note: Some(format!(
                    "Command was flagged ({description}) and ran without approval (approvals.mode = \"off\")."
                )),
            };
        }
        let keys = verdict.rule_keys();
        let pending: Vec<String> = keys
            .iter()
            .filter(|k| !self.approved(&check.session_key, k))
            .cloned()
            .collect();
        if pending.is_empty() || self.allowlisted_text(command) {
            self.policy(check, &display, &verdict, "allowlist");
            // A remembered approval or an allowlist entry is a rule, not a human's
            // answer about this command: the kernel floor stays (docs/approvals.md).
            return GateDecision::Approved {
                human: false,
                note: Some(format!(
                    "Command required approval ({description}) and was approved earlier                      (allowlist or a remembered approval); it ran under the kernel floor."
                )),
            };
        }
        let pending_description = verdict
            .findings
            .iter()
            .filter(|f| pending.iter().any(|k| k == f.rule.key))
            .map(|f| f.description)
            .collect::<Vec<_>>()
            .join("; ");

        let mut smart_denied = false;
        if let Some(smart) = &self.smart {
            self.fire(
                check,
                &display,
                &pending_description,
                &pending,
                "smart",
                None,
            );
            let answer = crate::bridge::block_on(smart.judge(&display, &pending_description))
                .unwrap_or_else(|e| SmartVerdict::Escalate(e.to_string()));
            let choice = match &answer {
                SmartVerdict::Approve => "smart_approve",
                SmartVerdict::Deny => "smart_deny",
                SmartVerdict::Escalate(reason) => {
                    tracing::info!(%reason, "smart approval escalated to a human");
                    "smart_escalate"
                }
            };
            self.fire(
                check,
                &display,
                &pending_description,
                &pending,
                "smart",
                Some(choice),
            );
            match answer {
                SmartVerdict::Approve => {
                    return GateDecision::Approved {
                        human: false,
                        note: Some(format!(
                            "Command required approval ({pending_description}) and was approved by the smart approver."
                        )),
                    };
                }
                SmartVerdict::Deny => smart_denied = true,
                SmartVerdict::Escalate(_) => {}
            }
        }

        let request = ApprovalRequest {
            command: display.clone(),
            description: pending_description.clone(),
            rule_keys: pending.clone(),
            session_key: check.session_key.clone(),
            tool_call_id: check.tool_call_id.clone(),
            allow_always: true,
            smart_denied,
        };
        let timeout = Duration::from_secs(self.settings.timeout.max(1));
        let asked = self.ask_human(&request, timeout);
        let Some((surface, choice)) = asked else {
            return self.no_human(check, &display, &request);
        };
        self.fire(
            check,
            &display,
            &pending_description,
            &pending,
            surface,
            Some(choice.as_str()),
        );
        self.apply(check, &pending, &pending_description, choice)
    }
}

/// Whose downloads a command sees: its task's (one terminal, one working directory),
/// else its session's.
fn download_scope(check: &CommandCheck) -> &str {
    if check.task_id.is_empty() {
        &check.session_key
    } else {
        &check.task_id
    }
}

impl ApprovalGate for ApprovalEngine {
    fn check(&self, check: &CommandCheck) -> GateDecision {
        self.decide(check)
    }

    fn check_action(&self, action: &ActionCheck) -> GateDecision {
        self.decide_action(action)
    }
}
