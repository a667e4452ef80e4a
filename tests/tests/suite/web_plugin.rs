//! The bundled `web` plugin through the real binary: `web_extract` reads a page served
//! on 127.0.0.1 when `[plugins.config.web] allow_private_networks = true`, and refuses
//! it by default.

use std::io::{Read, Write};
use std::net::TcpListener;

use toolhost_tests::{TestHome, stderr, stdout_json};

const PAGE: &str = "<html><head><title>Local Page</title></head><body><article>\
    <h1>Local Page</h1><p>This paragraph is long enough to be the main content of the page, \
    and it is about lighthouses on rocky coasts and the keepers who tended them.</p>\
    <p>A second paragraph keeps the readability extractor convinced that this is an article \
    worth reading, with more words about lamps, lenses and foghorns.</p></article></body></html>";

/// Serve `PAGE` to every connection; returns the base URL.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                PAGE.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(PAGE.as_bytes());
        }
    });
    base
}

fn extract(home: &TestHome, url: &str) -> serde_json::Value {
    let args = serde_json::json!({ "urls": [url] }).to_string();
    let out = home.run(&["call", "web_extract", &args], None);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout_json(&out)
}

#[test]
fn web_extract_reads_a_local_page_when_private_networks_are_allowed() {
    let base = serve();
    let home = TestHome::new();
    home.write_config("[plugins.config.web]\nallow_private_networks = true\n");
    let result = extract(&home, &format!("{base}/lighthouses"));
    let page = &result["results"][0];
    assert_eq!(page["title"], "Local Page", "{result:#}");
    assert!(
        page["content"]
            .as_str()
            .unwrap()
            .contains("lighthouses on rocky coasts"),
        "{result:#}"
    );
}

#[test]
fn web_extract_refuses_loopback_by_default() {
    let base = serve();
    let home = TestHome::new();
    let result = extract(&home, &format!("{base}/lighthouses"));
    let error = result["results"][0]["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("Blocked"), "{result:#}");
}
