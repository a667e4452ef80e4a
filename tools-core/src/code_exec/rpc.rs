//! The socket server that answers a script's tool calls on the host: newline-delimited
//! JSON requests `{"tool","args","token"}` on a Unix socket in a private temporary
//! directory, one result line each, answered by the run's [`Dispatcher`] (token,
//! allowlist, call limit). Every accepted connection is served on its own thread (a
//! script's subprocesses may import the module too); the call limit is shared. With a
//! [`Colocation`], each serving thread waits for and answers requests on the run's CPU
//! and runs the tools with its full mask (`colocate.rs` says why).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::colocate::Colocation;
use super::dispatch::Dispatcher;
pub use super::dispatch::RpcOptions;

struct Shared {
    dispatcher: Dispatcher,
    stop: AtomicBool,
    streams: Mutex<Vec<UnixStream>>,
    colocation: Option<Colocation>,
}

/// A running server; [`RpcServer::stop`] ends it.
pub struct RpcServer {
    shared: Arc<Shared>,
    path: PathBuf,
    acceptor: Option<JoinHandle<Vec<JoinHandle<()>>>>,
}

impl RpcServer {
    /// Serve `listener` (bound at `path`) until stopped.
    pub fn start(listener: UnixListener, path: PathBuf, options: RpcOptions) -> Self {
        Self::start_colocated(listener, path, options, None)
    }

    /// [`RpcServer::start`], serving requests on `colocation`'s CPU when given.
    pub fn start_colocated(
        listener: UnixListener,
        path: PathBuf,
        options: RpcOptions,
        colocation: Option<Colocation>,
    ) -> Self {
        let shared = Arc::new(Shared {
            dispatcher: Dispatcher::new(options),
            stop: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
            colocation,
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

    /// Tool calls made so far (refused requests are not counted).
    pub fn calls(&self) -> usize {
        self.shared.dispatcher.calls()
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
    let colocation = shared.colocation.as_ref();
    colocation.inspect(|c| c.pin());
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.trim().is_empty() {
            continue;
        }
        colocation.inspect(|c| c.unpin());
        let mut out = shared.dispatcher.answer(line.trim());
        out.push('\n');
        colocation.inspect(|c| c.pin());
        if writer.write_all(out.as_bytes()).is_err() {
            return;
        }
    }
}
