//! Attaching to a Docker exec: the connection taken over after `exec start` (the API's
//! "hijack", `Upgrade: tcp`), which carries the command's stdin one way and its
//! multiplexed stdout/stderr the other, and the decoder of that stream for a reader
//! with timeouts. The persistent shell of the docker backend runs over it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use super::docker_api::{API_VERSION, DockerApi};

/// Start an exec created with `AttachStdin` and take over its connection (the
/// API's "hijack": `Upgrade: tcp`): what is written goes to the command's stdin,
/// what is read is the multiplexed output stream ([`FrameDecoder`]). Returns the
/// connection and the stream bytes already read with the response head.
pub fn exec_attach(api: &DockerApi, exec_id: &str) -> std::io::Result<(RawStream, Vec<u8>)> {
    let mut stream = api.connect_raw(Some(api.timeout()))?;
    let body = serde_json::json!({"Detach": false, "Tty": false}).to_string();
    let head = format!(
        "POST /{API_VERSION}/exec/{exec_id}/start HTTP/1.1\r\nHost: docker\r\nUser-Agent: toolhost\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.flush()?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line.split_whitespace().nth(1).unwrap_or_default();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim_end().is_empty() {
            break;
        }
    }
    if status != "101" && status != "200" {
        let mut text = String::new();
        let _ = reader.take(4096).read_to_string(&mut text);
        return Err(std::io::Error::other(format!(
            "exec attach returned {}: {}",
            status_line.trim(),
            text.trim()
        )));
    }
    let early = reader.buffer().to_vec();
    Ok((reader.into_inner(), early))
}

/// A connection to the daemon as its concrete socket (timeouts, half-close).
#[derive(Debug)]
pub enum RawStream {
    /// A unix socket.
    Unix(UnixStream),
    /// A TCP connection.
    Tcp(TcpStream),
}

impl RawStream {
    /// Block reads for at most `timeout` (`None`: forever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        match self {
            RawStream::Unix(s) => s.set_read_timeout(timeout),
            RawStream::Tcp(s) => s.set_read_timeout(timeout),
        }
    }

    /// Close the writing half: the other side sees end of input.
    pub fn shutdown_write(&self) -> std::io::Result<()> {
        match self {
            RawStream::Unix(s) => s.shutdown(std::net::Shutdown::Write),
            RawStream::Tcp(s) => s.shutdown(std::net::Shutdown::Write),
        }
    }
}

impl Read for RawStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            RawStream::Unix(s) => s.read(buf),
            RawStream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for RawStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            RawStream::Unix(s) => s.write(buf),
            RawStream::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            RawStream::Unix(s) => s.flush(),
            RawStream::Tcp(s) => s.flush(),
        }
    }
}

/// Docker's multiplexed stream decoded as it arrives, in pieces of any size: the
/// push counterpart of [`Demux`] for a connection read with timeouts, where a read can
/// stop in the middle of a frame header.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    header: [u8; 8],
    header_len: usize,
    remaining: usize,
}

impl FrameDecoder {
    /// Append the payload bytes in `input` to `out`.
    pub fn feed(&mut self, mut input: &[u8], out: &mut Vec<u8>) {
        while !input.is_empty() {
            if self.remaining == 0 {
                let take = (8 - self.header_len).min(input.len());
                self.header[self.header_len..self.header_len + take]
                    .copy_from_slice(&input[..take]);
                self.header_len += take;
                input = &input[take..];
                if self.header_len == 8 {
                    self.header_len = 0;
                    let [_, _, _, _, a, b, c, d] = self.header;
                    self.remaining = u32::from_be_bytes([a, b, c, d]) as usize;
                }
                continue;
            }
            let take = self.remaining.min(input.len());
            out.extend_from_slice(&input[..take]);
            self.remaining -= take;
            input = &input[take..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn frames_decoded_in_pieces_come_back_in_order(
            frames in proptest::collection::vec(
                (1u8..=2, proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)),
                0..8,
            ),
            cuts in proptest::collection::vec(0usize..3000, 0..16),
        ) {
            let mut raw = Vec::new();
            let mut expected = Vec::new();
            for (kind, payload) in &frames {
                raw.extend_from_slice(&[*kind, 0, 0, 0]);
                raw.extend_from_slice(&(payload.len() as u32).to_be_bytes());
                raw.extend_from_slice(payload);
                expected.extend_from_slice(payload);
            }
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (raw.len() + 1)).collect();
            points.extend([0, raw.len()]);
            points.sort_unstable();
            let mut decoder = FrameDecoder::default();
            let mut out = Vec::new();
            for pair in points.windows(2) {
                decoder.feed(&raw[pair[0]..pair[1]], &mut out);
            }
            proptest::prop_assert_eq!(out, expected);
        }

        #[test]
        fn any_bytes_fed_to_the_frame_decoder_never_panic(
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
            cut in 0usize..600,
        ) {
            let mut decoder = FrameDecoder::default();
            let mut out = Vec::new();
            let cut = cut.min(raw.len());
            decoder.feed(&raw[..cut], &mut out);
            decoder.feed(&raw[cut..], &mut out);
            proptest::prop_assert!(out.len() <= raw.len());
        }
    }
}
