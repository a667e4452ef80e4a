//! The MCP server handler: `tools/list` and `tools/call` over toolhost's pipeline.
//!
//! A call runs [`Dispatcher::call_async`] — argument parsing, coercion, JSON-Schema
//! validation, `pre_tool_call` hooks, the approval gate inside the tool, the handler,
//! `post_tool_call` and transform hooks, the result size limit — exactly as for an
//! agent's own tool calls. The result string goes back as one text block; a result whose
//! status is not ok is flagged `isError`. The client's `notifications/cancelled` fires
//! the call's cancellation token; the pipeline gets a short grace period to wind down
//! (so a proxied MCP call can pass the cancellation on) before the call is abandoned.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tools_core::{CallStatus, ToolContext, ToolSource};

use super::annotations::core_annotations;
use super::elicitation::ElicitationRouter;
use super::list_changed;
use super::listing::{ExposedTool, exposed_tools, is_exposed};
use super::progress;
use crate::dispatch::Dispatcher;
use crate::toolsets::{ToolsetSelection, Toolsets};

/// How long a cancelled call may take to wind down before it is abandoned.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// What every session of one server shares.
#[derive(Debug)]
pub struct ServerCore {
    /// The pipeline calls run through.
    pub dispatcher: Dispatcher,
    /// The toolset catalogue (`[toolsets]`).
    pub toolsets: Toolsets,
    /// Which toolsets are exposed.
    pub selection: ToolsetSelection,
    /// Approval prompts to clients.
    pub elicitation: Arc<ElicitationRouter>,
    /// Heartbeat interval for calls that asked for progress.
    pub progress_interval: Duration,
    /// MCP servers still connecting: `tools/list` waits a little for them.
    pub mcp_ready: crate::mcp::readiness::Readiness,
}

/// The handler of one MCP session.
#[derive(Clone, Debug)]
pub struct ToolhostServer {
    core: Arc<ServerCore>,
    session: String,
}

impl ToolhostServer {
    /// A handler for a new session.
    pub fn new(core: Arc<ServerCore>) -> Self {
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed) + 1;
        ToolhostServer {
            core,
            session: format!("mcp-{}-{n}", std::process::id()),
        }
    }

    fn tool(&self, exposed: ExposedTool) -> Tool {
        let source = self
            .core
            .dispatcher
            .registry()
            .get(&exposed.name)
            .map(|entry| entry.source.clone());
        let mut tool = Tool::default();
        match source {
            Some(ToolSource::Core) => {
                if let Some((title, annotations)) = core_annotations(&exposed.name) {
                    tool.title = Some(title);
                    tool.annotations = Some(annotations);
                }
            }
            Some(ToolSource::Mcp(_)) => {
                if let Some(meta) = crate::mcp::upstream::get(&exposed.name) {
                    tool.title = meta.title;
                    tool.annotations = meta.annotations;
                    tool.output_schema = meta.output_schema;
                }
            }
            _ => {}
        }
        tool.name = Cow::Owned(exposed.name);
        tool.description = Some(Cow::Owned(exposed.description));
        tool.input_schema = Arc::new(exposed.parameters);
        tool
    }
}

impl ServerHandler for ToolhostServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
            .with_server_info(
                Implementation::new("toolhost", env!("CARGO_PKG_VERSION"))
                    .with_title("toolhost")
                    .with_description("toolhost's tools: core tools, plugins and MCP servers, behind hooks and the approval gate"),
            )
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(
                "Tools run through toolhost's pipeline: arguments are validated, hooks may block or rewrite calls, and dangerous commands need approval (asked through elicitation when this client supports it). Results are JSON strings; {\"error\": ...} means the call failed.",
            )
    }

    /// Up to 2025-11-25: later revisions forbid the server-to-client requests that
    /// approval elicitation needs.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(list_changed::watch(
            Arc::clone(&self.core),
            context.peer,
            list_changed::WATCH_INTERVAL,
        ));
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Every tool is listed in one page, without a nextCursor: any cursor is one
        // toolhost never handed out.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!(
                    "Invalid cursor {cursor:?}: toolhost lists every tool in one page and hands out no cursors"
                ),
                None,
            ));
        }
        let core = &self.core;
        core.mcp_ready.wait(crate::mcp::readiness::LIST_GRACE).await;
        let tools = exposed_tools(core.dispatcher.registry(), &core.toolsets, &core.selection)
            .into_iter()
            .map(|exposed| self.tool(exposed))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    // Not served: rmcp's defaults answer with the bare method name as the message.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(method_not_found("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(method_not_found("resources/templates/list"))
    }

    async fn read_resource(
        &self,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Err(method_not_found("resources/read"))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(method_not_found("prompts/list"))
    }

    async fn get_prompt(
        &self,
        _request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Err(method_not_found("prompts/get"))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(method_not_found(&request.method))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let core = &self.core;
        if !is_exposed(
            core.dispatcher.registry(),
            &core.toolsets,
            &core.selection,
            &name,
        ) {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        }
        let args_json = request
            .arguments
            .map(|args| Value::Object(args).to_string())
            .unwrap_or_else(|| "{}".to_string());
        let ctx = ToolContext {
            task_id: self.session.clone(),
            session_id: self.session.clone(),
            tool_call_id: format!("{}-{}", self.session, context.id),
            user_task: None,
            cancel: context.ct.clone(),
        };
        let _route = self
            .core
            .elicitation
            .route(&ctx.tool_call_id, context.peer.clone());
        let _heartbeat = progress::start(
            context.peer.clone(),
            context.id.clone(),
            context.meta.get_progress_token(),
            name.clone(),
            &ctx.tool_call_id,
            self.core.progress_interval,
        );
        tracing::debug!(tool = %name, call = %ctx.tool_call_id, "MCP tools/call");
        let call = self.core.dispatcher.call_async(&name, &args_json, &ctx);
        tokio::pin!(call);
        let outcome = tokio::select! {
            outcome = &mut call => outcome,
            () = context.ct.cancelled() => {
                tracing::info!(tool = %name, call = %ctx.tool_call_id, "MCP tools/call cancelled by the client");
                match tokio::time::timeout(CANCEL_GRACE, &mut call).await {
                    Ok(outcome) => outcome,
                    Err(_) => tools_core::DispatchResult::error_with_status(
                        format!("{name} was cancelled by the client"),
                        CallStatus::Cancelled,
                    ),
                }
            }
        };
        let structured = (outcome.status == CallStatus::Ok)
            .then(|| crate::mcp::upstream::get(&name))
            .flatten()
            .and_then(|meta| meta.output_schema)
            .and_then(|schema| structured_result(&outcome.text, &schema));
        let mut result = CallToolResult::success(vec![ContentBlock::text(outcome.text)]);
        result.structured_content = structured;
        if outcome.status != CallStatus::Ok {
            result.is_error = Some(true);
        }
        Ok(result.into())
    }
}

/// The structured result of a re-served tool that declares an `outputSchema` (clients
/// reject a successful result without one): toolhost's `{"result": ...}` holds the
/// upstream structured content itself, or text that is its JSON (the copy kept when
/// the server mirrored it), or the value of the schema's only property (a mirror such
/// as `{"content": text}` or FastMCP's `{"result": value}`).
fn structured_result(text: &str, schema: &rmcp::model::JsonObject) -> Option<Value> {
    let outer: Value = serde_json::from_str(text).ok()?;
    if let Some(structured) = outer.get("structuredContent").filter(|v| v.is_object()) {
        return Some(structured.clone());
    }
    let result = outer.get("result")?;
    let parsed = match result {
        Value::String(text) => serde_json::from_str::<Value>(text).ok(),
        other => Some(other.clone()),
    };
    if let Some(object) = parsed.as_ref().filter(|v| v.is_object()) {
        return Some(object.clone());
    }
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let (only, _) = properties.iter().next().filter(|_| properties.len() == 1)?;
    let value = match (result, parsed) {
        (Value::String(_), Some(parsed)) if only == "result" => parsed,
        (other, _) => other.clone(),
    };
    Some(serde_json::json!({ only.clone(): value }))
}

/// `-32601` with a message that says what it means (`Method not found: prompts/get`).
pub fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> rmcp::model::JsonObject {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn structured_results_are_rebuilt_from_the_kept_copy() {
        let one = |key: &str| schema(json!({"type": "object", "properties": {key: {}}}));
        for (text, schema, want) in [
            (
                json!({"result": "{\"t\": 1}"}),
                one("x"),
                Some(json!({"t": 1})),
            ),
            (json!({"result": {"t": 1}}), one("x"), Some(json!({"t": 1}))),
            (
                json!({"result": "hi\n"}),
                one("content"),
                Some(json!({"content": "hi\n"})),
            ),
            (
                json!({"result": "42"}),
                one("result"),
                Some(json!({"result": 42})),
            ),
            (
                json!({"result": "t", "structuredContent": {"k": 2}}),
                one("x"),
                Some(json!({"k": 2})),
            ),
            (
                json!({"result": "plain"}),
                schema(json!({"type": "object"})),
                None,
            ),
        ] {
            assert_eq!(
                structured_result(&text.to_string(), &schema),
                want,
                "{text}"
            );
        }
    }
}
