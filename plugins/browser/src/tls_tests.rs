//! `wss://` DevTools endpoints: a local TLS endpoint with the test certificate of
//! `testdata/tls/` (a CA and a `localhost`/`127.0.0.1` certificate it signed). The
//! handshake and the first CDP exchange must work when `cdp_ca_file` names the CA, and
//! fail — never silently pass — when it does not. Against a minimal CDP stand-in, and
//! (with Chromium) through a TLS proxy in front of a real browser.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use serde_json::{Value, json};

use crate::cdp::Connection;
use crate::error::BrowserError;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/tls")
        .join(name)
}

fn server_config() -> Arc<ServerConfig> {
    let certs = CertificateDer::pem_file_iter(testdata("localhost.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(testdata("localhost.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    )
}

type TlsStream = StreamOwned<ServerConnection, TcpStream>;

/// Accept TLS connections on 127.0.0.1 and hand each to `serve` on its own thread.
fn tls_listener(serve: fn(TlsStream)) -> u16 {
    tls_listener_on("127.0.0.1", serve)
}

/// [`tls_listener`] on loopback address `ip`.
fn tls_listener_on(ip: &str, serve: fn(TlsStream)) -> u16 {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = server_config();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let tls = ServerConnection::new(Arc::clone(&config)).unwrap();
            std::thread::spawn(move || serve(StreamOwned::new(tls, tcp)));
        }
    });
    port
}

/// A CDP stand-in: a websocket answering every request with the product name.
fn cdp_stand_in(stream: TlsStream) {
    let Ok(mut socket) = tungstenite::accept(stream) else {
        return;
    };
    while let Ok(message) = socket.read() {
        let Ok(text) = message.to_text() else { return };
        let Ok(request) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        let reply = json!({ "id": request["id"], "result": { "product": "stand-in/1.0" } });
        if socket
            .send(tungstenite::Message::text(reply.to_string()))
            .is_err()
        {
            return;
        }
    }
}

fn open(url: &str, ca_file: Option<PathBuf>) -> Result<Connection, BrowserError> {
    Connection::open(url, Arc::new(|_, _, _| {}), ca_file.as_deref())
}

#[test]
fn wss_with_the_ca_file_completes_the_handshake_and_a_cdp_call() {
    let port = tls_listener(cdp_stand_in);
    for host in ["localhost", "127.0.0.1"] {
        let conn = open(
            &format!("wss://{host}:{port}/devtools/browser/x"),
            Some(testdata("ca.pem")),
        )
        .unwrap_or_else(|e| panic!("{host}: {e}"));
        let version = conn
            .call(
                "Browser.getVersion",
                json!({}),
                None,
                Duration::from_secs(5),
            )
            .unwrap();
        assert_eq!(version["product"], "stand-in/1.0", "{host}");
    }
}

#[test]
fn wss_without_a_trusted_ca_is_refused() {
    let port = tls_listener(cdp_stand_in);
    let err = open(&format!("wss://localhost:{port}/devtools/browser/x"), None)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("certificate"), "{err}");
}

#[test]
fn a_ca_file_that_did_not_sign_the_certificate_does_not_help() {
    let port = tls_listener(cdp_stand_in);
    // The leaf certificate as a "CA": it did not sign itself.
    let err = open(
        &format!("wss://localhost:{port}/devtools/browser/x"),
        Some(testdata("localhost.pem")),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("UnknownIssuer"), "{err}");
}

#[test]
fn the_certificate_must_name_the_host() {
    // Linux answers the whole loopback /8; the certificate names only 127.0.0.1.
    let port = tls_listener_on("127.0.0.2", cdp_stand_in);
    let err = open(
        &format!("wss://127.0.0.2:{port}/devtools/browser/x"),
        Some(testdata("ca.pem")),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("not valid for name"), "{err}");
}

#[test]
fn an_unusable_ca_file_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    for (path, want) in [
        (empty, "no PEM certificate"),
        (dir.path().join("missing.pem"), "missing.pem"),
    ] {
        let err = open("wss://localhost:1/devtools/browser/x", Some(path))
            .map(|_| ())
            .unwrap_err();
        assert!(matches!(err, BrowserError::CaFile { .. }), "{err}");
        assert!(err.to_string().contains(want), "{err}");
    }
}

/// Copy bytes both ways between a TLS client and `upstream` until either side closes.
fn splice(mut tls: TlsStream, mut upstream: TcpStream) {
    let idle = Some(Duration::from_millis(5));
    if tls.sock.set_read_timeout(idle).is_err() || upstream.set_read_timeout(idle).is_err() {
        return;
    }
    let quiet =
        |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match tls.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if upstream.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if quiet(&e) => {}
            Err(_) => return,
        }
        match upstream.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() {
                    return;
                }
            }
            Err(e) if quiet(&e) => {}
            Err(_) => return,
        }
    }
}

#[test]
#[ignore = "needs chromium"]
fn wss_through_a_tls_proxy_drives_a_real_chromium() {
    use crate::launch::Chromium;
    use crate::registry::Registry;
    use crate::settings::Settings;
    use crate::tests::{TASK, serve, settings};

    let binary = settings(true).chromium_binary().unwrap();
    let chromium = Chromium::start(&binary).unwrap();
    let rest = chromium.ws_url.strip_prefix("ws://127.0.0.1:").unwrap();
    let (chromium_port, path) = rest.split_once('/').unwrap();
    let chromium_port: u16 = chromium_port.parse().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    let config = server_config();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let tls = ServerConnection::new(Arc::clone(&config)).unwrap();
            let upstream = TcpStream::connect(("127.0.0.1", chromium_port)).unwrap();
            std::thread::spawn(move || splice(StreamOwned::new(tls, tcp), upstream));
        }
    });
    let registry = Registry::new(Settings {
        cdp_url: Some(format!("wss://localhost:{proxy_port}/{path}")),
        cdp_ca_file: Some(testdata("ca.pem")),
        ..settings(true)
    });
    let base = serve();
    let reply = crate::tools::outcome(crate::navigation::navigate(
        &registry,
        serde_json::from_value(json!({ "url": format!("{base}/next") })).unwrap(),
        TASK,
    ));
    assert_eq!(reply["success"], true, "{reply}");
    assert_eq!(reply["title"], "/next", "{reply}");
    assert!(
        reply["snapshot"]
            .as_str()
            .unwrap_or_default()
            .contains("Arrived"),
        "{reply}"
    );
    drop(registry);
    drop(chromium);
}
