//! [`Connection`]: a minimal Chrome DevTools Protocol client over one blocking websocket.
//!
//! One I/O thread owns the socket: it sends queued requests and reads replies (the
//! socket has a short read timeout so both directions make progress: 250 µs while
//! calls come and go, 5 ms once the connection is quiet). Replies are
//! routed to the waiting caller by id; events go to a callback (with the session they
//! came from). A [`Link`] is a weak handle for threads that answer events (the request
//! guard, `guard.rs`): it does not keep the connection open. Page-level methods are
//! sent with the `sessionId` of a flattened target session, so a single connection
//! drives the browser and its page. A hand-written client keeps the plugin free of an
//! async runtime (see docs/hermes/browser.md for the choice).

use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use crate::error::BrowserError;

/// Called with `(method, params, session id)` for every event.
pub type EventSink = Arc<dyn Fn(&str, &Value, Option<&str>) + Send + Sync>;

type Reply = Result<Value, (i64, String)>;
type Pending = Arc<Mutex<HashMap<u64, Sender<Reply>>>>;

/// A live DevTools connection (its [`Client`] to call with); the I/O thread ends when
/// this is dropped.
pub struct Connection(Arc<Client>);

/// What callers share: request ids, the queue to the I/O thread, waiting callers.
pub struct Client {
    next_id: AtomicU64,
    outgoing: Mutex<Sender<String>>,
    pending: Pending,
}

/// A handle on a [`Connection`] that does not keep it open.
#[derive(Clone)]
pub struct Link(Weak<Client>);

impl Link {
    /// The connection's client, or [`BrowserError::Closed`] once it is gone.
    pub fn client(&self) -> Result<Arc<Client>, BrowserError> {
        self.0.upgrade().ok_or(BrowserError::Closed)
    }
}

impl std::ops::Deref for Connection {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.0
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

impl Connection {
    /// Connect to a DevTools websocket: `ws://…`, or `wss://…` over TLS (rustls, the
    /// system's root certificates plus those of `ca_file`; see `tls.rs`) for remote
    /// browsers behind HTTPS.
    pub fn open(
        url: &str,
        events: EventSink,
        ca_file: Option<&std::path::Path>,
    ) -> Result<Self, BrowserError> {
        let (socket, _) = crate::tls::connect(url, ca_file)?;
        if let Some(stream) = tcp_of(&socket) {
            stream.set_read_timeout(Some(IDLE_POLL))?;
            stream.set_nodelay(true)?;
        }
        let (tx, rx) = mpsc::channel();
        let pending: Pending = Arc::default();
        let thread_pending = Arc::clone(&pending);
        std::thread::Builder::new()
            .name("toolhost-browser-cdp".into())
            .spawn(move || pump(socket, rx, thread_pending, events))?;
        Ok(Connection(Arc::new(Client {
            next_id: AtomicU64::new(1),
            outgoing: Mutex::new(tx),
            pending,
        })))
    }

    /// A handle that does not keep the connection open.
    pub fn link(&self) -> Link {
        Link(Arc::downgrade(&self.0))
    }
}

impl Client {
    /// Send `method` (on `session` when given) without waiting for its answer (which
    /// is dropped); its request id.
    pub fn send(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<u64, BrowserError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.queue(request(id, method, params, session))?;
        Ok(id)
    }

    /// Hand a request's text to the I/O thread.
    fn queue(&self, text: String) -> Result<(), BrowserError> {
        self.outgoing
            .lock()
            .map_err(|_| BrowserError::Closed)?
            .send(text)
            .map_err(|_| BrowserError::Closed)
    }

    /// Call `method` (on `session` when given) and wait up to `timeout` for its result.
    pub fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        timeout: Duration,
    ) -> Result<Value, BrowserError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply_tx, reply_rx) = mpsc::channel();
        self.pending
            .lock()
            .map_err(|_| BrowserError::Closed)?
            .insert(id, reply_tx);
        self.queue(request(id, method, params, session))?;
        let answer = reply_rx.recv_timeout(timeout);
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(&id);
        }
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err((_, message))) => Err(BrowserError::Cdp {
                method: method.to_string(),
                message,
            }),
            Err(RecvTimeoutError::Timeout) => Err(BrowserError::Timeout {
                method: method.to_string(),
                secs: timeout.as_secs(),
            }),
            Err(RecvTimeoutError::Disconnected) => Err(BrowserError::Closed),
        }
    }
}

/// The text of request `id`.
fn request(id: u64, method: &str, params: Value, session: Option<&str>) -> String {
    let mut request = json!({ "id": id, "method": method, "params": params });
    if let Some(session) = session {
        request["sessionId"] = json!(session);
    }
    request.to_string()
}

/// How long the I/O thread blocks in a read before it looks for queued requests again.
/// A request queued meanwhile waits at most this long to be sent, so the wait is short
/// while the connection is busy (a snapshot or an action is a burst of calls, each
/// waiting for the last) and longer once it has been quiet for [`BUSY_FOR`] (fewer
/// wake-ups of an idle browser's thread).
const BUSY_POLL: Duration = Duration::from_micros(250);
const IDLE_POLL: Duration = Duration::from_millis(5);
const BUSY_FOR: Duration = Duration::from_millis(250);

/// The TCP stream under a (possibly TLS) websocket, for its socket options.
fn tcp_of(socket: &WebSocket<MaybeTlsStream<TcpStream>>) -> Option<&TcpStream> {
    match socket.get_ref() {
        MaybeTlsStream::Plain(stream) => Some(stream),
        MaybeTlsStream::Rustls(stream) => Some(stream.get_ref()),
        _ => None,
    }
}

/// The I/O loop: flush queued requests, read one message, route it; until either side
/// goes away.
fn pump(
    mut socket: WebSocket<MaybeTlsStream<TcpStream>>,
    outgoing: Receiver<String>,
    pending: Pending,
    events: EventSink,
) {
    let mut last_activity = Instant::now();
    let mut poll = IDLE_POLL;
    loop {
        let wanted = if last_activity.elapsed() < BUSY_FOR {
            BUSY_POLL
        } else {
            IDLE_POLL
        };
        if wanted != poll {
            if let Some(stream) = tcp_of(&socket) {
                let _ = stream.set_read_timeout(Some(wanted));
            }
            poll = wanted;
        }
        loop {
            match outgoing.try_recv() {
                Ok(text) => {
                    last_activity = Instant::now();
                    if socket.send(Message::text(text)).is_err() {
                        return close(&pending);
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    let _ = socket.close(None);
                    return close(&pending);
                }
            }
        }
        match socket.read() {
            Ok(Message::Text(text)) => {
                last_activity = Instant::now();
                route(text.as_str(), &pending, &events);
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return close(&pending),
        }
    }
}

fn route(text: &str, pending: &Pending, events: &EventSink) {
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if let Some(id) = message.get("id").and_then(Value::as_u64) {
        let reply = match message.get("error") {
            Some(error) => Err((
                error["code"].as_i64().unwrap_or_default(),
                error["message"]
                    .as_str()
                    .unwrap_or("unknown error")
                    .to_string(),
            )),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        if let Some(sender) = pending.lock().ok().and_then(|mut p| p.remove(&id)) {
            let _ = sender.send(reply);
        }
    } else if let Some(method) = message.get("method").and_then(Value::as_str) {
        events(
            method,
            message.get("params").unwrap_or(&Value::Null),
            message.get("sessionId").and_then(Value::as_str),
        );
    }
}

/// Wake every waiting caller with "closed" by dropping their senders.
fn close(pending: &Pending) {
    if let Ok(mut pending) = pending.lock() {
        pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `wss://` URL is spoken to with TLS: against a server that answers in plain
    /// text the TLS handshake fails (before, the scheme was refused outright).
    #[test]
    fn wss_urls_are_connected_over_tls() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Ok((mut stream, _)) = listener.accept() {
                use std::io::{Read, Write};
                let mut hello = [0u8; 512];
                let n = stream.read(&mut hello).unwrap_or(0);
                // A TLS ClientHello starts with a handshake record (0x16).
                let tls = n > 0 && hello[0] == 0x16;
                let _ = stream.write_all(if tls { b"not tls\r\n\r\n" } else { b"?" });
            }
        });
        let err = Connection::open(
            &format!("wss://127.0.0.1:{port}/devtools/browser/x"),
            Arc::new(|_, _, _| {}),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(&format!("wss://127.0.0.1:{port}")), "{err}");
        assert!(!err.contains("not compiled"), "{err}");
        assert!(
            err.to_lowercase().contains("tls") || err.contains("corrupt"),
            "{err}"
        );
    }
}
