//! The socket server that answers a script's tool calls: newline-delimited JSON
//! requests `{"tool","args","token"}` on a Unix socket in a private temporary
//! directory, one result line each. Requests without the run's token, for tools off
//! the allowlist, or past the call limit get an error line instead of a call.
//! Every accepted connection is served on its own thread (a script's subprocesses may
//! import the module too); the call limit is shared.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

use super::ToolCaller;
use crate::context::ToolContext;

/// `terminal` arguments a script may not use (no background or interactive work).
const TERMINAL_BLOCKED: &[&str] = &["background", "pty", "notify_on_complete", "watch_patterns"];

/// What the server needs to answer calls.
pub struct RpcConfig {
    /// The run's secret; requests must carry it.
    pub token: String,
    /// Tools the script may call.
    pub allowed: BTreeSet<String>,
    /// Calls allowed in total.
    pub max_calls: usize,
    /// The host's pipeline.
    pub caller: Arc<dyn ToolCaller>,
    /// The context calls run with (the `execute_code` call's).
    pub ctx: ToolContext,
}

struct Shared {
    config: RpcConfig,
    calls: AtomicUsize,
    stop: AtomicBool,
    streams: Mutex<Vec<UnixStream>>,
}

/// A running server; [`RpcServer::stop`] ends it.
pub struct RpcServer {
    shared: Arc<Shared>,
    path: PathBuf,
    acceptor: Option<JoinHandle<Vec<JoinHandle<()>>>>,
}

impl RpcServer {
    /// Serve `listener` (bound at `path`) until stopped.
    pub fn start(listener: UnixListener, path: PathBuf, config: RpcConfig) -> Self {
        let shared = Arc::new(Shared {
            config,
            calls: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
        });
        let for_thread = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("execute_code-rpc".into())
            .spawn(move || accept_loop(&listener, &for_thread))
            .ok();
        RpcServer {
            shared,
            path,
            acceptor,
        }
    }

    /// Tool calls answered so far (including refused ones past the limit: no).
    pub fn calls(&self) -> usize {
        self.shared.calls.load(Ordering::SeqCst)
    }

    /// Stop accepting, close every connection, and wait for the threads.
    pub fn stop(mut self) -> usize {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept.
        let _ = UnixStream::connect(&self.path);
        if let Ok(streams) = self.shared.streams.lock() {
            for s in streams.iter() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
        if let Some(acceptor) = self.acceptor.take()
            && let Ok(workers) = acceptor.join()
        {
            for w in workers {
                let _ = w.join();
            }
        }
        self.calls()
    }
}

fn accept_loop(listener: &UnixListener, shared: &Arc<Shared>) -> Vec<JoinHandle<()>> {
    let mut workers = Vec::new();
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        if let (Ok(clone), Ok(mut streams)) = (stream.try_clone(), shared.streams.lock()) {
            streams.push(clone);
        }
        let shared = Arc::clone(shared);
        if let Ok(handle) = std::thread::Builder::new()
            .name("execute_code-conn".into())
            .spawn(move || serve(stream, &shared))
        {
            workers.push(handle);
        }
    }
    workers
}

fn serve(stream: UnixStream, shared: &Shared) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.trim().is_empty() {
            continue;
        }
        let reply = answer(line.trim(), shared);
        // A result is one line: JSON text with a raw newline is sent as a JSON string
        // (the module decodes it twice).
        let mut out = if reply.contains('\n') {
            Value::String(reply).to_string()
        } else {
            reply
        };
        out.push('\n');
        if writer.write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}

/// Constant-time comparison of the token.
fn same_token(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

fn answer(line: &str, shared: &Shared) -> String {
    let config = &shared.config;
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(err) => return json!({"error": format!("Invalid RPC request: {err}")}).to_string(),
    };
    let token = request
        .get("token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if config.token.is_empty() || !same_token(token, &config.token) {
        return json!({"error": "Unauthorized RPC request"}).to_string();
    }
    let tool = request
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !config.allowed.contains(tool) {
        let available: Vec<&str> = config.allowed.iter().map(String::as_str).collect();
        return json!({"error": format!(
            "Tool '{tool}' is not available in execute_code. Available: {}",
            available.join(", ")
        )})
        .to_string();
    }
    let reserved = shared
        .calls
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < config.max_calls).then_some(n + 1)
        });
    if reserved.is_err() {
        return json!({"error": format!(
            "Tool call limit reached ({}). No more tool calls allowed in this execution.",
            config.max_calls
        )})
        .to_string();
    }
    let mut args = match request.get("args") {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        None | Some(Value::Null) => json!({}),
        Some(_) => {
            return json!({"error": "Invalid RPC request: args must be an object"}).to_string();
        }
    };
    if tool == "terminal"
        && let Some(map) = args.as_object_mut()
    {
        for key in TERMINAL_BLOCKED {
            map.remove(*key);
        }
    }
    config.caller.call(tool, &args, &config.ctx)
}
