//! TLS for `wss://` DevTools endpoints (a remote browser behind HTTPS, `cdp_url`).
//!
//! The server's certificate is always verified: against the system's root
//! certificates, plus — when `cdp_ca_file` is set — the CA certificates of that PEM file,
//! which is how a self-signed or private-CA endpoint is trusted (give its certificate or
//! the CA that signed it). There is deliberately no setting that switches verification
//! off: a DevTools connection can read every page and run script in it, so whoever
//! could sit in the middle would own the browser and the agent's sessions in it.

use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use tungstenite::client::IntoClientRequest as _;
use tungstenite::handshake::client::Response;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Connector, HandshakeError, WebSocket};

use crate::error::BrowserError;

/// A connected DevTools websocket.
pub type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

/// The rustls connector trusting the system's roots and the certificates of `ca_file`.
pub fn connector(ca_file: &Path) -> Result<Connector, BrowserError> {
    let ca_error = |message: String| BrowserError::CaFile {
        path: ca_file.display().to_string(),
        message,
    };
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    let mut added = 0;
    for cert in CertificateDer::pem_file_iter(ca_file).map_err(|e| ca_error(e.to_string()))? {
        let cert = cert.map_err(|e| ca_error(e.to_string()))?;
        roots.add(cert).map_err(|e| ca_error(e.to_string()))?;
        added += 1;
    }
    if added == 0 {
        return Err(ca_error("no PEM certificate in the file".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ca_error(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Connector::Rustls(Arc::new(config)))
}

/// Open the websocket at `url` (`ws://` or `wss://`), verifying a TLS server against
/// the system's roots and, when given, the certificates of `ca_file`.
pub fn connect(url: &str, ca_file: Option<&Path>) -> Result<(Socket, Response), BrowserError> {
    let connect_err = |source| BrowserError::Connect {
        url: url.to_string(),
        source: Box::new(source),
    };
    let Some(ca_file) = ca_file else {
        return tungstenite::connect(url).map_err(connect_err);
    };
    let connector = connector(ca_file)?;
    let request = url.into_client_request().map_err(connect_err)?;
    let uri = request.uri();
    let host = uri
        .host()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_string())
        .ok_or_else(|| {
            connect_err(tungstenite::Error::Url(
                tungstenite::error::UrlError::NoHostName,
            ))
        })?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("wss") {
            443
        } else {
            80
        });
    let stream = TcpStream::connect((host.as_str(), port))
        .map_err(|e| connect_err(tungstenite::Error::Io(e)))?;
    match tungstenite::client_tls_with_config(request, stream, None, Some(connector)) {
        Ok(pair) => Ok(pair),
        Err(HandshakeError::Failure(e)) => Err(connect_err(e)),
        Err(HandshakeError::Interrupted(_)) => Err(connect_err(tungstenite::Error::Io(
            std::io::Error::other("the websocket handshake was interrupted"),
        ))),
    }
}
