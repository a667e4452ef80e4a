//! `browser_vision` against a real Chromium and a stand-in OpenAI-compatible server
//! started by the test: the screenshot must reach the model, and its answer the result.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::inspection;
use crate::settings::Settings;
use crate::tests::{TASK, open_with, settings};
use crate::tools::outcome;
use crate::vision::VisionSettings;

/// A chat-completions stand-in answering every request with `answer`; the request
/// bodies it received.
fn model_server(answer: &'static str) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            seen.lock()
                .unwrap()
                .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            let reply = json!({"choices": [{"message": {"role": "assistant", "content": answer}}]})
                .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (base, bodies)
}

fn with_vision(vision: VisionSettings) -> Settings {
    Settings {
        vision,
        ..settings(true)
    }
}

fn vision_call(registry: &crate::registry::Registry, dir: &std::path::Path) -> Value {
    outcome(inspection::vision(
        registry,
        serde_json::from_value(json!({ "question": "what is the heading?" })).unwrap(),
        TASK,
        dir,
    ))
}

#[test]
#[ignore = "needs chromium"]
fn the_screenshot_reaches_the_vision_model_and_its_answer_is_the_analysis() {
    let (base, bodies) = model_server("The heading says Arrived.");
    let (registry, _) = open_with(
        "/next",
        with_vision(VisionSettings {
            base_url: base,
            model: "stand-in-vision".into(),
            api_key_env: String::new(),
            timeout_secs: 30,
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let reply = vision_call(&registry, dir.path());
    assert_eq!(reply["success"], true, "{reply}");
    assert_eq!(reply["analysis"], "The heading says Arrived.");
    let bodies = bodies.lock().unwrap();
    assert_eq!(bodies.len(), 1);
    assert_eq!(bodies[0]["model"], "stand-in-vision");
    let content = &bodies[0]["messages"][0]["content"];
    assert!(
        content[0]["text"]
            .as_str()
            .unwrap()
            .contains("what is the heading?")
    );
    let url = content[1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url:.60}"
    );
    let png = std::fs::read(reply["screenshot_path"].as_str().unwrap()).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
}

#[test]
#[ignore = "needs chromium"]
fn without_a_key_the_screenshot_is_saved_and_attached() {
    let (registry, _) = open_with(
        "/next",
        with_vision(VisionSettings {
            api_key_env: "TOOLHOST_TEST_SURELY_UNSET_VISION_KEY".into(),
            ..VisionSettings::default()
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let reply = vision_call(&registry, dir.path());
    assert_eq!(reply["success"], false, "{reply}");
    assert!(
        reply["error"]
            .as_str()
            .unwrap()
            .contains("TOOLHOST_TEST_SURELY_UNSET_VISION_KEY")
    );
    let path = reply["screenshot_path"].as_str().unwrap();
    assert!(std::fs::read(path).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(reply["_images"][0]["path"], path);
}

/// `browser_vision` against the real model (OpenAI's API by default; `OPENAI_BASE_URL`
/// and `TOOLHOST_VISION_MODEL` point it elsewhere). Ignored in ordinary runs and skipped
/// by name in CI (`--skip live_smoke`), which has no key; run it explicitly with
/// `OPENAI_API_KEY=… cargo test -p toolhost-plugin-browser --lib live_smoke -- --ignored`.
/// Without the key it fails naming the variable.
mod live_smoke {
    use super::*;

    #[test]
    #[ignore = "needs OPENAI_API_KEY and chromium (live)"]
    fn browser_vision_openai() {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        assert!(
            var("OPENAI_API_KEY").is_some(),
            "live smoke test: set OPENAI_API_KEY to run it (it calls the real model)"
        );
        let defaults = VisionSettings::default();
        let (registry, _) = open_with(
            "/next",
            with_vision(VisionSettings {
                base_url: var("OPENAI_BASE_URL").unwrap_or(defaults.base_url.clone()),
                model: var("TOOLHOST_VISION_MODEL").unwrap_or(defaults.model.clone()),
                ..defaults
            }),
        );
        let dir = tempfile::tempdir().unwrap();
        let reply = vision_call(&registry, dir.path());
        assert_eq!(reply["success"], true, "{reply}");
        let analysis = reply["analysis"].as_str().unwrap_or_default();
        assert!(analysis.to_lowercase().contains("arrived"), "{reply}");
    }
}
