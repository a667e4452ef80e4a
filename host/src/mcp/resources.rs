//! A server's resources and prompts as four tools, with Hermes' names and result
//! shapes: `mcp__<server>__list_resources`, `read_resource`, `list_prompts`,
//! `get_prompt`.
//!
//! They are registered beside the server's own tools when its `initialize` answer
//! advertises the capability (`resources` / `prompts`) and the section does not turn
//! them off (`tools.resources = false`, `tools.prompts = false`, as in Hermes). A
//! server tool with the same raw name wins over the utility. Results:
//!
//! - `list_resources` → `{"resources": [{"uri", "name", "description"?, "mimeType"?}]}`
//! - `read_resource {uri}` → `{"result": "<text parts joined by \n>"}`; binary parts
//!   are saved under the media directory and named by a line, like binary tool output;
//! - `list_prompts` → `{"prompts": [{"name", "description"?, "arguments"?: [{"name",
//!   "description"?, "required"}]}]}`
//! - `get_prompt {name, arguments?}` → `{"messages": [{"role", "content"}],
//!   "description"?}`; non-string argument values are sent as their JSON text (MCP
//!   prompt arguments are strings).
//!
//! Every failure is `{"error": ...}`; see docs/mcp.md ("Resources and prompts").

use std::path::Path;
use std::time::Duration;

use rmcp::model::{
    ContentBlock, GetPromptRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::results::{error_value, resource_text};
use super::rmcp_errors::service_error;
use super::session::{CallFailure, Session};

/// What a server offers besides tools (from its `initialize` answer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offers {
    /// `capabilities.resources` was present.
    pub resources: bool,
    /// `capabilities.prompts` was present.
    pub prompts: bool,
}

/// One of the four tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utility {
    /// `resources/list`, every page.
    ListResources,
    /// `resources/read`.
    ReadResource,
    /// `prompts/list`, every page.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt,
}

impl Utility {
    /// All four, in Hermes' order.
    pub const ALL: [Utility; 4] = [
        Utility::ListResources,
        Utility::ReadResource,
        Utility::ListPrompts,
        Utility::GetPrompt,
    ];

    /// The raw tool name (`mcp__<server>__` is prefixed).
    pub fn raw_name(self) -> &'static str {
        match self {
            Utility::ListResources => "list_resources",
            Utility::ReadResource => "read_resource",
            Utility::ListPrompts => "list_prompts",
            Utility::GetPrompt => "get_prompt",
        }
    }

    /// True when the server offers it and the section leaves it on.
    pub fn wanted(self, offers: Offers, filter: &super::config::ToolFilter) -> bool {
        match self {
            Utility::ListResources | Utility::ReadResource => offers.resources && filter.resources,
            Utility::ListPrompts | Utility::GetPrompt => offers.prompts && filter.prompts,
        }
    }

    /// Hermes' description.
    pub fn description(self, server: &str) -> String {
        match self {
            Utility::ListResources => {
                format!("List available resources from MCP server '{server}'")
            }
            Utility::ReadResource => format!("Read a resource by URI from MCP server '{server}'"),
            Utility::ListPrompts => format!("List available prompts from MCP server '{server}'"),
            Utility::GetPrompt => format!("Get a prompt by name from MCP server '{server}'"),
        }
    }

    /// Hermes' parameter schema.
    pub fn parameters(self) -> Value {
        match self {
            Utility::ListResources | Utility::ListPrompts => {
                json!({"type": "object", "properties": {}})
            }
            Utility::ReadResource => json!({
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "URI of the resource to read"}},
                "required": ["uri"],
            }),
            Utility::GetPrompt => json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Name of the prompt to retrieve"},
                    "arguments": {
                        "type": "object",
                        "description": "Optional arguments to pass to the prompt",
                        "properties": {},
                        "additionalProperties": true,
                    },
                },
                "required": ["name"],
            }),
        }
    }

    /// MCP annotations: reading is read-only and idempotent.
    pub fn annotations(self) -> Value {
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    }
}

/// `read_resource` arguments.
#[derive(Debug, Deserialize)]
struct ReadArgs {
    uri: String,
}

/// `get_prompt` arguments.
#[derive(Debug, Deserialize)]
struct PromptArgs {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// Where a utility's answer comes from and goes.
pub struct Request<'a> {
    /// The server's name.
    pub server: &'a str,
    /// The live session.
    pub session: &'a Session,
    /// The call timeout.
    pub timeout: Duration,
    /// Cancels the request.
    pub cancel: &'a CancellationToken,
    /// Where binary resource content is saved.
    pub media_dir: &'a Path,
}

/// Bad arguments, as the model reads them (Hermes' wording).
pub fn check_args(utility: Utility, args: &Value) -> Result<(), Value> {
    let missing = |name: &str| error_value(&format!("Missing required parameter '{name}'"));
    match utility {
        Utility::ReadResource => serde_json::from_value::<ReadArgs>(args.clone())
            .map(drop)
            .map_err(|_| missing("uri")),
        Utility::GetPrompt => serde_json::from_value::<PromptArgs>(args.clone())
            .map(drop)
            .map_err(|_| missing("name")),
        Utility::ListResources | Utility::ListPrompts => Ok(()),
    }
}

/// Run `utility` with `args` (already checked by [`check_args`]).
pub async fn run(
    utility: Utility,
    args: Value,
    request: Request<'_>,
) -> Result<Value, CallFailure> {
    let timeout = request.timeout;
    let work = answer(utility, args, &request);
    tokio::select! {
        outcome = tokio::time::timeout(timeout, work) => match outcome {
            Ok(result) => result.map_err(|err| classify(err, timeout)),
            Err(_) => Err(CallFailure::Timeout(timeout)),
        },
        () = request.cancel.cancelled() => Err(CallFailure::Cancelled),
    }
}

fn classify(err: ServiceError, timeout: Duration) -> CallFailure {
    match err {
        ServiceError::Timeout { .. } => CallFailure::Timeout(timeout),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            CallFailure::TransportClosed(service_error(&err))
        }
        other => CallFailure::Rejected(service_error(&other)),
    }
}

async fn answer(
    utility: Utility,
    args: Value,
    request: &Request<'_>,
) -> Result<Value, ServiceError> {
    let peer = request.session.peer();
    match utility {
        Utility::ListResources => {
            let resources = peer.list_all_resources().await?;
            let listed: Vec<Value> = resources
                .iter()
                .map(|r| {
                    let mut entry = json!({"uri": r.uri, "name": r.name});
                    if let Some(d) = r.description.as_deref().filter(|d| !d.is_empty()) {
                        entry["description"] = json!(d);
                    }
                    if let Some(m) = r.mime_type.as_deref().filter(|m| !m.is_empty()) {
                        entry["mimeType"] = json!(m);
                    }
                    entry
                })
                .collect();
            Ok(json!({"resources": listed}))
        }
        Utility::ReadResource => {
            let ReadArgs { uri } =
                serde_json::from_value(args).unwrap_or(ReadArgs { uri: String::new() });
            let result = peer
                .read_resource(ReadResourceRequestParams::new(uri))
                .await?;
            Ok(json!({"result": read_text(request.server, &result.contents, request.media_dir)}))
        }
        Utility::ListPrompts => {
            let prompts = peer.list_all_prompts().await?;
            let listed: Vec<Value> = prompts.iter().map(prompt_entry).collect();
            Ok(json!({"prompts": listed}))
        }
        Utility::GetPrompt => {
            let PromptArgs { name, arguments } =
                serde_json::from_value(args).unwrap_or(PromptArgs {
                    name: String::new(),
                    arguments: None,
                });
            let mut params = GetPromptRequestParams::new(name);
            params.arguments = arguments.map(stringify_values);
            let result = peer.get_prompt(params).await?;
            let messages: Vec<Value> = result
                .messages
                .iter()
                .map(|m| {
                    json!({
                        "role": serde_json::to_value(&m.role).unwrap_or(Value::Null),
                        "content": message_text(request.server, &m.content, request.media_dir),
                    })
                })
                .collect();
            let mut out = json!({"messages": messages});
            if let Some(d) = result.description.as_deref().filter(|d| !d.is_empty()) {
                out["description"] = json!(d);
            }
            Ok(out)
        }
    }
}

/// Text parts joined by newlines; binary parts saved and named.
fn read_text(server: &str, contents: &[ResourceContents], media_dir: &Path) -> String {
    contents
        .iter()
        .filter_map(|c| resource_text(server, c, media_dir).map(|(_, text)| text))
        .collect::<Vec<_>>()
        .join("\n")
}

fn prompt_entry(prompt: &rmcp::model::Prompt) -> Value {
    let mut entry = json!({"name": prompt.name});
    if let Some(d) = prompt.description.as_deref().filter(|d| !d.is_empty()) {
        entry["description"] = json!(d);
    }
    if let Some(arguments) = prompt.arguments.as_ref().filter(|a| !a.is_empty()) {
        let listed: Vec<Value> = arguments
            .iter()
            .map(|a| {
                let mut arg = json!({"name": a.name, "required": a.required.unwrap_or(false)});
                if let Some(d) = a.description.as_deref().filter(|d| !d.is_empty()) {
                    arg["description"] = json!(d);
                }
                arg
            })
            .collect();
        entry["arguments"] = json!(listed);
    }
    entry
}

/// A prompt message's content as text (Hermes: the text, else a description).
fn message_text(server: &str, content: &ContentBlock, media_dir: &Path) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Resource(embedded) => resource_text(server, &embedded.resource, media_dir)
            .map(|(uri, text)| format!("[resource {uri}]\n{text}"))
            .unwrap_or_default(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// MCP prompt arguments are strings: other JSON values are sent as their text.
fn stringify_values(arguments: Map<String, Value>) -> Map<String, Value> {
    arguments
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(_) => (k, v),
            other => (k, Value::String(other.to_string())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_with_hermes_wording() {
        let table = [
            (
                Utility::ReadResource,
                json!({}),
                Some("Missing required parameter 'uri'"),
            ),
            (
                Utility::ReadResource,
                json!({"uri": 3}),
                Some("Missing required parameter 'uri'"),
            ),
            (Utility::ReadResource, json!({"uri": "file:///x"}), None),
            (
                Utility::GetPrompt,
                json!({"arguments": {}}),
                Some("Missing required parameter 'name'"),
            ),
            (
                Utility::GetPrompt,
                json!({"name": "p", "arguments": {"a": 1}}),
                None,
            ),
            (Utility::ListPrompts, json!(null), None),
        ];
        for (utility, args, error) in table {
            let got = check_args(utility, &args).err();
            assert_eq!(
                got.as_ref().and_then(|v| v["error"].as_str()),
                error,
                "{utility:?} {args}"
            );
        }
    }

    #[test]
    fn prompt_arguments_become_strings() {
        let args = json!({"a": "x", "b": 2, "c": true})
            .as_object()
            .cloned()
            .unwrap();
        assert_eq!(
            Value::Object(stringify_values(args)),
            json!({"a": "x", "b": "2", "c": "true"})
        );
    }

    #[test]
    fn utilities_follow_offers_and_the_section() {
        let filter = super::super::config::ToolFilter::default();
        let only_resources = Offers {
            resources: true,
            prompts: false,
        };
        let wanted: Vec<&str> = Utility::ALL
            .iter()
            .filter(|u| u.wanted(only_resources, &filter))
            .map(|u| u.raw_name())
            .collect();
        assert_eq!(wanted, ["list_resources", "read_resource"]);
        let off = super::super::config::ToolFilter {
            resources: false,
            ..filter
        };
        assert!(!Utility::ReadResource.wanted(only_resources, &off));
    }
}
