//! `progress.rs` through a real MCP session in memory: a client with a progress token
//! gets the upstream progress of a re-served call passed through; one without gets pings.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, NumberOrString, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    RequestParamsMeta as _, ServerResult,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer, ServiceExt as _};
use serde_json::json;
use tools_core::{Hooks, Registry, ToolEntry, ToolHandler};

use super::{ElicitationRouter, ServerCore, ToolhostServer};
use crate::dispatch::Dispatcher;
use crate::mcp::progress_relay::{self, Progress};
use crate::spill::ResultSpill;
use crate::toolsets::{ToolsetSelection, Toolsets};

/// Records what the server sent besides answers.
#[derive(Clone, Default)]
struct Watcher {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pings: Arc<AtomicUsize>,
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("watcher", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn ping(&self, _context: RequestContext<RoleClient>) -> Result<(), ErrorData> {
        self.pings.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// A registry with `reporting` (reports upstream-style progress the way the MCP client
/// does for a proxied call: through an upstream token of its call) and `slow`.
fn registry() -> Arc<Registry> {
    let registry = Arc::new(Registry::new());
    let reporting = ToolEntry::builder("reporting", "test")
        .description("Reports progress like a proxied upstream tool")
        .handler(ToolHandler::from_async(
            |_args, ctx: tools_core::ToolContext| async move {
                let token = progress_relay::upstream_token(&ctx.tool_call_id)
                    .ok_or_else(|| tools_core::ToolError::Unavailable("nobody listens".into()))?;
                for step in 1..=3 {
                    progress_relay::deliver(
                        token.as_str(),
                        Progress {
                            progress: f64::from(step),
                            total: Some(3.0),
                            message: Some(format!("step {step} of 3")),
                        },
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Ok(json!({"done": true}))
            },
        ))
        .build()
        .unwrap();
    let slow = ToolEntry::builder("slow", "test")
        .description("Takes a while")
        .handler(ToolHandler::from_async(|_args, _ctx| async move {
            tokio::time::sleep(Duration::from_millis(900)).await;
            Ok(json!({"done": true}))
        }))
        .build()
        .unwrap();
    registry.register(reporting);
    registry.register(slow);
    registry
}

async fn connect(
    dir: &std::path::Path,
) -> (
    RunningService<RoleClient, Watcher>,
    RunningService<RoleServer, ToolhostServer>,
    Watcher,
) {
    let core = Arc::new(ServerCore {
        dispatcher: Dispatcher::new(registry(), Arc::new(Hooks::new()), ResultSpill::new(dir)),
        toolsets: Toolsets::new(),
        selection: ToolsetSelection::default(),
        elicitation: Arc::new(ElicitationRouter::default()),
        progress_interval: Duration::from_millis(200),
        mcp_ready: Default::default(),
    });
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(ToolhostServer::new(core).serve(tokio::io::split(server_io)));
    let watcher = Watcher::default();
    let client = watcher
        .clone()
        .serve(tokio::io::split(client_io))
        .await
        .unwrap();
    (client, server.await.unwrap().unwrap(), watcher)
}

async fn call(client: &RunningService<RoleClient, Watcher>, tool: &str, token: Option<&str>) {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Some(token) = token {
        params.set_progress_token(ProgressToken(NumberOrString::String(token.into())));
    }
    let answer = client
        .send_request(ClientRequest::CallToolRequest(CallToolRequest::new(params)))
        .await
        .unwrap();
    let ServerResult::CallToolResult(result) = answer else {
        panic!("not a tool result: {answer:?}");
    };
    assert_ne!(result.is_error, Some(true), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_progress_is_passed_through_with_total_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let (client, server, watcher) = connect(dir.path()).await;
    call(&client, "reporting", Some("t1")).await;
    // Notifications may trail the answer by a moment.
    for _ in 0..50 {
        if watcher.progress.lock().unwrap().len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen: Vec<(f64, Option<f64>, Option<String>)> = watcher
        .progress
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1.0, Some(3.0), Some("step 1 of 3".into())),
            (2.0, Some(3.0), Some("step 2 of 3".into())),
            (3.0, Some(3.0), Some("step 3 of 3".into())),
        ]
    );
    let _ = client.cancel().await;
    let _ = server.cancel().await;
}

/// rmcp's client puts a progress token on every request, so this client speaks raw
/// JSON-RPC lines, as the TypeScript SDK does for a plain `callTool`: no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_without_a_progress_token_is_kept_alive_with_pings() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let core = Arc::new(ServerCore {
        dispatcher: Dispatcher::new(
            registry(),
            Arc::new(Hooks::new()),
            ResultSpill::new(dir.path()),
        ),
        toolsets: Toolsets::new(),
        selection: ToolsetSelection::default(),
        elicitation: Arc::new(ElicitationRouter::default()),
        progress_interval: Duration::from_millis(200),
        mcp_ready: Default::default(),
    });
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(ToolhostServer::new(core).serve(tokio::io::split(server_io)));
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |value: serde_json::Value| {
        write
            .write_all(format!("{value}\n").as_bytes())
            .await
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let _initialized = lines.next_line().await.unwrap().unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}))
    .await;
    let mut pings = 0;
    let mut progress = 0;
    loop {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("the call never ended")
            .unwrap()
            .unwrap();
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        match message["method"].as_str() {
            Some("ping") => {
                pings += 1;
                send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {}})).await;
            }
            Some("notifications/progress") => progress += 1,
            _ if message["id"] == 2 => break,
            _ => {}
        }
    }
    assert!(pings >= 2, "pings: {pings}");
    assert_eq!(progress, 0);
    drop(server);
}
