//! Approval prompts answered by the MCP client's user, through MCP elicitation.
//!
//! A call served over MCP may hit the approval gate (a dangerous terminal command).
//! There is no terminal to prompt on — in stdio mode stdin *is* the protocol — so the
//! question goes to the client that made the call, as a form elicitation with one
//! `decision` field (`once`, `session`, `always`, `deny`). The router finds that client
//! by the call's `tool_call_id`, which the server registers for the duration of the
//! call. When the client did not declare the elicitation capability, or the call did
//! not come over MCP, [`ElicitationRouter::ask`] answers `None` and the approval engine
//! applies its configured non-interactive policy. No answer within the timeout, a
//! declined or cancelled form, or an unreadable answer all mean deny.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tools_core::approval::{ApprovalCallback, ApprovalRequest, BoxFuture, Choice};
use tools_core::redact::redact;

/// How long the user has to answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What the user is asked about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalPrompt {
    /// The call that needs the approval (routes the question to its client).
    pub tool_call_id: String,
    /// The command exactly as it would run (redacted before it is shown).
    pub command: String,
    /// Why it needs approval.
    pub description: String,
    /// The answers offered (empty: all four).
    pub choices: Vec<ApprovalAnswer>,
}

/// The user's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run it this once.
    Once,
    /// Allow this kind of command for the rest of the session.
    Session,
    /// Allow it from now on (persisted by the approval engine).
    Always,
    /// Do not run it.
    Deny,
}

impl ApprovalAnswer {
    const ALL: [ApprovalAnswer; 4] = [
        ApprovalAnswer::Once,
        ApprovalAnswer::Session,
        ApprovalAnswer::Always,
        ApprovalAnswer::Deny,
    ];

    /// The form value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalAnswer::Once => "once",
            ApprovalAnswer::Session => "session",
            ApprovalAnswer::Always => "always",
            ApprovalAnswer::Deny => "deny",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "once" | "allow once" | "yes" | "approve" => Some(ApprovalAnswer::Once),
            "session" | "allow for this session" => Some(ApprovalAnswer::Session),
            "always" | "always allow" => Some(ApprovalAnswer::Always),
            "deny" | "no" => Some(ApprovalAnswer::Deny),
            _ => None,
        }
    }
}

/// Routes approval prompts to the MCP client of the call that raised them.
#[derive(Debug)]
pub struct ElicitationRouter {
    routes: Mutex<HashMap<String, Peer<RoleServer>>>,
    timeout: Duration,
}

impl Default for ElicitationRouter {
    fn default() -> Self {
        ElicitationRouter::new(DEFAULT_TIMEOUT)
    }
}

/// Removes a route when the call ends.
#[derive(Debug)]
pub struct RouteGuard {
    router: Arc<ElicitationRouter>,
    tool_call_id: String,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.router.routes().remove(&self.tool_call_id);
    }
}

impl ElicitationRouter {
    /// A router whose prompts time out after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        ElicitationRouter {
            routes: Mutex::new(HashMap::new()),
            timeout,
        }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer<RoleServer>>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Route prompts of call `tool_call_id` to `peer` until the guard is dropped.
    pub fn route(self: &Arc<Self>, tool_call_id: &str, peer: Peer<RoleServer>) -> RouteGuard {
        self.routes().insert(tool_call_id.to_string(), peer);
        RouteGuard {
            router: Arc::clone(self),
            tool_call_id: tool_call_id.to_string(),
        }
    }

    /// True when a prompt for `tool_call_id` would reach a user.
    pub fn can_ask(&self, tool_call_id: &str) -> bool {
        self.routes()
            .get(tool_call_id)
            .is_some_and(supports_form_elicitation)
    }

    /// Ask the user of the call's client. `None`: no client can be asked (the caller
    /// applies its non-interactive policy). Any failure to get a clear answer is
    /// `Some(Deny)`.
    pub async fn ask(&self, prompt: &ApprovalPrompt) -> Option<ApprovalAnswer> {
        let peer = self
            .routes()
            .get(&prompt.tool_call_id)
            .filter(|peer| supports_form_elicitation(peer))
            .cloned()?;
        let params = match request(prompt) {
            Ok(params) => params,
            Err(err) => {
                tracing::error!(%err, "approval elicitation schema rejected; denying");
                return Some(ApprovalAnswer::Deny);
            }
        };
        // rmcp sends `notifications/cancelled` for the elicitation when it times out,
        // so the client can take the stale form off its user's screen.
        let answer = match peer
            .create_elicitation_with_timeout(params, Some(self.timeout))
            .await
        {
            Err(rmcp::service::ServiceError::Timeout { .. }) => {
                tracing::info!(tool_call_id = %prompt.tool_call_id, "approval elicitation timed out; denying");
                ApprovalAnswer::Deny
            }
            Err(err) => {
                tracing::warn!(%err, "approval elicitation failed; denying");
                ApprovalAnswer::Deny
            }
            Ok(result) => match result.action {
                ElicitationAction::Accept => result
                    .content
                    .as_ref()
                    .and_then(|c| c.get("decision"))
                    .and_then(Value::as_str)
                    .and_then(ApprovalAnswer::parse)
                    .filter(|answer| offered(prompt).contains(answer))
                    .unwrap_or(ApprovalAnswer::Deny),
                _ => ApprovalAnswer::Deny,
            },
        };
        Some(answer)
    }
}

/// The approval engine asks through the router: the client of the call, by its
/// `tool_call_id`; unavailable (so the engine applies `approvals.no_human`) when that
/// client cannot be asked.
impl ApprovalCallback for ElicitationRouter {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Choice> {
        Box::pin(async move {
            let mut choices = vec![ApprovalAnswer::Once];
            if !request.smart_denied {
                choices.push(ApprovalAnswer::Session);
                if request.allow_always {
                    choices.push(ApprovalAnswer::Always);
                }
            }
            choices.push(ApprovalAnswer::Deny);
            let prompt = ApprovalPrompt {
                tool_call_id: request.tool_call_id.clone(),
                command: request.command.clone(),
                description: request.description.clone(),
                choices,
            };
            match self.ask(&prompt).await {
                Some(ApprovalAnswer::Once) => Choice::Once,
                Some(ApprovalAnswer::Session) => Choice::Session,
                Some(ApprovalAnswer::Always) => Choice::Always,
                Some(ApprovalAnswer::Deny) => Choice::Deny {
                    reason: Some("the user denied it in the MCP client".into()),
                },
                None => Choice::Deny {
                    reason: Some("the MCP client cannot ask its user".into()),
                },
            }
        })
    }

    fn available(&self, request: &ApprovalRequest) -> bool {
        self.can_ask(&request.tool_call_id)
    }

    fn surface(&self) -> &'static str {
        "mcp-elicitation"
    }
}

fn offered(prompt: &ApprovalPrompt) -> Vec<ApprovalAnswer> {
    if prompt.choices.is_empty() {
        ApprovalAnswer::ALL.to_vec()
    } else {
        prompt.choices.clone()
    }
}

fn supports_form_elicitation(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

fn request(prompt: &ApprovalPrompt) -> Result<ElicitRequestParams, serde_json::Error> {
    let choices: Vec<&str> = offered(prompt)
        .into_iter()
        .map(ApprovalAnswer::as_str)
        .collect();
    let schema = json!({
        "type": "object",
        "title": "Approve command",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "once: run it now; session: allow this kind of command for this session; always: allow it from now on; deny: do not run it",
                "enum": choices,
            }
        },
        "required": ["decision"],
    });
    let Value::Object(schema) = schema else {
        return Err(serde::de::Error::custom("schema is not an object"));
    };
    let message = format!(
        "toolhost: a tool wants to run a command that needs your approval.\n\nCommand: {}\nWhy: {}\n\nAllow it?",
        redact(&prompt.command),
        prompt.description
    );
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::from_json_schema(schema)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        for (text, want) in [
            ("once", Some(ApprovalAnswer::Once)),
            (" Session ", Some(ApprovalAnswer::Session)),
            ("always", Some(ApprovalAnswer::Always)),
            ("deny", Some(ApprovalAnswer::Deny)),
            ("sure", None),
        ] {
            assert_eq!(ApprovalAnswer::parse(text), want, "{text}");
        }
    }

    #[test]
    fn request_is_a_valid_form_with_redacted_command() {
        let params = request(&ApprovalPrompt {
            tool_call_id: "c".into(),
            command: "curl -H 'Authorization: Bearer abcdef123456789xyz' x | sh".into(),
            description: "pipe remote content to a shell".into(),
            choices: vec![ApprovalAnswer::Once, ApprovalAnswer::Deny],
        })
        .unwrap();
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = params
        else {
            panic!("not a form");
        };
        assert!(message.contains("Bearer [REDACTED]"), "{message}");
        assert!(message.contains("pipe remote content"));
        let schema = serde_json::to_value(&requested_schema).unwrap();
        assert_eq!(schema["required"], json!(["decision"]));
        assert_eq!(
            schema["properties"]["decision"]["enum"],
            json!(["once", "deny"])
        );
    }

    /// A client that declares form elicitation, never answers a form, and records the
    /// ids of the forms it was sent and of the `notifications/cancelled` it received.
    #[derive(Clone, Default)]
    struct SilentClient {
        asked: Arc<Mutex<Vec<rmcp::model::RequestId>>>,
        cancelled: Arc<Mutex<Vec<Option<rmcp::model::RequestId>>>>,
    }

    impl rmcp::ClientHandler for SilentClient {
        fn get_info(&self) -> rmcp::model::ClientConfig {
            rmcp::model::ClientConfig::new(
                rmcp::model::ClientCapabilities::builder()
                    .enable_elicitation()
                    .build(),
                rmcp::model::Implementation::new("silent", "0"),
            )
        }

        async fn create_elicitation(
            &self,
            _request: ElicitRequestParams,
            context: rmcp::service::RequestContext<rmcp::RoleClient>,
        ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
            self.asked.lock().unwrap().push(context.id.clone());
            std::future::pending().await
        }

        async fn on_cancelled(
            &self,
            params: rmcp::model::CancelledNotificationParam,
            _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            self.cancelled.lock().unwrap().push(params.request_id);
        }
    }

    #[derive(Clone)]
    struct BareServer;

    impl rmcp::ServerHandler for BareServer {}

    #[tokio::test]
    async fn a_timed_out_prompt_is_denied_and_cancelled_at_the_client() {
        use rmcp::ServiceExt as _;
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        let client = SilentClient::default();
        let server =
            tokio::spawn(async move { BareServer.serve(tokio::io::split(server_io)).await });
        let client_service = client
            .clone()
            .serve(tokio::io::split(client_io))
            .await
            .unwrap();
        let server_service = server.await.unwrap().unwrap();
        let router = Arc::new(ElicitationRouter::new(Duration::from_millis(200)));
        let _route = router.route("call-1", server_service.peer().clone());
        let prompt = ApprovalPrompt {
            tool_call_id: "call-1".into(),
            command: "rm -rf /tmp/x".into(),
            description: "recursive delete".into(),
            choices: Vec::new(),
        };
        assert_eq!(router.ask(&prompt).await, Some(ApprovalAnswer::Deny));
        let asked = client.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "the form never reached the client");
        let mut cancelled = Vec::new();
        for _ in 0..100 {
            cancelled = client.cancelled.lock().unwrap().clone();
            if !cancelled.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(cancelled, vec![Some(asked[0].clone())]);
        let _ = client_service.cancel().await;
        let _ = server_service.cancel().await;
    }

    #[tokio::test]
    async fn unrouted_calls_cannot_ask() {
        let router = ElicitationRouter::default();
        assert!(!router.can_ask("x"));
        let prompt = ApprovalPrompt {
            tool_call_id: "x".into(),
            ..ApprovalPrompt::default()
        };
        assert_eq!(router.ask(&prompt).await, None);
    }
}
