//! The docker backend's persistent shell: one long-lived `exec` of the container's
//! shell running the remote driver ([`super::remote_script`]), its stdin and output on
//! one attached connection ([`super::docker_attach`]), so a command costs a line on
//! an open socket and a `fork` inside the container instead of an `exec` round trip
//! through the engine. A timeout ends the command from a second, short `exec`.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::docker::Inner;
use super::docker_attach::{FrameDecoder, RawStream, exec_attach};
use super::remote_shell::{OpenError, RemoteShell, ShellTransport, SideRunner, new_mark};
use super::shell_connection::ShellConnection;
use super::{BackendKind, EnvError, remote_script};

/// The attached `exec` connection of a persistent shell.
struct DockerTransport {
    inner: Arc<Inner>,
    exec_id: String,
    stream: RawStream,
    decoder: FrameDecoder,
    /// Decoded output not yet handed out.
    decoded: Vec<u8>,
    eof: bool,
    exit: Option<i32>,
}

impl ShellTransport for DockerTransport {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)?;
        self.stream.flush()
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>> {
        let deadline = Instant::now() + timeout;
        let mut raw = [0u8; 64 * 1024];
        loop {
            if !self.decoded.is_empty() {
                let n = self.decoded.len().min(buf.len());
                buf[..n].copy_from_slice(&self.decoded[..n]);
                self.decoded.drain(..n);
                return Ok(Some(n));
            }
            if self.eof {
                return Ok(Some(0));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            // A zero timeout means "block forever" to the socket.
            self.stream
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
            match self.stream.read(&mut raw) {
                Ok(0) => self.eof = true,
                Ok(n) => self.decoder.feed(&raw[..n], &mut self.decoded),
                Err(err)
                    if matches!(
                        err.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(err) => return Err(err),
            }
        }
    }

    fn exit_code(&mut self) -> Option<i32> {
        if !self.eof {
            return None;
        }
        if self.exit.is_none()
            && let Some((false, code)) = self.inner.exec_status(&self.exec_id)
        {
            self.exit = Some(code);
        }
        self.exit
    }

    fn close(&mut self) {
        let _ = self.stream.shutdown_write();
    }
}

/// Start a persistent shell in the container of `inner`.
pub(super) fn open(inner: &Arc<Inner>) -> Result<Box<dyn ShellConnection>, EnvError> {
    let mark = new_mark();
    let body = json!({
        "Cmd": [inner.shell.clone(), "-c", remote_script::driver(&mark)],
        "Env": [format!("{}={mark}", super::containment::SCOPE_ENV)],
        "AttachStdin": true,
        "AttachStdout": true,
        "AttachStderr": true,
        "Tty": false,
    });
    let exec_id = inner.create_exec_with(&body)?;
    let (stream, early) =
        exec_attach(&inner.api, &exec_id).map_err(|e| inner.api_err("exec attach", e))?;
    let mut transport = DockerTransport {
        inner: Arc::clone(inner),
        exec_id,
        stream,
        decoder: FrameDecoder::default(),
        decoded: Vec::new(),
        eof: false,
        exit: None,
    };
    transport.decoder.feed(&early, &mut transport.decoded);
    let side_inner = Arc::clone(inner);
    let side: SideRunner =
        Box::new(move |script: &str| matches!(side_inner.run_capture(script), Some((0, _))));
    RemoteShell::open(Box::new(transport), side, mark)
        .map(|shell| Box::new(shell) as Box<dyn ShellConnection>)
        .map_err(|err| open_error(err, inner))
}

fn open_error(err: OpenError, inner: &Inner) -> EnvError {
    match err {
        OpenError::Io(source) => EnvError::Spawn {
            backend: BackendKind::Docker,
            what: "persistent shell".into(),
            source,
        },
        other => inner.api_err("persistent shell", other),
    }
}
