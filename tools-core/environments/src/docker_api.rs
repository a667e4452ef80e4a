//! A small blocking client for the Docker Engine API (which podman's `system service`
//! also speaks) over a unix socket or plain TCP: JSON requests, and the raw multiplexed
//! stream `exec start` returns.
//!
//! One connection per request (`Connection: close`), so a response ends at EOF when it
//! has neither a length nor chunked encoding — exactly how the exec stream behaves.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use super::docker_attach::RawStream;

/// API version prefix every path gets (supported by Docker ≥ 20.10 and podman ≥ 3).
pub const API_VERSION: &str = "v1.41";

/// Where the daemon listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `unix:///path`.
    Unix(String),
    /// `tcp://host:port` (plain HTTP).
    Tcp(String),
}

impl Endpoint {
    /// Parse `DOCKER_HOST` syntax.
    pub fn parse(host: &str) -> Result<Self, String> {
        if let Some(path) = host.strip_prefix("unix://") {
            Ok(Endpoint::Unix(path.to_string()))
        } else if let Some(addr) = host
            .strip_prefix("tcp://")
            .or_else(|| host.strip_prefix("http://"))
        {
            Ok(Endpoint::Tcp(addr.trim_end_matches('/').to_string()))
        } else if host.starts_with('/') {
            Ok(Endpoint::Unix(host.to_string()))
        } else {
            Err(format!(
                "unsupported docker host {host:?} (use unix:///path.sock or tcp://host:port; TLS is not supported)"
            ))
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix://{p}"),
            Endpoint::Tcp(a) => write!(f, "tcp://{a}"),
        }
    }
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// Status, lower-cased headers, and the connection positioned at the body.
type ResponseHead = (u16, Vec<(String, String)>, BufReader<Box<dyn Stream>>);

/// A response with its body fully read.
#[derive(Debug)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The daemon's error message, or the body.
    pub fn message(&self) -> String {
        match self.json().get("message").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None => String::from_utf8_lossy(&self.body).trim().to_string(),
        }
    }
}

/// The client.
#[derive(Clone, Debug)]
pub struct DockerApi {
    endpoint: Endpoint,
    timeout: Duration,
}

impl DockerApi {
    /// A client for `endpoint`; plain requests time out after `timeout`.
    pub fn new(endpoint: Endpoint, timeout: Duration) -> Self {
        DockerApi { endpoint, timeout }
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The timeout of plain requests.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    fn connect(&self, read_timeout: Option<Duration>) -> std::io::Result<Box<dyn Stream>> {
        Ok(match self.connect_raw(read_timeout)? {
            RawStream::Unix(s) => Box::new(s),
            RawStream::Tcp(s) => Box::new(s),
        })
    }

    pub(crate) fn connect_raw(&self, read_timeout: Option<Duration>) -> std::io::Result<RawStream> {
        match &self.endpoint {
            Endpoint::Unix(path) => {
                let s = UnixStream::connect(path)?;
                s.set_read_timeout(read_timeout)?;
                s.set_write_timeout(Some(self.timeout))?;
                Ok(RawStream::Unix(s))
            }
            Endpoint::Tcp(addr) => {
                let s = TcpStream::connect(addr)?;
                s.set_read_timeout(read_timeout)?;
                s.set_write_timeout(Some(self.timeout))?;
                Ok(RawStream::Tcp(s))
            }
        }
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        read_timeout: Option<Duration>,
    ) -> std::io::Result<ResponseHead> {
        let mut stream = self.connect(read_timeout)?;
        let mut head = format!(
            "{method} /{API_VERSION}{path} HTTP/1.1\r\nHost: docker\r\nUser-Agent: toolhost\r\nConnection: close\r\n"
        );
        if let Some((content_type, bytes)) = body {
            head.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                bytes.len()
            ));
        } else if method == "POST" || method == "PUT" {
            head.push_str("Content-Length: 0\r\n");
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        if let Some((_, bytes)) = body {
            stream.write_all(bytes)?;
        }
        stream.flush()?;
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line)?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("bad HTTP status line {status_line:?}"),
                )
            })?;
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                break;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        Ok((status, headers, reader))
    }

    /// A request whose response body is read completely.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        json: Option<&Value>,
    ) -> std::io::Result<Response> {
        let body = json.map(|v| v.to_string().into_bytes());
        let (status, headers, reader) = self.send(
            method,
            path,
            body.as_deref().map(|b| ("application/json", b)),
            Some(self.timeout),
        )?;
        let mut body = Vec::new();
        body_reader(&headers, reader).read_to_end(&mut body)?;
        Ok(Response { status, body })
    }

    /// A request with a raw body (tar archives).
    pub fn request_raw(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        bytes: &[u8],
    ) -> std::io::Result<Response> {
        let (status, headers, reader) = self.send(
            method,
            path,
            Some((content_type, bytes)),
            Some(self.timeout),
        )?;
        let mut body = Vec::new();
        body_reader(&headers, reader).read_to_end(&mut body)?;
        Ok(Response { status, body })
    }

    /// Start an exec and return its output as one stream (stdout and stderr frames
    /// merged in arrival order). Reads block until the command prints or ends.
    pub fn exec_stream(&self, exec_id: &str) -> std::io::Result<Box<dyn Read + Send>> {
        let body = serde_json::json!({"Detach": false, "Tty": false}).to_string();
        let (status, headers, reader) = self.send(
            "POST",
            &format!("/exec/{exec_id}/start"),
            Some(("application/json", body.as_bytes())),
            None,
        )?;
        if status != 200 && status != 101 {
            let mut text = String::new();
            let _ = body_reader(&headers, reader).read_to_string(&mut text);
            return Err(std::io::Error::other(format!(
                "exec start returned {status}: {}",
                text.trim()
            )));
        }
        Ok(Box::new(Demux::new(body_reader(&headers, reader))))
    }
}

fn body_reader(
    headers: &[(String, String)],
    reader: BufReader<Box<dyn Stream>>,
) -> Box<dyn Read + Send> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        Box::new(Chunked {
            inner: reader,
            remaining: 0,
            done: false,
        })
    } else if let Some(len) = header("content-length").and_then(|v| v.parse::<u64>().ok()) {
        Box::new(reader.take(len))
    } else {
        Box::new(reader)
    }
}

/// HTTP/1.1 chunked transfer decoding.
struct Chunked<R> {
    inner: R,
    remaining: usize,
    done: bool,
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        if self.remaining == 0 {
            let mut line = String::new();
            if self.inner.read_line(&mut line)? == 0 {
                self.done = true;
                return Ok(0);
            }
            let size_text = line.trim().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size_text, 16).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("bad chunk size {line:?}"),
                )
            })?;
            if size == 0 {
                self.done = true;
                return Ok(0);
            }
            self.remaining = size;
        }
        let want = buf.len().min(self.remaining);
        let n = self.inner.read(&mut buf[..want])?;
        if n == 0 {
            self.done = true;
            return Ok(0);
        }
        self.remaining -= n;
        if self.remaining == 0 {
            let mut crlf = String::new();
            self.inner.read_line(&mut crlf)?;
        }
        Ok(n)
    }
}

/// Docker's multiplexed stream: frames of `[kind, 0, 0, 0, len u32 BE] payload`.
struct Demux<R> {
    inner: R,
    remaining: usize,
}

impl<R: Read> Demux<R> {
    fn new(inner: R) -> Self {
        Demux {
            inner,
            remaining: 0,
        }
    }
}

impl<R: Read> Read for Demux<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.remaining == 0 {
            let mut header = [0u8; 8];
            let mut got = 0;
            while got < 8 {
                let n = self.inner.read(&mut header[got..])?;
                if n == 0 {
                    return Ok(0);
                }
                got += n;
            }
            self.remaining =
                u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
        }
        let want = buf.len().min(self.remaining);
        let n = self.inner.read(&mut buf[..want])?;
        self.remaining -= n;
        Ok(n)
    }
}

/// A tar archive holding one regular file `name` (ustar; names up to 100 bytes).
pub fn single_file_tar(name: &str, data: &[u8], mode: u32) -> Result<Vec<u8>, String> {
    if name.len() > 100 || name.is_empty() {
        return Err(format!(
            "file name {name:?} must be 1-100 bytes for a tar upload"
        ));
    }
    let mut header = [0u8; 512];
    header[..name.len()].copy_from_slice(name.as_bytes());
    let octal = |field: &mut [u8], value: u64| {
        let text = format!("{:0width$o}\0", value, width = field.len() - 1);
        field.copy_from_slice(text.as_bytes());
    };
    octal(&mut header[100..108], u64::from(mode));
    octal(&mut header[108..116], 0);
    octal(&mut header[116..124], 0);
    octal(&mut header[124..136], data.len() as u64);
    let mtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    octal(&mut header[136..148], mtime);
    header[156] = b'0';
    header[257..263].copy_from_slice(b"ustar\0");
    header[263..265].copy_from_slice(b"00");
    header[148..156].copy_from_slice(b"        ");
    let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
    let text = format!("{sum:06o}\0 ");
    header[148..156].copy_from_slice(text.as_bytes());
    let mut out = Vec::with_capacity(512 + data.len() + 1536);
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    let pad = (512 - data.len() % 512) % 512;
    out.extend(std::iter::repeat_n(0u8, pad + 1024));
    Ok(out)
}

/// Bytes a query value keeps as they are: RFC 3986 unreserved characters and `/`.
const QUERY_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// Percent-encode a query value.
pub fn query_escape(s: &str) -> String {
    utf8_percent_encode(s, QUERY_KEEP).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse() {
        assert_eq!(
            Endpoint::parse("unix:///run/docker.sock").unwrap(),
            Endpoint::Unix("/run/docker.sock".into())
        );
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:2375").unwrap(),
            Endpoint::Tcp("127.0.0.1:2375".into())
        );
        assert!(Endpoint::parse("ssh://host").is_err());
    }

    #[test]
    fn demux_merges_frames() {
        let mut raw = Vec::new();
        for (kind, text) in [(1u8, "out1 "), (2, "err "), (1, "out2")] {
            raw.extend_from_slice(&[kind, 0, 0, 0]);
            raw.extend_from_slice(&(text.len() as u32).to_be_bytes());
            raw.extend_from_slice(text.as_bytes());
        }
        let mut s = String::new();
        Demux::new(&raw[..]).read_to_string(&mut s).unwrap();
        assert_eq!(s, "out1 err out2");
    }

    #[test]
    fn chunked_decodes() {
        let raw = b"5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n";
        let mut s = String::new();
        Chunked {
            inner: BufReader::new(&raw[..]),
            remaining: 0,
            done: false,
        }
        .read_to_string(&mut s)
        .unwrap();
        assert_eq!(s, "hello world");
    }

    #[test]
    fn tar_is_well_formed() {
        let tar = single_file_tar("a.txt", b"hello", 0o644).unwrap();
        assert_eq!(tar.len() % 512, 0);
        assert_eq!(&tar[..5], b"a.txt");
        assert_eq!(&tar[512..517], b"hello");
        // Checked by the system tar when present.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.tar");
        std::fs::write(&path, &tar).unwrap();
        if let Ok(out) = std::process::Command::new("tar")
            .arg("-xOf")
            .arg(&path)
            .output()
        {
            assert_eq!(
                out.stdout,
                b"hello",
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(single_file_tar(&"x".repeat(101), b"", 0o644).is_err());
    }

    #[test]
    fn escaping() {
        assert_eq!(query_escape("/a b/c"), "/a%20b/c");
        assert_eq!(
            query_escape("{\"label\":[\"x=1\"]}"),
            "%7B%22label%22%3A%5B%22x%3D1%22%5D%7D"
        );
    }

    /// Read `reader` to the end through buffers of the given sizes (cycled), as a
    /// caller with small or odd-sized buffers would; an error ends the read.
    fn read_in_pieces(mut reader: impl Read, sizes: &[usize]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        for size in sizes.iter().cycle() {
            let mut buf = vec![0u8; *size];
            let n = reader.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
        Ok(out)
    }

    /// `body` in chunked encoding, cut where `cuts` say, each size line optionally
    /// carrying an extension.
    fn chunked(body: &[u8], cuts: &[usize], extension: bool) -> Vec<u8> {
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
        points.extend([0, body.len()]);
        points.sort_unstable();
        points.dedup();
        let mut raw = Vec::new();
        for pair in points.windows(2) {
            let chunk = &body[pair[0]..pair[1]];
            let ext = if extension { ";name=value" } else { "" };
            raw.extend_from_slice(format!("{:x}{ext}\r\n", chunk.len()).as_bytes());
            raw.extend_from_slice(chunk);
            raw.extend_from_slice(b"\r\n");
        }
        raw.extend_from_slice(b"0\r\n\r\n");
        raw
    }

    proptest::proptest! {
        #[test]
        fn chunked_bodies_come_back_whole(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000),
            cuts in proptest::collection::vec(0usize..4000, 0..12),
            extension in proptest::prelude::any::<bool>(),
            sizes in proptest::collection::vec(1usize..64, 1..5),
        ) {
            let raw = chunked(&body, &cuts, extension);
            let reader = Chunked { inner: BufReader::new(&raw[..]), remaining: 0, done: false };
            proptest::prop_assert_eq!(read_in_pieces(reader, &sizes).unwrap(), body);
        }

        #[test]
        fn any_bytes_as_a_chunked_body_never_panic(
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            sizes in proptest::collection::vec(1usize..64, 1..5),
        ) {
            let reader = Chunked { inner: BufReader::new(&raw[..]), remaining: 0, done: false };
            let _ = read_in_pieces(reader, &sizes);
        }

        #[test]
        fn demultiplexed_frames_come_back_in_order(
            frames in proptest::collection::vec(
                (1u8..=2, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)),
                0..8,
            ),
            sizes in proptest::collection::vec(1usize..64, 1..5),
        ) {
            let mut raw = Vec::new();
            let mut expected = Vec::new();
            for (kind, payload) in &frames {
                raw.extend_from_slice(&[*kind, 0, 0, 0]);
                raw.extend_from_slice(&(payload.len() as u32).to_be_bytes());
                raw.extend_from_slice(payload);
                expected.extend_from_slice(payload);
            }
            proptest::prop_assert_eq!(read_in_pieces(Demux::new(&raw[..]), &sizes).unwrap(), expected);
        }

        #[test]
        fn any_bytes_as_a_multiplexed_stream_never_panic(
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            sizes in proptest::collection::vec(1usize..64, 1..5),
        ) {
            let _ = read_in_pieces(Demux::new(&raw[..]), &sizes);
        }
    }
}
