//! The browser under the address policy, with a real Chromium: requests the model or a
//! page starts — navigations by `browser_cdp`, page scripts, redirects, popups,
//! — never reach a refused address; downloads land in the task's
//! folder; uploads come from the workspace only.
//!
//! The page server listens on 127.0.0.1, which the tests' policy allows by name
//! (`allowed_hosts`); the same server reached as `localhost` is refused, so a request
//! that slipped past the guard would show up in the server's log.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::registry::Registry;
use crate::settings::Settings;
use crate::tests::{TASK, call, eval, settings};
use crate::{inspection, navigation};

/// Report to the page's own origin what a request to the refused twin did.
const PROBE: &str = "fetch(location.origin.replace('127.0.0.1', 'localhost') + '/secret', { mode: 'no-cors' })\
    .then(() => 'leaked', () => 'blocked')\
    .then(v => fetch('/report?' + v));";

/// A page server that records every request path.
struct Server {
    base: String,
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Serve on `ip` (127.0.0.1 or another loopback address).
    fn start(ip: &str) -> Server {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut buf = [0u8; 8192];
                let n = stream.read(&mut buf).unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                log.lock().unwrap().push(path.clone());
                let _ = stream.write_all(respond(&path, port).as_bytes());
            }
        });
        Server {
            base: format!("http://{ip}:{port}"),
            port,
            seen,
        }
    }

    fn saw(&self, prefix: &str) -> bool {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.starts_with(prefix))
    }

    /// Wait until a request starting with `prefix` arrived; all paths seen.
    fn wait_for(&self, prefix: &str) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if self.saw(prefix) {
                return self.seen.lock().unwrap().clone();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let seen = self.seen.lock().unwrap().clone();
        panic!("no request for {prefix}: {seen:?}");
    }
}

fn respond(path: &str, port: u16) -> String {
    let html = |body: &str| {
        (
            vec![("Content-Type", "text/html".to_string())],
            format!("<!doctype html><title>{path}</title><body>{body}</body>"),
        )
    };
    let (headers, body) = match path {
        "/secret" => html("SECRET"),
        "/probe" => html(&format!("<script>{PROBE}</script>")),
        "/redirect" => (
            vec![("Location", format!("http://localhost:{port}/secret"))],
            String::new(),
        ),
        "/popup" => html("<a href='/probe' target='_blank'>Open</a>"),
        "/download" => (
            vec![
                ("Content-Type", "application/octet-stream".to_string()),
                (
                    "Content-Disposition",
                    "attachment; filename=report.txt".to_string(),
                ),
            ],
            "downloaded".to_string(),
        ),
        "/upload" => html("<input type='file' id='f'>"),
        _ => html("page"),
    };
    let status = if path == "/redirect" {
        "302 Found"
    } else {
        "200 OK"
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    format!("{head}\r\n{body}")
}

/// Settings allowing 127.0.0.1 by name, downloads and uploads in `dir`.
fn guarded(dir: &Path) -> Settings {
    Settings {
        allowed_hosts: vec!["127.0.0.1".to_string()],
        download_dir: Some(dir.join("downloads")),
        upload_dir: Some(dir.join("workspace")),
        ..settings(false)
    }
}

/// A page server, a folder for downloads and the workspace, and a browser registry
/// for them.
fn rig() -> (Server, tempfile::TempDir, Arc<Registry>) {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new(guarded(dir.path()));
    (Server::start("127.0.0.1"), dir, registry)
}

fn navigate(registry: &Registry, url: &str) -> Value {
    call(registry, navigation::navigate, json!({ "url": url }))
}

/// `browser_cdp` on the task's page.
fn cdp(registry: &Registry, method: &str, params: Value) -> Value {
    let target = registry
        .with(TASK, false, |s| Ok(s.target.clone()))
        .unwrap();
    call(
        registry,
        inspection::cdp,
        json!({ "method": method, "params": params, "target_id": target }),
    )
}

#[test]
#[ignore = "needs chromium"]
fn runtime_evaluate_cannot_navigate_to_a_refused_address_and_read_it() {
    let (server, _dir, registry) = rig();
    assert_eq!(
        navigate(&registry, &format!("{}/page", server.base))["success"],
        true
    );
    let script = format!(
        "location.href = 'http://localhost:{}/secret'; 1",
        server.port
    );
    let moved = cdp(
        &registry,
        "Runtime.evaluate",
        json!({ "expression": script }),
    );
    assert_eq!(moved["success"], true, "{moved}");
    let read = cdp(
        &registry,
        "Runtime.evaluate",
        json!({ "expression": "new Promise(r => setTimeout(() => r(document.body ? document.body.innerText : ''), 500))", "awaitPromise": true, "returnByValue": true }),
    );
    assert!(!read.to_string().contains("SECRET"), "{read}");
    navigate(&registry, &format!("{}/page", server.base));
    assert!(!server.saw("/secret"), "{:?}", server.seen.lock().unwrap());
}

#[test]
#[ignore = "needs chromium"]
fn a_page_script_cannot_fetch_a_refused_address() {
    let (server, _dir, registry) = rig();
    navigate(&registry, &format!("{}/probe", server.base));
    let seen = server.wait_for("/report");
    assert!(seen.contains(&"/report?blocked".to_string()), "{seen:?}");
    assert!(!server.saw("/secret"), "{seen:?}");
}

#[test]
#[ignore = "needs chromium"]
fn a_redirect_to_a_refused_address_is_stopped() {
    let (server, _dir, registry) = rig();
    let reply = navigate(&registry, &format!("{}/redirect", server.base));
    assert_eq!(reply["success"], false, "{reply}");
    let error = reply["error"].as_str().unwrap();
    assert!(error.contains("localhost"), "{reply}");
    assert!(server.saw("/redirect"));
    assert!(!server.saw("/secret"), "{:?}", server.seen.lock().unwrap());
}

#[test]
#[ignore = "needs chromium"]
fn a_popup_is_guarded_like_the_page() {
    let (server, _dir, registry) = rig();
    let opened = navigate(&registry, &format!("{}/popup", server.base));
    let link = opened["snapshot"]
        .as_str()
        .unwrap()
        .split("[ref=")
        .nth(1)
        .unwrap();
    let link = format!("@{}", &link[..link.find(']').unwrap()]);
    let clicked = call(&registry, crate::interaction::click, json!({ "ref": link }));
    assert_eq!(clicked["success"], true, "{clicked}");
    let seen = server.wait_for("/report");
    assert!(seen.contains(&"/report?blocked".to_string()), "{seen:?}");
    assert!(!server.saw("/secret"), "{seen:?}");
}

#[test]
#[ignore = "needs chromium"]
fn downloads_land_in_the_task_folder_whatever_path_is_asked_for() {
    let (server, dir, registry) = rig();
    let elsewhere = dir.path().join("state").join("memories");
    navigate(&registry, &format!("{}/page", server.base));
    let set = cdp(
        &registry,
        "Browser.setDownloadBehavior",
        json!({ "behavior": "allow", "downloadPath": elsewhere }),
    );
    assert_eq!(set["success"], true, "{set}");
    let page_level = cdp(
        &registry,
        "Page.setDownloadBehavior",
        json!({ "behavior": "allow", "downloadPath": "/etc" }),
    );
    assert_eq!(page_level["success"], true, "{page_level}");
    cdp(
        &registry,
        "Runtime.evaluate",
        json!({ "expression": "location.href = '/download'; 1" }),
    );
    let expected = dir.path().join("downloads").join(TASK).join("report.txt");
    let deadline = Instant::now() + Duration::from_secs(15);
    while !expected.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&expected).unwrap(), "downloaded");
    assert!(!elsewhere.exists());
    assert!(!Path::new("/etc/report.txt").exists());
}

#[test]
#[ignore = "needs chromium"]
fn file_uploads_come_only_from_the_workspace_and_never_secret_files() {
    let (server, dir, registry) = rig();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("notes.txt"), "notes").unwrap();
    std::fs::write(workspace.join(".env"), "TOKEN=1").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", workspace.join("host.txt")).unwrap();
    navigate(&registry, &format!("{}/upload", server.base));
    let document = cdp(&registry, "DOM.getDocument", json!({}));
    let root = document["result"]["root"]["nodeId"].clone();
    let input = cdp(
        &registry,
        "DOM.querySelector",
        json!({ "nodeId": root, "selector": "#f" }),
    );
    let node = input["result"]["nodeId"].clone();
    for refused in [".env", "/etc/passwd", "host.txt", "../workspace/.env"] {
        let reply = cdp(
            &registry,
            "DOM.setFileInputFiles",
            json!({ "nodeId": node, "files": [refused] }),
        );
        assert_eq!(reply["success"], false, "{refused}: {reply}");
        assert!(
            reply["error"].as_str().unwrap().contains(refused),
            "{reply}"
        );
    }
    assert_eq!(
        eval(&registry, "document.getElementById('f').files.length"),
        0
    );
    let ok = cdp(
        &registry,
        "DOM.setFileInputFiles",
        json!({ "nodeId": node, "files": ["notes.txt"] }),
    );
    assert_eq!(ok["success"], true, "{ok}");
    assert_eq!(
        eval(&registry, "document.getElementById('f').files[0].name"),
        "notes.txt"
    );
}

#[test]
#[ignore = "needs chromium"]
fn browser_cdp_refuses_methods_that_would_switch_off_the_guard() {
    let (server, _dir, registry) = rig();
    navigate(&registry, &format!("{}/page", server.base));
    for method in [
        "Fetch.disable",
        "Target.setAutoAttach",
        "Runtime.runIfWaitingForDebugger",
    ] {
        let reply = cdp(&registry, method, json!({}));
        assert_eq!(reply["success"], false, "{method}: {reply}");
        assert!(reply["error"].as_str().unwrap().contains(method), "{reply}");
    }
    navigate(&registry, &format!("{}/probe", server.base));
    let seen = server.wait_for("/report");
    assert!(seen.contains(&"/report?blocked".to_string()), "{seen:?}");
    assert!(!server.saw("/secret"), "{seen:?}");
}
