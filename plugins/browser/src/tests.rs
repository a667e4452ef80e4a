//! End-to-end tests: a real Chromium against pages served by the test on 127.0.0.1.
//! They need Chromium (`.ci/setup-browser.sh`) and fail loudly without it.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::BrowserError;
use crate::registry::Registry;
use crate::settings::Settings;
use crate::tools::outcome;
use crate::{inspection, interaction, navigation};

pub(crate) const TASK: &str = "test-task";

fn page(path: &str) -> (&'static str, String) {
    let html = |body: &str| {
        format!("<!doctype html><html><head><title>{path}</title></head><body>{body}</body></html>")
    };
    let content = match path {
        "/form" => html(
            "<h1>Sign up</h1><form action='/submitted' method='get'>\
             <label>Name <input name='name' id='name'></label>\
             <button type='submit'>Send</button></form>",
        ),
        p if p.starts_with("/submitted") => html(
            "<p id='out'></p><script>document.getElementById('out').textContent = 'Hello ' + new URLSearchParams(location.search).get('name');</script>",
        ),
        "/links" => html("<a href='/next'>Next page</a>"),
        "/next" => html("<h1>Arrived</h1>"),
        "/dialog" => html(
            "<button onclick=\"document.title = confirm('Sure?') ? 'yes' : 'no'\">Ask</button>",
        ),
        "/console" => html(
            "<script>console.log('hello', 42); console.warn('careful'); setTimeout(() => { throw new Error('boom'); }, 0);</script>",
        ),
        "/images" => html(
            "<img src='/a.png' alt='first'><img src='/b.png' alt='second'><img src='data:image/png;base64,AA=='>",
        ),
        "/script-nav" => html("<script>location.href = '/next';</script>"),
        "/slow" => {
            std::thread::sleep(Duration::from_secs(6));
            html("late")
        }
        _ => return ("404 Not Found", String::new()),
    };
    ("200 OK", content)
}

/// Serve the pages above on 127.0.0.1; the base URL.
pub(crate) fn serve() -> String {
    serve_pages("text/html", page)
}

/// Serve `page(path)` (status line, body) as `content_type` on 127.0.0.1, one
/// connection at a time; the base URL.
pub(crate) fn serve_pages(
    content_type: &'static str,
    page: fn(&str) -> (&'static str, String),
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, body) = page(&path);
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

pub(crate) fn settings(allow_private: bool) -> Settings {
    let settings = Settings {
        allow_private_networks: allow_private,
        ..Settings::default()
    };
    assert!(
        settings.chromium_binary().is_some(),
        "Chromium is not installed: run .ci/setup-browser.sh or set TOOLHOST_CHROMIUM"
    );
    settings
}

pub(crate) fn call<A: DeserializeOwned>(
    registry: &Registry,
    handler: fn(&Registry, A, &str) -> Result<Value, BrowserError>,
    args: Value,
) -> Value {
    outcome(handler(
        registry,
        serde_json::from_value(args).unwrap(),
        TASK,
    ))
}

pub(crate) fn eval(registry: &Registry, expression: &str) -> Value {
    let reply = call(
        registry,
        inspection::console,
        json!({ "expression": expression }),
    );
    assert_eq!(reply["success"], true, "{reply}");
    reply["result"].clone()
}

/// Poll `expression` until it yields `expected` (pages load asynchronously).
fn eventually(registry: &Registry, expression: &str, expected: Value) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = Value::Null;
    while Instant::now() < deadline {
        last = eval(registry, expression);
        if last == expected {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{expression} stayed {last}, expected {expected}");
}

fn open(path: &str) -> (Arc<Registry>, String) {
    open_with(path, settings(true))
}

/// A browser for [`TASK`] with `settings`, on page `path` of a fresh page server.
pub(crate) fn open_with(path: &str, settings: Settings) -> (Arc<Registry>, String) {
    let base = serve();
    let registry = Registry::new(settings);
    let reply = call(
        &registry,
        navigation::navigate,
        json!({ "url": format!("{base}{path}") }),
    );
    assert_eq!(reply["success"], true, "{reply}");
    (
        registry,
        reply["snapshot"].as_str().unwrap_or_default().to_string(),
    )
}

/// The ref of the snapshot line containing `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in {snapshot}"));
    let start = line.find("[ref=").unwrap() + 5;
    format!(
        "@{}",
        &line[start..line[start..].find(']').unwrap() + start]
    )
}

#[test]
#[ignore = "needs chromium"]
fn navigate_returns_title_and_compact_snapshot() {
    let base = serve();
    let registry = Registry::new(settings(true));
    let reply = call(
        &registry,
        navigation::navigate,
        json!({ "url": format!("{base}/form") }),
    );
    assert_eq!(reply["title"], "/form", "{reply}");
    assert_eq!(reply["url"], format!("{base}/form"));
    let snapshot = reply["snapshot"].as_str().unwrap();
    assert!(snapshot.contains("heading \"Sign up\""), "{snapshot}");
    assert!(snapshot.contains("textbox \"Name\""), "{snapshot}");
    assert_eq!(reply["element_count"], 3);
}

#[test]
#[ignore = "needs chromium"]
fn typing_and_clicking_submit_a_form() {
    let (registry, snapshot) = open("/form");
    let field = ref_of(&snapshot, "textbox");
    let typed = call(
        &registry,
        interaction::type_text,
        json!({ "ref": field, "text": "Ada" }),
    );
    assert_eq!(typed["success"], true, "{typed}");
    let clicked = call(
        &registry,
        interaction::click,
        json!({ "ref": ref_of(&snapshot, "button \"Send\"") }),
    );
    assert_eq!(clicked["success"], true, "{clicked}");
    eventually(
        &registry,
        "document.getElementById('out') && document.getElementById('out').textContent",
        json!("Hello Ada"),
    );
}

#[test]
#[ignore = "needs chromium"]
fn pressing_enter_submits_a_form() {
    let (registry, snapshot) = open("/form");
    call(
        &registry,
        interaction::type_text,
        json!({ "ref": ref_of(&snapshot, "textbox"), "text": "Grace" }),
    );
    let pressed = call(&registry, interaction::press, json!({ "key": "Enter" }));
    assert_eq!(pressed["success"], true, "{pressed}");
    eventually(&registry, "location.pathname", json!("/submitted"));
}

#[test]
#[ignore = "needs chromium"]
fn links_are_followed_and_back_returns() {
    let (registry, snapshot) = open("/links");
    call(
        &registry,
        interaction::click,
        json!({ "ref": ref_of(&snapshot, "link \"Next page\"") }),
    );
    eventually(&registry, "location.pathname", json!("/next"));
    let back = call(&registry, navigation::back, json!({}));
    assert_eq!(back["success"], true, "{back}");
    eventually(&registry, "location.pathname", json!("/links"));
}

#[test]
#[ignore = "needs chromium"]
fn a_confirm_dialog_is_reported_and_accepted() {
    let (registry, snapshot) = open("/dialog");
    call(
        &registry,
        interaction::click,
        json!({ "ref": ref_of(&snapshot, "button \"Ask\"") }),
    );
    let snap = call(&registry, navigation::snapshot, json!({}));
    assert_eq!(snap["pending_dialogs"][0]["type"], "confirm", "{snap}");
    assert_eq!(snap["pending_dialogs"][0]["message"], "Sure?");
    let answered = call(&registry, inspection::dialog, json!({ "action": "accept" }));
    assert_eq!(answered["success"], true, "{answered}");
    eventually(&registry, "document.title", json!("yes"));
}

#[test]
#[ignore = "needs chromium"]
fn console_messages_and_errors_are_collected() {
    let (registry, _) = open("/console");
    std::thread::sleep(Duration::from_millis(300));
    let reply = call(&registry, inspection::console, json!({}));
    assert_eq!(reply["console_messages"][0]["text"], "hello 42", "{reply}");
    assert_eq!(reply["console_messages"][1]["type"], "warn", "{reply}");
    assert!(
        reply["js_errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("boom"),
        "{reply}"
    );
    let cleared = call(&registry, inspection::console, json!({ "clear": true }));
    assert_eq!(cleared["total_messages"], 2);
    let after = call(&registry, inspection::console, json!({}));
    assert_eq!(after["total_messages"], 0, "{after}");
}

#[test]
#[ignore = "needs chromium"]
fn images_are_listed_without_data_urls() {
    let (registry, _) = open("/images");
    let reply = call(&registry, inspection::images, json!({}));
    assert_eq!(reply["count"], 2, "{reply}");
    assert_eq!(reply["images"][1]["alt"], "second");
}

#[test]
#[ignore = "needs chromium"]
fn a_page_navigating_by_script_lands_on_its_target() {
    let (registry, _) = open("/script-nav");
    eventually(&registry, "location.pathname", json!("/next"));
    let snap = call(&registry, navigation::snapshot, json!({ "full": true }));
    assert!(
        snap["snapshot"].as_str().unwrap().contains("Arrived"),
        "{snap}"
    );
}

#[test]
#[ignore = "needs chromium"]
fn private_addresses_are_refused_when_the_policy_is_on() {
    let base = serve();
    let registry = Registry::new(settings(false));
    let reply = call(
        &registry,
        navigation::navigate,
        json!({ "url": format!("{base}/form") }),
    );
    assert_eq!(reply["success"], false);
    assert!(
        reply["error"].as_str().unwrap().contains("private"),
        "{reply}"
    );
    let by_cdp = call(
        &registry,
        inspection::cdp,
        json!({ "method": "Page.navigate", "params": { "url": format!("{base}/form") } }),
    );
    assert_eq!(by_cdp["success"], false, "{by_cdp}");
}

#[test]
#[ignore = "needs chromium"]
fn raw_cdp_calls_reach_the_browser() {
    let (registry, _) = open("/links");
    let reply = call(
        &registry,
        inspection::cdp,
        json!({ "method": "Target.getTargets" }),
    );
    assert!(
        reply["result"]["targetInfos"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{reply}"
    );
}

#[allow(unsafe_code)]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for the process.
    unsafe { libc::kill(i32::try_from(pid).unwrap(), 0) == 0 }
}

fn browser_pid(registry: &Registry) -> u32 {
    registry
        .with(TASK, false, |s| Ok(s.pid()))
        .unwrap()
        .unwrap()
}

#[test]
#[ignore = "needs chromium"]
fn idle_browsers_are_reaped() {
    let base = serve();
    let registry = Registry::new(Settings {
        idle_timeout_secs: 1,
        ..settings(true)
    });
    call(
        &registry,
        navigation::navigate,
        json!({ "url": format!("{base}/next") }),
    );
    let pid = browser_pid(&registry);
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!alive(pid), "Chromium {pid} outlived its idle timeout");
}

#[test]
#[ignore = "needs chromium"]
fn closing_kills_the_browser() {
    let (registry, _) = open("/next");
    let pid = browser_pid(&registry);
    registry.close_all();
    assert!(!alive(pid), "Chromium {pid} survived close_all");
}

#[test]
#[ignore = "needs chromium"]
fn tools_without_a_browser_say_to_navigate_first() {
    let registry = Registry::new(settings(true));
    let reply = call(&registry, navigation::snapshot, json!({}));
    assert!(
        reply["error"]
            .as_str()
            .unwrap()
            .contains("browser_navigate"),
        "{reply}"
    );
}

#[test]
#[ignore = "needs chromium"]
fn a_slow_page_times_out_with_a_readable_error() {
    let base = serve();
    let registry = Registry::new(Settings {
        command_timeout_secs: 2,
        ..settings(true)
    });
    let reply = call(
        &registry,
        navigation::navigate,
        json!({ "url": format!("{base}/slow") }),
    );
    assert_eq!(reply["success"], false, "{reply}");
    assert!(
        reply["error"].as_str().unwrap().contains("timed out"),
        "{reply}"
    );
}

#[test]
#[ignore = "needs chromium"]
fn a_script_moving_the_page_to_a_refused_address_is_turned_back() {
    let (registry, _) = open("/links");
    registry
        .with(TASK, false, |session| {
            session.guard.set_allow_private(false);
            Ok(())
        })
        .unwrap();
    let reply = call(
        &registry,
        inspection::console,
        json!({ "expression": "location.href = '/next'; 1" }),
    );
    assert_eq!(reply["success"], false, "{reply}");
    assert!(
        reply["error"].as_str().unwrap().contains("private"),
        "{reply}"
    );
    registry
        .with(TASK, false, |session| {
            session.guard.set_allow_private(true);
            Ok(())
        })
        .unwrap();
    eventually(&registry, "location.href", json!("about:blank"));
}
