//! `toolhost mcp serve` on stdio: fd 1 belongs to the protocol writer alone.
//!
//! Under `mcp serve` the process's fd 1 *is* the MCP stream. Anything else that writes
//! there — an in-process plugin's `println!`, a C library's `printf`, a child process
//! that inherits fd 1 — would put forged or torn JSON-RPC messages in front of the
//! client. So before any plugin loads, [`claim`] moves the protocol to a private,
//! close-on-exec duplicate of fd 1 and points fd 1 at stderr (at `/dev/null` when there
//! is no stderr): from then on only the protocol writer can reach the client, and
//! stray output lands in the log where it belongs (docs/plugin-isolation.md).
//!
//! The writer takes the same fast path as rmcp's `stdio_pipes` when the stream is a
//! FIFO (a non-blocking descriptor of its own, reopened through `/proc/self/fd`);
//! sockets, files and terminals are written by one thread that drains an in-memory
//! pipe.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, DuplexStream};

/// Bytes of the in-memory pipe between the protocol writer and its thread.
const PUMP_BUFFER: usize = 64 * 1024;

/// The protocol's private stdout, claimed by [`claim`].
#[derive(Debug)]
pub struct ProtocolStdout {
    fd: OwnedFd,
}

/// What the MCP stdio server reads and writes, and the thread (if any) that writes.
pub struct ProtocolStreams {
    /// The client's requests (stdin).
    pub read: Box<dyn AsyncRead + Send + Unpin>,
    /// The protocol stream (the private duplicate of the original fd 1).
    pub write: Box<dyn AsyncWrite + Send + Unpin>,
    /// The writer thread, when the stream is not a FIFO: join it after serving so the
    /// last replies are written before the process exits.
    pub pump: Option<std::thread::JoinHandle<()>>,
}

/// Move the protocol off fd 1: keep a private duplicate of it and point fd 1 at stderr.
/// Call before anything else can write to stdout (before plugins load).
pub fn claim() -> io::Result<ProtocolStdout> {
    let stdout = io::stdout();
    stdout.lock().flush()?;
    let fd = rustix::io::fcntl_dupfd_cloexec(stdout.as_fd(), 3)?;
    if rustix::stdio::dup2_stdout(io::stderr().as_fd()).is_err() {
        let null = OpenOptions::new().write(true).open("/dev/null")?;
        rustix::stdio::dup2_stdout(null.as_fd())?;
    }
    Ok(ProtocolStdout { fd })
}

impl ProtocolStdout {
    /// The streams to serve MCP on. Must run inside the Tokio runtime that serves.
    pub fn into_streams(self) -> io::Result<ProtocolStreams> {
        let (write, pump) = match reopen_fifo(self.fd.as_fd(), true) {
            Some(fifo) => {
                let sender = tokio::net::unix::pipe::Sender::from_owned_fd(fifo)?;
                let write: Box<dyn AsyncWrite + Send + Unpin> = Box::new(sender);
                (write, None)
            }
            None => {
                let (write, pump) = pumped_writer(File::from(self.fd))?;
                (write, Some(pump))
            }
        };
        Ok(ProtocolStreams {
            read: stdin_reader()?,
            write,
            pump,
        })
    }
}

/// Stdin as an async reader: a non-blocking FIFO of its own when it is a pipe, else
/// Tokio's blocking stdin.
fn stdin_reader() -> io::Result<Box<dyn AsyncRead + Send + Unpin>> {
    match reopen_fifo(io::stdin().as_fd(), false) {
        Some(fifo) => Ok(Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(
            fifo,
        )?)),
        None => Ok(Box::new(tokio::io::stdin())),
    }
}

/// `fd` reopened non-blocking through `/proc/self/fd` (its own open file description,
/// so the flag never leaks to anyone sharing `fd`), when it is a FIFO.
fn reopen_fifo(fd: BorrowedFd<'_>, write: bool) -> Option<OwnedFd> {
    let file = OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
        .ok()?;
    let is_fifo = file.metadata().ok()?.file_type().is_fifo();
    is_fifo.then(|| file.into())
}

/// An async writer whose bytes a thread copies to `out` (blocking writes), and the
/// thread. The thread ends when the writer is dropped or `out` fails (the client went
/// away: the writer's next write then fails too).
fn pumped_writer(
    out: File,
) -> io::Result<(
    Box<dyn AsyncWrite + Send + Unpin>,
    std::thread::JoinHandle<()>,
)> {
    let handle = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    let (ours, theirs) = tokio::io::duplex(PUMP_BUFFER);
    let pump = std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || pump(&handle, theirs, out))?;
    Ok((Box::new(ours), pump))
}

fn pump(handle: &tokio::runtime::Handle, mut from: DuplexStream, mut out: File) {
    let mut buf = vec![0u8; PUMP_BUFFER];
    loop {
        let n = match handle.block_on(from.read(&mut buf)) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use tokio::io::AsyncWriteExt;

    fn read_all(mut file: File) -> Vec<u8> {
        let mut out = Vec::new();
        file.read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn the_pumped_writer_delivers_every_byte_to_a_socket() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let out = File::from(OwnedFd::from(ours));
        let reader = std::thread::spawn(move || read_all(File::from(OwnedFd::from(theirs))));
        let message = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".repeat(10_000);
        let pump = runtime.block_on(async {
            let (mut write, pump) = pumped_writer(out).unwrap();
            write.write_all(&message).await.unwrap();
            write.shutdown().await.unwrap();
            pump
        });
        pump.join().unwrap();
        assert_eq!(reader.join().unwrap(), message);
    }
}
